"""Google Vertex AI: ``vertex:`` (Gemini) and ``vertex-anthropic:`` (Claude) on
loopback stand-ins of Vertex and of Google's token endpoint (issue #28).

Each test checks what went on the wire exactly (path, headers, body), that
tokens come from Application Default Credentials made in the test and are
refreshed when they near expiry, and that no credential reaches an error."""

from __future__ import annotations

import asyncio
import json
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from cloud_helpers import (
    CLIENT_EMAIL,
    CLIENT_SECRET,
    REFRESH_TOKEN,
    Clock,
    TokenServer,
    authorized_user_file,
    form,
    json_reply,
    rsa_key,
    service_account_file,
    verify_assertion,
)
from elelem import Client, SyncClient
from elelem.errors import AuthenticationError, ConfigError, install_line
from elelem.providers import load_shape
from elelem.stream import AssembledResponse
from elelem.testing.servers import anthropic_text_body, replay, sse_body, status
from elelem.vocabulary import Message, ProviderId, ReasoningBlock, TextBlock
from elelem.wire import ModelRequest
from test_contract_stream import SAMPLES

GEMINI = "vertex:gemini-2.5-flash"
CLAUDE = "vertex-anthropic:claude-sonnet-4-5"
NO_CONFIG = "/nonexistent/elelem.toml"


def gemini_reply() -> Any:
    return replay(sse_body(SAMPLES["gemini"]().frames))


def wire_body(shape: str, model: str, provider: str, *, stream: bool = True) -> Any:
    """The body the shape's own encoder writes for the one-message request used here."""
    request = ModelRequest(model=model, messages=(Message.user("hi"),))
    encoded = load_shape(shape).encode_request(
        request, provider=ProviderId(provider), stream=stream
    )
    return json.loads(json.dumps(encoded.body))


def vertex_env(server: TokenServer, credentials: Path, **extra: str) -> dict[str, str]:
    return {
        "ELELEM_CONFIG": NO_CONFIG,
        "GOOGLE_APPLICATION_CREDENTIALS": str(credentials),
        "ELELEM_VERTEX_BASE_URL": server.url,
        "ELELEM_VERTEX_ANTHROPIC_BASE_URL": server.url,
        **extra,
    }


def ask(client: Client, model: str, text: str = "hi") -> AssembledResponse:
    async def main() -> AssembledResponse:
        async with client.stream(model, text) as stream:
            return await stream.final()

    return asyncio.run(main())


