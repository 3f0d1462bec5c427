"""The one Assembler: every rule of the chunk protocol (docs/architecture.md §3), with exact values."""

from __future__ import annotations

import msgspec
import pytest

from elelem.errors import ProtocolViolation
from elelem.stream import (
    AssembledResponse,
    Assembler,
    BlockEnd,
    BlockStart,
    Chunk,
    Citation,
    Finish,
    Hosted,
    Payload,
    ReasoningDelta,
    ResponseStart,
    TextDelta,
    ToolCallDelta,
    UsageUpdate,
    assemble,
)
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    CallId,
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    Source,
    TextBlock,
    ToolCallBlock,
    UnknownBlock,
    Usage,
    register_block_type,
)
from elelem.vocabulary.drop import CUT_OFF, TRUNCATED, Drop

ANTHROPIC = ProviderId("anthropic")
START = ResponseStart("msg_1", "claude-x", ANTHROPIC)


def sig(value: str) -> ProviderPayload:
    return ProviderPayload(ANTHROPIC, "signature", None, value)


def cite(url: str, span: tuple[int, int] | None = None) -> Attribution:
    return Attribution(Source(url, url.upper()), f"excerpt of {url}", span)


SEARCH = HostedActivity(ActivityId("srvtoolu_1"), "web_search", "started", {"query": "q"})
SEARCHED = SEARCH.transition("completed", summary="2 results")


def feed_each(chunks: list[Chunk]) -> tuple[Assembler, list[tuple[object, ...]]]:
    assembler = Assembler()
    return assembler, [assembler.feed(c) for c in chunks]


# -- commits ---------------------------------------------------------------------------


def test_blocks_commit_at_block_end_in_stream_order() -> None:
    chunks: list[Chunk] = [
        START,
        BlockStart(0, "reasoning"),
        ReasoningDelta(0, "Let me "),
        ReasoningDelta(0, "think."),
        Payload(0, sig("sig-A")),
        BlockEnd(0),
        Hosted(SEARCH),
        BlockStart(1, "text"),
        TextDelta(1, "Paris"),
        Hosted(SEARCHED),
        TextDelta(1, " is big."),
        Citation(1, cite("https://a.example", (0, 5))),
        BlockEnd(1),
        BlockStart("call", "tool-call", id="toolu_1", name="get_weather"),
        ToolCallDelta("call", '{"city":'),
        ToolCallDelta("call", ' "Paris"}'),
        BlockEnd("call"),
        UsageUpdate(Usage(1, 2)),
        UsageUpdate(Usage(10, 20, reasoning=5)),
        Finish("tool-calls", "tool_use"),
    ]
    assembler, committed = feed_each(chunks)
    reasoning = ReasoningBlock("Let me think.", (sig("sig-A"),))
    text = TextBlock("Paris is big.", (cite("https://a.example", (0, 5)),))
    call = ToolCallBlock(CallId("toolu_1"), "get_weather", '{"city": "Paris"}')
    assert committed == [
        (), (), (), (), (),
        (reasoning,),
        (SEARCH,),
        (), (),
        (SEARCHED,),
        (), (),
        (text,),
        (), (), (),
        (call,),
        (), (), (),
    ]  # fmt: skip
    result = assembler.result()
    assert result == AssembledResponse(
        provider=ANTHROPIC,
        response_id="msg_1",
        model="claude-x",
        content=(reasoning, SEARCH, SEARCHED, text, call),
        usage=Usage(10, 20, reasoning=5),
        finish=Finish("tool-calls", "tool_use"),
        complete=True,
        dropped=(),
    )
    assert assembler.finished is True
    assert result.blocks == (reasoning, text, call)
    assert result.activities == (SEARCH, SEARCHED)
    assert result.text == "Paris is big."
    assert result.finish_reason == "tool-calls"
    assert result.to_message() == Message(
        "assistant", (reasoning, SEARCH, SEARCHED, text, call), "assistant", ANTHROPIC, "claude-x"
    )
    assert assemble(chunks) == result


