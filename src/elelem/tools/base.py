"""What every runnable tool is to the tool loop, and what a call returns."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Protocol, runtime_checkable

import msgspec

from elelem.errors import ClientToolError
from elelem.vocabulary import DocumentBlock, ImageBlock, ProviderPayload, ToolSpec


class ToolOutcome(msgspec.Struct, frozen=True):
    """What one tool call produced: the text the model is sent, and whether
    it is an error (a raised exception, invalid arguments, a refusal, a
    timeout, a server that died)."""

    content: str
    is_error: bool = False
    payloads: tuple[ProviderPayload, ...] = ()
    """What neither the text nor the attachments carry (an MCP result's audio), kept for the log."""
    attachments: tuple[ImageBlock | DocumentBlock, ...] = ()
    """Images and documents the tool returned beside its text."""


@runtime_checkable
class Tool(Protocol):
    """A client tool the loop can run: :class:`~elelem.tools.FunctionTool`,
    an MCP server's tool, or any object with these attributes.

    ``call`` gets the model's JSON arguments exactly as streamed and returns
    the outcome; an exception it raises becomes an error result naming its
    type and message.  ``idempotent`` says a call interrupted by a crash may
    run again; ``timeout`` bounds one call in seconds (None: no bound).
    """

    @property
    def spec(self) -> ToolSpec:
        """What the model is told of the tool: name, description, JSON Schema."""

    @property
    def name(self) -> str:
        """The tool's name as the model calls it."""

    @property
    def idempotent(self) -> bool:
        """Whether a call interrupted by a crash may run again."""

    @property
    def timeout(self) -> float | None:
        """The most seconds one call may take (None: no bound)."""

    async def call(self, arguments: str) -> ToolOutcome:
        """Run the tool on the model's JSON ``arguments``, exactly as streamed."""


CALL_KEY: ContextVar[str | None] = ContextVar("elelem_tool_call_key", default=None)
"""The idempotency key of the tool call running (set by the tool loop)."""


def call_key() -> str | None:
    """The idempotency key of the tool call this code runs in, None outside one.

    Derived from the call's id and its conversation, it is the same on every
    attempt of one call (a durable run whose worker died mid-call runs the
    call again, with the same key) and different for every other call, so a
    tool with an effect outside the log (a payment, a row, a line in a file)
    can keep that effect once: record the key with the effect, and on a key
    already recorded return the same result without acting again.  Such a
    tool is then safe to run again and says so with ``idempotent=True``.
    """
    return CALL_KEY.get()


def render_result(value: object) -> ToolOutcome:
    """A function's return value as the result the model sees: a string as
    it is, a :class:`ToolOutcome` unchanged, an image or document block as an
    attachment, None as empty, anything else as JSON (Structs, dataclasses,
    dicts, lists...)."""
    if isinstance(value, ToolOutcome):
        return value
    if isinstance(value, (ImageBlock, DocumentBlock)):
        return ToolOutcome("", attachments=(value,))
    if isinstance(value, str):
        return ToolOutcome(value)
    if value is None:
        return ToolOutcome("")
    try:
        return ToolOutcome(msgspec.json.encode(value).decode())
    except TypeError as exc:
        raise TypeError(
            f"tool returned a {type(value).__name__}, which is neither text nor JSON: {exc}"
        ) from exc


class HostedToolRunner:
    """What a provider's hosted tool run by the client (computer use, memory,
    shell, apply_patch) is to the tool loop: the request asks for the
    provider's tool (the subclass's ``hosted``), and the model's calls of it
    run here, one at a time (``idempotent`` False: each acts on the world).

    A subclass gives ``name`` (the tool's name on the wire), ``hosted``,
    ``described`` (the tool in words), ``_timeout`` and ``call``."""

    idempotent = False
    needs_approval = True
    described = "hosted"
    """The tool in the words of :attr:`spec` (``computer-use``, ``memory``)."""
    _timeout: float | None = None

    @property
    def name(self) -> str:
        """The tool's name as the model's calls carry it."""
        raise NotImplementedError

    @property
    def timeout(self) -> float | None:
        """Seconds one call may take (None: no bound)."""
        return self._timeout

    @property
    def spec(self) -> ToolSpec:
        """A description for logs; the request carries ``hosted`` instead."""
        return ToolSpec(self.name, f"The provider's {self.described} tool, executed by the client.")


def arguments_object(arguments: str, tool: str) -> dict[str, Any]:
    """A client-run hosted tool's JSON arguments as the model wrote them (none
    is ``{}``); anything but an object is a
    :class:`~elelem.errors.ClientToolError` naming ``tool``."""
    value = msgspec.json.decode(arguments or "{}")
    if not isinstance(value, dict):
        raise ClientToolError(f"{tool}: the arguments are not a JSON object")
    return value


def describe_error(exc: BaseException) -> str:
    """The error result text of a raised exception: its type and message."""
    message = str(exc)
    name = type(exc).__name__
    return f"{name}: {message}" if message else name


__all__ = [
    "HostedToolRunner",
    "Tool",
    "ToolOutcome",
    "arguments_object",
    "describe_error",
    "render_result",
]
