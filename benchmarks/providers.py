"""The per-provider table: ``python -m benchmarks.providers [--runs N] [--events N]``.

For every provider the corpus holds a streamed recording of (Chat Completions
servers, Anthropic), one stream of 20,000 text deltas built from that
provider's *own* recorded chunks: the recording's opening frames, its text
chunks repeated in order byte for byte (every field the provider sent kept:
OpenRouter's ``native_finish_reason``, Perplexity's ``citations`` and
``usage`` on every chunk, Anthropic's whitespace as recorded), then its
closing frames (finish reason, usage, ``[DONE]`` / ``message_stop``).  Each
stream is measured twice more with one field nobody knows added to every
chunk (``"x_bench_probe": 1``), which must cost nothing more.

Each stream is read from the loopback server of :mod:`benchmarks.run` in
both delivery modes (``bulk``: the whole body in one write; ``per_event``:
one write per event) by two pairs, each client against the floor of its
own kind: elelem's blocking ``SyncClient`` against the floor on httpx2's
blocking client, and elelem's async ``Client`` against the floor on
httpx2's async client.  The four run interleaved in one fresh child process
per row and mode; CPU time per event, the least of the runs, and the ratio
paired run by run (see :func:`_cell`); every client must assemble exactly
the stream's text.  The targets (issue 11): bulk
≤ 1.5x the floor on every row, one write per event ≤ 1.1x.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.corpus import ROOT, CorpusMissing, _yaml_bodies, corpus_root
from benchmarks.run import run_child, start_server
from benchmarks.streams import text_digest

PAIRS = (("floor", "elelem_sync"), ("floor_async", "elelem"))
"""Each client and the floor it is measured against: the blocking
``SyncClient`` over httpx2's blocking client, the async ``Client`` over its
async client."""

PROBE = ',"x_bench_probe":1}'
"""What the ``+unknown`` rows add to the end of every chunk's JSON object."""

_KNOWN_PROVIDERS = (
    "openrouter",
    "deepseek",
    "groq",
    "cerebras",
    "llamacpp",
    "mistral",
    "xai",
    "perplexity",
    "moonshotai",
    "alibaba",
    "azure",
)
_SHAPES = {
    "chat_completions": "openai_chat",
    "messages": "anthropic_messages",
    "responses": "openai_responses",
    "gemini": "gemini",
}


@dataclass(frozen=True)
class Recording:
    """One provider's chosen streamed recording: its SSE frames (event, data) as recorded."""

    provider: str
    shape: str
    path: str
    frames: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ProviderStream:
    """A built stream: its SSE events and the text a correct client assembles."""

    provider: str
    shape: str
    variant: str  # "as recorded" or "+unknown"
    deltas: int
    events: tuple[bytes, ...]
    text: str

    def body_bytes(self) -> bytes:
        """The whole response body."""
        return b"".join(self.events)


def provider_of(row: dict[str, str]) -> str:
    """The provider a corpus row records: INDEX.tsv's column, else its file name's."""
    if row["provider"] not in ("other", ""):
        name = row["provider"]
    else:
        found = [p for p in _KNOWN_PROVIDERS if p in row["local_file"].lower()]
        name = found[0] if found else "other"
    if "azure" in row["local_file"].lower():
        return "azure"
    return {"moonshotai": "moonshot", "llamacpp": "llama.cpp"}.get(name, name)


def _sse(body: str) -> Iterator[list[tuple[str, str]]]:
    """The responses of an SSE body (a new start event begins the next), as frames."""
    frames: list[tuple[str, str]] = []
    event = ""
    for line in body.splitlines():
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            # One leading space is the field separator; the rest is the provider's.
            data = line[6:] if line.startswith("data: ") else line[5:]
            frames.append((event, data))
            event = ""
    yield frames


def _responses(path: Path) -> Iterator[list[tuple[str, str]]]:
    if path.name.endswith(".chunks.txt"):
        lines = [line.rstrip("\n") for line in path.open(encoding="utf-8") if line.strip()]
        yield [("", line) for line in lines]
        return
    if path.suffix in (".yaml", ".yml"):
        for body in _yaml_bodies(path):
            yield from _sse(body)
        return
    yield from _sse(path.read_text(encoding="utf-8"))


