"""The live-session kind on the seam: types only.

A live session is one WebSocket on which audio and text flow both ways: the
model speaks while it listens, calls tools mid-session and is interrupted.
Like a chat shape, a wire's live protocol is sans-IO (a :class:`LiveProtocol`
in that wire's shape package, ``live.py``, whose ``LIVE`` is the
:class:`LiveWire` its ``SHAPE.live`` holds): the session driver hands it
neutral :data:`LiveCommand` values and sends the text frames it returns, and
hands it every server frame and gets back :data:`LiveOutput` values —

- the ordinary chunks of :mod:`elelem.stream.chunks` for each model response
  (``response-start`` … ``finish``), which go to the ONE
  :class:`~elelem.stream.Assembler` exactly as a streamed chat response's do
  (generated audio is an ``audio`` block, built whole at the response's end
  with its transcript, cut where the user interrupted);
- session events that belong to no response (:class:`SpeechStarted`,
  :class:`InputCommitted`, :class:`InputTranscript`, :class:`AudioOut`,
  :class:`TranscriptDelta`, :class:`RateLimits`, :class:`Resumption`,
  :class:`GoAway`, :class:`Truncated`, :class:`SessionOpened`,
  :class:`LiveFailure`), and :class:`UnknownEvent` for a well-formed event no
  protocol models: kept, never an error.

Audio is 16-bit little-endian mono PCM on both wires; each protocol names its
rates (:attr:`LiveProtocol.input_rate`, :attr:`LiveProtocol.output_rate`).
"""

from __future__ import annotations

from base64 import b64decode
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias

import msgspec

from elelem.errors import StreamError
from elelem.stream import Chunk
from elelem.vocabulary import ToolResultBlock, register_finish_reason
from elelem.vocabulary.json import JSONValue
from elelem.vocabulary.request import ToolSpec

INTERRUPTED = register_finish_reason(
    "interrupted", "a live session's response, stopped where the user cut in"
)
"""The finish reason of a live response the user interrupted."""

# -- the session's settings ----------------------------------------------------------


class LiveSettings(msgspec.Struct, frozen=True):
    """What a session is opened with, neutral: the protocol spells it.

    ``output`` is ``audio`` (speech, with its transcript) or ``text``;
    ``transcribe`` asks for the transcript of the user's audio; ``vad`` lets
    the server detect the user's turns (server VAD), else the client commits
    each turn (:class:`CommitAudio`); ``resume`` is a resumption handle
    (Gemini) to continue a dropped session with.
    """

    model: str
    instructions: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    output: Literal["audio", "text"] = "audio"
    voice: str | None = None
    transcribe: bool = True
    vad: bool = True
    resume: str | None = None


# -- client commands ---------------------------------------------------------------------


class SendAudio(msgspec.Struct, frozen=True):
    """PCM16 mono audio of the user, at the protocol's input rate."""

    pcm: bytes


class CommitAudio(msgspec.Struct, frozen=True):
    """The user's turn of audio is complete (without server VAD): commit it
    and ask for a response."""


class SendText(msgspec.Struct, frozen=True):
    """A user message of text, answered at once."""

    text: str


class SendToolResults(msgspec.Struct, frozen=True):
    """The results of a response's tool calls; the model continues."""

    results: tuple[ToolResultBlock, ...]


class Interrupt(msgspec.Struct, frozen=True):
    """The user cut in: stop the response and keep only what was heard of
    the assistant's audio item ``item_id`` — its first ``audio_end_ms``
    milliseconds."""

    item_id: str
    audio_end_ms: int


LiveCommand: TypeAlias = SendAudio | CommitAudio | SendText | SendToolResults | Interrupt
"""What the session driver asks a protocol to put on the wire."""


# -- server events that are no chunk ------------------------------------------------------


class SessionOpened(msgspec.Struct, frozen=True):
    """The server accepted the session (OpenAI ``session.created``, Gemini
    ``setupComplete``), or says its settings now (``updated``: OpenAI
    ``session.updated``): its id where the wire names one, and its object."""

    session_id: str | None
    raw: JSONValue = None
    updated: bool = False


class SpeechStarted(msgspec.Struct, frozen=True):
    """Server VAD heard the user start speaking, ``at_ms`` into the input."""

    item_id: str | None
    at_ms: int | None = None


class InputCommitted(msgspec.Struct, frozen=True):
    """A user turn of audio was committed (by server VAD or by the client):
    the user item ``item_id``."""

    item_id: str | None


class InputTranscript(msgspec.Struct, frozen=True):
    """The transcript of the user's audio item: ``text`` is a piece, or the
    whole transcript when ``done``."""

    item_id: str | None
    text: str
    done: bool = False


