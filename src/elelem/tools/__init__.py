"""Tools that run: Python functions and MCP servers as client tools of the
tool loop (:meth:`elelem.conversation.Conversation.run`).

This package sits beside the vocabulary, below the conversation layer: it
imports only :mod:`elelem.vocabulary` and :mod:`elelem.errors`, so the loop
can run any :class:`Tool` without knowing where it came from.
"""

from typing import TYPE_CHECKING

from elelem.errors import MCPServerError
from elelem.tools.base import Tool, ToolOutcome, call_key, describe_error, render_result
from elelem.tools.computer import Computer, ComputerTool
from elelem.tools.functions import (
    DEFAULT_TIMEOUT,
    ExternalTool,
    FunctionTool,
    arguments_struct,
    as_tool,
    parameters_schema,
    tool,
)
from elelem.tools.memory import MemoryTool
from elelem.tools.workspace import ApplyPatchTool, ShellTool

if TYPE_CHECKING:
    from elelem.tools.mcp import MCPServer, MCPTool


def __getattr__(name: str) -> object:
    # The MCP client (its transports, notes, result decoding) loads on first
    # use: a command or program with no MCP server does not pay its import.
    if name in ("MCPServer", "MCPTool"):
        from elelem.tools import mcp

        return getattr(mcp, name)
    raise AttributeError(f"module 'elelem.tools' has no attribute {name!r}")


__all__ = [
    "DEFAULT_TIMEOUT",
    "ApplyPatchTool",
    "Computer",
    "ComputerTool",
    "ExternalTool",
    "FunctionTool",
    "MCPServer",
    "MCPServerError",
    "MCPTool",
    "MemoryTool",
    "ShellTool",
    "Tool",
    "ToolOutcome",
    "arguments_struct",
    "as_tool",
    "call_key",
    "describe_error",
    "parameters_schema",
    "render_result",
    "tool",
]
