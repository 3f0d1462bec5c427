"""Misuse of the command line and its configuration: each is one line and a
documented exit status, never a surprise (issue #13)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import KEY, MODEL, base_env, run, text_reply
from elelem.conversation import StoreError, open_store
from elelem.testing.servers import LoopbackServer, replay, sse_body
from test_contract_stream import SAMPLES

BEDROCK = "bedrock:global.anthropic.claude-sonnet-4-5-20250929-v1:0"


def test_bedrock_with_iam_credentials_works_from_the_cli(tmp_path: Path) -> None:
    sample = SAMPLES["bedrock_converse"]()
    with LoopbackServer([replay(sse_body(sample.frames))]) as server:
        env = base_env(
            tmp_path,
            ELELEM_BEDROCK_BASE_URL=server.url,
            AWS_ACCESS_KEY_ID="AKIDEXAMPLE",
            AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            AWS_REGION="us-east-1",
        )
        result = run(env, "ask", "-m", BEDROCK, "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Hello, wörld ✓")
    (request,) = server.requests
    assert request.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "wJalrXUtnFEMI" not in result.stdout + result.stderr


def test_continue_with_an_unknown_id_is_an_error_not_a_prompt(tmp_path: Path) -> None:
    with LoopbackServer([replay(text_reply("First."))]) as server:
        env = base_env(tmp_path, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
        assert run(env, "ask", "-m", MODEL, "hello").returncode == 0
        mistyped = run(env, "ask", "-m", MODEL, "-c", "c_0123456789abcdeX")
    assert mistyped.returncode == 2
    assert mistyped.stderr == (
        "elelem: no conversation 'c_0123456789abcdeX' in this store (to continue the "
        "latest with a one-word prompt, write: elelem ask -c last c_0123456789abcdeX)\n"
    )
    assert len(server.requests) == 1  # nothing was sent for the mistyped id


def test_continue_with_a_question_still_continues_the_latest(tmp_path: Path) -> None:
    with LoopbackServer([replay(text_reply("First.")), replay(text_reply("Second."))]) as server:
        env = base_env(tmp_path, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
        assert run(env, "ask", "-m", MODEL, "hello").returncode == 0
        second = run(env, "ask", "-m", MODEL, "-c", "and then?")
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith("Second.")


def test_open_store_with_an_empty_url_is_an_error() -> None:
    with pytest.raises(StoreError) as caught:
        open_store("")
    assert str(caught.value) == (
        "the store URL is empty: give a path or a sqlite:// or postgresql:// URL"
    )


def test_a_store_url_that_is_no_url_exits_3(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"^the store URL is not a URL: Invalid IPv6 URL$"):
        open_store("postgresql://[::1/db")
    result = run(base_env(tmp_path, ELELEM_STORE="postgresql://[::1/db"), "log")
    assert (result.returncode, result.stderr) == (
        3,
        "elelem: the store URL is not a URL: Invalid IPv6 URL\n",
    )


def test_a_directory_as_the_config_file_is_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "config-dir"
    folder.mkdir()
    env = base_env(tmp_path, ELELEM_CONFIG=str(folder), ANTHROPIC_API_KEY=KEY)
    result = run(env, "ask", "hi")
    assert (result.returncode, result.stderr) == (
        2,
        f"elelem: {folder}: the config path is not a file\n",
    )
    providers = run(env, "providers")
    assert (providers.returncode, providers.stderr) == (
        2,
        f"elelem: {folder}: the config path is not a file\n",
    )


def test_a_config_header_with_a_line_break_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[providers.anthropic]\nheaders = { "x-team" = "blue\\r\\nx-evil: 1" }\n', encoding="utf-8"
    )
    with LoopbackServer([]) as server:
        env = base_env(
            tmp_path,
            ELELEM_CONFIG=str(config),
            ANTHROPIC_BASE_URL=server.url,
            ANTHROPIC_API_KEY=KEY,
        )
        result = run(env, "ask", "-m", MODEL, "hi")
    assert (result.returncode, result.stderr) == (
        2,
        "elelem: provider anthropic: header 'x-team': the value holds a line break at "
        "position 4; credentials and headers must be printable ASCII\n",
    )
    assert server.requests == []


def test_timeout_and_idle_timeout_options(tmp_path: Path) -> None:
    from cli_helpers import text_frames
    from elelem.testing.servers import Pause, Reply, Send

    start = sse_body(text_frames("Partial", "msg_slow", finished=False))
    pings = tuple(a for _ in range(120) for a in (Send(b": ping\n\n"), Pause(0.05)))
    keep_alive = Reply(200, {"content-type": "text/event-stream"}, (Send(start), *pings))
    stall = Reply(200, {"content-type": "text/event-stream"}, (Send(start), Pause(5)))
    with LoopbackServer([keep_alive, stall]) as server:
        env = base_env(tmp_path, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
        total = run(env, "ask", "-m", MODEL, "--timeout", "2", "hi")
        idle = run(env, "ask", "-m", MODEL, "--idle-timeout", "0.3", "hi")
    assert total.returncode == 1
    assert total.stderr.startswith(
        "elelem: deadline: the response did not finish within 2s (the total timeout), after "
    )
    assert idle.returncode == 1
    assert idle.stderr.startswith("elelem: idle-timeout: the stream sent nothing for 0.3s")
    assert total.stdout.startswith("Partial") and idle.stdout.startswith("Partial")


def test_a_config_header_marked_secret_is_redacted_like_the_key(tmp_path: Path) -> None:
    from elelem.testing.servers import status

    value = "team-credential-0123456789"
    config = tmp_path / "config.toml"
    config.write_text(
        f'[providers.anthropic]\nheaders = {{ "x-team" = "{value}" }}\n'
        'secret_headers = ["x-team"]\n',
        encoding="utf-8",
    )
    echo = b'{"type":"error","error":{"type":"permission_error","message":"team ' + (
        value.encode() + b' may not"}}'
    )
    with LoopbackServer([status(403, echo)]) as server:
        env = base_env(
            tmp_path,
            ELELEM_CONFIG=str(config),
            ANTHROPIC_BASE_URL=server.url,
            ANTHROPIC_API_KEY=KEY,
        )
        result = run(env, "ask", "-m", MODEL, "hi")
    assert server.requests[0].headers["x-team"] == value
    assert result.returncode == 1
    assert value not in result.stderr and "team [redacted] may not" in result.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text('[providers.anthropic]\nsecret_headers = "x-team"\n', encoding="utf-8")
    refused = run({**env, "ELELEM_CONFIG": str(bad)}, "ask", "-m", MODEL, "hi")
    assert (refused.returncode, refused.stderr) == (
        2,
        f"elelem: {bad}: [providers.anthropic]: secret_headers must be a list of header names\n",
    )


# -- round two (issue #33): no exit 70, private files -----------------------------------


def _run_bytes(env: dict[str, str], stdin: bytes, *args: str) -> tuple[int, str]:
    import subprocess

    from cli_helpers import ELELEM

    done = subprocess.run(
        [ELELEM, *args], env=env, input=stdin, capture_output=True, timeout=60, check=False
    )
    return done.returncode, done.stderr.decode("utf-8", "replace")


@pytest.mark.parametrize(
    ("stdin", "problem"),
    [
        (b"hello\nhi\xff\xfe\n", "stdin line 2 is not UTF-8 text (byte 0xff at offset 2)"),
        (b"hi \xed\xa0\x80\n", "stdin line 1 is not UTF-8 text (byte 0xed at offset 3)"),
    ],
    ids=["binary", "surrogate"],
)
def test_chat_with_stdin_that_is_not_text_is_one_line(
    tmp_path: Path, stdin: bytes, problem: str
) -> None:
    with LoopbackServer([replay(text_reply("First."))]) as server:
        env = base_env(tmp_path, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
        code, stderr = _run_bytes(env, stdin, "chat", "-m", MODEL)
    assert code == 2
    assert stderr.endswith(f"elelem: {problem}\n"), stderr
    assert "internal error" not in stderr


def test_a_store_that_is_a_device_is_a_store_error(tmp_path: Path) -> None:
    result = run(base_env(tmp_path, ELELEM_STORE="/dev/null"), "log")
    assert (result.returncode, result.stderr) == (
        3,
        "elelem: cannot open SQLite store /dev/null: not a regular file (a character device)\n",
    )


def test_a_config_nested_too_deeply_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "deep.toml"
    config.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    result = run(base_env(tmp_path, ELELEM_CONFIG=str(config)), "providers")
    assert (result.returncode, result.stderr) == (
        2,
        f"elelem: {config}: not valid TOML: nested too deeply to read\n",
    )


def test_the_home_keys_and_store_are_private(tmp_path: Path) -> None:
    import stat

    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    home.chmod(0o755)  # an existing home, as a umask of 022 leaves it
    env = base_env(tmp_path, ELELEM_HOME=str(home))
    env.pop("ELELEM_STORE", None)
    env.pop("ELELEM_KEYS", None)
    assert run(env, "keys", "set", "anthropic", stdin=KEY).returncode == 0
    assert run(env, "log").returncode == 0
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in [home, *home.iterdir()]}
    assert modes == {"home": 0o700, "keys.json": 0o600, "elelem.db": 0o600} | {
        name: 0o600 for name in modes if name.startswith("elelem.db-")
    }
