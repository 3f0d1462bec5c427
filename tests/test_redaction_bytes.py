"""Redacting bytes scans the bytes themselves (issue #41: a 100 MB answer's
encoded event was decoded whole to text on every append to the store, one
more copy of its size while the text and the bytes were held).

Every form of an ASCII secret is ASCII, so the redactor's patterns run over
the UTF-8 bytes and find what they find over the decoded text, at the same
places: checked here form by form, among non-ASCII text and bytes that are
not UTF-8.  A secret that is not ASCII is still matched over the text.  The
cost is counted with ``tracemalloc``: before, the scan held a copy of the
whole input as text (1x its size); now, nothing of its size.
"""

from __future__ import annotations

import base64
import tracemalloc

import pytest

from elelem.redaction import REDACTED, Redactor

SECRET = "sk-ant-api03-Zx/9_q+T"
TOKEN = "ya29.a0AfH6SMB-token.0123"


def _json_escaped(text: str, backslashes: int = 1) -> str:
    return "".join(
        "\\" * backslashes + f"u{ord(c):04X}" if i % 2 else c for i, c in enumerate(text)
    )


def _url_encoded(text: str, times: int) -> str:
    return "".join("%" + "25" * (times - 1) + f"{ord(c):02x}" for c in text)


ECHOES = [
    SECRET,
    TOKEN,
    _json_escaped(SECRET),
    _json_escaped(SECRET, backslashes=7),
    SECRET.replace("/", "\\/"),
    SECRET.replace("/", "\\\\\\\\/"),
    _url_encoded(SECRET, 1),
    _url_encoded(SECRET, 40),
    "".join(f"&#{ord(c)};" for c in SECRET),
    "".join(f"&#X{ord(c):X};" for c in TOKEN),
    SECRET.replace("_", "&lowbar;").replace("/", "&sol;").replace("+", "&plus;"),
    SECRET[:12],
    TOKEN[:15] + "…",
    base64.b64encode(SECRET.encode()).decode(),
    base64.b64encode(b"user:" + TOKEN.encode()).decode(),
    base64.urlsafe_b64encode(b"xy" + SECRET.encode()).decode(),
]


def _as_text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


@pytest.mark.parametrize("echo", ECHOES)
def test_bytes_are_redacted_as_their_text_is(echo: str) -> None:
    redactor = Redactor([SECRET, TOKEN])
    around = ("é ✓ 🙂 ", b"\xff\xc3 \xe2\x82", "\u00a0x", b"\x80")
    data = b"".join(p if isinstance(p, bytes) else p.encode() for p in around[:2])
    data += echo.encode() + b"".join(p if isinstance(p, bytes) else p.encode() for p in around[2:])
    clean = redactor.redact_bytes(data)
    assert clean == redactor.redact(_as_text(data)).encode("utf-8", "surrogateescape")
    assert clean.count(REDACTED.encode()) == 1
    assert clean.startswith("é ✓ 🙂 ".encode() + b"\xff\xc3 \xe2\x82")
    assert SECRET[:8].encode() not in clean and TOKEN[:8].encode() not in clean


def test_bytes_echoing_no_secret_come_back_as_they_are() -> None:
    data = "a reply with é and sk-ant-ap cut short".encode() + b"\xff"
    assert Redactor([SECRET]).redact_bytes(data) is data


def test_several_echoes_in_one_body_are_each_replaced() -> None:
    data = b'{"text":"' + "…".join(ECHOES).encode() + b'"}'
    clean = Redactor([SECRET, TOKEN]).redact_bytes(data)
    assert clean == Redactor([SECRET, TOKEN]).redact(data.decode()).encode()
    assert clean.startswith(b'{"text":"' + REDACTED.encode()) and clean.endswith(b'"}')


def test_a_secret_that_is_not_ascii_is_matched_over_the_text() -> None:
    # A variable holding bytes that are not UTF-8 (a lone surrogate to Python).
    secret = "tok-\udcff-0123456789"
    data = b"<" + secret.encode("utf-8", "surrogateescape") + b">"
    assert Redactor([secret, SECRET]).redact_bytes(data) == b"<" + REDACTED.encode() + b">"


def _scan_peak(size: int) -> int:
    redactor = Redactor([SECRET, TOKEN])
    echo = _json_escaped(SECRET, backslashes=3).encode()
    filler = b"word " * (size // 10)
    data = b'{"text":"' + filler + echo + filler + b'"}'
    redactor.redact_bytes(b"warm the patterns up " + SECRET.encode())
    tracemalloc.start()
    try:
        clean = redactor.redact_bytes(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert clean == b'{"text":"' + filler + REDACTED.encode() + filler + b'"}'
    return peak - len(clean)  # beyond the redacted copy it returns


@pytest.mark.parametrize(
    "size", [8 * 1024 * 1024, pytest.param(128 * 1024 * 1024, marks=pytest.mark.slow)]
)
def test_redacting_bytes_holds_no_text_copy_of_them(size: int) -> None:
    beyond = _scan_peak(size)
    # Before: the input decoded to text (1x) beside the result, whose
    # pieces were copies of the input (1x more).  Now: the result alone,
    # joined from views of the input.
    assert beyond < size // 8, (beyond, size)
