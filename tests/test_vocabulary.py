"""Vocabulary rules: ids, blocks, payloads, attributions, hosted activity, usage."""

from __future__ import annotations

import copy
import math
import pickle
import shutil
from pathlib import Path

import msgspec
import pytest

from elelem.errors import AttributionRangeError, DecodeError, PayloadError
from elelem.vocabulary import (
    TERMINAL_STATES,
    ActivityId,
    Attribution,
    CallId,
    CodeExecution,
    ConversationId,
    EventId,
    GenerationOptions,
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    ReasoningOptions,
    ResponseId,
    Source,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
    UnknownBlock,
    Usage,
    WebFetch,
    WebSearch,
    check_json,
)

SIG = ProviderPayload(ProviderId("anthropic"), "signature", None, "EqQBCkYIARgCKkD")

ROOT = Path(__file__).resolve().parent.parent


# -- branded ids ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("brand", "name"),
    [
        (ConversationId, "ConversationId"),
        (EventId, "EventId"),
        (ResponseId, "ResponseId"),
        (CallId, "CallId"),
        (ActivityId, "ActivityId"),
        (ProviderId, "ProviderId"),
    ],
)
def test_ids_are_newtypes_over_str_free_at_run_time(brand: object, name: str) -> None:
    assert brand.__name__ == name  # type: ignore[attr-defined]
    assert brand.__supertype__ is str  # type: ignore[attr-defined]
    value = brand("toolu_01")  # type: ignore[operator]
    assert value == "toolu_01"
    assert type(value) is str


def test_type_checker_refuses_a_bare_str_where_an_id_is_meant(tmp_path: Path) -> None:
    from mypy import api

    src = tmp_path / "brand.py"
    src.write_text(
        "from elelem.vocabulary import CallId, EventId, ToolCallBlock\n"
        "ok = ToolCallBlock(CallId('c1'), 'f', '{}')\n"
        "bad = ToolCallBlock('c1', 'f', '{}')\n"
        "wrong = ToolCallBlock(EventId('e1'), 'f', '{}')\n"
    )
    # Start from the project's own cache when `make typecheck` (run before the
    # suite) left one: a copy, so the suite never writes into the checkout.
    # Without it mypy checks elelem and its dependencies afresh (~10 s of CPU).
    cache = tmp_path / "cache"
    if (ROOT / ".mypy_cache").is_dir():
        shutil.copytree(ROOT / ".mypy_cache", cache)
    out, _err, status = api.run(
        ["--strict", "--no-error-summary", "--cache-dir", str(cache), str(src)]
    )
    lines = sorted(line.split(": ", 1)[1] for line in out.splitlines())
    assert status == 1
    assert lines == [
        'error: Argument 1 to "ToolCallBlock" has incompatible type "EventId"; '
        'expected "CallId"  [arg-type]',
        'error: Argument 1 to "ToolCallBlock" has incompatible type "str"; '
        'expected "CallId"  [arg-type]',
    ]


# -- blocks --------------------------------------------------------------------


def test_core_blocks_hold_their_fields_with_defaults() -> None:
    text = TextBlock("hi")
    assert (text.text, text.attributions, text.payloads, text.complete) == ("hi", (), (), True)
    reasoning = ReasoningBlock("", (SIG,))
    assert (reasoning.text, reasoning.payloads, reasoning.complete) == ("", (SIG,), True)
    call = ToolCallBlock(CallId("toolu_1"), "get_weather", '{"city": "Paris"}')
    assert (call.id, call.name, call.arguments, call.payloads) == (
        "toolu_1",
        "get_weather",
        '{"city": "Paris"}',
        (),
    )
    result = ToolResultBlock(CallId("toolu_1"), "22C")
    assert (result.call_id, result.content, result.is_error, result.name, result.payloads) == (
        "toolu_1",
        "22C",
        False,
        None,
        (),
    )


@pytest.mark.parametrize(
    "block",
    [
        TextBlock("hi"),
        ReasoningBlock("r"),
        ToolCallBlock(CallId("c"), "f", "{}"),
        ToolResultBlock(CallId("c"), "x"),
    ],
)
def test_blocks_are_immutable(block: object) -> None:
    field = msgspec.structs.fields(block)[0].name  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        setattr(block, field, "changed")


def test_blocks_compare_and_hash_by_value() -> None:
    a = TextBlock("hi", (Attribution(Source("https://a.example", "A"), range=(0, 2)),), (SIG,))
    b = TextBlock("hi", (Attribution(Source("https://a.example", "A"), range=(0, 2)),), (SIG,))
    assert a == b
    assert hash(a) == hash(b)
    assert a != TextBlock("hi")


