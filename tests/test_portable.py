"""The one portable rule: what a message keeps on its way to a provider that did not produce it."""

from __future__ import annotations

from types import ModuleType

import pytest

from elelem.shapes import (
    anthropic_messages,
    bedrock_converse,
    gemini,
    ollama_native,
    openai_chat,
    openai_responses,
)
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    CallId,
    Drop,
    HostedActivity,
    ImageBlock,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    Source,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
    URLSource,
)
from elelem.vocabulary.drop import FOREIGN_BLOCK, FOREIGN_PAYLOAD, FOREIGN_REASONING, UNSUPPORTED
from elelem.vocabulary.portable import Accepts, portable_message
from elelem.wire import ModelRequest

OPENAI = ProviderId("openai")
ANT = ProviderId("anthropic")
SIG = ProviderPayload(ANT, "signature", None, "SIG")
ITEM = ProviderPayload(ANT, "block_fields", None, {"cache_control": {"type": "ephemeral"}})
IDX = ProviderPayload(ANT, "citation", None, {"encrypted_index": "IDX"})
ENC = ProviderPayload(ANT, "server_tool_use", None, {"type": "server_tool_use"})
SOURCE = Source("https://e.example", "E")
STARTED = HostedActivity(ActivityId("s1"), "web_search", "started", {"query": "q"}, payload=ENC)
DONE = STARTED.transition("completed", summary="3 results", payload=ENC)
CALL = ToolCallBlock(CallId("c1"), "f", '{"a": 1}', (ITEM,))

FOREIGN = Message(
    "assistant",
    (
        ReasoningBlock("thinking", (SIG,)),
        STARTED,
        DONE,
        TextBlock("Everest.", (Attribution(SOURCE, "8849 m", None, IDX),), (ITEM,)),
        CALL,
        UnknownBlock({"type": "container_upload", "file_id": "f"}),
        ImageBlock(URLSource("https://e.example/a.webp"), "image/webp"),
    ),
    "assistant",
    ANT,
    "claude-x",
)

# What every target drops of FOREIGN, whatever else it carries.
ALWAYS = (
    Drop("content[0]", "reasoning", FOREIGN_REASONING, "from anthropic"),
    Drop(
        "content[1]", "payload", FOREIGN_PAYLOAD, "anthropic server_tool_use of hosted web_search"
    ),
    Drop(
        "content[2]", "payload", FOREIGN_PAYLOAD, "anthropic server_tool_use of hosted web_search"
    ),
    Drop("content[3]", "payload", FOREIGN_PAYLOAD, "anthropic block_fields"),
)
TAIL = (
    Drop("content[4]", "payload", FOREIGN_PAYLOAD, "anthropic block_fields"),
    Drop("content[5]", "container_upload", FOREIGN_BLOCK, "from anthropic"),
)


def test_a_target_without_citations_or_images_keeps_text_calls_and_the_last_hosted_state() -> None:
    kept = portable_message(FOREIGN, Accepts("Wire"), OPENAI)
    assert kept.message.content == (
        DONE.transition("completed", summary="3 results"),
        TextBlock("Everest."),
        ToolCallBlock(CallId("c1"), "f", '{"a": 1}'),
    )
    assert kept.positions == (2, 3, 4)
    assert kept.parts() == list(zip((2, 3, 4), kept.message.content, strict=True))
    assert (kept.message.role, kept.message.provider, kept.message.model) == (
        "assistant",
        ANT,
        "claude-x",
    )
    assert kept.dropped == (
        *ALWAYS,
        Drop(
            "content[3]",
            "citation",
            UNSUPPORTED,
            "1: Wire has no input form for another provider's citations",
        ),
        *TAIL,
        Drop("content[6]", "image", UNSUPPORTED, "Wire has no form for it"),
    )


def test_a_target_with_citations_and_images_keeps_them_without_replay_payloads() -> None:
    accepts = Accepts("Wire", citations=True).with_blocks("image")
    kept = portable_message(FOREIGN, accepts, OPENAI)
    assert kept.message.content == (
        DONE.transition("completed", summary="3 results"),
        TextBlock("Everest.", (Attribution(SOURCE, "8849 m"),)),
        ToolCallBlock(CallId("c1"), "f", '{"a": 1}'),
        ImageBlock(URLSource("https://e.example/a.webp"), "image/webp"),
    )
    assert kept.positions == (2, 3, 4, 6)
    assert kept.dropped == (
        *ALWAYS,
        Drop("content[3].attributions[0]", "payload", FOREIGN_PAYLOAD, "anthropic citation"),
        *TAIL,
    )


