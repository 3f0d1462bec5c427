"""What ``elelem`` says when ``$ELELEM_STORE`` names a SQLite file that does
not exist: a folder that does not exist is refused (exit 2: a typo, not a
store to make), and a file that does not exist is made, but an empty
listing of it says so, so a typo in the file name never reads as an empty
history."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

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
    not exist (a :class:`~elelem.cli.common.Failure`, exit 2), note a file
    that does not exist yet (see :func:`new_store_note`)."""
    from elelem.cli.common import EXIT_USAGE, Failure

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
    """What an empty listing adds when ``$ELELEM_STORE`` named a file that
    did not exist (this process made it)."""
    if not _created:
        return ""
    return f" (ELELEM_STORE names {_created[-1]}, which did not exist: a new, empty store was made)"


__all__ = ["check_named_store", "named_store_file", "new_store_note"]
