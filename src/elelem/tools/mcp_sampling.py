"""What an MCP server asks of elelem, in elelem's terms: sampling.

A server may ask the client's model for a completion in the middle of a
call (``sampling/createMessage``).  :class:`MCPServer` hands each request to
the ``sample`` callback it was given as a :class:`SamplingRequest` and sends
back the :class:`SampleAnswer`; a callback that raises
:class:`SamplingRefused` answers the server with an error saying why.
Without a callback the capability is not declared, and a server that asks
anyway is refused by the SDK ("Sampling not supported").

Everything in a :class:`SamplingRequest` is the server's, untrusted.  A
request this module cannot hand on whole (an image, tools for the model) is
refused, never served with parts dropped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from elelem.errors import ElelemError
from elelem.vocabulary import Usage


class SamplingRefused(ElelemError):
    """Raised by a ``sample`` callback: the server's request is answered
    with an error carrying this message."""


@dataclass(frozen=True)
class SamplingRequest:
    """One request of a server for a completion by the client's model."""

    server: str
    """The name of the server that asks."""
    messages: tuple[tuple[Literal["user", "assistant"], str], ...]
    """The conversation to complete: (role, text) pairs (untrusted text)."""
    system: str | None
    """The system prompt the server asks for (untrusted), if any."""
    max_tokens: int
    temperature: float | None = None
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class SampleAnswer:
    """The model's completion, which model gave it and (when known) its
    provider and what it used, for the record of the request."""

    text: str
    model: str
    stop_reason: str = "endTurn"
    provider: str | None = None
    usage: Usage | None = None


Sample = Callable[[SamplingRequest], Awaitable[SampleAnswer]]
"""The callback that serves a server's sampling requests."""


def sampling_of(server: str, params: Any) -> SamplingRequest:
    """The SDK's ``CreateMessageRequestParams`` as a :class:`SamplingRequest`;
    :class:`SamplingRefused` for what cannot be handed on whole."""
    if params.tools:
        raise SamplingRefused("sampling with tools is not served by this client")
    messages: list[tuple[Literal["user", "assistant"], str]] = []
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        texts = []
        for block in blocks:
            if getattr(block, "type", None) != "text":
                kind = getattr(block, "type", "unknown")
                raise SamplingRefused(f"sampling with {kind} content is not served by this client")
            texts.append(block.text)
        messages.append((message.role, "".join(texts)))
    return SamplingRequest(
        server,
        tuple(messages),
        params.system_prompt,
        params.max_tokens,
        params.temperature,
        tuple(params.stop_sequences or ()),
    )


def sdk_sample(answer: SampleAnswer) -> Any:
    """A :class:`SampleAnswer` as the SDK's ``CreateMessageResult``."""
    from mcp.types import CreateMessageResult, TextContent

    return CreateMessageResult(
        role="assistant",
        content=TextContent(type="text", text=answer.text),
        model=answer.model,
        stop_reason=answer.stop_reason,
    )


def sdk_refusal(reason: str) -> Any:
    """A refusal as the SDK's ``ErrorData``."""
    from mcp.types import INVALID_REQUEST, ErrorData

    return ErrorData(code=INVALID_REQUEST, message=reason)


__all__ = [
    "Sample",
    "SampleAnswer",
    "SamplingRefused",
    "SamplingRequest",
    "sampling_of",
    "sdk_refusal",
    "sdk_sample",
]
