"""Every option and argument of every command, given a bad value: the command
exits 1 or 2 with one ``elelem: …`` line on stderr, never 70 (an internal
error) and never a traceback.

The walk reads the command tree from click itself, so a new option without
bad values here fails :func:`test_every_option_has_bad_values`.  Commands run
in-process (click's CliRunner) against a provider on 127.0.0.1 that answers
every request with a 400; ``serve``, which would serve forever if a bad value
slipped through, runs as a subprocess with a timeout.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from cli_helpers import KEY, base_env, run
from elelem.cli import main
from elelem.testing.servers import LoopbackServer, status

MODEL = "anthropic:claude-sonnet-4-5"
REFUSAL = b'{"type":"error","error":{"type":"invalid_request_error","message":"refused"}}'

# Bad values by click type; a path value starting with "@" is a file this
# test writes (see `files`).
BY_TYPE: dict[str, list[str]] = {
    "integer range": ["x", "-1", "0", "99999999999999999999999", "1e3"],
    "integer": ["x", "1.5"],
    "float range": ["x", "-1", "nan", "inf", "-inf", "1e308"],
    "choice": ["nope", "", "\udcff"],
    "file": ["/nonexistent/elelem-26", "@dir", "@garbage", "@binary", "@empty", "@long"],
    "directory": ["@garbage", "/proc/version/x", "@long"],
}
# "@long" is a name longer than a path may be, "@nul" one with a NUL byte
# (a text option's: no command line can carry one, and click's own path
# type lets os.stat's ValueError out, so a click path is not given it).


# Bad values of text options and arguments, by command and name (None: every
# command that has it).
BY_NAME: dict[tuple[str | None, str], list[str]] = {
    ("serve", "given_token"): [
        "",
        "short",
        "has a space in it here",
        "\x1b[31mred-token-0123456789",
        "\udcff",
    ],
    (None, "model"): ["", "::", "nosuch:model", "anthropic:", "\x1b[31mred", "\udcff"],
    (None, "system"): ["\udcff"],
    (None, "continue_"): ["c_nosuch", "", "\udcff"],
    (None, "schema"): [
        "{bad",
        "[]",
        "name badtype",
        "{}",
        '{"type": "nonsense"}',
        "@nul",
        "@long",
        "[" * 5000 + "]" * 5000,
        '{"type": "object", "properties": 5}',
    ],
    (None, "tool_refs"): ["nocolon", "os:no_such_fn", "no_such_module_26:f", ":", "os:sep"],
    (None, "computer_ref"): ["nocolon", "os:no_such_fn", "no_such_module_26:f", ":", "os:sep", ""],
    (None, "computer_environment"): ["android", "Browser", "", "browser,mobile", "\udcff"],
    (None, "mcp_specs"): ["http://127.0.0.1:9/mcp", "", "'unterminated", "no-such-command-26"],
    (None, "mcp_sampling_model"): ["", " ", "nosuch:model", "anthropic:", "\x1b[31mred", "\udcff"],
    (None, "context_editing"): ["", "clear-all", "clear-thinking,clear-thinking", "\udcff"],
    (None, "attachments"): ["/nonexistent/elelem-26", "@dir", "", "\udcff", "@long", "@nul"],
    ("serve", "host"): ["192.0.2.1", "::g", ""],
    ("serve", "port"): ["x", "-1", "65536", "99999999999999999999999"],  # 0: any free port
    ("keys set", "value"): ["", "\x00", "has\nnewline"],
    ("fork", "at"): ["e_nosuch", ""],
    ("fork", "title"): ["\udcff"],
    ("log", "search"): ["\udcff"],
    (None, "conversation"): ["c_nosuch", "", "\udcff", "last", "c_\x00", "c" * 5000],
    (None, "conversations"): ["c_nosuch", ""],
    (None, "title"): ["\udcff"],
    (None, "provider"): ["nosuch", "", "\udcff"],
    (None, "prompt"): [""],
    (None, "yes"): ["call_nosuch", "", "\udcff"],
    (None, "no"): ["call_nosuch", "", "\udcff"],
    (None, "results"): ["nocall", "call_nosuch=x", "=x", "\udcff"],
    ("embed", "texts"): ["\udcff", ""],
    ("embed", "source"): ["/nonexistent/elelem-26", "@dir", "@binary", "@garbage", "@long", "@nul"],
    ("embed", "collection"): ["", "\udcff", "a/b"],
    ("embed", "ids"): ["\udcff", ""],
    ("similar", "collection"): ["no-such-collection", "", "\udcff"],
    ("similar", "text"): ["\udcff"],
    ("similar", "item"): ["no-such-item", "\udcff"],
    ("collections delete", "name"): ["no-such-collection", "", "\udcff"],
    (None, "ref"): ["no-such-batch", "", "\udcff"],
    ("speak", "text"): ["\udcff", "", "   "],
    ("speak", "output"): ["@dir", "/nonexistent/elelem-26/out.mp3", "@long"],
    ("speak", "voice"): ["\udcff"],
    ("speak", "instructions"): ["\udcff"],
    ("live", "texts"): ["\udcff", ""],
    ("live", "voice"): ["\udcff"],
    ("transcribe", "language"): ["\udcff", "", " "],
    ("transcribe", "prompt"): ["\udcff", "", " "],
    ("batch submit", "source"): [
        "/nonexistent/elelem-26",
        "@dir",
        "@binary",
        "@garbage",
        "@empty",
        "@long",
        "@nul",
    ],
    ("ask", "mcp_prompt"): ["", "nocolon", "'unterminated", "s:p novalue", "nosuch:p", "\udcff"],
    (None, "temporal"): ["", "no-port", "127.0.0.1:x", "127.0.0.1:99999", "\udcff"],
    (None, "dbos"): ["", "mysql://x", "sqlite:////proc/nonexistent/x.db", "\udcff"],
    ("worker temporal", "address"): ["", "no-port", "127.0.0.1:x", "127.0.0.1:99999", "\udcff"],
    ("worker temporal", "task_queue"): ["", "\udcff"],
    ("worker temporal", "namespace"): ["", "\udcff"],
    (None, "tool_modules"): ["/nonexistent/elelem-26.py", "no_such_module_26", "", "\udcff"],
    ("worker dbos", "system_database"): ["", "mysql://x", "sqlite:////proc/no/x.db", "\udcff"],
    ("worker dbos", "executor_id"): ["", "\udcff"],
    ("mcp tools", "server"): ["", "'unterminated", "no-such-command-26", "ftp://x", "\udcff"],
    ("mcp tools", "protocol"): ["nope", "", "\udcff"],
    ("mcp tools", "startup_timeout"): ["x", "-1", "0", "nan", "inf"],
    (None, "client_id"): ["", "\udcff"],
    (None, "client_secret"): ["", "\udcff"],
    (None, "client_metadata_url"): ["", "not-a-url", "http://insecure.example/c", "\udcff"],
    (None, "url"): ["", "nocolon", "ftp://x", "http://127.0.0.1:9/mcp", "\udcff"],
    ("mcp logout", "target"): ["", "https://nosuch.example/mcp", "nosuch", "\udcff"],
    ("files rm", "file_id"): ["file_nosuch", "", "\udcff", "../v1/models"],
    (None, "skills"): ["", "anthropic:", "pptx@", "a/b", "../x", "\udcff"],
    ("files download", "file_id"): ["file_nosuch", "", "\udcff", "../v1/models"],
    ("files download", "output"): ["@dir", "/nonexistent/elelem-26/out.bin", "@long"],
    **{
        (None, f"limit_{count}"): ["x", "-1", "0", "1.5", "1e3", "4611686018427387905", "\udcff"]
        for count in ("requests", "input_tokens", "output_tokens", "total_tokens")
    },
    # 0 tool calls is a bound (none may run), not a bad value.
    (None, "limit_tool_calls"): ["x", "-1", "1.5", "1e3", "4611686018427387905", "\udcff"],
    (None, "limit_cost"): ["x", "-1", "nan", "inf", "-inf", "1e999", "$1", "\udcff"],
    # serve is walked by starting a process per value: the same option types
    # as above, so a few values of each kind, not the whole list again.
    **{
        ("serve", f"limit_{count}"): ["x", "0", "4611686018427387905"]
        for count in ("requests", "input_tokens", "output_tokens", "total_tokens")
    },
    ("serve", "limit_tool_calls"): ["x", "-1", "4611686018427387905"],
    ("serve", "limit_cost"): ["-1", "nan", "1e999"],
    (None, "path"): BY_TYPE["file"],
    (None, "file"): BY_TYPE["file"],
}

# -o takes two values.
OPTION_PAIRS = [
    ("bogus", "1"),
    ("temperature", "hot"),
    ("temperature", "5"),
    ("", ""),
    ("seed", "x"),
    ("temperature", "nan"),
    ("top_p", "inf"),
    ("max_tokens", "99999999999999999999999"),
    ("extra.x", "[" * 5000),
    ("\udcff", "1"),
]

# Commands that need a valid argument beside the option under test.
BASE_ARGS: dict[str, list[str]] = {
    "ask": ["hello"],
    "show": ["last"],
    "export": ["last"],
    "rename": ["last", "title"],
    "fork": ["last"],
    "keys set": ["anthropic"],
    "keys remove": ["anthropic"],
    "import": ["@garbage"],
    "inspect": ["@garbage"],
    "models": ["anthropic"],
    "rm": ["c_nosuch"],
    "embed": ["-m", "openai:text-embedding-3-small"],
    "similar": ["notes", "text"],
    "batch submit": ["@garbage", "-m", MODEL],
    "speak": ["-m", MODEL],
    "transcribe": ["-m", MODEL],
    "worker temporal": ["--task-queue", "q", "--address", "127.0.0.1:9"],
    "worker dbos": ["--executor-id", "w1", "--system-database", "mysql://x"],
    "mcp tools": ["http://127.0.0.1:9/mcp"],
    "mcp login": ["http://127.0.0.1:9/mcp"],
    "files rm": ["file_nosuch"],
    "files download": ["file_nosuch"],
}

# Options whose value is free text every value of which is valid, or flags.
NO_BAD_VALUE = {"help", "version", "debug"}


def commands() -> Iterator[tuple[str, click.Command]]:
    def walk(command: click.Command, path: list[str]) -> Iterator[tuple[str, click.Command]]:
        if isinstance(command, click.Group):
            if path:
                yield " ".join(path), command
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, name
                yield from walk(sub, [*path, name])
        else:
            yield " ".join(path), command

    yield from walk(main, [])


def bad_values(command: str, param: click.Parameter) -> list[str]:
    name = param.name or ""
    for key in ((command, name), (None, name)):
        if key in BY_NAME:
            return BY_NAME[key]
    return BY_TYPE.get(param.type.name, [])


def cases() -> Iterator[tuple[str, click.Parameter, list[str]]]:
    for path, command in commands():
        for param in command.params:
            if param.name in NO_BAD_VALUE:
                continue
            if isinstance(param, click.Option):
                if param.is_flag:
                    continue
                flag = max(param.opts, key=len)
                if param.nargs == 2:
                    for pair in OPTION_PAIRS:
                        yield path, param, [flag, *pair]
                    continue
                for value in bad_values(path, param):
                    yield path, param, [flag, value]
            else:
                for value in bad_values(path, param):
                    yield path, param, [value]


CASES = [
    pytest.param(path, argv, id=f"{path or 'elelem'}:{param.name}:{argv[-1]!r}")
    for path, param, argv in cases()
]


def test_every_option_has_bad_values() -> None:
    """Every option that takes a value and every argument is walked."""
    missing = [
        f"{path} {param.name}"
        for path, command in commands()
        for param in command.params
        if param.name not in NO_BAD_VALUE
        and not (isinstance(param, click.Option) and (param.is_flag or param.nargs == 2))
        and not bad_values(path, param)
    ]
    assert missing == []


@pytest.fixture(scope="module")
def provider() -> Iterator[LoopbackServer]:
    with LoopbackServer(lambda _request: status(400, REFUSAL), lifetime=600) as server:
        yield server


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("bad-values")
    (root / "dir").mkdir()
    (root / "garbage").write_text("this is not what any command reads\n{[")
    (root / "binary").write_bytes(bytes(range(256)) * 8)
    (root / "empty").write_bytes(b"")
    named = {f"@{p.name}": str(p) for p in root.iterdir()}
    return {**named, "@long": str(root / ("x" * 5000)), "@nul": str(root / "a\x00b")}


@pytest.fixture
def env(tmp_path: Path, provider: LoopbackServer) -> dict[str, str]:
    return base_env(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=provider.url)


# Commands whose base argument is left out when the argument itself is
# under test (given alone), so the bad value is the one the command reads.
OWN_ARGUMENT = {"mcp tools", "mcp login"}


def base_args(path: str, given: list[str]) -> list[str]:
    """BASE_ARGS of ``path``, less an option ``given`` sets (click keeps an
    option's last value, which would hide the bad one)."""
    base, kept = BASE_ARGS.get(path, []), []
    at = 0
    while at < len(base):
        if base[at].startswith("--"):
            if base[at] not in given:
                kept += base[at : at + 2]
            at += 2
            continue
        if not (path in OWN_ARGUMENT and len(given) == 1):
            kept.append(base[at])
        at += 1
    return kept


def argv_of(path: str, given: list[str], files: dict[str, str]) -> list[str]:
    words = [*path.split(), *given, *base_args(path, given)]
    if path in ("ask", "chat") and "--model" not in given:
        words[1:1] = ["-m", MODEL]
    return [files.get(w, w) for w in words]


def check_one_line(status: int, stderr: str, argv: list[str]) -> None:
    assert "Traceback" not in stderr, (argv, stderr)
    if argv[0] == "chat" and stderr.startswith("chat with "):
        # The value was taken and the message sent: the provider's refusal
        # is the answer's error line, and the chat goes on to the end of stdin.
        greeting, _, stderr = stderr.partition("\n")
        assert status == 0, (argv, status, greeting, stderr)
        assert stderr.startswith("elelem: invalid-request: ") and stderr.count("\n") == 1
        return
    assert status in (1, 2), (argv, status, stderr)
    assert stderr.startswith("elelem: ") and stderr.count("\n") == 1, (argv, stderr)


@pytest.mark.parametrize(("path", "given"), [c for c in CASES if c.values[0] != "serve"])
def test_a_bad_value_is_one_line_and_exit_1_or_2(
    path: str, given: list[str], env: dict[str, str], files: dict[str, str]
) -> None:
    argv = argv_of(path, given, files)
    result = CliRunner().invoke(main, argv, env=env, input="hello\n")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{argv}: escaped {result.exception!r}") from result.exception
    check_one_line(result.exit_code, result.stderr, argv)


@pytest.mark.parametrize(
    ("path", "given"),
    # No command line can carry a NUL byte: the in-process walk has those.
    [c for c in CASES if c.values[0] == "serve" and c.values[1][-1] != "@nul"],
)
def test_serve_given_a_bad_value_exits_at_once(
    path: str, given: list[str], env: dict[str, str], files: dict[str, str]
) -> None:
    argv = argv_of(path, given, files)
    if "--port" not in given:
        argv += ["--port", "0"]  # a good value given, the bad one alone is refused
    result = run(env, *argv)
    check_one_line(result.returncode, result.stderr, argv)


@pytest.mark.parametrize(
    "store",
    ["postgresql://127.0.0.1:9/x", "sqlite:////proc/nonexistent/y.db", "mysql://x", "/proc/x.db"],
)
def test_a_bad_store_is_one_line(store: str, env: dict[str, str]) -> None:
    """ELELEM_STORE is input too: a store that cannot open is exit 3 (the
    documented store status), one line."""
    result = CliRunner().invoke(main, ["log"], env={**env, "ELELEM_STORE": store})
    assert result.exit_code in (2, 3), (store, result.exit_code, result.stderr)
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("elelem: ") and result.stderr.count("\n") == 1


def test_the_walk_covers_the_commands() -> None:
    """The walk is real: it reaches every command and dozens of values."""
    paths = {path for path, _command in commands()}
    assert {"ask", "chat", "serve", "keys set", "log", "inspect", "demo"} <= paths
    assert len(CASES) > 150
