"""Bytes sent per turn with and without the provider's state.
``python -m benchmarks.provider_state``

A 20-turn conversation on the Responses wire, through the real client, turn
engine and SQLite store, against the loopback Responses API that keeps state
as OpenAI documents it (:mod:`elelem.testing.responses_state`).  Each user
message is the same ~200-character question and each answer names how many
input items the model saw.  Stored (``store: true``), each turn continues
the previous response with ``previous_response_id`` and sends only the new
input; stateless (the default, ``store: false``), each turn replays the
whole history.  Both give the model the same context (checked: the answers
are the same).

Printed: the request body's bytes at turns 1, 2, 5, 10, 20 for both, the
totals, and the ratio of the totals.  A byte count, not a timing: the same
on every machine.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

TURNS = 20
QUESTION = "Please summarize where we are and say what the next step is, " * 3


def _run(db: Path, options: Any) -> tuple[list[int], list[str]]:
    from elelem import SyncClient
    from elelem.conversation import Conversation, SQLiteStore
    from elelem.testing.responses_state import StatefulResponses
    from elelem.testing.servers import LoopbackServer
    from elelem.turns.drive import send_sync

    state = StatefulResponses()
    conv = Conversation.create(SQLiteStore(db))
    answers = []
    with LoopbackServer(state) as server:
        env = {
            "OPENAI_BASE_URL": server.url + "/v1",
            "OPENAI_API_KEY": "sk-bench-0123456789",
            "ELELEM_CONFIG": "/nonexistent/elelem.toml",
        }
        with SyncClient(env=env) as client:
            for n in range(TURNS):
                kwargs = {"options": options} if options is not None else {}
                answers.append(
                    send_sync(conv, client, "openai:gpt-5", f"{n}: {QUESTION}", **kwargs).text
                )
        sizes = [len(r.body) for r in server.requests]
    return sizes, answers


def measure() -> dict[str, list[int]]:
    """Bytes of each request body, stored and stateless."""
    from elelem.vocabulary import GenerationOptions

    with tempfile.TemporaryDirectory() as tmp:
        stored, said = _run(Path(tmp) / "stored.db", GenerationOptions(extra={"store": True}))
        plain, said_plain = _run(Path(tmp) / "plain.db", None)
    if said != said_plain:
        raise SystemExit("the two runs gave the model different contexts")
    return {"stored": stored, "stateless": plain}


def main(argv: list[str] | None = None) -> int:
    del argv
    sizes = measure()
    marks = [1, 2, 5, 10, 20]
    print(f"request body bytes per turn, {TURNS} turns, Responses wire")
    print(f"{'turn':>10} " + " ".join(f"{m:>8}" for m in marks) + f" {'total':>9}")
    for name, row in sizes.items():
        cells = " ".join(f"{row[m - 1]:>8,}" for m in marks)
        print(f"{name:>10} {cells} {sum(row):>9,}")
    ratio = sum(sizes["stateless"]) / sum(sizes["stored"])
    print(f"stateless / stored, total bytes: {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
