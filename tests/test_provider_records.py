"""A provider is one record (:class:`elelem.vocabulary.ProviderRecord`):
every table keyed by provider name is derived from the registered records,
each record is valid on its own, and a new OpenAI-compatible provider is one
``register_provider`` call that then serves requests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from elelem.batches import BATCH_PROVIDERS
from elelem.cli.ask import LOCAL_HINTS
from elelem.embeddings import EMBEDDING_PROVIDERS, embedding_wires
from elelem.errors import RegistryError, UnsupportedError
from elelem.providers import BUILTIN, Catalog
from elelem.providers.catalog import shape_of, spec_of
from elelem.providers.files import FILES_PROVIDERS
from elelem.providers.live import live_protocol, live_providers
from elelem.providers.models import ALIASES, DEFAULT_MODELS, KNOWN_MODELS
from elelem.providers.pricing import LOCAL_PROVIDERS, PROVIDER_IDS
from elelem.shapes.openai_chat import DIALECTS, Dialect, dialect_for
from elelem.shapes.registry import shape_named, shape_names
from elelem.telemetry import PROVIDER_NAMES
from elelem.vocabulary import (
    ModelProfile,
    ProviderRecord,
    provider_record,
    provider_records,
    register_provider,
)
from elelem.vocabulary.builtin_providers import BUILTIN_RECORDS
from elelem.vocabulary.provider_record import record_problems
from elelem.wire.files import FilesWire

RECORDS = provider_records()


@pytest.mark.parametrize("record", RECORDS, ids=[r.name for r in RECORDS])
def test_every_record_is_valid(record: ProviderRecord) -> None:
    """What the table-agreement test checked, now checked on each record."""
    assert record_problems(record) == []
    assert record.shape in shape_names()
    catalog = Catalog([record])  # a valid name, shape name and base URL
    assert shape_of(catalog.get(record.name)).name == record.shape
    if record.shape == "openai_chat" or record.conventions:
        # Its conventions are Chat Completions fields of the right types.
        assert isinstance(dialect_for(record.name), Dialect)
        for profile in record.profiles:
            assert isinstance(dialect_for(record.name, profile.prefix + "-x"), Dialect)
    for model in record.models:
        assert catalog.resolve(f"{record.name}:{model}") == (catalog.get(record.name), model)
    if record.default_model:
        assert catalog.resolve(record.name)[1] == record.default_model
    for alias, model in record.aliases.items():
        assert Catalog().resolve(alias) == (Catalog().get(record.name), model)
    if "embeddings" in record.kinds:
        assert record.kinds["embeddings"] in embedding_wires()
    if "batch" in record.kinds:
        batch_wires = [getattr(shape_named(name), "batch", None) for name in shape_names()]
        assert record.kinds["batch"] in {w.name for w in batch_wires if w is not None}
    if "files" in record.kinds:
        assert isinstance(getattr(shape_named(record.kinds["files"]), "files", None), FilesWire)


def test_the_name_keyed_tables_are_the_records() -> None:
    chat = [r for r in BUILTIN_RECORDS if r.chat]
    assert [s.name for s in BUILTIN] == [r.name for r in chat]
    assert tuple(spec_of(r) for r in chat) == BUILTIN
    assert dict(DEFAULT_MODELS) == {r.name: r.default_model for r in RECORDS if r.default_model}
    assert dict(KNOWN_MODELS) == {r.name: r.models for r in RECORDS if r.models}
    assert dict(PROVIDER_IDS) == {r.name: r.price_id for r in RECORDS if r.price_id}
    assert set(LOCAL_PROVIDERS) == {"ollama", "ollama-native", "llamacpp"}
    assert set(LOCAL_HINTS) == {"ollama", "ollama-native", "llamacpp"}
    assert LOCAL_HINTS["ollama"] == "is Ollama running? start it with: ollama serve"
    assert dict(PROVIDER_NAMES) == {r.name: r.telemetry_name for r in RECORDS if r.telemetry_name}
    assert dict(ALIASES) == {
        alias: f"{r.name}:{model}" for r in RECORDS for alias, model in r.aliases.items()
    }
    assert set(EMBEDDING_PROVIDERS) == {"voyage"}
    assert dict(FILES_PROVIDERS) == {
        "anthropic": "anthropic_messages",
        "openai": "openai_responses",
        "google": "gemini",
    }
    assert dict(BATCH_PROVIDERS) == {
        "anthropic": "anthropic",
        "openai": "openai",
        "google": "gemini",
    }
    # Every Chat Completions provider is a dialect, and OpenAI (for its chat
    # endpoint); a provider that only embeds is none.
    assert "voyage" not in DIALECTS and "openai" in DIALECTS and "azure-chat" in DIALECTS
    assert DIALECTS["groq"] == Dialect(reasoning_replay="think-tags", cache="automatic")


def test_a_model_family_profile_is_merged_over_its_provider() -> None:
    cerebras = dialect_for("cerebras", "llama-3.3-70b")
    glm = dialect_for("cerebras", "zai-glm-4.6")
    assert (cerebras.reasoning_replay, cerebras.images) == ("reasoning", False)
    # GLM's own rule wins; the provider's (no images) still holds.
    assert (glm.reasoning_replay, glm.images) == ("think-tags", False)
    record = ProviderRecord(
        "p", "openai_chat", "http://127.0.0.1:9/v1", profiles=(ModelProfile("a", {"x": 1}),)
    )
    assert record.profile_for("abc") == ModelProfile("a", {"x": 1})
    assert record.profile_for("b") is None


def test_a_record_that_contradicts_itself_is_refused() -> None:
    bad = ProviderRecord(
        "contradicts", "openai_chat", "http://127.0.0.1:9/v1", default_model="m", models=("n",)
    )
    with pytest.raises(RegistryError) as info:
        register_provider(bad)
    assert str(info.value) == "provider contradicts: default model 'm' is not among its models"
    assert provider_record("contradicts") is None
    taken = ProviderRecord("groq", "openai_chat", "http://127.0.0.1:9/v1")
    with pytest.raises(RegistryError) as info:
        register_provider(taken)
    assert str(info.value) == "provider 'groq' is already registered"
    # The built-in record again is no change.
    register_provider(provider_record("groq"))  # type: ignore[arg-type]


ONE_RECORD = textwrap.dedent(
    """
    import json
    from elelem import SyncClient
    from elelem.testing.servers import LoopbackServer, replay, sse_body
    from elelem.vocabulary import GenerationOptions, ProviderRecord, register_provider

    # A Chat Completions stream as https://platform.openai.com/docs/api-reference/chat-streaming
    # documents it: chunks, the finish reason, then [DONE].
    chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "acme-1"}
    ANSWER = sse_body([
        (None, json.dumps({**chunk, "choices": [{"index": 0, "delta": {"content": "Hello"}}]})),
        (None, json.dumps({**chunk, "choices": [
            {"index": 0, "delta": {}, "finish_reason": "stop"}]})),
        (None, "[DONE]"),
    ])
    with LoopbackServer([replay(ANSWER)]) as server:
        register_provider(ProviderRecord(
            "acme", "openai_chat", server.url + "/v1", ("ACME_API_KEY",),
            conventions={"max_tokens_field": "max_completion_tokens", "stream_usage": False},
            default_model="acme-1", models=("acme-1",), aliases={"roadrunner": "acme-1"},
        ))
        with SyncClient(env={"ACME_API_KEY": "k-acme-0123456789"}) as client:
            options = GenerationOptions(max_tokens=50)
            with client.stream("roadrunner", "Hi", options=options) as stream:
                final = stream.final()
        (request,) = server.requests
    print(json.dumps({
        "text": final.text, "provider": final.provider, "model": final.model,
        "method": request.method, "path": request.path,
        "auth": request.headers.get("authorization"), "body": json.loads(request.body),
    }))
    """
)


def test_a_compatible_provider_is_one_record(tmp_path: Path) -> None:
    """In a fresh interpreter: one ``register_provider`` call, and a request
    by its alias goes to its server in its conventions."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    env["XDG_CONFIG_HOME"] = str(tmp_path)  # no user config file
    env["ELELEM_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-c", ONE_RECORD],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "text": "Hello",
        "provider": "acme",
        "model": "acme-1",
        "method": "POST",
        "path": "/v1/chat/completions",
        "auth": "Bearer k-acme-0123456789",
        # Its conventions: the limit as max_completion_tokens, no stream_options.
        "body": {
            "model": "acme-1",
            "messages": [{"role": "user", "content": "Hi"}],
            "stream": True,
            "max_completion_tokens": 50,
        },
    }


def test_a_provider_without_live_sessions_is_told_which_have_them() -> None:
    target = Catalog().target("anthropic:claude-x", {}, {"anthropic": "k-0123456789"})
    with pytest.raises(UnsupportedError) as info:
        live_protocol(target)
    # Derived from the records: those whose wire holds live sessions.
    assert live_providers() == ["openai", "google", "vertex", "azure"]
    assert str(info.value) == (
        "anthropic (anthropic_messages) has no live sessions in elelem; "
        "these providers have: openai, google, vertex, azure"
    )
