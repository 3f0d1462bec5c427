"""Bad input of every kind the hardening pass found (issue #13): each exits
2 (3 for import and the store) with one line on stderr, never 70, and nothing
from an imported conversation reaches the terminal raw."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cli_helpers import ELELEM, KEY, MODEL, base_env, run, text_reply
from elelem.conversation import DB_NAME, Conversation, open_store
from elelem.conversation.export import export_conversation
from elelem.conversation.store import ConversationInfo
from elelem.render import sanitize, sanitize_line
from elelem.render.lines import disarm_footnotes
from elelem.testing.servers import LoopbackServer, replay
from elelem.vocabulary import ConversationId


def _run_bytes(env: dict[str, str], *args: bytes, stdin: bytes = b"") -> tuple[int, str, str]:
    done = subprocess.run(
        [os.fsencode(ELELEM), *args], env=env, input=stdin, capture_output=True, timeout=60
    )
    return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return base_env(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL="http://127.0.0.1:9")


def test_a_non_utf8_argument_byte_exits_2(env: dict[str, str]) -> None:
    assert _run_bytes(env, b"ask", b"-m", MODEL.encode(), b"caf\xe9") == (
        2,
        "",
        "elelem: the prompt is not valid UTF-8 text (at character 4)\n",
    )
    assert _run_bytes(env, b"ask", b"-m", MODEL.encode(), b"--system", b"\xff", b"hi")[0] == 2


@pytest.mark.parametrize("data", [b"\x00\x01\xff\xfe binary", b"hi \xed\xa0\x80 surrogate"])
def test_binary_or_lone_surrogate_stdin_exits_2(env: dict[str, str], data: bytes) -> None:
    code, out, err = _run_bytes(env, b"ask", b"-m", MODEL.encode(), stdin=data)
    assert (code, out, err.count("\n")) == (2, "", 1)
    assert err.startswith("elelem: ")


def test_a_huge_log_limit_exits_2(env: dict[str, str]) -> None:
    result = run(env, "log", "-n", str(10**30))
    assert (result.returncode, result.stderr) == (
        2,
        f"elelem: -n {10**30} is more than 2147483647 conversations\n",
    )


def test_demo_cassette_nested_too_deeply_exits_2(env: dict[str, str], tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    result = run(env, "demo", "--cassette", str(deep))
    assert (result.returncode, result.stderr) == (
        2,
        f"elelem: {deep}: this JSON recording is nested too deeply to read\n",
    )


def test_a_non_ascii_config_header_exits_2(env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[providers.anthropic]\nheaders = { "x-team" = "blé" }\n', encoding="utf-8")
    result = run({**env, "ELELEM_CONFIG": str(config)}, "ask", "-m", MODEL, "hi")
    assert (result.returncode, result.stderr) == (
        2,
        "elelem: provider anthropic: header 'x-team': the value holds a non-ASCII character "
        "at position 2; credentials and headers must be printable ASCII\n",
    )


# -- hostile imports ------------------------------------------------------------------


def _export(tmp_path: Path) -> str:
    store = open_store(tmp_path / "source.db")
    conversation = Conversation.create(store)
    conversation.add_user("hello")
    data = export_conversation(store, conversation.id).decode()
    store.close()
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ('"turn":0', f'"turn":{10**30}'),
            f"line 2: event {{event}}: turn {10**30} is out of range",
        ),
        (
            ('"text":"hello"', '"text":"hello","deep":' + "[" * 100_000 + "]" * 100_000),
            "line 2: bad event: nested too deeply to read",
        ),
        (
            ('"id":"c_', '"id":"c_\\u001b]52;c;aGk=\\u0007'),
            "line 1: the conversation id 'c_\\x1b]52;c;aGk=\\x07{rest}' is not an id "
            "(letters, digits, _ . : -; at most 128)",
        ),
        (
            ('"seq":1,"at":"', '"seq":1,"at":"\\u001b[2J'),
            "line 2: event {event}: at '\\x1b[2J{at}' is not an ISO 8601 time",
        ),
    ],
    ids=["huge-turn", "deep-body", "escape-in-id", "escape-in-time"],
)
def test_a_hostile_import_exits_3_with_one_line(
    env: dict[str, str], tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    data = _export(tmp_path)
    event = data.split('"id":"')[2].split('"')[0]
    rest = data.split('"id":"c_')[1].split('"')[0]
    at = data.split('"seq":1,"at":"')[1].split('"')[0]
    path = tmp_path / "hostile.ndjson"
    path.write_text(data.replace(*change), encoding="utf-8")
    result = run(env, "import", str(path))
    assert (result.returncode, result.stderr) == (
        3,
        "elelem: " + message.format(event=event, rest=rest, at=at) + "\n",
    )
    assert "\x1b" not in result.stdout + result.stderr


def test_stored_ids_and_times_are_shown_sanitized(env: dict[str, str], tmp_path: Path) -> None:
    # A store written by something that did not check (an older elelem, SQL by hand).
    store = open_store(Path(env["ELELEM_HOME"]) / DB_NAME)
    evil = ConversationInfo(
        id=ConversationId("c_\x1b]52;c;aGk=\x07x"),
        title="t\x1b[2J",
        model="anthropic:\x1b[31mm",
        turns=0,
        events=0,
        created_at="2026-01-01T00:00:00\x1b[2J",
        updated_at="2026-01-01T00:00:00\x1b[2J",
    )
    store.import_events(evil, [], [])
    store.close()
    listing = run(env, "log")
    assert listing.returncode == 0, listing.stderr
    assert "\x1b" not in listing.stdout and "\x07" not in listing.stdout
    line = listing.stdout
    assert line.startswith("c_x  2026-01-01 00:00   0 turns  -  ") and line.endswith("  t\n")


# -- the sanitizer -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\u200bb\u2060c\ufeffd\u180ee", "abcde"),  # zero-width, word joiner, BOM, MVS
        ("one\u2028two\u2029three", "one\ntwo\nthree"),
        ("\u200dedge\u200d", "edge"),
        ("a \u200c b", "a  b"),
        ("a\u200d\u200db", "ab"),
        ("👨\u200d👩\u200d👧", "👨\u200d👩\u200d👧"),  # an emoji sequence keeps its joiners
        ("می\u200cخواهم", "می\u200cخواهم"),  # Persian keeps its ZWNJ
    ],
)
def test_zero_width_and_separators(raw: str, shown: str) -> None:
    assert sanitize(raw) == shown
    assert sanitize_line(raw) == " ".join(shown.split())


def test_model_lines_cannot_pass_for_footnotes() -> None:
    assert disarm_footnotes("See:\n[1] Fake — evil.com\n  [2] x\nok [3] y") == (
        "See:\n\\[1] Fake — evil.com\n  \\[2] x\nok [3] y"
    )
    assert disarm_footnotes("[1] a", at_line_start=False) == "[1] a"
    assert disarm_footnotes("go on\n[7] b", at_line_start=False) == "go on\n\\[7] b"


def test_plain_output_marks_fake_footnotes(tmp_path: Path) -> None:
    answer = "Here.\n[1] Official site — example.com\n    https://example.com"
    with LoopbackServer([replay(text_reply(answer))]) as server:
        env = base_env(tmp_path, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
        result = run(env, "ask", "-m", MODEL, "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(
        "Here.\n\\[1] Official site — example.com\n    https://example.com"
    )
