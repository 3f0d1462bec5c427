"""The providers elelem ships, one :class:`ProviderRecord` each.

Base URLs follow each provider's official SDK convention, so the SDK's own
base-URL variable means the same thing here (see
:mod:`elelem.providers.catalog`).  ``conventions`` are each provider's
Chat Completions dialect fields (:class:`elelem.shapes.openai_chat.Dialect`);
a provider whose record sets none gets the default dialect, which replays
reasoning in the field the response showed it in.

:mod:`elelem.vocabulary.registry` registers these through
:func:`~elelem.vocabulary.registry.register_provider`, as a plugin registers
its own; adding an OpenAI-compatible provider is one record here (or one
``register_provider`` call in a plugin).
"""

from __future__ import annotations

from elelem.vocabulary.provider_record import ModelProfile, ProviderRecord

_CHAT = "openai_chat"
_VERTEX = "https://aiplatform.googleapis.com"
_AZURE = "https://{resource}.openai.azure.com/openai/v1"
_AZURE_SCOPE = "https://cognitiveservices.azure.com/.default"
_FOUNDRY_SCOPE = "https://ai.azure.com/.default"
_CLAUDE = (
    "claude-opus-4-5",
    "claude-sonnet-4-5",
    "claude-haiku-4-5",
    "claude-opus-4-1",
)
_GEMINI = (
    "gemini-3-pro-preview",
    "gemini-2.5-pro",
    "gemini-2.5-flash",
    "gemini-2.5-flash-lite",
    "gemini-2.0-flash",
)
# OpenAI's conventions on Chat Completions; Azure OpenAI's deployments take
# the same prompt_cache_key and both retention policies.
_OPENAI_CHAT = {
    "reasoning_replay": "shown",
    "max_tokens_field": "max_completion_tokens",
    "cache": "openai",
}


def _chat(name: str, base_url: str, key_env: str, *models: str, **more: object) -> ProviderRecord:
    # A Chat Completions server whose default model is its first listed one.
    return ProviderRecord(
        name,
        _CHAT,
        base_url,
        (key_env,),
        default_model=models[0] if models else "",
        models=models,
        **more,  # type: ignore[arg-type]
    )


def _gemini_api(name: str, shape: str, **more: object) -> ProviderRecord:
    # The Gemini API (generativelanguage), on either of its wires.
    return ProviderRecord(
        name,
        shape,
        "https://generativelanguage.googleapis.com",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        auth_header="x-goog-api-key",
        auth_scheme="",
        base_url_env=("GOOGLE_GEMINI_BASE_URL",),
        default_model="gemini-2.5-flash",
        models=_GEMINI,
        price_id="google",
        telemetry_name="gcp.gemini",
        **more,  # type: ignore[arg-type]
    )


def _azure_openai(name: str, shape: str) -> ProviderRecord:
    # Azure OpenAI's v1 API, on either OpenAI wire: a key (sent bare in its
    # header) when one is set, else Entra ID credentials.
    return ProviderRecord(
        name,
        shape,
        _AZURE,
        ("AZURE_OPENAI_API_KEY",),
        auth_header="api-key",
        auth_scheme="",
        key_required=False,
        cloud="azure",
        token_scope=_AZURE_SCOPE,
        conventions=_OPENAI_CHAT,
        price_id="azure",
        telemetry_name="azure.ai.openai",
    )


_OLLAMA_HINT = "is Ollama running? start it with: ollama serve"

