"""Chat Completions shape: one unit test per rule, on small hand-written frames."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elelem.errors import (
    ContextWindowError,
    InvalidRequestError,
    MalformedStreamError,
    ProviderStreamError,
    RateLimitError,
    ServerError,
)
from elelem.shapes.openai_chat import SHAPE, assistant_wire
from elelem.stream import (
    AssembledResponse,
    BlockEnd,
    BlockStart,
    Chunk,
    Finish,
    Payload,
    ReasoningDelta,
    ResponseStart,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
)
from elelem.stream.assembler import assemble
from elelem.vocabulary import (
    Attribution,
    CallId,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    Source,
    TextBlock,
    ToolCallBlock,
    UnknownBlock,
    Usage,
)
from elelem.vocabulary.drop import UNREPLAYABLE, Drop

OPENAI = ProviderId("openai")


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **top: Any) -> str:
    """One ``chat.completion.chunk`` frame's data."""
    obj: dict[str, Any] = {"id": "c1", "object": "chat.completion.chunk", "model": "m"}
    if delta is not None or finish is not None:
        obj["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    else:
        obj["choices"] = []
    obj.update(top)
    return json.dumps(obj)


def run(frames: list[str], provider: str = "openai", *, done: bool = True) -> list[Chunk]:
    parser = SHAPE.new_parser(ProviderId(provider))
    out: list[Chunk] = list(parser.open(200, {}))
    for data in frames:
        out.extend(parser.message("", data))
    if done:
        out.extend(parser.message("", "[DONE]"))
    out.extend(parser.eof())
    return out


def result(frames: list[str], provider: str = "openai") -> AssembledResponse:
    return assemble(run(frames, provider), ProviderId(provider))


# --------------------------------------------------------------------------
# parser
# --------------------------------------------------------------------------


def test_text_stream_gives_exact_chunks() -> None:
    chunks = run(
        [
            chunk({"role": "assistant", "content": "", "refusal": None}),
            chunk({"content": "Hel"}),
            chunk({"content": "lo"}),
            chunk({}, "stop"),
        ]
    )
    assert chunks == [
        ResponseStart("c1", "m", OPENAI),
        BlockStart("text-1", "text"),
        TextDelta("text-1", "Hel"),
        TextDelta("text-1", "lo"),
        BlockEnd("text-1"),
        Finish("stop", raw="stop"),
    ]


def test_usage_only_final_chunk_arrives_before_finish() -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 30,
        "total_tokens": 130,
        "prompt_tokens_details": {"cached_tokens": 60},
        "completion_tokens_details": {"reasoning_tokens": 20},
    }
    chunks = run([chunk({"content": "x"}), chunk({}, "stop"), chunk(usage=usage)])
    assert chunks[-3:] == [
        UsageUpdate(Usage(input=40, output=10, cache_read=60, reasoning=20, raw=usage)),
        BlockEnd("text-1"),
        Finish("stop", raw="stop"),
    ]


def test_usage_counts_are_disjoint_for_every_layout() -> None:
    xai = {
        "prompt_tokens": 307,
        "completion_tokens": 26,
        "total_tokens": 560,
        "prompt_tokens_details": {"cached_tokens": 306},
        "completion_tokens_details": {"reasoning_tokens": 227},
    }
    deepseek = {"prompt_tokens": 20, "completion_tokens": 5, "prompt_cache_hit_tokens": 16}
    openrouter = {
        "prompt_tokens": 2317,
        "completion_tokens": 53,
        "prompt_tokens_details": {"cached_tokens": 100, "cache_write_tokens": 200},
        "server_tool_use_details": {"web_search_requests": 2, "tool_calls_executed": 1},
    }
    got = [result([chunk({"content": "a"}, "stop", usage=u)]).usage for u in (xai, deepseek)]
    assert got[0] == Usage(input=1, output=26, cache_read=306, reasoning=227, raw=xai)
    assert got[1] == Usage(input=4, output=5, cache_read=16, raw=deepseek)
    routed = result([chunk({"content": "a"}, "stop", usage=openrouter)], "openrouter").usage
    assert routed == Usage(
        input=2017,
        output=53,
        cache_read=100,
        cache_write=200,
        hosted={"web_search": 2},
        raw=openrouter,
    )