def _split(frames: list[tuple[str, str]]) -> Iterator[list[tuple[str, str]]]:
    """One recorded body may hold several responses (vercel multi-step chunks)."""
    current: list[tuple[str, str]] = []
    for event, data in frames:
        if current and ('"message_start"' in data[:40] or '"response.created"' in data[:40]):
            yield current
            current = []
        current.append((event, data))
    if current:
        yield current


def _obj(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


def _chat_delta(obj: Any) -> dict[str, Any] | None:
    """The delta of a one-choice chunk without tool calls or annotations, else None."""
    if not isinstance(obj, dict) or not isinstance(obj.get("choices"), list):
        return None
    if len(obj["choices"]) != 1 or not isinstance(obj["choices"][0], dict):
        return None
    delta = obj["choices"][0].get("delta")
    if not isinstance(delta, dict) or delta.get("tool_calls") or delta.get("annotations"):
        return None
    return delta


def _chat_text(obj: Any) -> str | None:
    """The text of a Chat Completions text chunk (a string, or Mistral's text parts)."""
    delta = _chat_delta(obj)
    content = delta.get("content") if delta is not None else None
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        if parts and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
            content = "".join(t for t in parts if isinstance(t, str))
    return content if isinstance(content, str) and content else None


def _chat_reasoning(obj: Any) -> bool:
    """A chunk of reasoning only (what a recording without text chunks repeats)."""
    delta = _chat_delta(obj)
    if delta is None or delta.get("content"):
        return False
    return any(
        isinstance(delta.get(k), str) and delta[k] for k in ("reasoning_content", "reasoning")
    )


def _anthropic_text(obj: Any) -> str | None:
    if not isinstance(obj, dict) or obj.get("type") != "content_block_delta":
        return None
    delta = obj.get("delta")
    if isinstance(delta, dict) and delta.get("type") == "text_delta":
        return str(delta["text"])
    return None


def _responses_text(obj: Any) -> str | None:
    if not isinstance(obj, dict) or obj.get("type") != "response.output_text.delta":
        return None
    delta = obj.get("delta")
    return delta if isinstance(delta, str) and delta else None


def _one_message(frames: list[tuple[str, str]], deltas: list[int]) -> bool:
    """Whether a Responses stream's text is one output text of its one message
    item (what a built stream can repeat and keep consistent)."""
    parts = {(_obj(frames[i][1]))["item_id"] for i in deltas}
    messages = {
        obj["item"].get("id")
        for _, d in frames
        if isinstance(obj := _obj(d), dict)
        and obj.get("type") == "response.output_item.added"
        and isinstance(obj.get("item"), dict)
        and obj["item"].get("type") == "message"
    }
    annotated = any('"annotations":[{' in d.replace(" ", "") for _, d in frames)
    return len(parts) == 1 and parts == messages and not annotated


def _gemini_parts(obj: Any) -> list[Any] | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("candidates"), list):
        return None
    if len(obj["candidates"]) != 1 or not isinstance(obj["candidates"][0], dict):
        return None
    content = obj["candidates"][0].get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    return parts if isinstance(parts, list) else None


def _gemini_text(obj: Any) -> str | None:
    """The text of a Gemini chunk of plain text parts and no finish reason."""
    parts = _gemini_parts(obj)
    if not parts or obj["candidates"][0].get("finishReason"):
        return None
    if not all(isinstance(p, dict) and set(p) <= {"text"} for p in parts):
        return None
    text = "".join(p.get("text", "") for p in parts)
    return text or None


def _gemini_end(obj: Any) -> bool:
    """A finish chunk the floor can read: plain text parts (or none)."""
    parts = _gemini_parts(obj)
    if parts is None or not obj["candidates"][0].get("finishReason"):
        return False
    return all(isinstance(p, dict) and set(p) <= {"text"} and "text" in p for p in parts)


def _repeatable(shape: str, frames: list[tuple[str, str]]) -> list[int]:
    """The positions of the chunks a built stream repeats: the text chunks,
    or (a Chat Completions recording with none) the reasoning chunks."""
    if shape != "openai_chat":
        text = _text_of(shape)
        found = [i for i, (_, d) in enumerate(frames) if text(_obj(d)) is not None]
        if shape == "gemini" and not any(_gemini_end(_obj(d)) for _, d in frames):
            return []  # no finish chunk the floor can read
        if shape == "openai_responses" and not _one_message(frames, found):
            return []
        return found
    texts = [i for i, (_, d) in enumerate(frames) if _chat_text(_obj(d)) is not None]
    if texts:
        return texts
    return [i for i, (_, d) in enumerate(frames) if _chat_reasoning(_obj(d))]