def test_interleaved_blocks_commit_in_block_end_order() -> None:
    result = assemble(
        [
            BlockStart(0, "text"),
            BlockStart(1, "text"),
            TextDelta(1, "second"),
            TextDelta(0, "first"),
            BlockEnd(1),
            BlockEnd(0),
            Finish("stop"),
        ]
    )
    assert result.content == (TextBlock("second"), TextBlock("first"))


def test_index_is_a_grouping_key_that_may_be_reused_and_leaves_nothing_stale() -> None:
    result = assemble(
        [
            BlockStart(0, "reasoning"),
            ReasoningDelta(0, "r"),
            Payload(0, sig("s")),
            BlockEnd(0),
            BlockStart(0, "text"),
            TextDelta(0, "t"),
            BlockEnd(0),
            Finish("stop"),
        ]
    )
    assert result.content == (ReasoningBlock("r", (sig("s"),)), TextBlock("t"))


def test_provider_id_comes_from_the_constructor_when_the_stream_names_none() -> None:
    result = assemble([ResponseStart("r1"), Finish("stop")], ProviderId("openai"))
    assert (result.provider, result.response_id, result.model) == ("openai", "r1", None)
    assert result.content == ()
    assert result.usage is None


# -- flush with nothing buffered keeps metadata --------------------------------------------


def test_signature_only_reasoning_block_is_kept() -> None:
    result = assemble(
        [
            START,
            BlockStart(0, "reasoning"),
            Payload(0, sig("only-sig")),
            BlockEnd(0),
            Finish("stop"),
        ]
    )
    assert result.content == (ReasoningBlock("", (sig("only-sig"),)),)


def test_empty_blocks_still_commit_with_their_metadata() -> None:
    item = ProviderPayload(ProviderId("openai"), "item-id", None, "msg_9")
    result = assemble(
        [
            BlockStart(0, "text"),
            Payload(0, item),
            BlockEnd(0),
            BlockStart(1, "text"),
            Citation(1, cite("u")),
            BlockEnd(1),
            BlockStart(2, "tool-call", id="call_1", name="noargs"),
            BlockEnd(2),
            Finish("tool-calls"),
        ]
    )
    assert result.content == (
        TextBlock("", (), (item,)),
        TextBlock("", (cite("u"),)),
        ToolCallBlock(CallId("call_1"), "noargs", ""),
    )
    assert result.content[2].input == {}  # type: ignore[union-attr]


# -- payloads ------------------------------------------------------------------------------


def test_signature_payload_replaces_the_earlier_one() -> None:
    other = ProviderPayload(ANTHROPIC, "redacted", None, "r")
    openai_sig = ProviderPayload(ProviderId("openai"), "signature", None, "o")
    result = assemble(
        [
            BlockStart(0, "reasoning"),
            Payload(0, sig("first")),
            Payload(0, other),
            ReasoningDelta(0, "x"),
            Payload(0, openai_sig),
            Payload(0, sig("second")),
            Payload(0, sig("third")),
            BlockEnd(0),
            Finish("stop"),
        ]
    )
    # The replaced payload keeps its place; other formats and providers stay.
    assert result.content == (ReasoningBlock("x", (sig("third"), other, openai_sig)),)


def test_payloads_on_tool_calls_are_kept() -> None:
    item = ProviderPayload(ProviderId("openai"), "item-id", None, "fc_1")
    result = assemble(
        [
            BlockStart(0, "tool-call", id="call_1", name="f"),
            Payload(0, item),
            ToolCallDelta(0, "{}"),
            BlockEnd(0),
            Finish("tool-calls"),
        ]
    )
    assert result.content == (ToolCallBlock(CallId("call_1"), "f", "{}", (item,)),)


# -- provider (unknown and plugin) blocks ------------------------------------------------------


def test_provider_block_commits_as_unknown_with_its_raw_json_and_position() -> None:
    raw = {"type": "mcp_tool_use", "id": "mcptoolu_1", "input": {"a": [1, 2**70]}}
    assembler, committed = feed_each(
        [
            START,
            BlockStart(0, "text"),
            TextDelta(0, "a"),
            BlockEnd(0),
            Hosted(SEARCH),
            BlockStart(1, "unknown", raw=raw),
            BlockEnd(1),
            Finish("stop"),
        ]
    )
    unknown = committed[6][0]
    assert unknown == UnknownBlock(raw)
    assert isinstance(unknown, UnknownBlock)
    assert unknown.raw is raw
    assert unknown.position == 2
    assert assembler.result().content == (TextBlock("a"), SEARCH, UnknownBlock(raw))


