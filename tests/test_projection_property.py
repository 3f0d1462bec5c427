"""Properties of projections over any log: they never fail, the portable one
never carries a payload, and adding overlays never changes stored bytes."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elelem.codec import to_builtins
from elelem.conversation import (
    OVERLAY_KINDS,
    Draft,
    SQLiteStore,
    diagnose,
    portable_history,
    project,
    turn_views,
)
from elelem.vocabulary import ToolResultBlock
from test_store_property import drafts, overlay_bodies


def _payload_count(value: object) -> int:
    if isinstance(value, dict):
        here = 1 if {"provider", "format", "version", "value"} <= value.keys() else 0
        return here + sum(_payload_count(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_payload_count(v) for v in value)
    return 0


overlays = overlay_bodies


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log=st.lists(drafts(), max_size=12), extra=st.lists(overlays, min_size=1, max_size=3))
def test_projections_of_any_log(log: list[Draft], extra: list[object]) -> None:
    assert all(Draft.of(b).kind in OVERLAY_KINDS for b in extra)
    with SQLiteStore(":memory:") as store:
        info = store.create()
        events = list(store.append(info.id, log)) if log else []
        before = store.load_bytes(info.id)
        native = project(events)
        portable = portable_history(events)
        assert len(native.messages) == len(native.origins)
        assert all(
            len(m.content) == len(o) for m, o in zip(native.messages, native.origins, strict=True)
        )
        assert _payload_count(to_builtins(portable.messages)) == 0
        assert all(m.provider is None for m in portable.messages)
        views = turn_views(events)
        assert sum(len(v.events) for v in views) == len(events)
        diagnose(events)

        more = store.append(info.id, [Draft.of(b, turn=1) for b in extra])  # type: ignore[arg-type]
        assert store.load_bytes(info.id)[: len(before)] == before
        # Synthetic results only ever answer client tool calls the log made.
        after = project(events + list(more))
        calls = {
            p.call_id
            for m, o in zip(after.messages, after.origins, strict=True)
            for p, origin in zip(m.content, o, strict=True)
            if origin is None and isinstance(p, ToolResultBlock)
        }
        made = {
            getattr(p, "id", None)
            for e in events
            if e.kind == "message" and e.known
            for p in e.body.content
        }
        assert calls <= made
