"""Versioned NDJSON export and import of one conversation.

The first line is a header ``{"format": "elelem.conversation", "version": 1,
"conversation": {…}, "events": N}``; each following line is one event's
canonical bytes, exactly as stored.  A conversation whose events reference
blobs (the bytes of images and documents) is written as version 2: the
header also counts ``"blobs": M``, and M lines follow the events, each one
blob ``{"sha256": …, "size": …, "base64": …}``.  Import validates the whole
file before writing anything: it refuses formats and versions it does not
know, checks every blob's bytes against its hash, and refuses an event
referencing a blob the file does not carry.
Export → import → export gives the same bytes (an older elelem's export,
lacking fields added since, comes back in today's canonical form).
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import datetime
from typing import Any, BinaryIO

import msgspec

from elelem import codec
from elelem.conversation.blobs import event_blobs
from elelem.conversation.errors import CorruptEventError, ImportRefused
from elelem.conversation.events import decode_event, encode_event, upgrade_body
from elelem.conversation.store import ConversationInfo, Store, new_conversation_id
from elelem.errors import DecodeError
from elelem.vocabulary import Blob, ConversationId, EventId
from elelem.vocabulary.json import decode_json

FORMAT = "elelem.conversation"
VERSION = 1
"""The version of an export without blobs (readable by every elelem)."""
BLOBS_VERSION = 2
"""The version of an export that carries blobs."""
SUPPORTED_VERSIONS: frozenset[int] = frozenset({1, 2})


class ExportedConversation(msgspec.Struct, frozen=True):
    """The conversation's identity as an export carries it."""

    id: ConversationId
    title: str | None
    created_at: str
    parent: ConversationId | None = None
    forked_at: EventId | None = None


class Header(msgspec.Struct, frozen=True):
    """The first line of an export."""

    format: str
    version: int
    conversation: ExportedConversation
    events: int
    blobs: int | msgspec.UnsetType = msgspec.UNSET
    """How many blob lines follow the events (version 2; unset in version 1)."""


class BlobLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One blob of a version 2 export."""

    sha256: str
    size: int
    base64: str


class _Probe(msgspec.Struct):
    format: object = None
    version: object = None


def export_conversation(store: Store, conversation: ConversationId) -> bytes:
    """The NDJSON export of one conversation.

    Every event is checked as import will check it: one that does not decode,
    or whose bytes are not its canonical form, is a :class:`CorruptEventError`
    naming it, rather than an export that import then refuses.
    """
    info = store.info(conversation)
    data = store.load_bytes(conversation)
    shas: dict[str, None] = {}
    for seq, line in enumerate(data, start=1):
        try:
            event = decode_event(line)
        except DecodeError as exc:
            raise CorruptEventError(conversation, seq, exc.detail) from None
        except RecursionError:
            raise CorruptEventError(conversation, seq, "nested too deeply to read") from None
        canonical = encode_event(event)
        if canonical != line and not _written_before(line, canonical):
            raise CorruptEventError(
                conversation, seq, "its bytes are not the canonical form of the event they hold"
            )
        for blob in event_blobs(event):
            shas.setdefault(blob.sha256)
    exported = ExportedConversation(
        info.id, info.title, info.created_at, info.parent, info.forked_at
    )
    if shas:
        header = Header(FORMAT, BLOBS_VERSION, exported, len(data), len(shas))
    else:
        header = Header(FORMAT, VERSION, exported, len(data))
    out = [codec.dumps(header)]
    out.extend(data)
    for sha in shas:
        blob = Blob(store.get_blob(sha))
        out.append(codec.dumps(BlobLine(sha, blob.size, blob.base64())))
    out.append(b"")
    return b"\n".join(out)


def write_export(store: Store, conversation: ConversationId, fp: BinaryIO) -> int:
    """Write the export of ``conversation`` to ``fp``; return the bytes written."""
    data = export_conversation(store, conversation)
    fp.write(data)
    return len(data)


def _header(line: bytes) -> Header:
    try:
        probe = decode_json(line, type=_Probe)
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise ImportRefused("the first line is not a JSON object header", 1) from None
    if probe.format != FORMAT:
        raise ImportRefused(
            f"not an elelem conversation export (format {probe.format!r}, expected {FORMAT!r})",
            1,
        )
    if not isinstance(probe.version, int) or isinstance(probe.version, bool):
        raise ImportRefused(f"export version must be an integer, got {probe.version!r}", 1)
    if probe.version not in SUPPORTED_VERSIONS:
        supported = ", ".join(str(v) for v in sorted(SUPPORTED_VERSIONS))
        raise ImportRefused(
            f"export format version {probe.version} is not supported"
            f" (this elelem reads version{'s' if len(SUPPORTED_VERSIONS) > 1 else ''} {supported})",
            1,
        )
    try:
        header = codec.loads(line, Header)
    except DecodeError as exc:
        raise ImportRefused(f"bad header: {exc}", 1) from None
    c = header.conversation
    _check_id(c.id, "the conversation id", 1)
    for name, value in (("parent", c.parent), ("forked_at", c.forked_at)):
        if value is not None:
            _check_id(value, f"the conversation's {name}", 1)
    _check_time(c.created_at, "the conversation's created_at", 1)
    return header


SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
"""What an imported id may be: ids are shown on terminals and in URLs."""
MAX_NUMBER = 2**53
"""The largest turn or response number an import may carry (every store and
JSON reader holds it exactly)."""


def _check_id(value: str, what: str, line: int) -> None:
    if not SAFE_ID.fullmatch(value):
        raise ImportRefused(
            f"{what} {ascii(value)[:80]} is not an id (letters, digits, _ . : -; at most 128)",
            line,
        )


def _check_time(value: str, what: str, line: int) -> None:
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ImportRefused(f"{what} {ascii(value)[:80]} is not an ISO 8601 time", line) from None
    if not value.isascii() or not value.isprintable():
        raise ImportRefused(f"{what} {ascii(value)[:80]} is not an ISO 8601 time", line)


def _check_event(event: Any, line: int) -> None:
    _check_id(event.id, "the event id", line)
    _check_time(event.at, f"event {event.id}: at", line)
    for name in ("turn", "response"):
        number = getattr(event, name)
        if number is not None and not 0 <= number <= MAX_NUMBER:
            raise ImportRefused(f"event {event.id}: {name} {number} is out of range", line)


def _pruned(new: Any, old: Any) -> Any:
    # ``new`` less every object key ``old`` lacks, at every depth.
    if isinstance(new, dict) and isinstance(old, dict):
        return {k: _pruned(v, old[k]) for k, v in new.items() if k in old}
    if isinstance(new, list) and isinstance(old, list) and len(new) == len(old):
        return [_pruned(n, o) for n, o in zip(new, old, strict=True)]
    return new


def _written_before(line: bytes, canonical: bytes) -> bool:
    """True when ``line`` is exactly ``canonical`` less fields an earlier
    elelem did not write yet (a field added since, which decoding filled
    with its default): nothing of the line is lost or altered, so it imports
    in today's canonical form.  An unknown field or a reformatted line is not
    this."""
    try:
        old = decode_json(line)
    except msgspec.DecodeError:
        return False
    if isinstance(old, dict) and isinstance(old.get("kind"), str):
        # A body in a form since changed (free-text drops) is compared in
        # today's form of it, which means the same.
        body = upgrade_body(old["kind"], old.get("body"))
        if body is not old.get("body"):
            if msgspec.json.encode(old) != line:
                return False  # reformatted
            old = {k: (body if k == "body" else v) for k, v in old.items()}
            line = msgspec.json.encode(old)
    return msgspec.json.encode(_pruned(decode_json(canonical), old)) == line


def _blob(line: bytes, n: int) -> Blob:
    try:
        entry = decode_json(line, type=BlobLine)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ImportRefused(f"bad blob line: {exc}", n) from None
    try:
        blob = Blob(base64.b64decode(entry.base64, validate=True))
    except (binascii.Error, ValueError) as exc:
        raise ImportRefused(f"blob sha256:{entry.sha256} is not base64: {exc}", n) from None
    if blob.sha256 != entry.sha256 or blob.size != entry.size:
        raise ImportRefused(
            f"blob sha256:{entry.sha256} ({entry.size} bytes) is corrupt or tampered with:"
            f" its bytes hash to sha256:{blob.sha256} ({blob.size} bytes)",
            n,
        )
    return blob


def read_blobs(data: bytes) -> tuple[Header, list[bytes], list[Blob]]:
    """:func:`read_export`, and the blobs a version 2 export carries, each
    checked against its hash; every blob an event references must be there,
    of the size the event says, and every blob carried must be referenced."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    header, events = _read(lines)
    blobs: list[Blob] = []
    given: dict[str, tuple[Blob, int]] = {}  # by hash: the blob and its line
    for n, line in enumerate(lines[1 + len(events) :], start=2 + len(events)):
        blob = _blob(line, n)
        if blob.sha256 in given:
            raise ImportRefused(f"blob sha256:{blob.sha256} appears twice", n)
        given[blob.sha256] = (blob, n)
        blobs.append(blob)
    if len(blobs) != (header.blobs or 0):
        raise ImportRefused(
            f"the header announces {header.blobs or 0} blobs but the file holds {len(blobs)}"
        )
    referenced: set[str] = set()
    for n, line in enumerate(events, start=2):
        for ref in event_blobs(decode_event(line)):
            carried = given.get(ref.sha256)
            if carried is None:
                raise ImportRefused(
                    f"event references blob sha256:{ref.sha256}, which the file does not carry",
                    n,
                )
            if ref.size != carried[0].size:
                # The store would keep the claimed size beside bytes of another.
                raise ImportRefused(
                    f"event references blob sha256:{ref.sha256} as {ref.size} bytes, but it"
                    f" holds {carried[0].size}",
                    n,
                )
            referenced.add(ref.sha256)
    for sha256, (_, n) in given.items():
        if sha256 not in referenced:
            raise ImportRefused(f"blob sha256:{sha256} is referenced by no event", n)
    return header, events, blobs


