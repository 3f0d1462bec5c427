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
        self.replay = False
        self.exchange: Mapping[str, Any] | None = None
        """The line of an exchange that is not chat (``kind: exchange``)."""
        self.choices: list[str] = []

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
        elif kind == "replay":
            self.replay = True
        elif kind == "exchange":
            self.exchange = line
        elif kind == "choice":
            types = Counter(str(b.get("type")) for b in line.get("blocks") or ())
            finish = sanitize_line(str(line.get("finish")))
            self.choices.append(
                f"  choice {line.get('choice')}: {_counted(types) or 'no blocks'}, finish {finish}"
            )

    def block(self, block: Mapping[str, Any]) -> None:
        self.blocks[str(block.get("type"))] += 1
        self.payloads += len(block.get("payloads") or ())
        for attribution in block.get("attributions") or ():
            self.citations += 1
            source = attribution.get("source") or {}
            self.sources.add(str(source.get("url") or source.get("title") or source))

    def lines(self, n: int) -> list[str]:
        if self.exchange is not None:
            return exchange_lines(f"interaction {n}", self.exchange)
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
        out += self.choices
        if self.replay:
            out.append("  native replay: built (--json shows it)")
        return out


def _text(value: object, size: int = 60) -> str:
    text = sanitize_line(str(value))
    return text if len(text) <= size else text[: size - 1] + "…"


def _who(line: Mapping[str, Any]) -> str:
    model = line.get("model")
    return " ".join(sanitize_line(str(v)) for v in (line.get("provider"), model) if v)


def exchange_lines(where: str, line: Mapping[str, Any]) -> list[str]:
    """The summary of one exchange that is not chat (see
    :mod:`elelem.cli.inspect_kinds` for its fields)."""
    kind = str(line.get("exchange"))
    head = f"{where}: {kind} {_who(line)}".rstrip()
    error = line.get("error")
    if error is not None:
        text = f"{error.get('type')}: {error.get('message')}"
        return [head, f"  error: {sanitize_line(text)}"]
    usage = line.get("usage")
    tail = [f"  usage: {_usage(usage)}"] if isinstance(usage, dict) and "input" in usage else []
    if kind == "embeddings":
        count = line.get("count")
        vectors = "vector" if count == 1 else "vectors"
        return [head, f"  {count} {vectors} of {line.get('dimensions')} dimensions "
                      f"({sanitize_line(str(line.get('encoding')))})", *tail]  # fmt: skip
    if kind == "speech":
        streamed = ", streamed" if line.get("streamed") else ""
        form = sanitize_line(str(line.get("format")))
        return [head, f"  {line.get('bytes'):,} bytes of {form} audio{streamed}", *tail]
    if kind == "transcription":
        deltas = f" ({line.get('deltas')} deltas streamed)" if line.get("streamed") else ""
        return [head, f"  text: {_text(line.get('text'))}{deltas}", *tail]
    if kind in ("batch-create", "batch-poll"):
        return [head, f"  batch {_text(line.get('batch_id'))}: {_state(line)}",
                *_result_lines(line)]  # fmt: skip
    if kind == "batch-results":
        return [head, *_result_lines(line)]
    if kind == "token-count":
        return [head, f"  {line.get('input'):,} input tokens ({_text(line.get('endpoint'))})"]
    if kind == "model-list":
        return [head, f"  {len(line.get('models') or ())} models"]
    request = f"{sanitize_line(str(line.get('method')))} {sanitize_line(str(line.get('path')))}"
    return [f"{head}: {request} -> {line.get('status')}"]


def _state(line: Mapping[str, Any]) -> str:
    return f"{sanitize_line(str(line.get('state')))} ({sanitize_line(str(line.get('raw_state')))})"


def _result_lines(line: Mapping[str, Any]) -> list[str]:
    results = line.get("results")
    if not isinstance(results, list):
        return []
    out = [f"  {len(results)} results"]
    for result in results:
        answer = result.get("response")
        what = (
            f"{_text(answer.get('model'))}: {_text(answer.get('text'))}"
            if isinstance(answer, dict)
            else f"error {_text(result.get('error'))}"
        )
        out.append(f"    {_text(result.get('custom_id'), 30)}: {what}")
    return out


def _polls(run: list[tuple[int, Mapping[str, Any]]]) -> list[str]:
    """A run of polls of one batch as one line: how many, how many failed,
    and the state the last answer gave."""
    first, last = run[0][0], run[-1][0]
    failed = sum(line.get("error") is not None for _, line in run)
    answered = [line for _, line in run if line.get("error") is None]
    final = _state(answered[-1]) if answered else "no answer"
    where = f"interactions {first}-{last}" if len(run) > 1 else f"interaction {first}"
    errors = f", {failed} failed" if failed else ""
    out = [f"{where}: {len(run)} batch polls {_who(run[-1][1])}{errors}", f"  final: {final}"]
    return out + (_result_lines(answered[-1]) if answered else [])


def summary(lines: Sequence[Mapping[str, Any]]) -> list[str]:
    """The human summary of :func:`~elelem.cli.inspect.inspect_recording`'s
    lines, one interaction after another; a run of batch polls is one entry
    (a long batch is recorded as hundreds of them)."""
    by_number: dict[int, _Interaction] = {}
    for line in lines:
        by_number.setdefault(int(line.get("interaction", 0)), _Interaction()).add(line)
    out: list[str] = []
    run: list[tuple[int, Mapping[str, Any]]] = []
    for n, seen in sorted(by_number.items()):
        exchange = seen.exchange
        if exchange is not None and exchange.get("exchange") == "batch-poll":
            run.append((n, exchange))
            continue
        if run:
            out += _polls(run)
            run = []
        out += seen.lines(n)
    return out + (_polls(run) if run else [])


def summary_text(lines: Iterable[Mapping[str, Any]]) -> str:
    """:func:`summary` as one block of text (empty for no lines)."""
    return "\n".join(summary(list(lines)))


__all__ = ["summary", "summary_text"]
