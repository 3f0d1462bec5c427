"""Hosted activity: work a provider ran on its own servers."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal

from elelem.errors import DecodeError
from elelem.vocabulary.ids import ActivityId
from elelem.vocabulary.json import JSONValue, require_json
from elelem.vocabulary.payload import ProviderPayload
from elelem.vocabulary.tags import PartStruct

ActivityState = Literal["started", "completed", "failed"]

HOSTED_ACTIVITY_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "web_search": "search the web",
        "web_fetch": "fetch a given URL and read the page",
        "code_execution": "run code or commands (and edit files) in a provider sandbox",
        "file_search": "search files the caller uploaded (vector stores, file stores)",
        "tool_search": "search the caller's deferred tool catalogue",
        "image_generation": "generate or edit an image",
        "mcp": "call a remote MCP server, or list its tools",
        "shell": "run shell commands in a provider-hosted container",
        "map_search": "look places up on a map",
        "x_search": "search posts and users on X",
    }
)
"""The neutral capability names of hosted activity, each with what it means.

:attr:`HostedActivity.name` and the keys of ``Usage.hosted`` are one of these
wherever a provider's own name is known to mean it (see
:data:`PROVIDER_ACTIVITY_NAMES`).  The set is open: a name nobody mapped keeps
the provider's own spelling (Anthropic's ``advisor``, xAI's
``document_search``), so the activity is never dropped and never guessed at.
"""

PROVIDER_ACTIVITY_NAMES: Mapping[str, str] = MappingProxyType(
    {
        # Anthropic server tools (server_tool_use.name; *_tool_result stems).
        # The code_execution tool runs both of these helpers.
        "bash_code_execution": "code_execution",
        "text_editor_code_execution": "code_execution",
        "tool_search_tool_regex": "tool_search",
        "tool_search_tool_bm25": "tool_search",
        # OpenAI Responses tool types and usage counters (code_interpreter_calls);
        # the mcp tool lists a server's tools in an mcp_list_tools item.
        "web_search_preview": "web_search",
        "code_interpreter": "code_execution",
        "mcp_list_tools": "mcp",
        "mcp_approval_request": "mcp",
        # Gemini tools (generateContent and Interactions).
        "google_search": "web_search",
        "google_search_retrieval": "web_search",
        "url_context": "web_fetch",
        "google_maps": "map_search",
        # Bedrock system tools (Nova web grounding).
        "nova_grounding": "web_search",
        # xAI server-side functions, reported under the tool that runs them.
        "web_search_with_snippets": "web_search",
        "browse_page": "web_search",
        "x_keyword_search": "x_search",
        "x_semantic_search": "x_search",
        "x_user_search": "x_search",
        "x_thread_fetch": "x_search",
    }
)
"""A provider's own hosted-tool name -> its neutral name in :data:`HOSTED_ACTIVITY_NAMES`.

One table for every shape.  A name is mapped to the capability of the tool
the caller enabled (the *family*): Anthropic runs ``bash_code_execution`` and
``text_editor_code_execution`` under its ``code_execution`` tool, xAI runs
``browse_page`` under ``web_search``; so activity names and usage counters
agree.  The provider's own name is not lost: it stays in the payload that
replays the block exactly, and ``input`` keeps what the provider sent.
"""


def neutral_activity_name(name: str) -> str:
    """The neutral name of a provider's hosted-tool name.

    A neutral name maps to itself; a name in :data:`PROVIDER_ACTIVITY_NAMES`
    maps to its capability; any other name is kept as the provider spelled it.
    """
    if name in HOSTED_ACTIVITY_NAMES:
        return name
    return PROVIDER_ACTIVITY_NAMES.get(name, name)


APPROVAL = "approval"
"""The key of a hosted activity's ``input`` that marks a provider's request for
the caller's approval (an OpenAI ``mcp_approval_request``): its value is
:data:`APPROVAL_REQUESTED`.  The activity completes when the request is made;
the tool loop answers it (:func:`approval_response`) and the provider runs
the call, if approved, in the next response."""

APPROVAL_REQUESTED = "requested"


def awaits_approval(activity: HostedActivity) -> bool:
    """True for the transition of a provider's request for the caller's approval."""
    given = activity.input
    return (
        activity.state == "completed"
        and isinstance(given, dict)
        and given.get(APPROVAL) == APPROVAL_REQUESTED
    )


APPROVAL_RESPONSE = "mcp_approval_response"
"""The block type of the caller's answer to an approval request: the Responses
input item itself, kept as an unknown block in a user message so only the
provider that asked replays it (every other encoder reports it dropped)."""


def approval_response(activity: HostedActivity, approve: bool, reason: str | None = None) -> Any:
    """The answer to ``activity`` (see :func:`awaits_approval`): an
    :class:`~elelem.vocabulary.UnknownBlock` holding the wire item."""
    from elelem.vocabulary.blocks import UnknownBlock

    raw: dict[str, JSONValue] = {
        "type": APPROVAL_RESPONSE,
        "approval_request_id": activity.id,
        "approve": approve,
    }
    if reason:
        raw["reason"] = reason
    return UnknownBlock(raw)


TERMINAL_STATES: frozenset[str] = frozenset({"completed", "failed"})
_STATES: frozenset[str] = frozenset({"started", *TERMINAL_STATES})


class HostedActivity(PartStruct, frozen=True, tag="hosted"):
    """One transition of a hosted activity (web search, web fetch, code execution, …).

    Hosted activity is not a tool call and not assistant content: the caller
    never executes it.  Each value is a *transition*; the activity's history is
    the append-only sequence of transitions sharing ``id``.  A ``started``
    transition with no terminal one means it began and never finished.

    ``name`` is the neutral capability name (``web_search``, one of
    :data:`HOSTED_ACTIVITY_NAMES` where the provider's name is mapped, see
    :func:`neutral_activity_name`); ``input`` the
    normalized invocation input (``{"query": …}``); ``summary`` a short,
    untrusted, human-readable description (``5 results``); ``payload`` the
    provider's raw block for exact replay.

    A state outside started/completed/failed or an ``input`` that is not
    JSON raises :class:`~elelem.errors.DecodeError` naming the field.
    """

    id: ActivityId
    name: str
    state: ActivityState
    input: JSONValue = None
    summary: str = ""
    payload: ProviderPayload | None = None

    def __post_init__(self) -> None:
        if self.state not in _STATES:
            raise DecodeError(f"unknown hosted activity state {self.state!r}", "$.state")
        if self.input is not None:
            require_json(self.input, "$.input", "hosted activity input")

    @property
    def terminal(self) -> bool:
        """True for ``completed`` and ``failed`` transitions."""
        return self.state in TERMINAL_STATES

    def transition(
        self,
        state: ActivityState,
        *,
        summary: str = "",
        payload: ProviderPayload | None = None,
    ) -> HostedActivity:
        """A new transition of the same activity (``self`` is never mutated)."""
        return HostedActivity(
            id=self.id,
            name=self.name,
            state=state,
            input=self.input,
            summary=summary,
            payload=payload,
        )


__all__ = [
    "APPROVAL",
    "APPROVAL_REQUESTED",
    "APPROVAL_RESPONSE",
    "HOSTED_ACTIVITY_NAMES",
    "PROVIDER_ACTIVITY_NAMES",
    "TERMINAL_STATES",
    "ActivityState",
    "HostedActivity",
    "approval_response",
    "awaits_approval",
    "neutral_activity_name",
]
