"""The one secrets redactor: every secret in force, in every echo encoding.

A provider may echo a credential back in an error (the whole key, a prefix
of it, or the key as it appears inside JSON or a URL), and that text then
travels into error messages, the stored response record, ``--json`` events,
``--debug`` tracebacks, exports and log lines.  :class:`Redactor` knows the
secrets in force for a request (API keys, bearer tokens, SigV4 secret keys
and session tokens, secret config headers, MCP authorization) and replaces,
wherever it finds them:

- the secret itself;
- any mix, character by character, of its JSON escapes (``\\u0041``, any
  case of hex, any number of backslashes, so escaped-again JSON too), its
  ``\\/`` escape and its URL encoding (``%41``, ``%2541`` encoded twice);
- any mix of its HTML character references (``&#115;``, ``&#x73;``,
  ``&lowbar;``…), as a page or an error body escapes it;
- a truncated prefix: at least :data:`MIN_PREFIX` characters, or half the
  secret when that is longer (a secret shorter than that only whole);
- its base64 (standard or URL-safe), in any of the three alignments
  (``Basic`` credentials echo it so), whole.

Secrets are checked when they come into force (:func:`check_secret`): one
holding CR, LF, another control or a non-ASCII character is a
:class:`~elelem.errors.ConfigError` before any request is made, naming where
it came from and never the value.

Secrets the process fetches or holds at run time (a cloud access token, a
refresh token, a client secret, a managed-identity header, an MCP OAuth
token) join the one process-wide set as soon as they are held
(:func:`hold_secrets`, or :func:`hold` for an object whose secrets change);
a :class:`ProcessRedactor` removes them, with the secrets it was built
from, wherever it is used: the command line's stdout and stderr, its
``--json`` events, the store, exports, ``serve`` and its UI stream, and the
tracer's captured content.

Like :mod:`elelem.errors`, this module imports nothing else of elelem, so
every layer (transport, conversation, the command line) may use it.
"""

from __future__ import annotations

import base64
import itertools
import re
import threading
import weakref
from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Any, AnyStr, Generic, TypeVar

from elelem.errors import ConfigError

REDACTED = "[redacted]"
"""What a secret is replaced with."""

MIN_SECRET = 4
"""Shorter values are not redacted: they would hit ordinary text and protect nothing."""

MIN_PREFIX = 8
"""The shortest prefix of a secret that counts as an echo of it."""


def check_secret(value: str, where: str) -> None:
    """Raise :class:`~elelem.errors.ConfigError` when ``value`` cannot be a
    credential on the wire: a control character (CR and LF included) or a
    character outside printable ASCII.  ``where`` names its origin
    (a variable, a header, a file); the value itself is never shown."""
    for position, char in enumerate(value):
        if not " " <= char <= "~":
            what = (
                "a line break"
                if char in "\r\n"
                else (
                    "a control character"
                    if char < " " or char == "\x7f"
                    else "a non-ASCII character"
                )
            )
            raise ConfigError(
                f"{where}: the value holds {what} at position {position}; "
                "credentials and headers must be printable ASCII"
            )


def _hex(value: int, width: int) -> str:
    # Hex digits in either case: JSON and URL encoders differ.
    digits = f"{value:0{width}x}"
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in digits)


def _char_form(char: str) -> str:
    """A pattern for one character of a secret in any of its echo encodings."""
    code = ord(char)
    forms = [re.escape(char), r"\\+u" + _hex(code, 4)]
    # surrogateescape: a variable holding bytes that are not UTF-8 (a lone
    # surrogate to Python) is still a secret, and its echo its own bytes.
    raw = char.encode("utf-8", "surrogateescape")
    forms.extend("%(?:25)*" + _hex(byte, 2) for byte in raw[:1])
    # HTML character references: decimal, hex (any case, zero-padded), named.
    forms += [f"&#0*{code};", "&#[xX]0*" + _hex(code, 1).lstrip("0") + ";"]
    forms.extend(re.escape(f"&{name}") for name in _ENTITY_NAMES.get(char, ()))
    if not char.isalnum():
        forms.append(r"\\+" + re.escape(char))  # \/ and its kin
    return "(?:" + "|".join(forms) + ")"


def _entity_names() -> dict[str, tuple[str, ...]]:
    from html.entities import html5

    names: dict[str, list[str]] = {}
    for name, value in html5.items():
        if name.endswith(";") and len(value) == 1 and " " < value <= "~":
            names.setdefault(value, []).append(name)
    return {char: tuple(found) for char, found in names.items()}