def test_vertex_gemini_with_a_service_account_made_here(tmp_path: Path) -> None:
    key = rsa_key()
    with TokenServer([gemini_reply()]) as server:
        file = service_account_file(tmp_path, server.token_uri, key, "proj-from-file")
        env = vertex_env(server, file, GOOGLE_CLOUD_LOCATION="us-central1")
        result = ask(Client(env=env), GEMINI)
    texts = [b.text for b in result.content if isinstance(b, TextBlock | ReasoningBlock)]
    assert texts == ["Hello, wörld ✓", "hmm", "again"]
    (token_request,) = server.token_requests()
    fields = form(token_request)
    assert fields["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    claims = verify_assertion(fields["assertion"], key.public)
    # google-auth always names Google's endpoint as the audience; the
    # assertion itself went to the file's own token_uri (this server).
    assert (claims["iss"], claims["aud"]) == (CLIENT_EMAIL, "https://oauth2.googleapis.com/token")
    assert claims["exp"] - claims["iat"] == 3600
    assert claims["scope"] == "https://www.googleapis.com/auth/cloud-platform"
    (sent,) = server.model_requests()
    assert sent.method == "POST"
    assert sent.path == (
        "/v1/projects/proj-from-file/locations/us-central1/publishers/google/models/"
        "gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert sent.headers["authorization"] == f"Bearer {server.tokens[0]}"
    assert "x-goog-api-key" not in sent.headers
    assert json.loads(sent.body) == wire_body("gemini", "gemini-2.5-flash", "vertex")


def test_the_global_location_and_a_project_from_the_environment(tmp_path: Path) -> None:
    key = rsa_key()
    with TokenServer([gemini_reply()]) as server:
        file = service_account_file(tmp_path, server.token_uri, key, "proj-from-file")
        env = vertex_env(server, file, GOOGLE_CLOUD_PROJECT="proj-env")
        ask(Client(env=env), GEMINI)
    (sent,) = server.model_requests()
    assert sent.path == (
        "/v1/projects/proj-env/locations/global/publishers/google/models/"
        "gemini-2.5-flash:streamGenerateContent?alt=sse"
    )


def test_vertex_base_url_follows_the_location() -> None:
    env = {"ELELEM_CONFIG": NO_CONFIG, "GOOGLE_VERTEX_API_KEY": "AQ.express-key-0123456789"}
    client = Client(env=env)
    assert client.target(GEMINI).endpoint.base_url == "https://aiplatform.googleapis.com"
    located = Client(env={**env, "GOOGLE_CLOUD_LOCATION": "europe-west4"})
    assert located.target(GEMINI).endpoint.base_url == (
        "https://europe-west4-aiplatform.googleapis.com"
    )
    with pytest.raises(ConfigError, match=r"the location 'eu/x' is not a Google Cloud location"):
        Client(env={**env, "GOOGLE_CLOUD_LOCATION": "eu/x"}).target(GEMINI)


def test_vertex_anthropic_with_a_gcloud_user_file_and_its_own_token_uri(tmp_path: Path) -> None:
    body = anthropic_text_body("Bonjour", usage=(11, 3))
    with TokenServer([replay(body)], token_path="/oauth2/token") as server:
        file = authorized_user_file(tmp_path, server.token_uri)
        env = vertex_env(server, file, GOOGLE_CLOUD_PROJECT="proj-7")
        result = ask(Client(env=env), CLAUDE)
    assert result.text == "Bonjour"
    (token_request,) = server.token_requests()
    assert form(token_request) == {
        "grant_type": "refresh_token",
        "client_id": "764086051850-test.apps.googleusercontent.com",
        "client_secret": CLIENT_SECRET,
        "refresh_token": REFRESH_TOKEN,
        "scope": "https://www.googleapis.com/auth/cloud-platform",
    }
    (sent,) = server.model_requests()
    assert sent.path == (
        "/v1/projects/proj-7/locations/global/publishers/anthropic/models/"
        "claude-sonnet-4-5:streamRawPredict"
    )
    assert sent.headers["authorization"] == f"Bearer {server.tokens[0]}"
    assert "anthropic-version" not in sent.headers and "x-api-key" not in sent.headers
    expected = wire_body("anthropic_messages", "claude-sonnet-4-5", "vertex-anthropic")
    del expected["model"]
    expected["anthropic_version"] = "vertex-2023-10-16"
    assert json.loads(sent.body) == expected


def test_gcloud_file_found_in_the_cloudsdk_config_folder(tmp_path: Path) -> None:
    with TokenServer([replay(anthropic_text_body("ok"))], token_path="/t") as server:
        authorized_user_file(tmp_path, server.token_uri)
        env = {
            "ELELEM_CONFIG": NO_CONFIG,
            "CLOUDSDK_CONFIG": str(tmp_path),
            "ELELEM_VERTEX_ANTHROPIC_BASE_URL": server.url,
            "GOOGLE_CLOUD_PROJECT": "p",
            "GOOGLE_CLOUD_LOCATION": "us-east5",
        }
        assert ask(Client(env=env), CLAUDE).text == "ok"
    (sent,) = server.model_requests()
    assert sent.path.startswith("/v1/projects/p/locations/us-east5/publishers/anthropic/")


def test_non_streamed_and_counted_requests_take_their_vertex_methods(tmp_path: Path) -> None:
    key = rsa_key()
    whole = json_reply(
        {"candidates": [{"content": {"parts": [{"text": "whole"}], "role": "model"},
                         "finishReason": "STOP"}]}
    )  # fmt: skip
    claude_whole = json_reply(
        {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
         "content": [{"type": "text", "text": "entier"}], "stop_reason": "end_turn",
         "usage": {"input_tokens": 3, "output_tokens": 1}}
    )  # fmt: skip
    replies = [whole, json_reply({"totalTokens": 7}), claude_whole, json_reply({"input_tokens": 9})]
    with TokenServer(replies) as server:
        file = service_account_file(tmp_path, server.token_uri, key, "proj-1")
        client = Client(env=vertex_env(server, file))

        async def main() -> tuple[str, int, str, int]:
            a = await client.complete(GEMINI, "hi")
            b = await client.count_tokens(GEMINI, "hi")
            c = await client.complete(CLAUDE, "hi")
            d = await client.count_tokens(CLAUDE, "hi")
            return a.text, b.input, c.text, d.input

        assert asyncio.run(main()) == ("whole", 7, "entier", 9)
    prefix = "/v1/projects/proj-1/locations/global/publishers"
    assert [r.path for r in server.model_requests()] == [
        f"{prefix}/google/models/gemini-2.5-flash:generateContent",
        f"{prefix}/google/models/gemini-2.5-flash:countTokens",
        f"{prefix}/anthropic/models/claude-sonnet-4-5:rawPredict",
        f"{prefix}/anthropic/models/count-tokens:rawPredict",
    ]
    count = json.loads(server.model_requests()[3].body)
    assert (count["model"], count["anthropic_version"]) == (
        "claude-sonnet-4-5",
        "vertex-2023-10-16",
    )
    # One token served all four requests (it does not expire within the hour).
    assert len(server.token_requests()) == 1


def test_a_token_that_expires_between_turns_is_refreshed(tmp_path: Path) -> None:
    key = rsa_key()
    clock = Clock()
    replies = [gemini_reply(), gemini_reply(), gemini_reply()]
    with TokenServer(replies, lifetime=3600, clock=clock) as server:
        file = service_account_file(tmp_path, server.token_uri, key, "proj-1")
        client = Client(env=vertex_env(server, file), clock=clock)
        history: list[Message] = []

        async def turn(text: str) -> None:
            history.append(Message.user(text))
            async with client.stream(GEMINI, history) as stream:
                history.append((await stream.final()).to_message())

        asyncio.run(turn("one"))
        clock.now += timedelta(hours=2)  # the first token expired an hour ago
        asyncio.run(turn("two"))
        clock.now += timedelta(minutes=1)  # the second one is still fresh
        asyncio.run(turn("three"))
    assert len(server.tokens) == 2
    assert [r.headers["authorization"] for r in server.model_requests()] == [
        f"Bearer {server.tokens[0]}",
        f"Bearer {server.tokens[1]}",
        f"Bearer {server.tokens[1]}",
    ]
    # The second turn replayed the first natively (the same provider, vertex).
    second = json.loads(server.model_requests()[1].body)
    assert [c["role"] for c in second["contents"]] == ["user", "model", "user"]


def test_the_blocking_client_refreshes_too(tmp_path: Path) -> None:
    key = rsa_key()
    clock = Clock()
    with TokenServer([gemini_reply(), gemini_reply()], clock=clock) as server:
        file = service_account_file(tmp_path, server.token_uri, key, "proj-1")
        with SyncClient(env=vertex_env(server, file), clock=clock) as client:
            with client.stream(GEMINI, "one") as stream:
                assert stream.final().text == "Hello, wörld ✓again"
            clock.now += timedelta(minutes=56)  # within the refresh margin of its expiry
            with client.stream(GEMINI, "two") as stream:
                stream.final()
    assert len(server.tokens) == 2
    assert server.model_requests()[1].headers["authorization"] == f"Bearer {server.tokens[1]}"


class ThreadRecordingCredentials:
    """A ``google.auth`` credentials object (what ``credentials=`` takes) that
    records the thread each refresh runs in."""

    def __init__(self) -> None:
        self.token: str | None = None
        self.expiry: Any = None
        self.threads: list[int] = []

    def refresh(self, request: Any) -> None:
        self.threads.append(threading.get_ident())
        self.token = f"ya29.given-credential-{len(self.threads)}-0123456789"


def test_given_credentials_are_refreshed_off_the_event_loop() -> None:
    credentials = ThreadRecordingCredentials()
    loop_threads: list[int] = []
    with TokenServer([gemini_reply()]) as server:
        env = {
            "ELELEM_CONFIG": NO_CONFIG,
            "ELELEM_VERTEX_BASE_URL": server.url,
            "GOOGLE_CLOUD_PROJECT": "proj-2",
        }
        client = Client(env=env, credentials={"vertex": credentials})

        async def main() -> None:
            loop_threads.append(threading.get_ident())
            async with client.stream(GEMINI, "hi") as stream:
                await stream.final()

        asyncio.run(main())
    (thread,) = credentials.threads
    assert thread != loop_threads[0]
    (sent,) = server.model_requests()
    assert sent.headers["authorization"] == "Bearer ya29.given-credential-1-0123456789"


def test_express_mode_api_key_goes_to_the_projectless_path() -> None:
    key = "AQ.express-mode-key-0123456789"
    with TokenServer([gemini_reply()]) as server:
        env = {
            "ELELEM_CONFIG": NO_CONFIG,
            "ELELEM_VERTEX_BASE_URL": server.url,
            "GOOGLE_VERTEX_API_KEY": key,
        }
        ask(Client(env=env), GEMINI)
    (sent,) = server.model_requests()
    assert sent.path == (
        "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert sent.headers["x-goog-api-key"] == key and "authorization" not in sent.headers
    assert server.token_requests() == []


def test_express_mode_keys_do_not_serve_claude() -> None:
    env = {"ELELEM_CONFIG": NO_CONFIG}
    client = Client(env=env, api_keys={"vertex-anthropic": "AQ.express-0123456789"})
    with pytest.raises(ConfigError, match="express mode API keys serve Gemini only"):
        client.target(CLAUDE)


def test_a_refused_refresh_is_an_authentication_error_without_secrets(tmp_path: Path) -> None:
    refused = json_reply(
        {"error": "invalid_grant", "error_description": f"Bad token {REFRESH_TOKEN}"}, 400
    )
    with TokenServer([], token_path="/oauth2/token", token_error=refused) as server:
        file = authorized_user_file(tmp_path, server.token_uri)
        env = vertex_env(server, file, GOOGLE_CLOUD_PROJECT="p")
        with pytest.raises(AuthenticationError) as caught:
            ask(Client(env=env), CLAUDE)
    assert server.model_requests() == []  # nothing was sent without a token
    assert caught.value.retryable is False
    message = str(caught.value)
    assert message.startswith(
        "provider vertex-anthropic: Google credentials: the access token could not be refreshed"
    )
    assert "invalid_grant" in message
    assert REFRESH_TOKEN not in message and REFRESH_TOKEN[:12] not in message
    assert "[redacted]" in message


def test_a_token_echoed_in_an_error_is_redacted(tmp_path: Path) -> None:
    key = rsa_key()
    holder: dict[str, str] = {}

    def echo() -> Any:
        text = f'{{"error":{{"code":401,"message":"token {holder["t"]} expired"}}}}'
        return status(401, text.encode())

    with TokenServer([]) as server:
        file = service_account_file(tmp_path, server.token_uri, key, "proj-1")
        holder["t"] = f"{server.prefix}-1-0123456789abcdef"
        server._replies.append(echo())
        with pytest.raises(AuthenticationError) as caught:
            ask(Client(env=vertex_env(server, file)), GEMINI)
    shown = f"{caught.value} {caught.value!r} {caught.value.body!r}"
    assert server.tokens == [holder["t"]]
    assert holder["t"] not in shown and "[redacted]" in shown


def test_no_project_anywhere_is_a_config_error(tmp_path: Path) -> None:
    with TokenServer([]) as server:
        file = authorized_user_file(tmp_path, server.token_uri)
        with pytest.raises(ConfigError) as caught:
            Client(env=vertex_env(server, file)).target(CLAUDE)
    assert str(caught.value) == (
        "provider vertex-anthropic: no Google Cloud project: set GOOGLE_CLOUD_PROJECT "
        "or project in [providers.vertex-anthropic]"
    )


def test_a_config_file_base_url_is_kept(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[providers.vertex]\nbase_url = "https://vertex-proxy.example"\n', encoding="utf-8"
    )
    env = {"ELELEM_CONFIG": str(config), "GOOGLE_VERTEX_API_KEY": "AQ.express-key-0123456789"}
    located = {**env, "GOOGLE_CLOUD_LOCATION": "us-central1"}
    assert Client(env=located).target(GEMINI).endpoint.base_url == "https://vertex-proxy.example"


def test_project_and_location_from_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[providers.vertex]\nproject = "cfg-proj"\nlocation = "asia-northeast1"\n',
        encoding="utf-8",
    )
    with TokenServer([gemini_reply()]) as server:
        file = authorized_user_file(tmp_path, server.token_uri)
        env = {**vertex_env(server, file), "ELELEM_CONFIG": str(config)}
        ask(Client(env=env), GEMINI)
    (sent,) = server.model_requests()
    assert sent.path.startswith("/v1/projects/cfg-proj/locations/asia-northeast1/publishers/")


def test_a_broken_credentials_file_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "creds.json"
    bad.write_text("{not json", encoding="utf-8")
    env = {"ELELEM_CONFIG": NO_CONFIG, "GOOGLE_APPLICATION_CREDENTIALS": str(bad)}
    with pytest.raises(ConfigError) as caught:
        Client(env=env).target(GEMINI)
    assert str(caught.value) == (
        f"provider vertex: Google credentials: the credentials file {bad} is not JSON"
    )


def test_a_missing_google_auth_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from elelem.providers.cloud_credentials import google_credentials

    monkeypatch.setitem(sys.modules, "google.auth", None)
    with pytest.raises(ConfigError) as caught:
        google_credentials({"HOME": "/nonexistent"}, "provider vertex: Google credentials")
    assert str(caught.value) == (
        "provider vertex: Google credentials: google-auth is not installed: "
        + install_line("google")
    )
