"""Nothing secret at rest: a store given the redactor keeps no key, whatever
channel it came in by (text, a signature, an unknown block, a hosted input,
a response record's request id, another provider's key), and the redactor
knows a key's base64 and HTML-entity forms too (issue #33)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from cli_helpers import base_env, run, text_reply
from elelem.conversation import Conversation, SQLiteStore
from elelem.conversation.events import Draft, ResponseRecord
from elelem.redaction import REDACTED, Redactor
from elelem.testing.servers import LoopbackServer, replay
from elelem.vocabulary import (
    ActivityId,
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    TextBlock,
    UnknownBlock,
)

KEY = "sk-ant-api03-Zq7RkTnW4sXyP2mLvB9cHdJfG"
OTHER = "sk-proj-Hn3Kw8QpRt5Vx2Zy7Bc4Df6Gj9"


@pytest.mark.parametrize("offset", [0, 1, 2])
@pytest.mark.parametrize("urlsafe", [False, True])
def test_base64_echoes_are_redacted(offset: int, urlsafe: bool) -> None:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    echo = encode(b"u:"[:offset] + KEY.encode() + b"!").decode()
    clean = Redactor([KEY]).redact(f"Authorization: Basic {echo}")
    assert REDACTED in clean
    assert not any(echo[i : i + 16] in clean for i in range(0, len(echo) - 16))


@pytest.mark.parametrize(
    "entity",
    [
        lambda c: f"&#{ord(c)};",
        lambda c: f"&#x{ord(c):x};",
        lambda c: f"&#X{ord(c):02X};",
        lambda c: f"&#00{ord(c)};",
    ],
    ids=["decimal", "hex", "HEX", "zero-padded"],
)
def test_html_entity_echoes_are_redacted(entity: object) -> None:
    echo = "".join(entity(c) for c in KEY)  # type: ignore[operator]
    assert Redactor([KEY]).redact(f"<p>your key {echo} is invalid</p>") == (
        f"<p>your key {REDACTED} is invalid</p>"
    )
    mixed = "".join(entity(c) if i % 2 else c for i, c in enumerate(KEY))  # type: ignore[operator]
    assert Redactor([KEY]).redact(mixed) == REDACTED


def test_no_channel_stores_a_key(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    store = SQLiteStore(db)
    store.redactor = Redactor([KEY, OTHER])
    convo = Conversation.create(store)
    convo.add_user(f"my key is {KEY}, and the other {OTHER}")
    anthropic = ProviderId("anthropic")
    signature = ProviderPayload(anthropic, "signature", None, f"sig-{KEY}")
    assistant = Message(
        "assistant",
        (
            ReasoningBlock("thinking", payloads=(signature,)),
            UnknownBlock({"type": "mystery", "note": f"echo {KEY}"}),
            HostedActivity(
                id=ActivityId("h1"), name="web_search", state="started", input={"q": KEY}
            ),
            TextBlock(f"base64 {base64.b64encode(KEY.encode()).decode()}"),
            TextBlock("entity " + "".join(f"&#{ord(c)};" for c in KEY)),
        ),
        "assistant",
        anthropic,
        "claude",
    )
    convo.add_message(assistant)
    convo.append(Draft.of(ResponseRecord(anthropic, request_id=f"req-{KEY}"), turn=0))
    events = convo.events
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert KEY.encode() not in raw and OTHER.encode() not in raw
    assert base64.b64encode(KEY.encode())[:20] not in raw
    assert b"&#115;&#107;&#45;" not in raw
    stored = repr([e.body for e in events])
    assert KEY not in stored and REDACTED in stored
    reopened = SQLiteStore(db)
    assert KEY not in repr([e.body for e in Conversation.open(reopened, convo.id).events])
    reopened.close()


def test_the_cli_store_keeps_no_echoed_key(tmp_path: Path) -> None:
    with LoopbackServer([replay(text_reply(f"Your key {KEY} works."))]) as server:
        env = base_env(tmp_path, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
        result = run(env, "ask", "-m", "anthropic:claude-sonnet-4-5", "hi")
    assert result.returncode == 0, result.stderr
    assert KEY not in result.stdout
    home = tmp_path / "home"
    raw = b"".join(p.read_bytes() for p in home.glob("elelem.db*") if p.is_file())
    assert raw and KEY.encode() not in raw


def test_a_collection_row_keeps_no_key(tmp_path: Path) -> None:
    from array import array

    from elelem.embeddings.collections import Collections, Item

    db = tmp_path / "store.db"
    store = SQLiteStore(db)
    store.redactor = Redactor([KEY])
    notes = Collections(store).open("notes", "openai:text-embedding-3-small", 2)
    row_id, content = f"id-{KEY}", f"my key is {KEY}"
    items = [
        Item(row_id, array("f", [1.0, 0.0]), content, {"note": f"key {KEY}"}),
        Item("other", array("f", [0.0, 1.0]), "plain"),
    ]
    assert notes.upsert(items) == 2
    # The row is found by the id it was given, its content by what was given.
    assert list(notes.vector(row_id)) == [1.0, 0.0]
    assert notes.unchanged([(row_id, content), ("other", "changed")]) == {row_id}
    first, _ = notes.similar(array("f", [1.0, 0.0]), number=2)
    assert (first.id, first.content, first.metadata) == (
        f"id-{REDACTED}",
        f"my key is {REDACTED}",
        {"note": f"key {REDACTED}"},
    )
    assert [h.id for h in notes.similar(array("f", [1.0, 0.0]), skip=row_id)] == ["other"]
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert KEY.encode() not in raw and b"my key is [redacted]" in raw