def test_groq_usage_is_read_from_x_groq_when_top_level_has_none() -> None:
    usage = {"prompt_tokens": 17, "completion_tokens": 11}
    got = result([chunk({"content": "a"}, "stop", x_groq={"id": "req", "usage": usage})], "groq")
    assert got.usage == Usage(input=17, output=11, raw=usage)


def test_reasoning_then_text_commit_in_order_with_their_wire_field() -> None:
    chunks = run(
        [
            chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
            chunk({"reasoning_content": "think"}),
            chunk({"content": "answer", "reasoning_content": None}),
            chunk({}, "stop"),
        ],
        "deepseek",
    )
    field = ProviderPayload(ProviderId("deepseek"), "reasoning-field", None, "reasoning_content")
    assert chunks[1:6] == [
        BlockStart("reasoning-1", "reasoning"),
        Payload("reasoning-1", field),
        ReasoningDelta("reasoning-1", "think"),
        BlockEnd("reasoning-1"),
        BlockStart("text-2", "text"),
    ]
    got = assemble(chunks)
    assert got.content == (ReasoningBlock("think", (field,)), TextBlock("answer"))


def test_groq_reasoning_field_and_channel_label() -> None:
    got = result([chunk({"reasoning": "We", "channel": "analysis"}), chunk({}, "stop")], "groq")
    assert got.content == (
        ReasoningBlock(
            "We", (ProviderPayload(ProviderId("groq"), "reasoning-field", None, "reasoning"),)
        ),
    )


def test_parallel_tool_calls_are_keyed_by_index_and_all_end_before_finish() -> None:
    chunks = run(
        [
            chunk({"content": "Let me check."}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "get", "arguments": ""},
                        },
                    ]
                }
            ),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 1,
                            "id": "call_b",
                            "type": "function",
                            "function": {"name": "put", "arguments": '{"k"'},
                        }
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"x": 1}'}}]}),
            chunk({"tool_calls": [{"index": 1, "function": {"arguments": ": 2}"}}]}),
            chunk({}, "tool_calls"),
        ]
    )
    assert chunks[4:] == [
        BlockStart(0, "tool-call", id="call_a", name="get"),
        BlockStart(1, "tool-call", id="call_b", name="put"),
        ToolCallDelta(1, '{"k"'),
        ToolCallDelta(0, '{"x": 1}'),
        ToolCallDelta(1, ": 2}"),
        BlockEnd(0),
        BlockEnd(1),
        Finish("tool-calls", raw="tool_calls"),
    ]
    assert chunks[3] == BlockEnd("text-1")
    assert assemble(chunks).content[1:] == (
        ToolCallBlock(CallId("call_a"), "get", '{"x": 1}'),
        ToolCallBlock(CallId("call_b"), "put", '{"k": 2}'),
    )


def test_a_whole_tool_call_without_index_and_an_index_reused_for_a_new_id() -> None:
    got = result(
        [
            chunk({"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{}"}}]}),
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "b", "function": {"name": "g", "arguments": {"y": 2}}}
                    ]
                }
            ),
            chunk({}, "tool_calls"),
        ]
    )
    assert got.content == (
        ToolCallBlock(CallId("a"), "f", "{}"),
        ToolCallBlock(CallId("b"), "g", '{"y":2}'),
    )


def test_tool_call_fields_beyond_the_function_are_kept_for_replay() -> None:
    extra = {"extra_content": {"google": {"thought_signature": "sig"}}}
    got = result(
        [
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "a",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                            **extra,
                        }
                    ]
                }
            ),
            chunk({}, "tool_calls"),
        ]
    )
    call = got.content[0]
    assert isinstance(call, ToolCallBlock)
    assert call.payloads == (ProviderPayload(OPENAI, "tool-call-extra", None, extra),)
    wire, dropped = assistant_wire(got.to_message(), OPENAI)
    assert wire["tool_calls"] == [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}, **extra}
    ]
    assert dropped == []