def _text_of(shape: str) -> Any:
    return {
        "openai_chat": _chat_text,
        "anthropic_messages": _anthropic_text,
        "openai_responses": _responses_text,
        "gemini": _gemini_text,
    }[shape]


def _padded(frames: tuple[tuple[str, str], ...]) -> bool:
    """Whether the recording's JSON carries whitespace padding (``… }      }``)."""
    return any(_PADDING.search(d) for _, d in frames)


_PADDING = re.compile(r"\s\s+\}\s*$")


def recordings(root: Path) -> list[Recording]:
    """Per provider, its streamed recording with the most text chunks."""
    with (root / "INDEX.tsv").open(encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if r["streaming"] == "yes"]
    best: dict[tuple[str, str], tuple[tuple[bool, bool, int], Recording]] = {}
    for row in rows:
        shape = _SHAPES.get(row["api_shape"])
        if shape is None:
            continue
        provider = provider_of(row)
        for body in _responses(root / row["local_file"]):
            for frames in _split(body):
                repeated = _repeatable(shape, frames)
                if not repeated:
                    continue
                rec = Recording(provider, shape, row["local_file"], tuple(frames))
                # Text over reasoning; whitespace padding as some servers send it
                # is worth measuring; then the richest.
                text = _text_of(shape)(_obj(frames[repeated[0]][1])) is not None
                rank = (text, _padded(rec.frames), len(repeated))
                if rank > best.get((provider, shape), ((False, False, 0), rec))[0]:
                    best[(provider, shape)] = (rank, rec)
    return [rec for _, rec in sorted(best.values(), key=lambda x: (x[1].shape, x[1].provider))]


def _event(shape: str, event: str, data: str) -> bytes:
    if shape == "anthropic_messages" and not event:
        obj = _obj(data)
        event = obj.get("type", "") if isinstance(obj, dict) else ""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data}\n\n".encode()


def _probed(data: str) -> str:
    body = data.rstrip()
    return body[:-1] + PROBE + data[len(body) :] if body.endswith("}") else data


def build(rec: Recording, n: int, *, probe: bool = False) -> ProviderStream:
    """``rec``'s stream of ``n`` text deltas (see the module docstring)."""
    frames = list(rec.frames)
    texts = _repeatable(rec.shape, frames)
    if rec.shape == "openai_chat":
        first, last = texts[0], texts[-1]
        # Only frames a plain reader can take: chunk objects with deltas, and [DONE].
        keep = [
            (e, d)
            for e, d in frames[:first] + frames[last + 1 :]
            if d.strip() == "[DONE]" or _floor_safe(_obj(d))
        ]
        head = [f for f in keep if frames.index(f) < first]
        tail = [f for f in keep if frames.index(f) > last]
        middle = [frames[i] for i in texts]
        take = _chat_text
    elif rec.shape == "openai_responses":
        # One output text: the first delta's item and part; the frames around
        # the deltas as recorded (their done events hold the recorded text,
        # which no client assembles from: the deltas are the text).
        first = _obj(frames[texts[0]][1])
        same = [
            i
            for i in texts
            if (_obj(frames[i][1])["item_id"], _obj(frames[i][1])["content_index"])
            == (first["item_id"], first["content_index"])
        ]
        head = frames[: texts[0]]
        middle = [frames[i] for i in same]
        recorded = "".join(_obj(d)["delta"] for _, d in middle)
        built = "".join(_obj(middle[i % len(middle)][1])["delta"] for i in range(n))
        tail = [
            (e, _replaced(d, recorded, built))
            for e, d in frames[texts[-1] + 1 :]
            if _responses_text(_obj(d)) is None
        ]
        take = _responses_text
    elif rec.shape == "gemini":
        head = []
        middle = [frames[i] for i in texts]
        tail = [f for f in frames if _gemini_end(_obj(f[1]))][-1:]

        def take(obj: Any) -> str | None:
            parts = _gemini_parts(obj) or []
            return "".join(p.get("text", "") for p in parts) or None

    else:
        index = _obj(frames[texts[0]][1])["index"]
        starts = [
            f
            for f in frames
            if _obj(f[1]) is not None
            and _obj(f[1]).get("type") == "content_block_start"
            and _obj(f[1]).get("index") == index
        ]
        head = [f for f in frames if (_obj(f[1]) or {}).get("type") == "message_start"][:1]
        head += starts[:1]
        stop = [
            f
            for f in frames
            if (_obj(f[1]) or {}).get("type") == "content_block_stop"
            and (_obj(f[1]) or {}).get("index") == index
        ]
        ends = [
            f for f in frames if (_obj(f[1]) or {}).get("type") in ("message_delta", "message_stop")
        ]
        tail = stop[:1] + ends
        middle = [frames[i] for i in texts if _obj(frames[i][1]).get("index") == index]
        take = _anthropic_text
    repeated = [middle[i % len(middle)] for i in range(n)]
    chosen = head + repeated + tail
    if probe:
        chosen = [(e, _probed(d)) for e, d in chosen]
    text = "".join(t for _, d in chosen if (t := take(_obj(d))) is not None)
    events = tuple(_event(rec.shape, e, d) for e, d in chosen)
    variant = "+unknown" if probe else "as recorded"
    return ProviderStream(rec.provider, rec.shape, variant, n, events, text)


