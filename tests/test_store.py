"""Both stores (SQLite, and PostgreSQL where its server binaries are
installed): append, load, list, search, fork, delete, schema; SQLite's own
file, WAL mode, migrations and URLs."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from elelem.conversation import (
    Conversation,
    ConversationNotFound,
    Draft,
    MessageBody,
    SchemaVersionError,
    SQLiteStore,
    StoreError,
    TurnStart,
    decode_event,
    encode_event,
    open_store,
)
from elelem.conversation import sqlite as sqlite_module
from elelem.conversation.sqlite import MIGRATIONS, SCHEMA_VERSION
from elelem.conversation.store import Store
from elelem.vocabulary import ConversationId, EventId, TextBlock
from store_helpers import write_as_version


class Ticker:
    """A clock that advances one second per reading."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def user(text: str, turn: int = 1) -> Draft:
    return Draft("message", MessageBody("user", (TextBlock(text),), "user"), turn)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pg_binary(name: str) -> str | None:
    """A PostgreSQL server program on PATH, else in Debian's versioned folder
    (the postgresql package does not put initdb on PATH)."""
    found = shutil.which(name)
    if found is not None:
        return found
    folders = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key)
    return next((str(p) for f in reversed(folders) if (p := Path(f) / name).is_file()), None)


def _version_key(folder: str) -> tuple[int, ...]:
    version = Path(folder).parent.name
    return tuple(int(part) for part in version.split(".") if part.isdigit())


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A throwaway PostgreSQL server on 127.0.0.1 (skips where it cannot run)."""
    initdb, pg_ctl = _pg_binary("initdb"), _pg_binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip(
            "PostgreSQL server binaries (initdb, pg_ctl) are not installed: "
            "apt-get install postgresql (bash .ci/run does)"
        )
    yield from postgres_server(initdb, pg_ctl)


def postgres_server(initdb: str, pg_ctl: str) -> Iterator[str]:
    """Run a throwaway PostgreSQL server of ``initdb`` and ``pg_ctl`` on
    127.0.0.1 and yield its URL; stop it and remove its files after."""
    pytest.importorskip(
        "psycopg", reason="psycopg (the postgres extra) is not installed: make install adds it"
    )
    as_user: list[str] = []
    base = tempfile.mkdtemp(prefix="elelem-pg-")
    if os.geteuid() == 0:
        # PostgreSQL refuses to run as root.
        try:
            account = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(base)
            pytest.skip(
                "running as root and there is no 'postgres' user to run the server: "
                "apt-get install postgresql creates it"
            )
        os.chown(base, account.pw_uid, account.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data = os.path.join(base, "data")
    port = _free_port()
    run = {"check": True, "capture_output": True, "timeout": 60}
    started = False
    try:
        subprocess.run(
            [*as_user, initdb, "-D", data, "-A", "trust", "-U", "elelem", "--no-sync"], **run
        )  # type: ignore[call-overload]
        options = f"-p {port} -k {base} -h 127.0.0.1 -F"
        log = os.path.join(base, "log")
        start = [*as_user, pg_ctl, "-D", data, "-o", options, "-l", log, "-w", "start"]
        subprocess.run(start, **run)  # type: ignore[call-overload]
        started = True
        yield f"postgresql://elelem@127.0.0.1:{port}/postgres"
    finally:
        if started:
            subprocess.run([*as_user, pg_ctl, "-D", data, "-m", "immediate", "stop"], **run)  # type: ignore[call-overload]
        shutil.rmtree(base, ignore_errors=True)


def opener(kind: str, request: pytest.FixtureRequest) -> Callable[..., Store]:
    """A function opening one fixed, initially empty store of ``kind`` (each
    call a new connection, as another process would open it)."""
    if kind == "sqlite":
        path = request.getfixturevalue("tmp_path") / f"{uuid.uuid4().hex}.db"
        return lambda **kw: SQLiteStore(path, **kw)
    from elelem.conversation.postgres import PostgresStore

    url = request.getfixturevalue("pg_url")
    schema = f"t_{uuid.uuid4().hex[:16]}"
    return lambda **kw: PostgresStore(url, schema=schema, **kw)


BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    s = opener(request.param, request)(clock=Ticker())
    yield s
    s.close()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "t.db", clock=Ticker())
    yield s
    s.close()


def test_every_backend_implements_the_store_protocol(store: Store) -> None:
    assert isinstance(store, Store)


def test_append_assigns_seq_time_and_ids_and_load_returns_the_same_bytes(
    store: Store,
) -> None:
    info = store.create(title="t")
    assert info.created_at == "2026-03-04T05:06:08.000000Z"
    first = store.append(info.id, [Draft.of(TurnStart("user", "anthropic:m"), turn=1), user("hi")])
    second = store.append(info.id, [user("again")])
    assert [e.seq for e in first + second] == [1, 2, 3]
    # One commit, one timestamp; the next commit reads the clock again.
    assert [e.at for e in first + second] == [
        "2026-03-04T05:06:09.000000Z",
        "2026-03-04T05:06:09.000000Z",
        "2026-03-04T05:06:10.000000Z",
    ]
    assert len({e.id for e in first + second}) == 3
    assert all(e.id.startswith("ev_") and len(e.id) == 19 for e in first + second)
    loaded = store.load(info.id)
    assert loaded == first + second
    assert store.load_bytes(info.id) == [encode_event(e) for e in first + second]
    assert store.load(info.id, after=2) == second
    assert decode_event(store.load_bytes(info.id)[1]) == first[1]


def _append_cost(store: SQLiteStore, conversation: ConversationId) -> tuple[list[str], int]:
    """The statements one append runs and the SQLite VM instructions it takes."""
    statements: list[str] = []
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    store._db.set_trace_callback(statements.append)
    store._db.set_progress_handler(count, 1)
    store.append(conversation, [user("x")])
    store._db.set_progress_handler(None, 1)
    store._db.set_trace_callback(None)
    return [s.split()[0].upper() for s in statements], steps[0]


def test_append_is_constant_work_whatever_the_length_of_the_conversation(
    sqlite_store: Store,
) -> None:
    store = sqlite_store
    short = store.create()
    store.append(short.id, [user("m")])
    long = store.create()
    for _ in range(40):
        store.append(long.id, [user("m" * 200) for i in range(100)])
    verbs, short_steps = _append_cost(store, short.id)
    long_verbs, long_steps = _append_cost(store, long.id)
    # The conversation row, one indexed max(seq), one insert, a no-op row
    # update: no event is read.
    assert verbs == long_verbs == ["BEGIN", "SELECT", "SELECT", "INSERT", "UPDATE", "COMMIT"]
    assert short_steps == long_steps
    assert store.load(long.id)[-1].seq == 4001


def test_append_keeps_an_id_a_draft_brings(store: Store) -> None:
    info = store.create()
    store.append(info.id, [user("m")])
    (mine,) = store.append(info.id, [Draft("message", user("y").body, 1, None, EventId("ev_mine"))])
    assert (mine.id, mine.seq) == ("ev_mine", 2)
    assert store.load(info.id)[1] == mine


def test_append_to_a_missing_conversation_is_a_typed_error(store: Store) -> None:
    with pytest.raises(ConversationNotFound, match="no conversation 'c_nope'"):
        store.append(ConversationId("c_nope"), [user("x")])
    with pytest.raises(ConversationNotFound):
        store.load(ConversationId("c_nope"))


def test_a_failed_append_writes_nothing(store: Store) -> None:
    info = store.create()
    store.append(info.id, [user("kept")])
    bad = Draft("message", MessageBody("user", (object(),), "user"), 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="cannot encode a object"):
        # The counter was already bumped when encoding the second draft failed.
        store.append(info.id, [user("lost"), bad])
    assert [e.body.content[0].text for e in store.load(info.id)] == ["kept"]
    assert store.info(info.id).events == 1
    (next_event,) = store.append(info.id, [user("after")])
    assert next_event.seq == 2


def test_event_ids_given_by_drafts_must_be_unique(store: Store) -> None:
    info = store.create()
    body = user("x").body
    store.append(info.id, [Draft("message", body, 1, None, EventId("ev_a"))])
    with pytest.raises(StoreError, match="event id 'ev_a' is already in the conversation"):
        store.append(info.id, [Draft("message", body, 1, None, EventId("ev_a"))])
    with pytest.raises(StoreError, match="repeat within one append"):
        store.append(
            info.id,
            [
                Draft("message", body, 1, None, EventId("ev_b")),
                Draft("message", body, 1, None, EventId("ev_b")),
            ],
        )
    assert store.info(info.id).events == 1


def test_list_is_newest_first_with_title_model_and_turn_count(store: Store) -> None:
    a = Conversation.create(store)
    a.start_turn(model="anthropic:claude-sonnet-4-5")
    a.add_user("What is the tallest mountain?\nAnd why?")
    b = Conversation.create(store, title="named")
    b.start_turn(model="openai:gpt-5")
    b.add_user("hello")
    b.start_turn(model="openai:gpt-5-mini")
    a.add_user("later")  # a becomes the most recently updated
    listed = store.list_conversations()
    assert [(c.id, c.title, c.model, c.turns, c.events) for c in listed] == [
        (a.id, "What is the tallest mountain?", "anthropic:claude-sonnet-4-5", 1, 3),
        (b.id, "named", "openai:gpt-5-mini", 2, 3),
    ]
    assert [c.id for c in store.list_conversations(limit=1)] == [a.id]


def test_titles_and_model_names_keep_nul_and_backslashes(store: Store) -> None:
    # A model name comes from the provider's response and a title is anyone's
    # text; PostgreSQL text cannot hold NUL, so that backend escapes them.
    odd_title, odd_model = "a\x00b\\0c\\\\", "anthropic:m\x00\\"
    c = Conversation.create(store, title=odd_title)
    c.start_turn(model=odd_model)
    c.add_user("hi")
    info = store.info(c.id)
    assert (info.title, info.model) == (odd_title, odd_model)
    assert [(i.title, i.model) for i in store.list_conversations()] == [(odd_title, odd_model)]
    c.start_turn(model=odd_model)  # the same name again is no change
    assert store.info(c.id).turns == 2
    fork = store.fork(c.id, c.events[-1].id)
    assert (fork.title, fork.model) == (odd_title, odd_model)
    assert (store.info(fork.id).title, store.info(fork.id).model) == (odd_title, odd_model)
    store.set_title(c.id, "\x00")
    assert store.info(c.id).title == "\x00"


def test_search_finds_text_case_insensitively_with_a_snippet(store: Store) -> None:
    c = Conversation.create(store)
    c.start_turn()
    hit = c.add_user("The Quick brown fox jumps")
    c.add_user("nothing here")
    hits = store.search("quick BROWN")
    assert [(h.conversation, h.event, h.seq, h.turn, h.snippet) for h in hits] == [
        (c.id, hit.id, 2, 1, "The Quick brown fox jumps")
    ]
    assert store.search("absent") == []
    accented = c.add_user("Un Été à Paris")
    assert [(h.event, h.snippet) for h in store.search("été À")] == [
        (accented.id, "Un Été à Paris")
    ]
    assert store.search("") == []


def test_full_text_search_words_prefixes_order_and_index_upkeep(store: Store) -> None:
    older = Conversation.create(store)
    older.start_turn()
    a = older.add_user("Quarterly revenue grew in the third quarter")
    newer = Conversation.create(store)
    newer.start_turn()
    b = newer.add_user("The revenue report, quarterly edition")
    newer.add_user("unrelated words")
    # Every word, each a prefix, in any order; newest conversation first.
    assert [h.event for h in store.search("quarter reven")] == [b.id, a.id]
    assert [h.event for h in store.search("quarter reven", limit=1)] == [b.id]
    assert store.search("quarterly banana") == []
    # Events appended after a search are indexed by the next one.
    c = older.add_user("banana quarterly")
    assert [h.event for h in store.search("quarterly banana")] == [c.id]
    # A fork is indexed when searched; a deleted conversation leaves the index.
    fork = store.fork(older.id, a.id)
    assert [h.conversation for h in store.search("grew")] == [older.id, fork.id]
    store.delete(older.id)
    assert [h.conversation for h in store.search("grew")] == [fork.id]
    # The snippet is around the whole query when it occurs as typed.
    assert [h.snippet for h in store.search("report, quarterly")] == [
        "The revenue report, quarterly edition"
    ]
    # Punctuation alone has no words: it matches verbatim.
    d = newer.add_user("what?!")
    assert [h.event for h in store.search("?!")] == [d.id]


def test_fork_copies_events_up_to_the_fork_point_byte_for_byte(store: Store) -> None:
    c = Conversation.create(store, title="orig")
    c.start_turn()
    at = c.add_user("one")
    c.add_user("two")
    forked = store.fork(c.id, at.id)
    assert (forked.parent, forked.forked_at, forked.events, forked.title) == (
        c.id,
        at.id,
        2,
        "orig",
    )
    assert store.load_bytes(forked.id) == store.load_bytes(c.id)[:2]
    f = Conversation.open(store, forked.id)
    f.add_user("branch")
    assert [e.seq for e in f.events] == [1, 2, 3]
    assert len(store.load(c.id)) == 3  # the original is untouched
    with pytest.raises(StoreError, match="has no event 'ev_missing'"):
        store.fork(c.id, EventId("ev_missing"))
    # From the conversation: at its latest event by default, same history.
    branch = c.fork(title="branch")
    assert (branch.info.parent, branch.info.title) == (c.id, "branch")
    assert branch.events == c.events and branch.history() == c.history()
    assert c.fork(at.id).events == c.events[:2]


def test_delete_removes_the_conversation_and_its_events(store: Store) -> None:
    c = Conversation.create(store)
    c.add_user("bye")
    store.delete(c.id)
    assert store.list_conversations() == []
    with pytest.raises(ConversationNotFound):
        store.load(c.id)
    with pytest.raises(ConversationNotFound):
        store.delete(c.id)
    assert store.search("bye") == []


def test_set_title_and_duplicate_ids(store: Store) -> None:
    info = store.create(id=ConversationId("c_mine"))
    store.set_title(info.id, "renamed")
    assert store.info(info.id).title == "renamed"
    with pytest.raises(StoreError, match="already exists"):
        store.create(id=ConversationId("c_mine"))
    with pytest.raises(ConversationNotFound):
        store.set_title(ConversationId("c_other"), "x")


def test_the_file_is_in_wal_mode_at_the_current_schema(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    SQLiteStore(path).close()
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert raw.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    raw.close()


def test_a_newer_schema_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    SQLiteStore(path).close()
    raw = sqlite3.connect(path)
    raw.execute("UPDATE schema_version SET version = 99")
    raw.commit()
    raw.close()
    with pytest.raises(SchemaVersionError, match="schema version 99; this elelem understands"):
        SQLiteStore(path)


def test_a_store_at_an_older_schema_is_migrated_once_in_one_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    with SQLiteStore(path) as store:
        c = Conversation.create(store)
        kept = store.load_bytes(c.add_user("an old needle") and c.id)
    applied: list[int] = []

    def v2(store: Store) -> None:
        applied.append(2)
        # Fails if ever run twice: the version bookkeeping must prevent that.
        store._exec("CREATE INDEX events_by_data ON events (conv, data)")

    def broken(store: Store) -> None:
        store._exec("CREATE TABLE half_done (x)")
        raise RuntimeError("migration 3 failed")

    monkeypatch.setattr(sqlite_module, "MIGRATIONS", (*MIGRATIONS, v2, broken))
    now = len(MIGRATIONS)
    with pytest.raises(StoreError, match="migration 3 failed"):
        SQLiteStore(path)
    # Nothing of the failed upgrade stayed: not v2's index, not v3's table.
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT version FROM schema_version").fetchall() == [(now,)]
    names = {r[0] for r in raw.execute("SELECT name FROM sqlite_master")}
    assert "events_by_data" not in names and "half_done" not in names
    raw.close()

    monkeypatch.setattr(sqlite_module, "MIGRATIONS", (*MIGRATIONS, v2))
    with SQLiteStore(path) as store:
        assert store.schema_version == now + 1
        assert store.load_bytes(c.id) == kept
        assert [h.snippet for h in store.search("needle")] == ["an old needle"]
    with SQLiteStore(path) as store:
        assert store.schema_version == now + 1
    assert applied == [2, 2]  # once in the rolled-back attempt, once for real


def test_a_store_from_before_the_full_text_index_is_searched_after_migration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "v1.db"
    write_as_version(monkeypatch, 1)
    with SQLiteStore(path) as store:
        c = Conversation.create(store)
        old = c.add_user("written before the index existed")
        assert store.schema_version == 1
    monkeypatch.undo()
    with SQLiteStore(path) as store:
        assert store.schema_version == len(MIGRATIONS)
        assert [h.event for h in store.search("index existed")] == [old.id]


def test_open_store_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with open_store("sqlite:///rel.db") as s:  # type: ignore[attr-defined]
        assert Path(s.path) == Path("rel.db")
    assert (tmp_path / "rel.db").is_file()
    absolute = tmp_path / "abs dir" / "a.db"
    with open_store("sqlite:///" + str(absolute).replace(" ", "%20")) as s:  # type: ignore[attr-defined]
        assert s.path == str(absolute)
    assert absolute.is_file()
    with open_store(str(tmp_path / "plain.db")) as s:  # type: ignore[attr-defined]
        assert s.path == str(tmp_path / "plain.db")
    monkeypatch.setenv("ELELEM_HOME", str(tmp_path / "home"))
    with open_store() as s:  # type: ignore[attr-defined]
        assert s.path == str(tmp_path / "home" / "elelem.db")
    with open_store("sqlite:///:memory:?synchronous=full") as s:  # type: ignore[attr-defined]
        assert s._db.execute("PRAGMA synchronous").fetchone()[0] == 2
    with pytest.raises(StoreError, match="cannot open PostgreSQL store") as refused:
        open_store("postgresql://me:s3cret@127.0.0.1:1/db?connect_timeout=3")
    assert "s3cret" not in str(refused.value)
    assert "postgresql://me:***@127.0.0.1:1/db" in str(refused.value)
    with pytest.raises(StoreError, match="unknown store URL scheme 'mysql'"):
        open_store("mysql://x/y")
    with pytest.raises(StoreError, match="unknown sqlite URL option"):
        open_store("sqlite:///x.db?cache=shared")
    with pytest.raises(StoreError, match="has a host"):
        open_store("sqlite://host/x.db")
