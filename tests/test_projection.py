"""Projections and overlays on hand-built logs."""

from __future__ import annotations

import pytest

from elelem import codec
from elelem.conversation import (
    ORPHAN_RESULT,
    Compaction,
    Conversation,
    Draft,
    HostedBody,
    MessageBody,
    Repair,
    ResponseRecord,
    SQLiteStore,
    StripReasoning,
    native_history,
    raw_body,
)
from elelem.errors import Patch
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
    ToolResultBlock,
    UnknownBlock,
    Usage,
)
from elelem.vocabulary.drop import FOREIGN_BLOCK, FOREIGN_PAYLOAD, FOREIGN_REASONING, Drop

ANT = ProviderId("anthropic")
SIG = ProviderPayload(ANT, "signature", None, "SIG-SECRET")
ENC = ProviderPayload(ANT, "encrypted_content", "web_search_20250305", {"blob": "ENC-SECRET"})
IDX = ProviderPayload(ANT, "citation", None, {"encrypted_index": "IDX-SECRET"})
SECRETS = ("SIG-SECRET", "ENC-SECRET", "IDX-SECRET", "UNK-SECRET")

SEARCH = HostedActivity(ActivityId("srvtoolu_1"), "web_search", "started", {"query": "tallest"})
DONE = SEARCH.transition("completed", summary="5 results", payload=ENC)
CITED = TextBlock(
    "Everest is tallest.",
    (Attribution(Source("https://e.example", "E"), "Everest 8849 m", None, IDX),),
)


@pytest.fixture
def conv() -> Conversation:
    store = SQLiteStore(":memory:")
    return Conversation.create(store)


def assistant(c: Conversation, *parts: object, response: int, provider: ProviderId = ANT) -> None:
    drafts = []
    for p in parts:
        if isinstance(p, HostedActivity):
            drafts.append(Draft("hosted", HostedBody(p, provider, "m1"), c.turn, response))
        else:
            body = MessageBody("assistant", (p,), "assistant", provider, "m1")  # type: ignore[arg-type]
            drafts.append(Draft("message", body, c.turn, response))
    c.append(*drafts)


def web_turn(c: Conversation) -> int:
    c.start_turn(model="anthropic:m1")
    c.add_user("How tall is the tallest mountain?")
    r = c.next_response()
    assistant(
        c,
        ReasoningBlock("thinking", (SIG,)),
        SEARCH,
        DONE,
        CITED,
        UnknownBlock({"type": "mystery", "data": "UNK-SECRET"}),
        ReasoningBlock("", (ProviderPayload(ANT, "redacted", None, "UNK-SECRET"),)),
        response=r,
    )
    c.append(
        Draft.of(
            ResponseRecord(ANT, "m1", "msg_1", "req_1", "stop", "end_turn", usage=Usage(10, 5)),
            turn=c.turn,
            response=r,
        )
    )
    return r


def test_native_history_keeps_blocks_and_hosted_transitions_in_stored_order(
    conv: Conversation,
) -> None:
    web_turn(conv)
    history = conv.history()
    assert [m.role for m in history] == ["user", "assistant"]
    reply = history[1]
    assert (reply.provider, reply.model, reply.source) == (ANT, "m1", "assistant")
    assert reply.content == (
        ReasoningBlock("thinking", (SIG,)),
        SEARCH,
        DONE,
        CITED,
        UnknownBlock({"type": "mystery", "data": "UNK-SECRET"}),
        ReasoningBlock("", (ProviderPayload(ANT, "redacted", None, "UNK-SECRET"),)),
    )
    assert native_history(conv.events) == history


