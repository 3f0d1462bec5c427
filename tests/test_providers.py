"""The provider catalog: addressing, keys, base-URL overrides, config files, lazy shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from elelem.errors import ConfigError, UnsupportedError
from elelem.providers import (
    BUILTIN,
    Catalog,
    ProviderSpec,
    apply_config,
    config_path,
    load_catalog,
    load_shape,
    parse_model,
)

EXPECTED = {
    "anthropic": (
        "anthropic_messages",
        "https://api.anthropic.com",
        ("ANTHROPIC_API_KEY",),
        "x-api-key",
    ),
    "openai": (
        "openai_responses",
        "https://api.openai.com/v1",
        ("OPENAI_API_KEY",),
        "authorization",
    ),
    "google": (
        "gemini",
        "https://generativelanguage.googleapis.com",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        "x-goog-api-key",
    ),
    "deepseek": ("openai_chat", "https://api.deepseek.com", ("DEEPSEEK_API_KEY",), "authorization"),
    "openrouter": (
        "openai_chat",
        "https://openrouter.ai/api/v1",
        ("OPENROUTER_API_KEY",),
        "authorization",
    ),
    "ollama": ("openai_chat", "http://localhost:11434/v1", ("OLLAMA_API_KEY",), "authorization"),
    "ollama-native": (
        "ollama_native",
        "http://127.0.0.1:11434",
        ("OLLAMA_API_KEY",),
        "authorization",
    ),
    "llamacpp": ("openai_chat", "http://localhost:8080/v1", ("LLAMACPP_API_KEY",), "authorization"),
    "groq": ("openai_chat", "https://api.groq.com/openai/v1", ("GROQ_API_KEY",), "authorization"),
    "perplexity": (
        "openai_chat",
        "https://api.perplexity.ai",
        ("PERPLEXITY_API_KEY",),
        "authorization",
    ),
    "moonshot": (
        "openai_chat",
        "https://api.moonshot.ai/v1",
        ("MOONSHOT_API_KEY",),
        "authorization",
    ),
    "alibaba": (
        "openai_chat",
        "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        ("DASHSCOPE_API_KEY",),
        "authorization",
    ),
    "cerebras": (
        "openai_chat",
        "https://api.cerebras.ai/v1",
        ("CEREBRAS_API_KEY",),
        "authorization",
    ),
    "xai": ("openai_chat", "https://api.x.ai/v1", ("XAI_API_KEY",), "authorization"),
    "mistral": ("openai_chat", "https://api.mistral.ai/v1", ("MISTRAL_API_KEY",), "authorization"),
    # The common gateways (issue #31), each in the default (echo) dialect.
    "vercel": (
        "openai_chat",
        "https://ai-gateway.vercel.sh/v1",
        ("AI_GATEWAY_API_KEY",),
        "authorization",
    ),
    "cloudflare": (
        "openai_chat",
        "https://gateway.ai.cloudflare.com/v1/{account_id}/{gateway_id}/compat",
        ("CLOUDFLARE_AI_GATEWAY_API_KEY",),
        "authorization",
    ),
    "litellm": ("openai_chat", "http://localhost:4000/v1", ("LITELLM_API_KEY",), "authorization"),
    "together": (
        "openai_chat",
        "https://api.together.xyz/v1",
        ("TOGETHER_API_KEY",),
        "authorization",
    ),
    "fireworks": (
        "openai_chat",
        "https://api.fireworks.ai/inference/v1",
        ("FIREWORKS_API_KEY",),
        "authorization",
    ),
    "zai": ("openai_chat", "https://api.z.ai/api/paas/v4", ("ZAI_API_KEY",), "authorization"),
    "huggingface": (
        "openai_chat",
        "https://router.huggingface.co/v1",
        ("HF_TOKEN",),
        "authorization",
    ),
    "bedrock": (
        "bedrock_converse",
        "https://bedrock-runtime.{region}.amazonaws.com",
        ("AWS_BEARER_TOKEN_BEDROCK",),
        "authorization",
    ),
    # The clouds (issue #28): a key wins, else the cloud's credentials.
    "vertex": (
        "gemini",
        "https://aiplatform.googleapis.com",
        ("GOOGLE_VERTEX_API_KEY",),
        "x-goog-api-key",
    ),
    "vertex-anthropic": (
        "anthropic_messages",
        "https://aiplatform.googleapis.com",
        (),
        "authorization",
    ),
    "azure": (
        "openai_responses",
        "https://{resource}.openai.azure.com/openai/v1",
        ("AZURE_OPENAI_API_KEY",),
        "api-key",
    ),
    "azure-chat": (
        "openai_chat",
        "https://{resource}.openai.azure.com/openai/v1",
        ("AZURE_OPENAI_API_KEY",),
        "api-key",
    ),
    "google-interactions": (
        "gemini_interactions",
        "https://generativelanguage.googleapis.com",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        "x-goog-api-key",
    ),
    "azure-anthropic": (
        "anthropic_messages",
        "https://{resource}.services.ai.azure.com/anthropic",
        ("ANTHROPIC_FOUNDRY_API_KEY",),
        "x-api-key",
    ),
}


def test_builtin_catalog_is_exactly_the_issue_list() -> None:
    got = {s.name: (s.shape, s.base_url, s.key_env, s.auth_header) for s in BUILTIN}
    assert got == EXPECTED


def test_parse_model_splits_at_first_colon() -> None:
    assert parse_model("anthropic:claude-sonnet-4-5") == ("anthropic", "claude-sonnet-4-5")
    assert parse_model("ollama:llama3:8b") == ("ollama", "llama3:8b")
    for bad in ("claude", ":x", "anthropic:"):
        with pytest.raises(ConfigError) as info:
            parse_model(bad)
        assert str(info.value) == (
            f"model {bad!r} must be addressed as provider:model (e.g. anthropic:claude-sonnet-4-5)"
        )


def test_unknown_provider_names_the_known_ones() -> None:
    with pytest.raises(ConfigError) as info:
        Catalog().resolve("nope:m")
    assert str(info.value) == (
        "unknown provider 'nope' (known: alibaba, anthropic, azure, azure-anthropic, azure-chat, "
        "bedrock, cerebras, cloudflare, deepseek, fireworks, google, google-interactions, "
        "groq, huggingface, "
        "litellm, llamacpp, mistral, moonshot, ollama, ollama-native, openai, openrouter, "
        "perplexity, together, "
        "vercel, vertex, vertex-anthropic, xai, zai)"
    )


def test_endpoint_uses_sdk_and_elelem_base_url_overrides_in_order() -> None:
    spec = Catalog().get("anthropic")
    env = {"ANTHROPIC_API_KEY": "k1"}
    assert spec.endpoint(env).base_url == "https://api.anthropic.com"
    env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:1"
    assert spec.endpoint(env).base_url == "http://127.0.0.1:1"
    env["ELELEM_ANTHROPIC_BASE_URL"] = "http://127.0.0.1:2"
    assert spec.endpoint(env).base_url == "http://127.0.0.1:2"
    openai = Catalog().get("openai")
    assert (
        openai.endpoint({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://x/v1"}).base_url
        == "http://x/v1"
    )
    assert Catalog().get("llamacpp").override_env == "ELELEM_LLAMACPP_BASE_URL"


def test_auth_header_and_scheme_per_provider_and_key_only_in_headers() -> None:
    anthropic = Catalog().get("anthropic").endpoint({"ANTHROPIC_API_KEY": "sk-ant-123456"})
    assert anthropic.request_headers({"anthropic-version": "v"}) == {
        "anthropic-version": "v",
        "x-api-key": "sk-ant-123456",
    }
    assert "sk-ant-123456" not in repr(anthropic) and "sk-ant-123456" not in str(anthropic)
    groq = Catalog().get("groq").endpoint({"GROQ_API_KEY": "gsk-999999"})
    # A shape header can never replace the auth header.
    assert groq.request_headers({"Authorization": "evil"}) == {"authorization": "Bearer gsk-999999"}
    google = Catalog().get("google").endpoint({"GOOGLE_API_KEY": "g-key-1"})
    assert google.request_headers({}) == {"x-goog-api-key": "g-key-1"}


def test_missing_key_names_the_variable_and_local_servers_need_none() -> None:
    with pytest.raises(ConfigError) as info:
        Catalog().get("google").endpoint({})
    assert (
        str(info.value)
        == "provider google needs an API key: run 'elelem keys set google' or set GEMINI_API_KEY or GOOGLE_API_KEY"
    )
    assert Catalog().get("ollama").endpoint({}).api_key is None
    assert Catalog().get("ollama").endpoint({}).request_headers({}) == {}


def test_key_given_in_code_wins() -> None:
    ep = Catalog().get("xai").endpoint({"XAI_API_KEY": "env-key"}, api_key="code-key")
    assert ep.api_key == "code-key"


def test_redaction_replaces_the_key_everywhere() -> None:
    ep = Catalog().get("openai").endpoint({"OPENAI_API_KEY": "sk-abcdef"})
    assert ep.redact("bad key sk-abcdef!") == "bad key [redacted]!"
    assert ep.redact_bytes(b"sk-abcdef sk-abcdef") == b"[redacted] [redacted]"


def test_load_shape_lazily_and_unsupported_for_missing_shapes() -> None:
    shape = load_shape("anthropic_messages")
    assert shape.name == "anthropic_messages" and shape.framing == "sse"
    with pytest.raises(UnsupportedError) as info:
        load_shape("no_such_shape_yet")
    assert str(info.value) == "shape no_such_shape_yet is not supported yet"
    with pytest.raises(ConfigError):
        load_shape("../evil")


def test_compatible_endpoint_added_in_code() -> None:
    catalog = Catalog()
    spec = catalog.add_compatible("local", "http://127.0.0.1:9/v1", key_env=["LOCAL_KEY"])
    assert spec == ProviderSpec("local", "openai_chat", "http://127.0.0.1:9/v1", ("LOCAL_KEY",))
    claude_proxy = catalog.add_compatible("proxy", "http://127.0.0.1:9", compatible="anthropic")
    assert (claude_proxy.shape, claude_proxy.auth_header, claude_proxy.key_required) == (
        "anthropic_messages",
        "x-api-key",
        False,
    )
    assert catalog.resolve("local:qwen") == (spec, "qwen")
    with pytest.raises(ConfigError) as info:
        catalog.add_compatible("x", "http://h", compatible="cohere")
    assert str(info.value) == (
        "provider x: compatible must be one of anthropic, openai, openai-chat, openai-responses"
    )
    with pytest.raises(ConfigError):
        catalog.add_compatible("Bad Name", "http://h")
    with pytest.raises(ConfigError):
        catalog.add_compatible("ftp", "ftp://h")


def test_config_file_adds_endpoints_and_amends_builtins(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        """
[providers.local]
compatible = "openai"
base_url = "http://127.0.0.1:8000/v1"
key_env = "LOCAL_KEY"
headers = { "x-team" = "blue" }

