"""The one secrets redactor: every secret, every echo encoding, every channel.

A provider that echoes a credential — whole, cut short, JSON-escaped,
``\\/``-escaped or URL-encoded — inside an error event mid-stream must not get
it into the error, its repr, the stored response record, ``--json`` events,
``--debug`` tracebacks, exports or log lines.  Hostile servers run on
127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_helpers import MODEL, base_env, run, text_frames
from elelem.errors import ConfigError, ProviderStreamError, StreamError
from elelem.providers import BUILTIN, Catalog, load_shape
from elelem.redaction import REDACTED, Redactor, check_secret, prefix_length
from elelem.testing.servers import LoopbackServer, insert, replay, sse_body
from elelem.transport import Driver, Endpoint, SigV4Signer, Timeouts
from elelem.vocabulary import ProviderId
from test_contract_stream import REQUEST, SAMPLES, encode, first_block_cut

KEY_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_/+=."
# Text around an echo never continues a secret: none of these is a key character.
AROUND = st.text(alphabet=" #!:;,()[]{}<>|~\n", max_size=20)


def char_forms(char: str) -> list[str]:
    """Every way a provider's JSON or URL encoder may spell one character."""
    code = ord(char)
    forms = [char, f"\\u{code:04x}", f"\\u{code:04X}", f"\\\\u{code:04x}", f"%{code:02X}"]
    forms += [f"%{code:02x}", f"%25{code:02X}"]
    if not char.isalnum():
        forms.append("\\" + char)
    return forms


@st.composite
def echoes(draw: st.DrawFn) -> tuple[str, str]:
    """A random secret and a random echo of it: each character in a random
    encoding, perhaps cut short (but never below what counts as an echo)."""
    secret = draw(st.text(alphabet=KEY_CHARS, min_size=8, max_size=120))
    keep = draw(st.integers(min_value=prefix_length(secret), max_value=len(secret)))
    echo = "".join(draw(st.sampled_from(char_forms(c))) for c in secret[:keep])
    return secret, echo


@settings(max_examples=400, deadline=None)
@given(echoes(), AROUND, AROUND)
def test_every_echo_encoding_is_redacted_and_the_rest_kept(
    echo: tuple[str, str], before: str, after: str
) -> None:
    secret, encoded = echo
    text = f"{before}{encoded}{after}"
    assert Redactor([secret]).redact(text) == f"{before}{REDACTED}{after}"
    assert Redactor([secret]).redact_bytes(text.encode()) == f"{before}{REDACTED}{after}".encode()


def test_short_prefixes_and_other_text_are_left_alone() -> None:
    secret = "sk-live-0123456789abcdefghij"
    redactor = Redactor([secret])
    cut = secret[: prefix_length(secret) - 1]
    assert redactor.redact(f"key {cut}…") == f"key {cut}…"
    assert redactor.redact("nothing secret here") == "nothing secret here"
    assert Redactor(["abc"]).redact("abc") == "abc"  # too short to redact anything safely


def test_two_secrets_one_inside_the_other() -> None:
    redactor = Redactor(["session-token-ABCDEFGH", "ABCDEFGH12345678"])
    assert redactor.redact("a session-token-ABCDEFGH b ABCDEFGH12345678 c") == (
        f"a {REDACTED} b {REDACTED} c"
    )


@pytest.mark.parametrize(
    ("value", "what"),
    [
        ("sk-abc\r\nX-Evil: 1", "a line break at position 6"),
        ("sk-abc\ndef", "a line break at position 6"),
        ("sk-äbc-0123", "a non-ASCII character at position 3"),
        ("sk-abc\x00def", "a control character at position 6"),
    ],
)
def test_a_secret_with_cr_lf_or_non_ascii_is_a_config_error(value: str, what: str) -> None:
    with pytest.raises(ConfigError) as caught:
        check_secret(value, "ANTHROPIC_API_KEY")
    assert str(caught.value) == (
        f"ANTHROPIC_API_KEY: the value holds {what}; "
        "credentials and headers must be printable ASCII"
    )
    with pytest.raises(ConfigError) as endpoint:
        Endpoint(ProviderId("anthropic"), "http://127.0.0.1:1", api_key=value)
    assert str(endpoint.value).startswith("provider anthropic: the API key: the value holds")
    assert value not in str(endpoint.value)


def test_a_bad_config_header_is_a_config_error_before_any_request() -> None:
    with pytest.raises(ConfigError) as caught:
        Endpoint(ProviderId("local"), "http://127.0.0.1:1", headers={"x-team": "blue\r\nevil: 1"})
    assert str(caught.value) == (
        "provider local: header 'x-team': the value holds a line break at position 4; "
        "credentials and headers must be printable ASCII"
    )
    with pytest.raises(ConfigError, match="header 'x-team': the value holds a non-ASCII"):
        Endpoint(ProviderId("local"), "http://127.0.0.1:1", headers={"x-team": "blé"})


