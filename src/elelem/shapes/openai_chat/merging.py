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