def test_portable_history_carries_no_payload_and_reports_what_it_dropped(
    conv: Conversation,
) -> None:
    web_turn(conv)
    portable = conv.portable()
    reply = portable.messages[1]
    assert reply.provider is None and reply.model == "m1"
    # The same rule every encoder applies to another provider's message: no
    # reasoning, one transition per hosted activity, citations without replay.
    assert reply.content == (
        DONE.transition("completed", summary="5 results"),
        TextBlock(
            "Everest is tallest.",
            (Attribution(Source("https://e.example", "E"), "Everest 8849 m"),),
        ),
    )
    assert portable.origins[1] == (conv.events[4].id, conv.events[5].id)
    assert portable.dropped == (
        Drop("messages[1].content[0]", "reasoning", FOREIGN_REASONING, "from anthropic"),
        Drop(
            "messages[1].content[2]",
            "payload",
            FOREIGN_PAYLOAD,
            "anthropic encrypted_content of hosted web_search",
        ),
        Drop(
            "messages[1].content[3].attributions[0]",
            "payload",
            FOREIGN_PAYLOAD,
            "anthropic citation",
        ),
        Drop("messages[1].content[4]", "mystery", FOREIGN_BLOCK, "from anthropic"),
        Drop("messages[1].content[5]", "reasoning", FOREIGN_REASONING, "from anthropic"),
    )
    wire = codec.dumps(portable.messages)
    assert not any(s.encode() in wire for s in SECRETS)
    # The native projection still has every payload.
    native = codec.dumps(conv.history())
    assert all(s.encode() in native for s in SECRETS)


def test_context_is_a_user_role_message_tagged_with_its_source(conv: Conversation) -> None:
    conv.start_turn()
    conv.add_context("The user prefers metric units.", "preferences")
    (m,) = conv.history()
    assert (m.role, m.source, m.text) == (
        "user",
        "context:preferences",
        "The user prefers metric units.",
    )


def test_overlays_change_the_projection_and_never_the_stored_events(conv: Conversation) -> None:
    web_turn(conv)
    conv.start_turn()
    conv.add_user("And the second tallest?")
    before = conv.store.load_bytes(conv.id)

    conv.add_overlay(StripReasoning(first_turn=1, last_turn=1))
    reply = conv.history()[1]
    assert not any(isinstance(p, ReasoningBlock) for p in reply.content)
    assert len(reply.content) == 4

    conv.add_overlay(Compaction(1, 1, "The user asked about Everest; it is 8849 m."))
    assert [(m.role, m.source, m.text) for m in conv.history()] == [
        ("user", "context:compaction", "The user asked about Everest; it is 8849 m."),
        ("user", "user", "And the second tallest?"),
    ]
    after = conv.store.load_bytes(conv.id)
    assert after[: len(before)] == before
    assert [k.kind for k in conv.events[len(before) :]] == ["strip-reasoning", "compaction"]
    # A fresh load projects the same way: overlays are stored, events are not edited.
    reloaded = Conversation.open(conv.store, conv.id)
    assert reloaded.history() == conv.history()


def test_a_recoverable_patch_strips_one_signature_through_an_overlay(conv: Conversation) -> None:
    web_turn(conv)
    projection = conv.project()
    reasoning_event = projection.locate(1, 0)
    assert reasoning_event == conv.events[2].id
    overlay = conv.apply_patch(
        Patch("strip-signature", {"message": 1, "block": 0}, "invalid signature"), projection
    )
    assert overlay.kind == "strip-signature"
    assert overlay.body.event == reasoning_event and overlay.body.block == 0
    reply = conv.history()[1]
    assert reply.content[0] == ReasoningBlock("thinking", ())
    assert reply.content[2] == DONE  # other payloads are untouched
    with pytest.raises(ValueError, match="no overlay applies patch action 'rewrite'"):
        conv.apply_patch(Patch("rewrite", {}))
    with pytest.raises(ValueError, match="message 9 block 0 is not a stored block"):
        conv.apply_patch(Patch("strip-signature", {"message": 9, "block": 0}))


def test_a_repair_overlay_replaces_or_hides_one_event(conv: Conversation) -> None:
    conv.start_turn()
    bad = conv.add_user("typo heer")
    gone = conv.add_user("remove me")
    conv.add_overlay(Repair(bad.id, (TextBlock("typo here"),), "spelling"))
    conv.add_overlay(Repair(gone.id, (), "noise"))
    assert [m.text for m in conv.history()] == ["typo here"]
    assert conv.events[1].body.content == (TextBlock("typo heer"),)


