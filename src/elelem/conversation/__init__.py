"""The conversation log (docs/architecture.md §4): append-only events, projections,
overlays, storage backends and export/import.

This package knows no wire shape: projections hand provider-attributed
messages to whichever shape encodes them.  The log
(:class:`Conversation`) knows no turn: the turn engine
(:mod:`elelem.turns.engine`) and its drivers
(:mod:`elelem.turns.drive`: ``send``, ``send_sync``) sit above it and
are imported from their modules (or as ``elelem.send`` / ``elelem.send_sync``).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qs, parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from elelem.conversation.context_edits import ContextEdits
from elelem.conversation.errors import (
    ConversationNotFound,
    CorruptEventError,
    EventError,
    ImportRefused,
    SchemaVersionError,
    StoreError,
    WriterBusy,
)
from elelem.conversation.events import (
    OVERLAY_KINDS,
    Awaiting,
    Compaction,
    Decision,
    Draft,
    Event,
    HostedBody,
    MessageBody,
    Repair,
    ResponseRecord,
    Rewind,
    ServerRequest,
    StripReasoning,
    StripSignature,
    TurnStart,
    decode_event,
    encode_event,
    event_kinds,
    raw_body,
    register_event_kind,
)
from elelem.conversation.export import export_conversation, import_conversation, read_export
from elelem.conversation.generated import GeneratedFileBody
from elelem.conversation.log import Conversation
from elelem.conversation.postgres import PostgresStore
from elelem.conversation.projections import (
    ORPHAN_RESULT,
    Diagnostics,
    OrphanCall,
    Projection,
    TurnView,
    diagnose,
    native_history,
    overlay_for_patch,
    portable_history,
    project,
    turn_views,
)
from elelem.conversation.session import SESSION_NOTES, SessionNote
from elelem.conversation.sqlite import SQLiteStore
from elelem.conversation.store import Clock, ConversationInfo, SearchHit, Store, utc_now

DB_NAME = "elelem.db"


def default_store_path() -> Path:
    """Where the default store lives: ``$ELELEM_HOME/elelem.db``, else the
    platform's user data directory for elelem."""
    from elelem.home import home_dir  # loading the log loads no file helpers

    return home_dir() / DB_NAME


def open_store(url: str | os.PathLike[str] | None = None, *, clock: Clock | None = None) -> Store:
    """Open a store by URL.

    - ``None``: the default SQLite store (:func:`default_store_path`);
    - ``sqlite:///relative/path.db``, ``sqlite:////absolute/path.db`` or
      ``sqlite:///:memory:``, with an optional ``?synchronous=full`` and
      ``?timeout=SECONDS`` (how long to wait for another writer's lock, 30 by
      default);
    - a plain file path: a SQLite store there.

    - ``postgresql://user:password@host:port/database`` (needs the
      ``postgres`` extra), with ``?schema=name`` for the tables' schema
      (``elelem`` by default) and any libpq option (``sslmode=require``).
    """
    when = clock or utc_now
    if url is None:
        return SQLiteStore(default_store_path(), clock=when)
    text = os.fspath(url)
    if not text.strip():
        raise StoreError("the store URL is empty: give a path or a sqlite:// or postgresql:// URL")
    if "://" not in text:
        return SQLiteStore(text, clock=when)
    try:
        parts = urlsplit(text)
    except ValueError as exc:
        raise StoreError(f"the store URL is not a URL: {exc}") from None
    if parts.scheme == "sqlite":
        if parts.netloc:
            raise StoreError(
                f"sqlite URL {text!r} has a host; write sqlite:///relative or sqlite:////absolute"
            )
        path = unquote(parts.path[1:]) if parts.path.startswith("/") else unquote(parts.path)
        if not path:
            raise StoreError(f"sqlite URL {text!r} names no file")
        query = parse_qs(parts.query)
        sync = query.pop("synchronous", ["NORMAL"])[-1]
        wait = query.pop("timeout", ["30"])[-1]
        try:
            timeout = float(wait)
        except ValueError:
            raise StoreError(f"sqlite URL option timeout={wait!r} is not a number") from None
        if query:
            raise StoreError(f"unknown sqlite URL option(s): {', '.join(sorted(query))}")
        return SQLiteStore(path, synchronous=sync, clock=when, timeout=timeout)
    if parts.scheme in ("postgres", "postgresql"):
        from elelem.conversation.postgres import PostgresStore

        # ``schema`` is ours; every other option goes to the PostgreSQL driver.
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        schema = [v for k, v in pairs if k == "schema"]
        rest = urlencode([(k, v) for k, v in pairs if k != "schema"])
        dsn = urlunsplit(parts._replace(query=rest))
        return PostgresStore(dsn, schema=schema[-1] if schema else "elelem", clock=when)
    raise StoreError(f"unknown store URL scheme {parts.scheme!r} (expected sqlite)")


__all__ = [
    "ORPHAN_RESULT",
    "OVERLAY_KINDS",
    "SESSION_NOTES",
    "Awaiting",
    "Compaction",
    "ContextEdits",
    "Conversation",
    "ConversationInfo",
    "ConversationNotFound",
    "CorruptEventError",
    "Decision",
    "Diagnostics",
    "Draft",
    "Event",
    "EventError",
    "GeneratedFileBody",
    "HostedBody",
    "ImportRefused",
    "MessageBody",
    "OrphanCall",
    "PostgresStore",
    "Projection",
    "Repair",
    "ResponseRecord",
    "Rewind",
    "SQLiteStore",
    "SchemaVersionError",
    "SearchHit",
    "ServerRequest",
    "SessionNote",
    "Store",
    "StoreError",
    "StripReasoning",
    "StripSignature",
    "TurnStart",
    "TurnView",
    "WriterBusy",
    "decode_event",
    "default_store_path",
    "diagnose",
    "encode_event",
    "event_kinds",
    "export_conversation",
    "import_conversation",
    "native_history",
    "open_store",
    "overlay_for_patch",
    "portable_history",
    "project",
    "raw_body",
    "read_export",
    "register_event_kind",
    "turn_views",
]
