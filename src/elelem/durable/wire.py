"""What crosses between a durable workflow and its steps, as canonical JSON.

A workflow engine records every step's input and output in its own history
(Temporal) or system database (DBOS), so each is a small msgspec struct
encoded with :mod:`elelem.codec` into bytes: the same bytes on every worker
and on every replay.  Drafts and events travel in the log's own canonical
event encoding (:func:`~elelem.conversation.events.encode_event`), so what a
step returns is exactly what the store holds.

Nothing secret crosses: the store's URL and the provider keys are the
worker's own settings, never a workflow's input.  Models and tools are named
(an address the worker's client resolves, or an import path), never pickled.
"""

from __future__ import annotations

import builtins
import importlib
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

import msgspec

from elelem import codec
from elelem.conversation.events import Draft, Event, decode_event, encode_event
from elelem.errors import ElelemError, Patch, RecoverableError, StreamError
from elelem.stream import AssembledResponse, ResponseStart
from elelem.turns.limits import UsageLimits
from elelem.vocabulary import (
    GenerationOptions,
    HostedTool,
    Message,
    Part,
    ProviderPayload,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
)

IMPORT_PREFIX = "import:"
"""What begins a model reference that is an import path (``import:pkg.mod:NAME``)
rather than an address the worker's client resolves."""


NOT_RETRIED = ("DurableError", "ConfigError", "RegistryError", "ConversationNotFound")
"""The errors of a step that running it again cannot mend: the run ends
with them (any other error, a store's say, is retried with back-off)."""


class DurableError(ElelemError):
    """A durable run cannot go on as asked: a model or tool reference that
    does not import, an action no durable driver can do, a workflow that
    ended in an error.  The message names what was wrong."""


class RemoteFailure(ElelemError):
    """An exception a step met whose type cannot be rebuilt in the workflow
    (not a built-in and not an elelem stream error): its type's name and
    message, as the step saw them."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.type_name = type_name


# -- references --------------------------------------------------------------------


def by_import(path: str) -> str:
    """A model reference to the object at ``path`` (``package.module:NAME``),
    which every worker imports: a :class:`~elelem.providers.protocol.Model`
    such as a :class:`~elelem.testing.FunctionModel`, a
    :class:`~elelem.Fallback` or a wrapped model."""
    if ":" not in path:
        raise DurableError(f"an import path is package.module:NAME, not {path!r}")
    return IMPORT_PREFIX + path


def import_object(path: str) -> Any:
    """The object at ``package.module:NAME`` (dots in NAME walk attributes)."""
    module_name, sep, attribute = path.partition(":")
    if not sep or not module_name or not attribute:
        raise DurableError(f"an import path is package.module:NAME, not {path!r}")
    try:
        value: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise DurableError(f"cannot import {module_name!r} (for {path!r}): {exc}") from exc
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise DurableError(f"{module_name!r} has no {attribute!r} (for {path!r})") from None
    return value


def tool_ref(tool: object) -> str:
    """The import path a worker finds ``tool`` at: a string is one already; a
    function (or a tool object defined at module level) is named by its
    module and qualified name."""
    if isinstance(tool, str):
        import_path = tool
    else:
        function = getattr(tool, "function", tool)
        module = getattr(function, "__module__", None)
        name = getattr(function, "__qualname__", None)
        if not module or not name or "<" in name:
            raise DurableError(
                f"a durable run's tools are named by import path; {tool!r} has none "
                "(define it at module level, or pass 'package.module:name')"
            )
        import_path = f"{module}:{name}"
    if ":" not in import_path:
        raise DurableError(f"a tool's import path is package.module:name, not {import_path!r}")
    return import_path


# -- the run's settings ------------------------------------------------------------


class Limits(msgspec.Struct, frozen=True):
    """:class:`~elelem.turns.limits.UsageLimits` as data (``cost`` as text)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cost: str | None = None
    requests: int | None = None
    tool_calls: int | None = None

    @classmethod
    def of(cls, limits: UsageLimits) -> Limits:
        """The data of ``limits``."""
        cost = None if limits.cost is None else str(Decimal(str(limits.cost)))
        return cls(
            limits.input_tokens,
            limits.output_tokens,
            limits.total_tokens,
            cost,
            limits.requests,
            limits.tool_calls,
        )

    def limits(self) -> UsageLimits:
        """The :class:`UsageLimits` again."""
        return UsageLimits(
            self.input_tokens,
            self.output_tokens,
            self.total_tokens,
            self.cost,
            self.requests,
            self.tool_calls,
        )