def test_a_tool_call_that_starts_without_a_name_is_malformed() -> None:
    with pytest.raises(MalformedStreamError, match="tool call 0 starts without a name"):
        run([chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"arguments": "{}"}}]})])


def test_a_tool_call_without_an_id_gets_one_from_the_response_id() -> None:
    got = result(
        [
            chunk({"tool_calls": [{"index": 1, "function": {"name": "f", "arguments": "{}"}}]}),
            chunk({}, "tool_calls"),
        ]
    )
    marker = ProviderPayload(OPENAI, "synthesized-id", None, True)
    assert got.content == (ToolCallBlock(CallId("c1-1"), "f", "{}", (marker,)),)


def test_refusal_is_a_marked_text_block_and_finishes_refused() -> None:
    got = result(
        [
            chunk({"role": "assistant", "content": None, "refusal": ""}),
            chunk({"refusal": "I can't"}),
            chunk({"refusal": " help."}),
            chunk({}, "stop"),
        ]
    )
    marker = ProviderPayload(OPENAI, "refusal", None, True)
    assert got.content == (TextBlock("I can't help.", payloads=(marker,)),)
    assert got.finish == Finish("refused", raw="stop")
    wire, _ = assistant_wire(got.to_message(), OPENAI)
    assert wire == {"role": "assistant", "content": "", "refusal": "I can't help."}


def test_url_citation_ranges_are_verified_by_slicing() -> None:
    text = "See [example.com](https://example.com/a) now."
    good = {
        "type": "url_citation",
        "url_citation": {
            "url": "https://example.com/a",
            "title": "Ex",
            "start_index": 4,
            "end_index": 40,
            "content": "page text",
        },
    }
    stale = {
        "type": "url_citation",
        "url_citation": {
            "url": "https://other.org/",
            "title": "",
            "start_index": 0,
            "end_index": 3,
        },
    }
    empty = {
        "type": "url_citation",
        "url_citation": {
            "url": "https://example.com/a",
            "title": "Ex",
            "start_index": 0,
            "end_index": 0,
        },
    }
    got = result(
        [
            chunk({"content": "", "annotations": [good, stale, empty]}),
            chunk({"content": text}),
            chunk({}, "stop"),
        ]
    )
    block = got.content[0]
    assert isinstance(block, TextBlock) and block.text == text
    assert [a.range for a in block.attributions] == [(4, 40), None, None]
    assert block.attributions[0] == Attribution(
        source=Source(url="https://example.com/a", title="Ex"),
        excerpt="page text",
        range=(4, 40),
        replay=ProviderPayload(OPENAI, "annotation", None, good),
    )
    assert block.attributions[1].source == Source(url="https://other.org/")


def test_citation_range_in_utf16_units_is_converted_to_code_points() -> None:
    text = "\U0001f600 [a](https://a.io)"
    # UTF-16: the emoji is two units, so the link starts at unit 3 (code point 2).
    note = {
        "type": "url_citation",
        "url_citation": {"url": "https://a.io", "start_index": 3, "end_index": 20},
    }
    got = result([chunk({"content": text, "annotations": [note]}), chunk({}, "stop")])
    block = got.content[0]
    assert isinstance(block, TextBlock)
    assert block.attributions[0].range == (2, 19)
    assert text[2:19] == "[a](https://a.io)"


def test_perplexity_citations_and_search_results_attach_to_the_text() -> None:
    urls = ["https://a.io/1", "https://b.io/2"]
    results = [{"title": "B", "url": "https://b.io/2", "date": "2025-01-01"}]
    got = result(
        [
            chunk({"content": "Fact[1][2]."}, citations=urls, search_results=results),
            chunk({"content": ""}, "stop", citations=urls),
        ],
        "perplexity",
    )
    block = got.content[0]
    assert isinstance(block, TextBlock) and block.text == "Fact[1][2]."
    pplx = ProviderId("perplexity")
    assert block.attributions == (
        Attribution(
            Source("https://b.io/2", "B"),
            replay=ProviderPayload(pplx, "search_result", None, results[0]),
        ),
        Attribution(
            Source("https://a.io/1"),
            replay=ProviderPayload(pplx, "citation", None, {"index": 1, "url": "https://a.io/1"}),
        ),
    )