BUILTIN_RECORDS: tuple[ProviderRecord, ...] = (
    ProviderRecord(
        "anthropic",
        "anthropic_messages",
        "https://api.anthropic.com",
        ("ANTHROPIC_API_KEY",),
        auth_header="x-api-key",
        auth_scheme="",
        base_url_env=("ANTHROPIC_BASE_URL",),
        default_model="claude-sonnet-4-5",
        models=(
            *_CLAUDE,
            "claude-opus-4-0",
            "claude-sonnet-4-0",
            "claude-3-7-sonnet-latest",
            "claude-3-5-haiku-latest",
        ),
        aliases={
            "sonnet": "claude-sonnet-4-5",
            "opus": "claude-opus-4-5",
            "haiku": "claude-haiku-4-5",
            "claude": "claude-sonnet-4-5",
        },
        price_id="anthropic",
        telemetry_name="anthropic",
        kinds={"batch": "anthropic", "files": "anthropic_messages"},
    ),
    ProviderRecord(
        "openai",
        "openai_responses",
        "https://api.openai.com/v1",
        ("OPENAI_API_KEY",),
        base_url_env=("OPENAI_BASE_URL",),
        # Its Chat Completions endpoint (and hosts taken for it).
        conventions={
            **_OPENAI_CHAT,
            "null_content": True,
            "web_search": "web_search_options",
            "files": True,
            "audio": True,
        },
        default_model="gpt-5-mini",
        models=(
            "gpt-5.1",
            "gpt-5",
            "gpt-5-mini",
            "gpt-5-nano",
            "gpt-5-pro",
            "gpt-4.1",
            "gpt-4.1-mini",
            "gpt-4.1-nano",
            "gpt-4o",
            "gpt-4o-mini",
            "o3",
            "o3-pro",
            "o4-mini",
        ),
        aliases={
            "gpt-5": "gpt-5",
            "gpt-5-mini": "gpt-5-mini",
            "gpt-5-nano": "gpt-5-nano",
            "4.1": "gpt-4.1",
            "4o": "gpt-4o",
            "o3": "o3",
            "o4-mini": "o4-mini",
        },
        price_id="openai",
        telemetry_name="openai",
        kinds={"embeddings": "openai", "batch": "openai", "files": "openai_responses"},
    ),
    _gemini_api(
        "google",
        "gemini",
        aliases={
            "gemini": "gemini-2.5-flash",
            "gemini-flash": "gemini-2.5-flash",
            "gemini-flash-lite": "gemini-2.5-flash-lite",
            "gemini-pro": "gemini-2.5-pro",
        },
        kinds={"batch": "gemini", "files": "gemini"},
    ),
    _gemini_api("google-interactions", "gemini_interactions"),
    _chat(
        "deepseek",
        "https://api.deepseek.com",
        "DEEPSEEK_API_KEY",
        "deepseek-chat",
        "deepseek-reasoner",
        conventions={
            "reasoning_replay": "reasoning_content",
            "effort": "none",
            "cache": "automatic",
            "output": "json_object_only",
            "images": False,
        },
        aliases={"deepseek-r1": "deepseek-reasoner"},
        price_id="deepseek",
        telemetry_name="deepseek",
    ),
    _chat(
        "openrouter",
        "https://openrouter.ai/api/v1",
        "OPENROUTER_API_KEY",
        "openrouter/auto",
        conventions={
            "reasoning_replay": "reasoning_details",
            "tool_call_index": True,
            "effort": "openrouter",
            "web_search": "openrouter",
            "cache": "cache_control",
            "files": True,
            "audio": True,
        },
        price_id="openrouter",
    ),
    _chat(
        "groq",
        "https://api.groq.com/openai/v1",
        "GROQ_API_KEY",
        "llama-3.3-70b-versatile",
        "llama-3.1-8b-instant",
        "openai/gpt-oss-120b",
        conventions={"reasoning_replay": "think-tags", "cache": "automatic"},
        # Browser search is built into Groq's gpt-oss models only.
        profiles=(ModelProfile("openai/gpt-oss", {"web_search": "browser_search"}),),
        price_id="groq",
        telemetry_name="groq",
    ),
    _chat(
        "cerebras",
        "https://api.cerebras.ai/v1",
        "CEREBRAS_API_KEY",
        "llama-3.3-70b",
        "qwen-3-32b",
        "gpt-oss-120b",
        conventions={"reasoning_replay": "reasoning", "images": False},
        # GLM on Cerebras takes prior reasoning inline, as its recorded client sent it.
        profiles=(ModelProfile("zai-glm", {"reasoning_replay": "think-tags"}),),
        price_id="cerebras",
    ),
    _chat(
        "xai",
        "https://api.x.ai/v1",
        "XAI_API_KEY",
        "grok-4",
        "grok-4-fast-reasoning",
        "grok-4-fast-non-reasoning",
        "grok-3-mini",
        conventions={
            "reasoning_replay": "reasoning_content",
            "cache": "conversation_header",
            # Live Search (search_parameters) is gone: xAI searches as Agent Tools.
            "search_elsewhere": 'on its Responses API: compatible = "openai-responses"',
        },
        aliases={"grok": "grok-4"},
        price_id="x-ai",
        telemetry_name="x_ai",
    ),
    _chat(
        "mistral",
        "https://api.mistral.ai/v1",
        "MISTRAL_API_KEY",
        "mistral-large-latest",
        "mistral-medium-latest",
        "mistral-small-latest",
        "magistral-medium-latest",
        "codestral-latest",
        conventions={"effort": "none"},
        price_id="mistral",
        telemetry_name="mistral_ai",
        kinds={"embeddings": "mistral"},
    ),
    ProviderRecord(
        "bedrock",
        "bedrock_converse",
        "https://bedrock-runtime.{region}.amazonaws.com",
        ("AWS_BEARER_TOKEN_BEDROCK",),
        region_env=("AWS_REGION", "AWS_DEFAULT_REGION"),
        region="us-east-1",
        sigv4_service="bedrock",
        # Newer Claude models on Bedrock run only through an inference
        # profile; the global one works from every commercial region.
        default_model="global.anthropic.claude-sonnet-4-5-20250929-v1:0",
        models=(
            "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "anthropic.claude-3-5-sonnet-20240620-v1:0",
            "amazon.nova-pro-v1:0",
            "amazon.nova-lite-v1:0",
        ),
        price_id="aws",
        telemetry_name="aws.bedrock",
    ),
    # Gateways and hosts that serve many model families on one Chat
    # Completions endpoint: the default dialect, which replays reasoning in
    # the field the response showed it in.  Gateways name a model by its
    # vendor; hosts by their own ids.
    _chat("vercel", "https://ai-gateway.vercel.sh/v1", "AI_GATEWAY_API_KEY", "openai/gpt-5-mini"),
    _chat(
        "cloudflare",
        "https://gateway.ai.cloudflare.com/v1/{account_id}/{gateway_id}/compat",
        "CLOUDFLARE_AI_GATEWAY_API_KEY",
        "openai/gpt-5-mini",
        path_env={"account_id": "CLOUDFLARE_ACCOUNT_ID", "gateway_id": "CLOUDFLARE_GATEWAY_ID"},
    ),
    _chat(
        "together",
        "https://api.together.xyz/v1",
        "TOGETHER_API_KEY",
        "meta-llama/Llama-3.3-70B-Instruct-Turbo",
    ),
    _chat(
        "fireworks",
        "https://api.fireworks.ai/inference/v1",
        "FIREWORKS_API_KEY",
        "accounts/fireworks/models/llama-v3p3-70b-instruct",
    ),
    # z.ai (GLM) asks for thinking with its own "thinking" object.
    _chat(
        "zai",
        "https://api.z.ai/api/paas/v4",
        "ZAI_API_KEY",
        "glm-4.6",
        conventions={"reasoning_replay": "reasoning_content", "effort": "none"},
    ),
    _chat("huggingface", "https://router.huggingface.co/v1", "HF_TOKEN", "openai/gpt-oss-120b"),
    # The clouds (elelem.providers.clouds): a key (sent bare in its header)
    # when one is set, else the cloud's credentials.  They bill the same
    # models at their makers' list prices.
    ProviderRecord(
        "vertex",
        "gemini",
        _VERTEX,
        ("GOOGLE_VERTEX_API_KEY",),
        auth_header="x-goog-api-key",
        auth_scheme="",
        key_required=False,
        cloud="vertex",
        default_model="gemini-2.5-flash",
        models=_GEMINI,
        price_id="google",
    ),
    ProviderRecord(
        "vertex-anthropic",
        "anthropic_messages",
        _VERTEX,
        key_required=False,
        cloud="vertex",
        default_model="claude-sonnet-4-5",
        models=(*_CLAUDE, "claude-sonnet-4@20250514"),
        price_id="anthropic",
    ),
    _azure_openai("azure", "openai_responses"),
    _azure_openai("azure-chat", _CHAT),
    ProviderRecord(
        "azure-anthropic",
        "anthropic_messages",
        "https://{resource}.services.ai.azure.com/anthropic",
        ("ANTHROPIC_FOUNDRY_API_KEY",),
        auth_header="x-api-key",
        auth_scheme="",
        base_url_env=("ANTHROPIC_FOUNDRY_BASE_URL",),
        key_required=False,
        cloud="azure",
        token_scope=_FOUNDRY_SCOPE,
        price_id="anthropic",
    ),
    # Servers on the user's own machine: no key needed, nothing to price.
    _chat(
        "ollama",
        "http://localhost:11434/v1",
        "OLLAMA_API_KEY",
        key_required=False,
        local=True,
        connect_hint=_OLLAMA_HINT,
    ),
    ProviderRecord(
        "ollama-native",
        "ollama_native",
        "http://127.0.0.1:11434",
        ("OLLAMA_API_KEY",),
        key_required=False,
        local=True,
        connect_hint=_OLLAMA_HINT,
    ),
    _chat(
        "llamacpp",
        "http://localhost:8080/v1",
        "LLAMACPP_API_KEY",
        key_required=False,
        conventions={"reasoning_replay": "reasoning_content", "stream_usage": False},
        local=True,
        connect_hint="is llama.cpp's server running? start it with: llama-server -m MODEL.gguf",
    ),
    _chat("litellm", "http://localhost:4000/v1", "LITELLM_API_KEY", key_required=False),
    # Chat Completions servers with conventions of their own, and no model
    # known offline yet (name one: perplexity:sonar).
    _chat(
        "perplexity",
        "https://api.perplexity.ai",
        "PERPLEXITY_API_KEY",
        conventions={
            "reasoning_replay": "omit",
            "effort": "none",
            "web_search": "builtin",
            "output": "json_schema_only",
        },
        price_id="perplexity",
        telemetry_name="perplexity",
    ),
    _chat(
        "moonshot",
        "https://api.moonshot.ai/v1",
        "MOONSHOT_API_KEY",
        conventions={
            "reasoning_replay": "reasoning_content",
            "effort": "none",
            "cache": "automatic",
        },
    ),
    _chat(
        "alibaba",
        "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        "DASHSCOPE_API_KEY",
        conventions={"reasoning_replay": "reasoning_content", "effort": "none"},
    ),
    # Providers that only embed (no chat model: the catalog lists none):
    # ``voyage:voyage-3.5`` resolves here when the catalog has no ``voyage``.
    ProviderRecord(
        "voyage",
        _CHAT,
        "https://api.voyageai.com/v1",
        ("VOYAGE_API_KEY",),
        kinds={"embeddings": "voyage"},
        chat=False,
    ),
)
"""The built-in providers, in the order the CLI looks for one whose key is set."""

__all__ = ["BUILTIN_RECORDS"]
