"""Per-provider conventions of the one Chat Completions wire.

Every OpenAI-compatible server accepts the same request skeleton but differs
in how it wants a model's own reasoning sent back, how the token limit is
named, how reasoning effort and hosted web search are asked for.  A
:class:`Dialect` records those choices; a provider's are the ``conventions``
of its record (:class:`elelem.vocabulary.ProviderRecord`), and a model
family's that differ its record's ``profiles``: :func:`dialect_for` merges
them for a provider and a model.  No provider is named here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Literal, get_args, get_type_hints

import msgspec

from elelem.errors import ConfigError
from elelem.vocabulary import ProviderId, provider_record, provider_records
from elelem.vocabulary.registry import providers_generation

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
WebSearchStyle = Literal["web_search_options", "openrouter", "builtin", "browser_search", "none"]
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
    search_elsewhere: str = ""
    """Where the provider's hosted search is asked for when its Chat
    Completions has none (named in the drop record: xAI's Responses API)."""
    cache: CacheStyle = "none"
    output: OutputStyle = "openai"
    images: bool = True
    """Takes ``image_url`` content parts (DeepSeek's and Cerebras' chat do not)."""
    files: bool = False
    """Takes OpenAI's ``file`` content part (a PDF as a data URL or a file id)."""
    audio: bool = False
    """Takes OpenAI's ``input_audio`` content part (WAV or MP3 as base64)."""


DEFAULT = Dialect()
_FIELD_TYPES = get_type_hints(Dialect)


def _known(name: str) -> bool:
    # A dialect name is a provider that speaks Chat Completions, or one
    # whose record sets conventions for it (OpenAI, for its chat endpoint).
    record = provider_record(name)
    if record is None or not record.chat:
        return False
    return record.shape == "openai_chat" or bool(record.conventions)


def conventions(base: Dialect, fields: Mapping[str, object], where: str) -> Dialect:
    """``base`` with ``fields`` over it, each checked against its type.

    Raises :class:`~elelem.errors.ConfigError` naming ``where`` and the
    field for a field :class:`Dialect` has not or a value it does not take.
    """
    if not fields:
        return base
    unknown = sorted(set(fields) - set(Dialect.__struct_fields__))
    if unknown:
        raise ConfigError(
            f"{where}: {', '.join(unknown)} is no Chat Completions convention "
            f"(known: {', '.join(Dialect.__struct_fields__)})"
        )
    types = _FIELD_TYPES
    for name, value in fields.items():
        try:
            msgspec.convert(value, types[name])
        except msgspec.ValidationError:
            choices = get_args(types[name]) or (types[name].__name__,)
            raise ConfigError(
                f"{where}: convention {name} must be {' or '.join(map(repr, choices))}, "
                f"not {value!r}"
            ) from None
    return msgspec.structs.replace(base, **fields)


def dialect_for(provider: ProviderId | str, model: str | None = None) -> Dialect:
    """The dialect for ``provider`` serving ``model``: its record's
    conventions (over those of the record its ``dialect`` names), then the
    profile of ``model``'s family; an unknown provider gets the default
    (reasoning echoed in the field it arrived in)."""
    record = provider_record(str(provider))
    if record is None:
        return DEFAULT
    profile = record.profile_for(model)
    key = (record.name, profile.prefix if profile is not None else None)
    generation = providers_generation()
    if _cache.get(None) != generation:
        _cache.clear()  # a provider was registered since: records may differ
        _cache[None] = generation
    found = _cache.get(key)
    if isinstance(found, Dialect):
        return found
    base = dialect_for(record.dialect) if record.dialect else DEFAULT
    dialect = conventions(base, record.conventions, f"provider {record.name}")
    if profile is not None:
        dialect = conventions(dialect, profile.conventions, f"provider {record.name}")
    _cache[key] = dialect
    return dialect


_cache: dict[object, object] = {}
# (provider, profile prefix) -> its merged Dialect, and None -> the registry
# generation they were merged at.


class _Dialects(Mapping[str, Dialect]):
    # The named dialects, derived from the provider records and read live.
    def __getitem__(self, name: str) -> Dialect:
        if not _known(name):
            raise KeyError(name)
        return dialect_for(name)

    def __iter__(self) -> Iterator[str]:
        return iter([r.name for r in provider_records() if _known(r.name)])

    def __len__(self) -> int:
        return sum(1 for _ in self)


DIALECTS: Mapping[str, Dialect] = _Dialects()
"""Dialect name -> :class:`Dialect`: one per provider record that speaks
Chat Completions or sets conventions for it (derived, so a plugin's
provider is a dialect too)."""


__all__ = [
    "DEFAULT",
    "DIALECTS",
    "CacheStyle",
    "Dialect",
    "EffortStyle",
    "OutputStyle",
    "ReasoningReplay",
    "WebSearchStyle",
    "conventions",
    "dialect_for",
]
