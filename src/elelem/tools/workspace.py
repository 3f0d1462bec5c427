"""The client side of OpenAI's ``shell``, ``local_shell`` and ``apply_patch``
tools: the model asks, the client runs, after approval.

:class:`ShellTool` runs the commands of a ``shell_call`` (each through
``/bin/sh -c``) or the argv of a ``local_shell_call``; :class:`ApplyPatchTool`
applies an ``apply_patch_call``'s operation (``create_file``,
``update_file`` with a V4A diff, ``delete_file``) inside one directory.
Both say ``needs_approval``: the tool loop asks its approval callback
before each call, and a run with no callback refuses them (the refusal is
the call's result, in the log).

Wire forms (items, outputs):
https://platform.openai.com/docs/guides/tools-shell,
https://platform.openai.com/docs/guides/tools-local-shell,
https://platform.openai.com/docs/guides/tools-apply-patch
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import msgspec

from elelem.errors import ClientToolError, MemoryPathError, PatchError
from elelem.tools.base import HostedToolRunner, ToolOutcome, arguments_object
from elelem.tools.memory import confined
from elelem.vocabulary import ApplyPatch, Shell

MAX_OUTPUT = 64 * 1024
"""Default bound on the characters of one command's stdout (and stderr) sent back."""


class ShellTool(HostedToolRunner):
    """Runs shell commands in ``cwd``.

    ``local`` answers the ``local_shell`` tool (an argv, its output as one
    text) instead of ``shell`` (a list of command lines, one
    ``{stdout, stderr, outcome}`` each); ``timeout`` bounds a command (the
    model's ``timeout_ms`` may shorten it), ``max_output`` the characters
    kept of each stream.
    """

    described = "shell"
    # The whole call has no bound (``timeout`` None): each command has its own.

    def __init__(
        self,
        cwd: str | Path | None = None,
        *,
        local: bool = False,
        timeout: float = 120.0,
        max_output: int = MAX_OUTPUT,
    ) -> None:
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        self.local = local
        self.command_timeout = timeout
        self.max_output = max_output
        self.hosted = Shell(local=local)

    @property
    def name(self) -> str:
        """``shell`` or ``local_shell``: the name the model's calls carry."""
        return "local_shell" if self.local else "shell"

    async def call(self, arguments: str) -> ToolOutcome:
        """Run the call's commands; the result is the wire's output form."""
        args = arguments_object(arguments, self.name)
        limit = args.get("timeout_ms")
        timeout = self.command_timeout
        if isinstance(limit, int) and limit > 0:
            timeout = min(timeout, limit / 1000)
        if self.local:
            argv = args.get("command")
            if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
                raise ClientToolError("local_shell: command must be a non-empty list of strings")
            env = args.get("env") if isinstance(args.get("env"), dict) else None
            where = args.get("working_directory")
            cwd = Path(where) if isinstance(where, str) and where else self.cwd
            out = await self._run(argv, timeout, cwd, env)
            text = out["stdout"] + out["stderr"]
            failed = out["outcome"] != {"type": "exit", "exit_code": 0}
            return ToolOutcome(text, is_error=failed)
        commands = args.get("commands")
        if not isinstance(commands, list) or not all(isinstance(c, str) for c in commands):
            raise ClientToolError("shell: commands must be a list of strings")
        outputs = [await self._run(["/bin/sh", "-c", c], timeout, self.cwd, None) for c in commands]
        return ToolOutcome(msgspec.json.encode(outputs).decode())

    async def _run(
        self, argv: list[str], timeout: float, cwd: Path, env: dict[str, Any] | None
    ) -> dict[str, Any]:
        import os

        environ = {**os.environ, **{str(k): str(v) for k, v in env.items()}} if env else None
        process = await anyio.open_process(argv, cwd=cwd, env=environ)
        chunks: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}

        async def drain(name: str, stream: Any) -> None:
            async for chunk in stream:
                kept = chunks[name]
                if len(kept) < self.max_output * 4:
                    kept.extend(chunk)

        outcome: dict[str, Any]
        async with process:
            with anyio.move_on_after(timeout if math.isfinite(timeout) else None) as scope:
                async with anyio.create_task_group() as group:
                    group.start_soon(drain, "stdout", process.stdout)
                    group.start_soon(drain, "stderr", process.stderr)
                code = await process.wait()
            if scope.cancelled_caught:
                process.kill()
                await process.wait()
                outcome = {"type": "timeout"}
            else:
                outcome = {"type": "exit", "exit_code": code}
        text = {k: v.decode("utf-8", "replace")[: self.max_output] for k, v in chunks.items()}
        return {"stdout": text["stdout"], "stderr": text["stderr"], "outcome": outcome}


