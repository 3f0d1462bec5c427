"""Full-text search over a SQL store's events (the index of
:mod:`~elelem.conversation.fulltext`, caught up on demand, or a scan for a
query without words)."""

from __future__ import annotations

import functools

from elelem import codec
from elelem.conversation.events import decode_event, event_text
from elelem.conversation.fulltext import INDEXED, PROGRESS, STALE, index_rows, query_words
from elelem.conversation.sqlschema import SQLOps
from elelem.conversation.store import SearchHit, snippet


def search_events(store: SQLOps, text: str, limit: int) -> list[SearchHit]:
    """:meth:`SQLStore.search`'s work."""
    if not text:
        return []
    words = query_words(text)
    if not words:
        return scan(store, text, limit)
    store._write(functools.partial(catch_up_index, store), "index")
    fts = store.fulltext
    sql = (
        f"SELECT c.id, e.conv, e.seq, {store._stored_json}"
        " FROM events e JOIN conversations c ON c.key = e.conv"
        f" WHERE (e.conv, e.seq) IN ({fts.match})"
        f" ORDER BY {store._sql_updated} DESC, c.key DESC, e.seq LIMIT ?"
    )
    hits: list[SearchHit] = []
    with store._lock:
        for cid, key, seq, data in store._exec(
            store._sql(sql), (fts.query(words), limit)
        ).fetchall():
            event = decode_event(store._event_json(key, seq, data))
            found = event_text(event.kind, event.body) or ""
            needle = text if text.casefold() in found.casefold() else words[0]
            hits.append(SearchHit(cid, event.id, event.seq, event.turn, snippet(found, needle)))
    return hits


def catch_up_index(store: SQLOps) -> None:
    """Bring the full-text index up to the events stored since it was last
    written (nothing to do when its watermarks add up to the event count)."""
    fts = store.fulltext
    # Seqs run 1..n in every conversation, so the index is current exactly
    # when the watermarks add up to the number of events: one count instead
    # of a max(seq) per conversation on every search.
    total, indexed = store._exec(store._sql(INDEXED)).fetchone()
    if int(total or 0) == int(indexed or 0):
        return
    for key, done in store._exec(store._sql(STALE)).fetchall():
        rows = store._exec(
            store._sql(
                f"SELECT seq, {store._stored_json} FROM events"
                " WHERE conv = ? AND seq > ? ORDER BY seq"
            ),
            (key, done),
        ).fetchall()
        # A big event is read apart, one at a time (#41).
        whole = ((seq, store._event_json(key, seq, data)) for seq, data in rows)
        inserts, last = index_rows(fts, int(key), whole)
        if inserts:
            store._many(fts.insert, inserts)
        store._exec(store._sql(PROGRESS), (key, last))


def scan(store: SQLOps, text: str, limit: int) -> list[SearchHit]:
    """Up to ``limit`` hits of ``text`` found by reading every event, newest
    conversation first: the search for a query without words, which the
    index cannot match."""
    wanted = text.casefold()
    order = f" ORDER BY {store._sql_updated} DESC, c.key DESC, e.seq"
    select = (
        f"SELECT c.id, e.conv, e.seq, {store._stored_json}"
        " FROM events e JOIN conversations c ON c.key = e.conv"
    )
    if text.isascii():
        # The bytes hold the text JSON-escaped; SQL narrows by that (its
        # lower() folds ASCII only), the decoded text decides (keys and
        # other fields can match the bytes too).  A big event kept apart is
        # read here, never copied whole (and lowered) by SQL (#41).
        find = store.dialect.find.format(as_text=store.dialect.as_text)
        where = f" WHERE ({store._kept_apart} OR {find} > 0)"
        sql, params = select + where + order, [codec.dumps(text)[1:-1].decode()]
    else:
        sql, params = select + order, []
    hits: list[SearchHit] = []
    with store._lock:
        for cid, key, seq, data in store._exec(store._sql(sql), params):
            event = decode_event(store._event_json(key, seq, data))
            found = event_text(event.kind, event.body)
            if found is not None and wanted in found.casefold():
                hits.append(SearchHit(cid, event.id, event.seq, event.turn, snippet(found, text)))
                if len(hits) >= limit:
                    break
    return hits


__all__ = ["catch_up_index", "scan", "search_events"]