class Chart(msgspec.Struct, frozen=True, tag_field="type", tag="test-chart"):
    spec: str


def test_provider_block_with_a_registered_tag_builds_the_plugin_type() -> None:
    register_block_type("test-chart", Chart)
    result = assemble(
        [
            BlockStart(0, "test-chart", raw={"type": "test-chart", "spec": "bar"}),
            BlockEnd(0),
            Finish("stop"),
        ]
    )
    assert result.content == (Chart("bar"),)


# -- citations -------------------------------------------------------------------------------


def test_citations_accumulate_in_arrival_order() -> None:
    result = assemble(
        [
            BlockStart(0, "text"),
            Citation(0, cite("b")),
            TextDelta(0, "héllo wörld"),
            Citation(0, cite("a", (6, 11))),
            Citation(0, cite("c", (0, 11))),
            BlockEnd(0),
            Finish("stop"),
        ]
    )
    assert result.content == (
        TextBlock("héllo wörld", (cite("b"), cite("a", (6, 11)), cite("c", (0, 11)))),
    )


# -- partial() -----------------------------------------------------------------------------------


def test_partial_commits_open_text_and_reasoning_as_incomplete_blocks() -> None:
    assembler = Assembler()
    assembler.feed_all(
        [
            START,
            BlockStart(0, "text"),
            TextDelta(0, "done"),
            BlockEnd(0),
            BlockStart(1, "reasoning"),
            ReasoningDelta(1, "half a tho"),
            Payload(1, sig("will-be-dropped")),
            BlockStart(2, "text"),
            TextDelta(2, "cut o"),
            Payload(2, ProviderPayload(ProviderId("openai"), "item-id", None, "msg_1")),
            Citation(2, cite("kept", (0, 3))),
            Citation(2, cite("beyond", (2, 9))),
            Citation(2, cite("whole")),
        ]
    )
    partial = assembler.partial()
    assert partial == AssembledResponse(
        provider=ANTHROPIC,
        response_id="msg_1",
        model="claude-x",
        content=(
            TextBlock("done"),
            ReasoningBlock("half a tho", (), complete=False),
            TextBlock(
                "cut o",
                (
                    Attribution(Source("kept", "KEPT"), "excerpt of kept", (0, 3), complete=False),
                    # Its range reached past the text received: kept, without a stale range.
                    Attribution(
                        Source("beyond", "BEYOND"), "excerpt of beyond", None, complete=False
                    ),
                    Attribution(Source("whole", "WHOLE"), "excerpt of whole", None, complete=False),
                ),
                (),
                complete=False,
            ),
        ),
        usage=None,
        finish=None,
        complete=False,
        dropped=(
            Drop("response.block[1]", "payload", CUT_OFF, "1 of a partial reasoning block"),
            Drop("response.block[2]", "payload", CUT_OFF, "1 of a partial text block"),
        ),
    )
    assert partial.finish_reason is None


def test_partial_does_not_change_the_assembler() -> None:
    assembler = Assembler()
    assembler.feed_all([BlockStart(0, "text"), TextDelta(0, "ab")])
    first = assembler.partial()
    assert first.content == (TextBlock("ab", complete=False),)
    assembler.feed_all([TextDelta(0, "cd"), BlockEnd(0), Finish("stop")])
    assert assembler.result().content == (TextBlock("abcd"),)
    assert assembler.partial() == assembler.result()
    assert assembler.partial().complete is True


def test_partial_keeps_a_text_block_that_has_only_citations() -> None:
    assembler = Assembler()
    assembler.feed_all([BlockStart(0, "text"), Citation(0, cite("u"))])
    assert assembler.partial().content == (
        TextBlock(
            "",
            (Attribution(Source("u", "U"), "excerpt of u", None, complete=False),),
            complete=False,
        ),
    )


def test_partial_skips_open_blocks_with_nothing_to_keep() -> None:
    assembler = Assembler()
    assembler.feed_all([BlockStart(0, "text"), BlockStart(1, "reasoning"), Payload(1, sig("s"))])
    partial = assembler.partial()
    assert partial.content == ()
    assert partial.dropped == (
        Drop("response.block[1]", "payload", CUT_OFF, "1 of a partial reasoning block"),
    )


