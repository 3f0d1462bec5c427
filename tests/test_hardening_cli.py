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
