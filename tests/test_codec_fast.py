"""The decoders' fast paths decode exactly as the general path.

The codec types a Block/Part marker as a tagged union of the block classes
registered now (one msgspec pass); the event log decodes a whole event that
way.  Whatever does not fit goes through the general path (every block
through the registry hook), which alone decides results and errors.  These
tests hold the two to the same answers, on generated values and on mutated
bytes, and check that registrations made after a decoder was built count.
"""

from __future__ import annotations

import enum
import gc
import math
import uuid
from typing import Annotated, Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elelem import codec
from elelem.conversation import (
    Draft,
    MessageBody,
    decode_event,
    encode_event,
    open_store,
    register_event_kind,
)
from elelem.conversation import events as events_module
from elelem.errors import DecodeError
from elelem.vocabulary import (
    Attribution,
    Block,
    HostedActivity,
    Message,
    Part,
    ProviderPayload,
    Source,
    TextBlock,
    UnknownBlock,
    Usage,
    register_block_type,
)
from elelem.vocabulary import json as json_module
from test_properties import activities, blocks, json_values, messages, typed_values

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def outcome(decode: Any, data: bytes, typ: Any) -> tuple[str, Any]:
    try:
        return "ok", decode(data, typ)
    except DecodeError as exc:
        return "error", (exc.detail, exc.path)


# -- generated values ---------------------------------------------------------------


@SETTINGS
@given(typed_values)
def test_fast_and_general_decoders_agree_on_every_vocabulary_value(
    typed: tuple[Any, object],
) -> None:
    typ, value = typed
    data = codec.dumps(value)
    fast = codec.loads(data, typ)
    general = codec.general_loads(data, typ)
    assert fast == general == value
    assert type(fast) is type(general)
    assert codec.dumps(fast) == codec.dumps(general) == data


