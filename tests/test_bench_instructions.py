"""The bulk instruction counter (``benchmarks.bulk_instructions``): its child
reads a provider row's streams from the real loopback server with the real
clients and labels what it measured; its arithmetic takes each row's large
request less its small one over their events.  Counting under callgrind
itself takes minutes, so that run is the slow variant (skipped without
valgrind)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the benchmarks package lives beside src/, not in it
    sys.path.insert(0, str(ROOT))

from benchmarks import bulk_instructions  # noqa: E402
from benchmarks.providers import build, recordings  # noqa: E402

pytest.importorskip("orjson")  # the floor parses with it (the bench extra's)


def _env(corpus: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    env |= {
        "ELELEM_CORPUS": str(corpus),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
    }
    return env


def test_the_child_labels_each_measured_request_of_every_client(
    tmp_path: Path, corpus: Path
) -> None:
    labels = tmp_path / "labels.json"
    cmd = [sys.executable, "-m", "benchmarks.bulk_instructions", "--child"]
    cmd += ["--clients", "sync,floor", "--small", "5", "--large", "9"]
    cmd += ["--providers", "groq", "--labels", str(labels)]
    # Exits 0 only when every request assembled its stream's text.
    subprocess.run(cmd, env=_env(corpus), cwd=ROOT, check=True, timeout=120)
    got = json.loads(labels.read_text(encoding="utf-8"))
    (rec,) = [r for r in recordings(corpus) if r.provider == "groq"]
    want: list[dict[str, object] | None] = []
    for probe in (False, True):
        for client in ("sync", "floor"):
            for deltas in (5, 9):
                # Events: the deltas and the recording's opening and closing frames.
                events = len(build(rec, deltas, probe=probe).events)
                assert events > deltas
                label = {"provider": "groq", "shape": "openai_chat", "probe": probe}
                label |= {"client": client, "deltas": deltas, "events": events}
                want += [None, label]
    assert got == want


def test_a_row_costs_its_large_request_less_its_small_one_per_event() -> None:
    row = {"provider": "perplexity", "shape": "openai_chat", "probe": False, "client": "sync"}
    segments = [
        None,
        {**row, "deltas": 1000, "events": 1003},
        None,
        {**row, "deltas": 3000, "events": 3003},
        None,
        {**row, "probe": True, "deltas": 1000, "events": 1003},
        None,
        {**row, "probe": True, "deltas": 3000, "events": 3003},
    ]
    counts = [9_000_000, 40_000_000, 7_000, 100_000_000, 10, 41_000_000, 5, 103_000_000]
    assert bulk_instructions.figures(segments, counts, 1000, 3000) == {
        "perplexity | openai_chat": 30_000.0,
        "perplexity +unknown | openai_chat": 31_000.0,
    }


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_callgrind_counts_each_row_of_one_provider(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ELELEM_CORPUS", str(corpus))
    got = bulk_instructions.measure("floor", 20, 60, frozenset({"groq"}), ROOT / "src")
    assert set(got) == {"groq | openai_chat", "groq +unknown | openai_chat"}
    # The floor's line split, orjson.loads and extraction: thousands of
    # instructions per event, not the request's fixed cost.
    assert all(1_000 < v < 200_000 for v in got.values())