def _replaced(data: str, recorded: str, built: str) -> str:
    """``data`` with the recorded text, wherever a done event repeats it whole,
    made the built stream's text (a real stream's done events repeat its
    deltas)."""

    def walk(value: Any) -> Any:
        if value == recorded:
            return built
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    obj = _obj(data)
    if obj is None:
        return data
    new = walk(obj)
    return data if new == obj else json.dumps(new, ensure_ascii=False, separators=(",", ":"))


def _floor_safe(obj: Any) -> bool:
    if not isinstance(obj, dict) or not isinstance(obj.get("choices"), list):
        return False
    return all(isinstance(c, dict) and isinstance(c.get("delta"), dict) for c in obj["choices"])


def _key(stream: ProviderStream) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", f"{stream.provider}-{stream.shape}-{stream.variant}".lower())
    return f"p-{slug}-{stream.deltas}"


def measure(
    runs: int,
    events: int,
    warm: int = 40,
    only: frozenset[str] = frozenset(),
    pairs: tuple[tuple[str, str], ...] = PAIRS,
    modes: tuple[str, ...] = ("bulk", "per_event"),
) -> list[dict[str, Any]]:
    """Every row: each of ``pairs`` (a floor and the client measured against
    it), in each of ``modes``, ``runs`` times per cell in one fresh child
    per row and mode (each run a new client, warmed up).

    ``only`` keeps the named providers."""
    root = corpus_root()
    streams: dict[str, ProviderStream] = {}
    rows = []
    for rec in recordings(root):
        if only and rec.provider not in only:
            continue
        for probe in (False, True):
            big, small = build(rec, events, probe=probe), build(rec, warm, probe=probe)
            streams[_key(big)], streams[_key(small)] = big, small
            rows.append((rec, big, small))
    # (stream key, mode, client) -> CPU s per event by run (None: not ok)
    results: dict[tuple[str, str, str], list[float | None]] = {}
    with tempfile.TemporaryDirectory(prefix="elelem-bench-providers-") as tmp:
        path = Path(tmp) / "streams.json"
        path.write_text(
            json.dumps({k: [e.decode() for e in s.events] for k, s in streams.items()}),
            encoding="utf-8",
        )
        server = _start_server(path)
        base = f"http://127.0.0.1:{server[1]}"
        nonce = 0
        try:
            for done, (rec, big, small) in enumerate(rows, 1):
                for mode in modes:
                    # One child per row and mode runs every client ``runs``
                    # times, interleaved in an order that turns from run to
                    # run: the cells a ratio divides are measured seconds
                    # apart, through the same slow or quick spell of the VM.
                    clients = [name for pair in pairs for name in pair]
                    tasks = []
                    for run in range(runs):
                        turn = run % len(clients)
                        for client in clients[turn:] + clients[:turn]:
                            nonce += 1
                            tasks.append(
                                {
                                    "client": client,
                                    "shape": rec.shape,
                                    "mode": mode,
                                    "key": _key(big),
                                    "nonce": f"prov-{nonce}",
                                    "warm": _key(small),
                                    "warm_digest": text_digest(small.text),
                                    "digest": text_digest(big.text),
                                    "chars": len(big.text),
                                }
                            )
                    job = {"base": base, "tasks": tasks}
                    for r in run_child("benchmarks.child", job, 600 + 60 * len(tasks)):
                        cell = (_key(big), mode, r["client"])
                        if r.get("status") == "ok":
                            results.setdefault(cell, []).append(r["cpu_s"] / len(big.events))
                        else:
                            results.setdefault(cell, []).append(None)
                            print(f"  {cell}: {r.get('status')}", file=sys.stderr)
                print(f"\r  row {done}/{len(rows)}", end="", file=sys.stderr)
            print(file=sys.stderr)
        finally:
            server[0].stdin.close()  # type: ignore[union-attr]
            server[0].wait(timeout=10)
    table = []
    for rec, big, _ in rows:
        row: dict[str, Any] = {
            "provider": rec.provider,
            "shape": rec.shape,
            "variant": big.variant,
            "recording": rec.path.rsplit("/", 1)[-1],
            "events": len(big.events),
        }
        for mode in ("bulk", "per_event"):
            for floor_name, mine_name in pairs:
                floor = results.get((_key(big), mode, floor_name), [])
                mine = results.get((_key(big), mode, mine_name), [])
                cell = f"{mode}_{mine_name}"
                row.update(_cell(cell, floor, mine))
        table.append(row)
    return table


