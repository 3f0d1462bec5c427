"""The blob store: bytes of images and documents live once, content-addressed
(SHA-256), in SQLite and PostgreSQL; events reference them; export/import
carries them and checks every hash."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elelem import codec
from elelem.conversation import Conversation, ImportRefused, Store
from elelem.conversation.export import export_conversation, import_conversation
from elelem.errors import BlobCorruptError, BlobMissingError, DecodeError
from elelem.vocabulary import (
    Blob,
    BytesSource,
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
)
from elelem.vocabulary.ids import CallId
from media_fixtures import pdf, png
from test_store import BACKENDS, Ticker, opener, pg_url

__all__ = ["pg_url"]  # the session fixture test_store defines

PNG = png(1280, 800)
PDF = pdf(["Q3 revenue was 42 million.", "Outlook: steady."])


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    s = opener(request.param, request)(clock=Ticker())
    yield s
    s.close()


def screenshot() -> ImageBlock:
    return ImageBlock.from_bytes(PNG, filename="screenshot.png")


# -- the value ------------------------------------------------------------------


def test_a_blob_is_named_by_its_sha256_and_encodes_as_its_reference_only() -> None:
    blob = Blob(PNG)
    assert blob.sha256 == hashlib.sha256(PNG).hexdigest()
    assert blob.size == len(PNG)
    assert codec.dumps(blob) == (
        b'{"sha256":"' + hashlib.sha256(PNG).hexdigest().encode() + b'","size":%d}' % len(PNG)
    )
    assert base64.b64encode(PNG) not in codec.dumps(Message("user", (screenshot(),)))
    assert "Blob(sha256=" in repr(blob) and str(len(PNG)) in repr(blob)


def test_a_decoded_reference_has_no_bytes_and_says_so_naming_the_blob() -> None:
    message = Message("user", (screenshot(),))
    back = codec.loads(codec.dumps(message), Message)
    assert back == message
    image = back.content[0]
    assert isinstance(image, ImageBlock) and isinstance(image.source, BytesSource)
    assert not image.source.blob.resolved
    with pytest.raises(BlobMissingError) as err:
        _ = image.source.blob.data
    assert err.value.sha256 == Blob(PNG).sha256
    assert Blob(PNG).sha256 in str(err.value)


def test_resolving_checks_the_bytes_against_the_hash() -> None:
    ref = Blob.ref(Blob(PNG).sha256, len(PNG))
    assert ref.resolve(PNG).data == PNG
    with pytest.raises(BlobCorruptError) as err:
        ref.resolve(PNG[:-1] + b"\x00")
    assert ref.sha256 in str(err.value)


def test_a_malformed_reference_is_a_decode_error_naming_the_field() -> None:
    bad = b'{"type":"image","source":{"kind":"bytes","blob":{"sha256":"xyz","size":3}},'
    bad += b'"media_type":"image/png"}'
    with pytest.raises(DecodeError) as err:
        codec.loads(bad, ImageBlock)
    assert "sha256" in str(err.value)


# -- the store --------------------------------------------------------------------


def test_the_same_screenshot_in_twenty_turns_is_stored_once(store: Store) -> None:
    convo = Conversation.create(store)
    assert store.blob_usage() == (0, 0)
    for turn in range(20):
        convo.start_turn()
        convo.add_message(Message("user", (TextBlock(f"turn {turn}"), screenshot()), "user"))
    assert store.blob_usage() == (1, len(PNG))
    assert len(convo.events) == 40


def test_a_reopened_conversation_gets_its_bytes_back_from_the_store(store: Store) -> None:
    convo = Conversation.create(store)
    convo.add_message(
        Message("user", (screenshot(), DocumentBlock.from_bytes(PDF, title="Q3")), "user")
    )
    reopened = Conversation.open(store, convo.id)
    loaded = reopened.events[0].body.content  # type: ignore[attr-defined]
    assert not loaded[0].source.blob.resolved  # the event holds the reference
    history = reopened.history()
    image, document = history[0].content
    assert isinstance(image, ImageBlock) and isinstance(document, DocumentBlock)
    assert isinstance(image.source, BytesSource) and image.source.blob.data == PNG
    assert isinstance(document.source, BytesSource) and document.source.blob.data == PDF
    assert (image.width, image.height, document.pages) == (1280, 800, 2)


def test_images_inside_tool_results_are_stored_and_resolved(store: Store) -> None:
    convo = Conversation.create(store)
    result = ToolResultBlock(CallId("call_1"), "took a screenshot", attachments=(screenshot(),))
    convo.add_tool_results([result])
    assert store.blob_usage() == (1, len(PNG))
    (message,) = Conversation.open(store, convo.id).history()
    (got,) = message.content
    assert isinstance(got, ToolResultBlock)
    (attachment,) = got.attachments or ()
    assert isinstance(attachment.source, BytesSource) and attachment.source.blob.data == PNG


def test_appending_a_reference_the_store_lacks_is_refused_naming_it(store: Store) -> None:
    convo = Conversation.create(store)
    ref = ImageBlock(BytesSource(Blob.ref("ab" * 32, 10)), "image/png")
    with pytest.raises(BlobMissingError) as err:
        convo.add_message(Message("user", (ref,), "user"))
    assert err.value.sha256 == "ab" * 32
    assert store.load(convo.id) == ()


def test_a_missing_blob_is_a_typed_error_naming_it(store: Store) -> None:
    with pytest.raises(BlobMissingError) as err:
        store.get_blob("cd" * 32)
    assert "cd" * 32 in str(err.value)


def test_put_blob_is_content_addressed(store: Store) -> None:
    first = store.put_blob(PDF)
    second = store.put_blob(PDF)
    assert first == second and store.has_blob(first.sha256)
    assert store.get_blob(first.sha256) == PDF
    assert store.blob_usage() == (1, len(PDF))


def test_a_corrupted_blob_row_is_reported_not_served(tmp_path: object) -> None:
    from pathlib import Path

    from elelem.conversation import SQLiteStore

    path = Path(str(tmp_path)) / "c.db"
    store = SQLiteStore(path)
    blob = store.put_blob(PNG)
    store._exec("UPDATE blobs SET data = ? WHERE sha256 = ?", (b"tampered", blob.sha256))
    with pytest.raises(BlobCorruptError) as err:
        store.get_blob(blob.sha256)
    assert blob.sha256 in str(err.value)
    store.close()


# -- export / import ----------------------------------------------------------------


def test_export_carries_blobs_once_and_import_restores_them(store: Store) -> None:
    convo = Conversation.create(store)
    convo.add_message(Message("user", (screenshot(), screenshot()), "user"))
    convo.add_message(Message("user", (DocumentBlock.from_bytes(PDF),), "user"))
    data = export_conversation(store, convo.id)
    lines = data.split(b"\n")
    header = json.loads(lines[0])
    assert (header["version"], header["events"], header["blobs"]) == (2, 2, 2)
    blob_lines = [json.loads(line) for line in lines[3:5]]
    assert [b["sha256"] for b in blob_lines] == [Blob(PNG).sha256, Blob(PDF).sha256]
    assert base64.b64decode(blob_lines[0]["base64"]) == PNG
    store.delete(convo.id)
    info = import_conversation(store, data, new_id=True)
    history = Conversation.open(store, info.id).history()
    image = history[0].content[0]
    assert isinstance(image, ImageBlock) and isinstance(image.source, BytesSource)
    assert image.source.blob.data == PNG
    assert export_conversation(store, info.id).split(b"\n")[1:] == lines[1:]


def test_an_export_without_blobs_stays_version_1(store: Store) -> None:
    convo = Conversation.create(store)
    convo.add_user("hello")
    header = json.loads(export_conversation(store, convo.id).split(b"\n")[0])
    assert header["version"] == 1 and "blobs" not in header


def test_a_tampered_blob_is_refused_and_nothing_is_written(store: Store) -> None:
    convo = Conversation.create(store)
    convo.add_message(Message("user", (screenshot(),), "user"))
    lines = export_conversation(store, convo.id).split(b"\n")
    entry = json.loads(lines[2])
    entry["base64"] = base64.b64encode(PNG[:-4] + b"evil").decode()
    lines[2] = json.dumps(entry, separators=(",", ":")).encode()
    before = len(store.list_conversations())
    with pytest.raises(ImportRefused) as err:
        import_conversation(store, b"\n".join(lines), new_id=True)
    assert str(err.value).startswith(f"line 3: blob sha256:{Blob(PNG).sha256}")
    assert "tampered" in str(err.value)
    assert len(store.list_conversations()) == before


def test_an_export_missing_a_referenced_blob_is_refused(store: Store) -> None:
    convo = Conversation.create(store)
    convo.add_message(Message("user", (screenshot(),), "user"))
    lines = export_conversation(store, convo.id).split(b"\n")
    header = json.loads(lines[0])
    header["blobs"] = 0
    cut = [json.dumps(header, separators=(",", ":")).encode(), lines[1], b""]
    with pytest.raises(ImportRefused) as err:
        import_conversation(store, b"\n".join(cut), new_id=True)
    assert f"references blob sha256:{Blob(PNG).sha256}" in str(err.value)


def test_an_unreferenced_blob_is_refused(store: Store) -> None:
    # issue #33: a blob no event references would be stored for nothing.
    convo = Conversation.create(store)
    convo.add_message(Message("user", (screenshot(),), "user"))
    lines = export_conversation(store, convo.id).split(b"\n")
    header = json.loads(lines[0])
    header["blobs"] = 2
    extra = Blob(PDF)
    line = {"sha256": extra.sha256, "size": extra.size, "base64": base64.b64encode(PDF).decode()}
    forged = [
        json.dumps(header, separators=(",", ":")).encode(),
        *lines[1:3],
        json.dumps(line, separators=(",", ":")).encode(),
        b"",
    ]
    with pytest.raises(ImportRefused) as err:
        import_conversation(store, b"\n".join(forged), new_id=True)
    assert str(err.value) == f"line 4: blob sha256:{extra.sha256} is referenced by no event"


def test_an_event_claiming_another_size_than_its_blob_is_refused(store: Store) -> None:
    convo = Conversation.create(store)
    convo.add_message(Message("user", (screenshot(),), "user"))
    lines = export_conversation(store, convo.id).split(b"\n")
    size = f'"size":{len(PNG)}'.encode()
    assert lines[1].count(size) == 1
    lines[1] = lines[1].replace(size, f'"size":{len(PNG) * 10}'.encode())
    with pytest.raises(ImportRefused) as err:
        import_conversation(store, b"\n".join(lines), new_id=True)
    assert str(err.value) == (
        f"line 2: event references blob sha256:{Blob(PNG).sha256} as {len(PNG) * 10} bytes,"
        f" but it holds {len(PNG)}"
    )


# -- property: any image or document round-trips through a store ---------------------

texts = st.text(max_size=20)
images = st.builds(
    lambda data, name, detail: ImageBlock(
        BytesSource(Blob(data)), "image/png", name, None, None, None, detail
    ),
    st.binary(max_size=64),
    st.none() | texts,
    st.none() | st.sampled_from(["low", "high", "auto"]),
)
documents = st.one_of(
    st.builds(
        lambda data, title, cite: DocumentBlock(
            BytesSource(Blob(data)), "application/pdf", title, citations=cite
        ),
        st.binary(max_size=64),
        st.none() | texts,
        st.booleans(),
    ),
    st.builds(lambda t, c: DocumentBlock.from_text(t, context=c), texts, st.none() | texts),
    st.builds(
        lambda chunks, title: DocumentBlock.from_chunks(chunks, title=title),
        st.lists(texts, max_size=3),
        st.none() | texts,
    ),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.lists(images | documents, min_size=1, max_size=3), min_size=1, max_size=4))
def test_any_media_round_trips_through_the_store_once(
    tmp_path_factory: pytest.TempPathFactory, turns: list[list[ImageBlock | DocumentBlock]]
) -> None:
    from elelem.conversation import SQLiteStore

    with SQLiteStore(tmp_path_factory.mktemp("p") / "s.db") as store:
        convo = Conversation.create(store)
        sent = [Message("user", tuple(blocks), "user") for blocks in turns]
        for message in sent:
            convo.add_message(message)
        assert Conversation.open(store, convo.id).history() == tuple(sent)
        for message in Conversation.open(store, convo.id).history():
            for block in message.content:
                if isinstance(block.source, BytesSource):  # type: ignore[union-attr]
                    assert block.source.blob.resolved  # type: ignore[union-attr]
        distinct = {
            b.source.blob: None
            for m in sent
            for b in m.content
            if isinstance(b.source, BytesSource)  # type: ignore[union-attr]
        }
        assert store.blob_usage() == (len(distinct), sum(b.size for b in distinct))


def test_pruning_frees_only_the_blobs_no_conversation_references(store: Store) -> None:
    keep = Conversation.create(store)
    keep.add_message(Message("user", (screenshot(),), "user"))
    gone = Conversation.create(store)
    gone.add_message(Message("user", (screenshot(), DocumentBlock.from_bytes(PDF)), "user"))
    store.delete(gone.id)
    # Deleting a conversation never deletes a blob another may share.
    assert store.blob_usage() == (2, len(PNG) + len(PDF))
    assert store.prune_blobs() == (1, len(PDF))
    assert store.blob_usage() == (1, len(PNG))
    assert store.prune_blobs() == (0, 0)
    (message,) = Conversation.open(store, keep.id).history()
    assert message.content[0].source.blob.data == PNG  # type: ignore[union-attr]
