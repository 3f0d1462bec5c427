"""Models that answer in-process, for testing an agent without a server.

:class:`TestModel` and :class:`FunctionModel` go wherever a model goes
(``elelem.send``, ``elelem.run``, ``Client.stream``, a
:class:`~elelem.Fallback`): they answer a neutral request with the chunks a
provider's stream would give, through the one
:class:`~elelem.stream.Assembler`, into the same log and the same tool loop.
No socket is opened and no key is needed.

- :class:`TestModel` plays a model that uses every tool it is given once:
  its first answer calls each tool (or those named in ``call_tools``) with
  arguments built from the tool's JSON Schema
  (:func:`~elelem.testing.schema_values.value_for`), and once the results
  are back it answers ``text`` (by default the results as JSON,
  ``{"tool": "result"}``).  ``reasoning``, ``citations`` and ``hosted``
  add a reasoning block, citations on the text and hosted activity.
- :class:`FunctionModel` answers with a function of the request: a
  :class:`Reply`, a plain string, or the chunks themselves.

Both record every request they were sent in ``requests``.  Usage is counted
as a provider would: the input by :func:`elelem.tokens.estimate_request`,
the output by :func:`elelem.tokens.text_tokens`, so usage limits and costs
see numbers.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from elelem.providers.protocol import CoreModel, Opening
from elelem.stream import (
    BlockEnd,
    BlockStart,
    Chunk,
    Citation,
    Finish,
    Hosted,
    ReasoningDelta,
    ResponseStart,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)
from elelem.testing.schema_values import value_for
from elelem.tokens import estimate_request, text_tokens
from elelem.transport.local import LocalCore
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    HostedActivity,
    Message,
    ProviderId,
    Source,
    ToolResultBlock,
    Usage,
)

if TYPE_CHECKING:
    from elelem.wire import ModelRequest

NO_TOOL_CALLS = "success (no tool calls)"
"""What :class:`TestModel` answers when it has nothing to call and no ``text``."""

TEST_PROVIDER = ProviderId("test")
"""The provider name the test models' answers are recorded under by default."""

TEST_SOURCE = Source(url="https://example.com/test-source", title="Test source")


@dataclass(frozen=True)
class Reply:
    """One answer of an in-process model, in the order a provider streams it:
    reasoning, hosted activity, text (with its citations), tool calls.

    ``calls`` are ``(name, arguments)`` pairs, the arguments a JSON text or a
    JSON-encodable value; the model numbers their call ids.  ``finish``
    defaults to ``tool-calls`` when there are calls, else ``stop``; ``usage``
    to the model's own count.
    """

    text: str = ""
    reasoning: str = ""
    calls: Sequence[tuple[str, Any]] = ()
    citations: Sequence[Attribution] = ()
    hosted: Sequence[HostedActivity] = ()
    usage: Usage | None = None
    finish: str | None = None


@dataclass(kw_only=True)
class _Local(CoreModel):
    """What both models share: identity, numbering and the streams."""

    provider: ProviderId = TEST_PROVIDER
    model: str = "test-model"
    requests: list[ModelRequest] = field(default_factory=list, init=False, repr=False)
    """Every request the model was sent, in order."""
    _responses: int = field(default=0, init=False, repr=False)

    @property
    def address(self) -> str:
        """``provider:model``, as the turn start records it."""
        return f"{self.provider}:{self.model}"

    def core(self, opening: Opening) -> LocalCore:
        """The stream answering the request (made on its first read).
        ``streamed`` is accepted and ignored: no request goes over a wire, and
        the chunks made in-process are the same either way."""
        self._responses += 1
        number = self._responses
        request, sync = opening.request, opening.sync

        def produce() -> Any:
            self.requests.append(request)
            made = self.answer(request)
            if inspect.isawaitable(made):
                if sync:
                    if inspect.iscoroutine(made):
                        made.close()  # never awaited: closed rather than leak a warning
                    raise TypeError("a blocking stream needs a synchronous model function")
                return _later(self, made, request, number)
            return self.chunks(made, request, number)

        return LocalCore(produce, self.provider, blocking=sync, request_id=f"req_test_{number}")

    def answer(self, request: ModelRequest) -> Any:
        """The reply to ``request`` (a :class:`Reply`, a string or chunks)."""
        raise NotImplementedError

    def chunks(self, made: Any, request: ModelRequest, number: int) -> Iterable[Chunk]:
        """The chunks of the reply ``made``."""
        if isinstance(made, str):
            made = Reply(text=made)
        if isinstance(made, Reply):
            return reply_chunks(made, request, self.provider, self.model, number)
        return made  # type: ignore[no-any-return]


async def _later(model: _Local, made: Any, request: ModelRequest, number: int) -> Iterable[Chunk]:
    return model.chunks(await made, request, number)