def _cell(name: str, floor: list[float | None], mine: list[float | None]) -> dict[str, Any]:
    """One pair's figures from its runs (CPU s per event by run, None where
    a run failed): each side's least time, and two ratios.

    ``ratio`` is *paired*: the median, over the runs, of the client's time
    over the floor's time in the same run.  The two are measured back to
    back, so a slow spell of the VM (which lasts seconds here, and slows
    whatever runs in it by up to 2x) slows both, and divides out.
    ``best_ratio`` divides the two least times, each perhaps from another
    run: one side's lucky run against the other's unlucky ones is what
    moved a row by 0.4x between runs of the same code.  Both are kept."""
    good_floor = [x for x in floor if x is not None]
    good_mine = [x for x in mine if x is not None]
    paired = sorted(m / f for f, m in zip(floor, mine, strict=False) if f and m)
    least = min(good_mine) / min(good_floor) if good_floor and good_mine else None
    return {
        f"{name}_floor_us": min(good_floor) * 1e6 if good_floor else None,
        f"{name}_us": min(good_mine) * 1e6 if good_mine else None,
        f"{name}_ratio": statistics.median(paired) if paired else None,
        f"{name}_best_ratio": least,
        f"{name}_runs": len(paired),
    }


def _start_server(path: Path) -> tuple[subprocess.Popen[str], int]:
    """The loopback server of :mod:`benchmarks.server` over these streams."""
    streams = json.loads(path.read_text(encoding="utf-8"))
    events = {k: tuple(e.encode() for e in evs) for k, evs in streams.items()}
    return start_server(path.with_suffix(".pickle"), events)


