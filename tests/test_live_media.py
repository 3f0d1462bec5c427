"""Live: a tiny PNG and a one-page PDF sent to Anthropic, OpenAI and Gemini.
Runs only when the provider's key is set (skips cleanly otherwise)."""

from __future__ import annotations

import asyncio

import pytest

from elelem import Client
from elelem.vocabulary import DocumentBlock, GenerationOptions, ImageBlock, Message, TextBlock
from media_fixtures import pdf, png
from test_live_providers import live_model

PROVIDERS = ["anthropic", "openai", "google"]


def _ask(provider: str, message: Message) -> str:
    model = live_model(provider)

    async def main() -> str:
        async with Client() as client:
            stream = client.stream(
                f"{provider}:{model}", [message], options=GenerationOptions(max_tokens=512)
            )
            async with stream:
                result = await stream.final()
        assert result.complete is True
        return "".join(b.text for b in result.content if isinstance(b, TextBlock))

    return asyncio.run(main())


@pytest.mark.live
@pytest.mark.parametrize("provider", PROVIDERS)
def test_live_a_tiny_png_is_seen(provider: str) -> None:
    image = ImageBlock.from_bytes(png(64, 64, (220, 20, 20)), filename="red.png")
    question = TextBlock("What single colour fills this image? Answer with one word.")
    answer = _ask(provider, Message("user", (image, question), "user"))
    assert "red" in answer.lower()


@pytest.mark.live
@pytest.mark.parametrize("provider", PROVIDERS)
def test_live_a_one_page_pdf_is_read(provider: str) -> None:
    document = DocumentBlock.from_bytes(pdf(["The secret word is pelican."]), title="Memo")
    question = TextBlock("What is the secret word in the document? Answer with one word.")
    answer = _ask(provider, Message("user", (document, question), "user"))
    assert "pelican" in answer.lower()
