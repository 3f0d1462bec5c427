"""Scripted loopback providers for the tool loop: for each of the six wire
shapes, a response that asks for tool calls and one that answers in text,
spelled the way that wire streams them."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elelem.testing.servers import LoopbackServer, Reply, Send, sse_body
from test_eventstream_framing import event

ToolCall = tuple[str, str, dict[str, Any]]  # (call id, tool name, arguments)
CONFIG = str(Path(__file__).with_name("empty-config.toml"))  # no config: an empty file


def _sse(payloads: Sequence[dict[str, Any]], named: bool = True) -> Reply:
    frames = [(p["type"] if named else None, json.dumps(p)) for p in payloads]
    return Reply(script=(Send(sse_body(frames)),))


# -- Anthropic Messages -----------------------------------------------------------


def _anthropic(
    content: list[dict[str, Any]], stop: str, n: int, model: str = "claude-test"
) -> Reply:
    frames: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": f"msg_{n}", "type": "message",
         "role": "assistant", "model": model, "content": [], "stop_reason": None,
         "usage": {"input_tokens": 10, "output_tokens": 1}}},
    ]  # fmt: skip
    for i, block in enumerate(content):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            frames.append({"type": "content_block_start", "index": i, "content_block": start})
            frames.append({"type": "content_block_delta", "index": i, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}})  # fmt: skip
        else:
            frames.append({"type": "content_block_start", "index": i,
                           "content_block": {"type": "text", "text": ""}})  # fmt: skip
            frames.append({"type": "content_block_delta", "index": i,
                           "delta": {"type": "text_delta", "text": block["text"]}})  # fmt: skip
        frames.append({"type": "content_block_stop", "index": i})
    frames.append({"type": "message_delta", "delta": {"stop_reason": stop},
                   "usage": {"output_tokens": 5}})  # fmt: skip
    frames.append({"type": "message_stop"})
    return _sse(frames)


def anthropic_calls(calls: Sequence[ToolCall], n: int = 1, model: str = "claude-test") -> Reply:
    """``model`` is the one the response names (what its cost is priced by)."""
    blocks = [{"type": "tool_use", "id": c, "name": name, "input": args} for c, name, args in calls]
    return _anthropic(blocks, "tool_use", n, model)


def anthropic_text_then_calls(text: str, calls: Sequence[ToolCall], n: int = 1) -> Reply:
    """Text first (the answer streams, so the live region runs), then calls."""
    blocks = [{"type": "tool_use", "id": c, "name": name, "input": args} for c, name, args in calls]
    return _anthropic([{"type": "text", "text": text}, *blocks], "tool_use", n)


def anthropic_text(text: str, n: int = 2, model: str = "claude-test") -> Reply:
    return _anthropic([{"type": "text", "text": text}], "end_turn", n, model)


# -- OpenAI Responses -------------------------------------------------------------


def _responses(items: list[dict[str, Any]], n: int) -> Reply:
    envelope = {"id": f"resp_{n}", "object": "response", "model": "gpt-test",
                "status": "in_progress", "output": []}  # fmt: skip
    frames: list[dict[str, Any]] = [{"type": "response.created", "response": envelope}]
    for i, item in enumerate(items):
        frames.append({"type": "response.output_item.added", "output_index": i, "item": item})
        frames.append({"type": "response.output_item.done", "output_index": i, "item": item})
    done = {**envelope, "status": "completed", "output": items,
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}  # fmt: skip
    frames.append({"type": "response.completed", "response": done})
    return _sse(frames)


def responses_calls(calls: Sequence[ToolCall], n: int = 1) -> Reply:
    items = [{"type": "function_call", "id": f"fc_{c}", "call_id": c, "name": name,
              "arguments": json.dumps(args), "status": "completed"} for c, name, args in calls]  # fmt: skip
    return _responses(items, n)


def responses_text(text: str, n: int = 2) -> Reply:
    item = {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip
    return _responses([item], n)


# -- OpenAI Chat Completions (DeepSeek's dialect) ---------------------------------


def _chat(deltas: list[dict[str, Any]], finish: str, n: int) -> Reply:
    base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "model": "deepseek-chat"}
    frames = [(None, json.dumps({**base, "choices": [{"index": 0, "delta": d}]})) for d in deltas]
    last = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}  # fmt: skip
    frames += [(None, json.dumps(last)), (None, "[DONE]")]
    return Reply(script=(Send(sse_body(frames)),))


def chat_calls(calls: Sequence[ToolCall], n: int = 1) -> Reply:
    deltas = [{"role": "assistant", "content": None, "tool_calls": [{"index": i, "id": c,
               "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}
              for i, (c, name, args) in enumerate(calls)]  # fmt: skip
    return _chat(deltas, "tool_calls", n)


def chat_text(text: str, n: int = 2) -> Reply:
    return _chat([{"role": "assistant", "content": text}], "stop", n)


# -- Gemini -----------------------------------------------------------------------


def _gemini(parts: list[dict[str, Any]], n: int) -> Reply:
    chunk = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
             "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
             "modelVersion": "gemini-test", "responseId": f"gem_{n}"}  # fmt: skip
    return Reply(script=(Send(sse_body([(None, json.dumps(chunk))])),))


def gemini_calls(calls: Sequence[ToolCall], n: int = 1) -> Reply:
    return _gemini(
        [{"functionCall": {"id": c, "name": name, "args": args}} for c, name, args in calls], n
    )


def gemini_text(text: str, n: int = 2) -> Reply:
    return _gemini([{"text": text}], n)


# -- Bedrock Converse (AWS event stream) ------------------------------------------


def _bedrock(events: list[tuple[str, dict[str, Any]]], stop: str) -> Reply:
    body = event("messageStart", json.dumps({"role": "assistant"}))
    for name, payload in events:
        body += event(name, json.dumps(payload))
    body += event("messageStop", json.dumps({"stopReason": stop}))
    usage = {
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 1},
    }
    body += event("metadata", json.dumps(usage))
    return Reply(
        headers={"content-type": "application/vnd.amazon.eventstream"}, script=(Send(body),)
    )


def bedrock_calls(calls: Sequence[ToolCall], n: int = 1) -> Reply:
    events: list[tuple[str, dict[str, Any]]] = []
    for i, (c, name, args) in enumerate(calls):
        events.append(("contentBlockStart", {"contentBlockIndex": i,
                       "start": {"toolUse": {"toolUseId": c, "name": name}}}))  # fmt: skip
        events.append(("contentBlockDelta", {"contentBlockIndex": i,
                       "delta": {"toolUse": {"input": json.dumps(args)}}}))  # fmt: skip
        events.append(("contentBlockStop", {"contentBlockIndex": i}))
    return _bedrock(events, "tool_use")


def bedrock_text(text: str, n: int = 2) -> Reply:
    events: list[tuple[str, dict[str, Any]]] = [("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text}}),
              ("contentBlockStop", {"contentBlockIndex": 0})]  # fmt: skip
    return _bedrock(events, "end_turn")


# -- Ollama native (NDJSON) -------------------------------------------------------


def _ollama(message: dict[str, Any]) -> Reply:
    lines = [
        {"model": "llama-test", "created_at": "2026-01-01T00:00:00Z", "message": message, "done": False},
        {"model": "llama-test", "created_at": "2026-01-01T00:00:01Z",
         "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
         "prompt_eval_count": 10, "eval_count": 5},
    ]  # fmt: skip
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    return Reply(headers={"content-type": "application/x-ndjson"}, script=(Send(body),))


def ollama_calls(calls: Sequence[ToolCall], n: int = 1) -> Reply:
    tool_calls = [
        {"id": c, "function": {"name": name, "arguments": args}} for c, name, args in calls
    ]
    return _ollama({"role": "assistant", "content": "", "tool_calls": tool_calls})


def ollama_text(text: str, n: int = 2) -> Reply:
    return _ollama({"role": "assistant", "content": text})


# -- the table --------------------------------------------------------------------


@dataclass(frozen=True)
class Wire:
    shape: str
    model: str
    calls: Callable[..., Reply]
    text: Callable[..., Reply]
    env: Callable[[LoopbackServer], dict[str, str]]


WIRES = (
    Wire("anthropic_messages", "anthropic:claude-test", anthropic_calls, anthropic_text,
         lambda s: {"ANTHROPIC_BASE_URL": s.url, "ANTHROPIC_API_KEY": "k", "ELELEM_CONFIG": CONFIG}),
    Wire("openai_responses", "openai:gpt-test", responses_calls, responses_text,
         lambda s: {"OPENAI_BASE_URL": s.url + "/v1", "OPENAI_API_KEY": "k", "ELELEM_CONFIG": CONFIG}),
    Wire("openai_chat", "deepseek:deepseek-chat", chat_calls, chat_text,
         lambda s: {"ELELEM_DEEPSEEK_BASE_URL": s.url, "DEEPSEEK_API_KEY": "k", "ELELEM_CONFIG": CONFIG}),
    Wire("gemini", "google:gemini-test", gemini_calls, gemini_text,
         lambda s: {"GOOGLE_GEMINI_BASE_URL": s.url, "GEMINI_API_KEY": "k", "ELELEM_CONFIG": CONFIG}),
    Wire("bedrock_converse", "bedrock:model-test", bedrock_calls, bedrock_text,
         lambda s: {"ELELEM_BEDROCK_BASE_URL": s.url, "AWS_BEARER_TOKEN_BEDROCK": "k", "ELELEM_CONFIG": CONFIG}),
    Wire("ollama_native", "ollama-native:llama-test", ollama_calls, ollama_text,
         lambda s: {"ELELEM_OLLAMA_NATIVE_BASE_URL": s.url, "ELELEM_CONFIG": CONFIG}),
)  # fmt: skip
