"""xAI's search Agent Tools on its Responses API
(https://docs.x.ai/developers/tools/web-search and
https://docs.x.ai/developers/tools/x-search): ``{"type": "web_search",
"allowed_domains": […], "excluded_domains": […]}`` and ``{"type":
"x_search", "allowed_x_handles": […], "excluded_x_handles": […],
"from_date": "YYYY-MM-DD", "to_date": …, "enable_image_understanding":
true, "enable_video_understanding": true}``.  xAI's Chat Completions Live
Search (``search_parameters``) is gone (the server answers 410), so these
rows are the one way elelem asks xAI to search; the searches come back as
hosted activity and the answer's citations as url citations, read by the
Responses parser like OpenAI's."""

from __future__ import annotations

from elelem.shapes.hosted_tools import HostedSite, domain_lists
from elelem.shapes.openai_responses._items import is_xai
from elelem.vocabulary import WebSearch, XSearch
from elelem.vocabulary.json import JSONValue


def xai_web_search(tool: WebSearch, site: HostedSite) -> None:
    """xAI's ``web_search``: its own domain lists (at most 5 each); no use
    limit or location (reported)."""
    spec: dict[str, JSONValue] = {"type": tool.version or "web_search"}
    domain_lists(spec, tool, "excluded_domains")
    if tool.max_uses is not None:
        site.drop("max_uses", "xAI web search has no per-tool use limit", field="max_uses")
    if tool.user_location is not None:
        site.drop("user_location", "xAI web search takes no location", field="user_location")
    site.tools.append(spec)


def x_search(tool: XSearch, site: HostedSite) -> None:
    """xAI's ``x_search``; on another Responses server it is left out and reported."""
    if not is_xai(site.provider):
        site.drop("x_search", f"{site.provider} has no X search (an xAI tool)")
        return
    spec: dict[str, JSONValue] = {"type": "x_search"}
    if tool.allowed_handles:
        spec["allowed_x_handles"] = list(tool.allowed_handles)
    if tool.excluded_handles:
        spec["excluded_x_handles"] = list(tool.excluded_handles)
    if tool.from_date is not None:
        spec["from_date"] = tool.from_date
    if tool.to_date is not None:
        spec["to_date"] = tool.to_date
    if tool.image_understanding:
        spec["enable_image_understanding"] = True
    if tool.video_understanding:
        spec["enable_video_understanding"] = True
    site.tools.append(spec)


__all__ = ["x_search", "xai_web_search"]
