"""A plugin distribution adds a provider and a command (issue #37,
docs/architecture.md §1.1 and §2.2.1), installed as pip would lay it out.

A package and its ``.dist-info`` with two entry points are written to a
temporary folder: ``elelem.plugins`` (a callable registering an
OpenAI-compatible provider as one :class:`~elelem.vocabulary.ProviderRecord`)
and ``elelem.commands`` (a ``click`` command).  The real ``elelem`` command
then runs in fresh interpreters whose path holds the folder: its help lists
the plugin's command, the command runs, ``providers`` lists the plugin's
provider, and ``ask`` by its alias sends the exact Chat Completions body to
a loopback server speaking that wire
(https://platform.openai.com/docs/api-reference/chat-streaming).
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import base_env, run
from elelem.testing.servers import LoopbackServer, replay, sse_body
from plugin_helpers import plugin_site

PLUGIN = '''
"""A test plugin: the acme provider and the acme-hello command."""
import click

from elelem.vocabulary import ProviderRecord, provider_record, register_provider


def register():
    register_provider(ProviderRecord(
        "acme", "openai_chat", "https://api.acme.invalid/v1", ("ACME_API_KEY",),
        base_url_env=("ACME_BASE_URL",),
        conventions={"max_tokens_field": "max_completion_tokens", "stream_usage": False},
        default_model="acme-1", models=("acme-1",), aliases={"roadrunner": "acme-1"},
    ))


@click.command()
@click.argument("name")
def hello(name):
    """Greet NAME from the acme plugin."""
    record = provider_record("acme")
    click.echo(f"hello {name}: acme serves {record.default_model} at {record.base_url}")


class NotACommand:
    pass
'''

KEY = "k-acme-0123456789abcdef"


def _install(root: Path, commands: str) -> Path:
    """The plugin laid out as an installed distribution under ``root/site``."""
    entry_points = (
        f"[elelem.plugins]\nacme = elelem_acme:register\n\n[elelem.commands]\n{commands}\n"
    )
    return plugin_site(root, "elelem_acme", PLUGIN, entry_points)


def _answer() -> bytes:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "acme-1"}
    return sse_body(
        [
            (None, json.dumps({**chunk, "choices": [{"index": 0, "delta": {"content": "Hi!"}}]})),
            (
                None,
                json.dumps(
                    {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                ),
            ),
            (None, "[DONE]"),
        ]
    )


def test_a_plugin_adds_a_provider_and_a_command(tmp_path: Path) -> None:
    site = _install(tmp_path, "acme-hello = elelem_acme:hello")
    env = base_env(tmp_path, PYTHONPATH=str(site))

    helped = run(env, "--help")
    assert helped.returncode == 0, helped.stderr
    assert "  acme-hello   Greet NAME from the acme plugin.\n" in helped.stdout

    hello = run(env, "acme-hello", "Ann")
    assert (hello.returncode, hello.stderr) == (0, "")
    assert hello.stdout == "hello Ann: acme serves acme-1 at https://api.acme.invalid/v1\n"

    listed = run(env, "providers")
    assert listed.returncode == 0, listed.stderr
    (line,) = [row for row in listed.stdout.splitlines() if row.split()[:1] == ["acme"]]
    assert "ACME_API_KEY" in line

    with LoopbackServer([replay(_answer())]) as server:
        served = {**env, "ACME_BASE_URL": server.url + "/v1", "ACME_API_KEY": KEY}
        asked = run(served, "ask", "-m", "roadrunner", "--max-tokens", "50", "Hello?")
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.startswith("Hi!\n")
    (request,) = server.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    # The record's conventions: the limit as max_completion_tokens, no stream_options.
    assert json.loads(request.body) == {
        "model": "acme-1",
        "messages": [{"role": "user", "content": "Hello?"}],
        "stream": True,
        "max_completion_tokens": 50,
    }


def test_a_broken_plugin_command_is_one_line_naming_it(tmp_path: Path) -> None:
    site = _install(tmp_path, "acme-hello = elelem_acme:NotACommand\nask = elelem_acme:hello")
    env = base_env(tmp_path, PYTHONPATH=str(site))
    broken = run(env, "acme-hello", "Ann")
    assert (broken.returncode, broken.stdout) == (2, "")
    assert broken.stderr == (
        "elelem: the elelem command 'acme-hello' of plugin elelem_acme:NotACommand "
        "is a type, not a click command\n"
    )
    # A built-in name is never replaced by a plugin's command.
    taken = _install(tmp_path / "taken", "ask = elelem_acme:hello")
    clash = run(base_env(tmp_path, PYTHONPATH=str(taken)), "--help")
    assert (clash.returncode, clash.stdout) == (2, "")
    assert (
        clash.stderr
        == "elelem: command 'ask' of plugin elelem_acme:hello: elelem already has a command 'ask'\n"
    )
