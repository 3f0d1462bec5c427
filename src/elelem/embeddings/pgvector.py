"""The SQL of collections on a PostgreSQL server with pgvector, without I/O.

Where the server has the ``vector`` extension, the ``embeddings`` table gains
an ``embedding vector`` column beside the float32 bytes, and
:meth:`~elelem.embeddings.collections.Collection.similar` ranks in SQL with
pgvector's cosine-distance operator ``<=>`` (score ``1 - distance``, the same
cosine the Python path computes, to float32 rounding).  One table holds every
collection, each at its own dimension, so the column is a ``vector`` of any
length and each collection has its own partial HNSW index over
``embedding::vector(n)`` (pgvector's documented way to index vectors of
several lengths in one column); queries cast the same way, so the planner
can use it.

pgvector's limits decide what each collection gets (:func:`search_kind`):
up to :data:`MAX_HNSW` dimensions an HNSW index; up to :data:`MAX_STORED` an
exact scan in SQL; past that (and for a vector with no direction: all zeros,
or a NaN or infinity, which ``<=>`` cannot rank) the column stays NULL and
the row is scored in Python, merged with the SQL ranking, so the result is
that of the Python path.

The bytes stay the canonical copy: they are the same float32 values, they
survive the extension being dropped (``DROP EXTENSION vector CASCADE`` drops
the column), and a database without the extension reads them as before.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

from elelem.embeddings.wires import Vector

MAX_STORED = 16_000
"""The most dimensions a pgvector ``vector`` holds."""
MAX_HNSW = 2_000
"""The most dimensions pgvector's HNSW index takes for a ``vector``."""
MAX_EF_SEARCH = 1_000
"""The largest ``hnsw.ef_search`` pgvector accepts."""
ITERATIVE_SCAN = (0, 8, 0)
"""The pgvector version that has ``hnsw.iterative_scan``."""

PYTHON = "python"
"""Ranked in Python over every stored vector."""
PGVECTOR = "pgvector"
"""Ranked in SQL by pgvector, scanning the collection."""
PGVECTOR_HNSW = "pgvector+hnsw"
"""Ranked in SQL by pgvector with the collection's HNSW index."""


def quote_ident(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """``text`` as a standard SQL string literal (no NUL: the store escapes it)."""
    if "\x00" in text:
        raise ValueError("a SQL literal cannot hold NUL")
    return "'" + text.replace("'", "''") + "'"


def literal(vector: Vector) -> str | None:
    """``vector`` in pgvector's text form (``[1.5,-2.0]``), or None for one it
    cannot rank: more than :data:`MAX_STORED` values, all zeros, or a NaN or
    infinity.  Each float32 value's shortest decimal reads back as itself."""
    if len(vector) > MAX_STORED or not any(vector):
        return None
    if not all(math.isfinite(x) for x in vector):
        return None
    return "[" + ",".join(map(repr, vector)) + "]"


def search_kind(dimensions: int) -> str:
    """How a collection of ``dimensions`` is ranked where pgvector is installed."""
    if dimensions <= MAX_HNSW:
        return PGVECTOR_HNSW
    return PGVECTOR if dimensions <= MAX_STORED else PYTHON


def version_of(text: str) -> tuple[int, ...]:
    """An extension version (``0.8.2``) as numbers to compare."""
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def index_name(collection: str) -> str:
    """The name of ``collection``'s HNSW index (a digest: any name fits 63 bytes)."""
    return (
        "embeddings_hnsw_"
        + hashlib.sha256(collection.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    )


@dataclass(frozen=True)
class PgVector:
    """The installed extension: the schema its type and operators live in
    (named in every statement: a store's ``search_path`` is its own schema,
    and the extension may be in another) and its version."""

    schema: str
    version: str

    def type(self, dimensions: int | None = None) -> str:
        """The ``vector`` type, of ``dimensions`` when given."""
        name = f"{quote_ident(self.schema)}.vector"
        return name if dimensions is None else f"{name}({dimensions})"

    def add_column(self) -> str:
        """The statement adding the ``embedding`` column."""
        return f"ALTER TABLE embeddings ADD COLUMN IF NOT EXISTS embedding {self.type()}"

    def null_index(self) -> str:
        """An index of the rows whose column is NULL (scored in Python, so
        found without reading the others)."""
        return (
            "CREATE INDEX IF NOT EXISTS embeddings_unranked"
            " ON embeddings (collection) WHERE embedding IS NULL"
        )

    def hnsw_index(self, stored_name: str, dimensions: int) -> str | None:
        """The statement making the HNSW index of collection ``stored_name``
        (as the table stores it), or None past :data:`MAX_HNSW`."""
        if dimensions > MAX_HNSW:
            return None
        ops = f"{quote_ident(self.schema)}.vector_cosine_ops"
        return (
            f"CREATE INDEX IF NOT EXISTS {index_name(stored_name)} ON embeddings"
            f" USING hnsw ((embedding::{self.type(dimensions)}) {ops})"
            f" WHERE collection = {quote_literal(stored_name)}"
        )

    def drop_index(self, stored_name: str) -> str:
        """The statement dropping collection ``stored_name``'s HNSW index."""
        return f"DROP INDEX IF EXISTS {index_name(stored_name)}"

    def settings(self, number: int) -> list[tuple[str, str]]:
        """The search settings for a query asking ``number`` rows: an HNSW
        scan returns at most ``ef_search`` rows, so it is raised to the rows
        asked (one more for a skipped row), and from pgvector 0.8 an
        iterative scan goes on past it, in distance order."""
        out = [("hnsw.ef_search", str(min(MAX_EF_SEARCH, max(40, number + 1))))]
        if version_of(self.version) >= ITERATIVE_SCAN:
            out.append(("hnsw.iterative_scan", "strict_order"))
        return out

    def search(self, dimensions: int, skip: bool) -> str:
        """The ranking query (``?`` parameters: :func:`search_params`); rows of
        id, content, metadata and cosine distance, nearest first, ties by id
        in code-point order (as Python orders strings)."""
        typed = self.type(dimensions)
        operator = f"OPERATOR({quote_ident(self.schema)}.<=>)"
        return (
            f"SELECT id, content, metadata, embedding::{typed} {operator} CAST(? AS {typed})"
            " AS distance FROM embeddings WHERE collection = ? AND embedding IS NOT NULL"
            + (" AND id <> ?" if skip else "")
            + ' ORDER BY distance, id COLLATE "C" LIMIT ?'
        )

    def upsert_value(self) -> str:
        """The ``embedding`` value of an insert (a ``?`` of :func:`literal`)."""
        return f"CAST(? AS {self.type()})"


def search_params(stored_name: str, query: str, skip: str | None, number: int) -> list[object]:
    """The parameters of :meth:`PgVector.search`, in its order."""
    return [query, stored_name, *(() if skip is None else (skip,)), number]


__all__ = [
    "MAX_HNSW",
    "MAX_STORED",
    "PGVECTOR",
    "PGVECTOR_HNSW",
    "PYTHON",
    "PgVector",
    "index_name",
    "literal",
    "quote_ident",
    "quote_literal",
    "search_kind",
    "search_params",
    "version_of",
]