class RunInput(msgspec.Struct, frozen=True):
    """One durable run of the tool loop: the conversation, the model
    reference, the user's input (None resumes), the tools' import paths and
    the loop's settings (see :class:`~elelem.turns.toolloop.LoopOptions`;
    ``defer`` is ``approve="defer"``, whose decisions arrive as signals)."""

    conversation: str
    model: str
    prompt: str | None
    tools: tuple[str, ...] = ()
    system: str | None = None
    max_steps: int | None = None
    defer: bool = False
    tool_timeout: float | None = None
    max_continuations: int | None = None
    streamed: bool = True
    limits: Limits | None = None
    history: tuple[str, ...] = ()
    """Import paths of the history processors (see :mod:`elelem.turns.history`)."""
    options: GenerationOptions | None = None


class Decisions(msgspec.Struct, frozen=True):
    """What an approval signal carries: a yes or no per waiting call id, and
    external tools' results (any JSON value) per call id."""

    approvals: dict[str, bool] = {}
    results: dict[str, Any] = {}


class ToolMeta(msgspec.Struct, frozen=True):
    """What the workflow knows of a tool: its spec and how it runs."""

    name: str
    spec: ToolSpec
    external: bool = False
    idempotent: bool = False
    timeout: float | None = None


class Opened(msgspec.Struct, frozen=True):
    """The conversation as a run finds it, and what its model and tools are."""

    events: bytes
    address: str
    provider: str
    model: str
    payloads_provider: str | None
    """The provider whose earlier payloads travel with each request (a
    catalog target's); None for a model standing for several."""
    tools: tuple[ToolMeta, ...]


def run_input(
    conversation: str,
    model: str,
    prompt: str | None,
    *,
    tools: Iterable[Any] = (),
    system: str | None = None,
    max_steps: int | None = None,
    defer: bool = False,
    tool_timeout: float | None = None,
    max_continuations: int | None = None,
    streamed: bool = True,
    limits: UsageLimits | None = None,
    history: Iterable[str] = (),
    options: GenerationOptions | None = None,
) -> RunInput:
    """The input of one durable run (see :func:`start`)."""
    return RunInput(
        conversation,
        model,
        prompt,
        tuple(tool_ref(t) for t in tools),
        system,
        max_steps,
        defer,
        tool_timeout,
        max_continuations,
        streamed,
        None if limits is None else Limits.of(limits),
        tuple(history),
        options,
    )


# -- a model request ---------------------------------------------------------------


class RequestArgs(msgspec.Struct, frozen=True):
    """The turn engine's :class:`~elelem.turns.actions.Send` arguments."""

    messages: tuple[Message, ...]
    response_payloads: tuple[ProviderPayload, ...] = ()
    system: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    hosted_tools: tuple[HostedTool, ...] = ()
    options: GenerationOptions | None = None


class RequestInput(msgspec.Struct, frozen=True):
    """One model request: the model reference and the engine's arguments."""

    model: str
    arguments: RequestArgs
    streamed: bool = True


class Flushed(msgspec.Struct, frozen=True):
    """One step of the stream the engine acts on: the response's start chunk
    (None for any other chunk) and the parts that step committed."""

    start: ResponseStart | None
    committed: tuple[Part, ...]


class Failure(msgspec.Struct, frozen=True):
    """An exception a step met, as data to raise again in the workflow."""

    module: str
    name: str
    message: str
    status: int | None = None
    provider_type: str | None = None
    provider_message: str | None = None
    request_id: str | None = None
    retryable: bool | None = None
    retry_after: float | None = None
    patches: tuple[tuple[str, dict[str, Any], str], ...] | None = None


class Streamed(msgspec.Struct, frozen=True):
    """What one request's stream did: the steps the engine acts on, the
    assembled response (the partial one when ``error`` ended it), the
    stream's request id and request drops."""

    flushed: tuple[Flushed, ...]
    response: AssembledResponse
    request_id: str | None
    dropped: tuple[Any, ...]
    error: Failure | None = None


# -- a tool call -------------------------------------------------------------------


class CallInput(msgspec.Struct, frozen=True):
    """One tool call of a step: the conversation, the call, its idempotency
    key, the run's tools' import paths, and whether a killed run left it
    (``settle``).  The key is the id of the log event holding the call and
    the call's id: a model may number its calls anew in each turn, the log's
    event ids are never reused."""

    conversation: str
    call: ToolCallBlock
    tools: tuple[str, ...]
    settle: bool = False
    tool_timeout: float | None = None
    key: str = ""
    """Empty in the input of a run started before keys existed: the call's id."""


