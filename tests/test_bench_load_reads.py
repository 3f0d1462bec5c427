"""The load instruction counter (``benchmarks.load_reads``): every mode reads
the events after a seq from a real store the storage benchmark's way, and
the callgrind child reads each count's events.  Counting under callgrind
takes a minute, so that run is the slow variant (skipped without
valgrind)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the benchmarks package lives beside src/, not in it
    sys.path.insert(0, str(ROOT))

from benchmarks import load_reads  # noqa: E402


@pytest.fixture
def store(tmp_path: Path, corpus: Path) -> Path:
    db = tmp_path / "store.db"
    load_reads.build(db, 40)
    return db


@pytest.mark.parametrize("mode", load_reads.MODES)
def test_each_mode_reads_the_events_after_a_seq(store: Path, mode: str) -> None:
    assert load_reads.read(mode, store, 0) == 40
    assert load_reads.read(mode, store, 25) == 15
    assert load_reads.read(mode, store, 40) == 0


def test_the_child_reads_without_the_counter(store: Path) -> None:
    # Outside callgrind the marks are plain calls: the child's reads run.
    load_reads.child("elelem", store, 40)
    assert load_reads.main(["elelem", str(store), "30"]) == 0


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_callgrind_counts_every_mode_per_event(corpus: Path) -> None:
    got = load_reads.instructions(400)
    assert list(got) == list(load_reads.MODES)
    # A raw row costs thousands of instructions, not the query's fixed cost;
    # a load decodes on top of it, and reading every body on top of that.
    assert 1_000 < got["floor"] < got["elelem"] < got["bodies"] < 200_000
