"""The results document (``bench-results.json``) and the tables printed from it."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
from pathlib import Path
from typing import Any

from benchmarks.clients import CLIENTS
from benchmarks.plan import Measurements, Schedule

SHAPE_TITLES = {
    "anthropic_messages": "Anthropic Messages",
    "openai_responses": "OpenAI Responses",
    "openai_chat": "Chat Completions",
    "gemini": "Gemini",
}
MODE_TITLES = {
    "bulk": "whole body at once (bulk)",
    "per_event": "one network write per event (per_event)",
}
CLIENT_TITLES = {
    "floor": "floor: httpx2 + SSE line split + orjson",
    "floor_async": "floor over httpx2's async client",
    "elelem": "elelem Client.stream().final()",
    "elelem_sync": "elelem SyncClient.stream().final()",
    "anthropic_sdk_raw": "anthropic SDK, raw events",
    "anthropic_sdk_final": "anthropic SDK, final message",
    "openai_sdk_raw": "openai SDK, raw events",
    "openai_sdk_final": "openai SDK, final message",
    "google_genai_sdk_raw": "google-genai SDK, chunks",
    "pydantic_ai_model": "pydantic-ai model stream",
    "pydantic_ai_agent": "pydantic-ai agent stream",
    "litellm": "LiteLLM + stream_chunk_builder",
}


def _commit() -> str | None:
    """The project's git commit (with ``+dirty`` for uncommitted changes), if known."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "describe", "--always", "--dirty=+dirty"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() or None


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a is not None and b else None


def _median(results: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in results if r.get("status") == "ok"]
    return statistics.median(values) if values else None


def _status(results: list[dict[str, Any]]) -> str:
    if any(r.get("status") == "ok" for r in results):
        return "ok"
    return str(results[0].get("status", "no result")) if results else "not run"


def results_document(
    driver: Schedule, measured: Measurements, storage: dict[str, Any], elapsed: float
) -> dict[str, Any]:
    """Every figure of the run, shaped as issue 7 asks (plus method and scaling)."""
    plan = driver.plan
    streaming: dict[str, Any] = {}
    for shape in driver.shapes:
        events = len(driver.streams[driver.key(shape, plan.events)].events)
        for mode in driver.modes:
            cells: dict[str, Any] = {}
            for client in driver.clients:
                results = measured.streaming.get((shape, mode, client))
                if results is None:
                    continue
                cpu = _median(results, "cpu_s")
                rss = _median(results, "rss_kb")
                cells[client] = {
                    "events": events,
                    "us_per_event": round(cpu / events * 1e6, 3) if cpu is not None else None,
                    "rss_growth_mb": round(rss / 1024, 2) if rss is not None else None,
                    "runs_ok": sum(r.get("status") == "ok" for r in results),
                    "status": _status(results),
                }
            floor = cells.get("floor", {}).get("us_per_event")
            ours = cells.get("elelem", {}).get("us_per_event")
            for client, cell in cells.items():
                cell["ratio_to_floor"] = _ratio(cell["us_per_event"], floor)
                if client not in ("floor", "floor_async", "elelem"):
                    cell["ratio_to_elelem"] = _ratio(cell["us_per_event"], ours)
            streaming.setdefault(shape, {})[mode] = cells
    scaling: dict[str, Any] = {}
    for (shape, size, client), results in sorted(measured.scaling.items()):
        events = len(driver.streams[driver.key(shape, size)].events)
        cpu = _median(results, "cpu_s")
        row = scaling.setdefault(shape, {}).setdefault(client, {"us_per_event": {}})
        row["us_per_event"][str(size)] = round(cpu / events * 1e6, 3) if cpu is not None else None
        row["status"] = _status(results) if row.get("status", "ok") == "ok" else row["status"]
    for rows in scaling.values():
        for row in rows.values():
            values = [v for v in row["us_per_event"].values() if v is not None]
            row["largest_over_smallest"] = _ratio(values[-1], values[0]) if values else None
    doc = {
        "meta": {
            "mode": "quick" if plan.grouped else "full",
            "runs": plan.runs,
            "deltas_per_stream": plan.events,
            "process_per": "client family (quick)" if plan.grouped else "run",
            "commit": _commit(),
            "python": platform.python_version(),
            "machine": f"{platform.machine()} {platform.system()}, {os.cpu_count()} cpus",
            "elapsed_s": round(elapsed, 1),
            "measure": "median CPU time of the client process (all threads) from request to "
            "final assembled message, after one warm-up request, per SSE event",
        },
        "streaming": streaming,
        "scaling": scaling,
        "storage": storage,
    }
    doc["targets"] = targets(doc)
    return doc


# Issue 7's targets: (what, limit).
BULK_LIMIT = 2.5
PER_EVENT_LIMIT = 1.3
STORAGE_LIMIT = 2.0
FLAT_LIMIT = 1.3  # per-event cost at the longest stream over the shortest