def reply_chunks(
    reply: Reply, request: ModelRequest, provider: ProviderId, model: str, number: int = 1
) -> list[Chunk]:
    """The chunk stream of ``reply`` as a provider would stream it."""
    out: list[Chunk] = [ResponseStart(f"resp_test_{number}", model, provider)]
    index = 0
    if reply.reasoning:
        out += [BlockStart(index, "reasoning")]
        out += [ReasoningDelta(index, piece) for piece in _pieces(reply.reasoning)]
        out += [BlockEnd(index)]
        index += 1
    out += [Hosted(t) for t in reply.hosted]
    if reply.text:
        out += [BlockStart(index, "text")]
        out += [TextDelta(index, piece) for piece in _pieces(reply.text)]
        out += [Citation(index, a) for a in reply.citations]
        out += [BlockEnd(index)]
        index += 1
    written = [reply.reasoning, reply.text]
    for i, (name, arguments) in enumerate(reply.calls):
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        out += [BlockStart(index, "tool-call", id=f"call_test_{number}_{i + 1}", name=name)]
        out += [ToolCallDelta(index, text), BlockEnd(index)]
        written.append(text)
        index += 1
    usage = reply.usage
    if usage is None:
        output = sum(text_tokens(t) for t in written if t)
        usage = Usage(input=estimate_request(request, provider).total, output=output)
    out.append(UsageUpdate(usage))
    out.append(Finish(reply.finish or ("tool-calls" if reply.calls else "stop")))
    return out


def _pieces(text: str) -> list[str]:
    # Word by word, spaces kept, as a provider's deltas come.
    return re.findall(r"\S+\s*|\s+", text)


def _last_results(request: ModelRequest) -> tuple[ToolResultBlock, ...]:
    """The tool results of the request's last message (none unless it is one)."""
    if not request.messages:
        return ()
    last: Message = request.messages[-1]
    return tuple(p for p in last.content if isinstance(p, ToolResultBlock))


@dataclass(kw_only=True)
class TestModel(_Local):
    """A model that calls every tool once, then answers (see the module docs).

    ``call_tools``: ``"all"`` (the default), or the names of the tools to
    call, or ``()`` to call none.  ``text``: the final answer (default: the
    tool results as JSON, or :data:`NO_TOOL_CALLS` when nothing was called).
    ``reasoning``: a reasoning block before every answer.  ``citations``:
    attributions on the final text (True: one to :data:`TEST_SOURCE`).
    ``hosted``: neutral names of hosted activity (``web_search``, …) the
    final answer reports as started and completed, or the transitions
    themselves.  ``arguments``: a tool's arguments given by name instead of
    built from its schema.
    """

    __test__ = False  # not a pytest test class, despite its name

    call_tools: str | Sequence[str] = "all"
    text: str | None = None
    reasoning: str = ""
    citations: bool | Sequence[Attribution] = False
    hosted: Sequence[str | HostedActivity] = ()
    arguments: dict[str, Any] = field(default_factory=dict)

    def answer(self, request: ModelRequest) -> Reply:
        """Tool calls on a fresh request, the answer once results came back."""
        results = _last_results(request)
        if not results:
            calls = tuple(
                (spec.name, self.arguments.get(spec.name) or value_for(spec.parameters))
                for spec in request.tools
                if self.call_tools == "all" or spec.name in self.call_tools
            )
            if calls:
                return Reply(reasoning=self.reasoning, calls=calls)
        text = self.text
        if text is None:
            answered = {r.name or r.call_id: r.content for r in results}
            text = json.dumps(answered, ensure_ascii=False) if results else NO_TOOL_CALLS
        return Reply(
            text=text,
            reasoning=self.reasoning,
            citations=self._citations(),
            hosted=self._hosted(),
        )

    def _citations(self) -> tuple[Attribution, ...]:
        if self.citations is True:
            return (Attribution(TEST_SOURCE, excerpt="test excerpt"),)
        if self.citations is False:
            return ()
        return tuple(self.citations)

    def _hosted(self) -> tuple[HostedActivity, ...]:
        out: list[HostedActivity] = []
        for n, item in enumerate(self.hosted):
            if isinstance(item, HostedActivity):
                out.append(item)
                continue
            ident = ActivityId(f"hosted_test_{self._responses}_{n + 1}")
            out.append(HostedActivity(ident, item, "started", {"query": "test"}))
            out.append(HostedActivity(ident, item, "completed", {"query": "test"}, "1 result"))
        return tuple(out)


@dataclass
class FunctionModel(_Local):
    """A model answering with ``function(request)``: a :class:`Reply`, a
    string (the answer's text), or the chunks of the response (from
    ``response-start`` to ``finish``).  The function may be async when the
    model is driven by the async API; an exception it raises is the
    response's error (a :class:`~elelem.errors.StreamError` for a provider's
    failure, which a :class:`~elelem.Fallback` may move past)."""

    function: Callable[[ModelRequest], Any]
    model: str = field(default="function", kw_only=True)

    def answer(self, request: ModelRequest) -> Any:
        """What the function answers."""
        return self.function(request)


__all__ = [
    "NO_TOOL_CALLS",
    "TEST_SOURCE",
    "FunctionModel",
    "Reply",
    "TestModel",
    "reply_chunks",
]
