"""What the page's own chat stream adds from the log (elelem.web.dated):
each call's recorded times after its result (none of its own for results
stored together), the stored times and events of hosted transitions, and
the usage line of a step that only called tools, once its last call's
part was sent, exactly as the stored page folds it, and the answer's line
(a stopped one's too) as soon as it is stored."""

from __future__ import annotations

from elelem.conversation import Event, HostedBody, MessageBody, ResponseRecord
from elelem.vocabulary import EventId, HostedActivity, ToolCallBlock, ToolResultBlock, Usage
from elelem.web.dated import LogDates


def event(seq: int, body: object) -> Event:
    kind = {MessageBody: "message", HostedBody: "hosted", ResponseRecord: "response"}
    at = f"2026-01-01T00:00:{seq:02d}.250000Z"
    return Event(EventId(f"ev_{seq}"), seq, at, 1, 1, kind[type(body)], body)  # type: ignore[arg-type]


def calls(*ids: str) -> MessageBody:
    return MessageBody("assistant", tuple(ToolCallBlock(i, "f", "{}") for i in ids), "assistant")


def results(*ids: str) -> MessageBody:
    return MessageBody("user", tuple(ToolResultBlock(i, "ok") for i in ids), "tool")


RECORD = ResponseRecord(provider="test", model="m", finish="tool-calls", usage=Usage(3, 4))


def test_a_lone_result_carries_both_times_and_a_shared_one_none() -> None:
    dates = LogDates([event(1, calls("old"))])  # a resumed run answers an earlier call
    dates.note([event(2, calls("a", "b")), event(3, results("old")), event(4, results("a", "b"))])
    assert dates.chunk({"type": "tool-output-available", "toolCallId": "old", "output": "ok"}) == [
        {"type": "tool-output-available", "toolCallId": "old", "output": "ok"},
        {
            "type": "data-tool-time",
            "data": {
                "toolCallId": "old",
                "calledAt": "2026-01-01T00:00:01.250000Z",
                "answeredAt": "2026-01-01T00:00:03.250000Z",
            },
            "transient": True,
        },
    ]
    denied = dates.chunk({"type": "tool-output-denied", "toolCallId": "b"})
    assert denied[1]["data"] == {
        "toolCallId": "b",
        "calledAt": "2026-01-01T00:00:02.250000Z",
        "answeredAt": None,
    }
    # A result the log has not stored: nothing added.
    assert dates.chunk({"type": "tool-output-error", "toolCallId": "z", "errorText": "x"}) == [
        {"type": "tool-output-error", "toolCallId": "z", "errorText": "x"}
    ]


def test_hosted_transitions_get_their_stored_time_and_event_in_order() -> None:
    started = HostedActivity("s1", "web_search", "started")
    dates = LogDates([event(1, HostedBody(started))])  # shown already: not matched again
    dates.note([event(2, HostedBody(started)), event(3, HostedBody(started))])
    chunk = {"type": "data-hosted-activity", "id": "s1", "data": {"id": "s1", "state": "started"}}
    first, second, third = dates.chunk(chunk), dates.chunk(chunk), dates.chunk(chunk)
    assert first[0]["data"] == {
        "id": "s1",
        "state": "started",
        "at": "2026-01-01T00:00:02.250000Z",
        "event": "ev_2",
    }
    assert second[0]["data"]["event"] == "ev_3"
    assert third == [chunk]


def test_a_steps_line_follows_its_last_call_once_sent() -> None:
    dates = LogDates()
    dates.note([event(1, calls("a", "b")), event(2, RECORD)])
    line = {
        "type": "data-response-line",
        "data": {
            "toolCallId": "b",
            "notes": [
                {"kind": "usage", "text": "usage: 3 in · 4 out"},
                {"kind": "cost", "text": "$0.00"},
                {"kind": "model", "text": "m"},
            ],
        },
        "transient": True,
    }
    sent_a = {"type": "tool-input-available", "toolCallId": "a", "toolName": "f", "input": {}}
    assert dates.chunk(sent_a) == [sent_a]
    sent_b = {**sent_a, "toolCallId": "b"}
    assert dates.chunk(sent_b) == [sent_b, line]
    assert dates.chunk({"type": "finish"}) == [{"type": "finish"}]


def test_a_line_whose_call_was_not_sent_goes_before_the_finish() -> None:
    dates = LogDates()
    dates.note([event(1, calls("a")), event(2, RECORD)])
    out = dates.chunk({"type": "finish"})
    assert [c["type"] for c in out] == ["data-response-line", "finish"]
    # A step that answered (not only calls) has its line under the answer
    # (no call named), sent as soon as it is stored.
    answered = ResponseRecord(provider="test", model="m", finish="stop", usage=Usage(1, 1))
    dates.note([event(3, calls("c")), event(4, answered)])
    end_step = {"type": "finish-step"}
    assert dates.chunk(end_step) == [
        end_step,
        {
            "type": "data-response-line",
            "data": {
                "toolCallId": None,
                "notes": [
                    {"kind": "usage", "text": "usage: 1 in · 1 out"},
                    {"kind": "cost", "text": "$0.00"},
                    {"kind": "model", "text": "m"},
                ],
            },
            "transient": True,
        },
    ]
    assert dates.chunk({"type": "finish"}) == [{"type": "finish"}]


def test_a_stopped_answers_line_says_so_and_comes_before_the_finish() -> None:
    dates = LogDates()
    stopped = ResponseRecord(model="m", finish="aborted", failure="deadline")
    dates.note([event(1, stopped)])
    out = dates.chunk({"type": "finish"})
    assert out[0]["data"] == {
        "toolCallId": None,
        "notes": [
            {"kind": "warn", "text": "finished: aborted: deadline"},
            {"kind": "model", "text": "m"},
        ],
    }
    assert out[1:] == [{"type": "finish"}]
    # Events shown already (before a resumed run) send no line again.
    again = LogDates([event(1, stopped)])
    assert again.chunk({"type": "finish"}) == [{"type": "finish"}]


def test_without_hosted_dates_a_kept_part_is_left_as_it_came() -> None:
    started = HostedActivity("s1", "web_search", "started")
    dates = LogDates(hosted=False)
    dates.note([event(1, HostedBody(started))])
    chunk = {"type": "data-hosted-activity", "id": "s1", "data": {"id": "s1", "state": "started"}}
    assert dates.chunk(chunk) == [chunk]
