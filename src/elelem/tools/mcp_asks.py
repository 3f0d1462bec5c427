"""What an MCP server asks of elelem, in elelem's terms: elicitation, and
the note of every request a server made (:class:`ServerAsked`).

A server may ask the user for input in the middle of a call
(``elicitation/create``, or an input request of a 2026-07-28 multi
round-trip result): a form (a flat JSON schema of named fields) or a URL to
open.  :class:`MCPServer` hands each to the ``elicit`` callback it was given
as an :class:`Elicitation`, and sends back the :class:`ElicitAnswer`; without
a callback the capability is not declared, and a server must not ask.

The texts of an :class:`Elicitation` are the server's, untrusted: a
terminal shows them sanitized.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from elelem.vocabulary import JSONValue, Usage


@dataclass(frozen=True)
class Elicitation:
    """One request of a server for the user's input."""

    server: str
    """The name of the server that asks."""
    mode: Literal["form", "url"]
    message: str
    """What the server says it needs (untrusted text)."""
    schema: Mapping[str, JSONValue] = field(default_factory=dict)
    """Form mode: the requested fields, a flat JSON object schema."""
    url: str | None = None
    """URL mode: where the user is asked to go (untrusted)."""

    @property
    def defaults(self) -> dict[str, JSONValue]:
        """The form's fields that carry a default, with it (SEP-1034)."""
        fields = self.schema.get("properties")
        if not isinstance(fields, dict):
            return {}
        return {
            name: spec["default"]
            for name, spec in fields.items()
            if isinstance(spec, dict) and "default" in spec
        }


@dataclass(frozen=True)
class ElicitAnswer:
    """The user's answer: ``accept`` with the form's ``content``, ``decline``,
    or ``cancel`` (dismissed without a choice); ``reason`` says why it was
    declined when nobody was asked (kept in the record, never sent)."""

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, JSONValue] | None = None
    reason: str | None = None


Elicit = Callable[[Elicitation], Awaitable[ElicitAnswer]]
"""The callback that answers a server's elicitation."""


@dataclass(frozen=True)
class ServerAsked:
    """One request a server made of the client during a connection
    (``elicitation/create``, ``sampling/createMessage``, ``roots/list``) and
    how it was answered, as :attr:`MCPServer.on_request
    <elelem.tools.mcp.MCPServer.on_request>` reports it (for the
    conversation log).  ``outcome`` is the elicitation's action, ``served``
    or ``refused`` for sampling, ``listed`` for roots; ``detail`` holds
    what was asked and answered (the server's text, untrusted); ``usage``,
    ``provider`` and ``model`` say what a served sampling request cost."""

    server: str
    method: str
    outcome: str
    detail: Mapping[str, JSONValue] = field(default_factory=dict)
    provider: str | None = None
    model: str | None = None
    usage: Usage | None = None


def elicitation_note(request: Elicitation, answer: ElicitAnswer) -> ServerAsked:
    """The :class:`ServerAsked` of one elicitation and its answer."""
    detail: dict[str, JSONValue] = {"mode": request.mode, "message": request.message}
    if request.mode == "url":
        detail["url"] = request.url
    else:
        detail["schema"] = dict(request.schema)
    if answer.content is not None:
        detail["content"] = dict(answer.content)
    if answer.reason is not None:
        detail["reason"] = answer.reason
    return ServerAsked(request.server, "elicitation/create", answer.action, detail)


async def accept_defaults(request: Elicitation) -> ElicitAnswer:
    """Accept every form with its fields' defaults, decline every URL: for
    unattended runs against servers whose forms all have defaults."""
    if request.mode == "url":
        return ElicitAnswer("decline")
    return ElicitAnswer("accept", request.defaults)


async def decline(request: Elicitation) -> ElicitAnswer:
    """Decline every elicitation (a non-interactive run)."""
    return ElicitAnswer("decline", reason="this run declines every request for input")


def elicitation_of(server: str, params: Any) -> Elicitation:
    """The SDK's ``ElicitRequestParams`` as an :class:`Elicitation`."""
    if getattr(params, "mode", "form") == "url":
        return Elicitation(server, "url", params.message, url=params.url)
    schema: dict[str, JSONValue] = params.requested_schema
    return Elicitation(server, "form", params.message, dict(schema))


def sdk_answer(answer: ElicitAnswer) -> Any:
    """An :class:`ElicitAnswer` as the SDK's ``ElicitResult``."""
    from mcp.types import ElicitResult

    content = dict(answer.content) if answer.content is not None else None
    return ElicitResult(action=answer.action, content=content)


__all__ = [
    "Elicit",
    "ElicitAnswer",
    "Elicitation",
    "ServerAsked",
    "accept_defaults",
    "decline",
    "elicitation_note",
    "elicitation_of",
    "sdk_answer",
]
