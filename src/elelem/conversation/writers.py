"""One writer per conversation turn, across processes (issue #13: two
``ask -c`` on one conversation interleaved their turns).

A turn holds its conversation's :class:`~elelem.conversation.store.Writer`
from its first append to its last; a second process continuing the same
conversation waits for it (then sees the first turn's events) or, after the
store's timeout, fails with :class:`~elelem.conversation.errors.WriterBusy`.
The lock is the backend's: an ``flock`` on a file beside a SQLite database
(released by the kernel if the process dies), a session advisory lock in
PostgreSQL (released when the connection ends); a process-local lock first
serializes the threads of one process that share a store.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from elelem.conversation.errors import StoreError, WriterBusy


class PollingWriter:
    """A :class:`~elelem.conversation.store.Writer` over a non-blocking
    ``try_lock`` and its ``unlock``, retried until ``timeout`` seconds pass."""

    def __init__(
        self,
        conversation: str,
        timeout: float,
        local: threading.Lock,
        try_lock: Callable[[], bool],
        unlock: Callable[[], None],
    ) -> None:
        self.conversation = conversation
        self.timeout = timeout
        self._local = local
        self._try_lock = try_lock
        self._unlock = unlock

    def acquire(self) -> None:
        """Wait for the lock; :class:`WriterBusy` after ``timeout`` seconds."""
        deadline = time.monotonic() + self.timeout
        if not self._local.acquire(timeout=max(self.timeout, 0)):
            raise WriterBusy(self.conversation, self.timeout)
        delay = 0.005
        try:
            while not self._try_lock():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WriterBusy(self.conversation, self.timeout)
                time.sleep(min(delay, left))
                delay = min(delay * 2, 0.1)
        except BaseException:
            self._local.release()
            raise

    def release(self) -> None:
        """Let the next writer in."""
        try:
            self._unlock()
        finally:
            self._local.release()

    def __enter__(self) -> PollingWriter:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class LocalLocks:
    """One process-local lock per conversation."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def __call__(self, conversation: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(conversation, threading.Lock())


def file_lock(folder: Path, conversation: str) -> tuple[Callable[[], bool], Callable[[], None]]:
    """``try_lock`` and ``unlock`` over an ``flock`` on a file in ``folder``
    named by the conversation id's hash (any id makes a safe file name)."""
    name = hashlib.sha256(conversation.encode("utf-8")).hexdigest()[:32] + ".lock"
    path = folder / name
    held: list[int] = []

    def try_lock() -> bool:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StoreError(f"cannot make the writer lock {path}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        held.append(fd)
        return True

    def unlock() -> None:
        fd = held.pop()
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    return try_lock, unlock


def always() -> tuple[Callable[[], bool], Callable[[], None]]:
    """For a store no other process can see (SQLite ``:memory:``): the
    process-local lock is the whole lock."""
    return (lambda: True), (lambda: None)


__all__ = ["LocalLocks", "PollingWriter", "always", "file_lock"]
