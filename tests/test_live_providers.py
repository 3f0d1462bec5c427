"""One small live call per provider: runs only when that provider's key is set.

Local servers (ollama, llama.cpp) need no key, so they run only when
``ELELEM_LIVE_OLLAMA_MODEL`` / ``ELELEM_LIVE_LLAMACPP_MODEL`` name a model to
use.  ``ELELEM_LIVE_<PROVIDER>_MODEL`` overrides any provider's default model.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from elelem import Client
from elelem.errors import UnsupportedError
from elelem.providers import BUILTIN, load_shape
from elelem.vocabulary import GenerationOptions, TextBlock

MODELS = {
    "anthropic": "claude-haiku-4-5",
    "openai": "gpt-5-mini",
    "google": "gemini-2.5-flash",
    "google-interactions": "gemini-2.5-flash",
    "deepseek": "deepseek-chat",
    "openrouter": "openai/gpt-4o-mini",
    "ollama": None,
    "ollama-native": None,
    "llamacpp": None,
    "groq": "llama-3.1-8b-instant",
    "cerebras": "llama3.1-8b",
    "xai": "grok-3-mini",
    "mistral": "mistral-small-latest",
    "bedrock": "amazon.nova-micro-v1:0",
    "vercel": "openai/gpt-4o-mini",
    "cloudflare": "openai/gpt-4o-mini",
    "litellm": None,
    "together": "meta-llama/Llama-3.2-3B-Instruct-Turbo",
    "fireworks": "accounts/fireworks/models/llama-v3p1-8b-instruct",
    "zai": "glm-4.5-flash",
    "huggingface": "openai/gpt-oss-20b",
    "perplexity": "sonar",
    "moonshot": "moonshot-v1-8k",
    "alibaba": "qwen-flash",
    "vertex": "gemini-2.5-flash",
    "vertex-anthropic": "claude-haiku-4-5",
    # Azure deployments are named by their owner: there is no default.
    "azure": None,
    "azure-chat": None,
    "azure-anthropic": "claude-haiku-4-5",
}

# The clouds authenticate with credentials that need no key (Application
# Default Credentials, Entra ID): their live test runs only where the
# project or resource it needs is named.
CLOUD_ENV = {
    "vertex": ("GOOGLE_CLOUD_PROJECT",),
    "vertex-anthropic": ("GOOGLE_CLOUD_PROJECT",),
    "azure": ("AZURE_OPENAI_ENDPOINT",),
    "azure-chat": ("AZURE_OPENAI_ENDPOINT",),
    "azure-anthropic": ("ANTHROPIC_FOUNDRY_RESOURCE",),
}


def test_every_builtin_provider_has_a_live_test() -> None:
    assert sorted(MODELS) == sorted(spec.name for spec in BUILTIN)


def live_model(provider: str) -> str:
    spec = next(s for s in BUILTIN if s.name == provider)
    variable = f"ELELEM_LIVE_{provider.upper().replace('-', '_')}_MODEL"
    override = os.environ.get(variable)
    # A SigV4 provider (Bedrock) also runs with AWS IAM credentials.
    signs = bool(spec.sigv4_service and os.environ.get("AWS_ACCESS_KEY_ID"))
    missing = [v for v in CLOUD_ENV.get(provider, ()) if not os.environ.get(v)]
    if missing:
        pytest.skip(f"live test: set {' and '.join(missing)} to run it")
    if spec.key_required and not signs and not any(os.environ.get(v) for v in spec.key_env):
        pytest.skip(f"live test: set {' or '.join(spec.key_env)} to run it")
    model = override or MODELS[provider]
    if model is None:
        pytest.skip(f"live test: set {variable} to a model the local server has")
    try:
        load_shape(spec.shape)
    except UnsupportedError as exc:
        pytest.skip(f"live test: {exc}")
    return model


@pytest.mark.live
@pytest.mark.parametrize("provider", sorted(MODELS))
def test_live_stream_says_ok(provider: str) -> None:
    model = live_model(provider)

    async def main() -> None:
        async with Client() as client:
            stream = client.stream(
                f"{provider}:{model}",
                "Reply with the single word: ok",
                options=GenerationOptions(max_tokens=256),
            )
            committed = []
            async with stream:
                async for _, parts in stream.with_commits():
                    committed.extend(parts)
                result = await stream.final()
        assert result.complete is True
        assert result.finish_reason in ("stop", "max-tokens")
        assert result.provider == provider
        texts = [b for b in result.content if isinstance(b, TextBlock)]
        assert committed == list(result.content)
        if result.finish_reason == "stop":
            assert "ok" in "".join(t.text for t in texts).lower()
        assert result.usage is not None and result.usage.output > 0

    asyncio.run(main())