def render(table: list[dict[str, Any]]) -> str:
    """The table as Markdown."""

    def num(v: float | None, fmt: str, unit: str = "") -> str:
        return "n/a" if v is None else format(v, fmt) + unit

    pairs = sorted(
        {
            k[len("bulk_") : -len("_ratio")]
            for r in table
            for k in r
            if k.startswith("bulk_") and k.endswith("_ratio") and not k.endswith("_best_ratio")
        }
    )
    head = ["provider", "shape", "chunks"]
    for mode in ("bulk", "per-event"):
        for name in pairs:
            head += [f"{mode} {name} floor µs/ev", f"{name} µs/ev", "paired ratio", "least/least"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|---|" + "---:|" * (len(head) - 3)]
    for r in table:
        name = r["provider"] if r["variant"] == "as recorded" else f"{r['provider']} +unknown"
        cells = [name, r["shape"], r["recording"][:48]]
        for mode in ("bulk", "per_event"):
            for client in pairs:
                cell = f"{mode}_{client}"
                cells += [
                    num(r.get(f"{cell}_floor_us"), ".2f"),
                    num(r.get(f"{cell}_us"), ".2f"),
                    num(r.get(f"{cell}_ratio"), ".2f", "x"),
                    num(r.get(f"{cell}_best_ratio"), ".2f", "x"),
                ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def in_process(runs: int, events: int) -> str:
    """Each side's own work on the same body, in this process, no HTTP: the
    floor's line split, ``orjson.loads`` and text extraction against
    elelem's SSE decoder, shape parser and assembler, both fed the body in
    64 KiB pieces (what a socket read hands over; the parser takes each
    piece's frames in one call and the assembler each run of deltas, as the
    draining driver hands them over); CPU per event, best of ``runs``, the
    two interleaved."""
    import time

    import orjson

    from benchmarks.clients import _floor_extractor, _floor_lines
    from elelem.providers import load_shape
    from elelem.stream import Assembler
    from elelem.transport.framing import SSEDecoder
    from elelem.vocabulary import ProviderId

    lines = [
        "| provider | shape | floor µs/event | elelem µs/event | ratio |",
        "|---|---|---:|---:|---:|",
    ]
    for rec in recordings(corpus_root()):
        shape = load_shape(rec.shape)
        take = _floor_extractor(rec.shape)
        for probe in (False, True):
            body = build(rec, events, probe=probe).body_bytes()
            pieces = [body[i : i + 65536] for i in range(0, len(body), 65536)]
            n = body.count(b"\n\n")
            floor = mine = float("inf")
            for _ in range(runs):
                start = time.process_time()
                out: list[str] = []
                pending = b""
                for piece in pieces:
                    pending = _floor_lines(pending, piece, orjson.loads, take, out)
                floor = min(floor, time.process_time() - start)
                start = time.process_time()
                decoder = SSEDecoder()
                parser = shape.new_parser(ProviderId("bench"))
                # As the driver decodes: runs of data-only events for a parser that takes them.
                frames = decoder.feed_runs if getattr(parser, "takes_runs", False) else decoder.feed
                assembler = Assembler(ProviderId("bench"))
                feed, deltas = assembler.feed, assembler.feed_deltas
                for piece in pieces:  # as the driver drains: a read's frames at once,
                    chunks: list[Any] = []  # its runs of deltas in one call each
                    parser.messages(frames(piece), chunks)  # type: ignore[attr-defined]
                    index = deltas(chunks)
                    while index < len(chunks):
                        feed(chunks[index])
                        index = deltas(chunks, index + 1)
                for chunk in parser.eof():
                    feed(chunk)
                mine = min(mine, time.process_time() - start)
            name = rec.provider + (" +unknown" if probe else "")
            lines.append(
                f"| {name} | {rec.shape} | {floor / n * 1e6:.2f} | {mine / n * 1e6:.2f} "
                f"| {mine / floor:.2f}x |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write ``bench-providers.json``."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.providers", description=__doc__)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--events", type=int, default=20_000)
    p.add_argument("--output", type=Path, default=ROOT / "bench-providers.json")
    p.add_argument(
        "--in-process",
        action="store_true",
        help="each side's own work on the body, in this process, no HTTP",
    )
    p.add_argument("--providers", default="", help="comma-separated providers (default: all)")
    p.add_argument(
        "--modes", default="bulk,per_event", help="comma-separated delivery modes (default: both)"
    )
    p.add_argument(
        "--pairs",
        default="floor:elelem_sync,floor_async:elelem",
        help="floor:client pairs, comma-separated (default: both kinds of client)",
    )
    args = p.parse_args(argv)
    if args.in_process:
        print(in_process(args.runs, args.events))
        return 0
    try:
        only = frozenset(x for x in args.providers.split(",") if x)
        pairs = tuple(tuple(p.split(":", 1)) for p in args.pairs.split(",") if p)
        modes = tuple(m for m in args.modes.split(",") if m)
        table = measure(args.runs, args.events, only=only, pairs=pairs, modes=modes)  # type: ignore[arg-type]
    except CorpusMissing as exc:
        print(f"benchmarks: {exc}", file=sys.stderr)
        return 2
    print(render(table))
    args.output.write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
