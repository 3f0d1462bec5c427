"""The client side of a provider's memory tool (Anthropic ``memory_20250818``).

The model asks for memory commands (``view``, ``create``, ``str_replace``,
``insert``, ``delete``, ``rename``) on paths under ``/memories``; the
client executes them.  :class:`MemoryTool` does, in one directory and
nowhere else: a path with ``..``, an absolute path not under ``/memories``,
a NUL, or a symlink that leads out of the directory is refused with a
:class:`~elelem.errors.MemoryPathError`; a write over the tool's bound with
a :class:`~elelem.errors.MemoryTooLargeError`.  The tool loop runs it like
a Python function and sends the model its result (or the error's message).

Command names, argument names and result texts follow the memory tool page:
https://docs.claude.com/en/docs/agents-and-tools/tool-use/memory-tool
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import anyio.to_thread

from elelem.errors import ClientToolError, MemoryPathError, MemoryTooLargeError
from elelem.tools.base import HostedToolRunner, ToolOutcome, arguments_object
from elelem.vocabulary import Memory

ROOT = "/memories"
"""The virtual root every memory path starts with."""

MAX_BYTES = 10 * 1024 * 1024
"""Default bound on one memory file (written or read): 10 MiB."""


def confined(root: Path, relative: str, what: str) -> Path:
    """``relative`` (``/``-separated, no leading ``/``) inside ``root``, or a
    :class:`MemoryPathError`: a NUL, a ``..`` (also percent-encoded), or a
    symlink that resolves outside ``root``."""
    if "\x00" in relative or "\x00" in unquote(relative):
        raise MemoryPathError(f"{what}: a path may not contain a NUL byte")
    parts = [p for p in unquote(relative).replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise MemoryPathError(f"{what}: '..' may not appear in a path")
    base = root.resolve()
    target = base.joinpath(*parts)
    real = target.resolve()
    if real != base and base not in real.parents:
        raise MemoryPathError(f"{what}: the path leads outside the memory directory")
    return target


class MemoryTool(HostedToolRunner):
    """Executes memory commands in ``directory`` (created if missing).

    ``max_bytes`` bounds a file written or read; ``name`` is the tool name
    the model's calls carry (the wire's ``name``); ``timeout`` bounds one
    command, in seconds.  Asked for through :attr:`hosted`
    (``hosted_tools``), never as a function tool.
    """

    needs_approval = False
    described = "memory"

    def __init__(
        self,
        directory: str | Path,
        *,
        max_bytes: int = MAX_BYTES,
        name: str = "memory",
        timeout: float | None = 30.0,
    ) -> None:
        self.root = Path(directory)
        self.max_bytes = max_bytes
        self._name = name
        self._timeout = timeout
        self.hosted = Memory(name=name)
        self._commands: dict[str, Callable[[dict[str, Any]], str]] = {
            "view": self.view,
            "create": self.create,
            "str_replace": self.str_replace,
            "insert": self.insert,
            "delete": self.delete,
            "rename": self.rename,
        }

    @property
    def name(self) -> str:
        """The tool's name on the wire."""
        return self._name

    async def call(self, arguments: str) -> ToolOutcome:
        """Run one memory command (its JSON arguments as the model wrote them)."""
        args = arguments_object(arguments, "memory")
        command = args.get("command")
        run = self._commands.get(str(command))
        if run is None:
            raise ClientToolError(
                f"memory: unknown command {command!r} (known: {sorted(self._commands)})"
            )
        text = await anyio.to_thread.run_sync(run, args)
        return ToolOutcome(text)

    # -- paths -----------------------------------------------------------------------

    def path(self, virtual: object, what: str = "path") -> Path:
        """The file of a ``/memories/...`` path, or a :class:`MemoryPathError`."""
        if not isinstance(virtual, str) or not virtual:
            raise MemoryPathError(f"{what}: a path is required")
        if virtual != ROOT and not virtual.startswith(ROOT + "/"):
            raise MemoryPathError(f"{what}: {virtual[:200]!r} is not under {ROOT}")
        self.root.mkdir(parents=True, exist_ok=True)
        return confined(self.root, virtual[len(ROOT) :], what)

    def _text(self, args: dict[str, Any], key: str) -> str:
        value = args.get(key)
        if not isinstance(value, str):
            raise ClientToolError(f"memory: {key} must be a string")
        return value

    def _file(self, args: dict[str, Any], key: str = "path") -> tuple[Path, str]:
        target = self.path(args.get(key), key)
        if not target.is_file():
            raise ClientToolError(f"memory: {args.get(key)} does not exist")
        if target.stat().st_size > self.max_bytes:
            raise MemoryTooLargeError(f"memory: {args.get(key)} is over {self.max_bytes} bytes")
        return target, target.read_text(encoding="utf-8")

    def _write(self, target: Path, text: str) -> None:
        size = len(text.encode("utf-8"))
        if size > self.max_bytes:
            raise MemoryTooLargeError(
                f"memory: {size} bytes is over the memory tool's bound of {self.max_bytes}"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    # -- commands --------------------------------------------------------------------

    def view(self, args: dict[str, Any]) -> str:
        """A directory's listing (two levels) or a file with line numbers."""
        virtual = args.get("path")
        target = self.path(virtual)
        if target.is_dir():
            rows = [f"{_size(target)}\t{virtual}"]
            for child in sorted(target.rglob("*")):
                depth = len(child.relative_to(target).parts)
                if depth > 2 or any(p.startswith(".") for p in child.relative_to(target).parts):
                    continue
                rel = "/".join(child.relative_to(self.root.resolve()).parts)
                rows.append(f"{_size(child)}\t{ROOT}/{rel}")
            head = f"Here're the files and directories up to 2 levels deep in {virtual}, excluding hidden items:"
            return "\n".join([head, *rows])
        _, text = self._file(args)
        lines = text.split("\n")
        start, end = 1, len(lines)
        span = args.get("view_range")
        if isinstance(span, list) and len(span) == 2 and all(isinstance(n, int) for n in span):
            start, end = max(1, span[0]), len(lines) if span[1] == -1 else min(len(lines), span[1])
        numbered = [f"{n:6d}\t{lines[n - 1]}" for n in range(start, end + 1)]
        return "\n".join([f"Here's the content of {virtual} with line numbers:", *numbered])

    def create(self, args: dict[str, Any]) -> str:
        """Write a file (its parents made)."""
        target = self.path(args.get("path"))
        self._write(target, self._text(args, "file_text"))
        return f"File created successfully at: {args['path']}"

    def str_replace(self, args: dict[str, Any]) -> str:
        """Replace the one occurrence of ``old_str``."""
        target, text = self._file(args)
        old, new = self._text(args, "old_str"), self._text(args, "new_str")
        count = text.count(old) if old else 0
        if count != 1:
            found = "not found" if count == 0 else f"found {count} times"
            raise ClientToolError(
                f"memory: old_str is {found} in {args['path']}; it must be there once"
            )
        self._write(target, text.replace(old, new, 1))
        return "The memory file has been edited."

    def insert(self, args: dict[str, Any]) -> str:
        """Insert ``insert_text`` after line ``insert_line`` (0: at the top)."""
        target, text = self._file(args)
        line = args.get("insert_line")
        lines = text.split("\n")
        if not isinstance(line, int) or not 0 <= line <= len(lines):
            raise ClientToolError(f"memory: insert_line must be 0..{len(lines)}")
        lines[line:line] = self._text(args, "insert_text").split("\n")
        self._write(target, "\n".join(lines))
        return f"The file {args['path']} has been edited."

    def delete(self, args: dict[str, Any]) -> str:
        """Delete a file or a directory (never the root)."""
        target = self.path(args.get("path"))
        if target.resolve() == self.root.resolve():
            raise MemoryPathError(f"memory: {ROOT} itself may not be deleted")
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        else:
            raise ClientToolError(f"memory: {args['path']} does not exist")
        return f"Successfully deleted {args['path']}"

    def rename(self, args: dict[str, Any]) -> str:
        """Move ``old_path`` to ``new_path`` (which must not exist)."""
        source = self.path(args.get("old_path"), "old_path")
        target = self.path(args.get("new_path"), "new_path")
        if not source.exists():
            raise ClientToolError(f"memory: {args['old_path']} does not exist")
        if target.exists():
            raise ClientToolError(f"memory: {args['new_path']} already exists")
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)
        return f"Successfully renamed {args['old_path']} to {args['new_path']}"


def _size(path: Path) -> str:
    size = path.stat().st_size if path.is_file() else 4096
    return f"{size / 1024:.1f}K" if size >= 1024 else f"{size}"


__all__ = ["MAX_BYTES", "ROOT", "MemoryTool", "confined"]