def test_partial_drops_half_built_tool_calls_and_open_provider_blocks() -> None:
    assembler = Assembler()
    assembler.feed_all(
        [
            BlockStart(0, "tool-call", id="toolu_1", name="f"),
            ToolCallDelta(0, '{"a": 1}'),
            BlockStart(1, "unknown", raw={"type": "server_tool_use"}),
            BlockStart(2, "text"),
            TextDelta(2, "t"),
        ]
    )
    partial = assembler.partial()
    assert partial.content == (TextBlock("t", complete=False),)
    assert partial.dropped == (
        Drop("response.block[0]", "tool-call", CUT_OFF, "half-built"),
        Drop("response.block[1]", "unknown", CUT_OFF, "half-built"),
    )


def test_partial_drops_a_closed_tool_call_whose_arguments_were_cut_off() -> None:
    assembler = Assembler()
    committed = assembler.feed_all(
        [
            BlockStart(0, "tool-call", id="toolu_1", name="ok"),
            ToolCallDelta(0, '{"a": 1}'),
            BlockEnd(0),
            BlockStart(1, "tool-call", id="toolu_2", name="cut"),
            ToolCallDelta(1, '{"a": '),
            BlockEnd(1),
        ]
    )
    assert committed == [ToolCallBlock(CallId("toolu_1"), "ok", '{"a": 1}')]
    partial = assembler.partial()
    assert partial.content == (ToolCallBlock(CallId("toolu_1"), "ok", '{"a": 1}'),)
    assert partial.dropped == (
        Drop("response.tool_call[toolu_2]", "tool-call", CUT_OFF, "cut: arguments cut off"),
    )


# -- max-tokens ------------------------------------------------------------------------------------


def test_max_tokens_drops_tool_calls_with_truncated_arguments_and_keeps_complete_ones() -> None:
    assembler, committed = feed_each(
        [
            BlockStart(0, "tool-call", id="toolu_1", name="complete"),
            ToolCallDelta(0, '{"a": [1, 2]}'),
            BlockEnd(0),
            BlockStart(1, "tool-call", id="toolu_2", name="truncated"),
            ToolCallDelta(1, '{"a": [1, '),
            BlockEnd(1),
            Finish("max-tokens", "max_tokens"),
        ]
    )
    complete = ToolCallBlock(CallId("toolu_1"), "complete", '{"a": [1, 2]}')
    assert committed == [(), (), (complete,), (), (), (), ()]
    result = assembler.result()
    assert result.content == (complete,)
    assert result.dropped == (
        Drop(
            "response.tool_call[toolu_2]",
            "tool-call",
            TRUNCATED,
            "truncated: arguments truncated by max-tokens",
        ),
    )
    assert result.complete is True


def test_unparseable_arguments_are_kept_when_the_finish_is_not_max_tokens() -> None:
    bad = ToolCallBlock(CallId("toolu_2"), "f", '{"a": 1')
    assembler, committed = feed_each(
        [
            BlockStart(1, "tool-call", id="toolu_2", name="f"),
            ToolCallDelta(1, '{"a": 1'),
            BlockEnd(1),
            Finish("tool-calls"),
        ]
    )
    # Held back at its block-end, committed by the finish: still in stream order.
    assert committed == [(), (), (), (bad,)]
    assert assembler.result().content == (bad,)
    assert assembler.result().dropped == ()


def test_unparseable_arguments_followed_by_more_content_were_not_truncated() -> None:
    bad = ToolCallBlock(CallId("toolu_2"), "f", "{oops")
    assembler, committed = feed_each(
        [
            BlockStart(1, "tool-call", id="toolu_2", name="f"),
            ToolCallDelta(1, "{oops"),
            BlockEnd(1),
            BlockStart(2, "text"),
            BlockEnd(2),
            Finish("max-tokens"),
        ]
    )
    assert committed == [(), (), (), (), (bad, TextBlock("")), ()]
    assert assembler.result().content == (bad, TextBlock(""))