def test_openrouter_sources_relayed_twice_are_attributed_once() -> None:
    # OpenRouter relays a provider's sources both as its own url_citation
    # annotations and as the provider's top-level citations list
    # (https://openrouter.ai/docs/features/web-search, "Parsing web search
    # results"): each URL is one attribution; a citation URL no annotation
    # names is still attributed, and the list itself is kept.
    a, b, c = "https://a.io/1", "https://b.io/2", "https://c.io/3"
    notes = [
        {
            "type": "url_citation",
            "url_citation": {"url": a, "title": "A", "start_index": 4, "end_index": 9},
        },
        {"type": "url_citation", "url_citation": {"url": b, "title": "B"}},
    ]
    got = result(
        [
            chunk({"content": "See a.io/1 and more."}, citations=[a, b, c]),
            chunk({"content": "", "annotations": notes}, "stop", citations=[a, b, c]),
        ],
        "openrouter",
    )
    text = got.content[0]
    assert isinstance(text, TextBlock)
    assert [x.source.url for x in text.attributions] == [c, a, b]
    assert text.attributions[1].range == (4, 9)
    kept = [b for b in got.content if isinstance(b, UnknownBlock)]
    assert [k.raw for k in kept] == [
        {"type": "openai_chat.response_field", "field": "citations", "value": [a, b, c]}
    ]


def test_openrouter_reasoning_details_merge_and_replay_verbatim() -> None:
    def detail(**kw: Any) -> dict[str, Any]:
        return {"type": "reasoning.text", "format": "anthropic-claude-v1", "index": 0, **kw}

    frames = [
        chunk(
            {
                "role": "assistant",
                "content": "",
                "reasoning": None,
                "reasoning_details": [detail(text="", signature="")],
            }
        ),
        chunk({"reasoning": "Th", "reasoning_details": [detail(text="Th")]}),
        chunk({"reasoning": "ink", "reasoning_details": [detail(text="ink")]}),
        chunk({"reasoning": None, "reasoning_details": [detail(signature="SIG")]}),
        chunk(
            {
                "reasoning_details": [
                    {
                        "type": "reasoning.encrypted",
                        "data": "ENC",
                        "id": "r1",
                        "format": "openai-responses-v1",
                        "index": 1,
                    }
                ]
            }
        ),
        chunk({"content": "Hi"}),
        chunk({"content": ""}, "stop"),
    ]
    got = result(frames, "openrouter")
    merged = [
        detail(text="Think", signature="SIG"),
        {
            "type": "reasoning.encrypted",
            "data": "ENC",
            "id": "r1",
            "format": "openai-responses-v1",
            "index": 1,
        },
    ]
    reasoning = got.content[0]
    assert isinstance(reasoning, ReasoningBlock) and reasoning.text == "Think"
    router = ProviderId("openrouter")
    assert ProviderPayload(router, "reasoning_details", None, merged) in reasoning.payloads
    wire, dropped = assistant_wire(got.to_message(), router)
    assert wire == {"role": "assistant", "content": "Hi", "reasoning_details": merged}
    assert dropped == []


@pytest.mark.parametrize("provider", ["vercel", "litellm", "cerebras"])
def test_a_gateway_that_takes_reasoning_text_gets_its_reasoning_details_back(
    provider: str,
) -> None:
    # A gateway relaying Gemini shows the reasoning as `reasoning` text and
    # the thought signature as a reasoning.encrypted detail
    # (https://vercel.com/docs/ai-gateway/openai-compat/advanced, "Reasoning
    # details"); Google checks that signature on a function-call turn, so it
    # goes back beside the text.
    signature = {
        "type": "reasoning.encrypted",
        "data": "CiQB0e2Kb...",
        "format": "google-gemini-v1",
        "index": 0,
    }
    call = {
        "index": 0,
        "id": "c1",
        "type": "function",
        "function": {"name": "f", "arguments": "{}"},
    }
    got = result(
        [
            chunk(
                {"role": "assistant", "reasoning": "Look it up.", "reasoning_details": [signature]}
            ),
            chunk({"tool_calls": [call]}),
            chunk({}, "tool_calls"),
        ],
        provider,
    )
    wire, dropped = assistant_wire(got.to_message(), ProviderId(provider))
    assert wire["reasoning"] == "Look it up."
    assert wire["reasoning_details"] == [signature]
    assert [c["id"] for c in wire["tool_calls"]] == ["c1"]
    assert dropped == []


