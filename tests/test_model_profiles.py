"""Model-family profiles: each registered one valid, one lookup merging a
family's facts and conventions with its provider's profile of the model."""

from __future__ import annotations

import pytest

from elelem.errors import RegistryError
from elelem.providers.capabilities import model_info
from elelem.shapes.openai_chat.dialects import dialect_for
from elelem.tokens import FAMILIES, family_of
from elelem.vocabulary import ModelProfile, model_profile, provider_records, register_model_profile
from elelem.vocabulary.model_profiles import family_id, model_profiles
from elelem.vocabulary.provider_record import profile_problems


@pytest.mark.parametrize("profile", model_profiles(), ids=lambda p: p.prefix)
def test_every_registered_profile_is_valid(profile: ModelProfile) -> None:
    assert profile_problems(profile) == []
    assert family_id(profile.prefix) == profile.prefix


def test_every_record_profile_is_valid() -> None:
    profiles = [(r.name, p) for r in provider_records() for p in r.profiles]
    assert [(name, p.prefix) for name, p in profiles] == [
        ("groq", "openai/gpt-oss"),
        ("cerebras", "zai-glm"),
    ]
    assert [profile_problems(p) for _, p in profiles] == [[], []]


def test_a_profile_that_is_not_what_it_must_be_is_refused_naming_why() -> None:
    bad = ModelProfile(
        " x",
        context_window=0,
        input_modalities=("text", "smell"),
        tools="yes",  # type: ignore[arg-type]
    )
    assert profile_problems(bad) == [
        "prefix ' x' is empty or padded",
        "context_window 0 is not a positive number of tokens",
        "input modalities ['smell'] are not of ['text', 'image', 'pdf', 'audio', 'video']",
        "tools 'yes' is not true, false or unknown",
    ]
    with pytest.raises(RegistryError) as caught:
        register_model_profile(bad)
    assert str(caught.value).startswith("model profile ' x': prefix ' x' is empty or padded; ")
    taken = ModelProfile("gpt-5", max_output_tokens=1)
    with pytest.raises(RegistryError, match="model profile 'gpt-5' is already registered"):
        register_model_profile(taken)


DOCS = ("text", "image", "pdf")


@pytest.mark.parametrize(
    ("provider", "model", "want"),
    [
        # A cloud's id of a Claude model is the family's.
        (
            "bedrock",
            "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
            ModelProfile("claude-sonnet-4-5", {}, None, 64000, DOCS, True, True, True, None),
        ),
        (
            "vertex-anthropic",
            "claude-opus-4-1@20250805",
            ModelProfile("claude-opus-4-1", {}, None, 32000, DOCS, True, True, True, None),
        ),
        (
            "anthropic",
            "claude-3-7-sonnet-latest",
            ModelProfile("claude-3-7-sonnet", {}, None, 64000, DOCS, True, True, False, True),
        ),
        (
            "openrouter",
            "openai/gpt-5-mini",
            ModelProfile("gpt-5-mini", {}, None, 128000, DOCS, True, True, True, None),
        ),
        (
            "vertex",
            "gemini-2.5-pro",
            ModelProfile(
                "gemini-2.5-pro",
                {},
                1048576,
                65536,
                ("text", "image", "pdf", "audio", "video"),
                True,
                True,
                True,
                None,
            ),
        ),
        # The provider's profile of the model puts its conventions over the family's facts.
        (
            "groq",
            "openai/gpt-oss-120b",
            ModelProfile(
                "openai/gpt-oss-120b",
                {"web_search": "browser_search"},
                131072,
                65536,
                ("text",),
                True,
                True,
                True,
                None,
            ),
        ),
        # A provider profile without a family: its conventions, no fact guessed.
        ("cerebras", "zai-glm-4.6", ModelProfile("zai-glm", {"reasoning_replay": "think-tags"})),
        # Nothing known: an empty profile named by the model.
        ("openai", "gpt-99-turbo", ModelProfile("gpt-99-turbo")),
        # A longer id is not the family its prefix names: o3's facts are not o3-mini's.
        ("openai", "o3-mini", ModelProfile("o3-mini")),
    ],
)
def test_the_one_lookup_of_a_model_profile(provider: str, model: str, want: ModelProfile) -> None:
    assert model_profile(provider, model) == want


def test_the_catalog_and_the_dialect_read_the_same_lookup() -> None:
    info = model_info("groq", "openai/gpt-oss-120b")
    assert (info.context_window, info.max_output_tokens, info.input_modalities) == (
        131072,
        65536,
        ("text",),
    )
    assert info.sources["max_output_tokens"] == "elelem"
    assert dialect_for("groq", "openai/gpt-oss-120b").web_search == "browser_search"
    assert dialect_for("groq", "llama-3.3-70b-versatile").web_search != "browser_search"


def test_a_registered_family_profile_brings_its_conventions_to_every_host() -> None:
    # A family served by several OpenAI-compatible hosts, described once.
    register_model_profile(
        ModelProfile(
            "storeperf-think-1",
            {"reasoning_replay": "think-tags"},
            context_window=32768,
            input_modalities=("text",),
        )
    )
    for host in ("together", "fireworks", "huggingface"):
        assert dialect_for(host, "storeperf-think-1").reasoning_replay == "think-tags"
        assert dialect_for(host, "other-model").reasoning_replay != "think-tags"
        assert model_info(host, "vendor/storeperf-think-1").context_window == 32768


def test_token_rules_are_the_records() -> None:
    assert {name: FAMILIES[name] for name in ("anthropic", "bedrock", "google", "deepseek")} == {
        "anthropic": "anthropic",
        "bedrock": "anthropic",
        "google": "gemini",
        "deepseek": "openai",
    }
    # Claude behind another cloud's endpoint is estimated by Anthropic's rules.
    assert [family_of(p) for p in ("vertex-anthropic", "azure-anthropic", "vertex")] == [
        "anthropic",
        "anthropic",
        "gemini",
    ]
    assert family_of("a-server-nobody-registered") == "openai"
