"""One writer per conversation turn (issue #13): two processes continuing one
conversation never interleave their turns, on SQLite and PostgreSQL; the
second waits for the first, or fails with WriterBusy past its timeout."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cli_helpers import ELELEM, KEY, MODEL, base_env, run, text_frames
from elelem.conversation import Conversation, Store, WriterBusy
from elelem.testing.servers import LoopbackServer, Pause, Reply, Send, sse_body
from elelem.vocabulary import ConversationId
from test_store import BACKENDS, opener, pg_url

__all__ = ["pg_url"]  # the fixture, imported for this module's tests

Opener = Callable[..., Store]


@pytest.fixture(params=BACKENDS)
def open_store(request: pytest.FixtureRequest) -> Opener:
    return opener(request.param, request)


def _hold_in_child(open_store: Opener, conv: str, seconds: float, ready: int) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:
        store = open_store()
        with store.writer(ConversationId(conv)):
            os.write(ready, b"x")
            time.sleep(seconds)
            Conversation.open(store, ConversationId(conv)).add_user("from the child")
        store.close()
    except BaseException:  # noqa: BLE001 - a forked child must report, not unwind into pytest
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


def test_a_second_writer_waits_or_fails_clearly(open_store: Opener) -> None:
    store = open_store()
    conv = Conversation.create(store)
    conv.add_user("first")
    read, write = os.pipe()
    pid = _hold_in_child(open_store, conv.id, 0.8, write)
    try:
        assert os.read(read, 1) == b"x"  # the child holds the lock
        with pytest.raises(WriterBusy) as caught:
            store.writer(conv.id, timeout=0.1).acquire()
        assert str(caught.value) == (
            f"conversation {conv.id} is being continued by another elelem (waited 0.1 s for "
            "its turn to end); try again when it is done"
        )
        started = time.monotonic()
        with store.writer(conv.id, timeout=10):
            waited = time.monotonic() - started
            texts = [e.body.content[0].text for e in store.load(conv.id)]
        assert waited > 0.3
        assert texts == ["first", "from the child"]  # the child's turn was whole first
    finally:
        _, status = os.waitpid(pid, 0)
        store.close()
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_writers_of_different_conversations_do_not_wait(open_store: Opener) -> None:
    store = open_store()
    one, two = Conversation.create(store), Conversation.create(store)
    with store.writer(one.id, timeout=0.1), store.writer(two.id, timeout=0.1):
        pass
    store.close()


def test_two_ask_c_at_once_leave_a_well_formed_log(tmp_path: Path) -> None:
    first = sse_body(text_frames("Seed.", "msg_seed"))
    slow = sse_body(text_frames("Slow answer.", "msg_slow"))
    cut = len(slow) // 2
    fast = sse_body(text_frames("Fast answer.", "msg_fast"))
    replies = [
        Reply(200, {"content-type": "text/event-stream"}, (Send(first),)),
        Reply(
            200,
            {"content-type": "text/event-stream"},
            (Send(slow[:cut]), Pause(1.0), Send(slow[cut:])),
        ),
        Reply(200, {"content-type": "text/event-stream"}, (Send(fast),)),
    ]
    with LoopbackServer(replies) as server:
        env = base_env(tmp_path, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
        assert run(env, "ask", "-m", MODEL, "seed").returncode == 0
        cid = json.loads(run(env, "log", "--json").stdout.splitlines()[0])["id"]
        one = subprocess.Popen(
            [ELELEM, "ask", "-c", cid, "one"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(0.5)  # the first is streaming its answer when the second starts
        two = subprocess.Popen(
            [ELELEM, "ask", "-c", cid, "two"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        out_one, err_one = one.communicate(timeout=60)
        out_two, err_two = two.communicate(timeout=60)
    assert (one.returncode, two.returncode) == (0, 0), (err_one, err_two)
    assert out_one.startswith("Slow answer.") and out_two.startswith("Fast answer.")
    exported = run(env, "export", cid).stdout.splitlines()[1:]
    events = [json.loads(line) for line in exported]
    shape = [(e["turn"], e["kind"], (e["body"].get("role") or "")) for e in events]
    assert shape == [
        (1, "turn-start", ""),
        (1, "message", "user"),
        (1, "message", "assistant"),
        (1, "response", ""),
        (2, "turn-start", ""),
        (2, "message", "user"),
        (2, "message", "assistant"),
        (2, "response", ""),
        (3, "turn-start", ""),
        (3, "message", "user"),
        (3, "message", "assistant"),
        (3, "response", ""),
    ]
    # The second turn was sent after the first ended, with its answer in the history.
    sent = json.loads(server.requests[2].body)["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
