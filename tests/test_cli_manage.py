"""`elelem log --json`, `log path`, `rm`, `rename`, `fork` and the messages for
ambiguous or unknown ids: subprocess runs over a store the test fills."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import base_env, run
from elelem.conversation import Conversation, open_store
from elelem.vocabulary import ConversationId


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return base_env(tmp_path)


def fill(env: dict[str, str], ids: list[str], titles: list[str]) -> Path:
    path = Path(env["ELELEM_HOME"]) / "elelem.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    store = open_store(path)
    for cid, title in zip(ids, titles, strict=True):
        store.create(title=title, id=ConversationId(cid))
        conversation = Conversation.open(store, cid)
        conversation.start_turn()
        conversation.add_user(f"question of {title}")
    store.close()
    return path


IDS = ["c_aaaa000000000001", "c_aaaa000000000002", "c_bbbb000000000003"]
TITLES = ["first", "second", "third"]


def test_log_json_and_limit(env: dict[str, str]) -> None:
    fill(env, IDS, TITLES)
    result = run(env, "log", "--json", "-n", "2")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["id"] for r in records] == ["c_bbbb000000000003", "c_aaaa000000000002"]
    assert records[0]["title"] == "third"
    assert records[0]["turns"] == 1
    assert records[0]["events"] == 2
    assert set(records[0]) == {
        "id",
        "title",
        "model",
        "turns",
        "events",
        "created_at",
        "updated_at",
        "parent",
        "forked_at",
        "cost_usd",
    }
    assert records[0]["cost_usd"] == "0"  # no response yet: nothing spent


def test_log_path_names_the_store(env: dict[str, str]) -> None:
    path = fill(env, IDS[:1], TITLES[:1])
    result = run(env, "log", "path")
    assert (result.returncode, result.stdout) == (0, f"{path}\n")


def test_ambiguous_and_unknown_ids_list_the_candidates(env: dict[str, str]) -> None:
    fill(env, IDS, TITLES)
    ambiguous = run(env, "show", "c_aaaa")
    assert ambiguous.returncode == 2
    assert ambiguous.stderr == (
        "elelem: 'c_aaaa' is ambiguous: 2 conversations start so: "
        "c_aaaa000000000002 (second), c_aaaa000000000001 (first) (give more of the id)\n"
    )
    unknown = run(env, "show", "c_zz")
    assert (unknown.returncode, unknown.stderr) == (
        2,
        "elelem: no conversation 'c_zz' in this store\n",
    )


def test_rename_rm_and_fork(env: dict[str, str]) -> None:
    fill(env, IDS, TITLES)
    renamed = run(env, "rename", "c_bbbb", "a", "new", "title")
    assert renamed.returncode == 0, renamed.stderr
    assert renamed.stderr == "renamed c_bbbb000000000003: a new title\n"
    listing = [json.loads(line) for line in run(env, "log", "--json").stdout.splitlines()]
    assert listing[0]["title"] == "a new title"

    store = open_store(Path(env["ELELEM_HOME"]) / "elelem.db")
    first_event = Conversation.open(store, IDS[0]).events[0].id
    store.close()
    forked = run(env, "fork", "c_aaaa000000000001", "--at", first_event, "--title", "branch")
    assert forked.returncode == 0, forked.stderr
    new_id = forked.stdout.strip()
    assert new_id.startswith("c_") and new_id not in IDS
    assert forked.stderr == f"forked c_aaaa000000000001 at {first_event}\n"
    store = open_store(Path(env["ELELEM_HOME"]) / "elelem.db")
    copy = Conversation.open(store, new_id)
    assert [e.id for e in copy.events] == [first_event]
    assert copy.info.title == "branch"
    assert copy.info.parent == "c_aaaa000000000001"
    store.close()

    bad_event = run(env, "fork", "c_aaaa000000000001", "--at", "e_nope")
    assert (bad_event.returncode, bad_event.stderr) == (
        2,
        "elelem: conversation c_aaaa000000000001 has no event 'e_nope'\n",
    )

    # rm resolves every id before deleting any: one bad id deletes nothing.
    refused = run(env, "rm", "c_bbbb", "c_nope")
    assert refused.returncode == 2
    assert len(run(env, "log", "--json").stdout.splitlines()) == 4
    removed = run(env, "rm", "c_bbbb", new_id)
    assert removed.returncode == 0, removed.stderr
    assert removed.stderr == f"deleted c_bbbb000000000003\ndeleted {new_id}\n"
    left = [json.loads(line)["id"] for line in run(env, "log", "--json").stdout.splitlines()]
    assert left == ["c_aaaa000000000002", "c_aaaa000000000001"]