_ENTITY_NAMES = _entity_names()
"""Printable ASCII characters' named references (``&lowbar;``, ``&period;``…)."""

MIN_BASE64_CORE = 12
"""The shortest run of base64 that counts as a secret's echo."""


def base64_cores(secret: str) -> list[str]:
    """The runs of base64 (standard and URL-safe) that encode ``secret``
    whatever bytes stand before and after it: for each of the three
    alignments, the characters its bytes alone determine."""
    data = secret.encode("utf-8", "surrogateescape")
    cores = []
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + data + bytes(3))
        start = -(-8 * offset // 6)  # the first character of the secret's bits only
        end = 8 * (offset + len(data)) // 6
        core = encoded[start:end].decode("ascii")
        if len(core) >= MIN_BASE64_CORE:
            cores += [core, core.replace("+", "-").replace("/", "_")]
    return cores


def prefix_length(secret: str) -> int:
    """How many leading characters of ``secret`` make an echo of it."""
    return min(len(secret), max(MIN_PREFIX, len(secret) // 2))


_REDACTED_BYTES = REDACTED.encode("ascii")


class _Compiled(Generic[AnyStr]):
    """A redactor's patterns compiled over text, or over bytes."""

    __slots__ = ("base64", "steps")

    def __init__(
        self, sources: tuple[list[tuple[str, list[str]]], str | None], to: Callable[[str], AnyStr]
    ) -> None:
        steps, base64 = sources
        self.steps: tuple[tuple[re.Pattern[AnyStr], tuple[re.Pattern[AnyStr], ...]], ...] = tuple(
            (re.compile(to(head)), tuple(re.compile(to(form)) for form in rest))
            for head, rest in steps
        )
        self.base64: re.Pattern[AnyStr] | None = None if base64 is None else re.compile(to(base64))


def _spans(patterns: _Compiled[AnyStr], text: AnyStr) -> list[tuple[int, int]]:
    """Where ``text`` echoes a secret of ``patterns``, merged (see :meth:`Redactor.spans`)."""
    found: list[tuple[int, int]] = []
    for head, rest in patterns.steps:
        for match in head.finditer(text):
            end = match.end()
            for step in rest:
                more = step.match(text, end)
                if more is None:
                    break
                end = more.end()
            found.append((match.start(), end))
    if patterns.base64 is not None:
        found += [(m.start(), m.end()) for m in patterns.base64.finditer(text)]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _ascii(source: str) -> bytes:
    return source.encode("ascii")


class Redactor:
    """Removes every secret it knows, in any echo encoding, from text.

    Build one from the secrets in force (values shorter than
    :data:`MIN_SECRET` are ignored); :meth:`extend` adds more.  A redactor
    with no secrets returns its input unchanged at the cost of one check.
    """

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        found = {s for s in secrets if s and len(s) >= MIN_SECRET}
        # Longest first: a secret that contains another is removed whole.
        self._secrets: tuple[str, ...] = tuple(sorted(found, key=lambda s: (-len(s), s)))

    @property
    def secrets(self) -> tuple[str, ...]:
        """The secrets this redactor removes (never show them)."""
        return self._secrets

    def extend(self, secrets: Iterable[str | None]) -> Redactor:
        """A redactor that removes these secrets too."""
        return Redactor((*self._secrets, *secrets))

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def __repr__(self) -> str:
        return f"Redactor({len(self._secrets)} secrets)"

    @cached_property
    def _sources(self) -> tuple[list[tuple[str, list[str]]], str | None]:
        # Per secret: the mandatory prefix as one pattern, then one pattern per
        # further character, tried in turn to extend a match as far as it goes
        # (one nested pattern would be as deep as the secret is long).  Then
        # every base64 core in one alternation, longest first.
        steps = []
        for secret in self._secrets:
            cut = prefix_length(secret)
            head = "".join(_char_form(c) for c in secret[:cut])
            steps.append((head, [_char_form(c) for c in secret[cut:]]))
        cores = {core for secret in self._secrets for core in base64_cores(secret)}
        base64 = "|".join(re.escape(c) for c in sorted(cores, key=len, reverse=True))
        return steps, base64 or None

    @cached_property
    def _patterns(self) -> _Compiled[str]:
        return _Compiled(self._sources, str)

    @cached_property
    def _byte_patterns(self) -> _Compiled[bytes] | None:
        # Every form of an ASCII secret is ASCII and matches ASCII alone, and
        # UTF-8 (surrogateescape) maps ASCII bytes one to one onto ASCII
        # characters, never inside another character: the same patterns over
        # the bytes find the same echoes at the same places, without a copy
        # of the bytes as text.  A secret that is not ASCII is matched over
        # the decoded text (None here).
        if not all(secret.isascii() for secret in self._secrets):
            return None
        return _Compiled(self._sources, _ascii)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where ``text`` echoes a secret: ``(start, end)`` pairs, sorted,
        overlapping ones merged (what :meth:`redact` replaces)."""
        if not self._secrets or not text:
            return []
        return _spans(self._patterns, text)

    @property
    def echo_bound(self) -> int:
        """More characters than any echo of a secret takes (its longest
        escaped form): text that far from its end is judged whole."""
        return 10 * max((len(s) for s in self._secrets), default=0)

    def redact(self, text: str) -> str:
        """``text`` with every echo of every secret replaced by :data:`REDACTED`."""
        spans = self.spans(text)
        if not spans:
            return text
        pieces: list[str] = []
        start = 0
        for begin, end in spans:
            pieces += [text[start:begin], REDACTED]
            start = end
        pieces.append(text[start:])
        return "".join(pieces)

    def redact_bytes(self, data: bytes) -> bytes:
        """``data`` with every echo of every secret replaced; bytes that are
        not UTF-8 pass through unchanged.  ``data`` itself when it echoes
        none; scanned as bytes, without a copy of it as text (#41)."""
        if not self._secrets or not data:
            return data
        patterns = self._byte_patterns
        if patterns is None:
            text = data.decode("utf-8", "surrogateescape")
            clean = self.redact(text)
            return data if clean == text else clean.encode("utf-8", "surrogateescape")
        spans = _spans(patterns, data)
        if not spans:
            return data
        # Views of ``data``, not slices: the result is the one copy made.
        whole = memoryview(data)
        pieces: list[bytes | memoryview] = []
        start = 0
        for begin, end in spans:
            pieces += [whole[start:begin], _REDACTED_BYTES]
            start = end
        pieces.append(whole[start:])
        return b"".join(pieces)

    def redact_error(self, exc: BaseException) -> BaseException:
        """Redact ``exc`` in place, and every exception chained to it (see
        :func:`rewrite_error`).  Returns ``exc``."""
        if self._secrets:
            rewrite_error(exc, self.redact)
        return exc


def rewrite_error(exc: BaseException, clean: Callable[[str], str]) -> BaseException:
    """Pass the text of ``exc`` and of every exception chained to it through
    ``clean``, in place: string (and UTF-8 bytes) arguments, notes, and the
    text attributes errors carry (``message``, ``provider_message``,
    ``body``, ``detail``; an ``OSError``'s ``strerror`` and ``filename``), so
    that its message and its traceback show only cleaned text."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        _rewrite_one(current, clean)
        pending.extend(e for e in (current.__context__, current.__cause__) if e is not None)
    return exc


def _rewrite_one(exc: BaseException, clean: Callable[[str], str]) -> None:
    def value(item: object) -> object:
        if isinstance(item, str):
            return clean(item)
        if isinstance(item, bytes):
            text = item.decode("utf-8", "surrogateescape")
            return clean(text).encode("utf-8", "surrogateescape")
        return item

    exc.args = tuple(value(a) for a in exc.args)
    # Instance attributes only: a property computed from args is clean now.
    own = getattr(exc, "__dict__", {})
    names = [n for n in ("message", "provider_message", "body", "detail") if n in own]
    if isinstance(exc, OSError):
        names += ["strerror", "filename", "filename2"]
    for name in names:
        given = getattr(exc, name)
        if given is not None:
            # Set to None, an OSError's filename prints as "None" (CPython
            # tests the slot, not its value): one not given stays unset.
            setattr(exc, name, value(given))
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, list):
        notes[:] = [value(n) for n in notes]


NO_SECRETS = Redactor()
"""The redactor that knows no secret."""


MAX_HELD = 1024
"""How many values :func:`hold_secrets` keeps (the oldest go first)."""

_Owner = TypeVar("_Owner")
_lock = threading.Lock()
_held: dict[str, None] = {}
_holders: weakref.WeakKeyDictionary[Any, tuple[str, ...]] = weakref.WeakKeyDictionary()
_versions = itertools.count(1)


class _State:
    version = 0
    """Bumped at each change of what is held (a plain assignment: a holder's
    finalizer may run in any thread, within any lock)."""
    snapshot: tuple[int, tuple[str, ...]] = (0, ())


def _changed() -> None:
    _State.version = next(_versions)


def hold_secrets(*values: str | None) -> None:
    """Make ``values`` secrets of the whole process from now on: every
    :class:`ProcessRedactor` removes them (values shorter than
    :data:`MIN_SECRET` are ignored, like everywhere)."""
    found = [v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET]
    if not found:
        return
    with _lock:
        for value in found:
            _held.pop(value, None)
            _held[value] = None
        for stale in list(_held)[: max(0, len(_held) - MAX_HELD)]:
            del _held[stale]
    _changed()


def hold(owner: _Owner, secrets: Callable[[_Owner], Iterable[str | None]]) -> _Owner:
    """Make ``secrets(owner)`` (taken now) secrets of the whole process for
    as long as ``owner`` lives (it is held weakly); what it holds later (a
    refreshed token) it makes the process's with :func:`hold_secrets`.
    Returns ``owner``."""
    values = tuple(v for v in secrets(owner) if v is not None and len(v) >= MIN_SECRET)
    with _lock:
        _holders[owner] = values
    weakref.finalize(owner, _changed)
    _changed()
    return owner


def held_secrets() -> tuple[str, ...]:
    """Every secret the process holds now (never show them); the same tuple
    until what is held changes."""
    version, snapshot = _State.version, _State.snapshot
    if snapshot[0] == version:
        return snapshot[1]
    with _lock:
        found = [*_held, *(v for values in _holders.values() for v in values)]
    held = tuple(dict.fromkeys(found))
    _State.snapshot = (version, held)
    return held


class ProcessRedactor(Redactor):
    """A :class:`Redactor` of the secrets it is built from and of every
    secret the process holds at the moment it is used (:func:`held_secrets`):
    a token fetched after it was made is removed all the same."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        super().__init__(secrets)
        self._base = Redactor(self._secrets)
        self._now: tuple[tuple[str, ...], Redactor] = ((), self._base)
        self._now_lock = threading.Lock()

    def current(self) -> Redactor:
        """The plain redactor of every secret in force now."""
        held = held_secrets()
        now = self._now
        if held is now[0]:
            return now[1]  # nothing changed since: the common case, no lock
        with self._now_lock:
            if held != self._now[0]:
                self._now = (held, self._base.extend(held) if held else self._base)
            else:
                self._now = (held, self._now[1])
            return self._now[1]

    @property
    def secrets(self) -> tuple[str, ...]:
        """The secrets this redactor removes now (never show them)."""
        return self.current().secrets

    def extend(self, secrets: Iterable[str | None]) -> Redactor:
        """A process redactor that removes these secrets too."""
        return ProcessRedactor((*self._secrets, *secrets))

    def __bool__(self) -> bool:
        return bool(self.current())

    def __repr__(self) -> str:
        return f"ProcessRedactor({len(self.secrets)} secrets)"

    def spans(self, text: str) -> list[tuple[int, int]]:
        """See :meth:`Redactor.spans`."""
        return self.current().spans(text)

    @property
    def echo_bound(self) -> int:
        """See :attr:`Redactor.echo_bound`."""
        return self.current().echo_bound

    def redact(self, text: str) -> str:
        """See :meth:`Redactor.redact`."""
        return self.current().redact(text)

    def redact_bytes(self, data: bytes) -> bytes:
        """See :meth:`Redactor.redact_bytes`."""
        return self.current().redact_bytes(data)

    def redact_error(self, exc: BaseException) -> BaseException:
        """See :meth:`Redactor.redact_error`."""
        return self.current().redact_error(exc)


PROCESS_SECRETS = ProcessRedactor()
"""The redactor of every secret the process holds (see :func:`hold_secrets`)."""


__all__ = [
    "MAX_HELD",
    "MIN_PREFIX",
    "MIN_SECRET",
    "NO_SECRETS",
    "PROCESS_SECRETS",
    "REDACTED",
    "ProcessRedactor",
    "Redactor",
    "base64_cores",
    "check_secret",
    "held_secrets",
    "hold",
    "hold_secrets",
    "prefix_length",
    "rewrite_error",
]
