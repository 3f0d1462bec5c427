"""Every shell example of README.md and docs/*.md runs, offline: the
commands in fenced blocks and the ``elelem …`` code spans of the prose.

Each runs in a fresh home holding the demo conversation (``elelem demo
--keep``) against a loopback provider that answers every request with the
demo recording, with the placeholders the docs use (``PATH``, ``ID``,
``FILE``, ``"…"``) filled in with real files and ids.  An example that
cannot run offline is named in :data:`NOT_OFFLINE` with the test that runs
its substance instead; a new example that is neither runs here or fails
:func:`test_every_example_is_known`.  The Python examples are run by
tests/test_readme.py, tests/test_tools_doc.py and tests/test_docs_web.py;
:func:`test_every_python_example_is_run` keeps that inventory true.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import KEY, base_env, demo_body
from elelem.cli import main
from elelem.conversation import open_store
from elelem.recordings.loopback import RecordedRequest, Reply
from elelem.testing.servers import LoopbackServer, replay, status
from media_fixtures import png

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

NOT_OFFLINE = {
    "make test": "the whole suite itself (CI runs it: bash .ci/run)",
    "elelem files rm ID": (
        "deletes a file at its provider; tests/test_provider_files.py runs files rm "
        "against a loopback Files API"
    ),
    **dict.fromkeys(
        (
            "elelem files download",
            "elelem files download FILE",
            "elelem files download file_011CNha8iCJcU1wXNR6q4V8w -o budget.xlsx",
        ),
        "needs a conversation whose hosted code execution made a file at the provider; "
        "tests/test_generated_files.py runs files generated and files download against "
        "loopback Anthropic and OpenAI Files APIs",
    ),
    "elelem chat --mcp 'uvx mcp-server-time' --mcp https://mcp.example.com/mcp --approve": (
        "needs uvx, a remote MCP server and a terminal; tests/test_mcp_local.py and "
        "tests/test_cli_tools.py run --mcp and --approve against local servers"
    ),
    **dict.fromkeys(
        (
            "elelem mcp tools 'uvx mcp-server-time' --call get_current_time "
            """'{"timezone": "Europe/Paris"}'""",
            "elelem mcp tools https://mcp.example.com/mcp",
            "elelem mcp tools SERVER",
        ),
        "needs uvx or a remote MCP server; tests/test_cli_mcp.py runs elelem mcp tools "
        "against local servers over stdio and HTTP",
    ),
    "elelem ask -m vertex:gemini-2.5-flash": (
        "needs Google Cloud credentials and Vertex AI; tests/test_vertex.py and "
        "tests/test_clouds_cli.py run it against loopback servers"
    ),
    "elelem ask -m azure:my-deployment": (
        "needs an Azure deployment and Entra ID; tests/test_azure.py and "
        "tests/test_clouds_cli.py run it against loopback servers"
    ),
    "elelem ask -m test --mcp URL": (
        "needs an MCP server at URL; tests/test_first_hour_test_model.py runs -m test "
        "--mcp against the local weather server"
    ),
    **dict.fromkeys(
        ("elelem approve ID", "elelem resume ID", "elelem approve ID --functions tools.py"),
        "needs a run stopped by --defer (the demo conversation waits for nothing); "
        "tests/test_deferred.py::test_the_cli_defers_then_approves_in_a_later_process "
        "runs ask --defer, approve and resume",
    ),
}

# Issue #30's commands (embeddings, batches), documented after this test was
# written: they need embedding and batch endpoints this test's loopback
# provider does not serve yet; their own tests run each against loopback
# servers.  Named one by one, so an example added later still fails.
ISSUE_30 = {
    command: "tests/test_embeddings.py, tests/test_embedding_collections.py and "
    "tests/test_batches.py run it against loopback servers"
    for command in (
        "elelem embed -m openai:text-embedding-3-small -c notes -i notes.txt",
        'elelem similar notes "where did I park"',
        'elelem embed -m google:gemini-embedding-001 "one text" --task query',
        "elelem batch submit prompts.txt -m openai:gpt-4o-mini --max-tokens 200",
        "elelem batch status batch_abc123",
        "elelem batch results batch_abc123 --json",
        "elelem embed -c NAME",
        "elelem batch submit",
        "elelem embed TEXT... -m MODEL",
        "elelem similar NAME TEXT",
        "elelem collections [list|delete NAME]",
        "elelem batch submit FILE|- -m MODEL",
        "elelem batch status REF",
    )
}
NOT_OFFLINE.update(ISSUE_30)
NOT_OFFLINE.update(
    {
        command: "tests/test_live_cli.py runs it against loopback Realtime and Gemini Live servers"
        for command in (
            "elelem live -m openai:gpt-realtime --audio-in question.wav --audio-out answer.wav",
            'elelem live -m google:gemini-live-2.5-flash --text "Hello" --text "And the weather?"',
            "elelem live -m MODEL",
        )
    }
)
NOT_OFFLINE['elelem ask -m openai:gpt-5 --shell --approve "How big is this folder?"'] = (
    "needs an OpenAI Responses server and a terminal to approve on; "
    "tests/test_provider_tools.py runs ask --shell against a loopback Responses server"
)
NOT_OFFLINE.update(
    {
        command: "tests/test_cli_speak.py runs it against a loopback audio/speech"
        for command in (
            'elelem speak -m openai:gpt-4o-mini-tts "Hello there." -o hello.mp3',
            "elelem speak",
            "elelem speak TEXT... -m MODEL [-o FILE]",
        )
    }
)
NOT_OFFLINE.update(
    {
        command: "tests/test_cli_transcribe.py runs it against a loopback audio/transcriptions"
        for command in (
            "elelem transcribe voice.wav -m openai:gpt-4o-transcribe --language en",
            "elelem transcribe memo.mp3 -m openai:whisper-1 --no-stream --json",
            "elelem transcribe FILE",
            "elelem transcribe FILE -m MODEL",
        )
    }
)

NOT_OFFLINE.update(
    {
        "elelem worker temporal --task-queue agents --tools mypackage.tools": (
            "a worker runs until stopped, against a Temporal server; "
            "tests/test_durable_temporal_kill.py runs elelem worker temporal processes"
        ),
        "elelem worker dbos --system-database sqlite:///dbos.sqlite --executor-id w1 "
        "--tools mypackage.tools": (
            "a worker runs until stopped; tests/test_durable_dbos_kill.py runs elelem "
            "worker dbos processes"
        ),
        "elelem approve ID --yes CALL --dbos sqlite:///dbos.sqlite": (
            "needs a durable run waiting on DBOS; tests/test_durable_dbos.py::"
            "test_a_deferred_run_resumes_on_a_decide_message runs it"
        ),
        "elelem approve ID --yes CALL --temporal 127.0.0.1:7233": (
            "needs a durable run waiting on a Temporal server; tests/test_durable_temporal.py::"
            "test_an_approval_signal_after_the_worker_pool_restarted_resumes_the_run runs it"
        ),
    }
)

QUESTION = "How tall is the Eiffel Tower?"

# A command named in the prose without the argument it needs: run it with one.
MENTIONS = {
    "elelem inspect": "elelem inspect PATH",
    "elelem demo --cassette": "elelem demo --cassette PATH",
    "elelem log -s": "elelem log -s tower",
}

# ask's options that take a value: a command ending in one has no question yet.
VALUE_OPTIONS = {"-m", "--model", "-a", "--attach", "--cache", "--functions", "--tool",
                 "--max-steps", "-s", "--system", "-c"}  # fmt: skip
MODELS = (
    b'{"data":[{"type":"model","id":"claude-sonnet-4-5-20250929","display_name":"Claude Sonnet 4.5",'
    b'"created_at":"2025-09-29T00:00:00Z"}],"has_more":false,"first_id":null,"last_id":null}'
)


def _shell_lines(text: str) -> Iterator[str]:
    for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
        if lang not in ("sh", "bash", "console", "text", ""):
            continue
        for line in body.splitlines():
            command = line.split("  #", 1)[0].strip()
            if re.match(r"(make |elelem |[A-Z_]+=\S* elelem )", command):
                yield command


def _spans(text: str) -> Iterator[str]:
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for span in re.findall(r"`([^`]+)`", prose):
        # In a table cell a pipe is written \| (GFM), even inside code.
        command = " ".join(span.split()).replace("\\|", "|")
        # "elelem ask / Client.stream / elelem.send" names entry points: prose.
        if re.match(r"(cat \S+ \| )?elelem [a-z]", command) and " / " not in command:
            yield command


def examples() -> list[str]:
    """Every shell example of the docs, each once, in document order."""
    seen: dict[str, None] = {}
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for command in [*_shell_lines(text), *_spans(text)]:
            seen.setdefault(command, None)
    return list(seen)


def test_every_example_is_known() -> None:
    found = examples()
    assert len(found) >= 25
    assert set(NOT_OFFLINE) <= set(found), "an excused example left the docs"


def test_every_python_example_is_run() -> None:
    counts = {
        doc.name: len(re.findall(r"```python\n", doc.read_text(encoding="utf-8"))) for doc in DOCS
    }
    assert {k: v for k, v in counts.items() if v} == {
        "README.md": 2,  # tests/test_first_hour_docs.py (the top), tests/test_readme.py (the tour)
        "tools.md": 2,  # tests/test_tools_doc.py (the function tool, testing your agent)
        "web.md": 1,  # tests/test_docs_web.py
        "beyond-chat.md": 5,  # tests/test_beyond_chat_doc.py
        "live.md": 2,  # tests/test_live_doc.py
        "durable.md": 2,  # tests/test_durable_doc.py (Temporal, DBOS)
    }


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A working folder with the example files, a store holding the demo
    conversation, and a provider that answers as the demo recording."""
    body = demo_body()
    work = tmp_path / "work"
    (work / "mypackage").mkdir(parents=True)
    (work / "mypackage" / "__init__.py").write_text("")
    tool = 'def get_weather(city: str) -> str:\n    """The weather."""\n    return "18°C"\n'
    (work / "mypackage" / "tools.py").write_text(tool)
    (work / "tools.py").write_text(tool)
    (work / "screenshot.png").write_bytes(png())
    (work / "report.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    (work / "notes.txt").write_text("Some notes about the tower.\n")
    (work / "shot.png").write_bytes(png())
    monkeypatch.chdir(work)
    monkeypatch.syspath_prepend(str(work))

    def answer(request: RecordedRequest) -> Reply:
        if request.path.startswith("/v1/models"):
            return status(200, MODELS)
        return replay(body)

    with LoopbackServer(answer, lifetime=120) as server:
        env = base_env(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.url)
        env["ELELEM_MODEL"] = "anthropic:claude-sonnet-4-5"
        played = CliRunner().invoke(main, ["demo", "--pace", "0", "--keep"], env=env)
        assert played.exit_code == 0, played.stderr
        yield env


def _conversation_id(env: dict[str, str]) -> str:
    store = open_store(Path(env["ELELEM_HOME"]) / "elelem.db")
    try:
        return str(store.list_conversations()[0].id)
    finally:
        store.close()


def filled(command: str, env: dict[str, str], work: Path) -> list[tuple[list[str], str | bytes]]:
    """The argv (without ``elelem``) and stdin of an example, its placeholders
    filled in; ``keys set/list/path/remove`` is four commands."""
    stdin: str | bytes = ""
    if command.startswith("cat "):
        piped, _, command = command.partition(" | ")
        stdin = (work / piped.split()[1]).read_bytes()
    command = MENTIONS.get(command, command)
    words = shlex.split(command.replace("…", QUESTION))
    assert words[0] == "elelem", command
    words = words[1:]
    if words[:2] == ["keys", "set/list/path/remove"]:
        return [
            (["keys", "set", "anthropic"], KEY),
            (["keys", "list"], ""),
            (["keys", "path"], ""),
            (["keys", "remove", "anthropic"], ""),
        ]
    out = []
    for i, word in enumerate(words):
        before = words[i - 1] if i else ""
        if word in ("[ID]", "ID", "ID..."):
            out.append(_conversation_id(env))
        elif word in ("PROMPT",):
            out.append(QUESTION)
        elif word == "PATH":
            out.append(str(ROOT / "src" / "elelem" / "data" / "demo.yaml"))
        elif word == "FILE" and before == "-o":
            out.append(str(work / "out.html"))
        elif word == "FILE" and before == "-a":
            out.append(str(work / "screenshot.png"))
        elif word == "FILE":
            out.append(str(work / "exported.json"))
        elif word == "PROVIDER":
            out.append("anthropic")
            stdin = KEY
        elif word == "[PROVIDER]":
            continue
        elif re.fullmatch(r"\[[^]]*\|[^]]*\]", word):
            out.append(word[1:-1].split("|")[0])  # [5m|1h|24h]: one of them
        else:
            out.append(word)
    unasked = len(out) == 1 or out[-1].startswith("-") or out[-2] in VALUE_OPTIONS
    if out[0] == "ask" and not stdin and unasked:
        out.append(QUESTION)  # a form shown without its question
    if out[:2] == ["keys", "set"]:
        stdin = KEY
    if out[0] == "chat":
        stdin = "hello\n"
    return [(out, stdin)]


RUNNABLE = [c for c in examples() if c not in NOT_OFFLINE]


@pytest.mark.parametrize("command", RUNNABLE)
def test_the_example_runs(command: str, home: dict[str, str]) -> None:
    work = Path.cwd()
    if command.startswith("make "):
        # The virtualenvs count as installed: the suite's own (whatever its
        # path, not the clone's .venv), which the demo is pointed at too.
        venv = sys.prefix
        done = subprocess.run(
            [
                "make",
                "-o",
                ".venv/.installed",
                "-o",
                f"{venv}/.installed-demo",
                f"DEMO_VENV={venv}",
                *command.split()[1:],
            ],
            cwd=ROOT,
            env={**home, "PATH": home["PATH"]},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return
    if "=" in command.split()[0]:
        command = command.split(" ", 1)[1]  # the key is in the environment already
    if command.split()[:2] == ["elelem", "serve"]:
        _serve(home)
        return
    if command.startswith("elelem import"):
        exported = CliRunner().invoke(main, ["export", "-o", str(work / "exported.json")], env=home)
        assert exported.exit_code == 0, exported.stderr
        home = {**home, "ELELEM_HOME": str(work / "another-home")}  # a store without it
    for argv, stdin in filled(command, home, work):
        result = CliRunner().invoke(main, argv, env=home, input=stdin)
        assert result.exception is None or isinstance(result.exception, SystemExit), argv
        assert result.exit_code == 0, (argv, result.stderr)


def _serve(env: dict[str, str]) -> None:
    """``elelem serve`` prints its URL and serves until stopped (on a free
    port here: 8377 may be taken by another run)."""
    elelem = str(Path(__import__("sys").executable).with_name("elelem"))
    with subprocess.Popen(
        [elelem, "serve", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline()
            assert re.fullmatch(r"elelem serve: open http://127\.0\.0\.1:\d+/\?token=\S+\n", first)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
