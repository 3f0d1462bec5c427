"""Durable runs: the turn engine on a workflow engine (a third driver).

:mod:`elelem.turns.drive` drives the turn engine in process; this package
drives the same engine, the same tool loop and the same resume flow inside a
durable workflow, each model request, tool call and log append a durable
step, so a run outlives the process (and the machine) that started it:

- :mod:`elelem.durable.wire` — what crosses between workflow and steps;
- :mod:`elelem.durable.orchestrate` — the workflow's side: the driver over
  a mirror of the log, engine-neutral;
- :mod:`elelem.durable.steps` — the worker's side: open, append, request,
  call (with the call ledger that keeps a tool call from running twice);
- :mod:`elelem.durable.temporal` — the steps as Temporal activities, the
  workflow, ``start``/``result``/``decide`` and ``worker`` (needs the
  ``temporal`` extra).

See docs/durable.md.
"""

from elelem.durable.wire import DurableError, by_import

__all__ = ["DurableError", "by_import"]
