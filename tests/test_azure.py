"""Microsoft Azure: ``azure:`` (Responses), ``azure-chat:`` (Chat Completions)
and ``azure-anthropic:`` (Claude in Foundry) on loopback stand-ins (issue #28).

The exact path, headers and body of each route; the ``api-key`` header or
Entra ID tokens from a credential object (refreshed when they near expiry);
no credential in any error."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest

from cloud_helpers import Clock, FakeAzureCredential, TokenServer
from elelem import Client
from elelem.errors import AuthenticationError, ConfigError, install_line
from elelem.providers import load_shape
from elelem.stream import AssembledResponse
from elelem.testing.servers import anthropic_text_body, replay, sse_body, status
from elelem.vocabulary import Message, ProviderId
from elelem.wire import ModelRequest
from test_contract_stream import SAMPLES

NO_CONFIG = "/nonexistent/elelem.toml"
KEY = "azure-openai-key-0123456789abcdef"
OPENAI_SCOPE = "https://cognitiveservices.azure.com/.default"


def wire_body(provider: str, model: str) -> Any:
    """The body the provider's own shape (and dialect) writes for "hi"."""
    client = Client(env={"ELELEM_CONFIG": NO_CONFIG})
    shape = load_shape(client.catalog.get(provider).shape)
    spec = client.catalog.get(provider)
    if spec.dialect:
        shape = shape.with_dialect(spec.dialect)  # type: ignore[attr-defined]
    request = ModelRequest(model=model, messages=(Message.user("hi"),))
    return json.loads(json.dumps(shape.encode_request(request, provider=ProviderId(provider)).body))


def reply_for(shape: str) -> Any:
    return replay(sse_body(SAMPLES[shape]().frames))


def ask(client: Client, model: str, text: str = "hi") -> AssembledResponse:
    async def main() -> AssembledResponse:
        async with client.stream(model, text) as stream:
            return await stream.final()

    return asyncio.run(main())


def test_azure_responses_with_an_api_key() -> None:
    with TokenServer([reply_for("openai_responses")]) as server:
        env = {
            "ELELEM_CONFIG": NO_CONFIG,
            "ELELEM_AZURE_BASE_URL": server.url + "/openai/v1",
            "AZURE_OPENAI_API_KEY": KEY,
        }
        result = ask(Client(env=env), "azure:my-gpt5-deployment")
    assert result.text == "Hello, wörld ✓again"
    (sent,) = server.model_requests()
    assert (sent.method, sent.path) == ("POST", "/openai/v1/responses")
    assert sent.headers["api-key"] == KEY and "authorization" not in sent.headers
    assert json.loads(sent.body) == wire_body("azure", "my-gpt5-deployment")
    assert json.loads(sent.body)["model"] == "my-gpt5-deployment"


def test_azure_chat_with_entra_tokens_refreshed_between_turns() -> None:
    clock = Clock()
    credential = FakeAzureCredential(
        ["eyJ0eXAi.entra-token-one.0123456789", "eyJ0eXAi.entra-token-two.0123456789"],
        lambda n: clock.now + timedelta(hours=1),
    )
    replies = [reply_for("openai_chat"), reply_for("openai_chat"), reply_for("openai_chat")]
    with TokenServer(replies) as server:
        env = {"ELELEM_CONFIG": NO_CONFIG, "ELELEM_AZURE_CHAT_BASE_URL": server.url + "/openai/v1"}
        client = Client(env=env, clock=clock, credentials={"azure-chat": credential})
        ask(client, "azure-chat:gpt-4o-prod")
        clock.now += timedelta(minutes=30)  # still fresh: the same token
        ask(client, "azure-chat:gpt-4o-prod")
        clock.now += timedelta(minutes=40)  # past its expiry: a new one
        ask(client, "azure-chat:gpt-4o-prod")
    assert credential.scopes == [(OPENAI_SCOPE,), (OPENAI_SCOPE,)]
    sent = server.model_requests()
    assert [r.path for r in sent] == ["/openai/v1/chat/completions"] * 3
    assert [r.headers["authorization"] for r in sent] == [
        "Bearer eyJ0eXAi.entra-token-one.0123456789",
        "Bearer eyJ0eXAi.entra-token-one.0123456789",
        "Bearer eyJ0eXAi.entra-token-two.0123456789",
    ]
    assert all("api-key" not in r.headers for r in sent)
    assert json.loads(sent[0].body) == wire_body("azure-chat", "gpt-4o-prod")


