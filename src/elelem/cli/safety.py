"""What keeps secrets and escapes off the command line's outputs.

Every secret in force for this process (each provider's key variables, the
AWS credentials, the config file's secret-looking header values) is known to
one :class:`~elelem.redaction.Redactor`; :func:`install` wraps stdout and
stderr so that every write — rendered answers, ``--json`` events, error
lines, ``--debug`` tracebacks — passes through it, and exports are redacted
with it.  :func:`scrub_error` cleans an exception (and its chain) before its
traceback is shown: secrets out, terminal escapes out.
"""

from __future__ import annotations

import errno
import io
import os
import sys
from collections.abc import Mapping
from typing import IO, Any

import click

from elelem.errors import ConfigError
from elelem.providers import BUILTIN, Catalog, load_catalog
from elelem.providers.cloud_credentials import AZURE_SECRET_ENV
from elelem.redaction import ProcessRedactor, Redactor, rewrite_error
from elelem.render import sanitize
from elelem.transport.endpoint import SECRET_HEADER

_AWS_SECRETS = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK")


CATALOG_META = "elelem.catalog"


def command_catalog() -> Catalog:
    """The catalog of the running command, loaded once and shared by
    everything the command does (the redactor, the model's resolution, the
    client); outside a command, a fresh load."""
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx is not None else None
    if root is not None and CATALOG_META in root.meta:
        return root.meta[CATALOG_META]  # type: ignore[no-any-return]
    catalog = load_catalog()
    if root is not None:
        root.meta[CATALOG_META] = catalog
    return catalog


def secrets_in_force(env: Mapping[str, str] | None = None) -> Redactor:
    """The redactor of every credential this process could send under ``env``
    (the process environment and the command's catalog by default), and of
    every secret the process holds when it is used (a token fetched later,
    see :class:`~elelem.redaction.ProcessRedactor`)."""
    try:
        catalog = command_catalog() if env is None else load_catalog(env=env)
    except ConfigError:
        # The command itself reports the bad config; its built-in keys still count.
        catalog = Catalog(BUILTIN)
    env = os.environ if env is None else env
    found: list[str] = []
    for name in catalog.names():
        spec = catalog.get(name)
        found.extend(env.get(var, "").strip() for var in spec.key_env)
        found.extend(v for k, v in spec.headers.items() if SECRET_HEADER.search(k))
        found.extend(spec.secret_header_values())
    found.extend(_saved_keys(catalog))
    found.extend(env.get(var, "").strip() for var in (*_AWS_SECRETS, *AZURE_SECRET_ENV))
    return ProcessRedactor(found)


def _saved_keys(catalog: Catalog) -> list[str]:
    try:
        return [key for name in catalog.names() if (key := catalog.stored_key(name))]
    except ConfigError:
        # An unreadable keys file holds no key this run can send; the command
        # that needs one reports the file.
        return []


class RedactingWriter(io.TextIOBase):
    """A text stream that redacts every write before passing it on.

    It exposes no ``buffer``: nothing can write around it.
    """

    def __init__(self, stream: IO[str], redactor: Redactor) -> None:
        super().__init__()
        self._stream = stream
        self._redactor = redactor

    @property
    def wrapped(self) -> IO[str]:
        """The stream written to."""
        return self._stream

    def write(self, text: str) -> int:
        """Write ``text`` redacted; returns the length of ``text`` as given."""
        self._stream.write(self._redactor.redact(text))
        return len(text)

    def flush(self) -> None:
        """Flush the wrapped stream."""
        self._stream.flush()

    def writable(self) -> bool:
        """Always True."""
        return True

    def isatty(self) -> bool:
        """Whether the wrapped stream is a terminal."""
        return self._stream.isatty()

    def fileno(self) -> int:
        """The wrapped stream's descriptor."""
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        """The wrapped stream's encoding."""
        return getattr(self._stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        """The wrapped stream's error handler."""
        return getattr(self._stream, "errors", None)


class ClosedStream(io.TextIOBase):
    """What stands for stdout when the command was started with it closed
    (``elelem log >&-``): it is no terminal, and every write, of text or of
    bytes (``.buffer``), is an :class:`OSError` saying so, which the command
    reports as one line; without it the first write was an AttributeError
    on None (exit 70)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, f"{self._name} is closed")

    @property
    def buffer(self) -> IO[bytes]:
        """The binary face: its writes fail the same way."""
        stream = self

        class _Bytes(io.RawIOBase):
            def writable(self) -> bool:
                return True

            def write(self, data: Any) -> int:
                return stream.write("")

        return _Bytes()  # type: ignore[return-value]


def mend_closed_streams() -> None:
    """A stdout closed at start becomes a :class:`ClosedStream` (writes fail
    with one clear line); a closed stderr, where no line can be shown,
    discards what is written to it."""
    if sys.stdout is None:
        sys.stdout = ClosedStream("stdout")
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the process's life


def install(redactor: Redactor) -> None:
    """Wrap ``sys.stdout`` and ``sys.stderr`` with ``redactor`` (once).

    A :class:`~elelem.redaction.ProcessRedactor` wraps them even when no
    secret is in force yet: a token fetched later must not reach them."""
    if not redactor and not isinstance(redactor, ProcessRedactor):
        return
    for name in ("stdout", "stderr"):
        stream: Any = getattr(sys, name)
        if stream is None or isinstance(stream, RedactingWriter):
            continue
        setattr(sys, name, RedactingWriter(stream, redactor))


def current_redactor() -> Redactor:
    """The redactor installed on stdout, else the secrets in force now."""
    stream: Any = sys.stdout
    if isinstance(stream, RedactingWriter):
        return stream._redactor
    return secrets_in_force()


def binary_stdout() -> IO[bytes]:
    """The binary stream under stdout, for data already redacted (an export)."""
    stream: Any = sys.stdout
    if isinstance(stream, RedactingWriter):
        stream = stream.wrapped
    return stream.buffer  # type: ignore[no-any-return]


def scrub_error(exc: BaseException, redactor: Redactor | None = None) -> BaseException:
    """``exc`` and its chain with secrets and terminal escapes removed from
    their text, in place, so its traceback is safe to print."""
    redact = (redactor or current_redactor()).redact
    return rewrite_error(exc, lambda text: sanitize(redact(text)))


__all__ = [
    "ClosedStream",
    "RedactingWriter",
    "binary_stdout",
    "command_catalog",
    "current_redactor",
    "install",
    "mend_closed_streams",
    "scrub_error",
    "secrets_in_force",
]
