"""The one parser skeleton every shape's frame parser is built on (docs/architecture.md §2.3).

A shape's parser knows its own events; what every parser must do the same
way is decided here, once:

- **frames.** :meth:`ParserSkeleton.message` counts frames, refuses a frame
  after the response finished (a non-retryable malformed stream), offers a
  frame of a started response to the shape's typed fast path
  (:meth:`~ParserSkeleton.fast`, None to decline) and otherwise decodes it
  (:meth:`~ParserSkeleton.decode`: text that is not JSON is retryable, JSON
  that is not an object is not) and hands the object to
  :meth:`~ParserSkeleton.event`.  A shape whose wire ends with a sentinel
  (Chat Completions' ``[DONE]``) names it in :attr:`~ParserSkeleton.end_marker`.
- **unknown is kept.**  An event, delta or block type the shape does not
  model becomes an unknown block in position (:func:`unknown_block`), its raw
  JSON intact; an event that is no content block is wrapped as
  ``{"type": "<shape>.event", "event": name, "value": …}``
  (:meth:`~ParserSkeleton.unknown_event`).  A field nobody modelled on a
  *known* event is kept the same way, one field per block,
  ``{"type": "<shape>.event", "event": name, "field": f, "value": …}``, where
  it first arrived and again whenever its value changes
  (:meth:`~ParserSkeleton.event_fields`): a metadata field repeated on every
  frame is kept once.  A *malformed known* value is the only parse error.
- **EOF without the terminal event** returns what is still buffered but no
  ``finish`` (:meth:`~ParserSkeleton.eof`), so the driver raises its
  retryable :class:`~elelem.errors.IncompleteStreamError` and the assembler's
  partial keeps what arrived.  A parser never raises at EOF.
- **an end marker with no finish reason** finishes ``unknown`` (raw None),
  every block and the usage kept (:func:`unknown_finish`).
- **fast paths keep them too**: :class:`HotFields` is a shape's typed
  decoder of its hot frame that learns, from the dict path, the top-level
  fields nobody modelled, so a stream whose every frame carries one stays
  typed and the field is kept as the dict path keeps it.
- **usage is a snapshot, once per read.**  A fast path may hold back a
  usage object that changed (:attr:`~ParserSkeleton.holding`); the skeleton
  emits it (:meth:`~ParserSkeleton.release`) before any frame the dict path
  takes and at the end of the read (:meth:`~ParserSkeleton.messages`, or of
  the frame, :meth:`~ParserSkeleton.message`).  Usage is cumulative, so a
  snapshot that a later one of the same read replaces before anything but
  text or reasoning came is not emitted: the assembler is fed the read at
  once, and what it commits is the same.  A stream that sends a new usage
  object on every chunk (Gemini, Perplexity) then maps one per read.
- **payloads** (:meth:`~ParserSkeleton.payload`) are the shape's provider's,
  and a later payload of the same format on a block replaces the earlier
  one (the assembler's rule): a signature sent twice is the last one.
- **whole bodies**: :func:`decode_whole_body` is the one classification of a
  non-streaming body that is not JSON, the same for every shape.

Sans-IO: no clock, no socket, no global state.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import msgspec

from elelem.errors import ElelemError, MalformedStreamError
from elelem.shapes.common import at_frame, checked_payload, decode_body, malformed
from elelem.stream import BlockEnd, BlockKey, BlockStart, Chunk, Finish, Payload
from elelem.stream.frames import DataRun
from elelem.vocabulary import ProviderId, ProviderPayload
from elelem.vocabulary.json import TOO_DEEP, JSONValue, decode_json

T = TypeVar("T")
UNKNOWN_FINISH = "unknown"
"""The finish reason of a response whose end marker named none."""


UNTYPED: tuple[type[Exception], ...] = (
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    ValueError,
    OverflowError,
    RecursionError,
    msgspec.ValidationError,
)
"""What a parser's own code raises on JSON of the wrong shape.  The project's
typed errors that are ValueErrors too (DecodeError, PayloadError, …) are
ElelemErrors and pass through untouched."""


def _as_json(data: str) -> object:
    try:
        return decode_json(data)
    except msgspec.DecodeError:
        return data


def typed_parse(method: Callable[..., T]) -> Callable[..., T]:
    """Decorate a shape's ``parse_response(body, …)`` so that hostile JSON
    in a whole body raises only the project's typed errors (see
    :meth:`ParserSkeleton.message`)."""

    @functools.wraps(method)
    def parse(self: Any, body: bytes, *args: Any, **kwargs: Any) -> T:
        try:
            return method(self, body, *args, **kwargs)
        except ElelemError:
            raise
        except UNTYPED as exc:
            what = getattr(self, "name", "the shape")
            raise malformed(
                f"{what} response body holds a value of the wrong type or range "
                f"({type(exc).__name__}: {exc})"
            ) from exc

    return parse


def unknown_block(key: BlockKey, raw: Mapping[str, Any]) -> list[Chunk]:
    """The chunks that keep ``raw`` (a JSON object with a string ``type``) as an
    unknown block at ``key``, in position."""
    return [BlockStart(index=key, block="unknown", raw=dict(raw)), BlockEnd(key)]


def unknown_finish(payloads: tuple[ProviderPayload, ...] = ()) -> Finish:
    """The finish of a response that ended with its end marker but no finish reason."""
    return Finish(UNKNOWN_FINISH, raw=None, payloads=payloads)


def decode_whole_body(body: bytes, what: str) -> Any:
    """The JSON value of a whole (non-streaming) response ``body``.

    The one rule for every shape: bytes that are not UTF-8 or text that is
    not JSON were cut or corrupted on the way, so the
    :class:`MalformedStreamError` (``"{what} is not JSON: …"``, body kept) is
    retryable, as for a frame.
    """
    try:
        # The bytes decoded at once (msgspec checks UTF-8 as it goes): not
        # through a str copy of the whole body first.
        return decode_json(body)
    except msgspec.DecodeError as exc:
        decode_body(body, what)  # bytes that are not UTF-8: named with the first bad one
        raise MalformedStreamError(f"{what} is not JSON: {exc}", body=body) from None


def decode_whole_object(body: bytes, what: str) -> dict[str, Any]:
    """Like :func:`decode_whole_body`, for a body that must be a JSON object:
    any other JSON value is well-formed but wrong, so not retryable."""
    value = decode_whole_body(body, what)
    if not isinstance(value, dict):
        raise malformed(f"{what} is not a JSON object", value)
    return value


_MAX_EXTRA = 32
"""How many top-level field names nobody modelled a hot decoder takes on."""

_STALE = object()
"""The raw fields a :class:`HotFields` compares with after the dict path
judged a frame of its event."""


@functools.lru_cache(maxsize=128)
def _hot_struct(
    frame: type[msgspec.Struct], extra: frozenset[str]
) -> tuple[msgspec.json.Decoder[Any], tuple[tuple[str, str], ...]]:
    names = {f"extra_{i}": name for i, name in enumerate(sorted(extra))}
    fields = [(attr, msgspec.Raw, msgspec.field(default=None)) for attr in names]
    struct = msgspec.defstruct(
        frame.__name__, fields, bases=(frame,), rename=names, forbid_unknown_fields=True, gc=False
    )
    return msgspec.json.Decoder(struct), tuple(names.items())


class HotFields:
    """The typed decoder of a shape's hot frame (``frame``: a struct with
    ``forbid_unknown_fields``), and the fields nobody modelled it takes on.

    A frame with a top-level field the struct does not declare fails
    :attr:`decoder`; the dict path keeps the field
    (:meth:`ParserSkeleton.event_fields`) and :meth:`learn` takes its name, after
    which the decoder holds it as raw JSON.  :meth:`kept` then keeps it as the
    dict path would, decoding only when its bytes differ from the last hot
    frame's, so a field on every frame costs a comparison.  The dict path
    calls :meth:`stale` for every frame of ``event`` it handles: what it kept
    may differ from the last bytes seen here.
    """

    __slots__ = ("decoder", "event", "extra", "frame", "last", "raws")

    def __init__(self, event: str, frame: type[msgspec.Struct]) -> None:
        self.event = event
        self.frame = frame
        self.decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(frame)
        self.extra: tuple[tuple[str, str], ...] = ()
        """(attribute, wire name) of each learned field, by name."""
        self.raws: Callable[[Any], object] = _no_fields
        """The learned fields of a decoded frame, as one value to compare."""
        self.last: object = _STALE

    def learn(self, names: set[str]) -> None:
        """Let the decoder take frames that also hold fields ``names``."""
        known = {name for _, name in self.extra}
        if names <= known or len(known | names) > _MAX_EXTRA:
            return
        self.decoder, self.extra = _hot_struct(self.frame, frozenset(known | names))
        self.raws = operator.attrgetter(*(attr for attr, _ in self.extra))
        self.last = _STALE

    def stale(self) -> None:
        """The dict path handled a frame of :attr:`event`."""
        self.last = _STALE

    def kept(self, parser: ParserSkeleton, frame: Any) -> list[Chunk]:
        """What :meth:`ParserSkeleton.event_fields` keeps of a decoded frame's
        learned fields (nothing when their bytes are the last frame's)."""
        raws = self.raws(frame)
        if raws == self.last:
            return []
        self.last = raws
        given = {}
        for attr, name in self.extra:
            raw = getattr(frame, attr)
            if raw is not None:
                given[name] = decode_json(raw)
        return parser.event_fields(self.event, given, frozenset())


def _frame(frames: Sequence[Sequence[Any]], index: int) -> tuple[str, str]:
    frame = frames[index]
    return frame[0], frame[1]


def _expanded(items: list[Any]) -> list[Sequence[Any]]:
    """``items`` with each run made its frames."""
    frames: list[Sequence[Any]] = []
    for item in items:
        if type(item) is DataRun:
            frames += item.frames()
        else:
            frames.append(item)
    return frames


def _no_fields(frame: Any) -> object:
    del frame
    return None


class ParserSkeleton:
    """The skeleton of a shape's :class:`~elelem.wire.FrameParser`.

    A shape's parser subclasses it and supplies :meth:`event` (one decoded
    frame object), and where it has them :meth:`fast` (hot typed frames),
    :meth:`end` (the wire's end marker) and :meth:`at_eof` (chunks still
    buffered when the body ends).  The skeleton owns the frame counter
    (:attr:`frames`), the started/finished guards (:attr:`started`,
    :attr:`finished`) and the contracts in the module docstring.
    """

    what: ClassVar[str] = "frame"
    """How errors name this shape's frames (``"anthropic"``, ``"ollama line"``)."""

    end_marker: ClassVar[str | None] = None
    """Frame data that ends the response (Chat Completions' ``[DONE]``), or None."""

    takes_runs: ClassVar[bool] = False
    """Whether :meth:`messages` may be given
    :class:`~elelem.stream.frames.DataRun` items (the driver then asks the
    event-stream decoder for them): a shape whose :meth:`fast_values`
    decodes their bytes in its own loop."""

    event_type: ClassVar[str] = "unknown.event"
    """``type`` of the unknown block that keeps an event nobody modelled."""

    def __init__(self, provider: ProviderId) -> None:
        self.provider = provider
        self.frames = 0
        self.started = False
        self.finished = False
        self._unknown_events = 0
        self._field_values: dict[tuple[str, str], bytes] = {}
        self.holding = False
        """A fast path holds chunks back for :meth:`release` (see the module docstring)."""

    # -- FrameParser -----------------------------------------------------------

    def open(self, status: int, headers: Mapping[str, str]) -> Sequence[Chunk]:
        """The response headers arrived (status 2xx); nothing in them is content."""
        del status, headers
        return ()

    def message(self, event: str, data: str) -> Sequence[Chunk]:
        """One frame: the fast path where it fits, else decoded and applied.

        Hostile JSON (a list where a string belongs, a number past any
        range, ``true`` for an object) that a shape's own checks let through
        is still only a malformed frame: the untyped error it raised becomes a
        non-retryable :class:`~elelem.errors.MalformedStreamError` naming it
        (chained, so ``--debug`` shows where)."""
        self.frames += 1
        if self.finished:
            raise malformed(f"{self.what}: frame {self.frames} arrived after the response finished")
        try:
            if self.started:
                chunks = self.fast(event, data)
                if chunks is not None:
                    if self.holding:  # a frame on its own is a read of one frame
                        self.holding = False
                        return [*chunks, *self.release()]
                    return chunks
            return self._decoded(event, data)
        except ElelemError:
            raise
        except UNTYPED as exc:
            raise self._wrong_type(exc, data) from exc

    def messages(self, frames: Iterable[Sequence[Any]], out: list[Chunk]) -> None:
        """Every frame of ``frames`` (``(event, data, …)`` tuples: one read's
        worth) as :meth:`message` takes it, its chunks appended to ``out``, up
        to the frame that finished the response (the rest is not read).

        The same contracts as :meth:`message`, one call per read instead of
        per frame; a frame that raises leaves the chunks of the frames before
        it in ``out``.  A parser that :attr:`takes_runs` may also be given
        :class:`~elelem.stream.frames.DataRun` items, each standing for its
        frames: :meth:`fast_values` decodes their bytes straight away.
        """
        frames = frames if isinstance(frames, list) else list(frames)
        if len(frames) == 1 and type(frames[0]) is not DataRun:
            # A read of one frame (a live stream, one event per write) costs
            # less frame by frame.
            if not self.finished:
                out.extend(self.message(frames[0][0], frames[0][1]))
            return
        if self.takes_runs and DataRun in map(type, frames):
            if type(self).message is not ParserSkeleton.message:
                # A shape that wraps message keeps its wrapping: frame by frame.
                self._frames_of(_expanded(frames), out)
                return
            start = 0
            for index, item in enumerate(frames):
                if type(item) is DataRun:
                    if index > start:
                        self._frames_of(frames[start:index], out)
                    if self.finished:
                        return
                    self._run(item, len(item.data), self.fast_values, DataRun.frame, out)
                    start = index + 1
            if start < len(frames) and not self.finished:
                self._frames_of(frames[start:], out)
            return
        self._frames_of(frames, out)

    def _frames_of(self, frames: list[Sequence[Any]], out: list[Chunk]) -> None:
        if len(frames) == 1 or type(self).message is not ParserSkeleton.message:
            # A read of one frame (a live stream, one event per write) costs
            # less frame by frame; a shape that wraps message keeps its wrapping.
            extend = out.extend
            for frame in frames:
                if self.finished:
                    return
                extend(self.message(frame[0], frame[1]))
            return
        self._run(frames, len(frames), self.fast_run, _frame, out)

    def _run(
        self,
        items: Any,
        end: int,
        take: Callable[[Any, int, list[Chunk]], int],
        frame_at: Callable[[Any, int], tuple[str, str]],
        out: list[Chunk],
    ) -> None:
        """:meth:`messages` over the ``end`` frames of ``items`` (a list of
        frames, or a run): the fast path ``take`` from each index on, and each
        frame it declines (``frame_at`` makes it one) through the dict path."""
        extend = out.extend
        first, index = self.frames, 0
        try:
            while index < end:
                if self.finished:
                    return
                if self.started:
                    index = take(items, index, out)  # it counts the frames it took
                    if index == end:
                        break
                # A frame of a response not started, or one the fast path declined.
                self.frames += 1
                event, data = frame_at(items, index)
                index += 1
                if self.holding:
                    self.holding = False
                    extend(self.release())
                extend(self._decoded(event, data))
        except ElelemError:
            raise
        except UNTYPED as exc:
            raise self._wrong_type(exc, frame_at(items, self.frames - first - 1)[1]) from exc
        finally:
            if self.holding:  # the read's end (or a fault: what came before it is kept)
                self.holding = False
                extend(self.release())

    def _decoded(self, event: str, data: str) -> Sequence[Chunk]:
        if self.end_marker is not None and data.strip() == self.end_marker:
            return self.end()
        return self.event(self.decode(event, data), event)

    def _wrong_type(self, exc: Exception, data: str) -> MalformedStreamError:
        if isinstance(exc, RecursionError):
            # A typed decoder of the fast path met it: the same words as the
            # dict path's, the frame kept as text (it cannot be decoded).
            return malformed(f"{self.what}: frame {self.frames} data is {TOO_DEEP}", data)
        return malformed(
            f"{self.what}: frame {self.frames} holds a value of the wrong type or range "
            f"({type(exc).__name__}: {exc})",
            _as_json(data),
        )

    def eof(self) -> Sequence[Chunk]:
        """The body ended: what :meth:`at_eof` still holds; never an error.

        Without the terminal event no ``finish`` comes, and the driver
        raises its retryable incomplete-stream error with the partial kept.
        """
        if self.finished:
            return ()
        return self.at_eof()

    # -- what a shape supplies -------------------------------------------------

    def fast(self, event: str, data: str) -> Sequence[Chunk] | None:
        """The chunks of a hot frame of a started response, or None (before
        touching any state) to leave the frame to the dict path.  A hot frame
        never finishes the response (the dict path does)."""
        del event, data
        return None

    def fast_values(self, run: DataRun, start: int, out: list[Chunk]) -> int:
        """:meth:`fast_run` over the frames of a
        :class:`~elelem.stream.frames.DataRun` from frame ``start`` on; the
        index of the first it declined.  A shape that :attr:`takes_runs`
        decodes the run's bytes in its own loop (which then serves
        :meth:`fast_run` too); this one makes them frames for :meth:`fast_run`."""
        frames = [run.frame(index) for index in range(start, len(run.data))]
        return start + self.fast_run(frames, 0, out)

    def fast_run(self, frames: Sequence[Sequence[Any]], start: int, out: list[Chunk]) -> int:
        """The fast path over the frames of a started response from
        ``frames[start]`` on, their chunks appended to ``out``: return the
        index of the first frame :meth:`fast` declined (``len(frames)`` when
        it took them all), having added the frames it took to :attr:`frames`.
        Whenever a call that may raise runs, :attr:`frames` counts the frame
        it reads, as :meth:`message` counts it, so an error names its frame.
        The skeleton gives a declined frame to the dict path, not to
        :meth:`fast` again.  A shape may replace it with a loop that takes its
        commonest frame inline; the outcome is :meth:`fast`'s, frame by frame.
        A shape with its own :meth:`fast_values` loop has the frames made a
        run (their data, and their names as the decoder gives them, bytes,
        where any is named) for that loop: it is written once."""
        if type(self).fast_values is not ParserSkeleton.fast_values:
            rest = list(itertools.islice(frames, start, None))
            names = [frame[0] for frame in rest]
            run = DataRun(
                [frame[1] for frame in rest],
                events=[name.encode() for name in names] if any(names) else None,
            )
            return start + self.fast_values(run, 0, out)
        fast, extend = self.fast, out.extend
        index = start
        base = self.frames - start  # frames[i] is frame number base + i + 1
        for frame in itertools.islice(frames, start, None):
            self.frames = base + index + 1  # counted before it is read, as in message()
            chunks = fast(frame[0], frame[1])
            if chunks is None:
                break
            extend(chunks)
            index += 1
        self.frames = base + index
        return index

    def release(self) -> Sequence[Chunk]:
        """The chunks :meth:`fast` held back (it set :attr:`holding`); the
        skeleton calls it, having cleared :attr:`holding`."""
        return ()

    def decode(self, event: str, data: str) -> dict[str, Any]:
        """The JSON object of one frame (see :func:`~elelem.shapes.common.decode_frame`)."""
        try:
            value = decode_json(data)
        except msgspec.DecodeError as exc:
            # Cut or corrupted on the way: a retry may succeed.
            raise MalformedStreamError(
                f"{self.what} {event or 'frame'} data is not JSON: {exc}", body=data.encode()
            ) from None
        if not isinstance(value, dict):
            raise malformed(f"{self.what} {event or 'frame'} data is not a JSON object", value)
        return value

    def event(self, obj: dict[str, Any], event: str) -> Sequence[Chunk]:
        """Apply one decoded frame object; return its chunks."""
        raise NotImplementedError

    def end(self) -> Sequence[Chunk]:
        """The :attr:`end_marker` arrived: the chunks that end the response."""
        raise NotImplementedError

    def at_eof(self) -> Sequence[Chunk]:
        """Chunks still buffered when the body ends unfinished (a shape whose
        wire ends with the body, once its finish reason came, finishes here)."""
        return ()

    # -- helpers ---------------------------------------------------------------

    def payload(self, key: BlockKey, fmt: str, value: object) -> Payload:
        """A payload of this parser's provider on block ``key`` (replace semantics)."""
        return Payload(key, ProviderPayload(self.provider, fmt, None, value))

    def checked(
        self, key: BlockKey, fmt: str, value: object, kind: type | tuple[type, ...], where: str
    ) -> Payload:
        """Payload ``fmt`` on block ``key`` when ``value`` is of ``kind``, else
        the record that it came malformed at ``where`` in this frame
        (:func:`~elelem.shapes.common.checked_payload`: the answer goes on)."""
        at = at_frame(self.frames, where)
        return Payload(key, checked_payload(self.provider, fmt, value, kind, at))

    def unknown_event(self, name: str, value: Mapping[str, Any]) -> list[Chunk]:
        """Keep an event nobody modelled as an unknown block where it arrived:
        ``{"type": event_type, "event": name, "value": value}``."""
        self._unknown_events += 1
        raw: dict[str, JSONValue] = {"type": self.event_type, "event": name, "value": dict(value)}
        return unknown_block(f"event-{self._unknown_events}", raw)

    def event_fields(
        self, name: str, obj: Mapping[str, Any], modelled: frozenset[str]
    ) -> list[Chunk]:
        """Keep the fields of a known event ``name`` that are not in
        ``modelled``: each as an unknown block
        ``{"type": event_type, "event": name, "field": f, "value": v}`` where it
        arrived (in name order), when its value differs from the last one kept
        for that event and field (a field repeated on every frame is kept once).  Like an
        unknown event, it is never replayed as content."""
        out: list[Chunk] = []
        # In name order, so that every path that reads the event keeps the same.
        for field in sorted(obj.keys() - modelled):
            value = obj[field]
            # Compared as JSON, so that 1, 1.0 and true are three values.
            encoded = msgspec.json.encode(value)
            if self._field_values.get((name, field)) == encoded:
                continue
            self._field_values[(name, field)] = encoded
            self._unknown_events += 1
            raw: dict[str, JSONValue] = {
                "type": self.event_type,
                "event": name,
                "field": field,
                "value": value,
            }
            out += unknown_block(f"event-{self._unknown_events}", raw)
        return out


__all__ = [
    "UNKNOWN_FINISH",
    "HotFields",
    "ParserSkeleton",
    "decode_whole_body",
    "decode_whole_object",
    "unknown_block",
    "unknown_finish",
]
