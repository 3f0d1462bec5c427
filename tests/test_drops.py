"""The structured drop record: its display line, its placement, and old free-text drops."""

from __future__ import annotations

import importlib
import sqlite3
from pathlib import Path

import pytest

from elelem import codec
from elelem.conversation import (
    Conversation,
    Draft,
    ImportRefused,
    ResponseRecord,
    SQLiteStore,
    decode_event,
    encode_event,
    export_conversation,
    import_conversation,
)
from elelem.shapes.common import Dropped
from elelem.vocabulary import (
    DROP_REASONS,
    ConversationId,
    Drop,
    Message,
    ProviderId,
    TextBlock,
    UnknownBlock,
    legacy_drop,
)
from elelem.vocabulary.drop import FOREIGN_REASONING, LEGACY, UNSUPPORTED
from elelem.wire import ModelRequest

REASONING = Drop("content[1]", "reasoning", FOREIGN_REASONING, "from openai")


def test_a_drop_reads_as_one_line_naming_where_what_and_why() -> None:
    assert REASONING.description == "content[1]: reasoning (foreign-reasoning: from openai)"
    assert (
        Drop("options.seed", "seed", UNSUPPORTED).description == "options.seed: seed (unsupported)"
    )


def test_a_drop_is_placed_under_a_prefix_and_is_a_value() -> None:
    assert REASONING.under("messages[3]") == Drop(
        "messages[3].content[1]", "reasoning", FOREIGN_REASONING, "from openai"
    )
    assert Drop("", "x", UNSUPPORTED).under("tools[2]").where == "tools[2]"
    with pytest.raises(AttributeError):
        REASONING.where = "elsewhere"  # type: ignore[misc]
    assert codec.dumps(REASONING) == (
        b'{"where":"content[1]","what":"reasoning","why":"foreign-reasoning",'
        b'"detail":"from openai"}'
    )
    assert codec.loads(codec.dumps(REASONING), Drop) == REASONING


def test_the_known_reasons_form_an_open_set() -> None:
    assert FOREIGN_REASONING in DROP_REASONS and LEGACY in DROP_REASONS
    assert "a-plugins-own-reason" not in DROP_REASONS
    # A plugin's shape may report its own reason; the record shows it as it is.
    own = Drop("options.x", "x", "a-plugins-own-reason", "why not")
    assert own.description == "options.x: x (a-plugins-own-reason: why not)"


def test_dropped_collects_drops_and_places_a_nested_encodings_drops() -> None:
    dropped = Dropped()
    dropped.add("options.stop", "stop", UNSUPPORTED, "no stop parameter")
    dropped.extend([REASONING], under="messages[0]")
    dropped.extend([Drop("tools[1]", "native fields", "not-a-shape")])
    assert dropped.items == [
        Drop("options.stop", "stop", UNSUPPORTED, "no stop parameter"),
        Drop("messages[0].content[1]", "reasoning", FOREIGN_REASONING, "from openai"),
        Drop("tools[1]", "native fields", "not-a-shape"),
    ]


def test_a_free_text_drop_becomes_a_legacy_drop_keeping_the_line() -> None:
    line = "request: message 1: message part 0: reasoning from openai"
    assert legacy_drop(line) == Drop("", "", LEGACY, line)
    assert legacy_drop(line).description == line


# -- response records written when drops were free text ------------------------------

OLD_LINES = ["request: message 1: message part 0: reasoning from openai", "block 2: half-built"]


def _old_record_bytes(event: bytes, lines: list[str]) -> bytes:
    """A response event as an earlier elelem wrote it: ``dropped`` as strings."""
    new = codec.dumps([{"where": "", "what": "", "why": LEGACY, "detail": x} for x in lines])
    assert new in event
    return event.replace(new, codec.dumps(lines))


def _conversation(store: SQLiteStore) -> Conversation:
    c = Conversation(store, store.create(title="old", id=ConversationId("c_old")).id)
    c.start_turn(model="openai:m")
    c.add_user("hi")
    record = ResponseRecord(
        provider=ProviderId("openai"), finish="stop", dropped=tuple(map(legacy_drop, OLD_LINES))
    )
    c.append(Draft.of(record, turn=1, response=1))
    return c


def test_an_old_record_decodes_with_its_lines_as_legacy_drops() -> None:
    with SQLiteStore(":memory:") as store:
        c = _conversation(store)
        today = store.load_bytes(c.id)[-1]
    old = _old_record_bytes(today, OLD_LINES)
    assert b'"dropped":["request: message 1' in old
    event = decode_event(old)
    assert event.body.dropped == tuple(legacy_drop(x) for x in OLD_LINES)
    assert encode_event(event) == today


def test_an_old_record_stored_in_sqlite_loads(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with SQLiteStore(path) as store:
        c = _conversation(store)
        today = store.load_bytes(c.id)[-1]
    # Put the bytes an earlier elelem stored in place, as they would be on disk.
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE events SET data = ?, head = 0 WHERE seq = 3",
            (_old_record_bytes(today, OLD_LINES),),
        )
    with SQLiteStore(path) as store:
        (record,) = [e.body for e in store.load(c.id) if isinstance(e.body, ResponseRecord)]
        assert record.dropped == tuple(legacy_drop(x) for x in OLD_LINES)
        assert [d.description for d in record.dropped] == OLD_LINES


def test_an_old_export_imports_in_todays_form_and_a_reformatted_one_is_refused() -> None:
    with SQLiteStore(":memory:") as a, SQLiteStore(":memory:") as b:
        c = _conversation(a)
        today = export_conversation(a, c.id)
        lines = today.split(b"\n")
        lines[3] = _old_record_bytes(lines[3], OLD_LINES)
        info = import_conversation(b, b"\n".join(lines))
        assert export_conversation(b, info.id) == today
        lines[3] = lines[3].replace(b'"dropped":[', b'"dropped": [')
        with pytest.raises(ImportRefused, match=r"line 4: event .* is not in canonical form"):
            import_conversation(b, b"\n".join(lines), new_id=True)


@pytest.mark.parametrize(
    ("shape", "provider"),
    [("anthropic_messages", "anthropic"), ("gemini", "google"), ("bedrock_converse", "bedrock")],
)
def test_a_non_text_block_of_a_system_message_is_reported_not_lost(
    shape: str, provider: str
) -> None:
    spec = importlib.import_module(f"elelem.shapes.{shape}").SHAPE
    system = Message(
        role="system",
        content=(TextBlock("Be brief."), UnknownBlock({"type": "cache_marker", "ttl": 5})),
    )
    request = ModelRequest(model="m", messages=(system, Message.user("hi")))
    encoded = spec.encode_request(request, provider=ProviderId(provider))
    assert (
        Drop("messages[0].content[1]", "cache_marker", UNSUPPORTED, "a system prompt is text only")
        in encoded.dropped
    )
    assert "Be brief." in codec.dumps(encoded.body).decode()