def test_tool_call_input_parses_arguments() -> None:
    assert ToolCallBlock(CallId("c"), "f", '{"a": [1, 2.5, "é"]}').input == {"a": [1, 2.5, "é"]}
    assert ToolCallBlock(CallId("c"), "f", "").input == {}
    assert ToolCallBlock(CallId("c"), "f", "  \n").input == {}


def test_tool_call_input_of_broken_arguments_is_a_decode_error() -> None:
    with pytest.raises(DecodeError) as info:
        _ = ToolCallBlock(CallId("toolu_9"), "f", '{"a": ').input
    assert info.value.detail.startswith("tool call toolu_9 arguments are not JSON: ")


# -- unknown blocks ------------------------------------------------------------


def test_unknown_block_keeps_its_raw_json_and_type() -> None:
    raw = {"type": "server_tool_use", "id": "srvtoolu_1", "input": {"query": "x"}}
    block = UnknownBlock(raw)
    assert block.raw is raw
    assert block.type == "server_tool_use"
    assert block.position is None
    assert UnknownBlock(raw, position=3).position == 3


def test_unknown_block_equality_is_by_json_value_with_key_order() -> None:
    assert UnknownBlock({"type": "x", "a": 1, "b": [1]}) == UnknownBlock(
        {"type": "x", "a": 1, "b": [1]}
    )
    assert UnknownBlock({"type": "x", "a": 1, "b": 2}) != UnknownBlock(
        {"type": "x", "b": 2, "a": 1}
    )
    assert UnknownBlock({"type": "x", "a": 1}) != UnknownBlock({"type": "x", "a": True})
    # Position is where the block sits, not part of its value.
    assert UnknownBlock({"type": "x"}, 0) == UnknownBlock({"type": "x"}, 5)
    assert hash(UnknownBlock({"type": "x"}, 0)) == hash(UnknownBlock({"type": "x"}, 5))


def test_unknown_block_is_immutable_and_its_repr_hides_values() -> None:
    block = UnknownBlock({"type": "x", "secret": "sk-live-123"}, 2)
    with pytest.raises(AttributeError):
        block.raw = {}  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del block.position
    assert repr(block) == "UnknownBlock(type='x', keys=['secret', 'type'], position=2)"


def test_unknown_block_survives_pickle_and_deepcopy() -> None:
    block = UnknownBlock({"type": "x", "a": [1, {"b": 2**70}]}, 2)
    for copied in (copy.deepcopy(block), pickle.loads(pickle.dumps(block))):
        assert copied == block
        assert copied.position == 2
        assert copied.raw is not block.raw
    message = Message("assistant", (TextBlock("a"), block))
    assert pickle.loads(pickle.dumps(message)) == message


def test_unknown_block_at_moves_without_copying_raw() -> None:
    block = UnknownBlock({"type": "x"})
    moved = block.at(4)
    assert moved.position == 4
    assert moved.raw is block.raw
    assert block.position is None
    assert moved.at(4) is moved


@pytest.mark.parametrize(
    ("raw", "detail", "path"),
    [
        (["type", "x"], "an unknown block must be a JSON object", "$"),
        ({"kind": "x"}, "an unknown block needs a string 'type'", "$.type"),
        ({"type": 7}, "an unknown block needs a string 'type'", "$.type"),
        ({"type": "x", "v": math.nan}, "unknown block holds a non-JSON value", "$.v"),
        ({"type": "x", "v": [{1, 2}]}, "unknown block holds a non-JSON value", "$.v[0]"),
        (
            {"type": "text", "text": "hi"},
            "block tag 'text' is registered; it cannot be kept as an unknown block",
            "$.type",
        ),
        (
            {"type": "hosted"},
            "block tag 'hosted' is registered; it cannot be kept as an unknown block",
            "$.type",
        ),
    ],
)
def test_malformed_unknown_block_is_a_decode_error(raw: object, detail: str, path: str) -> None:
    with pytest.raises(DecodeError) as info:
        UnknownBlock(raw)  # type: ignore[arg-type]
    assert (info.value.detail, info.value.path) == (detail, path)


def test_unknown_block_position_must_be_a_non_negative_int() -> None:
    with pytest.raises(DecodeError):
        UnknownBlock({"type": "x"}, -1)


# -- provider payloads -----------------------------------------------------------