class Envelope(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A struct of a caller's own holding parts: renamed, keyword-only fields."""

    first_part: Part | None = None
    all_parts: tuple[Part, ...]
    inner: Message | None = None


parts = st.lists(blocks | activities, max_size=4)
forms: list[tuple[Any, Any]] = [
    (
        Envelope,
        lambda ps: Envelope(
            first_part=ps[0] if ps else None, all_parts=tuple(ps), inner=Message("user", tuple(ps))
        ),
    ),
    (list[Part], lambda ps: ps),
    (tuple[Part, ...], tuple),
    (dict[str, Part], lambda ps: {str(i): p for i, p in enumerate(ps)}),
    (Part | None, lambda ps: ps[0] if ps else None),
    (Annotated[list[Part], "why"], lambda ps: ps),
    (tuple[Message, list[Part]], lambda ps: (Message("user", tuple(ps)), ps)),
    (list[Block], lambda ps: [p for p in ps if not isinstance(p, HostedActivity)]),
]


@SETTINGS
@given(st.sampled_from(forms), parts)
def test_fast_and_general_decoders_agree_on_typing_forms_holding_blocks(
    form: tuple[Any, Any], ps: list[Any]
) -> None:
    typ, build = form
    data = codec.dumps(build(ps))
    assert outcome(codec.loads, data, typ) == outcome(codec.general_loads, data, typ)
    assert codec.dumps(codec.loads(data, typ)) == data


# -- mutated bytes: whenever the fast path answers, it answers as the general one ---


def _containers(obj: Any, out: list[Any]) -> list[Any]:
    if isinstance(obj, dict):
        out.append(obj)
        for v in obj.values():
            _containers(v, out)
    elif isinstance(obj, list):
        out.append(obj)
        for v in obj:
            _containers(v, out)
    return out


mutation_keys = st.sampled_from(
    ["type", "text", "range", "role", "state", "value", "payloads", "bogus", "attributions"]
)


@SETTINGS
@given(messages, st.data())
def test_any_mutation_of_a_message_decodes_the_same_on_both_paths(
    message: Message, data: st.DataObject
) -> None:
    doc = msgspec.json.decode(codec.dumps(message))
    for _ in range(data.draw(st.integers(1, 3))):
        target = data.draw(st.sampled_from(_containers(doc, [])))
        new = data.draw(json_values | st.sampled_from(["text", "hosted", "nope", [1, 2]]))
        if isinstance(target, dict):
            target[data.draw(mutation_keys)] = new
        elif target:
            target[data.draw(st.integers(0, len(target) - 1))] = new
    raw = msgspec.json.encode(doc)
    for typ in (Message, list[Part], Block, Part):
        fast = outcome(codec.loads, raw, typ)
        general = outcome(codec.general_loads, raw, typ)
        assert fast == general
        if fast[0] == "ok":
            assert codec.dumps(fast[1]) == codec.dumps(general[1])


# -- exact behaviours the fast path must keep ----------------------------------------

MESSAGE_ERRORS = [
    (
        b'{"role":"user","content":[{"type":"text","text":"a","bogus":1}]}',
        ("Object contains unknown field `bogus`", "$.content[0].bogus"),
    ),
    (
        b'{"role":"user","content":[{"type":"text","text":"a"},'
        b'{"type":"tool-call","id":"c","name":"n","arguments":5}]}',
        ("Expected `str`, got `int`", "$.content[1].arguments"),
    ),
    (
        b'{"role":"user","content":[{"type":"text","text":"ab",'
        b'"attributions":[{"source":{},"range":[1,9]}]}]}',
        (
            "attribution 0 range 1..9 falls outside text of length 2",
            "$.content[0].attributions[0].range",
        ),
    ),
    (
        b'{"role":"user","content":[{"type":"hosted","id":"a","name":"n","state":"weird"}]}',
        ("Invalid enum value 'weird'", "$.content[0].state"),
    ),
    (b'{"role":"robot","content":[]}', ("Invalid enum value 'robot'", "$.role")),
    (
        b'{"role":"user","content":[{"type":"text","text":"a",'
        b'"payloads":[{"provider":"p","format":""}]}]}',
        ("provider payload from 'p' needs a non-empty format", "$.content[0].payloads[0].format"),
    ),
    (
        b'{"role":"user","content":[{"type":"text","text":"a"}',
        ("malformed JSON: Input data was truncated", "$"),
    ),
]


@pytest.mark.parametrize(("data", "error"), MESSAGE_ERRORS)
def test_bad_messages_raise_the_general_paths_error(data: bytes, error: tuple[str, str]) -> None:
    assert outcome(codec.loads, data, Message) == ("error", error)
    assert outcome(codec.general_loads, data, Message) == ("error", error)


def test_a_hosted_transition_is_not_a_block_on_the_fast_path_either() -> None:
    data = b'[{"type":"hosted","id":"a","name":"n","state":"started"}]'
    assert outcome(codec.loads, data, list[Block]) == (
        "error",
        ("a hosted-activity transition is not a content block", "$[0].type"),
    )
    assert codec.loads(data, list[Part]) == [HostedActivity("a", "n", "started")]


def test_registered_blocks_skip_the_hook_and_unknown_ones_fall_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    general = codec._decode_block

    def counting(obj: Any, allow_hosted: bool) -> Any:
        calls.append(obj.get("type") if isinstance(obj, dict) else "?")
        return general(obj, allow_hosted)

    monkeypatch.setattr(codec, "_decode_block", counting)
    known = Message(
        "assistant", (TextBlock("a"), TextBlock("b"), HostedActivity("h", "n", "started"))
    )
    assert codec.loads(codec.dumps(known), Message) == known
    assert calls == []
    chart = UnknownBlock({"type": "x-chart", "points": [1, 2]})
    data = codec.dumps(Message("assistant", (TextBlock("a"), chart, TextBlock("b"))))
    assert b'{"type":"x-chart","points":[1,2]}' in data
    mixed = codec.loads(data, Message)
    # The general path decided: every part through the hook, once.
    assert calls == ["text", "x-chart", "text"]
    assert mixed.content[1] == UnknownBlock({"type": "x-chart", "points": [1, 2]}, 1)
    assert mixed.content[1].position == 1
    assert codec.dumps(mixed) == data


def test_a_block_type_registered_after_the_decoders_were_built_is_honoured(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    tag = f"test-late-{uuid.uuid4().hex[:8]}"
    late = msgspec.defstruct("LateBlock", [("n", int)], tag_field="type", tag=tag, frozen=True)
    data = (
        b'{"role":"user","content":[{"type":"text","text":"a","attributions":[],"payloads":[],'
        b'"complete":true},{"type":"' + tag.encode() + b'","n":7}],"source":"user",'
        b'"provider":null,"model":null}'
    )
    event = (
        b'{"id":"ev_1","seq":1,"at":"2026-01-01T00:00:00Z","turn":1,"response":null,'
        b'"kind":"message","body":' + data + b"}"
    )
    store = open_store(tmp_path / "late.db")
    try:
        cid = store.create().id
        store.append(cid, [Draft.of(MessageBody("user", (TextBlock("x"),), "user"))])
        store.load(cid)  # every decoder built
        before = codec.loads(data, Message)
        assert type(before.content[1]) is UnknownBlock
        assert type(decode_event(event).body.content[1]) is UnknownBlock
        assert codec.dumps(before) == data

        register_block_type(tag, late)
        # The fast decoders were rebuilt with the new class: no block takes the hook.
        hooked: list[object] = []
        monkeypatch.setattr(codec, "_decode_block", lambda obj, _: hooked.append(obj))
        after = codec.loads(data, Message)
        assert hooked == []
        assert after.content == (TextBlock("a"), late(7))
        assert codec.dumps(after) == data
        assert decode_event(event).body.content == (TextBlock("a"), late(7))
        store.append(cid, [Draft.of(MessageBody("user", (late(8),), "user"))])
        assert store.load(cid)[-1].body.content == (late(8),)
        assert hooked == []
    finally:
        store.close()


def test_an_event_kind_registered_after_the_decoders_were_built_is_honoured() -> None:
    kind = f"test-late-kind-{uuid.uuid4().hex[:8]}"
    body = msgspec.defstruct("LateBody", [("note", str)], frozen=True)
    data = (
        b'{"id":"ev_1","seq":1,"at":"2026-01-01T00:00:00Z","turn":0,"response":null,'
        b'"kind":"' + kind.encode() + b'","body":{"note":"hi"}}'
    )
    before = decode_event(data)
    assert isinstance(before.body, msgspec.Raw)
    assert bytes(before.body) == b'{"note":"hi"}'
    register_event_kind(kind, body)
    after = decode_event(data)
    assert after.body == body("hi")
    assert encode_event(after) == data == encode_event(before)
    assert events_module.decode_events([(data,)]) == [after]


def test_decode_events_agrees_with_the_general_path_row_by_row() -> None:
    good = (
        b'{"id":"ev_1","seq":1,"at":"t","turn":1,"response":null,"kind":"message",'
        b'"body":{"role":"user","content":[{"type":"text","text":"a","attributions":[],'
        b'"payloads":[],"complete":true}],"source":"user","provider":null,"model":null}}'
    )
    unknown_block = good.replace(
        b'"type":"text","text":"a","attributions":[],"payloads":[],"complete":true',
        b'"type":"x-new","a":1',
    )
    unknown_kind = good.replace(b'"kind":"message"', b'"kind":"x-future"')
    rows = [(good,), (unknown_block,), (unknown_kind,), (good,)]
    decoded = events_module.decode_events(rows)
    assert decoded == [decode_event(r[0].decode()) for r in rows]
    assert [encode_event(e) for e in decoded] == [r[0] for r in rows]
    bad = good.replace(b'"text":"a"', b'"text":5')
    with pytest.raises(DecodeError) as err:
        events_module.decode_events([(good,), (bad,)])
    assert (err.value.detail, err.value.path) == (
        "event ev_1 (message): Expected `str`, got `int`",
        "$.body.content[0].text",
    )


# -- the JSON check's fast walk ---------------------------------------------------------


class Color(enum.IntEnum):
    RED = 1


class Name(str):
    pass


odd_leaves = st.sampled_from(
    [math.nan, math.inf, -math.inf, Color.RED, Name("n"), b"x", {1, 2}, object(), 1.5, True]
)
odd_values = st.recursive(
    json_values | odd_leaves,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=3) | st.integers(0, 3), inner, max_size=3)
    ),
    max_leaves=10,
)