def test_claude_in_foundry_with_a_key_and_with_entra() -> None:
    foundry_key = "foundry-key-0123456789abcdef"
    credential = FakeAzureCredential(
        ["eyJ0eXAi.foundry-token.0123456789"], lambda n: Clock().now + timedelta(hours=1)
    )
    body = anthropic_text_body("Hi from Foundry")
    with TokenServer([replay(body), replay(body)]) as server:
        base = server.url + "/anthropic"
        keyed = {"ELELEM_CONFIG": NO_CONFIG, "ANTHROPIC_FOUNDRY_BASE_URL": base}
        assert ask(Client(env={**keyed, "ANTHROPIC_FOUNDRY_API_KEY": foundry_key}),
                   "azure-anthropic:claude-sonnet-4-5").text == "Hi from Foundry"  # fmt: skip
        entra = Client(env=keyed, credentials={"azure-anthropic": credential})
        ask(entra, "azure-anthropic:claude-sonnet-4-5")
    first, second = server.model_requests()
    assert first.path == second.path == "/anthropic/v1/messages"
    assert first.headers["x-api-key"] == foundry_key and "authorization" not in first.headers
    assert first.headers["anthropic-version"] == "2023-06-01"
    assert second.headers["authorization"] == "Bearer eyJ0eXAi.foundry-token.0123456789"
    assert credential.scopes == [("https://ai.azure.com/.default",)]
    assert json.loads(first.body) == wire_body("azure-anthropic", "claude-sonnet-4-5")


def test_the_resource_names_the_base_url() -> None:
    env = {"ELELEM_CONFIG": NO_CONFIG, "AZURE_OPENAI_API_KEY": KEY}
    by_endpoint = {**env, "AZURE_OPENAI_ENDPOINT": "https://contoso.openai.azure.com/"}
    assert Client(env=by_endpoint).target("azure:d").endpoint.base_url == (
        "https://contoso.openai.azure.com/openai/v1"
    )
    by_name = {**env, "AZURE_RESOURCE_NAME": "fabrikam"}
    assert Client(env=by_name).target("azure-chat:d").endpoint.base_url == (
        "https://fabrikam.openai.azure.com/openai/v1"
    )
    foundry = {"ELELEM_CONFIG": NO_CONFIG, "ANTHROPIC_FOUNDRY_RESOURCE": "woodgrove"}
    client = Client(env={**foundry, "ANTHROPIC_FOUNDRY_API_KEY": "k-0123456789"})
    assert client.target("azure-anthropic:claude-opus-4-5").endpoint.base_url == (
        "https://woodgrove.services.ai.azure.com/anthropic"
    )
    with pytest.raises(ConfigError) as caught:
        Client(env=env).target("azure:d")
    assert str(caught.value) == (
        "provider azure: which Azure resource? set AZURE_OPENAI_ENDPOINT, AZURE_RESOURCE_NAME "
        "or AZURE_OPENAI_RESOURCE or ELELEM_AZURE_BASE_URL"
    )
    with pytest.raises(ConfigError, match=r"'a\.b' is not an Azure resource name"):
        Client(env={**env, "AZURE_RESOURCE_NAME": "a.b"}).target("azure:d")


def test_an_entra_failure_is_an_authentication_error() -> None:
    from azure.core.exceptions import ClientAuthenticationError

    class Refusing:
        def get_token(self, *scopes: str, **kwargs: Any) -> Any:
            raise ClientAuthenticationError("AADSTS7000215: Invalid client secret provided.")

    with TokenServer([]) as server:
        env = {"ELELEM_CONFIG": NO_CONFIG, "ELELEM_AZURE_BASE_URL": server.url}
        with pytest.raises(AuthenticationError) as caught:
            ask(Client(env=env, credentials={"azure": Refusing()}), "azure:d")
    assert server.model_requests() == []
    assert str(caught.value) == (
        f"provider azure: Entra ID: no token for {OPENAI_SCOPE}: "
        "AADSTS7000215: Invalid client secret provided."
    )


def test_an_echoed_key_or_token_is_redacted() -> None:
    token = "eyJ0eXAi.entra-echoed-token.0123456789"
    credential = FakeAzureCredential([token], lambda n: Clock().now + timedelta(hours=1))
    echo_token = status(401, json.dumps({"error": {"message": f"bad {token}"}}).encode())
    echo_key = status(401, json.dumps({"error": {"message": f"bad key {KEY}"}}).encode())
    with TokenServer([echo_token, echo_key]) as server:
        env = {"ELELEM_CONFIG": NO_CONFIG, "ELELEM_AZURE_BASE_URL": server.url}
        with pytest.raises(AuthenticationError) as by_token:
            ask(Client(env=env, credentials={"azure": credential}), "azure:d")
        with pytest.raises(AuthenticationError) as by_key:
            ask(Client(env={**env, "AZURE_OPENAI_API_KEY": KEY}), "azure:d")
    for caught, secret in ((by_token, token), (by_key, KEY)):
        shown = f"{caught.value} {caught.value!r} {caught.value.body!r}"
        assert secret not in shown and secret[:10] not in shown
        assert "[redacted]" in shown


def test_a_missing_azure_identity_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "azure.identity", None)
    env = {"ELELEM_CONFIG": NO_CONFIG, "ELELEM_AZURE_BASE_URL": "http://127.0.0.1:9"}
    with pytest.raises(ConfigError) as caught:
        Client(env=env).target("azure:d")
    assert str(caught.value) == (
        "provider azure: Entra ID: azure-identity is not installed: " + install_line("azure")
    )