def targets(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Each of issue 7's targets with the measured figure and a verdict."""
    out: list[dict[str, Any]] = []

    def add(what: str, value: float | None, limit: float) -> None:
        verdict = "unmeasured" if value is None else ("met" if value <= limit else "missed")
        out.append({"target": what, "value": value, "limit": limit, "verdict": verdict})

    for shape, modes in doc["streaming"].items():
        for mode, limit in (("bulk", BULK_LIMIT), ("per_event", PER_EVENT_LIMIT)):
            cell = modes.get(mode, {}).get("elelem")
            if cell is not None:
                add(f"elelem/floor, {shape}, {mode}", cell["ratio_to_floor"], limit)
    for shape, rows in doc.get("scaling", {}).items():
        row = rows.get("elelem")
        if row is not None:
            add(
                f"elelem per-event growth 2.5k->largest, {shape}",
                row["largest_over_smallest"],
                FLAT_LIMIT,
            )
    storage = doc.get("storage") or {}
    for name in ("append", "load"):
        if isinstance(storage.get(name), dict):
            add(f"storage {name}/raw sqlite3", storage[name]["ratio_to_floor"], STORAGE_LIMIT)
    append = storage.get("append")
    if isinstance(append, dict):
        growth = _ratio(append["last_tenth_us_per_event"], append["first_tenth_us_per_event"])
        add("storage append growth, first tenth->last tenth", growth, FLAT_LIMIT)
    return out


def storage_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of the storage runs: append and load, each against raw sqlite3."""
    if not runs:
        return {}
    ok = [r for r in runs if r.get("status") == "ok"]
    if not ok:
        return {"status": str(runs[0].get("status", "no result"))}

    def med(key: str) -> float:
        return float(statistics.median(r[key] for r in ok))

    events = int(ok[0]["events"])
    out: dict[str, Any] = {"status": "ok", "events": events, "runs_ok": len(ok)}
    for name in ("append", "load"):
        ours, floor = med(f"{name}_cpu_s"), med(f"floor_{name}_cpu_s")
        entry = {
            "us_per_event": round(ours / events * 1e6, 3),
            "floor_us_per_event": round(floor / events * 1e6, 3),
            "ratio_to_floor": _ratio(ours, floor),
            "wall_ratio_to_floor": _ratio(med(f"{name}_wall_s"), med(f"floor_{name}_wall_s")),
        }
        if name == "append":
            entry["first_tenth_us_per_event"] = med("append_first_tenth_us")
            entry["last_tenth_us_per_event"] = med("append_last_tenth_us")
            entry["floor_first_tenth_us_per_event"] = med("floor_append_first_tenth_us")
            entry["floor_last_tenth_us_per_event"] = med("floor_append_last_tenth_us")
        out[name] = entry
    refs = sorted(
        {
            k[4:-6]
            for r in ok
            for k in r
            if k.startswith("ref_") and k.endswith("_cpu_s") and not k.endswith("_floor_cpu_s")
        }
    )
    references: dict[str, Any] = {}
    for name in refs:
        if not all(f"ref_{name}_cpu_s" in r for r in ok):
            continue
        # A reference reading another stored form has its own raw SELECT.
        own = f"ref_{name}_floor_cpu_s"
        floor = med(own) if all(own in r for r in ok) else med("floor_load_cpu_s")
        references[name] = {
            "us_per_event": round(med(f"ref_{name}_cpu_s") / events * 1e6, 3),
            "ratio_to_floor": _ratio(med(f"ref_{name}_cpu_s"), floor),
        }
    out["load"]["references"] = references
    return out


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _fmt(x: float | None, suffix: str = "", digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}{suffix}"


def render(doc: dict[str, Any]) -> str:
    """The human tables: one per delivery mode, then scaling and storage."""
    out: list[str] = []
    streaming = doc["streaming"]
    shapes = list(streaming)
    modes = list(dict.fromkeys(m for s in streaming.values() for m in s))
    notes: dict[str, int] = {}
    meta = doc["meta"]
    out.append(
        f"elelem benchmarks ({meta['mode']}: {meta['runs']} run(s), "
        f"{meta['deltas_per_stream']:,} deltas per stream, {meta['machine']}, "
        f"{meta['elapsed_s']} s, commit {meta.get('commit')})"
    )
    for mode in modes:
        out.append(f"\n## {MODE_TITLES.get(mode, mode)}: µs CPU per event (ratio to floor)\n")
        header = ["client"] + [SHAPE_TITLES.get(s, s) for s in shapes]
        rows, extra = [], []
        for client in CLIENTS:
            cells = [streaming[s].get(mode, {}).get(client) for s in shapes]
            if not any(cells):
                continue
            row, row2 = [CLIENT_TITLES.get(client, client)], [CLIENT_TITLES.get(client, client)]
            for cell in cells:
                if cell is None:
                    row.append("—")
                    row2.append("—")
                elif cell["us_per_event"] is None:
                    n = notes.setdefault(cell["status"], len(notes) + 1)
                    row.append(f"n/a [{n}]")
                    row2.append(f"n/a [{n}]")
                else:
                    row.append(
                        f"{cell['us_per_event']:.2f} µs ({_fmt(cell['ratio_to_floor'], 'x', 1)})"
                    )
                    vs = cell.get("ratio_to_elelem")
                    row2.append(
                        (f"{vs:.1f}x elelem, " if vs is not None else "")
                        + f"+{_fmt(cell['rss_growth_mb'], ' MB', 2)}"
                    )
            rows.append(row)
            extra.append(row2)
        out.append(_table(header, rows))
        out.append(f"\n{MODE_TITLES.get(mode, mode)}: ratio to elelem, peak RSS growth\n")
        out.append(_table(header, extra))
    if notes:
        out.append("")
        out += [f"[{n}] {text}" for text, n in notes.items()]
    if doc.get("scaling"):
        out.append("\n## scaling (bulk): µs CPU per event by stream length\n")
        sizes = sorted(
            {
                int(k)
                for rows in doc["scaling"].values()
                for r in rows.values()
                for k in r["us_per_event"]
            }
        )
        header = ["shape", "client"] + [f"{n:,}" for n in sizes] + ["largest/smallest"]
        rows = []
        for shape, by_client in doc["scaling"].items():
            for client, r in by_client.items():
                vals = [_fmt(r["us_per_event"].get(str(n))) for n in sizes]
                rows.append(
                    [
                        SHAPE_TITLES.get(shape, shape),
                        client,
                        *vals,
                        _fmt(r["largest_over_smallest"], "x"),
                    ]
                )
        out.append(_table(header, rows))
    _render_storage(out, doc.get("storage") or {})
    if doc.get("targets"):
        out.append("\n## issue 7 targets\n")
        rows = [
            [t["target"], _fmt(t["value"], "x"), f"<= {t['limit']}x", t["verdict"]]
            for t in doc["targets"]
        ]
        out.append(_table(["target", "measured", "limit", "verdict"], rows))
    return "\n".join(out)


_REFERENCE_NAMES = {  # in the order the table shows them
    "load_then_every_body": "elelem load(), then every event's body read",
    "eager_decode": "elelem decode_events (every body decoded at load)",
    "msgspec_plain": "msgspec -> plain structs (the typed bound)",
    "msgpack_arrays": "msgspec, stored as MessagePack arrays -> plain structs (vs its own SELECT)",
    "msgspec_dicts": "msgspec -> dicts",
    "json_dicts": "json.loads -> dicts",
}


def _reference_order(item: tuple[str, Any]) -> tuple[int, str]:
    names = list(_REFERENCE_NAMES)
    return (names.index(item[0]) if item[0] in names else len(names), item[0])


def _render_storage(out: list[str], storage: dict[str, Any]) -> None:
    if storage:
        out.append("\n## storage: µs CPU per event vs raw sqlite3 of the same bytes\n")
        if storage.get("status") != "ok":
            out.append(f"conversation store: {storage.get('status')}")
            return
        out.append(f"{storage['events']:,} events, one commit per 20-event turn\n")
        rows = []
        for name in ("append", "load"):
            s = storage[name]
            rows.append(
                [
                    name,
                    f"{s['us_per_event']:.2f}",
                    f"{s['floor_us_per_event']:.2f}",
                    _fmt(s["ratio_to_floor"], "x"),
                    _fmt(s["wall_ratio_to_floor"], "x"),
                ]
            )
        out.append(_table(["", "elelem", "raw sqlite3", "ratio (CPU)", "ratio (wall)"], rows))
        load = storage["load"]
        refs = load.get("references") or {}
        if refs:
            out.append("\nload without elelem, the same rows (raw SELECT + decode of each row):\n")
            ref_rows = [
                ["elelem load()", f"{load['us_per_event']:.2f}", _fmt(load["ratio_to_floor"], "x")]
            ]
            ref_rows += [
                [
                    _REFERENCE_NAMES.get(n, n),
                    f"{r['us_per_event']:.2f}",
                    _fmt(r["ratio_to_floor"], "x"),
                ]
                for n, r in sorted(refs.items(), key=_reference_order)
            ]
            out.append(_table(["loader", "µs/event", "ratio to raw SELECT"], ref_rows))
        a = storage["append"]
        out.append(
            f"\nappend cost per event, first tenth -> last tenth: elelem "
            f"{a['first_tenth_us_per_event']:.2f} -> {a['last_tenth_us_per_event']:.2f} µs, "
            f"raw sqlite3 {a['floor_first_tenth_us_per_event']:.2f} -> "
            f"{a['floor_last_tenth_us_per_event']:.2f} µs"
        )