def test_payload_holds_identity_and_any_json_value() -> None:
    value = {"a": [1, 2.5, None, True, "é"], "big": 2**70, "n": {"m": []}}
    p = ProviderPayload(ProviderId("openai"), "encrypted_content", "v2", value)
    assert (p.provider, p.format, p.version, p.value) == (
        "openai",
        "encrypted_content",
        "v2",
        value,
    )
    assert p.size == len(msgspec.json.encode(value)) == 70


def test_payload_is_frozen() -> None:
    with pytest.raises(AttributeError):
        SIG.value = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        SIG.provider = ProviderId("openai")  # type: ignore[misc]


def test_payload_compares_and_hashes_by_value() -> None:
    a = ProviderPayload(ProviderId("p"), "f", "1", {"x": [1, {"y": None}]})
    b = ProviderPayload(ProviderId("p"), "f", "1", {"x": [1, {"y": None}]})
    assert a == b
    assert hash(a) == hash(b)
    assert a != ProviderPayload(ProviderId("p"), "f", "2", {"x": [1, {"y": None}]})
    assert a != ProviderPayload(ProviderId("q"), "f", "1", {"x": [1, {"y": None}]})
    assert a != ProviderPayload(ProviderId("p"), "g", "1", {"x": [1, {"y": None}]})
    # JSON values, not Python values: 1, 1.0 and true are three values.
    one = ProviderPayload(ProviderId("p"), "f", None, 1)
    assert one != ProviderPayload(ProviderId("p"), "f", None, 1.0)
    assert one != ProviderPayload(ProviderId("p"), "f", None, True)
    # An array is an array, whichever Python sequence holds it.
    assert ProviderPayload(ProviderId("p"), "f", None, (1, 2)) == ProviderPayload(
        ProviderId("p"), "f", None, [1, 2]
    )
    assert a != "not a payload"


def test_payload_repr_and_str_never_show_the_value() -> None:
    secret = {"encrypted_content": "gAAAAABo-SECRET-TOKEN"}
    p = ProviderPayload(ProviderId("openai"), "reasoning", "2025-03", secret)
    expected = "ProviderPayload(provider='openai', format='reasoning', version='2025-03', size=45)"
    assert repr(p) == expected
    assert str(p) == expected
    assert f"{p}" == expected
    assert "SECRET" not in repr(TextBlock("x", payloads=(p,)))
    assert list(p.__rich_repr__()) == [
        ("provider", "openai"),
        ("format", "reasoning"),
        ("version", "2025-03"),
        ("size", 45),
    ]


def test_payload_in_rich_pretty_output_hides_the_value() -> None:
    from rich.pretty import pretty_repr

    p = ProviderPayload(ProviderId("openai"), "reasoning", None, "SECRET-TOKEN")
    shown = pretty_repr(TextBlock("x", payloads=(p,)))
    assert "SECRET" not in shown
    assert "size=14" in shown


@pytest.mark.parametrize(
    ("kwargs", "message", "path"),
    [
        ({"format": "f", "value": 1}, "provider payload needs a non-empty provider", "$.provider"),
        (
            {"provider": "", "format": "f", "value": 1},
            "provider payload needs a non-empty provider",
            "$.provider",
        ),
        (
            {"provider": "p", "value": 1},
            "provider payload from 'p' needs a non-empty format",
            "$.format",
        ),
        ({"provider": "p", "format": "f"}, "provider payload p/f needs a value", "$.value"),
        (
            {"provider": "p", "format": "f", "version": 3, "value": 1},
            "provider payload p/f version must be a string or None",
            "$.version",
        ),
        (
            {"provider": "p", "format": "f", "value": math.nan},
            "provider payload p/f holds a non-JSON value at $.value",
            "$.value",
        ),
        (
            {"provider": "p", "format": "f", "value": {"a": [1, math.inf]}},
            "provider payload p/f holds a non-JSON value at $.value.a[1]",
            "$.value.a[1]",
        ),
        (
            {"provider": "p", "format": "f", "value": {"s": {1, 2}}},
            "provider payload p/f holds a non-JSON value at $.value.s",
            "$.value.s",
        ),
        (
            {"provider": "p", "format": "f", "value": [object()]},
            "provider payload p/f holds a non-JSON value at $.value[0]",
            "$.value[0]",
        ),
        (
            {"provider": "p", "format": "f", "value": {"ok": {7: "x"}}},
            "provider payload p/f holds a non-JSON value at $.value.ok.<key of type int>",
            "$.value.ok.<key of type int>",
        ),
        (
            {"provider": "p", "format": "f", "value": b"bytes"},
            "provider payload p/f holds a non-JSON value at $.value",
            "$.value",
        ),
    ],
)
def test_bad_payload_is_a_payload_error(kwargs: dict[str, object], message: str, path: str) -> None:
    with pytest.raises(PayloadError) as info:
        ProviderPayload(**kwargs)  # type: ignore[arg-type]
    assert (str(info.value), info.value.path) == (message, path)