def test_a_media_type_the_target_does_not_take_is_reported() -> None:
    png_only = Accepts("Wire").with_blocks("image", media_types=frozenset({"image/png"}))
    kept = portable_message(FOREIGN, png_only, OPENAI)
    assert kept.positions == (2, 3, 4)
    assert kept.dropped[-1] == Drop(
        "content[6]", "image", UNSUPPORTED, "image/webp: Wire takes none"
    )


def test_a_user_message_keeps_the_targets_own_payloads_and_its_unknown_blocks() -> None:
    own = ProviderPayload(OPENAI, "item", None, {"type": "computer_call_output"})
    result = ToolResultBlock(CallId("c1"), "42", payloads=(own, ITEM))
    answer = UnknownBlock({"type": "mcp_approval_response", "approve": True})
    message = Message("user", (TextBlock("hi"), result, answer), "tool")
    kept = portable_message(message, Accepts("Wire"), OPENAI)
    assert kept.message.content == (
        TextBlock("hi"),
        ToolResultBlock(CallId("c1"), "42", payloads=(own,)),
        answer,
    )
    assert kept.dropped == (
        Drop("content[1]", "payload", FOREIGN_PAYLOAD, "anthropic block_fields"),
    )
    # Sent to a third provider, the first one's payload is foreign too.
    assert len(portable_message(message, Accepts("Wire"), ProviderId("x")).dropped) == 2


def test_an_assistant_message_keeps_no_payload_even_of_the_target() -> None:
    # A router's message from another model family is portable to the router
    # itself: its own reasoning_details would mean nothing to the new model.
    router = ProviderId("openrouter")
    details = ProviderPayload(router, "reasoning_details", None, [])
    message = Message("assistant", (TextBlock("A", payloads=(details,)),), "assistant", router)
    kept = portable_message(message, Accepts("Wire"), router)
    assert kept.message.content == (TextBlock("A"),)
    assert kept.dropped == (
        Drop("content[0]", "payload", FOREIGN_PAYLOAD, "openrouter reasoning_details"),
    )


def test_a_message_with_nothing_to_drop_is_returned_as_it_is() -> None:
    message = Message.user("q")
    assert portable_message(message, Accepts("Wire")).message is message


# -- every encoder applies the same rule --------------------------------------------

SHAPES: list[tuple[ModuleType, str]] = [
    (anthropic_messages, "anthropic-compatible"),
    (openai_responses, "openai"),
    (openai_chat, "deepseek"),
    (gemini, "google"),
    (bedrock_converse, "bedrock"),
    (ollama_native, "ollama"),
]


@pytest.mark.parametrize(("module", "provider"), SHAPES, ids=[m.__name__ for m, _ in SHAPES])
def test_every_encoder_reports_the_portable_rules_drops_for_a_foreign_message(
    module: ModuleType, provider: str
) -> None:
    request = ModelRequest("m", (Message.user("q"), FOREIGN))
    encoded = module.SHAPE.encode_request(request, provider=ProviderId(provider))
    dropped = encoded.dropped
    for drop in (*ALWAYS, *TAIL):
        assert drop.under("messages[1]") in dropped, drop
    # Nothing of the foreign payloads or reasoning reaches the wire.
    wire = repr(encoded.body)
    for secret in ("SIG", "IDX", "thinking", "cache_control", "container_upload"):
        assert secret not in wire, secret
    assert "Everest." in wire


def test_a_tool_results_attachments_follow_the_same_rule() -> None:
    image = ImageBlock(URLSource("https://e.example/a.png"), "image/png", payloads=(ITEM,))
    result = ToolResultBlock(CallId("c1"), "see image", attachments=(image,))
    message = Message("user", (result,), "tool")
    with_images = portable_message(message, Accepts("Wire").with_blocks("image"), OPENAI)
    assert with_images.message.content == (
        ToolResultBlock(
            CallId("c1"),
            "see image",
            attachments=(ImageBlock(URLSource("https://e.example/a.png"), "image/png"),),
        ),
    )
    assert with_images.dropped == (
        Drop("content[0].attachments[0]", "payload", FOREIGN_PAYLOAD, "anthropic block_fields"),
    )
    text_only = portable_message(message, Accepts("Wire"), OPENAI)
    assert text_only.message.content == (ToolResultBlock(CallId("c1"), "see image"),)
    assert text_only.dropped == (
        Drop("content[0].attachments[0]", "image", UNSUPPORTED, "Wire has no form for it"),
    )