def test_a_later_incomplete_call_flushes_the_earlier_one() -> None:
    first = ToolCallBlock(CallId("a"), "f", "{")
    assembler, committed = feed_each(
        [
            BlockStart(0, "tool-call", id="a", name="f"),
            ToolCallDelta(0, "{"),
            BlockEnd(0),
            BlockStart(1, "tool-call", id="b", name="f"),
            ToolCallDelta(1, "["),
            BlockEnd(1),
            Hosted(SEARCH),
            Finish("stop"),
        ]
    )
    second = ToolCallBlock(CallId("b"), "f", "[")
    assert committed == [(), (), (), (), (), (first,), (second, SEARCH), ()]
    assert assembler.result().content == (first, second, SEARCH)


# -- the invariant checker -----------------------------------------------------------------------


def violation(chunks: list[Chunk]) -> ProtocolViolation:
    assembler = Assembler()
    with pytest.raises(ProtocolViolation) as info:
        assembler.feed_all(chunks)
    return info.value


@pytest.mark.parametrize(
    ("chunks", "position", "rule", "detail"),
    [
        (
            [BlockStart(0, "text"), BlockEnd(0), TextDelta(0, "x")],
            2,
            "delta-to-closed-block",
            "TextDelta for closed block 0",
        ),
        (
            [TextDelta(3, "x")],
            0,
            "delta-to-missing-block",
            "TextDelta for block 3 that never opened",
        ),
        (
            [START, ReasoningDelta("r", "x")],
            1,
            "delta-to-missing-block",
            "ReasoningDelta for block 'r' that never opened",
        ),
        (
            [ToolCallDelta(0, "{")],
            0,
            "delta-to-missing-block",
            "ToolCallDelta for block 0 that never opened",
        ),
        ([BlockEnd(0)], 0, "delta-to-missing-block", "block-end for block 0 that never opened"),
        (
            [BlockStart(0, "text"), BlockEnd(0), BlockEnd(0)],
            2,
            "delta-to-closed-block",
            "block-end for closed block 0",
        ),
        (
            [BlockStart(0, "text"), BlockEnd(0), Citation(0, cite("u"))],
            2,
            "delta-to-closed-block",
            "citation for closed block 0",
        ),
        (
            [Payload(5, sig("s"))],
            0,
            "delta-to-missing-block",
            "payload for block 5 that never opened",
        ),
        ([Finish("stop"), Finish("stop")], 1, "after-finish", "Finish after finish"),
        ([Finish("stop"), BlockStart(0, "text")], 1, "after-finish", "BlockStart after finish"),
        ([Finish("stop"), UsageUpdate(Usage())], 1, "after-finish", "UsageUpdate after finish"),
        ([Finish("stop"), Hosted(SEARCH)], 1, "after-finish", "Hosted after finish"),
        (
            [BlockStart(0, "text"), ReasoningDelta(0, "x")],
            1,
            "delta-kind-mismatch",
            "reasoning delta for text block 0",
        ),
        (
            [BlockStart(0, "reasoning"), TextDelta(0, "x")],
            1,
            "delta-kind-mismatch",
            "text delta for reasoning block 0",
        ),
        (
            [BlockStart(0, "text"), ToolCallDelta(0, "{")],
            1,
            "delta-kind-mismatch",
            "tool-call delta for text block 0",
        ),
        (
            [BlockStart(0, "unknown", raw={"type": "x"}), TextDelta(0, "x")],
            1,
            "delta-kind-mismatch",
            "text delta for unknown block 0",
        ),
        (
            [BlockStart(0, "text"), Finish("stop")],
            1,
            "finish-with-open-blocks",
            "finish while blocks 0 are open",
        ),
        (
            [BlockStart(0, "reasoning"), Citation(0, cite("u"))],
            1,
            "citation-on-non-text",
            "citation for reasoning block 0",
        ),
        (
            [BlockStart(0, "tool-call", id="c", name="f"), Citation(0, cite("u"))],
            1,
            "citation-on-non-text",
            "citation for tool-call block 0",
        ),
        (
            [
                BlockStart(0, "text"),
                TextDelta(0, "abc"),
                Citation(0, cite("u", (1, 4))),
                BlockEnd(0),
            ],
            3,
            "citation-range-outside-text",
            "citation 0 of block 0 spans (1, 4) of a 3-code-point text",
        ),
        (
            [BlockStart(0, "text"), BlockStart(0, "text")],
            1,
            "block-reopened",
            "block 0 started while open",
        ),
        (
            [BlockStart(0, "tool-call", name="f")],
            0,
            "tool-call-identity",
            "tool-call block 0 needs id and name",
        ),
        (
            [BlockStart(0, "tool-call", id="c", name="")],
            0,
            "tool-call-identity",
            "tool-call block 0 needs id and name",
        ),
        (
            [BlockStart(0, "server_tool_use")],
            0,
            "unknown-without-raw",
            "block 0 of kind 'server_tool_use' has no raw JSON",
        ),
        (
            [BlockStart(0, "unknown", raw={"no": "type"})],
            0,
            "bad-raw-block",
            "block 0: an unknown block needs a string 'type' (at $.type)",
        ),
        (
            [BlockStart(0, "unknown", raw={"type": "text", "text": "x"})],
            0,
            "bad-raw-block",
            "block 0: block tag 'text' is registered; it cannot be kept as an unknown block (at $.type)",
        ),
        (
            [BlockStart(0, "unknown", raw={"type": "x", "v": float("nan")})],
            0,
            "bad-raw-block",
            "block 0: unknown block holds a non-JSON value (at $.v)",
        ),
        (
            [BlockStart(0, "unknown", raw={"type": "x"}), Payload(0, sig("s"))],
            1,
            "payload-on-provider-block",
            "payload for unknown block 0, which keeps only its raw JSON",
        ),
        (
            [BlockStart(0, "text"), BlockEnd(0), START],
            2,
            "response-start-not-first",
            "response-start must be the first chunk",
        ),
        ([START, START], 1, "response-start-not-first", "response-start must be the first chunk"),
        (
            [Hosted(SEARCHED), Hosted(SEARCH)],
            1,
            "hosted-after-terminal",
            "activity 'srvtoolu_1' changed state after its terminal transition",
        ),
        ([Finish("")], 0, "finish-reason", "finish needs a non-empty reason"),
        ([START, "text-delta"], 1, "unknown-chunk", "str is not a chunk"),
    ],
)
def test_protocol_violations_name_position_and_rule(
    chunks: list[Chunk], position: int, rule: str, detail: str
) -> None:
    error = violation(chunks)
    assert (error.position, error.rule, error.detail) == (position, rule, detail)
    assert str(error) == f"chunk {position}: {rule}: {detail}"


