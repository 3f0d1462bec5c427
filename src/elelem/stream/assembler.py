"""The one Assembler: chunks in, committed blocks and hosted transitions out.

Every shape's chunks go through this class and nothing else builds blocks, so
the rules below hold for every provider:

- a block commits at its ``block-end``, with whatever metadata it gathered
  even when it has no text (a signature-only reasoning block is kept);
- ``partial()`` commits open text and reasoning as blocks marked incomplete,
  keeping the citations received so far (marked incomplete) and dropping
  their payloads, since partial reasoning is resent unsigned; half-built tool
  calls are dropped;
- on a ``max-tokens`` finish, tool calls whose arguments are not complete
  JSON are dropped (only the calls that were the last thing before it: a
  call followed by more content was not cut off, and is kept as sent);
- a provider block (any kind but text, reasoning and tool-call) is whole at
  its ``block-start``: its raw JSON becomes the registered plugin type for
  its tag, or an :class:`~elelem.vocabulary.UnknownBlock` that keeps its
  position;
- the grammar is checked on every chunk: a breach raises
  :class:`~elelem.errors.ProtocolViolation` naming the chunk's position and
  the rule (``response-start-not-first``, ``delta-to-closed-block``,
  ``delta-to-missing-block``, ``delta-kind-mismatch``,
  ``citation-on-non-text``, ``citation-range-outside-text``,
  ``payload-on-provider-block``, ``bad-raw-block``, ``block-reopened``,
  ``tool-call-identity``, ``unknown-without-raw``, ``hosted-after-terminal``,
  ``finish-with-open-blocks``, ``finish-reason``, ``after-finish``,
  ``after-violation``, ``unknown-chunk``, ``retry-after-start``);
- a ``retry`` notice is passed over (it belongs to no response), before the
  response began only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from typing import Any, NoReturn

import msgspec

from elelem.errors import DecodeError, LimitExceededError, ProtocolViolation
from elelem.stream.assembled import AssembledResponse
from elelem.stream.chunks import (
    BlockEnd,
    BlockKey,
    BlockStart,
    Chunk,
    Citation,
    Finish,
    Hosted,
    Payload,
    ReasoningDelta,
    ResponseStart,
    Retry,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)
from elelem.vocabulary import (
    Attribution,
    CallId,
    Part,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    UnknownBlock,
    Usage,
    block_type,
)
from elelem.vocabulary.blob import blob_dec_hook
from elelem.vocabulary.blocks import CORE_BLOCK_TYPES
from elelem.vocabulary.drop import CUT_OFF, TRUNCATED, Drop
from elelem.vocabulary.json import decode_json

_EMPTY: tuple[Part, ...] = ()
_CORE_KINDS = frozenset({"text", "reasoning", "tool-call"})


_RUN = 1024  # deltas a block holds apart before they are joined into one piece


class _Open:
    __slots__ = ("attributions", "block", "built", "id", "joined", "name", "order", "parts",
                 "payloads")  # fmt: skip

    def __init__(self, start: BlockStart, order: int, built: Part | None) -> None:
        self.block = start.block
        self.id = start.id
        self.name = start.name
        # A provider block (any kind but text/reasoning/tool-call) is whole at
        # its start: built then, so a bad one is caught at the right chunk.
        self.built = built
        self.order = order
        self.parts: list[str] = []
        self.joined = 0  # how many leading parts are runs of deltas already joined
        self.attributions: list[Attribution] = []
        self.payloads: list[ProviderPayload] = []


def _compact(block: _Open) -> None:
    """Join the block's latest run of deltas into one piece once it is
    :data:`_RUN` long: a delta of a few characters costs some fifty bytes
    more as a string of its own.  Each delta is joined once, so it stays linear."""
    parts, joined = block.parts, block.joined
    if len(parts) - joined >= _RUN:
        parts[joined:] = ["".join(parts[joined:])]
        block.joined = joined + 1


def _args_complete(arguments: str) -> bool:
    if not arguments.strip():
        return True
    try:
        decode_json(arguments)
    except msgspec.DecodeError:
        return False
    return True


MAX_BLOCKS = 100_000
"""The most blocks a response may start (``Assembler(max_blocks=)``), far
past any real one: each costs some hundred bytes however small its frame, so
endless tiny ones would hold gigabytes.  Past it: a LimitExceededError."""


class Assembler:
    """Turns one response's chunk stream into committed content.

    ``feed(chunk)`` returns the parts that chunk commits (often none), in
    stream order; :meth:`result` gives the whole response after ``finish``;
    :meth:`partial` gives what an interrupted stream keeps.

    After ``finish``, or after a chunk broke the grammar, every further chunk
    is a :class:`~elelem.errors.ProtocolViolation`: a broken stream does not
    keep assembling.
    """

    def __init__(
        self, provider: ProviderId | None = None, *, max_blocks: int | None = None
    ) -> None:
        self._provider = provider
        self._max_blocks = MAX_BLOCKS if max_blocks is None else max_blocks
        self._response_id: str | None = None
        self._model: str | None = None
        self._open: dict[BlockKey, _Open] = {}
        self._ended: set[BlockKey] = set()
        self._content: list[Part] = []
        self._pending_calls: list[ToolCallBlock] = []
        self._terminal_activities: set[str] = set()
        self._usage: Usage | None = None
        self._finish: Finish | None = None
        self._broken: ProtocolViolation | None = None
        self._closed = False
        self._dropped: list[Drop] = []
        self._position = -1
        self._opened = 0
        self._retries: list[Retry] = []
        self._handlers: dict[type, Callable[[Any], tuple[Part, ...]]] = {
            ToolCallDelta: self._on_tool_delta,
            BlockStart: self._on_block_start,
            BlockEnd: self._on_block_end,
            Citation: self._on_citation,
            Payload: self._on_payload,
            Hosted: self._on_hosted,
            UsageUpdate: self._on_usage,
            ResponseStart: self._on_response_start,
            Finish: self._on_finish,
            Retry: self._on_retry,
        }

    # -- public ------------------------------------------------------------

    @property
    def finished(self) -> bool:
        """True once ``finish`` was fed."""
        return self._finish is not None

    def feed(self, chunk: Chunk) -> tuple[Part, ...]:
        """Apply one chunk; return what it commits, in stream order.

        Raises :class:`~elelem.errors.ProtocolViolation` (with the chunk's
        zero-based ``position`` and the ``rule`` broken) for a chunk the
        grammar does not allow here.
        """
        self._position += 1
        if self._closed:
            if self._broken is not None:
                self._violate(
                    "after-violation",
                    f"{type(chunk).__name__} after chunk {self._broken.position} "
                    f"broke {self._broken.rule}",
                )
            self._violate("after-finish", f"{type(chunk).__name__} after finish")
        if type(chunk) is TextDelta or type(chunk) is ReasoningDelta:
            # Text and reasoning deltas are most of every stream: handled
            # inline, saving a call per chunk.
            block = self._open.get(chunk.index)
            want = "text" if type(chunk) is TextDelta else "reasoning"
            if block is None or block.block != want:
                self._misfit(chunk.index, want, type(chunk).__name__)
            block.parts.append(chunk.text)
            if len(block.parts) - block.joined >= _RUN:
                _compact(block)
            return _EMPTY
        handler = self._handlers.get(type(chunk))
        if handler is None:
            self._violate("unknown-chunk", f"{type(chunk).__name__} is not a chunk")
        return handler(chunk)

    def feed_deltas(self, chunks: Sequence[Chunk], start: int = 0) -> int:
        """Feed the text and reasoning deltas of ``chunks`` from ``start`` on,
        in order, as :meth:`feed` would (they commit nothing), up to the first
        chunk of another kind or one the grammar refuses here, which is left
        unfed for :meth:`feed` to apply or refuse; return its index (or
        ``len(chunks)``).  One call for a read's run of deltas, none per delta."""
        if self._closed:
            return start
        get_open = self._open.get
        index = start
        block = None
        for chunk in islice(chunks, start, None) if start else chunks:
            if type(chunk) is TextDelta:
                want = "text"
            elif type(chunk) is ReasoningDelta:
                want = "reasoning"
            else:
                break
            block = get_open(chunk.index)
            if block is None or block.block != want:
                break
            block.parts.append(chunk.text)
            index += 1
        if block is not None and len(block.parts) - block.joined >= _RUN:
            _compact(block)  # once a run: a run rarely spans two blocks
        self._position += index - start
        return index

    def feed_all(self, chunks: Iterable[Chunk]) -> list[Part]:
        """Feed many chunks; return everything they commit."""
        out: list[Part] = []
        for chunk in chunks:
            committed = self.feed(chunk)
            if committed:
                out.extend(committed)
        return out

    def result(self) -> AssembledResponse:
        """The complete response.  Only valid after ``finish``."""
        if self._finish is None:
            raise ProtocolViolation(self._position + 1, "no-finish", "the stream has not finished")
        return self._build(tuple(self._content), complete=True, dropped=self._dropped)

    def partial(self) -> AssembledResponse:
        """What an interrupted stream keeps, without changing the assembler.

        Committed parts stay.  Open text and reasoning blocks are appended, in
        the order they opened, marked incomplete; a text block keeps every
        citation received so far, marked incomplete (a range past the received
        text loses its range, since it would be stale); payloads of open blocks
        are dropped, since partial reasoning is resent unsigned.  Open tool
        calls, open provider blocks and tool calls awaiting complete arguments
        are dropped.  Every drop is described in ``dropped``.
        """
        if self._finish is not None:
            return self.result()
        content = list(self._content)
        dropped = list(self._dropped)
        for call in self._pending_calls:
            dropped.append(
                Drop(
                    f"response.tool_call[{call.id}]",
                    "tool-call",
                    CUT_OFF,
                    f"{call.name}: arguments cut off",
                )
            )
        for key, block in self._open_in_order():
            if block.payloads:
                dropped.append(
                    Drop(
                        f"response.block[{key!r}]",
                        "payload",
                        CUT_OFF,
                        f"{len(block.payloads)} of a partial {block.block} block",
                    )
                )
            if block.block not in ("text", "reasoning"):
                dropped.append(Drop(f"response.block[{key!r}]", block.block, CUT_OFF, "half-built"))
        for part in self.open_parts():
            if part.text or (isinstance(part, TextBlock) and part.attributions):
                content.append(part)
        return self._build(tuple(content), complete=False, dropped=dropped)

    def open_parts(self) -> tuple[TextBlock | ReasoningBlock, ...]:
        """The text and reasoning blocks still open, in the order they
        opened, as :meth:`partial` would keep them (marked incomplete,
        citations so far, no payloads), empty ones included: what a live
        display shows as in progress.  Costs one join per open block."""
        out: list[TextBlock | ReasoningBlock] = []
        for _key, block in self._open_in_order():
            if block.block == "text":
                text = "".join(block.parts)
                n = len(text)
                kept = []
                for a in block.attributions:
                    span = a.range
                    if span is not None and span[1] > n:
                        span = None
                    kept.append(msgspec.structs.replace(a, range=span, complete=False))
                out.append(TextBlock(text, tuple(kept), (), complete=False))
            elif block.block == "reasoning":
                out.append(ReasoningBlock("".join(block.parts), (), complete=False))
        return tuple(out)

    def _open_in_order(self) -> list[tuple[BlockKey, _Open]]:
        # A copy first: a live display may call open_parts() from another
        # thread while the stream is fed.
        return sorted(list(self._open.items()), key=lambda kv: kv[1].order)

    # -- handlers ------------------------------------------------------------

    def _violate(self, rule: str, detail: str) -> NoReturn:
        violation = ProtocolViolation(self._position, rule, detail)
        if self._broken is None:
            self._broken = violation
        self._closed = True
        raise violation

    def _get_open(self, index: BlockKey, what: str) -> _Open:
        block = self._open.get(index)
        if block is None:
            if index in self._ended:
                self._violate("delta-to-closed-block", f"{what} for closed block {index!r}")
            self._violate("delta-to-missing-block", f"{what} for block {index!r} that never opened")
        return block

    def _on_response_start(self, chunk: ResponseStart) -> tuple[Part, ...]:
        if self._position != 0:
            self._violate("response-start-not-first", "response-start must be the first chunk")
        self._response_id = chunk.response_id
        self._model = chunk.model
        if chunk.provider is not None:
            self._provider = chunk.provider
        return _EMPTY

    def _on_retry(self, chunk: Retry) -> tuple[Part, ...]:
        # A transport notice before the response began: no position of its own.
        if self._position != 0:
            self._violate("retry-after-start", "a retry notice after the response began")
        self._position -= 1
        self._retries.append(chunk)
        return _EMPTY

    def _on_block_start(self, chunk: BlockStart) -> tuple[Part, ...]:
        index = chunk.index
        if index in self._open:
            self._violate("block-reopened", f"block {index!r} started while open")
        kind = chunk.block
        built: Part | None = None
        if kind not in _CORE_KINDS:
            built = self._provider_block(chunk)
        elif kind == "tool-call" and (not chunk.id or not chunk.name):
            self._violate("tool-call-identity", f"tool-call block {index!r} needs id and name")
        self._ended.discard(index)
        self._opened += 1
        if self._opened > (most := self._max_blocks):
            raise LimitExceededError(
                f"the response passed {most} blocks", limit="Assembler.max_blocks", value=most
            )
        self._open[index] = _Open(chunk, self._opened, built)
        return _EMPTY

    def _provider_block(self, chunk: BlockStart) -> Part:
        raw = chunk.raw
        if raw is None:
            self._violate(
                "unknown-without-raw",
                f"block {chunk.index!r} of kind {chunk.block!r} has no raw JSON",
            )
        tag = raw.get("type") if isinstance(raw, dict) else None
        cls = block_type(tag) if isinstance(tag, str) else None
        try:
            if cls is not None and cls not in CORE_BLOCK_TYPES:
                # A plugin's block type: the raw JSON is its encoding.  Core
                # types stream through deltas; a raw one is refused below.
                built: Part = msgspec.convert(raw, cls, dec_hook=blob_dec_hook)  # type: ignore[assignment]
            else:
                built = UnknownBlock(raw)
        except (DecodeError, msgspec.ValidationError) as exc:
            self._violate("bad-raw-block", f"block {chunk.index!r}: {exc}")
        return built

    # The delta handlers (and feed's inline text and reasoning path) are the hot
    # path: each keeps its happy path to one dict lookup, one compare and one
    # append, and leaves errors to _misfit.

    def _on_tool_delta(self, chunk: ToolCallDelta) -> tuple[Part, ...]:
        block = self._open.get(chunk.index)
        if block is None or block.block != "tool-call":
            self._misfit(chunk.index, "tool-call", "ToolCallDelta")
        block.parts.append(chunk.arguments)
        if len(block.parts) - block.joined >= _RUN:
            _compact(block)
        return _EMPTY

    def _on_citation(self, chunk: Citation) -> tuple[Part, ...]:
        block = self._open.get(chunk.index)
        if block is None or block.block != "text":
            self._misfit(chunk.index, "text", "citation")
        block.attributions.append(chunk.attribution)
        return _EMPTY

    def _misfit(self, index: BlockKey, kind: str, what: str) -> NoReturn:
        """Raise for a chunk that needs an open ``kind`` block at ``index``."""
        block = self._get_open(index, what)
        if what == "citation":
            self._violate("citation-on-non-text", f"citation for {block.block} block {index!r}")
        self._violate("delta-kind-mismatch", f"{kind} delta for {block.block} block {index!r}")

    def _on_payload(self, chunk: Payload) -> tuple[Part, ...]:
        block = self._get_open(chunk.index, "payload")
        if block.built is not None:
            # A provider block is kept as its raw JSON, which has no place for
            # a payload: accepting one would lose it.
            self._violate(
                "payload-on-provider-block",
                f"payload for {block.block} block {chunk.index!r}, which keeps only its raw JSON",
            )
        new = chunk.payload
        payloads = block.payloads
        for i, old in enumerate(payloads):
            if old.provider == new.provider and old.format == new.format:
                payloads[i] = new
                return _EMPTY
        payloads.append(new)
        return _EMPTY

    def _on_block_end(self, chunk: BlockEnd) -> tuple[Part, ...]:
        block = self._get_open(chunk.index, "block-end")
        del self._open[chunk.index]
        self._ended.add(chunk.index)
        kind = block.block
        part: Part
        if kind == "text":
            text = "".join(block.parts)
            n = len(text)
            for i, a in enumerate(block.attributions):
                span = a.range
                if span is not None and span[1] > n:
                    self._violate(
                        "citation-range-outside-text",
                        f"citation {i} of block {chunk.index!r} spans {span} of a {n}-code-point text",
                    )
            part = TextBlock(text, tuple(block.attributions), tuple(block.payloads))
        elif kind == "reasoning":
            part = ReasoningBlock("".join(block.parts), tuple(block.payloads))
        elif kind == "tool-call":
            text = "".join(block.parts)
            call = ToolCallBlock(
                CallId(block.id or ""), block.name or "", text, tuple(block.payloads)
            )
            if not _args_complete(text):
                # Held until the next commit or finish: only a call that is the
                # last thing before a max-tokens finish was cut off by it.
                flushed = tuple(self._pending_calls)
                self._pending_calls = [call]
                self._content.extend(flushed)
                return flushed
            part = call
        else:
            part = block.built  # type: ignore[assignment]
            if type(part) is UnknownBlock:
                part = part.at(len(self._content) + len(self._pending_calls))
        return self._commit(part)

    def _commit(self, part: Part) -> tuple[Part, ...]:
        if self._pending_calls:
            committed = (*self._pending_calls, part)
            self._pending_calls = []
            self._content.extend(committed)
            return committed
        self._content.append(part)
        return (part,)

    def _on_hosted(self, chunk: Hosted) -> tuple[Part, ...]:
        transition = chunk.transition
        if transition.id in self._terminal_activities:
            self._violate(
                "hosted-after-terminal",
                f"activity {transition.id!r} changed state after its terminal transition",
            )
        if transition.terminal:
            self._terminal_activities.add(transition.id)
        return self._commit(transition)

    def _on_usage(self, chunk: UsageUpdate) -> tuple[Part, ...]:
        self._usage = chunk.usage
        return _EMPTY

    def _on_finish(self, chunk: Finish) -> tuple[Part, ...]:
        if self._open:
            keys = ", ".join(repr(k) for k in self._open)
            self._violate("finish-with-open-blocks", f"finish while blocks {keys} are open")
        if not isinstance(chunk.reason, str) or not chunk.reason:
            self._violate("finish-reason", "finish needs a non-empty reason")
        self._finish = chunk
        self._closed = True
        pending, self._pending_calls = self._pending_calls, []
        if not pending:
            return _EMPTY
        if chunk.reason == "max-tokens":
            for call in pending:
                self._dropped.append(
                    Drop(
                        f"response.tool_call[{call.id}]",
                        "tool-call",
                        TRUNCATED,
                        f"{call.name}: arguments truncated by max-tokens",
                    )
                )
            return _EMPTY
        self._content.extend(pending)
        return tuple(pending)

    def _build(
        self, content: tuple[Part, ...], *, complete: bool, dropped: list[Drop]
    ) -> AssembledResponse:
        return AssembledResponse(
            provider=self._provider,
            response_id=self._response_id,
            model=self._model,
            content=content,
            usage=self._usage,
            finish=self._finish,
            complete=complete,
            dropped=tuple(dropped),
            retries=tuple(self._retries),
        )


def assemble(
    chunks: list[Chunk] | tuple[Chunk, ...], provider: ProviderId | None = None
) -> AssembledResponse:
    """Assemble a whole chunk stream (which must end in ``finish``)."""
    assembler = Assembler(provider)
    assembler.feed_all(chunks)
    return assembler.result()


__all__ = ["MAX_BLOCKS", "AssembledResponse", "Assembler", "assemble"]