def test_two_encrypted_details_in_a_row_stay_two_entries() -> None:
    enc = [{"type": "reasoning.encrypted", "data": d, "index": 0} for d in ("A", "B")]
    got = result(
        [chunk({"reasoning_details": [e]}) for e in enc] + [chunk({}, "stop")], "openrouter"
    )
    block = got.content[0]
    assert isinstance(block, ReasoningBlock) and block.text == ""
    assert block.payloads[-1].value == enc


def test_details_without_a_reasoning_string_still_give_reasoning_text() -> None:
    got = result(
        [
            chunk(
                {
                    "reasoning_details": [
                        {"type": "reasoning.summary", "summary": "Plan", "index": 0}
                    ]
                }
            ),
            chunk({}, "stop"),
        ],
        "openrouter",
    )
    assert isinstance(got.content[0], ReasoningBlock) and got.content[0].text == "Plan"


def test_mistral_thinking_parts_and_replay_as_parts() -> None:
    frames = [
        chunk(
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "2+2"}]}],
            }
        ),
        chunk({"content": [{"type": "text", "text": "4"}]}),
        chunk({"content": ""}, "stop"),
    ]
    got = result(frames, "mistral")
    assert [type(p).__name__ for p in got.content] == ["ReasoningBlock", "TextBlock"]
    assert got.text == "4"
    wire, _ = assistant_wire(got.to_message(), ProviderId("mistral"))
    assert wire == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": [{"type": "text", "text": "2+2"}]},
            {"type": "text", "text": "4"},
        ],
    }


def test_unknown_delta_fields_and_parts_are_kept_and_replayed() -> None:
    part = {"type": "image_url", "image_url": {"url": "https://x/y.png"}}
    got = result(
        [
            chunk({"content": "a", "audio": {"id": "au_1"}}),
            chunk({"content": [part], "citations_text": "p"}),
            chunk({"citations_text": "q"}, "stop"),
        ]
    )
    assert got.content == (
        TextBlock("a"),
        UnknownBlock(part, 1),
        UnknownBlock({"type": "openai_chat.field", "field": "audio", "value": {"id": "au_1"}}, 2),
        UnknownBlock({"type": "openai_chat.field", "field": "citations_text", "value": "pq"}, 3),
    )
    wire, _ = assistant_wire(got.to_message(), OPENAI)
    assert wire == {
        "role": "assistant",
        "content": [{"type": "text", "text": "a"}, part],
        "audio": {"id": "au_1"},
        "citations_text": "pq",
    }


def test_unknown_top_level_fields_are_kept_but_not_replayed() -> None:
    related = ["What next?"]
    got = result(
        [
            chunk({"content": "a"}, related_questions=related, system_fingerprint="fp"),
            chunk({}, "stop", related_questions=related, timings={"n": 1}),
        ],
        "perplexity",
    )
    field = {"type": "openai_chat.response_field", "field": "related_questions", "value": related}
    assert got.content == (TextBlock("a"), UnknownBlock(field, 1))
    wire, dropped = assistant_wire(got.to_message(), ProviderId("perplexity"))
    assert wire == {"role": "assistant", "content": "a"}
    assert dropped == [
        Drop(
            "content[1]",
            "related_questions",
            UNREPLAYABLE,
            "a response field, not part of the message",
        )
    ]


