"""Every shape spells every hosted tool and every block type, or reports it
dropped: walked over the product, so a tool or block type added to the
vocabulary cannot vanish on a wire that has no row for it."""

from __future__ import annotations

import importlib
import json
from typing import Any, get_args

import pytest

from elelem.providers.catalog import PARKED_SHAPES
from elelem.shapes.block_tables import BlockTable
from elelem.shapes.hosted_tools import HOSTED_TOOL_TAGS, HostedTools
from elelem.shapes.registry import BUILTIN_SHAPES
from elelem.vocabulary import (
    ActivityId,
    ApplyPatch,
    AudioBlock,
    CallId,
    CodeExecution,
    ComputerUse,
    DocumentBlock,
    FileSearch,
    HostedActivity,
    HostedTool,
    ImageBlock,
    ImageGeneration,
    Memory,
    Message,
    ProviderId,
    ReasoningBlock,
    RemoteMCP,
    Shell,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolSearch,
    UnknownBlock,
    WebFetch,
    WebSearch,
    XSearch,
    block_mapping,
    block_tags,
    block_type,
)
from elelem.vocabulary.blocks import CORE_BLOCK_TYPES
from elelem.vocabulary.drop import UNSUPPORTED
from elelem.vocabulary.registry import block_types
from elelem.wire import ModelRequest

SHAPES = [name for name in BUILTIN_SHAPES if name not in PARKED_SHAPES]
PROVIDER = {
    "anthropic_messages": "anthropic",
    "openai_responses": "openai",
    "openai_chat": "openai",
    "gemini": "google",
    "bedrock_converse": "bedrock",
    "ollama_native": "ollama-native",
    "gemini_interactions": "google-interactions",
}
TOOL_PROVIDER = {("openai_responses", "x_search"): "xai"}
"""A provider of the shape that has the tool, where the shape's default has not
(X search is xAI's; OpenAI's Responses reports it dropped, test_xai_search.py)."""
MODEL = {"bedrock_converse": "us.amazon.nova-premier-v1:0"}
"""A model of the shape whose hosted tools are its family's (Nova web grounding)."""
TOOLS: dict[str, HostedTool] = {
    "web_search": WebSearch(),
    "web_fetch": WebFetch(),
    "code_execution": CodeExecution(),
    "file_search": FileSearch(("store-1",)),
    "image_generation": ImageGeneration(),
    "remote_mcp": RemoteMCP("https://mcp.example.com/mcp", "wiki"),
    "memory": Memory(),
    "shell": Shell(),
    "apply_patch": ApplyPatch(),
    "computer_use": ComputerUse(),
    "tool_search": ToolSearch(),
    "x_search": XSearch(),
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
    provider = ProviderId(TOOL_PROVIDER.get((shape, tag), PROVIDER[shape]))
    model = MODEL.get(shape, "m")
    bare = encode(ModelRequest(model, ()), provider=provider)
    sent = encode(ModelRequest(model, (), hosted_tools=(TOOLS[tag],)), provider=provider)
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


# Blocks: every registered block type beyond the core ones (the built-in
# image, document and audio arrive through the registry as a plugin's do).

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)
PDF = (
    b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
    b"2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n"
    b"3 0 obj << /Type /Page /Parent 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
)
WAV = (
    b"RIFF" + (36 + 1600).to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little")
    + bytes.fromhex("01000100401f0000803e00000200 1000".replace(" ", ""))
    + b"data" + (1600).to_bytes(4, "little") + b"\x00" * 1600
)  # fmt: skip
BUILTIN_BLOCKS = (ImageBlock, DocumentBlock, AudioBlock)
SAMPLES: dict[str, Any] = {
    "image": ImageBlock.from_bytes(PNG, filename="dot.png"),
    "document": DocumentBlock.from_bytes(PDF, filename="q3.pdf"),
    "audio": AudioBlock.from_bytes(WAV, filename="voice.wav"),
}


def _spelt(block: Any, body: dict[str, Any]) -> bool:
    return block.source.blob.base64() in json.dumps(body)


def test_the_blocks_walked_are_every_registered_block_type() -> None:
    core = {str(t.__struct_config__.tag) for t in CORE_BLOCK_TYPES}
    builtin = {t for t in block_tags() if t not in core and block_type(t) in BUILTIN_BLOCKS}
    assert builtin == set(SAMPLES)