def test_the_endpoint_knows_every_secret_it_sends() -> None:
    signer = SigV4Signer(
        "AKIDEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG",
        "FwoGZXIvYXdzEJr//////",
        region="us-east-1",
        service="bedrock",
    )
    endpoint = Endpoint(
        ProviderId("bedrock"),
        "http://127.0.0.1:1",
        headers={"x-api-token": "team-token-0123456789", "x-team": "blue-team-0001"},
        signer=signer,
        secrets=("mcp-bearer-0123456789",),
    )
    assert sorted(endpoint.redactor.secrets) == sorted(
        [
            "wJalrXUtnFEMI/K7MDENG",
            "FwoGZXIvYXdzEJr//////",
            "team-token-0123456789",
            "mcp-bearer-0123456789",
        ]
    )
    assert endpoint.redact("x-team: blue-team-0001") == "x-team: blue-team-0001"


# -- through the driver: a mid-stream error event echoing the key, every shape ----------

SECRET = "sk-hostile-AbCdEf0123456789/xyz"


def _echo_frame(shape_name: str, echo: str) -> bytes:
    """The shape's own mid-stream error event, its message extended with ``echo``
    (already spelled as it would appear inside a JSON string)."""
    sample = SAMPLES[shape_name]()
    event, data = sample.error_frame
    value = json.loads(data)

    def extend(node: object) -> object:
        if isinstance(node, dict):
            return {
                k: (f"{v} (key {{KEY}})" if k == "message" else extend(v)) for k, v in node.items()
            }
        if isinstance(node, str) and node == value.get("error"):
            return f"{node} (key {{KEY}})"
        return node

    raw = json.dumps(extend(value)).replace("{KEY}", echo)
    return encode(sample, [(event, raw)])


def _play(shape_name: str, frame: bytes) -> StreamError:
    shape, sample = load_shape(shape_name), SAMPLES[shape_name]()
    body = encode(sample, sample.frames)

    async def main() -> StreamError:
        with LoopbackServer([insert(body, first_block_cut(sample), frame)], lifetime=20) as server:
            driver = Driver(timeouts=Timeouts(connect=2, idle=2))
            endpoint = Endpoint(ProviderId(sample.provider), server.url, api_key=SECRET)
            try:
                async with driver.stream(endpoint, shape, REQUEST) as stream:
                    async for _ in stream:
                        pass
            except StreamError as exc:
                return exc
            finally:
                await driver.aclose()
        raise AssertionError("the error event did not end the stream")

    return asyncio.run(main())


def _surfaces(exc: StreamError) -> str:
    parts = [str(exc), repr(exc), exc.message, exc.provider_message or "", *map(str, exc.args)]
    parts.append((exc.body or b"").decode("utf-8", "replace"))
    return "\n".join(parts)


ECHOES = {
    "plain": SECRET,
    "json-u": "".join(f"\\u{ord(c):04x}" for c in SECRET),
    "slash": SECRET.replace("/", "\\\\/"),  # \/ once the JSON is decoded
    "url": SECRET.replace("/", "%2F"),
    "cut": SECRET[:-6],
}


@pytest.mark.parametrize("shape_name", sorted(SAMPLES))
@pytest.mark.parametrize("encoding", sorted(ECHOES))
def test_a_key_echoed_mid_stream_never_leaves_the_driver(shape_name: str, encoding: str) -> None:
    exc = _play(shape_name, _echo_frame(shape_name, ECHOES[encoding]))
    text = _surfaces(exc)
    assert f"(key {REDACTED})" in exc.message, exc.message
    assert Redactor([SECRET]).redact(text) == text  # no echo of any encoding is left


# -- through the command line: every output channel --------------------------------------


def _error_body(echo: str) -> bytes:
    frames = text_frames("Partial answer", "msg_leak", finished=False)
    # The message also carries escapes: an OSC 52 clipboard write and a screen clear.
    error = {
        "type": "error",
        "error": {"type": "api_error", "message": "bad key {KEY}\u001b]52;c;aGk=\u0007\u001b[2J"},
    }
    frames.append(("error", json.dumps(error).replace("{KEY}", echo)))
    return sse_body(frames)


def _mixed_echo(secret: str, seed: int) -> str:
    """``secret`` with each character in an encoding drawn at random (seeded)."""
    rng = random.Random(seed)
    return "".join(rng.choice(char_forms(c)) for c in secret)


CLI_SECRET = "sk-ant-api03-Zq8/x+Yt_0123456789abcdefGHIJ"


