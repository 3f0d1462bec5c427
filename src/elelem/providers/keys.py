"""API keys saved by ``elelem keys set``: one JSON file readable only by its owner.

The file maps provider names to keys (``{"anthropic": "sk-ant-…"}``).  It
lives at ``$ELELEM_KEYS`` when set, else ``keys.json`` under
``$ELELEM_HOME``, else under the user data folder (beside the default
store).  It is written with mode 0600 in a folder of mode 0700, replaced
atomically, and never read when its mode lets others read it (a key another
user could read is not a secret any more: the error says how to fix it).

A provider's environment variable always wins over the file, so a one-off
``ANTHROPIC_API_KEY=… elelem ask …`` needs no change to what is saved.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from elelem.errors import ConfigError
from elelem.home import home_dir, private_parent

KEYS_FILE = "keys.json"


def keys_path(env: Mapping[str, str] | None = None) -> Path:
    """Where saved keys live (see the module doc)."""
    env = os.environ if env is None else env
    explicit = env.get("ELELEM_KEYS")
    if explicit:
        return Path(explicit).expanduser()
    return home_dir(env) / KEYS_FILE


def check_key(provider: str, key: str) -> str:
    """``key`` stripped, or a :class:`~elelem.errors.ConfigError` naming the
    provider (never the value) when it is empty or could not go in a header."""
    value = key.strip()
    if not value:
        raise ConfigError(f"the key for {provider} is empty")
    if not value.isascii() or not value.isprintable():
        raise ConfigError(
            f"the key for {provider} holds a character a header cannot carry "
            "(non-ASCII, a control character or a line break)"
        )
    return value


def load_keys(path: Path | None = None) -> dict[str, str]:
    """The saved keys ({} when there is no file).

    Raises :class:`~elelem.errors.ConfigError` naming the file when it is
    readable by others, not JSON, or not an object of strings.
    """
    file = keys_path() if path is None else path
    try:
        mode = file.stat().st_mode
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read the keys file: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise ConfigError(f"{file}: the keys file is not a regular file")
    if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(
            f"{file}: the keys file is readable by other users; run: chmod 600 {file}"
        )
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{file}: the keys file is not valid JSON ({exc})") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read the keys file: {exc.strerror or exc}") from None
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise ConfigError(f"{file}: the keys file must be a JSON object of provider: key strings")
    return data


def save_key(provider: str, key: str, path: Path | None = None) -> Path:
    """Save ``key`` for ``provider`` (replacing any), atomically, mode 0600."""
    file = keys_path() if path is None else path
    keys = load_keys(file)
    keys[provider] = check_key(provider, key)
    _write(file, keys)
    return file


def remove_key(provider: str, path: Path | None = None) -> bool:
    """Forget the saved key of ``provider``; False when none was saved."""
    file = keys_path() if path is None else path
    keys = load_keys(file)
    if keys.pop(provider, None) is None:
        return False
    _write(file, keys)
    return True


def _write(file: Path, keys: Mapping[str, str]) -> None:
    private_parent(file)
    fd, tmp = tempfile.mkstemp(prefix=".keys-", dir=file.parent)
    try:
        # mkstemp creates the file 0600 already; say so for any umask.
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(dict(sorted(keys.items())), out, indent=2)
            out.write("\n")
        os.replace(tmp, file)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


__all__ = ["KEYS_FILE", "check_key", "keys_path", "load_keys", "remove_key", "save_key"]
