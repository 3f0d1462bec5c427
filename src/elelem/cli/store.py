"""The conversation store a command opens."""

from __future__ import annotations

import os

from elelem.cli.exits import describe
from elelem.cli.safety import secrets_in_force
from elelem.conversation import Store, StoreError, open_store
from elelem.conversation.sqlbase import SQLStore


def store_from_env(*, persist: bool = True) -> Store:
    """The store: ``$ELELEM_STORE`` (a URL or path), else the default SQLite
    file under ``$ELELEM_HOME`` or the user data folder; with ``persist``
    False an in-memory store (``--no-store``)."""
    if not persist:
        return open_store("sqlite:///:memory:")
    url = os.environ.get("ELELEM_STORE") or None
    try:
        store = open_store(url)
    except OSError as exc:
        raise StoreError(f"cannot open the conversation store: {describe(exc)}") from None
    if isinstance(store, SQLStore):
        # Nothing secret at rest: a key echoed in any channel is redacted
        # before the event is written.
        store.redactor = secrets_in_force()
    return store