def test_a_broken_stream_stays_broken() -> None:
    assembler = Assembler()
    with pytest.raises(ProtocolViolation):
        assembler.feed_all([BlockStart(0, "text"), TextDelta(0, "ok"), TextDelta(9, "x")])
    with pytest.raises(ProtocolViolation) as info:
        assembler.feed(BlockEnd(0))
    assert (info.value.position, info.value.rule, info.value.detail) == (
        3,
        "after-violation",
        "BlockEnd after chunk 2 broke delta-to-missing-block",
    )
    # What was received before the breach is still there to keep.
    assert assembler.partial().content == (TextBlock("ok", complete=False),)


def test_result_before_finish_is_a_violation() -> None:
    assembler = Assembler()
    assembler.feed(START)
    with pytest.raises(ProtocolViolation) as info:
        assembler.result()
    assert (info.value.position, info.value.rule) == (1, "no-finish")


def test_unknown_finish_reasons_and_hosted_names_are_kept() -> None:
    odd = HostedActivity(ActivityId("x1"), "file_search", "completed")
    result = assemble([Hosted(odd), Finish("some-new-reason", "weird_stop")])
    assert result.finish == Finish("some-new-reason", "weird_stop")
    assert result.content == (odd,)


def test_a_finish_with_payloads_is_kept() -> None:
    envelope = ProviderPayload(ANTHROPIC, "message", None, {"stop_details": None})
    result = assemble([START, Finish("stop", "end_turn", None, (envelope,))])
    assert result.finish is not None
    assert result.finish.payloads == (envelope,)


# -- feed_deltas: a read's deltas in one call -------------------------------------------


