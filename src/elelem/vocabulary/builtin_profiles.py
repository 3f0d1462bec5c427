"""The built-in model-family profiles: what no maintained source carries.

``genai-prices`` (elelem's price database) knows most models' context
windows and whether they are deprecated; it says nothing of output limits,
input modalities or which features a model takes.  These profiles hold
those, from the providers' model pages, for the models elelem knows by name,
and a context window where the database has none.  They are registered
through :func:`~elelem.vocabulary.model_profiles.register_model_profile`, as
a plugin's are; :func:`~elelem.vocabulary.model_profiles.model_profile` is
the one lookup.
"""

from __future__ import annotations

from elelem.vocabulary.provider_record import ModelProfile

TEXT = ("text",)
VISION = ("text", "image")
DOCS = ("text", "image", "pdf")
GEMINI = ("text", "image", "pdf", "audio", "video")
NOVA = ("text", "image", "pdf", "video")


def _family(
    family: str,
    context_window: int | None,
    max_output_tokens: int | None,
    input_modalities: tuple[str, ...],
    tools: bool,
    reasoning: bool,
    structured_output: bool,
    deprecated: bool | None,
) -> ModelProfile:
    # One row of the table below, its columns in the order of ModelProfile's facts.
    return ModelProfile(
        family,
        context_window=context_window,
        max_output_tokens=max_output_tokens,
        input_modalities=input_modalities,
        tools=tools,
        reasoning=reasoning,
        structured_output=structured_output,
        deprecated=deprecated,
    )


BUILTIN_PROFILES: tuple[ModelProfile, ...] = (
    # family id, context window (None: the price database's), max output
    # tokens, input modalities, tools, reasoning, structured output (a JSON
    # schema the wire enforces), deprecated (None: the database's)
    # Anthropic: https://docs.claude.com/en/docs/about-claude/models/overview
    _family("claude-opus-4-5", None, 64000, DOCS, True, True, True, None),
    _family("claude-sonnet-4-5", None, 64000, DOCS, True, True, True, None),
    _family("claude-haiku-4-5", None, 64000, DOCS, True, True, True, None),
    _family("claude-opus-4-1", None, 32000, DOCS, True, True, True, None),
    _family("claude-opus-4-0", None, 32000, DOCS, True, True, False, None),
    _family("claude-sonnet-4-0", None, 64000, DOCS, True, True, False, None),
    _family("claude-3-7-sonnet", None, 64000, DOCS, True, True, False, True),
    _family("claude-3-5-sonnet", None, 8192, DOCS, True, False, False, True),
    _family("claude-3-5-haiku", None, 8192, DOCS, True, False, False, None),
    # OpenAI: https://platform.openai.com/docs/models
    _family("gpt-5.1", None, 128000, DOCS, True, True, True, None),
    _family("gpt-5", None, 128000, DOCS, True, True, True, None),
    _family("gpt-5-mini", None, 128000, DOCS, True, True, True, None),
    _family("gpt-5-nano", None, 128000, DOCS, True, True, True, None),
    _family("gpt-5-pro", None, 272000, DOCS, True, True, True, None),
    _family("gpt-4.1", None, 32768, DOCS, True, False, True, None),
    _family("gpt-4.1-mini", None, 32768, DOCS, True, False, True, None),
    _family("gpt-4.1-nano", None, 32768, DOCS, True, False, True, None),
    _family("gpt-4o", None, 16384, DOCS, True, False, True, None),
    _family("gpt-4o-mini", None, 16384, DOCS, True, False, True, None),
    _family("o3", None, 100000, DOCS, True, True, True, None),
    _family("o3-pro", None, 100000, DOCS, True, True, True, None),
    _family("o4-mini", None, 100000, DOCS, True, True, True, None),
    # Google: https://ai.google.dev/gemini-api/docs/models
    _family("gemini-3-pro-preview", 1048576, 65536, GEMINI, True, True, True, None),
    _family("gemini-2.5-pro", 1048576, 65536, GEMINI, True, True, True, None),
    _family("gemini-2.5-flash", None, 65536, GEMINI, True, True, True, None),
    _family("gemini-2.5-flash-lite", None, 65536, GEMINI, True, True, True, None),
    _family("gemini-2.0-flash", None, 8192, GEMINI, True, False, True, None),
    # DeepSeek: JSON objects only, no schema.
    _family("deepseek-chat", None, 8192, TEXT, True, False, False, None),
    _family("deepseek-reasoner", None, 64000, TEXT, True, True, False, None),
    # xAI
    _family("grok-4", None, None, VISION, True, True, True, None),
    _family("grok-4-fast-reasoning", None, None, VISION, True, True, True, None),
    _family("grok-4-fast-non-reasoning", None, None, VISION, True, False, True, None),
    _family("grok-3-mini", None, None, TEXT, True, True, True, None),
    # Mistral
    _family("mistral-large-latest", 131072, None, TEXT, True, False, True, None),
    _family("mistral-medium-latest", 131072, None, VISION, True, False, True, None),
    _family("mistral-small-latest", 131072, None, VISION, True, False, True, None),
    _family("magistral-medium-latest", 131072, None, TEXT, True, True, True, None),
    _family("codestral-latest", None, None, TEXT, True, False, True, None),
    # Groq (JSON schema only on the models its docs list)
    _family("llama-3.3-70b-versatile", 131072, 32768, TEXT, True, False, False, None),
    _family("llama-3.1-8b-instant", 131072, 131072, TEXT, True, False, False, None),
    _family("openai/gpt-oss-120b", 131072, 65536, TEXT, True, True, True, None),
    # Cerebras
    _family("llama-3.3-70b", None, None, TEXT, True, False, True, None),
    _family("qwen-3-32b", None, None, TEXT, True, True, True, None),
    _family("gpt-oss-120b", 131072, 65536, TEXT, True, True, True, None),
    # OpenRouter's router picks a model per request: the widest it may pick.
    _family("openrouter/auto", 2000000, None, DOCS, True, True, True, None),
    # Open models as the gateways and hosts name them by default.
    _family("llama-3.3-70b-instruct-turbo", 131072, None, TEXT, True, False, False, None),
    _family("llama-v3p3-70b-instruct", 131072, None, TEXT, True, False, False, None),
    _family("glm-4.6", 200000, 128000, TEXT, True, True, False, None),
    # Amazon Nova on Bedrock
    _family("amazon.nova-pro-v1:0", None, 10000, NOVA, True, False, False, None),
    _family("amazon.nova-lite-v1:0", None, 10000, NOVA, True, False, False, None),
)
"""The built-in family profiles, registered when the vocabulary loads."""

__all__ = ["BUILTIN_PROFILES"]