def test_unanswered_tool_calls_get_a_synthetic_error_result_only_when_the_conversation_moves_on(
    conv: Conversation,
) -> None:
    conv.start_turn()
    conv.add_user("use tools")
    r = conv.next_response()
    call_a = ToolCallBlock(CallId("call_a"), "lookup", '{"q": 1}')
    call_b = ToolCallBlock(CallId("call_b"), "lookup", '{"q": 2}')
    assistant(conv, call_a, call_b, SEARCH, response=r)
    # Pending: the caller is about to answer; nothing is made up yet.
    assert conv.history()[-1].role == "assistant"
    assert conv.diagnostics().orphan_calls[0].answered_synthetically is False

    conv.add_tool_results([ToolResultBlock(CallId("call_a"), "42", name="lookup")])
    conv.add_user("never mind")
    history = conv.history()
    assert [m.role for m in history] == ["user", "assistant", "user", "user"]
    assert history[2].content == (
        ToolResultBlock(CallId("call_a"), "42", name="lookup"),
        ToolResultBlock(CallId("call_b"), ORPHAN_RESULT, is_error=True, name="lookup"),
    )
    assert conv.project().origins[2] == (conv.events[-2].id, None)
    diagnostics = conv.diagnostics()
    assert [(o.call_id, o.answered_synthetically) for o in diagnostics.orphan_calls] == [
        ("call_b", True)
    ]
    # The hosted search never finished: reported, never answered with a result.
    assert diagnostics.unfinished == (SEARCH,)


def test_orphan_calls_followed_by_a_user_message_get_their_own_result_message(
    conv: Conversation,
) -> None:
    conv.start_turn()
    assistant(conv, ToolCallBlock(CallId("c1"), "f", "{}"), response=conv.next_response())
    conv.add_user("next question")
    history = conv.history()
    assert [(m.role, m.source) for m in history] == [
        ("assistant", "assistant"),
        ("user", "tool"),
        ("user", "user"),
    ]
    assert history[1].content == (ToolResultBlock(CallId("c1"), ORPHAN_RESULT, True, "f"),)


def test_unknown_event_kinds_stay_in_place_and_are_reported(conv: Conversation) -> None:
    conv.start_turn()
    conv.add_user("a")
    (odd,) = conv.append(Draft("annotation", raw_body({"note": "x"}), conv.turn))
    conv.add_user("b")
    assert [e.kind for e in conv.events] == ["turn-start", "message", "annotation", "message"]
    assert not odd.known and bytes(odd.body) == b'{"note":"x"}'
    assert conv.diagnostics().unknown == (odd.id,)
    assert [m.text for m in conv.history()] == ["a", "b"]


def test_turn_views_sum_usage_and_say_how_each_turn_ended(conv: Conversation) -> None:
    web_turn(conv)
    conv.start_turn(trigger="user", model="anthropic:m1")
    r1 = conv.next_response()
    assistant(conv, TextBlock("part one"), response=r1)
    conv.append(
        Draft.of(
            ResponseRecord(
                ANT, "m1", "msg_2", finish="paused", usage=Usage(3, 4, hosted={"web_search": 2})
            ),
            turn=conv.turn,
            response=r1,
        )
    )
    r2 = conv.next_response()
    assistant(conv, TextBlock("part tw", complete=False), response=r2)
    conv.append(
        Draft.of(
            ResponseRecord(
                ANT,
                "m1",
                None,
                finish="aborted",
                complete=False,
                continuation=1,
                usage=Usage(1, 1, hosted={"web_search": 1}),
            ),
            turn=conv.turn,
            response=r2,
        )
    )
    views = conv.turns()
    assert [(v.turn, v.trigger, v.model, v.end) for v in views] == [
        (1, "user", "anthropic:m1", "completed"),
        (2, "user", "anthropic:m1", "interrupted"),
    ]
    assert views[1].usage == Usage(4, 5, hosted={"web_search": 3})
    assert [r.response_id for r in views[1].responses] == ["msg_2", None]
    # Each response is its own assistant message, in order.
    assert [m.text for m in conv.history()[-2:]] == ["part one", "part tw"]
    assert conv.diagnostics().incomplete == (conv.events[-2].id,)


def test_a_message_added_whole_is_split_into_block_events_and_regrouped(
    conv: Conversation,
) -> None:
    conv.start_turn()
    m = Message("assistant", (TextBlock("a"), SEARCH, TextBlock("b")), "assistant", ANT, "m1")
    events = conv.add_message(m)
    assert [e.kind for e in events] == ["message", "hosted", "message"]
    assert len({e.response for e in events}) == 1
    assert conv.history() == (m,)
