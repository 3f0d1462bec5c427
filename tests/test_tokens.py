"""elelem.tokens: the offline input-token estimate, checked against the
figures each provider documents."""

from __future__ import annotations

import pytest

from elelem.tokens import (
    estimate_messages,
    estimate_request,
    family_of,
    image_tokens,
    page_tokens,
    text_tokens,
)
from elelem.vocabulary import DocumentBlock, ImageBlock, Message, TextBlock, ToolResultBlock
from elelem.vocabulary.ids import CallId
from elelem.wire import ModelRequest
from media_fixtures import pdf, png


@pytest.mark.parametrize(
    ("size", "tokens"),
    # Anthropic's vision documentation: (w·h)/750, scaled to its limits first.
    [((200, 200), 54), ((1000, 1000), 1334), ((1092, 1092), 1590)],
)
def test_anthropic_images_cost_width_times_height_over_750(
    size: tuple[int, int], tokens: int
) -> None:
    assert image_tokens(*size, "anthropic") == tokens


def test_anthropic_scales_large_images_down_before_pricing() -> None:
    # 3000×2000 is scaled to 1341×894 (under 1.2 MP): never past the 1,600-token cap.
    assert image_tokens(3000, 2000, "anthropic") == 1599
    # 4000×100 is scaled to a 1568-px long edge: 1568×39.
    assert image_tokens(4000, 100, "anthropic") == 82


@pytest.mark.parametrize(
    ("size", "detail", "tokens"),
    # OpenAI's vision guide: low = 85; high = 85 + 170 per 512-px tile after
    # fitting 2048×2048 and a 768-px shortest side.
    [
        ((1024, 1024), "high", 765),
        ((2048, 4096), "high", 1105),
        ((4096, 8192), "low", 85),
        ((512, 512), "high", 255),
        ((1024, 1024), None, 765),
    ],
)
def test_openai_images_are_tiles_at_their_detail(
    size: tuple[int, int], detail: str | None, tokens: int
) -> None:
    assert image_tokens(*size, "openai", detail) == tokens


@pytest.mark.parametrize(
    ("size", "tokens"),
    # Gemini: both sides <= 384 px is 258 tokens; larger, 258 per 768×768 tile.
    [((384, 384), 258), ((600, 400), 258), ((1280, 800), 4 * 258), ((1536, 1536), 4 * 258)],
)
def test_gemini_images_are_258_tokens_a_tile(size: tuple[int, int], tokens: int) -> None:
    assert image_tokens(*size, "gemini") == tokens


def test_documents_are_priced_per_page_by_each_rule() -> None:
    two_pages = DocumentBlock.from_bytes(pdf(["one", "two"]))
    assert two_pages.pages == 2
    assert page_tokens("gemini") == 258
    assert page_tokens("anthropic") == 2250
    assert page_tokens("openai") == 765
    for provider, per_page in (("google", 258), ("anthropic", 2250), ("openai", 765)):
        estimate = estimate_messages([Message("user", (two_pages,))], provider)
        assert estimate.documents == 2 * per_page
        assert estimate.exact_inputs


def test_text_is_four_characters_a_token_and_text_documents_are_text() -> None:
    assert text_tokens("") == 0
    assert text_tokens("abcd") == 1
    assert text_tokens("abcde") == 2
    doc = DocumentBlock.from_text("x" * 400, title="Notes")
    estimate = estimate_messages([Message("user", (doc,))], "anthropic")
    assert (estimate.documents, estimate.images) == (100 + 2, 0)


def test_a_whole_request_adds_up_per_provider() -> None:
    image = ImageBlock.from_bytes(png(1000, 1000))
    messages = (
        Message("user", (TextBlock("What is in this picture?"), image), "user"),
        Message("assistant", (TextBlock("A red square."),), "assistant"),
        Message(
            "user",
            (
                ToolResultBlock(
                    CallId("c1"), "ok", attachments=(ImageBlock.from_bytes(png(200, 200)),)
                ),
            ),
            "tool",
        ),
    )
    request = ModelRequest(model="m", messages=messages, system="Be brief.")
    anthropic = estimate_request(request, "anthropic")
    assert anthropic.images == 1334 + 54
    assert anthropic.text == 6 + 4 + 1 + 3
    assert anthropic.overhead == 0
    assert anthropic.total == anthropic.text + anthropic.images
    openai = estimate_request(request, "openai")
    assert openai.images == 765 + 255
    assert openai.overhead == 3 * 4
    gemini = estimate_request(request, "google")
    assert gemini.images == 4 * 258 + 258
    assert gemini.family == "gemini"


def test_unknown_sizes_are_priced_at_the_largest_and_flagged() -> None:
    url = ImageBlock.from_url("https://example.com/cat.jpg")
    estimate = estimate_messages([Message("user", (url,))], "anthropic")
    assert estimate.images == 1600 and not estimate.exact_inputs
    assert family_of("bedrock") == "anthropic"
    assert family_of("deepseek") == "openai"
