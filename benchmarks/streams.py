"""Benchmark streams: real recorded text deltas, repeated, inside valid framing.

Each builder returns the SSE events of one complete streamed response of
its wire shape: the start framing every client expects, ``n`` text deltas
taken in turn from the recorded ones, and the end framing (stop reason,
usage, the shape's terminal event) so that every client, official SDKs
included, can assemble a final message.  The framing mirrors what the
providers send (compact JSON for Anthropic and OpenAI, spaced JSON and CRLF
for Gemini, ``[DONE]`` for Chat Completions).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

SHAPES = ("anthropic_messages", "openai_responses", "openai_chat", "gemini")

MODELS = {
    "anthropic_messages": "claude-sonnet-4-5-20250929",
    "openai_responses": "gpt-5-mini-2025-08-07",
    "openai_chat": "gpt-4.1-nano-2025-04-14",
    "gemini": "gemini-2.5-flash",
}


@dataclass(frozen=True)
class Stream:
    """One streamed response: its SSE events (bytes each) and the text they carry."""

    shape: str
    deltas: int
    events: tuple[bytes, ...]
    text: str

    @property
    def body(self) -> bytes:
        """The whole response body."""
        return b"".join(self.events)

    @property
    def digest(self) -> str:
        """SHA-256 of the text a correct client assembles."""
        return text_digest(self.text)


def text_digest(text: str) -> str:
    """SHA-256 hex of ``text`` (UTF-8), to check a client's final message cheaply."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _compact(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _sse(event: str | None, obj: Any, *, eol: str = "\n") -> bytes:
    data = obj if isinstance(obj, str) else _compact(obj)
    head = f"event: {event}{eol}" if event else ""
    return f"{head}data: {data}{eol}{eol}".encode()


def _take(deltas: list[str], n: int) -> list[str]:
    return [deltas[i % len(deltas)] for i in range(n)]


def anthropic_messages(deltas: list[str], n: int) -> Stream:
    """An Anthropic Messages stream with one text block of ``n`` text deltas."""
    texts = _take(deltas, n)
    events = [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "model": MODELS["anthropic_messages"],
                    "id": "msg_01QC4g3HwBThD4BaNtBckFDJ",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": 12,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                        "output_tokens": 1,
                        "service_tier": "standard",
                    },
                },
            },
        ),
        _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        _sse("ping", {"type": "ping"}),
    ]
    events += [
        _sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": t},
            },
        )
        for t in texts
    ]
    events += [
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {
                    "input_tokens": 12,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": n,
                },
            },
        ),
        _sse("message_stop", {"type": "message_stop"}),
    ]
    return Stream("anthropic_messages", n, tuple(events), "".join(texts))


def _responses_object(status: str, output: list[Any], usage: Any) -> dict[str, Any]:
    return {
        "id": "resp_0cc96ac817fdc57e00693337060a408198b92bf1f99cf1b8ec",
        "object": "response",
        "created_at": 1764964102,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "max_tool_calls": None,
        "model": MODELS["openai_responses"],
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": "medium", "summary": None},
        "service_tier": "auto",
        "store": True,
        "temperature": 1,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_logprobs": 0,
        "top_p": 1,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": {},
    }


def openai_responses(deltas: list[str], n: int) -> Stream:
    """An OpenAI Responses stream with one message item of ``n`` output-text deltas."""
    texts = _take(deltas, n)
    full = "".join(texts)
    item_id = "msg_0cc96ac817fdc57e006933374a84348198a4e1ac9bc0c4607b"
    seq = iter(range(n + 16))
    ids = {"item_id": item_id, "output_index": 0, "content_index": 0}

    def ev(kind: str, **fields: Any) -> bytes:
        return _sse(kind, {"type": kind, "sequence_number": next(seq), **fields})

    def part(text: str) -> dict[str, Any]:
        return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}

    def item(status: str, content: list[Any]) -> dict[str, Any]:
        return {
            "id": item_id,
            "type": "message",
            "status": status,
            "content": content,
            "role": "assistant",
        }

    usage = {
        "input_tokens": 12,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": n,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 12 + n,
    }
    events = [
        ev("response.created", response=_responses_object("in_progress", [], None)),
        ev("response.in_progress", response=_responses_object("in_progress", [], None)),
        ev("response.output_item.added", output_index=0, item=item("in_progress", [])),
        ev("response.content_part.added", **ids, part=part("")),
    ]
    events += [ev("response.output_text.delta", **ids, delta=t, logprobs=[]) for t in texts]
    done_item = item("completed", [part(full)])
    events += [
        ev("response.output_text.done", **ids, text=full, logprobs=[]),
        ev("response.content_part.done", **ids, part=part(full)),
        ev("response.output_item.done", output_index=0, item=done_item),
        ev("response.completed", response=_responses_object("completed", [done_item], usage)),
    ]
    return Stream("openai_responses", n, tuple(events), full)


def openai_chat(deltas: list[str], n: int) -> Stream:
    """A Chat Completions stream: role chunk, ``n`` content chunks, finish, usage, ``[DONE]``."""
    texts = _take(deltas, n)
    head = {
        "id": "chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0",
        "object": "chat.completion.chunk",
        "created": 1770933892,
        "model": MODELS["openai_chat"],
        "service_tier": "default",
        "system_fingerprint": "fp_de604bd877",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _sse(None, {**head, "choices": [choice], "usage": None})

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    events += [chunk({"content": t}) for t in texts]
    events.append(chunk({}, "stop"))
    usage = {"prompt_tokens": 12, "completion_tokens": n, "total_tokens": 12 + n}
    events.append(_sse(None, {**head, "choices": [], "usage": usage}))
    events.append(_sse(None, "[DONE]"))
    return Stream("openai_chat", n, tuple(events), "".join(texts))


def gemini(deltas: list[str], n: int) -> Stream:
    """A Gemini ``alt=sse`` stream of ``n`` chunks; the last carries ``finishReason``."""
    texts = _take(deltas, n)

    def chunk(text: str, last: bool) -> bytes:
        cand: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}}
        if last:
            cand["finishReason"] = "STOP"
        cand["index"] = 0
        obj = {
            "candidates": [cand],
            "usageMetadata": {
                "promptTokenCount": 9,
                "candidatesTokenCount": n,
                "totalTokenCount": 9 + n,
            },
            "modelVersion": MODELS["gemini"],
            "responseId": "M3iLaY-AI7zTxN8P3Piw4Qg",
        }
        return f"data: {json.dumps(obj, ensure_ascii=False)}\r\n\r\n".encode()

    events = [chunk(t, i == n - 1) for i, t in enumerate(texts)]
    return Stream("gemini", n, tuple(events), "".join(texts))


BUILDERS = {
    "anthropic_messages": anthropic_messages,
    "openai_responses": openai_responses,
    "openai_chat": openai_chat,
    "gemini": gemini,
}


def build(shape: str, deltas: list[str], n: int) -> Stream:
    """The ``shape`` stream of ``n`` text deltas drawn in turn from ``deltas``."""
    if n < 1:
        raise ValueError(f"a stream needs at least one delta, got {n}")
    if not deltas:
        raise ValueError("no text deltas to build a stream from")
    return BUILDERS[shape](deltas, n)
