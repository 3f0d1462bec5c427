"""elelem.render.sanitize: untrusted text made safe for a terminal, exactly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elelem.render.sanitize import (
    decode_excerpt,
    domain,
    neutralize_markdown_links,
    safe_url,
    sanitize,
    sanitize_line,
    url_scheme,
)

CASES = [
    ("plain text stays", "plain text stays"),
    ("tab\tand\nnewline kept", "tab\tand\nnewline kept"),
    ("a\x1b[2J\x1b[Hb", "ab"),  # clear screen, cursor home
    ("a\x1b[10A\x1b[5Cb", "ab"),  # cursor up, cursor forward
    ("a\x1b[38;2;255;0;0mred\x1b[0m", "ared"),  # SGR from outside is not ours either
    ("x\x1b]8;;javascript:alert(1)\x1b\\click\x1b]8;;\x1b\\y", "xclicky"),  # OSC 8, ST
    ("x\x1b]8;;https://evil\x07click\x1b]8;;\x07y", "xclicky"),  # OSC 8, BEL
    ("\x1b]52;c;ZXZpbA==\x07ok", "ok"),  # OSC 52 clipboard write
    ("\x1b]0;new title\x1b\\ok", "ok"),  # window title
    ("\x1bP+q544e\x1b\\ok", "ok"),  # DCS
    ("\x1bXsos\x1b\\\x1b^pm\x1b\\\x1b_apc\x1b\\ok", "ok"),  # SOS, PM, APC
    ("\x9b31mred", "red"),  # 8-bit CSI
    ("\x9d0;title\x9cok", "ok"),  # 8-bit OSC with 8-bit ST
    ("\x90dcs\x9cok", "ok"),  # 8-bit DCS
    ("a\x85b\x8dc\x81d", "abcd"),  # other C1 controls
    ("a\x9fapc\x9cb", "ab"),  # 8-bit APC
    ("a\x1bcb", "ab"),  # RIS (full reset)
    ("a\x1b(Bb", "ab"),  # charset designation
    ("a\x1b", "a"),  # lone ESC at the end
    ("a\x1b]52;c;unterminated", "a"),  # unterminated OSC swallows the rest
    ("bell\x07 bs\x08 vt\x0b ff\x0c del\x7f nul\x00", "bell bs vt ff del nul"),
    ("safe\roverwrite", "safe\noverwrite"),  # CR cannot overwrite
    ("crlf\r\nline", "crlf\nline"),
    ("A\u202eevil\u202cZ", "AevilZ"),  # RLO … PDF
    ("\u202a\u202b\u202d", ""),  # LRE RLE LRO
    ("\u2066iso\u2067\u2068\u2069", "iso"),  # isolates
    ("\u200e\u200f\u061c", ""),  # LRM RLM ALM
    ("hidden\U000e0041\U000e0042tags", "hiddentags"),  # tag characters
    ("ﬁne ünïcödé 日本語 👩‍💻", "ﬁne ünïcödé 日本語 👩‍💻"),  # ZWJ kept
]


@pytest.mark.parametrize(("raw", "shown"), CASES)
def test_sanitize_exact(raw: str, shown: str) -> None:
    assert sanitize(raw) == shown


def test_sanitize_line_folds_breaks() -> None:
    assert sanitize_line("  a\nb\tc\r\x1b[2Kd  ") == "a b c d"


def test_excerpt_entities_decoded_for_display_only() -> None:
    raw = "Tom &amp; Jerry &#8212; &lt;b&gt; &#x1b;[31m &#x202E;x &nbsp;"
    assert decode_excerpt(raw) == "Tom & Jerry — <b> [31m x \xa0"
    # The stored value is never touched: decoding is a display step.
    assert raw == "Tom &amp; Jerry &#8212; &lt;b&gt; &#x1b;[31m &#x202E;x &nbsp;"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://example.com/a?b=c", "https://example.com/a?b=c"),
        ("HTTP://Example.com", "HTTP://Example.com"),
        ("https://ex.com/\x1b]8;;x\x07p", "https://ex.com/p"),
        ("javascript:alert(1)", None),
        ("JaVaScRiPt:alert(1)", None),
        ("java\x1b[0mscript:alert(1)", None),
        ("file:///etc/passwd", None),
        ("data:text/html,<script>", None),
        ("https:///nohost", None),
        ("//example.com/x", None),
    ],
)
def test_safe_url(url: str, shown: str | None) -> None:
    assert safe_url(url) == shown


def test_domain_and_scheme() -> None:
    assert domain("https://www.nasa.gov/x") == "nasa.gov"
    assert domain("javascript:alert(1)") == ""
    assert url_scheme("JavaScript:alert(1)") == "javascript"
    assert url_scheme("no scheme here") == ""


def test_markdown_links_neutralized() -> None:
    text = "[a](javascript:alert(1)) [b](https://x.org) [c]( <data:x> ) <file:///etc/passwd> <https://ok.org> [m](mailto:a@b.c)"
    assert neutralize_markdown_links(text) == (
        "[a](unsafe-javascript-alert(1)) [b](https://x.org) [c]( <unsafe-data-x> ) "
        "\\<unsafe-file-///etc/passwd\\> <https://ok.org> [m](mailto:a@b.c)"
    )


_FORBIDDEN = set(map(chr, [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)])) | set(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(sorted(_FORBIDDEN) + list("ab[]();P_^X\\\n\t7m"))))
def test_nothing_forbidden_survives(text: str) -> None:
    out = sanitize(text)
    assert not (set(out) & _FORBIDDEN)
    assert sanitize(out) == out  # idempotent
