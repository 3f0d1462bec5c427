"""Partial-object benchmark: ``python -m benchmarks.partial_json``.

What reading a typed answer as it streams costs per text delta.  The answer
is a JSON document (a list of records whose strings are the corpus's real
text), cut into deltas of the sizes each provider's recordings actually
sent (the corpus's text deltas, in order).  Three ways are timed on the
same deltas, in the same run:

- **floor**: collect the deltas and decode the whole text once at the end
  with ``msgspec.json.decode``: no partial object at all, the least any
  reader can do;
- **elelem**: :class:`elelem.outputs.PartialJSON`, fed every delta, the
  partial object current after each;
- **naive**: what code without an incremental reader does: after every
  delta, close the open brackets of the text so far and decode it all again
  (quadratic: shown for a 200-record answer only).

Output: µs per delta for each, and elelem's ratio to the floor, per shape.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import msgspec

from benchmarks.corpus import text_deltas
from benchmarks.streams import SHAPES
from elelem.outputs import PartialJSON


def document(texts: list[str], records: int) -> str:
    """A JSON answer of ``records`` records built from real text."""
    rows = [
        {"id": i, "title": texts[i % len(texts)], "score": i * 0.5, "tags": ["a", "b"]}
        for i in range(records)
    ]
    return json.dumps({"items": rows, "done": True})


def cut(text: str, sizes: list[int]) -> list[str]:
    """``text`` in pieces of the recorded delta sizes, taken in turn."""
    out, i, k = [], 0, 0
    while i < len(text):
        step = max(1, sizes[k % len(sizes)])
        out.append(text[i : i + step])
        i += step
        k += 1
    return out


def floor(pieces: list[str]) -> object:
    return msgspec.json.decode("".join(pieces))


def elelem(pieces: list[str]) -> object:
    reader = PartialJSON()
    for piece in pieces:
        reader.feed(piece)
    return reader.value


def naive(pieces: list[str]) -> object:
    seen = ""
    value: object = None
    for piece in pieces:
        seen += piece
        closing = []
        in_string = escaped = False
        for c in seen:
            if in_string:
                escaped, in_string = (False, True) if escaped else (c == "\\", c != '"')
            elif c == '"':
                in_string = True
            elif c in "{[":
                closing.append("}" if c == "{" else "]")
            elif c in "}]":
                closing.pop()
        candidate = seen + ('"' if in_string else "") + "".join(reversed(closing))
        try:
            value = msgspec.json.decode(candidate)
        except msgspec.DecodeError:
            continue  # a cut inside a number or a key: the last value stands
    return value


def per_delta(fn: Callable[[list[str]], object], pieces: list[str], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        fn(pieces)
        best = min(best, time.process_time() - start)
    return best / len(pieces) * 1e6


def main() -> None:
    print("µs per delta (best of 5); ratio to the floor")
    print(f"{'shape':<20}{'deltas':>8}{'floor':>10}{'elelem':>10}{'ratio':>8}{'naive*':>10}")
    for shape in SHAPES:
        recorded = text_deltas(shape)
        sizes = [len(d) for d in recorded]
        pieces = cut(document(recorded, 2000), sizes)
        small = cut(document(recorded, 200), sizes)
        assert elelem(pieces) == floor(pieces) and naive(small) == floor(small)
        f, e = per_delta(floor, pieces, 5), per_delta(elelem, pieces, 5)
        n = per_delta(naive, small, 1)
        print(f"{shape:<20}{len(pieces):>8}{f:>10.2f}{e:>10.2f}{e / f:>7.1f}x{n:>10.1f}")
    print("* naive: a 200-record answer (it is quadratic)")


if __name__ == "__main__":
    main()