# -- encoding ------------------------------------------------------------------------


def dumps(value: object) -> bytes:
    """Canonical JSON of a crossing struct."""
    return codec.dumps(value)


def loads(data: bytes, type: Any) -> Any:
    """A crossing struct back from :func:`dumps`."""
    return codec.loads(data, type)


def dump_drafts(drafts: Iterable[Draft]) -> bytes:
    """Drafts in the log's event encoding (``seq`` 0, no time yet)."""
    items = [
        encode_event(Event(d.id or "", 0, "", d.turn, d.response, d.kind, d.body))  # type: ignore[arg-type]
        for d in drafts
    ]
    return b"[" + b",".join(items) + b"]"


def load_drafts(data: bytes) -> tuple[Draft, ...]:
    """The drafts of :func:`dump_drafts`."""
    return tuple(Draft(e.kind, e.body, e.turn, e.response, e.id or None) for e in _events_of(data))


def dump_events(events: Iterable[Event]) -> bytes:
    """Stored events in the log's own encoding."""
    return b"[" + b",".join(encode_event(e) for e in events) + b"]"


def load_events(data: bytes) -> tuple[Event, ...]:
    """The events of :func:`dump_events`."""
    return tuple(_events_of(data))


def _events_of(data: bytes) -> list[Event]:
    raws = msgspec.json.decode(data, type=list[msgspec.Raw])
    return [decode_event(bytes(raw)) for raw in raws]


def failure_of(exc: BaseException) -> Failure:
    """``exc`` as data."""
    cls = type(exc)
    if isinstance(exc, StreamError):
        patches = None
        if isinstance(exc, RecoverableError):
            patches = tuple((p.action, dict(p.target), p.reason) for p in exc.patches)
        return Failure(
            cls.__module__,
            cls.__qualname__,
            exc.message,
            exc.status,
            exc.provider_type,
            exc.provider_message,
            exc.request_id,
            exc.retryable,
            exc.retry_after,
            patches,
        )
    if isinstance(exc, RemoteFailure):
        return Failure("", exc.type_name, str(exc))
    return Failure(cls.__module__, cls.__qualname__, str(exc))


def raise_again(failure: Failure) -> BaseException:
    """The exception ``failure`` describes: an elelem stream error of its
    own class with its fields; a built-in exception of its type; else a
    :class:`RemoteFailure` naming the type."""
    cls = _class_of(failure)
    if cls is not None and issubclass(cls, StreamError):
        exc: StreamError = cls.__new__(cls)
        Exception.__init__(exc, failure.message)
        exc.message = failure.message
        exc.status = failure.status
        exc.body = None
        exc.provider_type = failure.provider_type
        exc.provider_message = failure.provider_message
        exc.request_id = failure.request_id
        exc.retryable = cls.default_retryable if failure.retryable is None else failure.retryable
        exc.retry_after = failure.retry_after
        if isinstance(exc, RecoverableError):
            exc.patches = tuple(Patch(a, t, r) for a, t, r in failure.patches or ())
        return exc
    if cls is not None and failure.module == "builtins":
        try:
            made: BaseException = cls(failure.message)
        except TypeError:
            return RemoteFailure(failure.name, failure.message)
        return made
    return RemoteFailure(failure.name, failure.message)


def _class_of(failure: Failure) -> type[BaseException] | None:
    if failure.module == "builtins":
        found = getattr(builtins, failure.name, None)
    elif failure.module.startswith("elelem."):
        found = getattr(importlib.import_module(failure.module), failure.name, None)
    else:
        return None
    if isinstance(found, type) and issubclass(found, BaseException):
        return found
    return None


def results_of(blocks: Sequence[ToolResultBlock]) -> bytes:
    """Tool results as canonical JSON."""
    return codec.dumps(tuple(blocks))


__all__ = [
    "IMPORT_PREFIX",
    "NOT_RETRIED",
    "CallInput",
    "Decisions",
    "DurableError",
    "Failure",
    "Flushed",
    "Limits",
    "Opened",
    "RemoteFailure",
    "RequestArgs",
    "RequestInput",
    "RunInput",
    "Streamed",
    "ToolMeta",
    "by_import",
    "dump_drafts",
    "dump_events",
    "dumps",
    "failure_of",
    "import_object",
    "load_drafts",
    "load_events",
    "loads",
    "raise_again",
    "run_input",
    "tool_ref",
]