class AudioOut(msgspec.Struct, frozen=True, gc=False):
    """A piece of the assistant's speech, for playback: base64 PCM16 as it
    came (decoded only when read, :attr:`pcm`)."""

    item_id: str | None
    data: str

    @property
    def pcm(self) -> bytes:
        """The PCM16 bytes of the piece."""
        return b64decode(self.data)


class TranscriptDelta(msgspec.Struct, frozen=True, gc=False):
    """More of the transcript of the assistant's speech (or its text)."""

    item_id: str | None
    text: str


class Truncated(msgspec.Struct, frozen=True):
    """The server cut the assistant item ``item_id`` at ``audio_end_ms``
    (what the user heard); ``heard`` is the transcript up to that point."""

    item_id: str
    audio_end_ms: int
    heard: str = ""


class RateLimits(msgspec.Struct, frozen=True):
    """The server's rate limits now (OpenAI ``rate_limits.updated``), as sent."""

    limits: JSONValue


class Resumption(msgspec.Struct, frozen=True):
    """A handle to resume this session with (Gemini ``sessionResumptionUpdate``)."""

    handle: str | None
    resumable: bool


class GoAway(msgspec.Struct, frozen=True):
    """The server will close the connection soon (Gemini ``goAway``)."""

    time_left: str | None


class LiveFailure(msgspec.Struct, frozen=True):
    """An error event: ``error`` typed as the error pipeline types it;
    ``fatal`` when the session cannot go on."""

    error: StreamError
    fatal: bool = False


class UnknownEvent(msgspec.Struct, frozen=True):
    """A well-formed server event no protocol models, kept as it came."""

    raw: JSONValue


LiveEvent: TypeAlias = (
    SessionOpened
    | SpeechStarted
    | InputCommitted
    | InputTranscript
    | AudioOut
    | TranscriptDelta
    | Truncated
    | RateLimits
    | Resumption
    | GoAway
    | LiveFailure
    | UnknownEvent
)
"""A server event that belongs to no response."""

LIVE_EVENT_TYPES = (SessionOpened, SpeechStarted, InputCommitted, InputTranscript, AudioOut,
                    TranscriptDelta, Truncated, RateLimits, Resumption, GoAway, LiveFailure,
                    UnknownEvent)  # fmt: skip
"""The types of :data:`LiveEvent`, for ``isinstance``."""

LiveOutput: TypeAlias = Chunk | LiveEvent
"""What a protocol makes of a server frame."""


class LiveProtocol(Protocol):
    """One wire's live protocol, sans-IO (OpenAI Realtime, Gemini Live).

    ``url(base_url, model)`` is where the WebSocket goes (a ``ws``/``wss``
    URL); ``open(settings)`` the frames that configure the session, sent
    first; ``send(command)`` the frames of one command; ``receive(frame)``
    what one server frame means.  A frame that is not JSON, or a known event
    whose fields are wrong, raises
    :class:`~elelem.errors.MalformedStreamError`; an unknown event is an
    :class:`UnknownEvent`.
    """

    name: str
    input_rate: int
    output_rate: int

    def url(self, base_url: str, model: str) -> str:
        """The WebSocket URL of a session with ``model``."""
        ...

    def open(self, settings: LiveSettings) -> Sequence[str]:
        """The frames that open the session."""
        ...

    def send(self, command: LiveCommand) -> Sequence[str]:
        """The frames of ``command``."""
        ...

    def receive(self, frame: str | bytes) -> Sequence[LiveOutput]:
        """What one server frame means."""
        ...


@dataclass(frozen=True)
class LiveWire:
    """How one wire holds live sessions, the kind's value in a shape package
    (``live.LIVE``, and its ``SHAPE.live``; None for a wire without them):
    ``protocol(provider, path=None, resource=None)`` makes a fresh
    :class:`LiveProtocol` for one session — ``path`` a cloud's own
    WebSocket path and ``resource`` its name of the model (Vertex AI), where
    :attr:`cloud_path` says the wire serves one."""

    protocol: Callable[..., LiveProtocol]
    cloud_path: str | None = None


__all__ = [
    "INTERRUPTED",
    "LIVE_EVENT_TYPES",
    "AudioOut",
    "CommitAudio",
    "GoAway",
    "InputCommitted",
    "InputTranscript",
    "Interrupt",
    "LiveCommand",
    "LiveEvent",
    "LiveFailure",
    "LiveOutput",
    "LiveProtocol",
    "LiveSettings",
    "LiveWire",
    "RateLimits",
    "Resumption",
    "SendAudio",
    "SendText",
    "SendToolResults",
    "SessionOpened",
    "SpeechStarted",
    "TranscriptDelta",
    "Truncated",
    "UnknownEvent",
]
