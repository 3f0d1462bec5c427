"""What a benchmark run measures (:class:`Plan`, full or quick) and the raw
results it gathers (:class:`Measurements`), apart from the driver that runs it
(``benchmarks/run.py``) and the report that reads them (``benchmarks/report.py``),
so neither of those two imports the other."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Protocol

from benchmarks.streams import Stream


@dataclass(frozen=True)
class Plan:
    """How much to measure."""

    runs: int
    slow_runs: int  # runs for the peers that take tens of seconds per 20,000 events
    events: int
    scaling_sizes: tuple[int, ...]
    scaling_runs: int
    storage_events: int
    storage_runs: int
    grouped: bool  # quick mode: one child per client family instead of one per run
    child_timeout: float


FULL = Plan(
    runs=7,
    slow_runs=3,
    events=20_000,
    scaling_sizes=(2_500, 5_000, 10_000, 20_000, 40_000, 80_000),
    scaling_runs=3,
    storage_events=100_000,
    storage_runs=3,
    grouped=False,
    child_timeout=600,
)
QUICK = Plan(
    runs=1,
    slow_runs=1,
    events=2_500,
    scaling_sizes=(2_500, 10_000, 40_000),
    scaling_runs=1,
    storage_events=20_000,
    storage_runs=1,
    grouped=True,
    child_timeout=120,
)


@dataclass
class Measurements:
    """Raw per-run results, keyed by (shape, mode, client) and by (shape, size, client)."""

    streaming: dict[tuple[str, str, str], list[dict[str, Any]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    scaling: dict[tuple[str, int, str], list[dict[str, Any]]] = field(
        default_factory=lambda: defaultdict(list)
    )


class Schedule(Protocol):
    """What the report reads of the driver: the plan and what it ran."""

    plan: Plan
    clients: list[str]
    shapes: list[str]
    modes: list[str]
    streams: dict[str, Stream]

    def key(self, shape: str, n: int) -> str:
        """The server key of ``shape``'s stream of ``n`` deltas."""
        ...