def _by_runs(chunks: list[Chunk]) -> tuple[Assembler, ProtocolViolation | None]:
    """``chunks`` fed as the draining driver feeds a read: each run of deltas
    in one feed_deltas call, every other chunk (and a refused delta) by feed."""
    assembler, index = Assembler(), 0
    try:
        while index < len(chunks):
            index = assembler.feed_deltas(chunks, index)
            if index < len(chunks):
                assembler.feed(chunks[index])
                index += 1
    except ProtocolViolation as exc:
        return assembler, exc
    return assembler, None


def _one_by_one(chunks: list[Chunk]) -> tuple[Assembler, ProtocolViolation | None]:
    assembler = Assembler()
    try:
        for chunk in chunks:
            assembler.feed(chunk)
    except ProtocolViolation as exc:
        return assembler, exc
    return assembler, None


STREAM: list[Chunk] = [
    START,
    BlockStart(0, "reasoning"),
    ReasoningDelta(0, "think "),
    ReasoningDelta(0, "more"),
    BlockEnd(0),
    BlockStart(1, "text"),
    TextDelta(1, "Hel"),
    TextDelta(1, "lo"),
    BlockStart(2, "text"),
    TextDelta(2, "two"),
    TextDelta(1, "!"),
    BlockEnd(1),
    BlockEnd(2),
    Finish("stop"),
]


@pytest.mark.parametrize(
    "chunks",
    [
        STREAM,
        # a text delta for a reasoning block, a delta for a closed block, a delta after finish
        [*STREAM[:3], TextDelta(0, "x"), *STREAM[3:]],
        [*STREAM[:12], TextDelta(1, "late"), *STREAM[12:]],
        [*STREAM, TextDelta(1, "after")],
        [START, TextDelta(9, "no block")],
    ],
    ids=["whole", "wrong-kind", "closed-block", "after-finish", "no-block"],
)
def test_feed_deltas_is_feed_chunk_by_chunk(chunks: list[Chunk]) -> None:
    runs, run_error = _by_runs(chunks)
    each, each_error = _one_by_one(chunks)
    assert (run_error is None) is (each_error is None)
    if each_error is None:
        assert runs.result() == each.result()
        assert runs.result().text == "Hello!two"
    else:
        assert run_error is not None
        assert (run_error.position, run_error.rule) == (each_error.position, each_error.rule)
        assert runs.partial() == each.partial()


def test_feed_deltas_stops_at_the_first_chunk_of_another_kind() -> None:
    assembler = Assembler()
    for chunk in STREAM[:6]:
        assembler.feed(chunk)
    chunks = [TextDelta(1, "a"), TextDelta(1, "b"), BlockEnd(1), TextDelta(1, "c")]
    assert assembler.feed_deltas(chunks) == 2
    assert assembler.feed_deltas(chunks, 2) == 2  # a BlockEnd is feed's
    assert [p.text for p in assembler.feed(chunks[2])] == ["ab"]
    assert assembler.feed_deltas(chunks, 3) == 3  # its block is closed: feed refuses it


# -- memory ------------------------------------------------------------------------------


@pytest.mark.parametrize("by_run", [False, True], ids=["feed", "feed_deltas"])
def test_an_open_block_holds_about_its_text_not_a_string_per_delta(by_run: bool) -> None:
    import tracemalloc

    n = 50_000

    def delta(i: int) -> TextDelta:
        # A new two-character string, as a parser makes one for each delta.
        return TextDelta(0, f"{i % 10}{i % 7}")

    assembler = Assembler()
    assembler.feed(START)
    assembler.feed(BlockStart(0, "text"))
    tracemalloc.start()
    try:
        if by_run:
            for at in range(0, n, 500):
                run: list[Chunk] = [delta(i) for i in range(at, at + 500)]
                assert assembler.feed_deltas(run) == 500
        else:
            for i in range(n):
                assembler.feed(delta(i))
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # 100 kB of text.  Held as one string per delta, the parts took
    # 50,000 x (51 + 8) bytes = 2.95 MB.
    assert held < 300_000, held
    (part,) = assembler.feed(BlockEnd(0))
    assert isinstance(part, TextBlock)
    assert part.text == "".join(f"{i % 10}{i % 7}" for i in range(n))
