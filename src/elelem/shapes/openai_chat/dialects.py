"""Per-provider conventions of the one Chat Completions wire.

Every OpenAI-compatible server accepts the same request skeleton but differs
in how it wants a model's own reasoning sent back, how the token limit is
named, how reasoning effort and hosted web search are asked for.  A
:class:`Dialect` records those choices; :func:`dialect_for` picks the one for
a provider (and, where a provider serves model families that differ, a model).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from elelem.vocabulary import ProviderId

ReasoningReplay = Literal[
    "echo", "shown", "reasoning_content", "reasoning", "reasoning_details", "think-tags", "omit"
]
"""How native replay sends reasoning back on an assistant message.

``echo`` uses the field the reasoning arrived in (recorded on the block);
``reasoning_content`` / ``reasoning`` name a field; ``reasoning_details``
sends OpenRouter's details verbatim (falling back to ``reasoning``);
``think-tags`` wraps it in ``<think>…</think>`` at the head of ``content``
(for servers that reject any reasoning field, such as Groq); ``omit`` drops
it; ``shown`` is ``echo`` for reasoning the response showed in a field and
``omit`` for any other (OpenAI keeps reasoning server-side, and shows none:
a host taken for OpenAI that showed a field gets it back)."""

EffortStyle = Literal["reasoning_effort", "openrouter", "none"]
WebSearchStyle = Literal["web_search_options", "openrouter", "builtin", "none"]
CacheStyle = Literal["openai", "cache_control", "conversation_header", "automatic", "none"]
"""How :class:`~elelem.vocabulary.PromptCache` is asked for.

``openai`` sets ``prompt_cache_key`` / ``prompt_cache_retention``;
``cache_control`` sends a top-level Anthropic-style ``cache_control``
(OpenRouter applies it to the last cacheable block); ``conversation_header``
sends the ``key`` as xAI's ``x-grok-conv-id`` header (its Chat Completions
spelling of a cache-routing key); ``automatic`` means the
server caches prefixes by itself with nothing to set (DeepSeek, xAI...), so
only a ``ttl`` or ``key`` is reported as not sent; ``none`` reports the whole
option (no caching control known)."""

OutputStyle = Literal["openai", "json_object_only", "json_schema_only"]
"""Which ``response_format`` types the server takes for
:attr:`~elelem.vocabulary.GenerationOptions.output`.

``openai`` takes both ``json_schema`` and ``json_object`` (the default for
OpenAI-compatible servers whose docs say nothing else); ``json_object_only``
(DeepSeek) gets ``json_object`` for a schema, reported as not enforced;
``json_schema_only`` (Perplexity) takes a schema, and a schema-less JSON
object request is reported rather than sent with an invented schema."""


class Dialect(msgspec.Struct, frozen=True):
    """The request conventions of one provider on the Chat Completions wire."""

    reasoning_replay: ReasoningReplay = "echo"
    tool_call_index: bool = False
    """Send ``index`` on replayed tool calls (OpenRouter clients do)."""
    null_content: bool = False
    """Send ``"content": null`` on an assistant message without text (OpenAI's
    SDKs do); otherwise the key is left out, as the spec allows with tool calls."""
    max_tokens_field: str = "max_tokens"
    stream_usage: bool = True
    """Ask for the usage-only final chunk (``stream_options.include_usage``)."""
    effort: EffortStyle = "reasoning_effort"
    web_search: WebSearchStyle = "none"
    cache: CacheStyle = "none"
    output: OutputStyle = "openai"
    images: bool = True
    """Takes ``image_url`` content parts (DeepSeek's and Cerebras' chat do not)."""
    files: bool = False
    """Takes OpenAI's ``file`` content part (a PDF as a data URL or a file id)."""
    audio: bool = False
    """Takes OpenAI's ``input_audio`` content part (WAV or MP3 as base64)."""


DEFAULT = Dialect()

DIALECTS: dict[str, Dialect] = {
    "openai": Dialect(
        reasoning_replay="shown",
        null_content=True,
        max_tokens_field="max_completion_tokens",
        web_search="web_search_options",
        cache="openai",
        files=True,
        audio=True,
    ),
    # Azure OpenAI takes the same prompt_cache_key and both retention policies.
    "azure": Dialect(
        reasoning_replay="shown", max_tokens_field="max_completion_tokens", cache="openai"
    ),
    "openrouter": Dialect(
        reasoning_replay="reasoning_details",
        tool_call_index=True,
        effort="openrouter",
        web_search="openrouter",
        cache="cache_control",
        files=True,
        audio=True,
    ),
    "deepseek": Dialect(
        reasoning_replay="reasoning_content",
        effort="none",
        cache="automatic",
        output="json_object_only",
        images=False,
    ),
    "groq": Dialect(reasoning_replay="think-tags", cache="automatic"),
    "cerebras": Dialect(reasoning_replay="reasoning", images=False),
    "llamacpp": Dialect(reasoning_replay="reasoning_content", stream_usage=False),
    "ollama": Dialect(reasoning_replay="echo"),
    "xai": Dialect(reasoning_replay="reasoning_content", cache="conversation_header"),
    "mistral": Dialect(reasoning_replay="echo", effort="none"),
    "perplexity": Dialect(
        reasoning_replay="omit", effort="none", web_search="builtin", output="json_schema_only"
    ),
    "moonshot": Dialect(reasoning_replay="reasoning_content", effort="none", cache="automatic"),
    "alibaba": Dialect(reasoning_replay="reasoning_content", effort="none"),
    # Gateways in front of many model families: what the response showed is
    # what goes back (echo), as their recorded clients send it.
    "vercel": DEFAULT,
    "cloudflare": DEFAULT,
    "litellm": DEFAULT,
    "together": DEFAULT,
    "fireworks": DEFAULT,
    "huggingface": DEFAULT,
    # z.ai (GLM) asks for thinking with its own "thinking" object.
    "zai": Dialect(reasoning_replay="reasoning_content", effort="none"),
}


def dialect_for(provider: ProviderId | str, model: str | None = None) -> Dialect:
    """The dialect for ``provider`` serving ``model`` (unknown providers get ``echo``)."""
    if provider == "cerebras" and model is not None and model.startswith("zai-glm"):
        # GLM on Cerebras takes prior reasoning inline, as its recorded client sent it.
        return Dialect(reasoning_replay="think-tags")
    return DIALECTS.get(str(provider), DEFAULT)


__all__ = [
    "DEFAULT",
    "DIALECTS",
    "CacheStyle",
    "Dialect",
    "EffortStyle",
    "OutputStyle",
    "ReasoningReplay",
    "WebSearchStyle",
    "dialect_for",
]