@SETTINGS
@given(odd_values)
def test_check_json_fast_walk_agrees_with_the_path_walk(value: object) -> None:
    assert json_module.check_json(value, "$.v") == json_module._walk(value, "$.v")


def test_check_json_reports_deep_and_cyclic_values_as_before() -> None:
    deep: Any = "leaf"
    for _ in range(100):
        deep = [deep]
    assert json_module.check_json(deep) is None
    deep_bad: Any = math.nan
    for _ in range(100):
        deep_bad = {"k": deep_bad}
    assert json_module.check_json(deep_bad) == "$" + ".k" * 100
    cycle: list[Any] = [1]
    cycle.append(cycle)
    assert json_module.check_json(cycle) == "$[1]"
    shared = [1]
    assert json_module.check_json({"a": shared, "b": shared}) is None


# -- values of the vocabulary stay out of the cycle collector ---------------------------


def test_vocabulary_values_are_not_tracked_by_the_cycle_collector() -> None:
    payload = ProviderPayload("anthropic", "signature", None, "sig")
    values = [
        TextBlock("t", (Attribution(Source("u")),), (payload,)),
        payload,
        HostedActivity("a", "web_search", "started", {"q": "x"}),
        Usage(1, 2),
        Message("user", (TextBlock("t"),)),
    ]
    assert [gc.is_tracked(v) for v in values] == [False] * len(values)