def test_no_channel_of_the_cli_shows_or_stores_an_echoed_key(tmp_path: Path) -> None:
    # Each character in a random (seeded) encoding, and the last ones cut off.
    secret, encoded, tmp = CLI_SECRET, _mixed_echo(CLI_SECRET[:-5], 1), tmp_path
    try:
        json.loads(f'"{encoded}"')  # the echo as the provider's JSON spells it
    except json.JSONDecodeError:
        encoded = json.dumps(encoded)[1:-1]  # an escape JSON lacks (\-): escaped once more
    body = _error_body(encoded)
    with LoopbackServer(lambda _request: replay(body)) as server:
        env = base_env(tmp, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=secret)
        plain = run(env, "ask", "-m", MODEL, "hello")
        as_json = run(env, "ask", "-m", MODEL, "--json", "hello")
        debug = run(env, "ask", "-m", MODEL, "--debug", "hello")
    exported = run(env, "export")
    listing = run(env, "log", "-s", "Partial")
    shown = run(env, "show")
    assert (plain.returncode, as_json.returncode, debug.returncode) == (1, 1, 1)
    assert (
        "Traceback" in debug.stderr
        and "ServerError: anthropic stream api_error: bad key [redacted]" in debug.stderr
    )
    assert exported.returncode == 0 and listing.returncode == 0 and shown.returncode == 0
    store = tmp / "home"
    stored = b"".join(p.read_bytes() for p in store.rglob("*") if p.is_file())
    outputs = [plain.stdout, plain.stderr, as_json.stdout, as_json.stderr, debug.stdout]
    outputs += [debug.stderr, exported.stdout, listing.stdout, shown.stdout, shown.stderr]
    cut = secret[: prefix_length(secret)]
    for out in [*outputs, stored.decode("utf-8", "replace")]:
        assert cut not in out
        assert Redactor([secret]).redact(out) == out  # no encoded echo either
    assert f"bad key {REDACTED}" in plain.stderr
    for out in (plain.stderr, debug.stderr, as_json.stderr):
        assert "\x1b" not in out and "\x07" not in out  # --debug tracebacks included
    rows = sqlite3.connect(next(store.rglob("*.db"))).execute("select data from events").fetchall()
    assert any(REDACTED.encode() in bytes(r[0]) for r in rows)


def test_a_non_ascii_key_from_the_environment_exits_2_before_any_request(tmp_path: Path) -> None:
    with LoopbackServer([]) as server:
        env = base_env(tmp_path, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="sk-ünïcode-1234")
        result = run(env, "ask", "-m", MODEL, "hi")
    assert result.returncode == 2
    assert result.stderr == (
        "elelem: provider anthropic: the API key: the value holds a non-ASCII character at "
        "position 3; credentials and headers must be printable ASCII\n"
    )
    assert server.requests == []


def test_catalog_endpoint_checks_the_key() -> None:
    spec = Catalog(BUILTIN).get("anthropic")
    with pytest.raises(ConfigError, match="line break"):
        spec.endpoint({"ANTHROPIC_API_KEY": "sk-abc\r\ndef0123"})


def test_a_sigv4_session_token_echoed_mid_stream_is_redacted() -> None:
    token = "FwoGZXIvYXdzEJr//////////wEaDHsecret+token=="
    signer = SigV4Signer(
        "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG", token, region="us-east-1", service="bedrock"
    )
    endpoint = Endpoint(ProviderId("bedrock"), "http://127.0.0.1:1", signer=signer)
    exc = ProviderStreamError(f"bad token {json.dumps(token)[1:-1].replace('/', chr(92) + '/')}")
    endpoint.redactor.redact_error(exc)
    assert exc.message == f"bad token {REDACTED}"


def test_provider_stream_error_attributes_are_redacted_in_place() -> None:
    exc = ProviderStreamError(f"boom {SECRET}", provider_message=SECRET, body=SECRET.encode())
    exc.__cause__ = ValueError(SECRET)
    Redactor([SECRET]).redact_error(exc)
    assert (exc.message, exc.provider_message, exc.body) == (
        f"boom {REDACTED}",
        REDACTED,
        REDACTED.encode(),
    )
    assert str(exc.__cause__) == REDACTED


def test_an_os_error_without_a_file_keeps_its_message_when_redacted() -> None:
    # `elelem speak > /dev/full` said "[Errno 28] No space left on device: None -> None".
    full = Redactor([SECRET]).redact_error(OSError(28, "No space left on device"))
    assert str(full) == "[Errno 28] No space left on device"
    named = Redactor([SECRET]).redact_error(OSError(2, "No such file", f"/k/{SECRET}"))
    assert str(named) == f"[Errno 2] No such file: '/k/{REDACTED}'"


def test_a_key_of_bytes_that_are_not_utf8_exits_2_not_lost_stderr(tmp_path: Path) -> None:
    # The redactor encoded the key strictly: every write to stderr failed,
    # and Python printed "lost sys.stderr" (exit 1, no message).
    with LoopbackServer([]) as server:
        key = "sk-\udcffabcdefghijkl"  # the bytes sk-\xff… as os.environ holds them
        env = base_env(tmp_path, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=key)
        result = run(env, "ask", "-m", MODEL, "hi")
    assert (result.returncode, result.stderr) == (
        2,
        "elelem: provider anthropic: the API key: the value holds a non-ASCII character at "
        "position 3; credentials and headers must be printable ASCII\n",
    )
    assert server.requests == []
    assert Redactor([key]).redact(f"echo {key}") == f"echo {REDACTED}"


def test_a_model_from_the_environment_that_is_not_utf8_exits_2(tmp_path: Path) -> None:
    env = base_env(tmp_path, ANTHROPIC_API_KEY="sk-ant-x", ELELEM_MODEL="anthropic:\udcff")
    result = run(env, "ask", "hi")
    assert (result.returncode, result.stderr) == (
        2,
        "elelem: model 'anthropic:\\udcff' is not UTF-8 text (at character 11)\n",
    )
