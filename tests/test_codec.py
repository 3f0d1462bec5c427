"""The canonical JSON codec: exact bytes, round trips, and decode errors with paths."""

from __future__ import annotations

from typing import Any

import pytest

from elelem.codec import dumps, from_builtins, loads, to_builtins
from elelem.errors import DecodeError
from elelem.stream import AssembledResponse, Finish
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    Block,
    CallId,
    CodeExecution,
    Drop,
    GenerationOptions,
    HostedActivity,
    HostedTool,
    Message,
    Part,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    ReasoningOptions,
    Source,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
    UnknownBlock,
    Usage,
    UserLocation,
    WebFetch,
    WebSearch,
)

SIG = ProviderPayload(ProviderId("anthropic"), "signature", None, "c2ln")

CANONICAL: list[tuple[object, Any, bytes]] = [
    (
        TextBlock("hé", (Attribution(Source("https://a.example", "A"), "q", (0, 2)),), (SIG,)),
        Block,
        b'{"type":"text","text":"h\xc3\xa9","attributions":[{"source":{"url":"https://a.example",'
        b'"title":"A"},"excerpt":"q","range":[0,2],"replay":null,"complete":true}],"payloads":'
        b'[{"provider":"anthropic","format":"signature","version":null,"value":"c2ln"}],'
        b'"complete":true}',
    ),
    (
        ReasoningBlock("", (SIG,), complete=False),
        Block,
        b'{"type":"reasoning","text":"","payloads":[{"provider":"anthropic","format":"signature",'
        b'"version":null,"value":"c2ln"}],"complete":false}',
    ),
    (
        ToolCallBlock(CallId("toolu_1"), "f", '{"a":1}'),
        Block,
        b'{"type":"tool-call","id":"toolu_1","name":"f","arguments":"{\\"a\\":1}","payloads":[]}',
    ),
    (
        ToolResultBlock(CallId("toolu_1"), "ok", True, "f"),
        Block,
        b'{"type":"tool-result","call_id":"toolu_1","content":"ok","is_error":true,"name":"f",'
        b'"payloads":[]}',
    ),
    (
        UnknownBlock({"type": "server_tool_use", "z": 1, "a": [2**80, -(2**65), 1.5, None]}),
        Block,
        b'{"type":"server_tool_use","z":1,"a":[1208925819614629174706176,-36893488147419103232,'
        b"1.5,null]}",
    ),
    (
        HostedActivity(ActivityId("ws_1"), "web_search", "completed", {"query": "q"}, "3 results"),
        HostedActivity,
        b'{"type":"hosted","id":"ws_1","name":"web_search","state":"completed","input":'
        b'{"query":"q"},"summary":"3 results","payload":null}',
    ),
    (
        Usage(1, 2, 3, 4, 5, {"web_search": 1}, {"x": 1}),
        Usage,
        b'{"input":1,"output":2,"cache_read":3,"cache_write":4,"reasoning":5,'
        b'"hosted":{"web_search":1},"raw":{"x":1}}',
    ),
    (
        ProviderPayload(ProviderId("openai"), "item", "v1", {"b": {"c": [True, False]}, "a": "ü"}),
        ProviderPayload,
        b'{"provider":"openai","format":"item","version":"v1","value":{"b":{"c":[true,false]},'
        b'"a":"\xc3\xbc"}}',
    ),
    (
        Message("user", (TextBlock("hi"),), "user"),
        Message,
        b'{"role":"user","content":[{"type":"text","text":"hi","attributions":[],"payloads":[],'
        b'"complete":true}],"source":"user","provider":null,"model":null}',
    ),
    (
        ToolSpec("f", "does f", {"type": "object"}),
        ToolSpec,
        b'{"name":"f","description":"does f","parameters":{"type":"object"},"native":{}}',
    ),
    (
        WebSearch(3, ("a.example",), (), UserLocation(city="Paris")),
        HostedTool,
        b'{"type":"web_search","max_uses":3,"allowed_domains":["a.example"],"blocked_domains":[],'
        b'"user_location":{"city":"Paris","region":null,"country":null,"timezone":null},'
        b'"version":null}',
    ),
    (
        WebFetch(citations=True),
        HostedTool,
        b'{"type":"web_fetch","max_uses":null,"allowed_domains":[],"blocked_domains":[],'
        b'"citations":true,"max_content_tokens":null,"version":null}',
    ),
    (
        CodeExecution("code_execution_20250522"),
        HostedTool,
        b'{"type":"code_execution","version":"code_execution_20250522"}',
    ),
    (
        GenerationOptions(100, 0.5, None, ("END",), ReasoningOptions("high"), None, {"seed": 1}),
        GenerationOptions,
        b'{"max_tokens":100,"temperature":0.5,"top_p":null,"stop":["END"],"reasoning":'
        b'{"effort":"high","budget_tokens":null},"tool_choice":null,"extra":{"seed":1},'
        b'"cache":null,"output":null,"seed":null,"context_editing":null}',
    ),
]


