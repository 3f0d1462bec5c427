"""xAI search: ``WebSearch`` and ``XSearch`` asked for as xAI's Agent Tools on
its Responses API, the searches read back as hosted activity and the
answer's citations kept as attributions, on a loopback server.

Wire examples: xAI's search tools pages
(https://docs.x.ai/developers/tools/web-search: ``{"type": "web_search",
"allowed_domains": […], "excluded_domains": […]}``;
https://docs.x.ai/developers/tools/x-search: ``{"type": "x_search",
"allowed_x_handles": […], "from_date": "YYYY-MM-DD", "to_date": …,
"enable_image_understanding": true, "enable_video_understanding": true}``;
https://docs.x.ai/developers/tools/search-tools: the searches stream as
``web_search_call`` items and ``custom_tool_call`` items naming xAI's search
function, the answer's sources as ``url_citation`` annotations, the number
of searches in ``usage.server_side_tool_usage_details``).  Live Search
(``search_parameters`` on Chat Completions) is gone: xAI answers it 410.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from elelem import Client
from elelem.conversation import Conversation, SQLiteStore
from elelem.conversation.events import MessageBody
from elelem.errors import DecodeError
from elelem.shapes.registry import shape_named
from elelem.testing.servers import LoopbackServer
from elelem.turns.toolloop import run
from elelem.vocabulary import (
    HostedActivity,
    Message,
    ProviderId,
    TextBlock,
    UserLocation,
    WebSearch,
    XSearch,
)
from elelem.wire import ModelRequest
from toolloop_wires import _responses

LINK = "[[1]](https://x.ai/news)"
ANSWER = f"xAI shipped Grok 4.3 this week. {LINK}"
X_CALL = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "xs_call_1",
          "name": "x_keyword_search", "input": '{"query":"from:xai grok"}',
          "status": "completed"}  # fmt: skip
WEB_CALL = {"type": "web_search_call", "id": "ws_1", "status": "completed",
            "action": {"type": "search", "query": "xAI news"}}  # fmt: skip
CITE = {"type": "url_citation", "url": "https://x.ai/news", "title": "1",
        "start_index": ANSWER.index(LINK), "end_index": len(ANSWER)}  # fmt: skip
MESSAGE = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": ANSWER, "annotations": [CITE]}]}  # fmt: skip


def _config(tmp_path: Path, server: LoopbackServer) -> str:
    # xAI on its Responses API: the built-in provider amended (docs/cli.md).
    path = tmp_path / "elelem.toml"
    path.write_text(
        f'[providers.xai]\ncompatible = "openai-responses"\nbase_url = "{server.url}/v1"\n'
    )
    return str(path)


def test_xai_searches_the_web_and_x_and_keeps_the_citations(tmp_path: Path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    reply = _responses([X_CALL, WEB_CALL, MESSAGE], 1)
    with LoopbackServer([reply]) as server:
        env = {"XAI_API_KEY": "k", "ELELEM_CONFIG": _config(tmp_path, server)}
        tools = (
            WebSearch(allowed_domains=("x.ai",), blocked_domains=("example.com",)),
            XSearch(("xai",), from_date="2026-11-01", to_date="2026-12-04",
                    image_understanding=True, video_understanding=True),
        )  # fmt: skip

        async def main() -> Any:
            async with Client(env=env) as client:
                return await run(conv, client, "xai:grok-4", "What did xAI ship?",
                                 hosted_tools=tools)  # fmt: skip

        result = asyncio.run(main())
    (request,) = server.requests
    assert request.path == "/v1/responses"
    assert json.loads(request.body)["tools"] == [
        {"type": "web_search", "allowed_domains": ["x.ai"], "excluded_domains": ["example.com"]},
        {"type": "x_search", "allowed_x_handles": ["xai"], "from_date": "2026-11-01",
         "to_date": "2026-12-04", "enable_image_understanding": True,
         "enable_video_understanding": True},
    ]  # fmt: skip
    assert result.text == ANSWER
    (message,) = result.messages
    done = [p for p in message.content if isinstance(p, HostedActivity) and p.state == "completed"]
    assert [(a.name, a.input) for a in done] == [
        ("x_search", {"query": "from:xai grok"}),
        ("web_search", {"type": "search", "query": "xAI news"}),
    ]
    (text,) = [p for p in message.content if isinstance(p, TextBlock)]
    ((source, span),) = [(a.source.url, a.range) for a in text.attributions]  # type: ignore[union-attr]
    assert source == "https://x.ai/news"
    # xAI's inline citation: the range covers the Markdown link in the text.
    assert span is not None and ANSWER.encode()[span[0] : span[1]] == LINK.encode()
    # The log keeps the citation with the answer.
    stored = [e.body for e in conv.events if isinstance(e.body, MessageBody)]
    assert [p for p in stored[-1].content if isinstance(p, TextBlock)] == [text]


def _encode(provider: str, shape: str, *tools: Any) -> Any:
    request = ModelRequest("grok-4", (Message.user("hi"),), hosted_tools=tools)
    return shape_named(shape).encode_request(request, provider=ProviderId(provider))


def test_what_xai_search_has_no_room_for_is_reported() -> None:
    where = UserLocation(city="Austin")
    encoded = _encode("xai", "openai_responses", WebSearch(max_uses=2, user_location=where))
    assert encoded.body["tools"] == [{"type": "web_search"}]
    assert [(d.where, d.what, d.detail) for d in encoded.dropped] == [
        ("hosted_tools[0].max_uses", "max_uses", "xAI web search has no per-tool use limit"),
        ("hosted_tools[0].user_location", "user_location", "xAI web search takes no location"),
    ]


def test_x_search_elsewhere_is_dropped_with_a_record() -> None:
    encoded = _encode("openai", "openai_responses", XSearch())
    assert "tools" not in encoded.body
    assert [(d.where, d.why, d.detail) for d in encoded.dropped] == [
        ("hosted_tools[0]", "unsupported", "openai has no X search (an xAI tool)")
    ]
    # xAI's Chat Completions has no search at all now (Live Search answers 410).
    chat = _encode("xai", "openai_chat", XSearch(), WebSearch())
    assert "tools" not in chat.body and "search_parameters" not in chat.body
    assert [(d.where, d.what, d.detail) for d in chat.dropped] == [
        ("hosted_tools[0]", "x_search", "Chat Completions has no hosted x_search"),
        ("hosted_tools[1]", "web_search", "xai has no hosted web search on Chat Completions"
         ' (on its Responses API: compatible = "openai-responses")'),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"allowed_handles": ("a",), "excluded_handles": ("b",)},
         "X search takes allowed_handles or excluded_handles, not both"),
        ({"allowed_handles": tuple(f"h{i}" for i in range(11))},
         "X search allowed_handles holds at most 10 handles"),
        ({"from_date": "2026-13-01"}, "X search from_date '2026-13-01' is no YYYY-MM-DD date"),
        ({"to_date": "yesterday"}, "X search to_date 'yesterday' is no YYYY-MM-DD date"),
    ],
)  # fmt: skip
def test_bad_x_search_settings_are_refused_by_name(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        XSearch(**kwargs)


def test_ask_x_search_asks_xai_for_it(tmp_path: Path) -> None:
    from cli_helpers import base_env
    from cli_helpers import run as run_cli

    with LoopbackServer([_responses([X_CALL, MESSAGE], 1)]) as server:
        env = {**base_env(tmp_path), "XAI_API_KEY": "k", "ELELEM_CONFIG": _config(tmp_path, server)}
        out = run_cli(env, "ask", "-m", "xai:grok-4", "--x-search", "--web-search", "xAI news?")
    assert out.returncode == 0, out.stderr
    assert ANSWER.split(" [[")[0] in out.stdout
    (request,) = server.requests
    assert json.loads(request.body)["tools"] == [{"type": "web_search"}, {"type": "x_search"}]
