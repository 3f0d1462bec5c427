"""An MCP server's requests for input asked in the terminal during `elelem
ask` and `chat` (elelem.cli.elicit), under a pty, against a real MCP server
(tests/mcp_elicit_server.py, the SDK's server, asking over the 2026-07-28
revision's multi round-trip requests); and the form's field parsing."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import pytest

from cli_helpers import ELELEM, base_env, run
from elelem.cli.elicit import FieldError, field_hint, field_value
from test_mcp_server_requests import server_requests

SERVER = f"{sys.executable} {Path(__file__).parent / 'mcp_elicit_server.py'}"
LABEL = SERVER if len(SERVER) <= 60 else SERVER[:59] + "…"


def tool_results(env: dict[str, str]) -> dict[str, list[Any]]:
    """The MCP tools' results of the latest conversation, by tool name in
    turn order, from its export (what the model was sent)."""
    exported = run(env, "export", "last")
    assert exported.returncode == 0, exported.stderr
    results: dict[str, list[Any]] = {}
    for line in exported.stdout.splitlines():
        event = json.loads(line)
        if event.get("kind") != "message":
            continue
        for block in event["body"]["content"]:
            if block["type"] == "tool-result":
                results.setdefault(block["name"], []).append(block["content"])
    return results


PROMPT = r"\x1b\[\?2004h"
"""prompt-toolkit turns bracketed paste on each time it waits for a message."""


def spawn(env: dict[str, str], *args: str) -> pexpect.spawn:
    return pexpect.spawn(
        ELELEM, list(args), env={**env, "TERM": "xterm-256color"}, encoding="utf-8", timeout=90
    )


FORM_QUESTION = "fill in its form (7 fields)? [y/N]: "
URL_QUESTION = "open it in the browser? [y/N]: "


def answer_both(child: pexpect.spawn, form: Callable[[], None], url: Callable[[], None]) -> None:
    """The two tools are called at once: whichever request arrives first is
    asked first (one question at a time), so answer them in either order."""
    for _ in range(2):
        asked = child.expect_exact([FORM_QUESTION, URL_QUESTION])
        (form if asked == 0 else url)()


def test_ask_fills_a_servers_form_and_opens_its_url_in_the_terminal(tmp_path: Path) -> None:
    opened = tmp_path / "opened"
    env = base_env(tmp_path, BROWSER=f"sh -c 'printf %s \"$0\" > {opened}' %s")
    child = spawn(env, "ask", "-m", "test", "--mcp", SERVER, "book")
    try:
        # The server as the user started it (its command line), not as it names itself.
        child.expect_exact(f"MCP server {LABEL} ")

        def form() -> None:
            assert child.before.endswith("Booking at Chez Nous: details?\r\n")
            child.sendline("y")
            child.expect_exact("  Your name (As on the booking) (required): ")
            child.sendline("")  # required: asked again
            child.expect_exact("  Error: this field is required")
            child.sendline("Ann Lee")
            child.expect_exact("  guests (whole number 1..12) [2]: ")
            child.sendline("20")
            child.expect_exact("  Error: at most 12")
            child.sendline("")  # the default
            child.expect_exact("  budget (number; Per person, EUR): ")
            child.sendline("12.5")
            child.expect_exact("  terrace (yes/no) [no]: ")
            child.sendline("y")
            child.expect_exact("  time (one of: 19:00, 20:30) [19:00]: ")
            child.sendline("20:30")
            child.expect_exact("  menu (one of: veg (Vegetarian), fish (Fish)): ")
            child.sendline("")  # optional: left out
            child.expect_exact("  extras (any of: cake, wine, flowers; comma-separated): ")
            child.sendline("cake, flowers")
            child.expect_exact(f"sent to {LABEL}")

        def url() -> None:
            assert child.before.endswith(
                "Sign in to pay the deposit\r\n"
                "  https://booking.example/pay?session=1  (site: booking.example)\r\n"
            )
            child.sendline("y")

        answer_both(child, form, url)
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
    assert opened.read_text() == "https://booking.example/pay?session=1"
    results = tool_results(env)
    assert [json.loads(r) for r in results["book_table"]] == [
        {
            "action": "accept",
            "content": {
                "name": "Ann Lee",
                "guests": 2,
                "budget": 12.5,
                "terrace": True,
                "time": "20:30",
                "extras": ["cake", "\x1b[31mflowers"],  # sent as the server spelled it
            },
        }
    ]
    assert [json.loads(r) for r in results["sign_in"]] == [{"action": "accept"}]


def test_chat_declines_with_enter_and_cancels_with_ctrl_c(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    child = spawn(env, "chat", "-m", "test", "--mcp", SERVER)
    try:
        child.expect(PROMPT)
        child.sendline("book")

        def decline_form() -> None:
            child.sendline("")  # Enter: declined
            child.expect_exact("declined")

        def cancel_url() -> None:
            child.sendintr()  # Ctrl-C: the question dismissed, the turn goes on
            child.expect_exact("cancelled")

        answer_both(child, decline_form, cancel_url)
        child.expect(PROMPT)
        child.sendline("again")  # the chat still works

        def cancel_form() -> None:
            child.sendline("y")
            child.expect_exact("(required): ")
            child.sendintr()  # Ctrl-C in the middle of the form
            child.expect_exact("cancelled")

        def decline_url() -> None:
            child.sendline("n")
            child.expect_exact("declined")

        answer_both(child, cancel_form, decline_url)
        child.expect(PROMPT)
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
    results = tool_results(env)
    assert [json.loads(r) for r in results["book_table"]] == [
        {"action": "decline", "content": None},
        {"action": "cancel", "content": None},
    ]
    assert [json.loads(r) for r in results["sign_in"]] == [
        {"action": "cancel"},
        {"action": "decline"},
    ]


def test_without_a_terminal_every_request_is_declined(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    out = run(env, "ask", "-m", "test", "--mcp", SERVER, "book")
    assert out.returncode == 0, out.stderr
    results = tool_results(env)
    assert [json.loads(r) for r in results["book_table"]] == [
        {"action": "decline", "content": None}
    ]
    assert [json.loads(r) for r in results["sign_in"]] == [{"action": "decline"}]
    # Each recorded in the log (the two calls run at once: in either order).
    got = server_requests(env)
    assert sorted((r["method"], r["outcome"], r["detail"]["mode"]) for r in got) == [
        ("elicitation/create", "decline", "form"),
        ("elicitation/create", "decline", "url"),
    ]
    assert next(r for r in got if r["detail"]["mode"] == "url")["detail"] == {
        "mode": "url",
        "message": "Sign in to pay the deposit",
        "url": "https://booking.example/pay?session=1",
        "reason": "no terminal on stdin to ask on",  # kept in the log, never sent
    }


FIELDS: list[tuple[dict[str, Any], str, Any]] = [
    ({"type": "string"}, " a b ", " a b "),
    ({"type": "integer"}, "7", 7),
    ({"type": "number"}, "7", 7),
    ({"type": "number"}, "-0.5", -0.5),
    ({"type": "boolean"}, "NO", False),
    ({"type": "boolean"}, "true", True),
    ({"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]}, "b", "b"),
    ({"type": "string", "anyOf": [{"const": "x", "title": "X"}]}, "x", "x"),
    ({"type": "array", "items": {"anyOf": [{"const": "p"}, {"const": "q"}]}}, "q,p", ["q", "p"]),
    ({"type": "uri-ish-unknown"}, "kept", "kept"),  # an unknown type: the text, kept
]


@pytest.mark.parametrize(("spec", "typed", "value"), FIELDS)
def test_field_values(spec: dict[str, Any], typed: str, value: Any) -> None:
    got = field_value(spec, typed)
    assert (got, type(got)) == (value, type(value))


REFUSED: list[tuple[dict[str, Any], str, str]] = [
    ({"type": "integer"}, "7.5", "a whole number"),
    ({"type": "number"}, "nan", "a finite number"),
    ({"type": "number"}, "1e400", "a finite number"),
    ({"type": "number", "minimum": 1}, "0.5", "at least 1"),
    ({"type": "boolean"}, "maybe", "answer yes or no"),
    ({"type": "string", "minLength": 3}, "ab", "at least 3 characters"),
    ({"type": "string", "maxLength": 1}, "ab", "at most 1 characters"),
    ({"type": "string", "enum": ["a", "b"]}, "c", "one of: a, b"),
]


@pytest.mark.parametrize(("spec", "typed", "why"), REFUSED)
def test_answers_that_do_not_fit_are_asked_again(
    spec: dict[str, Any], typed: str, why: str
) -> None:
    with pytest.raises(FieldError) as caught:
        field_value(spec, typed)
    assert str(caught.value) == why


def test_field_hints() -> None:
    assert field_hint({"type": "integer", "minimum": 1}) == "whole number 1.."
    assert field_hint({"type": "string", "enum": ["\x1b[2Ja"]}) == "one of: a"
    assert field_hint({"type": "string"}) == ""


@pytest.mark.parametrize(
    "url",
    ["https://pay.example/\x1b[2J", "javascript:alert(1)", "https://evil.example\\@good.example/"],
)
def test_a_url_that_is_not_a_plain_link_is_never_opened(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio

    from elelem.cli.elicit import ask_elicitation
    from elelem.tools.mcp_asks import ElicitAnswer, Elicitation

    asked = Elicitation("srv", "url", "Pay \x1b[31mnow", url=url)
    assert asyncio.run(ask_elicitation(asked)) == ElicitAnswer("decline")
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "MCP server srv asks you to open a URL: Pay now"
    assert lines[2] == "not a plain http(s) link: elelem does not open it (declined)"
    assert "\x1b" not in lines[1]
