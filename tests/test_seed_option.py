"""GenerationOptions.seed on every wire: sent where the provider takes a seed,
reported dropped where it does not."""

from __future__ import annotations

import pytest

from elelem.providers import load_shape
from elelem.vocabulary import GenerationOptions, Message, ProviderId
from elelem.wire import ModelRequest

SENT = {
    "openai_chat": ("openai", lambda body: body["seed"]),
    "gemini": ("google", lambda body: body["generationConfig"]["seed"]),
    "ollama_native": ("ollama-native", lambda body: body["options"]["seed"]),
}
DROPPED = {
    "anthropic_messages": "anthropic",
    "openai_responses": "openai",
    "bedrock_converse": "bedrock",
}


def _encode(shape: str, provider: str):  # type: ignore[no-untyped-def]
    request = ModelRequest(
        model="m", messages=(Message.user("hi"),), options=GenerationOptions(seed=7)
    )
    return load_shape(shape).encode_request(request, provider=ProviderId(provider))


@pytest.mark.parametrize("shape", sorted(SENT))
def test_seed_is_sent(shape: str) -> None:
    provider, read = SENT[shape]
    encoded = _encode(shape, provider)
    assert read(encoded.body) == 7
    assert not [d for d in encoded.dropped if "seed" in str(d)]


@pytest.mark.parametrize("shape", sorted(DROPPED))
def test_seed_is_reported_where_no_wire_takes_it(shape: str) -> None:
    encoded = _encode(shape, DROPPED[shape])
    assert "seed" not in str(encoded.body)
    assert len([d for d in encoded.dropped if "seed" in str(d)]) == 1
