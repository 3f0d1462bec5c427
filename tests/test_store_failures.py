"""A damaged or starved store fails typed: StoreError, exit 3, one line,
and the store is left as it was (issue #13).  Each store is damaged by the test."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest

from cli_helpers import base_env, run
from elelem.conversation import (
    Conversation,
    CorruptEventError,
    StoreError,
    open_store,
)
from elelem.conversation.sqlite import SQLiteStore


def _store_with_one_conversation(path: Path, messages: int = 3) -> str:
    store = open_store(path)
    conversation = Conversation.create(store)
    for n in range(messages):
        conversation.add_user(f"message {n} " + "x" * 2000)
    store.close()
    return conversation.id


def _env(tmp_path: Path, url: str) -> dict[str, str]:
    return base_env(tmp_path, ELELEM_STORE=url)


def _one_line_exit_3(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 3, (result.returncode, result.stderr)
    assert result.stderr.startswith("elelem: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr
    return result.stderr


def test_a_zeroed_page_is_a_store_error(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _store_with_one_conversation(db, messages=20)
    raw = bytearray(db.read_bytes())
    page = 4096
    raw[2 * page : len(raw) - page] = bytes(len(raw) - 3 * page)  # zero every page but the ends
    db.write_bytes(bytes(raw))
    before = db.read_bytes()
    for command in (["log"], ["show"], ["export"]):
        stderr = _one_line_exit_3(run(_env(tmp_path, str(db)), *command))
        assert "malformed" in stderr or "not a database" in stderr, stderr
    assert db.read_bytes() == before  # nothing was written to the damaged file


def test_an_undecodable_row_names_it_for_show_and_export(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    cid = _store_with_one_conversation(db)
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE events SET data = ? WHERE seq = 2", (b'{"id": 7}',))
    env = _env(tmp_path, str(db))
    for command in (["show", cid], ["export", cid]):
        stderr = _one_line_exit_3(run(env, *command))
        assert stderr.startswith(f"elelem: conversation {cid}: stored event seq 2 is corrupt: "), (
            stderr
        )
    with pytest.raises(CorruptEventError) as caught:
        Conversation.open(open_store(db), cid)
    assert (caught.value.conversation, caught.value.seq) == (cid, 2)


def test_export_of_a_row_import_would_refuse_fails_naming_it(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    cid = _store_with_one_conversation(db)
    with sqlite3.connect(db) as raw:
        (data,) = raw.execute("SELECT data FROM events WHERE seq = 3").fetchone()
        raw.execute("UPDATE events SET data = ? WHERE seq = 3", (bytes(data) + b" ",))
    stderr = _one_line_exit_3(run(_env(tmp_path, str(db)), "export", cid))
    assert stderr == (
        f"elelem: conversation {cid}: stored event seq 3 is corrupt: its bytes are not the "
        "canonical form of the event they hold\n"
    )


def test_a_lock_held_too_long_is_a_store_error(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    cid = _store_with_one_conversation(db)
    store = SQLiteStore(db, timeout=0.2)
    conversation = Conversation.open(store, cid)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreError) as caught:
            conversation.add_user("blocked")
        assert str(caught.value).endswith("failed: database is locked")
        result = run(_env(tmp_path, f"sqlite:///{db}?timeout=0.2"), "log")
        assert _one_line_exit_3(result).endswith("failed: database is locked\n")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert len(open_store(db).load(cid)) == 3  # intact: nothing half-written


def test_a_full_disk_is_a_store_error_and_the_store_stays_intact(tmp_path: Path) -> None:
    mount = tmp_path / f"small-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command to make a small filesystem: apt-get install mount")
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode != 0:
        pytest.skip(
            f"cannot mount a small tmpfs here ({made.stderr.strip() or made.returncode}): "
            "run the tests as root, as bash .ci/run does"
        )
    try:
        store = open_store(mount / "s.db")
        conversation = Conversation.create(store)
        written = 0
        with pytest.raises(StoreError) as caught:
            for n in range(10_000):
                conversation.add_user(f"{n} " + "y" * 8000)
                written += 1
        assert "full" in str(caught.value), str(caught.value)
        store.close()
        reopened = SQLiteStore(mount / "s.db")
        assert reopened.integrity_check() == "ok"
        assert len(reopened.load(conversation.id)) == written
        reopened.close()
    finally:
        subprocess.run(["umount", str(mount)], check=False)