def test_a_legacy_function_call_streamed_in_pieces_is_kept_whole() -> None:
    got = result(
        [
            chunk({"content": None, "function_call": {"name": "f", "arguments": ""}}),
            chunk({"function_call": {"arguments": '{"a"'}}),
            chunk({"function_call": {"arguments": ": 1}"}}, "function_call"),
        ]
    )
    call = {"name": "f", "arguments": '{"a": 1}'}
    # A tool call a caller can run (tests/test_openai_chat_choices.py), replayed as it came.
    (block,) = got.content
    assert isinstance(block, ToolCallBlock) and (block.name, block.arguments) == ("f", '{"a": 1}')
    assert got.finish == Finish("tool-calls", raw="function_call")
    wire, _ = assistant_wire(got.to_message(), OPENAI)
    assert wire == {"role": "assistant", "content": None, "function_call": call}


def test_error_null_beside_a_usage_chunk_is_not_an_error() -> None:
    got = result([chunk({"content": "a"}, "stop"), chunk(usage={"prompt_tokens": 1}, error=None)])
    assert got.usage == Usage(input=1, raw={"prompt_tokens": 1})


@pytest.mark.parametrize(
    ("wire", "reason"),
    [
        ("stop", "stop"),
        ("tool_calls", "tool-calls"),
        ("function_call", "tool-calls"),
        ("length", "max-tokens"),
        ("content_filter", "content-filter"),
        ("eos", "eos"),
    ],
)
def test_finish_reasons_map_and_unknown_ones_are_kept(wire: str, reason: str) -> None:
    assert run([chunk({"content": "a"}, wire)])[-1] == Finish(reason, raw=wire)


def test_finish_reason_error_is_a_failure() -> None:
    assert run([chunk({}, "error")])[-1] == Finish(
        "error", raw="error", failure="the provider ended the choice with an error"
    )


def test_end_of_body_finishes_only_after_a_finish_reason() -> None:
    assert run([chunk({"content": "a"})], done=False)[-1] == TextDelta("text-1", "a")
    assert run([chunk({"content": "a"}, "stop")], done=False)[-1] == Finish("stop", raw="stop")


def test_bad_frames_raise_typed_errors_without_echoing_content() -> None:
    parser = SHAPE.new_parser(OPENAI)
    with pytest.raises(MalformedStreamError) as bad:
        parser.message("", "{secret")
    # Not JSON: cut or corrupted on the way, so retryable like every shape's.
    assert "secret" not in str(bad.value) and bad.value.retryable is True
    parser = SHAPE.new_parser(OPENAI)
    parser.message("", chunk({}, "stop"))
    parser.message("", "[DONE]")
    with pytest.raises(MalformedStreamError, match="frame 3 arrived after the response finished"):
        parser.message("", chunk({"content": "late"}))
    with pytest.raises(MalformedStreamError, match="choice index 'one' is not a count"):
        run([json.dumps({"id": "x", "choices": [{"index": "one", "delta": {"content": "b"}}]})])


def test_mid_stream_error_objects_are_typed() -> None:
    groq = {
        "error": {
            "message": "Tool call validation failed",
            "type": "invalid_request_error",
            "code": "tool_use_failed",
            "failed_generation": "{}",
            "status_code": 400,
        }
    }
    parser = SHAPE.new_parser(ProviderId("groq"))
    parser.message("", chunk({"reasoning": "x"}))
    with pytest.raises(InvalidRequestError) as err:
        parser.message("error", json.dumps(groq))
    # The code is the specific type, the one the error names.
    assert (err.value.status, err.value.provider_type) == (400, "tool_use_failed")
    assert err.value.provider_message == "Tool call validation failed"
    assert json.loads(err.value.body or b"") == groq
    with pytest.raises(ServerError):
        run([json.dumps({"error": {"message": "boom", "type": "server_error"}})])
    with pytest.raises(ContextWindowError):
        run([json.dumps({"error": {"message": "maximum context length is 8192 tokens"}})])
    with pytest.raises(ProviderStreamError):
        run([json.dumps({"error": {"message": "odd"}})])
    parser = SHAPE.new_parser(OPENAI)
    with pytest.raises(ProviderStreamError, match="upstream went away"):
        parser.message("error", "upstream went away")


