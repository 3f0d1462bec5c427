"""Crash safety: a process appending events is SIGKILLed at random moments.

After every kill the store must open, pass SQLite's integrity check, and hold
every event whose append had returned (the child reports each acknowledged
append through a pipe), in order, with the content that was written.
"""

from __future__ import annotations

import os
import random
import select
import signal
import time
from pathlib import Path

import pytest

from elelem.conversation import Draft, MessageBody, SQLiteStore, decode_event
from elelem.vocabulary import ConversationId, TextBlock

KILLS = 200
CONV = ConversationId("c_crash")


def _child(path: str, run: int, wfd: int) -> None:
    # Runs in the forked child; never returns.
    try:
        store = SQLiteStore(path)
        os.write(wfd, b"open\n")
        rng = random.Random(run)
        k = 0
        while True:
            n = rng.randint(1, 12)
            drafts = []
            for _ in range(n):
                k += 1
                # Some bodies are large so that kills land inside page writes.
                pad = "x" * rng.choice((0, 0, 100, 5000))
                body = MessageBody("user", (TextBlock(f"{run}:{k}:{pad}"),), "user")
                drafts.append(Draft("message", body, turn=run))
            events = store.append(CONV, drafts)
            line = " ".join(f"{e.seq}={e.body.content[0].text.split(':', 2)[1]}" for e in events)
            os.write(wfd, f"{run} {line}\n".encode())
    except BaseException as exc:  # noqa: BLE001 - a forked child must report, not unwind into pytest
        os.write(wfd, f"ERR {type(exc).__name__}: {exc}\n".encode())
        os._exit(1)


def _read_available(fd: int, buf: bytearray, timeout: float) -> bool:
    """Read what the pipe holds (waiting up to ``timeout``); False at EOF."""
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return True
    data = os.read(fd, 65536)
    if not data:
        return False
    buf.extend(data)
    return True


def _acks(buf: bytearray) -> list[str]:
    return [line for line in buf.decode().split("\n")[:-1]]


@pytest.mark.parametrize(
    "kills",
    [
        # The default run: enough kills to land some mid-append.
        pytest.param(KILLS // 10, id="short"),
        pytest.param(KILLS, id="long", marks=pytest.mark.slow),
    ],
)
def test_sigkill_at_random_moments_never_loses_an_acknowledged_append(
    tmp_path: Path, kills: int
) -> None:
    path = str(tmp_path / "crash.db")
    with SQLiteStore(path) as store:
        store.create(id=CONV)
    rng = random.Random(20261130)
    expected: dict[int, str] = {}  # seq -> "run:k" of every acknowledged event
    known: list[bytes] = []  # the log as verified after the previous kill
    kills_mid_append = 0
    started = time.monotonic()
    for run in range(1, kills + 1):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            _child(path, run, wfd)
        os.close(wfd)
        buf = bytearray()
        # Kill at a random moment: sometimes while opening, mostly after a
        # random number of acknowledged appends plus a random sub-ms delay.
        if rng.random() < 0.1:
            time.sleep(rng.uniform(0, 0.004))
        else:
            want = rng.randint(0, 6)
            deadline = time.monotonic() + 5
            while len(_acks(buf)) < want + 1 and time.monotonic() < deadline:
                assert _read_available(rfd, buf, 0.05), "child exited early: " + buf.decode()
            time.sleep(rng.uniform(0, 0.002))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, buf.decode()
        while _read_available(rfd, buf, 1.0):
            pass
        os.close(rfd)
        lines = _acks(buf)
        assert not any(line.startswith("ERR") for line in lines), lines
        for line in lines:
            if line == "open":
                continue
            _, *pairs = line.split(" ")
            for pair in pairs:
                seq, tag = pair.split("=")
                expected[int(seq)] = f"{run}:{tag}"

        with SQLiteStore(path) as store:
            assert store.integrity_check() == "ok"
            rows = store.load_bytes(CONV)
        # Everything verified after earlier kills is still there, byte for byte.
        assert rows[: len(known)] == known, f"run {run}: earlier events changed or vanished"
        new = [decode_event(r) for r in rows[len(known) :]]
        assert [e.seq for e in new] == list(range(len(known) + 1, len(rows) + 1))
        top = max(expected, default=0)
        assert len(rows) >= top, f"run {run}: {top - len(rows)} acknowledged events lost"
        for e in new:
            text = e.body.content[0].text
            tag = expected.get(e.seq)
            if tag is None:
                assert e.seq > top, (
                    f"run {run}: unacknowledged event {e.seq} before an acknowledged one"
                )
                continue  # committed, but the child died before acknowledging it
            assert text.startswith(tag + ":"), (e.seq, tag, text[:40])
        if len(rows) > top:
            kills_mid_append += 1
        known = rows
    with SQLiteStore(path) as store:
        events = store.load(CONV)
    assert [e.seq for e in events] == list(range(1, len(known) + 1))
    assert all(
        e.body.content[0].text.startswith(expected[e.seq] + ":")
        for e in events
        if e.seq in expected
    )
    elapsed = time.monotonic() - started
    assert len(expected) > kills, "children appended too little to test anything"
    print(
        f"{kills} kills, {len(known)} events ({len(expected)} acknowledged),"
        f" {kills_mid_append} kills after an unacknowledged commit, {elapsed:.1f}s"
    )