@pytest.mark.parametrize(("value", "typ", "data"), CANONICAL)
def test_dumps_gives_the_canonical_bytes_and_loads_reverses_it(
    value: object, typ: Any, data: bytes
) -> None:
    assert dumps(value) == data
    back = loads(data, typ)
    assert back == value
    assert type(back) is type(value)
    assert dumps(back) == data
    assert loads(data.decode(), typ) == value


@pytest.mark.parametrize(("value", "typ", "data"), CANONICAL)
def test_to_and_from_builtins_agree_with_the_bytes(value: object, typ: Any, data: bytes) -> None:
    plain = to_builtins(value)
    assert from_builtins(plain, typ) == value
    assert dumps(plain) == data


def test_unknown_block_reencodes_byte_identical_inside_a_message() -> None:
    data = (
        b'{"role":"assistant","content":[{"type":"text","text":"a","attributions":[],'
        b'"payloads":[],"complete":true},{"type":"web_search_tool_result","tool_use_id":"s1",'
        b'"content":[{"type":"web_search_result","url":"https://x","encrypted_content":"Eq=="}],'
        b'"n":-12345678901234567890123,"f":0.1,"t":"\xe2\x9c\x93"},{"type":"hosted","id":"s1",'
        b'"name":"web_search","state":"started","input":null,"summary":"","payload":null}],'
        b'"source":"assistant","provider":"anthropic","model":"m"}'
    )
    message = loads(data, Message)
    unknown = message.content[1]
    assert isinstance(unknown, UnknownBlock)
    assert unknown.type == "web_search_tool_result"
    assert unknown.position == 1
    assert unknown.raw["n"] == -12345678901234567890123
    assert isinstance(message.content[2], HostedActivity)
    assert dumps(message) == data


def test_parts_decode_hosted_transitions_and_blocks_in_order() -> None:
    data = b'[{"type":"hosted","id":"a","name":"n","state":"failed","input":null,"summary":"","payload":null},{"type":"mystery"}]'
    parts = loads(data, list[Part])
    assert parts == [
        HostedActivity(ActivityId("a"), "n", "failed"),
        UnknownBlock({"type": "mystery"}),
    ]
    assert dumps(parts) == data


def test_a_hosted_transition_is_not_a_block() -> None:
    with pytest.raises(DecodeError) as info:
        loads(b'[{"type":"hosted","id":"a","name":"n","state":"started"}]', list[Block])
    assert (info.value.detail, info.value.path) == (
        "a hosted-activity transition is not a content block",
        "$[0].type",
    )


def test_assembled_response_round_trips() -> None:
    response = AssembledResponse(
        ProviderId("anthropic"),
        "msg_1",
        "claude",
        (TextBlock("x"), UnknownBlock({"type": "odd"}, 1)),
        Usage(1, 2),
        Finish("stop", "end_turn", None, (SIG,)),
        True,
        (Drop("response.block[1]", "payload", "cut-off", "1 of a partial text block"),),
    )
    data = dumps(response)
    assert loads(data, AssembledResponse) == response
    assert dumps(loads(data, AssembledResponse)) == data