def test_non_streaming_body_gives_the_same_result_as_the_stream() -> None:
    body = {
        "id": "c1",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "ok",
                    "reasoning_content": "hmm",
                    "refusal": None,
                    "tool_calls": [
                        {
                            "id": "t",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4},
    }
    once = assemble(SHAPE.parse_response(json.dumps(body).encode(), ProviderId("deepseek")))
    streamed = result(
        [
            chunk({"reasoning_content": "hmm"}),
            chunk({"content": "ok"}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "t",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ]
                }
            ),
            chunk({}, "tool_calls", usage={"prompt_tokens": 3, "completion_tokens": 4}),
        ],
        "deepseek",
    )
    assert once == streamed
    with pytest.raises(RateLimitError):
        SHAPE.parse_response(b'{"error": {"message": "slow down", "code": 429}}', OPENAI)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=12))
def test_any_split_of_the_text_assembles_to_the_same_text(pieces: list[str]) -> None:
    got = result([chunk({"content": p}) for p in pieces] + [chunk({}, "stop")])
    assert got.text == "".join(pieces)
    assert len(got.content) == 1


_PIECE = st.one_of(
    st.fixed_dictionaries({"content": st.text(max_size=5)}),
    st.fixed_dictionaries({"reasoning_content": st.text(max_size=5)}),
    st.fixed_dictionaries({"reasoning": st.text(max_size=5)}),
    st.fixed_dictionaries({"refusal": st.text(max_size=5)}),
    st.fixed_dictionaries(
        {
            "content": st.lists(
                st.sampled_from(
                    [
                        {"type": "text", "text": "t"},
                        {"type": "thinking", "thinking": [{"type": "text", "text": "r"}]},
                        {"type": "image_url", "image_url": {"url": "u"}},
                    ]
                ),
                max_size=3,
            )
        }
    ),
    st.fixed_dictionaries(
        {
            "annotations": st.just(
                [
                    {
                        "type": "url_citation",
                        "url_citation": {"url": "https://a.io", "start_index": 0, "end_index": 1},
                    }
                ]
            )
        }
    ),
    st.fixed_dictionaries(
        {"reasoning_details": st.just([{"type": "reasoning.text", "text": "d", "index": 0}])}
    ),
    st.fixed_dictionaries(
        {
            "tool_calls": st.lists(
                st.fixed_dictionaries(
                    {
                        "index": st.integers(0, 2),
                        "function": st.fixed_dictionaries(
                            {"arguments": st.sampled_from(["", "{", "}", '"a"'])}
                        ),
                    }
                ),
                max_size=2,
            )
        }
    ),
    st.fixed_dictionaries({"extra": st.text(max_size=3)}),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_PIECE, max_size=12), st.sampled_from(["stop", "length", "tool_calls", "x"]))
def test_any_mix_of_deltas_obeys_the_chunk_grammar(
    pieces: list[dict[str, Any]], finish: str
) -> None:
    seen: set[int] = set()
    for piece in pieces:
        for call in piece.get("tool_calls", []):
            if call["index"] not in seen:  # a call's first delta names it
                seen.add(call["index"])
                call.update(id=f"c{call['index']}", type="function")
                call["function"]["name"] = "f"
    got = result([chunk(p) for p in pieces] + [chunk({}, finish)])
    expected_text = "".join(
        p["content"]
        if isinstance(p.get("content"), str)
        else "".join(x["text"] for x in p.get("content") or [] if x["type"] == "text")
        for p in pieces
    )
    refusals = [b for b in got.content if isinstance(b, TextBlock) and b.payloads]
    assert (
        "".join(b.text for b in got.content if isinstance(b, TextBlock) and not b.payloads)
        == expected_text
    )
    assert "".join(b.text for b in refusals) == "".join(p.get("refusal", "") for p in pieces)
    assert {b.id for b in got.content if isinstance(b, ToolCallBlock)} <= {f"c{i}" for i in seen}