def test_payload_with_a_cycle_is_a_payload_error_not_a_hang() -> None:
    loop: list[object] = [1]
    loop.append(loop)
    with pytest.raises(PayloadError) as info:
        ProviderPayload(ProviderId("p"), "f", None, {"a": loop})
    assert info.value.path == "$.value.a[1]"


def test_shared_sub_objects_are_still_json() -> None:
    shared = {"k": [1]}
    assert check_json({"a": shared, "b": [shared, shared]}) is None


@pytest.mark.parametrize(
    ("value", "path"),
    [
        (None, None),
        ("s", None),
        (2**100, None),
        (-0.0, None),
        (1.5, None),
        (math.inf, "$"),
        ((1, [2, {"x": -math.inf}]), "$[1][1].x"),
        ({"a": frozenset()}, "$.a"),
        ({("t",): 1}, "$.<key of type tuple>"),
    ],
)
def test_check_json_names_the_first_bad_part(value: object, path: str | None) -> None:
    assert check_json(value) == path


# -- attributions ----------------------------------------------------------------


def test_attribution_holds_source_excerpt_range_and_replay() -> None:
    replay = ProviderPayload(ProviderId("anthropic"), "citation", None, {"encrypted_index": "Eo8"})
    a = Attribution(Source("https://x.example/p", "X"), "quoted", (3, 9), replay)
    assert (a.source.url, a.source.title, a.excerpt, a.range, a.replay, a.complete) == (
        "https://x.example/p",
        "X",
        "quoted",
        (3, 9),
        replay,
        True,
    )
    assert Source() == Source(None, None)


@pytest.mark.parametrize("span", [(-1, 2), (4, 3), (0, -1), (1,), (0, 1, 2), [0, 1], (True, 2)])
def test_attribution_range_must_be_an_ordered_non_negative_pair(span: object) -> None:
    with pytest.raises(AttributionRangeError) as info:
        Attribution(Source(), range=span)  # type: ignore[arg-type]
    assert info.value.path == "$.range"


def test_text_block_accepts_ranges_inside_its_text_in_code_points() -> None:
    text = "héllo 👋 wörld"  # 13 code points, 18 UTF-8 bytes
    assert len(text) == 13
    block = TextBlock(
        text,
        (
            Attribution(Source("u"), range=(0, 13)),
            Attribution(Source("u"), range=(6, 7)),
            Attribution(Source("u"), range=(13, 13)),
            Attribution(Source("u")),
        ),
    )
    span = block.attributions[1].range
    assert span is not None
    assert text[span[0] : span[1]] == "👋"


@pytest.mark.parametrize(
    ("text", "span", "message"),
    [
        ("hello", (0, 6), "attribution 1 range 0..6 falls outside text of length 5"),
        ("héllo", (5, 9), "attribution 1 range 5..9 falls outside text of length 5"),
        ("", (0, 1), "attribution 1 range 0..1 falls outside text of length 0"),
    ],
)
def test_text_block_with_range_outside_its_text_is_an_attribution_range_error(
    text: str, span: tuple[int, int], message: str
) -> None:
    with pytest.raises(AttributionRangeError) as info:
        TextBlock(
            text, (Attribution(Source("u"), range=(0, 0)), Attribution(Source("u"), range=span))
        )
    assert (str(info.value), info.value.path) == (message, "$.attributions[1].range")


# -- hosted activity --------------------------------------------------------------


def test_hosted_activity_transitions_are_new_values() -> None:
    started = HostedActivity(ActivityId("srvtoolu_1"), "web_search", "started", {"query": "q"})
    assert (started.summary, started.payload, started.terminal) == ("", None, False)
    raw = ProviderPayload(
        ProviderId("anthropic"), "web_search_tool_result", "web_search_20250305", []
    )
    done = started.transition("completed", summary="10 results", payload=raw)
    assert done == HostedActivity(
        ActivityId("srvtoolu_1"), "web_search", "completed", {"query": "q"}, "10 results", raw
    )
    assert done.terminal is True
    # The earlier transition is untouched.
    assert started == HostedActivity(
        ActivityId("srvtoolu_1"), "web_search", "started", {"query": "q"}
    )
    failed = started.transition("failed", summary="max_uses_exceeded")
    assert (failed.state, failed.terminal, failed.summary, failed.payload) == (
        "failed",
        True,
        "max_uses_exceeded",
        None,
    )
    assert frozenset({"completed", "failed"}) == TERMINAL_STATES
    with pytest.raises(AttributeError):
        started.state = "completed"  # type: ignore[misc]


