"""The Responses parser builds streamed text in linear time, and its typed
fast path for ``response.output_text.delta`` gives exactly what the dict path gives.

Linearity is checked without a clock: each delta is a ``str`` subclass that
counts the characters copied by any ``+`` it takes part in.  ``text += delta``
on an attribute calls the subclass's ``__radd__`` first (a right operand of a
subclass type wins), so a parser that rebuilds its text per delta copies
about n²/2 characters, and one that keeps pieces copies none.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from elelem.errors import MalformedStreamError
from elelem.shapes.openai_responses import SHAPE
from elelem.stream import Assembler, BlockStart, Chunk, TextDelta
from elelem.vocabulary import ProviderId, ReasoningBlock, TextBlock, ToolCallBlock

OPENAI = ProviderId("openai")
N = 20_000


class _Copies:
    chars = 0
    concatenations = 0


class _Counted(str):
    """A delta that counts what every concatenation involving it copies."""

    def __add__(self, other: str) -> str:
        _Copies.chars += len(self) + len(other)
        _Copies.concatenations += 1
        return str.__add__(self, other)

    def __radd__(self, other: str) -> str:
        _Copies.chars += len(other) + len(self)
        _Copies.concatenations += 1
        return str.__add__(other, self)


@pytest.fixture(autouse=True)
def _reset_copies() -> None:
    _Copies.chars = _Copies.concatenations = 0


def _response(status: str, output: list[Any]) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "model": "m", "status": status, "output": output}


def _feed(events: list[dict[str, Any]]) -> list[Chunk]:
    # The dict path (``event``): the counted deltas reach the parser as they are.
    parser = SHAPE.new_parser(OPENAI)
    chunks: list[Chunk] = []
    for event in events:
        chunks += parser.event(event)  # type: ignore[attr-defined]
    return chunks


def _assembled(chunks: list[Chunk]) -> Any:
    assembler = Assembler(OPENAI)
    assembler.feed_all(chunks)
    return assembler.result()


def _one_item(added: dict[str, Any], done: dict[str, Any], deltas: list[dict[str, Any]]) -> Any:
    """The assembled response of one item streamed by ``deltas``, checked to
    have copied nothing while accumulating them."""
    events = [
        {"type": "response.created", "response": _response("in_progress", [])},
        {"type": "response.output_item.added", "output_index": 0, "item": added},
        *deltas,
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {"type": "response.completed", "response": _response("completed", [done])},
    ]
    result = _assembled(_feed(events))
    assert (_Copies.concatenations, _Copies.chars) == (0, 0)
    return result


def _deltas(prefix: str) -> list[str]:
    return [_Counted(f"{prefix}{i:05d} ") for i in range(N)]


def test_text_and_refusal_deltas_are_never_concatenated() -> None:
    text = _deltas("t")
    refusal = _deltas("r")
    final_text, final_refusal = "".join(text), "".join(refusal)
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [
            {"type": "output_text", "text": final_text, "annotations": []},
            {"type": "refusal", "refusal": final_refusal},
        ],
    }
    base = {"item_id": "msg_1", "output_index": 0}
    deltas = [
        *(
            {"type": "response.output_text.delta", **base, "content_index": 0, "delta": d}
            for d in text
        ),
        *(
            {"type": "response.refusal.delta", **base, "content_index": 1, "delta": d}
            for d in refusal
        ),
    ]
    result = _one_item({**message, "content": []}, message, deltas)
    assert [b.text for b in result.blocks if isinstance(b, TextBlock)] == [
        final_text,
        final_refusal,
    ]
    assert len(final_text) == 7 * N


def test_reasoning_deltas_are_never_concatenated() -> None:
    summary, raw = _deltas("s")[: N // 2], _deltas("c")[N // 2 :]
    item = {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "".join(summary)}],
        "content": [{"type": "reasoning_text", "text": "".join(raw)}],
    }
    base = {"item_id": "rs_1", "output_index": 0}
    deltas = [
        *(
            {"type": "response.reasoning_summary_text.delta", **base, "summary_index": 0}
            | {"delta": d}
            for d in summary
        ),
        *(
            {"type": "response.reasoning_text.delta", **base, "content_index": 0, "delta": d}
            for d in raw
        ),
    ]
    result = _one_item({**item, "summary": [], "content": []}, item, deltas)
    (block,) = result.blocks
    assert isinstance(block, ReasoningBlock)
    assert block.text == "".join(summary) + "\n\n" + "".join(raw)


def test_function_call_argument_deltas_are_never_concatenated() -> None:
    pieces = [_Counted('{"a":"'), *_deltas("x"), _Counted('"}')]
    call = {
        "id": "fc_1",
        "type": "function_call",
        "call_id": "call_1",
        "name": "f",
        "arguments": "".join(pieces),
        "status": "completed",
    }
    base = {"item_id": "fc_1", "output_index": 0}
    deltas = [
        {"type": "response.function_call_arguments.delta", **base, "delta": d} for d in pieces
    ]
    result = _one_item({**call, "arguments": ""}, call, deltas)
    (block,) = result.blocks
    assert isinstance(block, ToolCallBlock) and block.arguments == call["arguments"]


def test_the_counter_catches_attribute_accumulation() -> None:
    # What the parser used to do: the instrument sees its quadratic copying.
    class Holder:
        text = ""

    holder = Holder()
    for delta in _deltas("t")[:1000]:
        holder.text += delta
    assert _Copies.concatenations == 1000
    assert _Copies.chars == 7 * 1000 * 1001 // 2


# -- the typed fast path ------------------------------------------------------------


def _frames(events: list[dict[str, Any]], *, named: bool) -> list[Chunk] | str:
    """Chunks of the stream fed as SSE frames; named frames take the fast path
    for text deltas, unnamed ones the dict path.  An error gives its message."""
    parser = SHAPE.new_parser(OPENAI)
    chunks: list[Chunk] = []
    try:
        for event in events:
            chunks += parser.message(event["type"] if named else "", json.dumps(event))
    except MalformedStreamError as exc:
        return str(exc)
    return chunks


def _message(mid: str, text: str) -> dict[str, Any]:
    return {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _delta(delta: Any, **where: Any) -> dict[str, Any]:
    return {"type": "response.output_text.delta", **where, "delta": delta, "logprobs": []}


def _added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "response.output_item.added",
        "output_index": index,
        "item": {**item, "content": []},
    }


def _done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def test_fast_path_switches_parts_and_items_like_the_dict_path() -> None:
    one, two = _message("msg_1", "abcd"), _message("msg_2", "xyz")
    two["content"].append({"type": "output_text", "text": "Q", "annotations": []})
    events = [
        {"type": "response.created", "response": _response("in_progress", [])},
        _added(0, one),
        _delta("ab", item_id="msg_1", output_index=0, content_index=0),
        _delta("", item_id="msg_1", output_index=0, content_index=0),
        _delta("c", item_id="msg_1", content_index=0),  # found by id alone
        _delta("", item_id="msg_1", output_index=7.0, content_index=0),  # not an int: by id
        _added(1, two),
        _delta("x", item_id="msg_2", output_index=1, content_index=0),
        _delta("Q", item_id="msg_2", output_index=1, content_index=1),
        _delta("y", item_id="msg_2", output_index=1, content_index=0),
        _done(0, one),
        _done(1, two),
        {"type": "response.completed", "response": _response("completed", [one, two])},
    ]
    fast, slow = _frames(events, named=True), _frames(events, named=False)
    assert fast == slow
    assert isinstance(fast, list)
    assert [(c.index, c.text) for c in fast if isinstance(c, TextDelta)] == [
        ("0.0", "ab"),
        ("0.0", "c"),
        ("1.0", "x"),
        ("1.1", "Q"),
        ("1.0", "y"),
        ("0.0", "d"),
        ("1.0", "z"),
    ]
    texts = [b.text for b in _assembled(fast).blocks if isinstance(b, TextBlock)]
    assert texts == ["abcd", "xyz", "Q"]


def test_fast_path_follows_an_item_replaced_at_the_same_index() -> None:
    # An index reused after its item is done names a new item: a delta cached
    # for the old one must not land there.
    one, two = _message("msg_1", "a"), _message("msg_2", "b")
    events = [
        {"type": "response.created", "response": _response("in_progress", [])},
        _added(0, one),
        _delta("a", output_index=0, content_index=0),
        _done(0, one),
        _added(0, two),
        _delta("b", output_index=0, content_index=0),
        _done(0, two),
        {"type": "response.completed", "response": _response("completed", [one, two])},
    ]
    fast = _frames(events, named=True)
    assert fast == _frames(events, named=False)
    assert isinstance(fast, list)
    texts = [b.text for b in _assembled(fast).blocks if isinstance(b, TextBlock)]
    assert texts == ["a", "b"]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (
            _delta(7, item_id="msg_1", output_index=0, content_index=0),
            "OpenAI Responses stream: response.output_text.delta without a string delta",
        ),
        (
            _delta("x", item_id="msg_1", output_index=0),
            "OpenAI Responses stream: response.output_text.delta without a content_index",
        ),
        (
            _delta("x", item_id="msg_9", output_index=4, content_index=0),
            "OpenAI Responses stream: response.output_text.delta for output item 4"
            " ('msg_9') that was never added",
        ),
    ],
)
def test_fast_path_errors_are_the_dict_path_errors(bad: dict[str, Any], message: str) -> None:
    events = [
        {"type": "response.created", "response": _response("in_progress", [])},
        _added(0, _message("msg_1", "ok")),
        _delta("o", item_id="msg_1", output_index=0, content_index=0),
        bad,
    ]
    assert _frames(events, named=True) == _frames(events, named=False) == message


def test_a_frame_named_as_a_text_delta_but_typed_otherwise_takes_its_type() -> None:
    events = [
        {"type": "response.created", "response": _response("in_progress", [])},
        _added(0, _message("msg_1", "ok")),
    ]
    parser = SHAPE.new_parser(OPENAI)
    for event in events:
        parser.message(event["type"], json.dumps(event))
    refusal = {**_delta("no", item_id="msg_1", output_index=0, content_index=0)}
    refusal["type"] = "response.refusal.delta"
    chunks = parser.message("response.output_text.delta", json.dumps(refusal))
    assert chunks == [BlockStart("0.0", "text"), TextDelta("0.0", "no")]
    assert parser._items[0].parts[0].kind == "refusal"  # type: ignore[attr-defined]


def test_deltas_without_an_event_name_take_the_fast_path_too() -> None:
    # Some servers (and recorded chunk files) send no ``event:`` lines: the
    # JSON's type decides, on the fast path as on the dict path.
    from elelem.shapes.openai_responses.parser import ResponsesParser
    from fast_paths import compare

    one = _message("msg_1", "abcd")
    events = [
        {"type": "response.created", "response": _response("in_progress", [])},
        _added(0, one),
        *[_delta(c, item_id="msg_1", output_index=0, content_index=0) for c in "abcd"],
        _done(0, one),
        {"type": "response.completed", "response": _response("completed", [one])},
    ]
    frames = [("", json.dumps(e)) for e in events]
    _, hits = compare(ResponsesParser, ProviderId("openai"), frames)
    assert hits == 4
    named = [(e["type"], json.dumps(e)) for e in events]
    assert compare(ResponsesParser, ProviderId("openai"), named)[1] == 4
    mislabelled = [("response.output_text.delta", json.dumps(events[0]))]
    assert compare(ResponsesParser, ProviderId("openai"), mislabelled)[1] == 0
