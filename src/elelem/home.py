"""elelem's home folder and the private files in it.

The home (``$ELELEM_HOME``, else the platform's user data folder) holds the
saved keys and the conversation store: both are private, so the home is
mode 0700 — made so when it is created, and tightened when it already
exists looser (a folder made by hand under a umask of 022).  Files are
created 0600 whatever the umask.

Imports nothing of elelem: the providers' keys and the conversation store
both use it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def home_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$ELELEM_HOME`` (of ``env``, else of the process), else the
    platform's user data folder for elelem."""
    home = (os.environ if env is None else env).get("ELELEM_HOME")
    if home:
        return Path(home).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("elelem", appauthor=False))


def private_parent(file: Path) -> None:
    """Make ``file``'s folder; when it is elelem's home, make it 0700 even if
    it existed (a folder a user named elsewhere is theirs, left as it is)."""
    folder = file.parent
    folder.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    if os.name == "posix" and folder.resolve() == home_dir().resolve():
        st = folder.stat()
        if stat.S_IMODE(st.st_mode) & (stat.S_IRWXG | stat.S_IRWXO) and st.st_uid == os.getuid():
            folder.chmod(PRIVATE_DIR)


def create_private(file: Path) -> None:
    """Create ``file`` empty with mode 0600 when it does not exist (never
    following a symlink planted there); an existing file is left as it is."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(file, flags, PRIVATE_FILE)
    except FileExistsError:
        return
    os.close(fd)


__all__ = ["PRIVATE_DIR", "PRIVATE_FILE", "create_private", "home_dir", "private_parent"]
