"""Live sessions in the log: the core, sans-IO, that both faces drive.

:class:`LiveCore` turns what a session's protocol hands out
(:data:`~elelem.wire.live.LiveOutput`) into the actions of
:mod:`elelem.turns.actions` — :class:`~elelem.turns.actions.Append` drafts,
:class:`RunTools` for a response's tool calls, :class:`SendCommand` for what
goes back on the wire — and keeps the log's promises for a session:

- each user turn (a server-VAD turn, a committed buffer, a text) is a turn:
  its ``turn-start`` and its user message, audio as an ``AudioBlock`` (the
  PCM sent, as a WAV; bytes once in the blob store) with the input
  transcription when it came before the answer (after it, a ``session``
  note ``input-transcript``);
- each model response goes through the ONE assembler and is committed part
  by part as it streams, then its ``response`` record with usage (the audio
  counters ``input_audio``/``output_audio``/``cache_audio_read`` beside the
  tokens) and so its cost;
- a response's tool calls are run by the tool loop's :class:`ToolLoop`
  (Python functions, MCP servers, approvals), their results appended as the
  tool message and sent back; the model answers in the same turn;
- an interruption cuts the assistant's audio item at ``audio_end_ms`` (the
  block stored ends there, with the transcript heard) and is a ``session``
  note ``interrupted``; rate limits, ``goAway``, error events and unknown
  events are notes too, never dropped;
- a connection that drops mid-response keeps the partial response
  (``aborted``, as a turn does); a resumed one (Gemini's last resumption
  handle) is a note ``resumed`` in the same conversation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from elelem.conversation.events import Draft, MessageBody, TurnStart
from elelem.conversation.log import Conversation
from elelem.conversation.session import SessionNote
from elelem.errors import StreamError
from elelem.stream import Assembler, Chunk, Finish, ResponseStart
from elelem.turns.actions import Append
from elelem.turns.engine import ResponseDrafts, describe
from elelem.vocabulary import AudioBlock, Message, ProviderId, ToolCallBlock, ToolResultBlock
from elelem.vocabulary.audio import base64_size
from elelem.wire.live import (
    LIVE_EVENT_TYPES,
    AudioOut,
    GoAway,
    InputCommitted,
    InputTranscript,
    Interrupt,
    LiveCommand,
    LiveFailure,
    LiveOutput,
    RateLimits,
    Resumption,
    SendAudio,
    SendText,
    SendToolResults,
    SessionOpened,
    SpeechStarted,
    TranscriptDelta,
    Truncated,
    UnknownEvent,
)


@dataclass(frozen=True)
class RunTools:
    """Run these tool calls (the tool loop's step) and hand back the results."""

    calls: tuple[ToolCallBlock, ...]


@dataclass(frozen=True)
class SendCommand:
    """Put this command on the wire."""

    command: LiveCommand


LiveAction = Append | RunTools | SendCommand

_NOTHING: list[LiveAction] = []  # never appended to: what most outputs ask for


@dataclass
class _NoRequest:
    """What a response record reads of a request (a session sends none)."""

    request_id: str | None = None
    dropped: tuple[Any, ...] = ()


_NO_REQUEST: Any = _NoRequest()


@dataclass
class LiveCore:
    """One live session's bookkeeping (see the module docstring)."""

    conversation: Conversation
    address: str
    provider: ProviderId
    model: str
    input_rate: int
    output_rate: int
    instructions: str | None = None
    redact: Callable[[str], str] | None = None
    """The endpoint's redactor: a note holds no key a server echoed."""
    max_steps: int = 10
    """Tool steps one user turn may run; the calls past them are answered
    with an error saying so (the model is told, the session goes on)."""
    turn: int = 0
    resuming: bool = False
    """A dropped connection is being resumed: its opening is a ``resumed`` note."""
    resume_handle: str | None = None
    resumable: bool = False
    _sent: bytearray = field(default_factory=bytearray)
    _user: dict[str, Any] | None = None  # the user turn not written yet
    # The wire announces each committed user turn (OpenAI): audio sent since
    # is the next turn's, never one of its own.  Else (Gemini) the audio sent
    # before a transcript or an answer is the turn.
    _announced: bool = False
    _assembler: Assembler | None = None
    _drafts: ResponseDrafts | None = None
    _continuation: int = 0
    _item: str | None = None  # the assistant audio item in progress
    _received: int = 0  # its audio bytes so far

    # -- what the user does ----------------------------------------------------------

    def audio(self, pcm: bytes) -> list[LiveAction]:
        """The user's audio: kept for the turn's message, and sent."""
        self._sent += pcm
        return [SendCommand(SendAudio(pcm))]

    def text(self, text: str) -> list[LiveAction]:
        """A user message of text: a turn of its own, and sent."""
        actions = self._flush_user()
        actions.append(self._start_turn(Message.user(text).content))
        actions.append(SendCommand(SendText(text)))
        return actions

    def interrupt(self, audio_end_ms: int | None = None) -> list[LiveAction]:
        """The user cut in: truncate the audio item in progress where they
        did (all of it received so far when ``audio_end_ms`` is None)."""
        if self._item is None:
            return []
        heard = self._received * 1000 // (2 * self.output_rate)
        end = heard if audio_end_ms is None else min(audio_end_ms, heard)
        return [SendCommand(Interrupt(self._item, end))]

    def results(self, results: tuple[ToolResultBlock, ...]) -> list[LiveAction]:
        """A response's tool results: the tool message, and sent back."""
        body = MessageBody("user", results, "tool")
        return [Append((Draft("message", body, self.turn),)), SendCommand(SendToolResults(results))]

    # -- what the server says --------------------------------------------------------

    def feed(self, output: LiveOutput) -> list[LiveAction]:
        """The actions one protocol output asks for."""
        kind = type(output)
        if kind is AudioOut:  # the commonest: only counted (what an interruption cuts)
            if output.item_id != self._item:  # type: ignore[union-attr]
                self._item, self._received = output.item_id, 0  # type: ignore[union-attr]
            self._received += base64_size(output.data)  # type: ignore[union-attr]
            return _NOTHING
        if kind is TranscriptDelta:
            return _NOTHING
        if isinstance(output, LIVE_EVENT_TYPES):
            return self._event(output)
        return self._chunk(output)

    def _chunk(self, chunk: Chunk) -> list[LiveAction]:
        actions: list[LiveAction] = []
        if type(chunk) is ResponseStart:
            actions += self._begin_response()
        assembler, drafts = self._assembler, self._drafts
        if assembler is None or drafts is None:
            # A chunk with no response open: one begins, as the assembler wants it.
            actions += self._begin_response()
            assembler, drafts = self._assembler, self._drafts
            assert assembler is not None and drafts is not None
            assembler.feed(ResponseStart(None, None, self.provider))
        committed = assembler.feed(chunk)
        if committed:
            actions.append(Append(drafts.parts(committed)))
            drafts.committed += len(committed)
        if type(chunk) is Finish:
            actions += self._end_response(chunk)
        return actions

    def _begin_response(self) -> list[LiveAction]:
        actions = self._flush_user(pending_audio=True)
        if self.turn == 0:
            # The model spoke first: a turn of its own.
            actions.append(self._start_turn(None, trigger="continuation"))
        self._assembler = Assembler(self.provider)
        self._drafts = ResponseDrafts(
            self.provider, self.model, self.turn, self.conversation.next_response(),
            self._continuation, None,
        )  # fmt: skip
        return actions

    def _end_response(self, finish: Finish) -> list[LiveAction]:
        assembler, drafts = self._assembler, self._drafts
        assert assembler is not None and drafts is not None
        result = assembler.result()
        record = drafts.record(result, _NO_REQUEST)
        actions: list[LiveAction] = [drafts.closing(result, record)]
        # The audio item stays the one to cut: it may play long after its response ended.
        self._assembler, self._drafts = None, None
        calls = tuple(p for p in result.content if isinstance(p, ToolCallBlock))
        if finish.reason == "tool-calls" and calls:
            self._continuation += 1
            if self._continuation > self.max_steps:
                why = f"not run: this turn already ran max_steps ({self.max_steps}) tool steps"
                refused = tuple(ToolResultBlock(c.id, why, True, c.name) for c in calls)
                actions += self.results(refused)
            else:
                actions.append(RunTools(calls))
        else:
            self._continuation = 0
        return actions

    def _event(self, event: Any) -> list[LiveAction]:
        kind = type(event)
        if kind is AudioOut:
            if event.item_id != self._item:
                self._item, self._received = event.item_id, 0
            data = event.data
            self._received += len(data) // 4 * 3 - (
                2 if data.endswith("==") else data.endswith("=")
            )
            return []
        if kind is InputCommitted:
            self._announced = True
            return self._commit_user(event.item_id)
        if kind is InputTranscript:
            return self._transcript(event)
        if kind is SpeechStarted:
            return self.interrupt() if self._drafts is not None else []
        if kind is SessionOpened:
            return self._opened(event)
        if kind is Resumption:
            self.resume_handle, self.resumable = event.handle or self.resume_handle, event.resumable
            return []
        if kind is Truncated:
            detail = {
                "item_id": event.item_id,
                "audio_end_ms": event.audio_end_ms,
                "heard": event.heard,
            }
            return [self.note("interrupted", detail)]
        if kind is RateLimits:
            return [self.note("rate-limits", event.limits)]
        if kind is GoAway:
            return [self.note("go-away", {"time_left": event.time_left})]
        if kind is LiveFailure:
            error: StreamError = event.error
            return [self.note("error", {"kind": error.kind, "message": error.message})]
        if kind is UnknownEvent:
            return [self.note("unknown", event.raw)]
        return []

    def _opened(self, event: SessionOpened) -> list[LiveAction]:
        if event.updated:
            what = "updated"
        else:
            what = "resumed" if self.resuming else "opened"
            self.resuming = False
        detail = msgspec.to_builtins({"session_id": event.session_id, "session": event.raw})
        return [self.note(what, detail)]

    # -- user turns -------------------------------------------------------------------

    def _commit_user(self, item_id: str | None) -> list[LiveAction]:
        actions = self._flush_user()
        if self._sent:
            self._user = {"pcm": bytes(self._sent), "item": item_id, "transcript": []}
            self._sent.clear()
        return actions

    def _transcript(self, event: InputTranscript) -> list[LiveAction]:
        user = self._user
        if user is None and self._sent and not self._announced:
            self._user = user = {"pcm": bytes(self._sent), "item": event.item_id, "transcript": []}
            self._sent.clear()
        if user is None:
            detail = {"item_id": event.item_id, "transcript": event.text}
            return [self.note("input-transcript", detail)] if event.done else []
        if event.done:
            user["transcript"] = [event.text]
            return self._flush_user()
        user["transcript"].append(event.text)
        return []

    def _flush_user(self, pending_audio: bool = False) -> list[LiveAction]:
        if pending_audio and self._user is None and self._sent and not self._announced:
            self._commit_user(None)
        user, self._user = self._user, None
        if user is None:
            return []
        transcript = "".join(user["transcript"]) or None
        block = AudioBlock.from_pcm(user["pcm"], self.input_rate, transcript=transcript)
        return [self._start_turn((block,))]

    def _start_turn(self, content: tuple[Any, ...] | None, trigger: str = "user") -> Append:
        self.turn = max(self.turn, self.conversation.turn) + 1
        drafts = [Draft.of(TurnStart(trigger, self.address, self.instructions), turn=self.turn)]
        if content is not None:
            drafts.append(Draft("message", MessageBody("user", content, "user"), self.turn))
        self._continuation = 0
        return Append(tuple(drafts))

    # -- ends ---------------------------------------------------------------------------

    def note(self, what: str, detail: Any = None) -> Append:
        """A ``session`` note in the current turn (redacted: a server may
        echo what it was sent)."""
        if self.redact is not None and detail is not None:
            text = msgspec.json.encode(detail).decode()
            clean = self.redact(text)
            if clean != text:
                detail = msgspec.json.decode(clean)
        return Append((Draft.of(SessionNote(what, detail), turn=self.turn),))

    def stop(self, what: str, exc: BaseException | None = None) -> list[LiveAction]:
        """The session ends (``closed``) or its connection was ``lost``: the
        response in progress kept as far as it came, then the note."""
        actions = self._flush_user()
        assembler, drafts = self._assembler, self._drafts
        if assembler is not None and drafts is not None:
            partial = assembler.partial()
            record = drafts.record(partial, _NO_REQUEST)
            error = describe(exc) if exc is not None else "the session ended mid-response"
            record = msgspec.structs.replace(record, finish="aborted", complete=False, error=error)
            actions.append(drafts.closing(partial, record))
            self._assembler = self._drafts = None
        detail = {"error": describe(exc)} if exc is not None else None
        actions.append(self.note(what, detail))
        self.resuming = what == "dropped"
        return actions


__all__ = ["LiveAction", "LiveCore", "RunTools", "SendCommand"]
