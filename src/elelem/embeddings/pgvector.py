"""The SQL of collections on a PostgreSQL server with pgvector, without I/O.

Where the server has the ``vector`` extension, the ``embeddings`` table gains
an ``embedding vector`` column beside the float32 bytes, and
:meth:`~elelem.embeddings.collections.Collection.similar` ranks in SQL with
pgvector's cosine-distance operator ``<=>`` (score ``1 - distance``, the same
cosine the Python path computes, to float32 rounding).  One table holds every
collection, each at its own dimension, so the column is a ``vector`` of any
length and a collection's HNSW index is a partial index over
``embedding::vector(n)`` (pgvector's documented way to index vectors of
several lengths in one column); queries cast the same way, so the planner
can use it.

A collection gets its index once it holds :data:`HNSW_FROM` rows (up to
there an exact scan in SQL is quick, and every insert into an HNSW index
costs a graph search: loading 20,000 rows of 256 dimensions took 99 s with
the index in place, 1 s without it and 13 s to build it after), and only up
to :data:`MAX_HNSW` dimensions; up to :data:`MAX_STORED` it is ranked by an
exact scan in SQL.  Past that (and for a vector with no direction: all
zeros, or a NaN or infinity, which ``<=>`` cannot rank) the column stays NULL
and the row is scored in Python, merged with the SQL ranking, so the result
is that of the Python path.

Vectors go to the server in pgvector's binary form (:func:`binary`): the
text form costs a decimal conversion per value, five times the whole insert.
The bytes column stays the canonical copy: the same float32 values, kept if
the extension is dropped (``DROP EXTENSION vector CASCADE`` drops the
column), and read as before by a database without the extension.
"""

from __future__ import annotations

import hashlib
import math
import struct
import sys
from array import array
from dataclasses import dataclass

from elelem.wire.embeddings import Vector

MAX_STORED = 16_000
"""The most dimensions a pgvector ``vector`` holds."""
MAX_HNSW = 2_000
"""The most dimensions pgvector's HNSW index takes for a ``vector``."""
HNSW_FROM = 5_000
"""How many rows a collection holds before it gets its HNSW index."""
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


class VectorValue(bytes):
    """One vector in pgvector's binary form, which the store sends as the
    ``vector`` type (``PostgresStore._send_as``)."""


def binary(vector: Vector) -> VectorValue | None:
    """``vector`` in pgvector's binary form (dimensions and a reserved zero
    as big-endian 16-bit numbers, then each float32 big-endian), or None for
    one it cannot rank: more than :data:`MAX_STORED` values, all zeros, or a
    NaN or infinity."""
    if len(vector) > MAX_STORED or not any(vector):
        return None
    if not all(math.isfinite(x) for x in vector):
        return None
    values = array("f", vector)
    if sys.byteorder == "little":
        values.byteswap()
    return VectorValue(struct.pack(">HH", len(values), 0) + values.tobytes())


def search_kind(dimensions: int, indexed: bool) -> str:
    """How a collection of ``dimensions`` is ranked where pgvector is
    installed, ``indexed`` when it has its HNSW index."""
    if dimensions > MAX_STORED:
        return PYTHON
    return PGVECTOR_HNSW if indexed else PGVECTOR


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
        """The ``embedding`` value of an insert (a ``?`` of :func:`binary`)."""
        return f"CAST(? AS {self.type()})"


def search_params(
    stored_name: str, query: VectorValue, skip: str | None, number: int
) -> list[object]:
    """The parameters of :meth:`PgVector.search`, in its order."""
    return [query, stored_name, *(() if skip is None else (skip,)), number]


__all__ = [
    "HNSW_FROM",
    "MAX_HNSW",
    "MAX_STORED",
    "PGVECTOR",
    "PGVECTOR_HNSW",
    "PYTHON",
    "PgVector",
    "VectorValue",
    "binary",
    "index_name",
    "quote_ident",
    "quote_literal",
    "search_kind",
    "search_params",
    "version_of",
]
