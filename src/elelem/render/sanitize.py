"""Neutralize untrusted text before it reaches a terminal.

Model output, tool output, titles, URLs, excerpts and hosted summaries are
untrusted: any of them may carry terminal escape sequences (cursor moves, OSC 8
hyperlinks that hide their target, OSC 52 clipboard writes), C0/C1 controls,
bidirectional overrides that reorder what the reader sees, or links to
non-web schemes.  Stored bytes stay exact; only what is *displayed* passes
through here.
"""

from __future__ import annotations

import html
import ipaddress
import re
from urllib.parse import urlsplit

# Sequences are removed whole, so that nothing of their parameters leaks into
# the display either.  String sequences (OSC, DCS, SOS, PM, APC) run to their
# terminator (BEL or ST); an unterminated one runs to the end of the text, as
# a terminal would swallow it.
_STRING_INTRO = "\x1b[\\]PX^_]|[\x90\x98\x9d\x9e\x9f]"
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"  # CSI (final byte may be missing)
    r"|(?:" + _STRING_INTRO + r")[\s\S]*?(?:\x07|\x1b\\|\x9c|$)"  # OSC/DCS/SOS/PM/APC
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?",  # any other escape, or a lone ESC
)

# Controls other than \n and \t, DEL, C1; direction overrides, embeddings,
# isolates and marks; interlinear annotations; Unicode tag characters (used
# to smuggle invisible text); zero-width characters that join nothing (space,
# word joiner, invisible operators, BOM, Mongolian vowel separator).
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b\u200e\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
# ZWNJ and ZWJ shape Persian, Indic scripts and emoji between two visible
# characters; anywhere else (at an edge, beside a space, in a run) they only hide.
_LOOSE_JOINERS = re.compile("(?<!\\S)[\u200c\u200d]+|[\u200c\u200d]+(?!\\S)|[\u200c\u200d]{2,}")

SAFE_SCHEMES: frozenset[str] = frozenset({"http", "https"})


def sanitize(text: str) -> str:
    """Return ``text`` safe to write to a terminal.

    Escape sequences (CSI, OSC — OSC 8 hyperlinks and OSC 52 clipboard
    included —, DCS, SOS, PM, APC, and their 8-bit forms) are removed whole;
    other C0 and C1 controls, DEL, bidi overrides/isolates/marks, Unicode
    tag characters and zero-width characters are removed (ZWJ and ZWNJ are
    kept only between two visible characters, where scripts and emoji need
    them); ``\\r\\n``, a lone ``\\r`` (so it cannot overwrite what was shown
    before it) and U+2028/U+2029 become ``\\n``.
    ``\\n`` and ``\\t`` are kept.
    """
    if text.isprintable():
        return text  # the common case: nothing to do
    text = _ESCAPES.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # Line and paragraph separators break lines in some terminals and not in
    # others: one line break everywhere, so nothing hides on a line.
    text = text.replace("\u2028", "\n").replace("\u2029", "\n")
    text = _INVISIBLE.sub("", text)
    if "\u200c" in text or "\u200d" in text:
        text = _LOOSE_JOINERS.sub("", text)
    return text


def sanitize_line(text: str) -> str:
    """:func:`sanitize`, then fold every line break and tab into a space:
    for titles, queries and other text shown inside one line."""
    return " ".join(sanitize(text).split())


def decode_excerpt(text: str) -> str:
    """An excerpt for display: HTML entities decoded (search providers often
    return ``&amp;``-escaped snippets), then sanitized, since decoding can
    produce controls (``&#27;``) and bidi overrides (``&#x202E;``)."""
    return sanitize(html.unescape(text))


