"""A history processor whose module reads a file as it is imported, as an
application's module reads its settings or a prompt: a Temporal worker imports
it inside the workflow sandbox while a run is under way
(tests/test_durable_temporal.py)."""

from __future__ import annotations

from pathlib import Path

from elelem.turns.history import KeepLastTurns

SETTING = Path(__file__).parent / "data" / "durable" / "keep_turns.txt"
"""The file that holds how many turns :data:`KEEP` sends (1)."""

with open(SETTING) as setting:  # builtins.open, as application code reads
    KEEP = KeepLastTurns(int(setting.read()))
