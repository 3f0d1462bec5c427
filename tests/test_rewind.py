"""The rewind overlay (a retry, an edited message resent): the turns it
replaces stay in the log, are shown as replaced, and are never sent again."""

from __future__ import annotations

from pathlib import Path

from elelem.conversation import Conversation, Rewind, native_history, open_store, turn_views
from elelem.vocabulary import Message, ProviderId, TextBlock


def answer(text: str) -> Message:
    return Message(
        role="assistant",
        source="assistant",
        provider=ProviderId("anthropic"),
        model="m",
        content=(TextBlock(text),),
    )


def texts(messages: tuple[Message, ...]) -> list[tuple[str, str]]:
    return [
        (m.role, "".join(p.text for p in m.content if isinstance(p, TextBlock))) for m in messages
    ]


def test_a_rewind_leaves_the_turns_before_it_out(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.db")
    conversation = Conversation.create(store)
    for question, reply in (("q1", "a1"), ("q2", "a2"), ("q3", "a3")):
        conversation.start_turn(model="anthropic:m")
        conversation.add_user(question)
        conversation.add_message(answer(reply))
    conversation.add_overlay(Rewind(2, "edit"))  # turns 2 and 3 replaced
    conversation.start_turn(model="anthropic:m")
    conversation.add_user("q2 edited")
    conversation.add_message(answer("a4"))
    conversation.add_overlay(Rewind(4, "retry"))
    conversation.start_turn(model="anthropic:m")
    conversation.add_user("q2 edited")
    conversation.add_message(answer("a5"))

    events = store.load(conversation.id)
    assert texts(native_history(events)) == [
        ("user", "q1"),
        ("assistant", "a1"),
        ("user", "q2 edited"),
        ("assistant", "a5"),
    ]
    assert [(v.turn, v.rewound) for v in turn_views(events)] == [
        (1, None),
        (2, "edit"),
        (3, "edit"),
        (4, "retry"),
        (5, None),
    ]
    # Nothing stored changed: every answer is still in the log.
    stored = [e.body.content[0].text for e in events if e.kind == "message"]
    assert stored == ["q1", "a1", "q2", "a2", "q3", "a3", "q2 edited", "a4", "q2 edited", "a5"]
