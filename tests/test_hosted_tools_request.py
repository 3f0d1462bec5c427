"""The hosted-tool request surface: RemoteMCP, FileSearch, ImageGeneration on
every wire (or a drop line / a typed error), and options.extra merging."""

from __future__ import annotations

import pytest

from elelem.errors import DecodeError, UnsupportedError
from elelem.shapes.anthropic_messages import encoder as anthropic
from elelem.shapes.bedrock_converse import encoder as bedrock
from elelem.shapes.gemini import encoder as gemini
from elelem.shapes.ollama_native import encoder as ollama
from elelem.shapes.openai_chat import encoder as chat
from elelem.shapes.openai_responses import encoder as responses
from elelem.vocabulary import (
    FileSearch,
    GenerationOptions,
    HostedTool,
    ImageGeneration,
    Message,
    ProviderId,
    RemoteMCP,
    ToolSpec,
)
from elelem.vocabulary.drop import UNSUPPORTED, Drop
from elelem.wire import ModelRequest

TOKEN = "sk-mcp-SECRET-7f3a"
SERVER = RemoteMCP(
    "https://mcp.example.com/mcp",
    "wiki",
    allowed_tools=("ask_question",),
    authorization=TOKEN,
    require_approval="always",
)


def request(*hosted: HostedTool, extra: dict | None = None, tools=()) -> ModelRequest:  # type: ignore[no-untyped-def, type-arg]
    return ModelRequest(
        "m-1",
        (Message.user("hi"),),
        tools=tuple(tools),
        hosted_tools=hosted,
        options=GenerationOptions(extra=extra or {}),
    )


def test_anthropic_mcp_connector_request() -> None:
    encoded = anthropic.encode_request(request(SERVER), provider=ProviderId("anthropic"))
    assert encoded.body["mcp_servers"] == [
        {
            "type": "url",
            "url": "https://mcp.example.com/mcp",
            "name": "wiki",
            "authorization_token": TOKEN,
            "tool_configuration": {"enabled": True, "allowed_tools": ["ask_question"]},
        }
    ]
    assert "tools" not in encoded.body
    assert encoded.headers["anthropic-beta"] == "mcp-client-2025-04-04"
    assert encoded.dropped == (
        Drop(
            "hosted_tools[0].require_approval",
            "require_approval",
            UNSUPPORTED,
            "'wiki': Anthropic's MCP connector calls tools without asking",
        ),
    )
    assert TOKEN not in repr(encoded.dropped)


def test_responses_mcp_file_search_and_image_generation_tools() -> None:
    search = FileSearch(
        ("vs_1", "vs_2"), max_results=4, filters={"type": "eq", "key": "k", "value": 1}
    )
    image = ImageGeneration(size="1024x1024", output_format="png", options={"moderation": "low"})
    encoded = responses.encode_request(
        request(SERVER, search, image), provider=ProviderId("openai")
    )
    assert encoded.body["tools"] == [
        {
            "type": "mcp",
            "server_label": "wiki",
            "server_url": "https://mcp.example.com/mcp",
            "allowed_tools": ["ask_question"],
            "authorization": TOKEN,
            "require_approval": "always",
        },
        {
            "type": "file_search",
            "vector_store_ids": ["vs_1", "vs_2"],
            "max_num_results": 4,
            "filters": {"type": "eq", "key": "k", "value": 1},
        },
        {
            "type": "image_generation",
            "size": "1024x1024",
            "output_format": "png",
            "moderation": "low",
        },
    ]
    assert encoded.dropped == ()


def test_image_generation_options_never_override_named_fields() -> None:
    with pytest.raises(UnsupportedError, match=r"ImageGeneration.options\['size'\]"):
        responses.encode_request(
            request(ImageGeneration(options={"size": "x"})), provider=ProviderId("openai")
        )


def test_gemini_file_search_and_what_it_cannot_take() -> None:
    encoded = gemini.encode_request(
        request(FileSearch(("fileSearchStores/a",), max_results=3, filters="year > 2020"), SERVER),
        provider=ProviderId("gemini"),
    )
    assert encoded.body["tools"] == [
        {
            "fileSearch": {
                "fileSearchStoreNames": ["fileSearchStores/a"],
                "topK": 3,
                "metadataFilter": "year > 2020",
            }
        }
    ]
    assert encoded.dropped == (
        Drop(
            "hosted_tools[1]", "remote_mcp", UNSUPPORTED, "'wiki': Gemini has no hosted remote_mcp"
        ),
    )
    odd = gemini.encode_request(
        request(FileSearch(("s",), filters={"a": 1}), ImageGeneration()),
        provider=ProviderId("gemini"),
    )
    assert odd.dropped == (
        Drop(
            "hosted_tools[0].filters",
            "filters",
            UNSUPPORTED,
            "fileSearch takes a metadataFilter string",
        ),
        Drop(
            "hosted_tools[1]",
            "image_generation",
            UNSUPPORTED,
            "Gemini has no hosted image_generation",
        ),
    )


