"""The conversation store a command opens.

When ``$ELELEM_STORE`` names a SQLite file that does not exist: a folder
that does not exist is refused (exit 2: a typo, not a store to make), and a
file that does not exist is made, but an empty listing of it says so, so a
typo in the file name never reads as an empty history."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlsplit

from elelem.cli.exits import EXIT_USAGE, Failure, describe
from elelem.cli.safety import secrets_in_force
from elelem.conversation import Store, StoreError, open_store
from elelem.conversation.sqlbase import SQLStore


def store_from_env(*, persist: bool = True) -> Store:
    """The store: ``$ELELEM_STORE`` (a URL or path; a file in a folder that
    does not exist is refused, see :func:`check_named_store`), else the
    default SQLite file under ``$ELELEM_HOME`` or the user data folder; with
    ``persist`` False an in-memory store (``--no-store``)."""
    if not persist:
        return open_store("sqlite:///:memory:")
    url = os.environ.get("ELELEM_STORE") or None
    check_named_store(url)
    try:
        store = open_store(url)
    except OSError as exc:
        raise StoreError(f"cannot open the conversation store: {describe(exc)}") from None
    if isinstance(store, SQLStore):
        # Nothing secret at rest: a key echoed in any channel is redacted
        # before the event is written.
        store.redactor = secrets_in_force()
    return store


_created: list[str] = []
"""The SQLite file ``$ELELEM_STORE`` named that this process made."""


def named_store_file(url: str) -> Path | None:
    """The SQLite file ``$ELELEM_STORE`` names (a path, or a ``sqlite:///``
    URL as :func:`~elelem.conversation.open_store` reads it), else None."""
    if "://" not in url:
        path = url
    elif url.startswith("sqlite:///"):
        path = unquote(urlsplit(url).path[1:])
    else:
        return None
    return None if path in ("", ":memory:") else Path(path)


def check_named_store(url: str | None) -> None:
    """Before the store ``url`` is opened: refuse a file whose folder does
    not exist (a :class:`~elelem.cli.exits.Failure`, exit 2), note a file
    that does not exist yet (see :func:`new_store_note`)."""
    file = named_store_file(url) if url else None
    if file is None or file.exists():
        return
    if not file.parent.is_dir():
        raise Failure(
            f"ELELEM_STORE names {file}, whose folder {file.parent} does not exist: "
            "create the folder, or correct the path",
            EXIT_USAGE,
        )
    _created.append(str(file))


def new_store_note() -> str:
    """What an empty listing adds when ``$ELELEM_STORE`` names a file that
    did not exist (this process made it)."""
    # Only the store this command reads: a process that runs several
    # commands (a test runner, an embedding app) may have made others.
    url = os.environ.get("ELELEM_STORE") or None
    file = named_store_file(url) if url else None
    if file is None or str(file) not in _created:
        return ""
    return f" (ELELEM_STORE names {file}, which did not exist: a new, empty store was made)"


__all__ = ["check_named_store", "named_store_file", "new_store_note", "store_from_env"]
