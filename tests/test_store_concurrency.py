"""Several processes appending to one store (SQLite, PostgreSQL) lose nothing,
and several processes opening a fresh store migrate it once."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from elelem.conversation import Draft, MessageBody, Store
from elelem.vocabulary import ConversationId, TextBlock
from test_store import BACKENDS, opener, pg_url

__all__ = ["pg_url"]  # the fixture, imported for this module's tests

BATCHES = 150
Opener = Callable[..., Store]


@pytest.fixture(params=BACKENDS)
def open_store(request: pytest.FixtureRequest) -> Opener:
    return opener(request.param, request)


def _append_in_child(open_store: Opener, conv: str, name: str) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:
        store = open_store()
        try:
            for b in range(BATCHES):
                drafts = [
                    Draft(
                        "message", MessageBody("user", (TextBlock(f"{name} {b}.{i}"),), "user"), 1
                    )
                    for i in range(b % 5 + 1)
                ]
                store.append(ConversationId(conv), drafts)
        finally:
            store.close()
    except BaseException:  # noqa: BLE001 - a forked child must report, not unwind into pytest
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


def _expected(name: str) -> list[str]:
    return [f"{name} {b}.{i}" for b in range(BATCHES) for i in range(b % 5 + 1)]


def _texts(store: Store, conv: str) -> list[str]:
    return [e.body.content[0].text for e in store.load(ConversationId(conv))]


def _wait(pids: list[int]) -> None:
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_two_processes_appending_to_different_conversations_lose_nothing(
    open_store: Opener,
) -> None:
    store = open_store()
    store.create(id=ConversationId("c_a"))
    store.create(id=ConversationId("c_b"))
    store.close()
    _wait([_append_in_child(open_store, "c_a", "a"), _append_in_child(open_store, "c_b", "b")])
    store = open_store()
    assert _texts(store, "c_a") == _expected("a")
    assert _texts(store, "c_b") == _expected("b")
    for conv in ("c_a", "c_b"):
        events = store.load(ConversationId(conv))
        assert [e.seq for e in events] == list(range(1, len(_expected("a")) + 1))
        assert store.info(ConversationId(conv)).events == len(events)
    store.close()


def test_two_processes_appending_to_one_conversation_interleave_whole_batches(
    open_store: Opener,
) -> None:
    store = open_store()
    store.create(id=ConversationId("c_same"))
    store.close()
    _wait(
        [_append_in_child(open_store, "c_same", "a"), _append_in_child(open_store, "c_same", "b")]
    )
    store = open_store()
    texts = _texts(store, "c_same")
    events = store.load(ConversationId("c_same"))
    store.close()
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


def test_processes_opening_a_fresh_store_at_once_migrate_it_once(open_store: Opener) -> None:
    pids = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                open_store().close()
            except BaseException:  # noqa: BLE001 - a forked child must report, not unwind into pytest
                import traceback

                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)
        pids.append(pid)
    _wait(pids)
    store = open_store()
    # Each backend's own schema version (SQLite's has the big events' table).
    assert store.schema_version == len(store._migrations())  # type: ignore[attr-defined]
    store.close()
