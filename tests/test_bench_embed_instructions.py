"""The embed instruction counter (``benchmarks.embed_instructions``): its
child embeds through the real clients against the benchmark's loopback
stand-in and checks every vector; its arithmetic takes each client's call
of N texts less its call of none.  Counting under callgrind takes minutes,
so that run is the slow variant (skipped without valgrind)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the benchmarks package lives beside src/, not in it
    sys.path.insert(0, str(ROOT))

from benchmarks import embed_instructions  # noqa: E402


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    return env


def test_the_child_embeds_and_checks_with_every_client() -> None:
    cmd = [sys.executable, "-m", "benchmarks.embed_instructions", "--child"]
    cmd += ["--clients", "elelem_sync,elelem_async,floor", "--inputs", "5", "--dimensions", "8"]
    # Exits 0 only when every call returned the exact vectors sent.
    done = subprocess.run(cmd, env=_env(), cwd=ROOT, timeout=120, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_client_costs_its_inputs_call_less_its_empty_one() -> None:
    counts = [1_000, 50, 9_001_000, 7_000_000, 2_000, 60, 5_002_000]
    assert embed_instructions.figures(["elelem_sync", "floor"], counts) == {
        "elelem_sync": 9_000_000,
        "floor": 5_000_000,
    }
    with pytest.raises(ValueError, match="6 dumps for 2 clients"):
        embed_instructions.figures(["elelem_sync", "floor"], counts[:6])


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_callgrind_counts_more_for_more_inputs() -> None:
    small = embed_instructions.measure(["elelem_sync"], 4, 64, None)
    large = embed_instructions.measure(["elelem_sync"], 40, 64, None)
    assert 0 < small["elelem_sync"] < large["elelem_sync"]
