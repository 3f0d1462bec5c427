"""A local, offline estimate of a request's input tokens, per provider.

No tokenizer and no network: text is priced at the providers' documented
rule of thumb (about four characters a token), and images and documents by
each provider's documented rules:

- **Anthropic** (and Claude on Bedrock): an image costs ``width × height /
  750`` tokens after it is scaled down, keeping its aspect ratio, to a long
  edge of at most 1568 px and at most about 1.15 megapixels (1,600 tokens);
  documented: 200×200 ≈ 54, 1000×1000 ≈ 1334, 1092×1092 ≈ 1590.  A PDF page
  costs 1,500–3,000 tokens by the documentation (its text plus an image of
  the page): priced at the midpoint, 2,250.
- **OpenAI**: ``detail: low`` costs 85 tokens; ``high`` (and ``auto``, priced
  as its upper bound) scales the image to fit 2048×2048, then its shortest
  side to 768 px, and costs 85 + 170 per 512 px tile; documented: 1024×1024
  high = 765, 2048×4096 high = 1105.  A PDF page is given as its text and an
  image of the page: priced as a letter page at high detail (765).
- **Gemini**: an image with both sides at most 384 px costs 258 tokens; a
  larger one is tiled into 768×768 tiles of 258 tokens each; a document
  page costs 258 tokens.

An image whose size is unknown (a URL, a provider file) is priced at the
rule's largest image; a document whose page count is unknown at one page.
Text of a document given as text is priced as text.  The result says how
much of the total is text, images and documents, and whether any part was
guessed (:attr:`TokenEstimate.exact_inputs`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import msgspec

from elelem.vocabulary import (
    AudioBlock,
    DocumentBlock,
    HostedActivity,
    ImageBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolSpec,
    UnknownBlock,
)
from elelem.vocabulary.registry import RecordTable
from elelem.wire import ModelRequest

Family = Literal["anthropic", "openai", "gemini"]
"""Whose documented rules price a request."""

_SHAPE_RULES: dict[str, Family] = {
    "anthropic_messages": "anthropic",
    "gemini": "gemini",
    "gemini_interactions": "gemini",
}

FAMILIES: Mapping[str, Family] = RecordTable(
    lambda r: r.token_rules or _SHAPE_RULES.get(r.shape, "openai")
)
"""The rules each provider's requests are priced by, from its record
(:attr:`~elelem.vocabulary.ProviderRecord.token_rules`, else its chat
shape's maker's); any other provider (an OpenAI-compatible server) is priced
by OpenAI's."""

CHARS_PER_TOKEN = 4
"""The providers' documented rule of thumb for English text."""

ANTHROPIC_PIXELS_PER_TOKEN = 750
ANTHROPIC_MAX_EDGE = 1568
ANTHROPIC_MAX_TOKENS = 1600
ANTHROPIC_PDF_PAGE = 2250

OPENAI_LOW = 85
OPENAI_TILE = 170
OPENAI_FIT = 2048
OPENAI_SHORT_SIDE = 768
OPENAI_TILE_SIZE = 512
OPENAI_PER_MESSAGE = 3
"""OpenAI's documented overhead of each chat message (and of priming the reply)."""

GEMINI_TILE_TOKENS = 258
GEMINI_SMALL = 384
GEMINI_TILE_SIZE = 768
GEMINI_PAGE = 258

LETTER_PAGE = (612, 792)
"""A US-letter page in points: the page image OpenAI's estimate prices."""


class TokenEstimate(msgspec.Struct, frozen=True):
    """An estimate of a request's input tokens.

    ``total`` is the sum of ``text`` (messages, system prompt and tools),
    ``images``, ``documents`` and ``overhead`` (per-message framing where a
    provider documents one).  ``family`` names the rules used;
    ``exact_inputs`` is False when some image's size or document's page count
    was unknown and a default stood in for it.
    """

    total: int
    text: int
    images: int
    documents: int
    overhead: int
    family: Family
    exact_inputs: bool = True
    audio: int = 0
    """Tokens of the audio inputs (in ``total``)."""


def family_of(provider: str) -> Family:
    """The rules ``provider``'s requests are priced by."""
    return FAMILIES.get(provider, "openai")


def text_tokens(text: str) -> int:
    """Tokens of ``text`` at about four characters a token (0 for no text)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


AUDIO_TOKENS_PER_SECOND: dict[Family, int] = {"gemini": 32, "openai": 10, "anthropic": 0}
"""Input tokens per second of audio: Gemini documents 32.  OpenAI documents
no per-second rule for Chat Completions audio input; 10 a second is an
estimate, not a documented figure.  Anthropic's wire takes no audio (0: it
is dropped before sending)."""

DEFAULT_AUDIO_SECONDS = 30
"""The duration assumed for audio whose length is unknown (a URL, an MP3)."""


def audio_tokens(duration: float | None, family: Family) -> int:
    """Input tokens of ``duration`` seconds of audio by ``family``'s rule."""
    seconds = DEFAULT_AUDIO_SECONDS if duration is None else duration
    return math.ceil(seconds * AUDIO_TOKENS_PER_SECOND[family])


def image_tokens(
    width: int | None, height: int | None, family: Family, detail: str | None = None
) -> int:
    """Tokens of one image of ``width`` × ``height`` pixels by ``family``'s
    documented rule (None sizes: the rule's largest image)."""
    if family == "openai" and detail == "low":
        return OPENAI_LOW
    if width is None or height is None:
        return _largest(family)
    if family == "anthropic":
        return _anthropic(width, height)
    if family == "gemini":
        if width <= GEMINI_SMALL and height <= GEMINI_SMALL:
            return GEMINI_TILE_TOKENS
        tiles = math.ceil(width / GEMINI_TILE_SIZE) * math.ceil(height / GEMINI_TILE_SIZE)
        return tiles * GEMINI_TILE_TOKENS
    return _openai_high(width, height)


