"""Every ``elelem`` command is registered in one place: the table
``elelem.cli.commands.COMMANDS``, and no other module of the command adds one
to a group; each row's module is imported only when its command is asked for."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import click

from elelem.cli import main
from elelem.cli.commands import COMMANDS
from elelem.tools import MCPServer

CLI = Path(__file__).resolve().parent.parent / "src" / "elelem" / "cli"


def test_the_group_holds_exactly_the_table() -> None:
    ctx = click.Context(main)
    names = [name for name, _ in COMMANDS]
    assert len(set(names)) == len(names)  # no name twice
    assert main.list_commands(ctx) == sorted(names)
    for name, where in COMMANDS:
        command = main.get_command(ctx, name)
        module, _, attribute = where.partition(":")
        assert command is getattr(sys.modules[module], attribute)
        assert isinstance(command, click.Command)
        assert command.name == name


DEFERRED_AT_ASK = (
    "jsonschema", "yaml", "markdown_it", "pygments", "starlette", "webbrowser",
    "rich.live", "rich.spinner", "rich.status",
    "elelem.tools.mcp", "elelem.cli.mcp", "elelem.cli.sampling", "elelem.cli.testmodel",
    "elelem.testing", "elelem.recordings.loopback", "elelem.cli.history",
    "elelem.render.markdown",
)  # fmt: skip
"""What ``elelem ask`` imports only when an option or a terminal needs it:
the MCP client (``--mcp``), MCP sampling, the test model (``-m test``), a
browser (an MCP URL elicitation), the live region (a terminal), the history
commands' module (``--continue``)."""


def test_asking_imports_only_the_command_asked_for() -> None:
    # `elelem ask` must not pay for what serve, inspect or live import, nor
    # for what only some of its own options need.
    code = (
        "import sys\n"
        "from elelem.cli import main\n"
        "main(['ask', '--help'], standalone_mode=False)\n"
        "print(sorted(m for m in sys.modules if m.startswith('elelem.cli.')"
        " and m.rsplit('.', 1)[1] in {'serve', 'inspect', 'live', 'demo', 'batch', 'worker'}))\n"
        f"print(sorted(m for m in {DEFERRED_AT_ASK!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.splitlines()[-2:] == ["[]", "[]"]
    # The option that needs the MCP client still finds it, the public name too.
    assert MCPServer.__module__ == "elelem.tools.mcp"


def test_importing_elelem_leaves_out_what_few_need() -> None:
    # A Retry-After date (email.utils) and the plugin lookup
    # (importlib.metadata) load when first needed, not at `import elelem`.
    code = (
        "import sys\nimport elelem\n"
        "print(sorted(m for m in ('email.utils', 'importlib.metadata', 'httpx2')"
        " if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.splitlines()[-1] == "[]"


def test_no_other_module_registers_a_command_on_the_group() -> None:
    adders = sorted(
        path.name
        for path in CLI.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and node.attr == "add_command"
        and isinstance(node.value, ast.Name)
        and node.value.id in ("main", "group")
    )
    assert adders == ["commands.py"]
