"""The shipped part of the model catalog: what no maintained source carries.

``genai-prices`` (already elelem's price database) knows most models'
context windows and whether they are deprecated; it says nothing of output
limits, input modalities or which features a model takes.  This table holds
those, from the providers' model pages, for the models elelem knows by name
(:data:`~elelem.providers.models.KNOWN_MODELS`), and a context window where
the database has none.  A cloud serves the same model under its own id
(``claude-sonnet-4-5@20250929`` on Vertex AI,
``global.anthropic.claude-sonnet-4-5-20250929-v1:0`` on Bedrock,
``openai/gpt-5-mini`` on a gateway);
:func:`family_of` reduces such ids to the key used here.

Columns: context window (None: take the database's), max output tokens,
input modalities, tools, reasoning, structured output (a JSON schema the
wire enforces), deprecated (None: take the database's).
"""

from __future__ import annotations

import re

TEXT = ("text",)
VISION = ("text", "image")
DOCS = ("text", "image", "pdf")
GEMINI = ("text", "image", "pdf", "audio", "video")

Row = tuple[int | None, int | None, tuple[str, ...], bool, bool, bool, bool | None]

TABLE: dict[str, Row] = {
    # Anthropic: https://docs.claude.com/en/docs/about-claude/models/overview
    "claude-opus-4-5": (None, 64000, DOCS, True, True, True, None),
    "claude-sonnet-4-5": (None, 64000, DOCS, True, True, True, None),
    "claude-haiku-4-5": (None, 64000, DOCS, True, True, True, None),
    "claude-opus-4-1": (None, 32000, DOCS, True, True, True, None),
    "claude-opus-4-0": (None, 32000, DOCS, True, True, False, None),
    "claude-sonnet-4-0": (None, 64000, DOCS, True, True, False, None),
    "claude-3-7-sonnet": (None, 64000, DOCS, True, True, False, True),
    "claude-3-5-sonnet": (None, 8192, DOCS, True, False, False, True),
    "claude-3-5-haiku": (None, 8192, DOCS, True, False, False, None),
    # OpenAI: https://platform.openai.com/docs/models
    "gpt-5.1": (None, 128000, DOCS, True, True, True, None),
    "gpt-5": (None, 128000, DOCS, True, True, True, None),
    "gpt-5-mini": (None, 128000, DOCS, True, True, True, None),
    "gpt-5-nano": (None, 128000, DOCS, True, True, True, None),
    "gpt-5-pro": (None, 272000, DOCS, True, True, True, None),
    "gpt-4.1": (None, 32768, DOCS, True, False, True, None),
    "gpt-4.1-mini": (None, 32768, DOCS, True, False, True, None),
    "gpt-4.1-nano": (None, 32768, DOCS, True, False, True, None),
    "gpt-4o": (None, 16384, DOCS, True, False, True, None),
    "gpt-4o-mini": (None, 16384, DOCS, True, False, True, None),
    "o3": (None, 100000, DOCS, True, True, True, None),
    "o3-pro": (None, 100000, DOCS, True, True, True, None),
    "o4-mini": (None, 100000, DOCS, True, True, True, None),
    # Google: https://ai.google.dev/gemini-api/docs/models
    "gemini-3-pro-preview": (1048576, 65536, GEMINI, True, True, True, None),
    "gemini-2.5-pro": (1048576, 65536, GEMINI, True, True, True, None),
    "gemini-2.5-flash": (None, 65536, GEMINI, True, True, True, None),
    "gemini-2.5-flash-lite": (None, 65536, GEMINI, True, True, True, None),
    "gemini-2.0-flash": (None, 8192, GEMINI, True, False, True, None),
    # DeepSeek: JSON objects only, no schema.
    "deepseek-chat": (None, 8192, TEXT, True, False, False, None),
    "deepseek-reasoner": (None, 64000, TEXT, True, True, False, None),
    # xAI
    "grok-4": (None, None, VISION, True, True, True, None),
    "grok-4-fast-reasoning": (None, None, VISION, True, True, True, None),
    "grok-4-fast-non-reasoning": (None, None, VISION, True, False, True, None),
    "grok-3-mini": (None, None, TEXT, True, True, True, None),
    # Mistral
    "mistral-large-latest": (131072, None, TEXT, True, False, True, None),
    "mistral-medium-latest": (131072, None, VISION, True, False, True, None),
    "mistral-small-latest": (131072, None, VISION, True, False, True, None),
    "magistral-medium-latest": (131072, None, TEXT, True, True, True, None),
    "codestral-latest": (None, None, TEXT, True, False, True, None),
    # Groq (JSON schema only on the models its docs list)
    "llama-3.3-70b-versatile": (131072, 32768, TEXT, True, False, False, None),
    "llama-3.1-8b-instant": (131072, 131072, TEXT, True, False, False, None),
    "openai/gpt-oss-120b": (131072, 65536, TEXT, True, True, True, None),
    # Cerebras
    "llama-3.3-70b": (None, None, TEXT, True, False, True, None),
    "qwen-3-32b": (None, None, TEXT, True, True, True, None),
    "gpt-oss-120b": (131072, 65536, TEXT, True, True, True, None),
    # OpenRouter's router picks a model per request: the widest it may pick.
    "openrouter/auto": (2000000, None, DOCS, True, True, True, None),
    # Open models as the gateways and hosts name them by default.
    "llama-3.3-70b-instruct-turbo": (131072, None, TEXT, True, False, False, None),
    "llama-v3p3-70b-instruct": (131072, None, TEXT, True, False, False, None),
    "glm-4.6": (200000, 128000, TEXT, True, True, False, None),
    # Amazon Nova on Bedrock
    "amazon.nova-pro-v1:0": (
        None,
        10000,
        ("text", "image", "pdf", "video"),
        True,
        False,
        False,
        None,
    ),
    "amazon.nova-lite-v1:0": (
        None,
        10000,
        ("text", "image", "pdf", "video"),
        True,
        False,
        False,
        None,
    ),
}
"""Family id -> :data:`Row` (see the module docstring)."""

_DATE = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")
_BEDROCK = re.compile(r"^(?:(?:global|us|eu|apac|jp|au)\.)?anthropic\.(.+?)(?:-v\d+(?::\d+)?)?$")
_ALIASES = {
    "claude-3-7-sonnet-latest": "claude-3-7-sonnet",
    "claude-3-5-haiku-latest": "claude-3-5-haiku",
    "claude-3-5-sonnet-latest": "claude-3-5-sonnet",
    "claude-sonnet-4": "claude-sonnet-4-0",
    "claude-opus-4": "claude-opus-4-0",
}


def family_of(model: str) -> str | None:
    """The :data:`TABLE` key of ``model``: itself, or with a cloud's prefix,
    a ``@version`` or a date removed; None when the table does not know it."""
    text = model.strip().lower().removeprefix("models/")
    candidates = [text]
    bedrock = _BEDROCK.match(text)
    if bedrock:
        candidates.append(bedrock.group(1))
    if "/" in text:
        # A gateway's vendor/model, or a host's accounts/…/models/model.
        candidates.append(text.rsplit("/", 1)[1])
    for item in list(candidates):
        base = item.partition("@")[0]
        candidates.append(base)
        candidates.append(_DATE.sub("", base))
    for item in candidates:
        item = _ALIASES.get(item, item)
        if item in TABLE:
            return item
    return None


__all__ = ["TABLE", "Row", "family_of"]
