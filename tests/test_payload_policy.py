"""One payload policy on every shape (issue #42, D31: "a present-but-
undecodable payload is an error, not a silent downgrade").

A payload elelem knows that arrives in a form it cannot decode is a typed
error recorded on its block: the rest of the answer is kept (never the whole
stream refused), the record is stored and read back, the renderer shows it
sanitized, and native replay sends the block without the bad payload and
reports the drop (never the value sent back as it came).

Each body below is a provider's documented response with one payload field
given the wrong JSON type:
- Gemini ``Part.thoughtSignature`` is a base64 string
  (ai.google.dev/api/caching#Part);
- a Responses reasoning item's ``encrypted_content`` is a string or null
  (platform.openai.com/docs/api-reference/responses/object);
- Anthropic's ``thinking`` block ``signature`` and ``redacted_thinking``
  ``data`` are strings, as is ``signature_delta.signature``
  (docs.anthropic.com/en/docs/build-with-claude/extended-thinking);
- Bedrock Converse ``reasoningText.signature`` is a string
  (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ReasoningTextBlock.html);
- OpenRouter's ``reasoning.encrypted`` detail has string ``data``
  (openrouter.ai/docs/use-cases/reasoning-tokens#reasoning-details-api-shape);
- a Gemini Interactions ``thought`` step's ``signature`` is a string
  (ai.google.dev/gemini-api/docs/interactions).
Ollama's wire carries no payload a parser checks (its ``thinking`` is text).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from elelem.codec import dumps, loads
from elelem.conversation import Conversation, SQLiteStore
from elelem.conversation.events import Draft, MessageBody
from elelem.errors import MalformedPayloadError
from elelem.render import Renderer
from elelem.shapes.gemini_interactions import interaction_steps
from elelem.shapes.registry import shape_named
from elelem.stream import AssembledResponse, Assembler, Chunk
from elelem.vocabulary import Message, ProviderId, ProviderPayload, TextBlock
from elelem.vocabulary.drop import MALFORMED
from elelem.vocabulary.malformed import PayloadFault, block_faults

GOOGLE, OPENAI, ANTHROPIC = ProviderId("google"), ProviderId("openai"), ProviderId("anthropic")
BEDROCK, OPENROUTER = ProviderId("bedrock"), ProviderId("openrouter")


def _gemini() -> bytes:
    parts = [{"text": "Hello", "thoughtSignature": 42}]
    return json.dumps(
        {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}
    ).encode()


def _responses() -> bytes:
    reasoning = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "think"}],
        "encrypted_content": 42,
    }
    message = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Hello", "annotations": []}],
    }
    return json.dumps(
        {
            "id": "resp_1",
            "object": "response",
            "status": "completed",
            "model": "gpt-5",
            "output": [reasoning, message],
            "usage": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
        }
    ).encode()


def _anthropic() -> bytes:
    return json.dumps(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {"type": "thinking", "thinking": "hm", "signature": 42},
                {"type": "text", "text": "Hello"},
            ],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 2},
        }
    ).encode()


def _bedrock() -> bytes:
    reasoning = {"reasoningContent": {"reasoningText": {"text": "hm", "signature": 42}}}
    return json.dumps(
        {
            "output": {"message": {"role": "assistant", "content": [reasoning, {"text": "Hello"}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3},
        }
    ).encode()


def _openrouter() -> bytes:
    message = {
        "role": "assistant",
        "content": "Hello",
        "reasoning": "hm",
        "reasoning_details": [{"type": "reasoning.encrypted", "data": 42, "index": 0}],
    }
    return json.dumps(
        {
            "id": "gen-1",
            "object": "chat.completion",
            "model": "google/gemini-2.5-pro",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        }
    ).encode()


def _interactions() -> bytes:
    return json.dumps(
        {
            "id": "i1",
            "model": "gemini-3-pro",
            "status": "completed",
            "steps": [
                {"type": "thought", "signature": 42, "summary": [{"type": "text", "text": "hm"}]},
                {"type": "model_output", "content": [{"type": "text", "text": "Hello"}]},
            ],
        }
    ).encode()


# shape, provider, body, (format, where, what) of the record, (block, replay drop where)
CASES: dict[str, tuple[ProviderId, Callable[[], bytes], tuple[str, str, str], int]] = {
    "gemini": (
        GOOGLE,
        _gemini,
        ("thought_signature", "part.thoughtSignature", "a number, not a string"),
        0,
    ),
    "openai_responses": (
        OPENAI,
        _responses,
        ("encrypted_content", "output[0].encrypted_content", "a number, not a string"),
        0,
    ),
    "anthropic_messages": (
        ANTHROPIC,
        _anthropic,
        ("signature", "content_block.signature", "a number, not a string"),
        0,
    ),
    "bedrock_converse": (
        BEDROCK,
        _bedrock,
        ("signature", "reasoningContent.signature", "a number, not a string"),
        0,
    ),
    "openai_chat": (
        OPENROUTER,
        _openrouter,
        ("reasoning_details", "reasoning_details[0].data", "a number, not a string"),
        0,
    ),
    "gemini_interactions": (
        GOOGLE,
        _interactions,
        ("signature", "thought.signature", "a number, not a string"),
        0,
    ),
}


def _assemble(provider: ProviderId, chunks: list[Chunk]) -> AssembledResponse:
    assembler = Assembler(provider)
    assembler.feed_all(chunks)
    return assembler.result()


def test_the_walk_covers_every_shape_that_has_payloads() -> None:
    from elelem.shapes.registry import shape_names

    assert set(shape_names()) - set(CASES) == {"ollama_native"}


@pytest.mark.parametrize("shape", sorted(CASES))
def test_a_malformed_payload_is_recorded_on_its_block_and_the_answer_kept(
    shape: str, tmp_path: Path
) -> None:
    provider, body, (fmt, where, what), at = CASES[shape]
    spec = shape_named(shape)
    result = _assemble(provider, spec.parse_response(body(), provider, None))
    assert result.finish is not None
    texts = [b.text for b in result.blocks if isinstance(b, TextBlock)]
    assert texts == ["Hello"]  # the answer is kept
    block = result.blocks[at]
    faults = block_faults(block)
    assert [(f.provider, f.format, f.where, f.what) for f in faults] == [
        (provider, fmt, where, what)
    ]
    error = faults[0].error()
    assert isinstance(error, MalformedPayloadError)
    assert str(error) == f"{provider} {fmt} payload at {where}: {what}"
    assert faults[0].value == 42  # kept, not lost

    # Stored and read back: the same record.
    message = result.to_message()
    assert loads(dumps(message), Message) == message
    conversation = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    conversation.append(
        Draft.of(
            MessageBody("assistant", (block,), provider=provider, model=result.model),  # type: ignore[arg-type]
            turn=1,
        )
    )
    again = Conversation.open(SQLiteStore(tmp_path / "log.db"), conversation.id)
    stored = again.project().messages[0].content[0]
    assert block_faults(stored) == faults

    # Native replay sends the block without the bad payload and says so.
    if shape == "gemini_interactions":  # requests not built yet: its steps
        steps, dropped = interaction_steps(message, provider)
        sent, place = json.dumps(steps), f"content[{at}]"
    else:
        wire = spec.encode_request(_follow_up(message), provider=provider, stream=True)
        sent, dropped = json.dumps(wire.body), wire.dropped
        place = f"messages[1].content[{at}]"
    assert ": 42" not in sent
    assert [(d.where, d.what, d.why) for d in dropped if d.why == MALFORMED] == [
        (place, fmt, MALFORMED)
    ]


def _follow_up(answer: Message) -> Any:
    from elelem.wire import ModelRequest

    return ModelRequest("m", (Message.user("hi"), answer, Message.user("and?")))


def test_a_streamed_gemini_signature_that_is_no_string_keeps_the_answer() -> None:
    # The stream was MalformedStreamError before, and its text lost.
    spec = shape_named("gemini")
    parser = spec.new_parser(GOOGLE)
    parser.open(200, {"content-type": "text/event-stream"})
    frames = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}]},
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [{"text": "lo", "thoughtSignature": {"x": 1}}],
                    }
                }
            ]
        },
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "!"}]}, "finishReason": "STOP"}
            ]
        },
    ]
    chunks: list[Chunk] = []
    for frame in frames:
        chunks += parser.message("", json.dumps(frame))
    chunks += parser.eof()
    result = _assemble(GOOGLE, chunks)
    assert [getattr(b, "text", None) for b in result.blocks] == ["Hello!"]
    assert block_faults(result.blocks[0]) == (
        PayloadFault(
            "google",
            "thought_signature",
            "frame 2: part.thoughtSignature",
            "a object, not a string",
            {"x": 1},
        ),
    )


def test_the_renderer_shows_a_fault_sanitized() -> None:
    bad = PayloadFault("google", "thought_signature", "parts[0]\x1b[31m", "a number\u202e", 4)
    block = TextBlock("Hi.", payloads=(bad.payload(),))
    out = io.StringIO()
    renderer = Renderer(Console(file=out, width=200))
    renderer.part(block)
    renderer.end_answer()
    assert out.getvalue().splitlines()[-1] == (
        "malformed google thought_signature payload at parts[0]: a number (kept, not replayed)"
    )


def test_a_record_that_is_not_the_modules_shape_is_still_a_fault() -> None:
    odd = ProviderPayload(GOOGLE, "malformed:thought_signature", None, [1, 2])
    block = TextBlock("Hi.", payloads=(odd,))
    assert block_faults(block) == (
        PayloadFault("google", "thought_signature", "?", "an unreadable malformed record", [1, 2]),
    )