def test_hosted_activity_refuses_an_unknown_state_and_non_json_input() -> None:
    with pytest.raises(DecodeError) as info:
        HostedActivity(ActivityId("a"), "web_search", "running")  # type: ignore[arg-type]
    assert (info.value.detail, info.value.path) == (
        "unknown hosted activity state 'running'",
        "$.state",
    )
    with pytest.raises(DecodeError) as info:
        HostedActivity(ActivityId("a"), "web_search", "started", {"q": {1, 2}})
    assert (info.value.detail, info.value.path) == (
        "hosted activity input is not JSON",
        "$.input.q",
    )


# -- usage ---------------------------------------------------------------------------


def test_usage_counters_hosted_mapping_and_raw() -> None:
    raw = {"input_tokens": 10, "server_tool_use": {"web_search_requests": 2}}
    usage = Usage(10, 20, 3, 4, 5, {"web_search": 2, "web_fetch": 1}, raw)
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write, usage.reasoning) == (
        10,
        20,
        3,
        4,
        5,
    )
    assert usage.hosted == {"web_search": 2, "web_fetch": 1}
    assert usage.raw == raw
    assert usage.total == 42  # the five disjoint token counts: 10 + 20 + 3 + 4 + 5
    assert Usage() == Usage(0, 0, 0, 0, 0, {}, None)
    assert Usage().total == 0


def test_usage_raw_must_be_json() -> None:
    with pytest.raises(DecodeError) as info:
        Usage(raw={"x": math.nan})
    assert info.value.path == "$.raw.x"


# -- messages -------------------------------------------------------------------------


def test_message_constructors_and_text() -> None:
    assert Message.user("hi") == Message("user", (TextBlock("hi"),), "user")
    assert Message.system("be brief") == Message("system", (TextBlock("be brief"),), "system")
    ctx = Message.context("note", "reminder")
    assert (ctx.role, ctx.source, ctx.text) == ("user", "context:reminder", "note")
    message = Message(
        "assistant",
        (TextBlock("a"), ReasoningBlock("r"), TextBlock("b")),
        "assistant",
        ProviderId("anthropic"),
        "claude-x",
    )
    assert message.text == "ab"


def test_message_places_unknown_blocks_at_their_position() -> None:
    unknown = UnknownBlock({"type": "server_tool_use"})
    message = Message("assistant", [TextBlock("a"), unknown, TextBlock("b")])  # type: ignore[arg-type]
    assert type(message.content) is tuple
    assert message.content[1] == unknown
    assert message.content[1].position == 1  # type: ignore[union-attr]
    assert unknown.position is None


def test_message_refuses_an_unknown_role() -> None:
    with pytest.raises(DecodeError) as info:
        Message("tool", ())  # type: ignore[arg-type]
    assert (info.value.detail, info.value.path) == ("unknown message role 'tool'", "$.role")


# -- request surface -------------------------------------------------------------------


def test_request_surface_defaults() -> None:
    assert ToolSpec("f").parameters == {"type": "object", "properties": {}}
    assert WebSearch() == WebSearch(None, (), (), None, None)
    assert WebFetch().citations is False
    assert CodeExecution().version is None
    assert GenerationOptions().extra == {}
    assert ReasoningOptions(budget_tokens=1024).effort is None


def test_request_surface_json_fields_must_be_json() -> None:
    with pytest.raises(DecodeError) as info:
        ToolSpec("f", "", {"type": "object", "default": math.nan})
    assert (info.value.detail, info.value.path) == (
        "tool 'f' parameters is not JSON",
        "$.parameters.default",
    )
    with pytest.raises(DecodeError) as info:
        GenerationOptions(extra={"seed": {1}})
    assert (info.value.detail, info.value.path) == (
        "generation option extra is not JSON",
        "$.extra.seed",
    )


def test_values_of_other_types_are_not_equal() -> None:
    assert (SIG == "EqQBCkYIARgCKkD") is False
    assert (UnknownBlock({"type": "x"}) == {"type": "x"}) is False
