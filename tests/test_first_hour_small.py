"""The first hour's small ones: ``dir(elelem)`` lists the API, ``--tool
module:fn`` finds a module in the working folder, an import of a
conversation the store holds names ``--new-id``, a local provider that
refuses the connection gets a hint, no command's help shows
reStructuredText, and every model variable is in the environment table."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import elelem
from cli_helpers import ELELEM, base_env, run
from elelem.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_dir_lists_the_lazily_loaded_api() -> None:
    listed = dir(elelem)
    for name in ("Client", "SyncClient", "send", "run", "open_store", "Conversation", "tool"):
        assert name in listed


def test_tool_finds_a_module_in_the_working_folder(tmp_path: Path) -> None:
    (tmp_path / "mytools.py").write_text(
        'def shout(text: str) -> str:\n    """Shout."""\n    return text.upper()\n'
    )
    import subprocess

    done = subprocess.run(
        [ELELEM, "ask", "-m", "test", "--tool", "mytools:shout", "Say it"],
        env=base_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert 'called shout(text="a") → A' in done.stderr


def test_importing_a_conversation_held_already_names_new_id(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    run(env, "ask", "-m", "test", "Hello")
    exported = tmp_path / "c.json"
    assert run(env, "export", "-o", str(exported)).returncode == 0
    again = run(env, "import", str(exported))
    cid = run(env, "log").stdout.split()[0]
    assert (again.returncode, again.stderr) == (
        3,
        f"elelem: conversation '{cid}' already exists in this store: import it under a fresh "
        f"id with elelem import --new-id {exported}\n",
    )
    assert run(env, "import", "--new-id", str(exported)).returncode == 0


def test_a_local_provider_refusing_the_connection_gets_a_hint(tmp_path: Path) -> None:
    env = {**base_env(tmp_path), "ELELEM_OLLAMA_BASE_URL": "http://127.0.0.1:9/v1"}
    done = run(env, "ask", "-m", "ollama:llama3.2", "hi")
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1].endswith("(is Ollama running? start it with: ollama serve)")


def test_no_help_shows_restructuredtext() -> None:
    def walk(command: click.Command, path: str) -> list[tuple[str, str]]:
        found = [(path, command.help or "")]
        found += [(path, getattr(p, "help", None) or "") for p in command.params]
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, name
                found += walk(sub, f"{path} {name}")
        return found

    assert [path for path, text in walk(main, "elelem") if "``" in text] == []


def test_every_model_variable_is_in_the_environment_table() -> None:
    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    table = doc.split("## Environment variables", 1)[1].split("\n## ", 1)[0]
    source = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "src/elelem/cli").glob("*.py"))
    variables = set(re.findall(r'"(ELELEM_[A-Z_]+_MODEL)"', source)) | {"ELELEM_MODEL"}
    assert len(variables) >= 4
    assert [v for v in sorted(variables) if f"`{v}`" not in table] == []


def test_a_markdown_title_keeps_its_ampersand_and_no_tag(tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    from elelem.conversation import Conversation, SQLiteStore
    from elelem.render.markdown import conversation_markdown

    store = SQLiteStore(tmp_path / "log.db")
    conversation = Conversation.create(store, title="Fish & chips <script>x()</script>")
    document = conversation_markdown(store.info(conversation.id), store.load(conversation.id))
    assert document.splitlines()[0] == "# Fish & chips &lt;script&gt;x()&lt;/script&gt;"
    rendered = MarkdownIt("commonmark", {"html": True}).render(document)
    assert "<script>" not in rendered and "Fish &amp; chips &lt;script&gt;" in rendered


def test_a_replayed_recording_without_its_request_is_titled_from_its_answer(
    tmp_path: Path,
) -> None:
    cassette = (
        ROOT / "tests" / "corpus" / "vercel__ai"
        / "packages__anthropic__src____fixtures____anthropic-web-search-tool.1.chunks.txt"
    )  # fmt: skip
    env = base_env(tmp_path)
    played = run(env, "demo", "--keep", "--pace", "0", "--cassette", str(cassette))
    assert played.returncode == 0, played.stderr
    from elelem.conversation import open_store

    store = open_store(Path(env["ELELEM_HOME"]) / "elelem.db")
    try:
        (info,) = store.list_conversations()
    finally:
        store.close()
    assert info.title is not None and not info.title.startswith("(recorded interaction")
    assert info.title.endswith(f"… ({cassette.name})")
    assert info.title.startswith("Based on")


def test_demo_keep_lists_the_conversation_it_played_not_the_whole_log(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    for n in range(3):
        assert run(env, "ask", "-m", "test", f"question {n}").returncode == 0
    played = run(env, "demo", "--pace", "0", "--keep")
    assert played.returncode == 0, played.stderr
    tail = played.stdout.rsplit("elelem log:\n", 1)[1]
    assert len(tail.splitlines()) == 1 and "anthropic:claude-sonnet-4-5" in tail


def test_a_conversation_that_is_none_is_a_typed_error_naming_it() -> None:
    import pytest

    from elelem.errors import ArgumentTypeError
    from elelem.testing import TestModel

    with elelem.SyncClient(env={}) as client:
        for call in (elelem.run_sync, elelem.send_sync):
            with pytest.raises(ArgumentTypeError) as caught:
                call(None, client, TestModel(), "hi")  # type: ignore[arg-type]
            assert str(caught.value).endswith("Conversation.open(store, id)), not NoneType")
            assert isinstance(caught.value, TypeError)


def test_an_elelem_store_in_a_missing_folder_is_refused(tmp_path: Path) -> None:
    named = tmp_path / "no-such-folder" / "log.db"
    done = run(base_env(tmp_path, ELELEM_STORE=str(named)), "log")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"elelem: ELELEM_STORE names {named}, whose folder {named.parent} does not exist: "
        "create the folder, or correct the path\n"
    )
    assert not named.parent.exists()


def test_a_new_elelem_store_says_so_where_the_history_would_be(tmp_path: Path) -> None:
    named = tmp_path / "convrsations.db"  # a typo of a store that exists elsewhere
    env = base_env(tmp_path, ELELEM_STORE=f"sqlite:///{named}")
    first = run(env, "log")
    note = f" (ELELEM_STORE names {named}, which did not exist: a new, empty store was made)"
    assert (first.returncode, first.stderr) == (0, f"no conversations yet{note}\n")
    shown = run(base_env(tmp_path, ELELEM_STORE=str(tmp_path / "other.db")), "show")
    assert shown.returncode == 2
    assert shown.stderr == (
        "elelem: there are no conversations in this store yet (ELELEM_STORE names "
        f"{tmp_path / 'other.db'}, which did not exist: a new, empty store was made)\n"
    )
    again = run(env, "log")  # made now: an empty store like any other
    assert (again.returncode, again.stderr) == (0, "no conversations yet\n")


def test_the_new_store_note_names_only_the_store_this_command_reads(tmp_path: Path) -> None:
    # Commands run in one process (an app embedding the CLI, a test runner):
    # a store another command made is not this one's.
    runner = CliRunner()
    made = tmp_path / "made.db"
    first = runner.invoke(main, ["show"], env=base_env(tmp_path, ELELEM_STORE=str(made)))
    assert (first.exit_code, first.stderr) == (
        2,
        "elelem: there are no conversations in this store yet (ELELEM_STORE names "
        f"{made}, which did not exist: a new, empty store was made)\n",
    )
    other = runner.invoke(main, ["show"], env=base_env(tmp_path / "other"))
    assert (other.exit_code, other.stderr) == (
        2,
        "elelem: there are no conversations in this store yet\n",
    )


def test_log_on_a_terminal_has_column_headers(tmp_path: Path) -> None:
    import pexpect

    env = base_env(tmp_path)
    assert run(env, "ask", "-m", "test", "Hello there").returncode == 0
    assert run(env, "ask", "-m", "test", "Tide times?").returncode == 0
    piped = run(env, "log").stdout.splitlines()
    child = pexpect.spawn(ELELEM, ["log"], env={**env, "COLUMNS": "200"}, encoding="utf-8")
    child.expect(pexpect.EOF, timeout=60)
    shown = (child.before or "").replace("\r\n", "\n").splitlines()
    ids = [line.split()[0] for line in piped]
    stamp = piped[0].split("  ")[1]
    assert shown == [
        "ID                  UPDATED           TURNS  MODEL            COST   TITLE",
        f"{ids[0]}  {stamp}  1      test:test-model  $0.00  Tide times?",
        f"{ids[1]}  {piped[1].split('  ')[1]}  1      test:test-model  $0.00  Hello there",
    ]
    # A pipe gets the plain lines, no header to skip.
    assert [line.split()[0] for line in piped] == ids and not piped[0].startswith("ID")


def test_embed_counts_one_vector_and_one_token(tmp_path: Path) -> None:
    done = run(base_env(tmp_path), "embed", "-m", "test", "one")
    assert (done.returncode, done.stderr) == (0, "1 vector; 1 request, 1 token, $0.00\n")


def test_resume_after_an_in_process_model_names_what_to_give(tmp_path: Path) -> None:
    from elelem.conversation import Conversation, SQLiteStore
    from elelem.testing import TestModel
    from elelem.turns.pending import ResumeError, pending

    def weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    conversation = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    model = TestModel(text="It is sunny.")
    with elelem.SyncClient(env={}) as client:
        stopped = elelem.run_sync(
            conversation, client, model, "Weather?", tools=[weather], approve="defer"
        )
        assert stopped.end == "awaiting-approval"
        waiting = pending(conversation)
        assert waiting is not None
        (call,) = waiting.approval
        with pytest.raises(ResumeError) as refused:
            elelem.resume_sync(conversation, client, approvals={call.id: True}, tools=[weather])
        assert str(refused.value).startswith(
            "the stopped turn was run by 'test:test-model', which names no model this client "
            "can reach (unknown provider 'test'"
        )
        assert str(refused.value).endswith(
            "an in-process model (a TestModel, a FunctionModel) is given again: "
            "resume(..., model=the_model)"
        )
        done = elelem.resume_sync(
            conversation, client, model, approvals={call.id: True}, tools=[weather]
        )
    assert done.text == "It is sunny."