[providers.anthropic]
base_url = "https://proxy.example/anthropic"

[providers.mine]
shape = "openai_responses"
base_url = "http://127.0.0.1:7/v1"
""",
        encoding="utf-8",
    )
    catalog = load_catalog(path)
    local = catalog.get("local")
    assert local == ProviderSpec(
        "local",
        "openai_chat",
        "http://127.0.0.1:8000/v1",
        ("LOCAL_KEY",),
        headers={"x-team": "blue"},
    )
    anthropic = catalog.get("anthropic")
    assert anthropic.base_url == "https://proxy.example/anthropic"
    assert anthropic.auth_header == "x-api-key" and anthropic.key_env == ("ANTHROPIC_API_KEY",)
    mine = catalog.get("mine")
    assert (mine.shape, mine.key_required, mine.key_env) == ("openai_responses", False, ())
    assert len(catalog.names()) == len(BUILTIN) + 2


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            '[providers.x]\ncompatible = "openai"\nbase_url = "http://h"\nkey = "sk"\n',
            "[providers.x]: unknown key(s) key",
        ),
        (
            '[providers.x]\nbase_url = "http://h"\n',
            "[providers.x]: a new provider needs compatible = ... or shape = ...",
        ),
        ('[providers.x]\ncompatible = "openai"\n', "[providers.x]: base_url is required"),
        (
            '[providers.x]\ncompatible = 3\nbase_url = "http://h"\n',
            "[providers.x]: compatible must be a string",
        ),
        (
            '[providers.x]\ncompatible = "openai"\nbase_url = "http://h"\nkey_env = 1\n',
            "[providers.x]: key_env must be a string or a list of strings",
        ),
        (
            '[providers.x]\ncompatible = "openai"\nbase_url = "http://h"\nheaders = { a = 1 }\n',
            "[providers.x]: headers must be a table of strings",
        ),
        ("providers = 1\n", "[providers] must be a table"),
        ("[providers\n", "not valid TOML"),
    ],
)
def test_config_errors_name_file_table_and_key(tmp_path: Path, toml: str, message: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_catalog(path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)


def test_config_path_and_missing_files(tmp_path: Path) -> None:
    assert config_path({"ELELEM_CONFIG": str(tmp_path / "a.toml")}) == tmp_path / "a.toml"
    # The default file may be absent: built-ins only.
    assert len(load_catalog(env={"ELELEM_CONFIG": str(tmp_path / "absent.toml")}).names()) == len(
        BUILTIN
    )
    with pytest.raises(ConfigError) as info:
        load_catalog(tmp_path / "absent.toml")
    assert str(info.value) == f"{tmp_path / 'absent.toml'}: no such config file"


def test_apply_config_in_code() -> None:
    catalog = Catalog()
    apply_config(catalog, {"providers": {"groq": {"base_url": "http://127.0.0.1:5/v1"}}})
    assert catalog.get("groq").base_url == "http://127.0.0.1:5/v1"
    assert catalog.get("groq").key_required is True


@pytest.mark.parametrize(
    ("provider", "url"),
    [
        ("anthropic", "https://api.anthropic.com/v1/messages"),
        ("openai", "https://api.openai.com/v1/responses"),
        (
            "google",
            "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse",
        ),
        ("deepseek", "https://api.deepseek.com/chat/completions"),
        ("openrouter", "https://openrouter.ai/api/v1/chat/completions"),
        ("ollama", "http://localhost:11434/v1/chat/completions"),
        ("llamacpp", "http://localhost:8080/v1/chat/completions"),
        ("groq", "https://api.groq.com/openai/v1/chat/completions"),
        ("cerebras", "https://api.cerebras.ai/v1/chat/completions"),
        ("xai", "https://api.x.ai/v1/chat/completions"),
        ("mistral", "https://api.mistral.ai/v1/chat/completions"),
    ],
)
def test_catalog_base_url_and_shape_path_make_the_real_endpoint(provider: str, url: str) -> None:
    from elelem import Client

    env = {spec.key_env[0]: "k-123456" for spec in BUILTIN if spec.key_env}
    env["ELELEM_CONFIG"] = "/nonexistent/elelem.toml"
    endpoint, shape, request = Client(env=env).prepare(f"{provider}:m", "hi")
    encoded = shape.encode_request(request, provider=endpoint.provider)
    assert endpoint.url(encoded.path) == url


def test_base_url_override_must_be_http() -> None:
    with pytest.raises(ConfigError) as info:
        Catalog().get("anthropic").endpoint(
            {"ANTHROPIC_API_KEY": "k", "ELELEM_ANTHROPIC_BASE_URL": "localhost:8080"}
        )
    assert str(info.value) == "ELELEM_ANTHROPIC_BASE_URL must be an http:// or https:// URL"
    for bad in ("http://127.0.0.1:99999", "https://", "file:///etc/passwd"):
        with pytest.raises(ConfigError):
            Catalog().get("openai").endpoint({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": bad})
        with pytest.raises(ConfigError):
            Catalog().add_compatible("x", bad)


def test_cloudflare_fills_its_account_and_gateway_from_the_environment() -> None:
    # developers.cloudflare.com/ai-gateway/chat-completion/: the OpenAI-compatible
    # endpoint is https://gateway.ai.cloudflare.com/v1/{account_id}/{gateway_id}/compat.
    spec = Catalog().get("cloudflare")
    env = {"CLOUDFLARE_AI_GATEWAY_API_KEY": "k", "CLOUDFLARE_ACCOUNT_ID": "acc1"}
    with pytest.raises(ConfigError) as info:
        spec.endpoint(env)
    assert str(info.value) == (
        "provider cloudflare: its base URL needs {gateway_id}: set CLOUDFLARE_GATEWAY_ID "
        "(letters, digits, '-' and '_')"
    )
    env["CLOUDFLARE_GATEWAY_ID"] = "gw-2"
    assert spec.endpoint(env).base_url == "https://gateway.ai.cloudflare.com/v1/acc1/gw-2/compat"


@pytest.mark.parametrize(
    ("url", "provider"),
    [
        ("https://ai-gateway.vercel.sh/v1/chat/completions", "vercel"),
        ("https://gateway.ai.cloudflare.com/v1/a1/g1/compat/chat/completions", "cloudflare"),
        ("https://api.together.xyz/v1/chat/completions", "together"),
        ("https://api.fireworks.ai/inference/v1/chat/completions", "fireworks"),
        ("https://api.z.ai/api/paas/v4/chat/completions", "zai"),
        ("https://router.huggingface.co/v1/chat/completions", "huggingface"),
    ],
)
def test_recorded_gateway_urls_name_their_gateway(url: str, provider: str) -> None:
    from elelem.providers.recognize import provider_of_url

    assert provider_of_url(Catalog(), url, "openai_chat") == provider
