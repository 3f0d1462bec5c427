"""Tools that run: Python functions and MCP servers as client tools of the
tool loop (:meth:`elelem.conversation.Conversation.run`).

This package sits beside the vocabulary, below the conversation layer: it
imports only :mod:`elelem.vocabulary` and :mod:`elelem.errors`, so the loop
can run any :class:`Tool` without knowing where it came from.
"""

from elelem.tools.base import Tool, ToolOutcome, describe_error, render_result
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
from elelem.tools.mcp import MCPServer, MCPServerError, MCPTool
from elelem.tools.memory import MemoryTool
from elelem.tools.workspace import ApplyPatchTool, ShellTool

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
    "describe_error",
    "parameters_schema",
    "render_result",
    "tool",
]
