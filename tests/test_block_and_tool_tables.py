"""Every shape spells every hosted tool and every block type, or reports it
dropped: walked over the product, so a tool or block type added to the
vocabulary cannot vanish on a wire that has no row for it."""

from __future__ import annotations

import importlib
from typing import Any, get_args

import pytest

from elelem.providers.catalog import PARKED_SHAPES
from elelem.shapes.hosted_tools import HOSTED_TOOL_TAGS, HostedTools
from elelem.shapes.registry import BUILTIN_SHAPES
from elelem.vocabulary import (
    CodeExecution,
    FileSearch,
    HostedTool,
    ImageGeneration,
    ProviderId,
    RemoteMCP,
    WebFetch,
    WebSearch,
)
from elelem.vocabulary.drop import UNSUPPORTED
from elelem.wire import ModelRequest

SHAPES = [name for name in BUILTIN_SHAPES if name not in PARKED_SHAPES]
PROVIDER = {
    "anthropic_messages": "anthropic",
    "openai_responses": "openai",
    "openai_chat": "openai",
    "gemini": "google",
    "bedrock_converse": "bedrock",
    "ollama_native": "ollama-native",
}
TOOLS: dict[str, HostedTool] = {
    "web_search": WebSearch(),
    "web_fetch": WebFetch(),
    "code_execution": CodeExecution(),
    "file_search": FileSearch(("store-1",)),
    "image_generation": ImageGeneration(),
    "remote_mcp": RemoteMCP("https://mcp.example.com/mcp", "wiki"),
}


def _encoder(shape: str) -> Any:
    return importlib.import_module(f"elelem.shapes.{shape}.encoder")


def test_the_tools_walked_are_every_hosted_tool() -> None:
    assert tuple(TOOLS) == HOSTED_TOOL_TAGS
    assert [type(t) for t in TOOLS.values()] == list(get_args(HostedTool))


@pytest.mark.parametrize("tag", list(TOOLS))
@pytest.mark.parametrize("shape", SHAPES)
def test_every_shape_spells_every_hosted_tool_or_reports_it(shape: str, tag: str) -> None:
    table: HostedTools = _encoder(shape).HOSTED_TOOLS
    encode = _encoder(shape).encode_request
    provider = ProviderId(PROVIDER[shape])
    bare = encode(ModelRequest("m", ()), provider=provider)
    sent = encode(ModelRequest("m", (), hosted_tools=(TOOLS[tag],)), provider=provider)
    whole = [d for d in sent.dropped if d.where == "hosted_tools[0]"]
    if tag in table.rows:
        # Spelt: the request carries it (fields it has no room for may be reported).
        assert sent.body != bare.body
        assert whole == []
    else:
        # The one policy: left out, one record, the request otherwise unchanged.
        assert sent.body == bare.body
        assert [(d.what, d.why) for d in whole] == [(tag, UNSUPPORTED)]
        assert whole[0].detail.endswith(f"{table.wire} has no hosted {tag}")