class ApplyPatchTool(HostedToolRunner):
    """Applies ``apply_patch`` operations to files under ``directory``; a
    path outside it (``..``, absolute, a symlink leading out) is refused."""

    name = "apply_patch"
    described = "apply_patch"
    _timeout = 30.0

    def __init__(self, directory: str | Path | None = None) -> None:
        self.root = Path(directory) if directory is not None else Path.cwd()
        self.hosted = ApplyPatch()

    async def call(self, arguments: str) -> ToolOutcome:
        """Apply one operation; its result text says what changed."""
        op = arguments_object(arguments, self.name)
        return ToolOutcome(await anyio.to_thread.run_sync(self.apply, op))

    def apply(self, op: dict[str, Any]) -> str:
        """Apply ``op`` (``{type, path, diff}``) and say what it did."""
        kind, path, diff = op.get("type"), op.get("path"), op.get("diff", "")
        if not isinstance(path, str) or not path:
            raise PatchError("apply_patch: the operation has no path")
        if path.startswith("/"):
            raise MemoryPathError(f"apply_patch: {path[:200]!r} is absolute; paths are relative")
        target = confined(self.root, path, "apply_patch")
        if not isinstance(diff, str):
            raise PatchError("apply_patch: diff must be a string")
        if kind == "create_file":
            if target.exists():
                raise PatchError(f"apply_patch: {path} already exists")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(created_text(diff), encoding="utf-8")
            return f"Created {path}"
        if kind == "delete_file":
            if not target.is_file():
                raise PatchError(f"apply_patch: {path} does not exist")
            target.unlink()
            return f"Deleted {path}"
        if kind == "update_file":
            if not target.is_file():
                raise PatchError(f"apply_patch: {path} does not exist")
            text = target.read_text(encoding="utf-8")
            target.write_text(apply_diff(text, diff, path), encoding="utf-8")
            return f"Updated {path}"
        raise PatchError(f"apply_patch: unknown operation type {kind!r}")


def created_text(diff: str) -> str:
    """The content of a ``create_file`` diff: every line ``+``-prefixed."""
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return "".join(line[1:] + "\n" if line.startswith("+") else line + "\n" for line in lines)


def apply_diff(text: str, diff: str, path: str) -> str:
    """``text`` with a V4A diff applied: hunks after ``@@`` lines (an optional
    anchor after ``@@ `` is a line the hunk follows), `` `` context, ``-``
    removed, ``+`` added lines, each found in order from the last hunk on."""
    lines = text.split("\n")
    cursor = 0
    hunks: list[tuple[str, list[str]]] = []
    for line in diff.split("\n"):
        if line.startswith("@@"):
            hunks.append((line[2:].strip(), []))
        elif line.startswith("*** End"):
            continue
        elif hunks:
            hunks[-1][1].append(line)
        elif line:
            hunks.append(("", [line]))
    for anchor, body in hunks:
        while body and body[-1] == "":
            body.pop()
        if anchor:
            at = _find(lines, [anchor], cursor)
            if at < 0:
                raise PatchError(
                    f"apply_patch: {path}: the anchor {anchor[:80]!r} is not in the file"
                )
            cursor = at + 1
        old = [ln[1:] for ln in body if ln[:1] in (" ", "-") or ln == ""]
        new = [ln[1:] for ln in body if ln[:1] in (" ", "+") or ln == ""]
        at = _find(lines, old, cursor) if old else cursor
        if at < 0:
            raise PatchError(f"apply_patch: {path}: a hunk's lines are not in the file")
        lines[at : at + len(old)] = new
        cursor = at + len(new)
    return "\n".join(lines)


def _find(lines: list[str], wanted: list[str], start: int) -> int:
    for at in range(start, len(lines) - len(wanted) + 1):
        if lines[at : at + len(wanted)] == wanted:
            return at
    return -1


__all__ = ["MAX_OUTPUT", "ApplyPatchTool", "ShellTool", "apply_diff", "created_text"]
