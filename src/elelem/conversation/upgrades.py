"""Event bodies an earlier elelem wrote in a form since changed, read in
today's form (:func:`upgrade_body`); the general path of decoding
(:func:`elelem.conversation.events.decode_event`) tries them when a body
does not decode as it stands."""

from __future__ import annotations

from typing import Any

import msgspec

from elelem import codec
from elelem.errors import DecodeError
from elelem.vocabulary import legacy_drop
from elelem.vocabulary.json import decode_json


def _upgrade_response(body: Any) -> Any:
    # Response records once kept each drop as one free-text line.
    dropped = body.get("dropped") if isinstance(body, dict) else None
    if not isinstance(dropped, list) or not any(isinstance(d, str) for d in dropped):
        return body
    lines = [msgspec.to_builtins(legacy_drop(d)) if isinstance(d, str) else d for d in dropped]
    return {k: (lines if k == "dropped" else v) for k, v in body.items()}


_UPGRADES = {"response": _upgrade_response}
"""Per kind: the body JSON an earlier elelem wrote -> today's form of it (the
same object when there is nothing to upgrade).  An upgrade only ever rewrites
a value into the form that now means the same; it drops nothing."""


def upgrade_body(kind: str, body: Any) -> Any:
    """``body`` (decoded JSON of an event of ``kind``) in today's form: a
    body an earlier elelem wrote in a form since changed (a response record's
    free-text drops) is rewritten to mean the same in today's; any other
    body is returned as it is (the same object)."""
    upgrade = _UPGRADES.get(kind)
    return body if upgrade is None else upgrade(body)


def upgraded(kind: str, raw: msgspec.Raw, typ: type) -> Any:
    """The body of ``raw`` decoded after :func:`upgrade_body`, or None when
    no upgrade applies (then the original error stands)."""
    try:
        old = decode_json(raw)
    except msgspec.DecodeError:
        return None
    new = upgrade_body(kind, old)
    if new is old:
        return None
    try:
        return codec.loads(codec.dumps(new), typ)
    except DecodeError:
        return None


__all__ = ["upgrade_body", "upgraded"]