# -- a type msgspec cannot decode leaves the general path in charge ------------------


class _A(msgspec.Struct):
    a: int


class _B(msgspec.Struct):
    b: int


# msgspec builds no decoder for a union of two untagged structs.
Undecodable = _A | _B


def test_a_block_class_msgspec_cannot_put_in_a_union_leaves_the_general_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = msgspec.defstruct(
        "BrokenBlock", [("x", Undecodable)], tag_field="type", tag="test-broken", frozen=True
    )
    real = codec.block_types()
    monkeypatch.setattr(codec, "block_types", lambda: (*real, broken))
    monkeypatch.setattr(codec, "block_types_generation", lambda: -1)
    message = Message("user", (TextBlock("a"), UnknownBlock({"type": "x-new"})))
    data = codec.dumps(message)
    assert codec.loads(data, Message) == message
    assert codec._decoders[Message].fast is None
    monkeypatch.undo()
    assert codec.loads(data, Message) == message
    assert codec._decoders[Message].fast is not None


def test_an_event_kind_msgspec_cannot_decode_leaves_the_other_kinds_fast(tmp_path: Any) -> None:
    kind = f"test-opaque-{uuid.uuid4().hex[:8]}"
    register_event_kind(kind, msgspec.defstruct("OpaqueBody", [("x", Undecodable)], frozen=True))
    store = open_store(tmp_path / "opaque.db")
    try:
        cid = store.create().id
        appended = store.append(cid, [Draft.of(MessageBody("user", (TextBlock("x"),), "user"))])
        assert store.load(cid) == appended
    finally:
        store.close()
    fast = events_module._fast_events()
    assert "message" in {k for k, _ in fast.restores.values()}
    assert kind not in {k for k, _ in fast.restores.values()}