@pytest.mark.parametrize(
    ("data", "typ", "detail", "path"),
    [
        (
            b'{"role":"assistant","content":[{"type":"text","text":"t","attributions":[{"source":'
            b'{"url":5,"title":null}}]}]}',
            Message,
            "Expected `str | null`, got `int`",
            "$.content[0].attributions[0].source.url",
        ),
        (
            b'{"role":"assistant","content":[{"type":"text","text":"hi","attributions":[{"source":'
            b'{},"range":[0,3]}]}]}',
            Message,
            "attribution 0 range 0..3 falls outside text of length 2",
            "$.content[0].attributions[0].range",
        ),
        (
            b'{"role":"assistant","content":[{"type":"text","text":"hi","attributions":[{"source":'
            b'{},"range":[2,1]}]}]}',
            Message,
            "attribution range must be two integers 0 <= start <= end, got (2, 1)",
            "$.content[0].attributions[0].range",
        ),
        (
            b'{"role":"assistant","content":[{"type":"reasoning","text":"r","payloads":[{"provider":'
            b'"anthropic","version":null,"value":"s"}]}]}',
            Message,
            "provider payload from 'anthropic' needs a non-empty format",
            "$.content[0].payloads[0].format",
        ),
        (
            b'{"role":"assistant","content":[{"type":"reasoning","text":"r","payloads":[{"provider":'
            b'"anthropic","format":"signature","version":null}]}]}',
            Message,
            "provider payload anthropic/signature needs a value",
            "$.content[0].payloads[0].value",
        ),
        (
            b'{"role":"user","content":[{"type":"tool-call","id":"c","name":"f"}]}',
            Message,
            "Object missing required field `arguments`",
            "$.content[0].arguments",
        ),
        (
            b'{"role":"user","content":[{"type":"text","text":"x","colour":"red"}]}',
            Message,
            "Object contains unknown field `colour`",
            "$.content[0].colour",
        ),
        (
            b'{"role":"user","content":[{"type":"text","text":"x"},{"type":"hosted","id":"a",'
            b'"name":"w","state":"running"}]}',
            Message,
            "Invalid enum value 'running'",
            "$.content[1].state",
        ),
        (
            b'{"role":"user","content":[{"text":"x"}]}',
            Message,
            "a block needs a string 'type'",
            "$.content[0].type",
        ),
        (
            b'{"role":"user","content":[7]}',
            Message,
            "expected a block object, got int",
            "$.content[0]",
        ),
        (b'{"role":"robot","content":[]}', Message, "Invalid enum value 'robot'", "$.role"),
        (
            b'{"input":"many"}',
            Usage,
            "Expected `int`, got `str`",
            "$.input",
        ),
    ],
)
def test_malformed_known_value_is_a_decode_error_naming_the_path(
    data: bytes, typ: Any, detail: str, path: str
) -> None:
    with pytest.raises(DecodeError) as info:
        loads(data, typ)
    assert (info.value.detail, info.value.path) == (detail, path)
    assert str(info.value) == f"{detail} (at {path})"


def test_malformed_json_is_a_decode_error() -> None:
    with pytest.raises(DecodeError) as info:
        loads(b'{"role": "user", "content": [', Message)
    assert info.value.path == "$"
    assert info.value.detail.startswith("malformed JSON: ")


def test_from_builtins_names_the_path_too() -> None:
    with pytest.raises(DecodeError) as info:
        from_builtins({"role": "user", "content": [{"type": "text", "text": 3}]}, Message)
    assert (info.value.detail, info.value.path) == (
        "Expected `str`, got `int`",
        "$.content[0].text",
    )


def test_dumps_refuses_what_is_not_vocabulary() -> None:
    with pytest.raises(TypeError, match="elelem's codec cannot encode a object"):
        dumps({"x": object()})


def test_loads_an_unknown_block_directly() -> None:
    block = loads(b'{"type":"x","a":[1,2]}', UnknownBlock)
    assert block == UnknownBlock({"type": "x", "a": [1, 2]})
    with pytest.raises(DecodeError) as info:
        loads(b'{"type":"text","text":"t"}', UnknownBlock)
    assert info.value.path == "$.type"


def test_loads_refuses_a_type_that_is_not_vocabulary() -> None:
    class Opaque:
        pass

    with pytest.raises(NotImplementedError, match="elelem's codec cannot decode"):
        loads(b"1", Opaque)


def test_decoded_assembled_response_places_its_unknown_blocks() -> None:
    data = dumps(
        AssembledResponse(
            None, None, None, (TextBlock("x"), UnknownBlock({"type": "odd"})), None, None, True
        )
    )
    response = loads(data, AssembledResponse)
    assert response.content[1].position == 1  # type: ignore[union-attr]