@pytest.mark.parametrize("tag", list(SAMPLES))
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("inside", ["message", "tool result"])
def test_every_shape_spells_every_block_type_or_reports_it(
    shape: str, tag: str, inside: str
) -> None:
    block = SAMPLES[tag]
    if inside == "message":
        messages: tuple[Message, ...] = (
            Message("user", (block, TextBlock("What is it?")), "user"),
        )
        where = "messages[0].content[0]"
    else:
        call = ToolCallBlock(CallId("c1"), "look", "{}")
        result = ToolResultBlock(CallId("c1"), "seen", name="look", attachments=(block,))
        messages = (
            Message.user("Look."),
            Message("assistant", (call,), "assistant", ProviderId("elsewhere")),
            Message("user", (result,), "tool"),
        )
        where = "messages[2].content[0].attachments[0]"
    encoded = _encoder(shape).encode_request(
        ModelRequest("m", messages), provider=ProviderId(PROVIDER[shape])
    )
    whole = [d for d in encoded.dropped if d.where == where]
    # Spelt (its bytes are on the wire), or left out with exactly one record.
    assert _spelt(block, encoded.body) != bool(whole), (encoded.body, encoded.dropped)
    assert len(whole) <= 1
    assert mapping_of(tag, shape) is not None or whole


def mapping_of(tag: str, shape: str) -> object:
    mapping = block_mapping(tag)
    return None if mapping is None else mapping.encoders.get(shape)


# Every block type, the core ones included, in every place a shape spells
# blocks: its own assistant message (native replay), another provider's
# assistant message and a user message (the portable encoding).


EVERY_BLOCK: dict[type, Any] = {
    TextBlock: TextBlock("a sample text"),
    ReasoningBlock: ReasoningBlock("a sample thought"),
    ToolCallBlock: ToolCallBlock(CallId("c9"), "look", '{"q": 1}'),
    ToolResultBlock: ToolResultBlock(CallId("c9"), "seen it", name="look"),
    ImageBlock: SAMPLES["image"],
    DocumentBlock: SAMPLES["document"],
    AudioBlock: SAMPLES["audio"],
    HostedActivity: HostedActivity(ActivityId("hs1"), "web_search", "completed", summary="found"),
    UnknownBlock: UnknownBlock({"type": "sample_unknown", "value": 1}),
}
"""A sample of every block type a message holds (the registered ones, hosted
activity and unknown blocks)."""

PLACES = {
    "own assistant message": lambda shape, parts: Message(
        "assistant", parts, "assistant", ProviderId(PROVIDER[shape])
    ),
    "another provider's assistant message": lambda shape, parts: Message(
        "assistant", parts, "assistant", ProviderId("elsewhere")
    ),
    "user message": lambda shape, parts: Message("user", parts, "user"),
}


def test_the_blocks_walked_are_every_built_in_block_type() -> None:
    assert set(CORE_BLOCK_TYPES) <= set(EVERY_BLOCK)
    # Other test modules of the same process register their own block types
    # (a plugin's, as `test_assembler`'s `Chart`): the built-in ones are
    # elelem's own classes.
    built_in = {t for t in block_types() if t.__module__.startswith("elelem.")}
    assert built_in | {HostedActivity, UnknownBlock} == set(EVERY_BLOCK)


@pytest.mark.parametrize("shape", SHAPES)
def test_every_shape_spells_the_core_blocks_from_its_tables(shape: str) -> None:
    tables: dict[str, BlockTable[Any]] = _encoder(shape).BLOCK_TABLES
    assert tables and all(isinstance(t, BlockTable) for t in tables.values())
    # Every core block type has a row in some table of the shape (the
    # places that take none report it through their ``otherwise`` row).
    for cls in CORE_BLOCK_TYPES:
        assert any(t.spells(cls) for t in tables.values()), (shape, cls)


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("cls", list(EVERY_BLOCK), ids=lambda c: c.__name__)
@pytest.mark.parametrize("shape", SHAPES)
def test_every_shape_spells_every_block_in_every_place_or_reports_it(
    shape: str, cls: type, place: str
) -> None:
    """The block changes what is sent, or a drop record names it."""
    lead = TextBlock("lead")

    def encoded(parts: tuple[Any, ...]) -> Any:
        messages = (Message.user("Start."), PLACES[place](shape, parts), Message.user("Go on."))
        return _encoder(shape).encode_request(
            ModelRequest("m", messages), provider=ProviderId(PROVIDER[shape])
        )

    bare = encoded((lead,))
    sent = encoded((lead, EVERY_BLOCK[cls]))
    named = [d for d in sent.dropped if "content[1]" in d.where]
    assert sent.body != bare.body or named, (sent.body, sent.dropped)
