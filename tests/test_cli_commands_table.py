"""Every ``elelem`` command is registered in one place: the table
``elelem.cli.commands.COMMANDS``, and no other module of the command adds one
to a group."""

from __future__ import annotations

import ast
from pathlib import Path

from elelem.cli import main
from elelem.cli.commands import COMMANDS

CLI = Path(__file__).resolve().parent.parent / "src" / "elelem" / "cli"


def test_the_group_holds_exactly_the_table() -> None:
    assert list(main.commands.values()) == list(COMMANDS)
    assert len({c.name for c in COMMANDS}) == len(COMMANDS)  # no name twice


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
