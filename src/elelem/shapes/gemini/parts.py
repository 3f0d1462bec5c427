"""How a Gemini candidate's parts become blocks: text and thought parts
(merged while they continue one another), function calls (whole, or their
arguments streamed in ``partialArgs`` pieces), generated images, and code
execution as hosted activity.  Sans-IO.

:class:`~elelem.shapes.gemini.parser.GeminiParser` reads the chunks, the
candidates and the envelope; :class:`GeminiParts`, which it is built on,
turns each part into blocks in :class:`OpenBlock`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from elelem.shapes.common import at_frame, checked_payload, malformed
from elelem.shapes.gemini.computer import ACTION_FORMAT, ComputerActions, call_arguments
from elelem.shapes.gemini.grounding import has_supports, support_attributions
from elelem.shapes.gemini.partial_args import apply_piece
from elelem.shapes.media import generated_audio, generated_image
from elelem.stream import (
    BlockEnd,
    BlockStart,
    Chunk,
    Citation,
    Hosted,
    Payload,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)
from elelem.vocabulary import ActivityId, HostedActivity, ProviderId, ProviderPayload

_TEXT_FIELDS = frozenset({"text", "thought", "thoughtSignature"})
_CALL_FIELDS = frozenset({"id", "name", "args", "partialArgs", "willContinue"})
_OUTCOMES = {
    "OUTCOME_OK": "ok",
    "OUTCOME_FAILED": "failed",
    "OUTCOME_DEADLINE_EXCEEDED": "deadline exceeded",
}


def conflicting(fields: dict[str, Any], extra: dict[str, Any]) -> bool:
    """Whether a part's fields nobody modelled give a field of the open block
    another value: then it is a part of its own (one block could replay only
    one value), not more of the same."""
    return any(
        k in fields and msgspec.json.encode(fields[k]) != msgspec.json.encode(v)
        for k, v in extra.items()
    )


class OpenBlock:
    """The block being built: ``text``, ``thought`` or ``call``."""

    __slots__ = (
        "action",
        "args",
        "byte_start",
        "call_fields",
        "data",
        "emit_args",
        "fields",
        "key",
        "kind",
        "signed",
        "split",
        "streaming",
    )

    def __init__(self, key: int, kind: str, byte_start: int = 0) -> None:
        self.key = key
        self.kind = kind
        self.byte_start = byte_start
        self.data = bytearray()
        self.signed = False
        self.split = False  # the signature came on its own empty part
        self.streaming = False  # a call whose arguments follow in partialArgs pieces
        self.fields: dict[str, Any] = {}  # part fields no neutral block models
        self.call_fields: dict[str, Any] = {}  # likewise, of a functionCall object
        self.args: dict[str, Any] = {}
        self.emit_args = False
        self.action: str | None = None  # a computer call's predefined function name


class GeminiParts:
    """The parts of the candidate being read (a base of
    :class:`~elelem.shapes.gemini.parser.GeminiParser`, which sets these
    attributes up)."""

    provider: ProviderId
    frames: int
    _next_key: int
    _open: OpenBlock | None
    _text_bytes: int
    _calls: int
    _code: int
    _pending_code: dict[str, HostedActivity]
    _response_id: str | None
    _grounding: dict[str, Any] | None
    _computer: ComputerActions  # the function names read as computer calls

    # -- parts ----------------------------------------------------------------

    def _part(self, part: dict[str, Any]) -> list[Chunk]:
        if "functionCall" in part:
            return self._function_call(part)
        if "text" in part or "thought" in part:
            return self._text(part)
        if "executableCode" in part:
            return self._code_started(part)
        if "codeExecutionResult" in part:
            return self._code_result(part)
        if set(part) <= {"thoughtSignature"}:
            # A bare signature belongs to the text or thought block it follows.
            return self._text({**part, "text": ""})
        if "inlineData" in part:
            image = self._image(part)
            if image is not None:
                return image
        kind = next((k for k in part if k != "thoughtSignature"), "part")
        key = self._key()
        return [
            *self._close(),
            BlockStart(key, "unknown", raw={"type": kind, "part": part}),
            BlockEnd(key),
        ]

    def _image(self, part: dict[str, Any]) -> list[Chunk] | None:
        """An image the model generated (``inlineData`` of an image type): an
        image block holding its bytes (the blob store), its signature and any
        other field of the part kept for replay; None for other inline data."""
        inline = part.get("inlineData")
        if not isinstance(inline, dict) or set(inline) - {"mimeType", "data"}:
            return None
        sig = part.get("thoughtSignature")
        rest = {k: v for k, v in part.items() if k not in ("inlineData", "thoughtSignature")}
        payloads = []
        if rest:
            payloads.append(ProviderPayload(self.provider, "part_fields", None, rest))
        if sig is not None:
            payloads.append(self._signature_payload(sig))
        mime = inline.get("mimeType")
        if isinstance(mime, str) and mime.startswith("audio/"):
            # Speech the model generated (a TTS model's audio/L16 samples).
            raw = generated_audio(inline.get("data"), mime, None, payloads)
            if raw is None:
                return None
            key = self._key()
            return [*self._close(), BlockStart(key, "audio", raw=raw), BlockEnd(key)]
        raw = generated_image(inline.get("data"), mime if isinstance(mime, str) else None, payloads)
        if raw is None or raw["media_type"] != mime:
            return None
        key = self._key()
        return [*self._close(), BlockStart(key, "image", raw=raw), BlockEnd(key)]

    def _key(self) -> int:
        self._next_key += 1
        return self._next_key - 1

    def _payload(self, key: int, fmt: str, value: Any) -> Payload:
        return Payload(key, ProviderPayload(self.provider, fmt, None, value))

    def _signature_payload(self, sig: object) -> ProviderPayload:
        """A part's ``thoughtSignature`` as its payload, or the record that it
        came malformed (kept on the part's block; the answer goes on)."""
        where = at_frame(self.frames, "part.thoughtSignature")
        return checked_payload(self.provider, "thought_signature", sig, str, where)

    def _text(self, part: dict[str, Any]) -> list[Chunk]:
        text = part.get("text", "")
        if not isinstance(text, str):
            raise malformed("gemini text part whose text is not a string", part)
        sig = part.get("thoughtSignature")
        bad = None
        if sig is not None and not isinstance(sig, str):
            sig, bad = None, self._signature_payload(sig)
        extra = {k: v for k, v in part.items() if k not in _TEXT_FIELDS}
        return self._text_part(text, part.get("thought") is True, sig, extra, bad)

    def _text_part(
        self,
        text: str,
        thought: bool,
        sig: str | None,
        extra: dict[str, Any],
        bad: ProviderPayload | None = None,
    ) -> list[Chunk]:
        if not text and sig is None and not extra and bad is None:
            return []  # an empty part carries nothing
        kind = "thought" if thought else "text"
        out: list[Chunk] = []
        block = self._open
        fits = (
            block is not None
            and block.kind == kind
            and not (sig is not None and block.signed)
            and not (text and block.split)
            and not (extra and conflicting(block.fields, extra))
        )
        if not fits or block is None:
            out.extend(self._close())
            block = self._open = OpenBlock(self._key(), kind, self._text_bytes)
            out.append(BlockStart(block.key, "reasoning" if kind == "thought" else "text"))
        if text:
            block.data += text.encode("utf-8")
            delta = ReasoningDelta if kind == "thought" else TextDelta
            out.append(delta(block.key, text))
        if sig is not None:
            block.signed = True
            out.append(self._payload(block.key, "thought_signature", sig))
            if not text and block.data:
                block.split = True
                out.append(self._payload(block.key, "signature_layout", "own-part"))
        if bad is not None:
            out.append(Payload(block.key, bad))
        if extra:
            block.fields.update(extra)
        return out

    def _function_call(self, part: dict[str, Any]) -> list[Chunk]:
        call = part["functionCall"]
        if not isinstance(call, dict):
            raise malformed("gemini functionCall is not an object", part)
        sig = part.get("thoughtSignature")
        block = self._open
        out: list[Chunk] = []
        if block is None or not block.streaming or call.get("name"):
            # Not a piece of a call whose arguments are streaming: a new call.
            out.extend(self._close())
            out.extend(self._call_start(part, call))
            block = self._open
            assert block is not None
        for piece in call.get("partialArgs") or []:
            apply_piece(block.args, piece)
        if isinstance(sig, str):
            block.signed = True
            out.append(self._payload(block.key, "thought_signature", sig))
        elif sig is not None:
            out.append(Payload(block.key, self._signature_payload(sig)))
        block.fields.update(
            {k: v for k, v in part.items() if k not in ("functionCall", "thoughtSignature")}
        )
        block.call_fields.update({k: v for k, v in call.items() if k not in _CALL_FIELDS})
        if call.get("willContinue") is not True:
            out.extend(self._close())
        return out

    def _call_start(self, part: dict[str, Any], call: dict[str, Any]) -> list[Chunk]:
        name, cid = call.get("name"), call.get("id")
        if not isinstance(name, str) or not name:
            raise malformed("gemini functionCall without a name", part)
        self._calls += 1
        block = self._open = OpenBlock(self._key(), "call")
        synthesized = not (isinstance(cid, str) and cid)
        if synthesized:
            cid = f"{self._response_id or 'gemini'}:call:{self._calls}"
        computer = name in self._computer
        neutral = "computer" if computer else name
        out: list[Chunk] = [BlockStart(block.key, "tool-call", id=str(cid), name=neutral)]
        if synthesized:
            out.append(self._payload(block.key, "synthesized_id", cid))
        if computer:
            # A computer-use action: the computer tool's call, the wire name kept.
            block.action = name
            out.append(
                self._payload(block.key, ACTION_FORMAT, {"name": name, "args": "args" in call})
            )
        # Arguments are sent back exactly when the call had some: given whole,
        # or streamed in partialArgs pieces (then rebuilt, even if empty).
        block.streaming = call.get("willContinue") is True
        block.emit_args = block.streaming or "args" in call
        args = call.get("args")
        if args is not None:
            if not isinstance(args, dict):
                raise malformed("gemini functionCall args is not an object", part)
            block.args = dict(args)
        return out

    def _close(self) -> list[Chunk]:
        block, self._open = self._open, None
        if block is None:
            return []
        out: list[Chunk] = []
        key = block.key
        if block.kind == "call" and block.action is not None:
            args = call_arguments(block.action, block.args)
            out.append(ToolCallDelta(key, msgspec.json.encode(args).decode()))
        elif block.kind == "call" and block.emit_args:
            out.append(ToolCallDelta(key, msgspec.json.encode(block.args).decode()))
        elif block.kind == "text":
            if has_supports(self._grounding):
                assert self._grounding is not None
                for attribution in support_attributions(
                    self.provider, self._grounding, bytes(block.data), block.byte_start
                ):
                    out.append(Citation(key, attribution))
            self._text_bytes += len(block.data)
        if block.fields:
            out.append(self._payload(key, "part_fields", block.fields))
        if block.call_fields:
            out.append(self._payload(key, "call_fields", block.call_fields))
        out.append(BlockEnd(key))
        return out

    # -- code execution ---------------------------------------------------------

    def _code_started(self, part: dict[str, Any]) -> list[Chunk]:
        code = part["executableCode"]
        if not isinstance(code, dict):
            raise malformed("gemini executableCode is not an object", part)
        self._code += 1
        aid = code.get("id")
        if not isinstance(aid, str) or not aid:
            aid = f"{self._response_id or 'gemini'}:code:{self._code}"
        given = {k: code[k] for k in ("language", "code") if k in code}
        activity = HostedActivity(
            id=ActivityId(aid),
            name="code_execution",
            state="started",
            input=given,
            payload=ProviderPayload(self.provider, "part", None, part),
        )
        self._pending_code[aid] = activity
        return [*self._close(), Hosted(activity)]

    def _code_result(self, part: dict[str, Any]) -> list[Chunk]:
        result = part["codeExecutionResult"]
        if not isinstance(result, dict):
            raise malformed("gemini codeExecutionResult is not an object", part)
        aid = result.get("id")
        started = self._pending_code.pop(aid, None) if isinstance(aid, str) else None
        if started is None and not isinstance(aid, str) and self._pending_code:
            # No id on the wire: a result answers the latest code still running.
            started = self._pending_code.pop(next(reversed(self._pending_code)))
        if started is None:
            self._code += 1
            fresh = (
                aid
                if isinstance(aid, str)
                else f"{self._response_id or 'gemini'}:code:{self._code}"
            )
            started = HostedActivity(ActivityId(fresh), "code_execution", "started")
        outcome = result.get("outcome")
        summary = _OUTCOMES.get(outcome, outcome) if isinstance(outcome, str) else "no outcome"
        output = result.get("output")
        if outcome == "OUTCOME_FAILED" and isinstance(output, str) and output.strip():
            # Say why: the last line of a traceback names the error.
            summary = output.strip().splitlines()[-1][:120]
        transition = started.transition(
            "completed" if outcome == "OUTCOME_OK" else "failed",
            summary=summary,
            payload=ProviderPayload(self.provider, "part", None, part),
        )
        return [*self._close(), Hosted(transition)]


__all__ = ["GeminiParts", "OpenBlock", "conflicting"]