def _anthropic(width: int, height: int) -> int:
    scale = min(1.0, ANTHROPIC_MAX_EDGE / max(width, height))
    max_pixels = ANTHROPIC_MAX_TOKENS * ANTHROPIC_PIXELS_PER_TOKEN
    if width * height * scale * scale > max_pixels:
        scale = math.sqrt(max_pixels / (width * height))
    w, h = int(width * scale), int(height * scale)
    return max(1, math.ceil(w * h / ANTHROPIC_PIXELS_PER_TOKEN))


def _openai_high(width: int, height: int) -> int:
    w, h = float(width), float(height)
    if max(w, h) > OPENAI_FIT:
        fit = OPENAI_FIT / max(w, h)
        w, h = w * fit, h * fit
    if min(w, h) > OPENAI_SHORT_SIDE:
        short = OPENAI_SHORT_SIDE / min(w, h)
        w, h = w * short, h * short
    tiles = math.ceil(w / OPENAI_TILE_SIZE) * math.ceil(h / OPENAI_TILE_SIZE)
    return OPENAI_LOW + OPENAI_TILE * tiles


def _largest(family: Family) -> int:
    if family == "anthropic":
        return ANTHROPIC_MAX_TOKENS
    if family == "gemini":
        return GEMINI_TILE_TOKENS * 4
    return _openai_high(OPENAI_FIT, OPENAI_FIT)


def page_tokens(family: Family) -> int:
    """Tokens of one PDF page by ``family``'s rule."""
    if family == "anthropic":
        return ANTHROPIC_PDF_PAGE
    if family == "gemini":
        return GEMINI_PAGE
    return _openai_high(*LETTER_PAGE)


def document_tokens(block: DocumentBlock, family: Family) -> tuple[int, bool]:
    """Tokens of one document and whether its size was known: text priced as
    text, a PDF per page (one page when the count is unknown)."""
    text = block.text
    if text is not None:
        extra = text_tokens(block.title or "") + text_tokens(block.context or "")
        return text_tokens(text) + extra, True
    pages = block.pages
    return (pages or 1) * page_tokens(family) + text_tokens(block.context or ""), pages is not None


def _block_text(part: object) -> str:
    if isinstance(part, TextBlock):
        return part.text
    if isinstance(part, ReasoningBlock):
        return part.text
    if isinstance(part, ToolCallBlock):
        return part.name + part.arguments
    if isinstance(part, ToolResultBlock):
        return part.content
    if isinstance(part, HostedActivity):
        return json.dumps(part.input) if part.input is not None else part.name
    if isinstance(part, UnknownBlock):
        return json.dumps(part.raw)
    return ""


def generated_tokens(parts: Iterable[object]) -> int:
    """Tokens of what a model generated in ``parts`` (its text, reasoning
    and tool calls), estimated like the rest: what a response was seen to
    send, a floor for the output count it reports."""
    generated = (TextBlock, ReasoningBlock, ToolCallBlock)
    return sum(text_tokens(_block_text(p)) for p in parts if isinstance(p, generated))


class _Tally:
    def __init__(self, family: Family) -> None:
        self.family = family
        self.text = 0
        self.images = 0
        self.documents = 0
        self.audio = 0
        self.exact = True

    def part(self, part: object) -> None:
        if isinstance(part, ImageBlock):
            self.images += image_tokens(part.width, part.height, self.family, part.detail)
            self.exact &= part.width is not None
        elif isinstance(part, DocumentBlock):
            tokens, known = document_tokens(part, self.family)
            self.documents += tokens
            self.exact &= known
        elif isinstance(part, AudioBlock):
            self.audio += audio_tokens(part.duration, self.family)
            self.exact &= part.duration is not None
        else:
            self.text += text_tokens(_block_text(part))
            if isinstance(part, ToolResultBlock):
                for attachment in part.attachments or ():
                    self.part(attachment)


def estimate_messages(
    messages: Iterable[Message],
    provider: str,
    *,
    system: str | None = None,
    tools: Sequence[ToolSpec] = (),
) -> TokenEstimate:
    """Estimate the input tokens of ``messages`` (and a system prompt and
    tools) sent to ``provider``."""
    family = family_of(provider)
    tally = _Tally(family)
    count = 0
    for message in messages:
        count += 1
        for part in message.content:
            tally.part(part)
    tally.text += text_tokens(system or "")
    for tool in tools:
        tally.text += text_tokens(
            tool.name + (tool.description or "") + json.dumps(tool.parameters)
        )
    overhead = OPENAI_PER_MESSAGE * (count + 1) if family == "openai" and count else 0
    return TokenEstimate(
        total=tally.text + tally.images + tally.documents + tally.audio + overhead,
        text=tally.text,
        images=tally.images,
        documents=tally.documents,
        overhead=overhead,
        family=family,
        exact_inputs=tally.exact,
        audio=tally.audio,
    )


def estimate_request(request: ModelRequest, provider: str) -> TokenEstimate:
    """Estimate the input tokens of ``request`` sent to ``provider``."""
    return estimate_messages(request.messages, provider, system=request.system, tools=request.tools)


__all__ = [
    "AUDIO_TOKENS_PER_SECOND",
    "CHARS_PER_TOKEN",
    "FAMILIES",
    "Family",
    "TokenEstimate",
    "audio_tokens",
    "document_tokens",
    "estimate_messages",
    "estimate_request",
    "family_of",
    "generated_tokens",
    "image_tokens",
    "page_tokens",
    "text_tokens",
]