def safe_url(url: str) -> str | None:
    """The URL, sanitized to one line, if its scheme is http or https and a
    browser reads it as Python does; else None.

    A URL whose scheme is anything else (``javascript:``, ``file:``,
    ``data:``, …) or that has no host is not shown as a link, nor is one a
    browser's ``URL`` (the WHATWG URL Standard) would reject or read to
    another host: a host with a forbidden code point (``exa mple.com``,
    ``%``, ``^``, ``|``…), an invalid port, IPv4 or IPv6 address or IDNA
    label, an empty label, or any backslash (a browser reads ``\\`` as
    ``/``, so ``https://evil.example\\@good.example`` goes to evil.example).
    Stricter than a browser where the two could differ: such a URL is
    shown as text, never linked.
    """
    clean = sanitize_line(url)
    if "\\" in clean:
        return None
    try:
        parts = urlsplit(clean)
        port_ok = parts.port is None or 0 <= parts.port <= 65535
    except ValueError:
        return None
    if parts.scheme.lower() not in SAFE_SCHEMES or not parts.hostname or not port_ok:
        return None
    host_port = parts.netloc.rpartition("@")[2]
    bracketed = "[" in host_port or "]" in host_port
    if bracketed and _BRACKETED.fullmatch(host_port) is None:
        # Text beside the brackets (``[::1]x``, ``x[::1]``): Python takes
        # the address inside, a browser refuses the URL or reads it otherwise.
        return None
    if _browser_host(parts.hostname, bracketed=bracketed) is None:
        return None
    return clean


_FORBIDDEN_HOST = frozenset(" #%/:<>?@[\\]^|\x7f") | frozenset(map(chr, range(0x20)))
"""The WHATWG forbidden domain code points (``%`` included: a browser
decodes it first, and we do not link what needs decoding to be judged)."""
_NUMERIC_LABEL = re.compile(r"[0-9]+|0[xX][0-9a-fA-F]*")
_BRACKETED = re.compile(r"\[[^\[\]]*\](?::[0-9]*)?")
"""An IPv6 host as a URL writes it: the brackets, then a port or nothing."""


def _browser_host(host: str, *, bracketed: bool) -> str | None:
    """``host`` (lower-case, as :func:`~urllib.parse.urlsplit` gives it) in
    the ASCII form a browser would use, or None where a browser would
    reject it (or might read it otherwise)."""
    if bracketed:
        try:
            return f"[{ipaddress.IPv6Address(host).compressed}]"
        except ValueError:
            return None
    if not host or any(c in _FORBIDDEN_HOST for c in host):
        return None
    try:
        ascii_host = host.encode("idna").decode("ascii")
        labels = ascii_host.split(".")
        for label in labels:
            label.encode("ascii").decode("idna")  # an xn-- label must decode
    except (UnicodeError, ValueError):
        return None
    if labels[-1] == "":
        labels.pop()  # one trailing dot: the root, allowed
    if not labels or "" in labels:
        return None
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        # A browser reads the whole host as IPv4: only the plain dotted form.
        try:
            return str(ipaddress.IPv4Address(".".join(labels)))
        except ValueError:
            return None
    return ascii_host


def url_scheme(url: str) -> str:
    """The (sanitized, lower-case) scheme of ``url``, or ``""`` if it has none."""
    head, sep, _ = sanitize_line(url).partition(":")
    if not sep or not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", head):
        return ""
    return head.lower()


def domain(url: str) -> str:
    """The host of an http(s) URL without ``www.``, or ``""``."""
    clean = safe_url(url)
    if clean is None:
        return ""
    host = urlsplit(clean).hostname or ""
    return host.removeprefix("www.")


_MD_LINK = re.compile(r"(\]\(\s*<?)([A-Za-z][A-Za-z0-9+.-]*):")
_MD_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]*):([^<>\s]*)>")


def neutralize_markdown_links(text: str) -> str:
    """Disarm Markdown links and autolinks whose scheme is not http(s).

    ``[x](javascript:…)`` keeps its text but loses its scheme
    (``[x](unsafe-javascript…)`` is not a URL any renderer follows), and
    ``<file:…>`` autolinks are shown as plain text.
    """

    def link(match: re.Match[str]) -> str:
        scheme = match.group(2)
        if scheme.lower() in SAFE_SCHEMES or scheme.lower() == "mailto":
            return match.group(0)
        return f"{match.group(1)}unsafe-{scheme}-"

    def autolink(match: re.Match[str]) -> str:
        scheme = match.group(1)
        if scheme.lower() in SAFE_SCHEMES or scheme.lower() == "mailto":
            return match.group(0)
        return f"\\<unsafe-{scheme}-{match.group(2)}\\>"

    return _MD_AUTOLINK.sub(autolink, _MD_LINK.sub(link, text))


__all__ = [
    "SAFE_SCHEMES",
    "decode_excerpt",
    "domain",
    "neutralize_markdown_links",
    "safe_url",
    "sanitize",
    "sanitize_line",
    "url_scheme",
]
