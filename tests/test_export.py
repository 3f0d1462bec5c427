"""Versioned NDJSON export/import."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from elelem.conversation import (
    Conversation,
    Draft,
    ImportRefused,
    SQLiteStore,
    StoreError,
    export_conversation,
    import_conversation,
    raw_body,
)
from elelem.vocabulary import ConversationId


def fixed() -> datetime:
    return datetime(2026, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)


def sample(store: SQLiteStore) -> Conversation:
    c = Conversation(store, store.create(title="export me", id=ConversationId("c_exp")).id)
    c.start_turn(model="anthropic:m")
    c.add_user("héllo ✓")
    c.append(Draft("future-kind", raw_body(b'{"keep":  "spacing"}'), 1))
    return c


def test_export_is_a_header_line_then_one_line_per_stored_event() -> None:
    with SQLiteStore(":memory:", clock=fixed) as store:
        c = sample(store)
        data = export_conversation(store, c.id)
        lines = data.split(b"\n")
        assert lines[-1] == b""
        assert json.loads(lines[0]) == {
            "format": "elelem.conversation",
            "version": 1,
            "conversation": {
                "id": "c_exp",
                "title": "export me",
                "created_at": "2026-05-06T07:08:09.123456Z",
                "parent": None,
                "forked_at": None,
            },
            "events": 3,
        }
        assert lines[1:-1] == store.load_bytes(c.id)
        assert lines[3].endswith(b'"kind":"future-kind","body":{"keep":  "spacing"}}')


def test_export_import_export_is_byte_identical_and_import_can_take_a_new_id() -> None:
    with SQLiteStore(":memory:", clock=fixed) as a, SQLiteStore(":memory:") as b:
        c = sample(a)
        data = export_conversation(a, c.id)
        info = import_conversation(b, data)
        assert (info.id, info.title, info.model, info.turns, info.events) == (
            "c_exp",
            "export me",
            "anthropic:m",
            1,
            3,
        )
        assert export_conversation(b, info.id) == data
        with pytest.raises(StoreError, match="conversation 'c_exp' already exists"):
            import_conversation(b, data)
        copy = import_conversation(b, data, new_id=True)
        assert copy.id != "c_exp"
        assert b.load_bytes(copy.id) == a.load_bytes(c.id)


def _refused(data: bytes, match: str) -> ImportRefused:
    with SQLiteStore(":memory:") as store:
        with pytest.raises(ImportRefused, match=match) as info:
            import_conversation(store, data)
        # Validation happens before writing: nothing at all was stored.
        assert store.list_conversations() == []
    return info.value


def _export() -> list[bytes]:
    with SQLiteStore(":memory:", clock=fixed) as store:
        return export_conversation(store, sample(store).id).split(b"\n")


def test_unknown_versions_and_formats_are_refused_clearly() -> None:
    lines = _export()
    header = json.loads(lines[0])
    header["version"] = 7
    err = _refused(
        b"\n".join([json.dumps(header).encode(), *lines[1:]]),
        "line 1: export format version 7 is not supported \\(this elelem reads versions 1, 2\\)",
    )
    assert err.line == 1
    header["version"] = "1"
    _refused(json.dumps(header).encode(), "export version must be an integer, got '1'")
    _refused(b'{"format":"something-else","version":1}\n', "not an elelem conversation export")
    _refused(b"not json\n", "line 1: the first line is not a JSON object header")
    _refused(b"", "the file is empty")


def test_every_line_is_validated_before_anything_is_written() -> None:
    lines = _export()
    broken = lines.copy()
    broken[3] = broken[3].replace(b'"seq":3', b'"seq":"three"')
    assert _refused(b"\n".join(broken), "line 4: bad event").line == 4
    gap = lines.copy()
    gap[2] = gap[2].replace(b'"seq":2', b'"seq":5')
    _refused(b"\n".join(gap), "line 3: event seq 5 where 2 was expected")
    dup = [lines[0], lines[1], lines[1].replace(b'"seq":1', b'"seq":2'), b""]
    _refused(
        b"\n".join(dup).replace(b'"events":3', b'"events":2'), "line 3: event id .* appears twice"
    )
    short = [lines[0], lines[1], b""]
    _refused(b"\n".join(short), "announces 3 events but the file holds 1")
    bad_block = lines.copy()
    bad_block[2] = bad_block[2].replace(b'"text":"h', b'"text":7,"x":"h')
    _refused(b"\n".join(bad_block), "line 3: bad event: .*\\$.body.content\\[0\\]")


def test_an_event_with_fields_this_elelem_does_not_know_is_refused_not_trimmed() -> None:
    lines = _export()
    newer = lines.copy()
    newer[2] = newer[2].replace(b'"source":"user"', b'"source":"user","mood":"curious"')
    _refused(b"\n".join(newer), "line 3: event .* is not in canonical form")
    spaced = lines.copy()
    spaced[1] = spaced[1].replace(b'"seq":1,', b'"seq": 1,')
    _refused(b"\n".join(spaced), "line 2: event .* is not in canonical form")
