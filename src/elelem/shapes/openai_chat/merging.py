"""Merging the pieces of values Chat Completions streams across deltas."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Detail types whose text streams in pieces; others (reasoning.encrypted)
# arrive whole, so two in a row are two entries.
_STREAMED_DETAILS = frozenset({"reasoning.text", "reasoning.summary"})


class Details:
    """OpenRouter ``reasoning_details`` merged across deltas: a text or summary
    delta whose ``type`` and ``index`` (and ``id``, if any) equal the last
    entry's extends it (strings are concatenated); anything else starts a new
    entry."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def add(self, detail: Mapping[str, Any]) -> None:
        """Merge one streamed detail into the last entry, or append it."""
        last = self.items[-1] if self.items else None
        if (
            last is not None
            and detail.get("type") in _STREAMED_DETAILS
            and last.get("type") == detail.get("type")
            and last.get("index") == detail.get("index")
            and detail.get("id") in (None, last.get("id"))
        ):
            for key, value in detail.items():
                old = last.get(key)
                if (
                    isinstance(old, str)
                    and isinstance(value, str)
                    and key not in ("type", "format")
                ):
                    last[key] = old + value
                elif value is not None or key not in last:
                    last[key] = value
            return
        self.items.append(dict(detail))


def _merge(old: Any, new: Any) -> Any:
    if isinstance(old, str) and isinstance(new, str):
        return old + new
    if isinstance(old, dict) and isinstance(new, dict):
        merged = dict(old)
        for key, value in new.items():
            merged[key] = _merge(merged[key], value) if key in merged else value
        return merged
    return new


def merge_values(values: list[Any]) -> Any:
    """One value for a delta field nobody modelled, sent in pieces: strings
    concatenate and objects merge key by key (as ``function_call`` streams);
    pieces of mixed kinds stay a list, in order."""
    if len(values) == 1:
        return values[0]
    if all(isinstance(v, str) for v in values) or all(isinstance(v, dict) for v in values):
        merged = values[0]
        for value in values[1:]:
            merged = _merge(merged, value)
        return merged
    return list(values)


# Keys of a streamed tool call that name it: repeated (some servers send them
# on every delta), never concatenated.
_NAMING = frozenset({"id", "type", "name"})


def _merge_call(old: dict[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(old)
    for key, value in new.items():
        if key == "index" or value is None:
            continue
        before = merged.get(key)
        if key in _NAMING and before:
            continue
        if isinstance(before, dict) and isinstance(value, dict):
            merged[key] = _merge_call(before, value)
        elif isinstance(before, str) and isinstance(value, str):
            merged[key] = before + value
        else:
            merged[key] = value
    return merged


class Alternative:
    """One choice beyond the first of an ``n>1`` response, merged from its
    deltas into the ``message`` a non-streamed response would carry for it:
    strings concatenate, content parts and ``reasoning_details`` append (the
    details merged as :class:`Details` merges them), tool calls merge by their
    ``index``; its ``finish_reason`` and its other choice fields (``logprobs``…)
    are kept beside the message, each value that differs from the last."""

    __slots__ = ("calls", "choice_fields", "fields", "finish_reason", "index")

    def __init__(self, index: int) -> None:
        self.index = index
        self.fields: dict[str, list[Any]] = {}
        self.calls: dict[Any, dict[str, Any]] = {}
        self.choice_fields: dict[str, list[Any]] = {}
        self.finish_reason: Any = None

    def add(self, choice: Mapping[str, Any]) -> None:
        """Merge one wire choice (a streamed ``delta`` or a whole ``message``)."""
        for key, value in choice.items():
            if key == "index":
                continue
            if key in ("delta", "message"):
                if isinstance(value, dict):
                    self._delta(value)
            elif key == "finish_reason":
                if value is not None:
                    self.finish_reason = value
            elif value not in (None, "", [], {}):
                values = self.choice_fields.setdefault(key, [])
                if not values or values[-1] != value:
                    values.append(value)

    def _delta(self, delta: Mapping[str, Any]) -> None:
        for key, value in delta.items():
            if key == "tool_calls" and isinstance(value, list):
                for position, call in enumerate(value):
                    if isinstance(call, dict):
                        at = call.get("index", position)
                        self.calls[at] = _merge_call(self.calls.get(at, {}), call)
            elif value not in (None, "", [], {}):
                self.fields.setdefault(key, []).append(value)

    def value(self) -> dict[str, Any]:
        """The choice as a non-streamed response holds it: ``index``,
        ``message``, ``finish_reason`` and the other choice fields."""
        message: dict[str, Any] = {}
        for key, values in self.fields.items():
            if key == "role":
                message[key] = values[0]
            elif key == "reasoning_details" and all(isinstance(v, list) for v in values):
                details = Details()
                for detail in (d for v in values for d in v if isinstance(d, dict)):
                    details.add(detail)
                message[key] = details.items
            elif all(isinstance(v, list) for v in values):
                message[key] = [item for v in values for item in v]
            else:
                message[key] = merge_values(values)
        if self.calls:
            message["tool_calls"] = list(self.calls.values())
        out: dict[str, Any] = {"index": self.index, "message": message}
        out["finish_reason"] = self.finish_reason
        for key, values in self.choice_fields.items():
            out[key] = values[-1] if len(values) == 1 else values
        return out