@pytest.mark.parametrize(
    ("encode", "wire"),
    [
        (lambda r: chat.encode_request(r, provider=ProviderId("deepseek")), "Chat Completions"),
        (lambda r: bedrock.encode_request(r, provider=ProviderId("bedrock")), "Bedrock Converse"),
        (lambda r: ollama.encode_request(r, provider=ProviderId("ollama")), "Ollama's /api/chat"),
    ],
)
def test_remote_mcp_elsewhere_is_a_drop_record_without_the_token(encode, wire) -> None:  # type: ignore[no-untyped-def]
    encoded = encode(request(SERVER))
    assert encoded.dropped == (
        Drop(
            "hosted_tools[0]", "remote_mcp", UNSUPPORTED, f"'wiki': {wire} has no hosted remote_mcp"
        ),
    )
    assert TOKEN not in repr(encoded.body) and TOKEN not in repr(encoded.dropped)


def test_the_authorization_is_in_no_repr() -> None:
    assert TOKEN not in repr(SERVER) and TOKEN not in str(SERVER)
    assert "authorization=<set>" in repr(SERVER)
    assert TOKEN not in repr(request(SERVER))


def test_bad_hosted_tool_values_are_typed_errors() -> None:
    with pytest.raises(DecodeError, match="at least one store"):
        FileSearch(())
    with pytest.raises(DecodeError, match="must be http"):
        RemoteMCP("ftp://x", "n")


TOOL = ToolSpec("f", "d", {"type": "object", "properties": {}})


def test_extra_extends_the_lists_elelem_built_and_replaces_the_rest() -> None:
    mine = {"type": "function", "name": "own", "parameters": {}}
    encoded = responses.encode_request(
        request(
            tools=[TOOL],
            extra={"tools": [mine], "include": ["x.y"], "store": True, "top_logprobs": 2},
        ),
        provider=ProviderId("openai"),
    )
    assert [t["name"] for t in encoded.body["tools"]] == ["f", "own"]  # type: ignore[index, union-attr]
    assert encoded.body["include"] == ["reasoning.encrypted_content", "x.y"]
    assert encoded.body["store"] is True and encoded.body["top_logprobs"] == 2
    ant = anthropic.encode_request(
        request(tools=[TOOL], extra={"tools": [mine]}), provider=ProviderId("anthropic")
    )
    assert [t["name"] for t in ant.body["tools"]] == ["f", "own"]  # type: ignore[index, union-attr]


@pytest.mark.parametrize(
    "encode",
    [
        lambda r: anthropic.encode_request(r, provider=ProviderId("anthropic")),
        lambda r: responses.encode_request(r, provider=ProviderId("openai")),
        lambda r: chat.encode_request(r, provider=ProviderId("deepseek")),
        lambda r: gemini.encode_request(r, provider=ProviderId("gemini")),
        lambda r: bedrock.encode_request(r, provider=ProviderId("bedrock")),
        lambda r: ollama.encode_request(r, provider=ProviderId("ollama")),
    ],
)
def test_extra_that_would_replace_a_built_list_is_an_error_naming_the_field(encode) -> None:  # type: ignore[no-untyped-def]
    built = encode(request(tools=[TOOL]))
    field = next(k for k, v in built.body.items() if isinstance(v, list) and k != "stop")
    with pytest.raises(
        UnsupportedError,
        match=rf"options.extra\[{field!r}\] is a dict, but elelem built {field!r} as a list",
    ):
        encode(request(tools=[TOOL], extra={field: {"replaced": True}}))


def test_an_error_echoing_the_mcp_token_is_redacted(tmp_path: object) -> None:
    import asyncio

    from elelem import Client
    from elelem.errors import StreamError
    from elelem.testing.servers import LoopbackServer, status

    echo = (
        '{"type":"error","error":{"type":"invalid_request_error","message":"bad token '
        + TOKEN
        + '"}}'
    )
    with LoopbackServer([status(400, echo.encode())]) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-k",
               "ELELEM_CONFIG": "/nonexistent/elelem.toml"}  # fmt: skip

        async def main() -> StreamError:
            async with Client(env=env) as client:
                stream = client.stream("anthropic:claude-test", "hi", hosted_tools=[SERVER])
                try:
                    async with stream:
                        async for _ in stream:
                            pass
                except StreamError as exc:
                    return exc
            raise AssertionError("no error")

        error = asyncio.run(main())
    assert TOKEN in server.requests[0].body.decode()  # it was sent, in the body only
    assert TOKEN not in str(error) and TOKEN not in repr(error)
    assert "bad token" in str(error)
