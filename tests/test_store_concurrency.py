"""Several processes appending to one SQLite store lose nothing."""

from __future__ import annotations

import os
from pathlib import Path

from elelem.conversation import Draft, MessageBody, SQLiteStore
from elelem.vocabulary import ConversationId, TextBlock

BATCHES = 150


def _append_in_child(path: str, conv: str, name: str) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:
        with SQLiteStore(path, timeout=60) as store:
            for b in range(BATCHES):
                drafts = [
                    Draft(
                        "message", MessageBody("user", (TextBlock(f"{name} {b}.{i}"),), "user"), 1
                    )
                    for i in range(b % 5 + 1)
                ]
                store.append(ConversationId(conv), drafts)
    except BaseException:  # noqa: BLE001 - a forked child must report, not unwind into pytest
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


def _expected(name: str) -> list[str]:
    return [f"{name} {b}.{i}" for b in range(BATCHES) for i in range(b % 5 + 1)]


def _texts(store: SQLiteStore, conv: str) -> list[str]:
    return [e.body.content[0].text for e in store.load(ConversationId(conv))]


def test_two_processes_appending_to_different_conversations_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    with SQLiteStore(path) as store:
        store.create(id=ConversationId("c_a"))
        store.create(id=ConversationId("c_b"))
    pids = [_append_in_child(path, "c_a", "a"), _append_in_child(path, "c_b", "b")]
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    with SQLiteStore(path) as store:
        assert _texts(store, "c_a") == _expected("a")
        assert _texts(store, "c_b") == _expected("b")
        for conv in ("c_a", "c_b"):
            events = store.load(ConversationId(conv))
            assert [e.seq for e in events] == list(range(1, len(_expected("a")) + 1))
            assert store.info(ConversationId(conv)).events == len(events)
        assert store.integrity_check() == "ok"


def test_two_processes_appending_to_one_conversation_interleave_whole_batches(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "one.db")
    with SQLiteStore(path) as store:
        store.create(id=ConversationId("c_same"))
    pids = [_append_in_child(path, "c_same", "a"), _append_in_child(path, "c_same", "b")]
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    with SQLiteStore(path) as store:
        texts = _texts(store, "c_same")
        events = store.load(ConversationId("c_same"))
    assert [e.seq for e in events] == list(range(1, 2 * len(_expected("a")) + 1))
    # Each writer's events keep their order; no event is lost or doubled.
    assert [t for t in texts if t.startswith("a ")] == _expected("a")
    assert [t for t in texts if t.startswith("b ")] == _expected("b")
    # A batch is one transaction: its events sit together.
    batch = [t.split(" ")[1].split(".")[0] + t[0] for t in texts]
    runs = [batch[0]]
    for key in batch[1:]:
        if key != runs[-1]:
            runs.append(key)
    assert len(runs) == 2 * BATCHES