def read_export(data: bytes) -> tuple[Header, list[bytes]]:
    """Validate a whole export; return its header and canonical event bytes.

    Every event must decode to exactly its own bytes (a field this elelem
    does not know would otherwise be dropped), or to them plus fields added
    since they were written, or to their upgrade to a form since changed
    (an older elelem's export: the event is kept in today's canonical form,
    its defaults filled in, free-text drops as legacy drop records), ``seq`` must run 1, 2, …
    without gaps, ids must be unique and the count must match the header.  Raises
    :class:`ImportRefused` naming the first bad line.
    """
    header, events, _ = read_blobs(data)
    return header, events


def _read(lines: list[bytes]) -> tuple[Header, list[bytes]]:
    if not lines:
        raise ImportRefused("the file is empty")
    header = _header(lines[0])
    if header.version == VERSION and header.blobs is not msgspec.UNSET:
        raise ImportRefused("a version 1 export carries no blobs", 1)
    if header.version == BLOBS_VERSION and header.blobs is msgspec.UNSET:
        raise ImportRefused("a version 2 export header must count its blobs", 1)
    events: list[bytes] = []
    seen: set[str] = set()
    count = len(lines) - 1 if header.version == VERSION else min(header.events, len(lines) - 1)
    for n, line in enumerate(lines[1 : 1 + count], start=2):
        try:
            event = decode_event(line)
        except DecodeError as exc:
            raise ImportRefused(f"bad event: {exc}", n) from None
        except RecursionError:
            raise ImportRefused("bad event: nested too deeply to read", n) from None
        _check_event(event, n)
        expected = len(events) + 1
        if event.seq != expected:
            raise ImportRefused(f"event seq {event.seq} where {expected} was expected", n)
        if event.id in seen:
            raise ImportRefused(f"event id {event.id!r} appears twice", n)
        seen.add(event.id)
        canonical = encode_event(event)
        if canonical != line and not _written_before(line, canonical):
            # Decoding ignored something (a field this elelem does not know)
            # or the line was reformatted: storing it would lose or alter it.
            raise ImportRefused(
                f"event {event.id} is not in canonical form (it holds fields this elelem"
                " does not know, or was reformatted); refusing rather than dropping anything",
                n,
            )
        events.append(canonical)
    if len(events) != header.events:
        raise ImportRefused(
            f"the header announces {header.events} events but the file holds {len(events)}"
        )
    return header, events


def import_conversation(store: Store, data: bytes, *, new_id: bool = False) -> ConversationInfo:
    """Import an export into ``store``; nothing is written unless all of it is valid.

    With ``new_id`` the conversation gets a fresh id (to import a copy beside
    the original); otherwise an existing id is refused.
    """
    header, events, blobs = read_blobs(data)
    c = header.conversation
    info = ConversationInfo(
        id=new_conversation_id() if new_id else c.id,
        title=c.title,
        model=None,
        turns=0,
        events=len(events),
        created_at=c.created_at,
        updated_at=c.created_at,
        parent=c.parent,
        forked_at=c.forked_at,
    )
    return store.import_events(info, events, blobs)


__all__ = [
    "BLOBS_VERSION",
    "FORMAT",
    "SUPPORTED_VERSIONS",
    "VERSION",
    "BlobLine",
    "ExportedConversation",
    "Header",
    "export_conversation",
    "import_conversation",
    "read_blobs",
    "read_export",
    "write_export",
]
