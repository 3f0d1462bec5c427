"""The human summary ``elelem inspect`` prints (``--json`` gives the lines it
is made from): per interaction, the blocks by kind, the hosted calls, the
citations, the opaque payloads, the usage and the finish.

Every value that comes from the recording (model names, ids, tool names,
error text) is passed through :func:`~elelem.render.sanitize_line`: a
recording is untrusted content.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from elelem.render import sanitize_line

USAGE_FIELDS = ("input", "output", "cache_read", "cache_write", "reasoning")
"""The token counts of a usage line, in the order the summary names them."""


def _counted(counts: Counter[str]) -> str:
    return ", ".join(f"{n} {sanitize_line(name)}" for name, n in sorted(counts.items()))


def _usage(usage: Mapping[str, Any]) -> str:
    parts = [
        f"{name.replace('_', ' ')} {usage[name]:,}" for name in USAGE_FIELDS if usage.get(name)
    ]
    hosted = usage.get("hosted") or {}
    parts += [f"{sanitize_line(k)} {v}" for k, v in sorted(hosted.items()) if v]
    return ", ".join(parts) or "none reported"


class _Interaction:
    """What the lines of one interaction add up to."""

    def __init__(self) -> None:
        self.head: str | None = None
        self.blocks: Counter[str] = Counter()
        self.hosted: dict[str, str] = {}
        """Each hosted call's name by its id (a call is seen started, then done)."""
        self.citations = 0
        self.sources: set[str] = set()
        self.payloads = 0
        self.usage: str | None = None
        self.finish: str | None = None
        self.errors: list[str] = []
        self.skipped: str | None = None
        self.replay = False

    def add(self, line: Mapping[str, Any]) -> None:
        kind = line.get("kind")
        if kind == "response":
            model = sanitize_line(str(line.get("model") or "?"))
            self.head = f"{sanitize_line(str(line.get('provider')))} {model}"
        elif kind == "block":
            self.block(line["block"])
        elif kind == "hosted":
            activity = line["activity"]
            self.hosted[str(activity.get("id"))] = str(activity.get("name"))
            self.payloads += activity.get("payload") is not None
        elif kind == "usage":
            self.usage = _usage(line["usage"])
        elif kind == "finish":
            self.finish = sanitize_line(str(line.get("reason")))
        elif kind == "error":
            error = line["error"]
            self.errors.append(sanitize_line(f"{error.get('type')}: {error.get('message')}"))
        elif kind == "skipped":
            self.skipped = sanitize_line(str(line.get("reason")))
        elif kind == "replay":
            self.replay = True

    def block(self, block: Mapping[str, Any]) -> None:
        self.blocks[str(block.get("type"))] += 1
        self.payloads += len(block.get("payloads") or ())
        for attribution in block.get("attributions") or ():
            self.citations += 1
            source = attribution.get("source") or {}
            self.sources.add(str(source.get("url") or source.get("title") or source))

    def lines(self, n: int) -> list[str]:
        if self.skipped is not None and self.head is None:
            return [f"interaction {n}: skipped ({self.skipped})"]
        out = [f"interaction {n}: {self.head or 'no response'}"]
        if self.blocks:
            out.append(f"  blocks: {_counted(self.blocks)}")
        if self.hosted:
            out.append(f"  hosted calls: {_counted(Counter(self.hosted.values()))}")
        if self.citations:
            sources = len(self.sources)
            out.append(
                f"  citations: {self.citations} ({sources} source{'s' if sources != 1 else ''})"
            )
        if self.payloads:
            out.append(f"  payloads: {self.payloads} kept for replay")
        if self.usage is not None:
            out.append(f"  usage: {self.usage}")
        out += [f"  error: {e}" for e in self.errors]
        if self.finish is not None:
            out.append(f"  finish: {self.finish}")
        if self.replay:
            out.append("  native replay: built (--json shows it)")
        return out


def summary(lines: Sequence[Mapping[str, Any]]) -> list[str]:
    """The human summary of :func:`~elelem.cli.inspect.inspect_recording`'s
    lines, one interaction after another."""
    by_number: dict[int, _Interaction] = {}
    for line in lines:
        by_number.setdefault(int(line.get("interaction", 0)), _Interaction()).add(line)
    return [text for n, seen in sorted(by_number.items()) for text in seen.lines(n)]


def summary_text(lines: Iterable[Mapping[str, Any]]) -> str:
    """:func:`summary` as one block of text (empty for no lines)."""
    return "\n".join(summary(list(lines)))


__all__ = ["summary", "summary_text"]
