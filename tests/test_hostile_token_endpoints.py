"""Hostile token endpoints (issue #41, medium): whatever Google's OAuth token
endpoint or Azure's managed-identity endpoint answers, the fetch ends within
the request's deadline, reads at most ``MAX_TOKEN_ANSWER`` bytes, and fails
as an :class:`~elelem.errors.AuthenticationError` naming the endpoint —
never the credential library's own ``TypeError``, ``ValueError``,
``OverflowError`` or ``RecursionError`` (exit 70 on the command line).

The stand-ins speak the documented wires: Google's OAuth 2.0 token endpoint
(https://developers.google.com/identity/protocols/oauth2/web-server#offline,
``access_token``/``expires_in``) and the App Service managed-identity
endpoint (https://learn.microsoft.com/azure/app-service/overview-managed-identity#rest-endpoint-reference,
``X-IDENTITY-HEADER``, ``access_token``/``expires_on``)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cli_helpers import base_env, run
from cloud_helpers import authorized_user_file, json_reply
from elelem import SyncClient
from elelem.errors import AuthenticationError
from elelem.providers.cloud_credentials import MAX_TOKEN_ANSWER
from elelem.testing.servers import (
    Drip,
    LoopbackServer,
    Reply,
    Send,
    no_headers,
    status,
)
from elelem.transport.config import Timeouts

IDENTITY_HEADER = "identity-header-hostile-0123456789"
TOKEN = "ya29.hostile-token-0123456789abcdef"


def raw(body: bytes, code: int = 200) -> Reply:
    return Reply(code, {"content-type": "application/json"}, (Send(body),))


DEEP = b"[" * 200_000 + b"]" * 200_000

GOOGLE_ANSWERS: dict[str, Reply] = {
    "not-json": raw(b"<html>token service down</html>"),
    "string": raw(b'"a token"'),
    "list": raw(b'["ya29", 3600]'),
    "expires-soon": json_reply({"access_token": TOKEN, "expires_in": "soon"}),
    "expires-1e308": raw(b'{"access_token": "' + TOKEN.encode() + b'", "expires_in": 1e308}'),
    "nested-200k": raw(DEEP),
    "token-a-number": json_reply({"access_token": 5, "expires_in": 3600}),
    "too-big": json_reply({"access_token": "a" * (MAX_TOKEN_ANSWER + 1), "expires_in": 3600}),
}


def ask(env: dict[str, str], model: str, total: float = 30.0) -> AuthenticationError:
    with (
        SyncClient(env=env, timeouts=Timeouts(total=total)) as client,
        pytest.raises(AuthenticationError) as caught,
        client.stream(model, "hi") as stream,
    ):
        stream.final()
    return caught.value


def google_env(tmp_path: Path, server: LoopbackServer) -> dict[str, str]:
    file = authorized_user_file(tmp_path, server.url + "/oauth2/token")
    return {
        "GOOGLE_APPLICATION_CREDENTIALS": str(file),
        "ELELEM_VERTEX_ANTHROPIC_BASE_URL": server.url,
        "GOOGLE_CLOUD_PROJECT": "proj-hostile",
        "ELELEM_CONFIG": str(tmp_path / "none.toml"),
        "HOME": str(tmp_path),
    }


VERTEX = "vertex-anthropic:claude-sonnet-4-5"


@pytest.mark.parametrize("answer", sorted(GOOGLE_ANSWERS))
def test_a_google_token_endpoint_answering_no_token(tmp_path: Path, answer: str) -> None:
    with LoopbackServer(lambda _request: GOOGLE_ANSWERS[answer]) as server:
        error = ask(google_env(tmp_path, server), VERTEX)
        endpoint = server.url + "/oauth2/token"
    assert endpoint in str(error)
    assert str(error).startswith("provider vertex-anthropic: Google credentials: ")
    if answer == "too-big":
        assert f"answered more than {MAX_TOKEN_ANSWER} bytes" in str(error)
    if answer == "token-a-number":
        assert "not a string (int)" in str(error)


@pytest.mark.parametrize("answer", ["drip", "no-headers"])
def test_a_google_token_fetch_ends_by_the_request_deadline(tmp_path: Path, answer: str) -> None:
    body = json.dumps({"access_token": TOKEN, "expires_in": 3600}).encode()
    reply = (
        Reply(200, {"content-type": "application/json"}, (Drip(body, 0.2),))
        if answer == "drip"
        else no_headers(30)
    )
    with LoopbackServer(lambda _request: reply) as server:
        started = time.monotonic()
        error = ask(google_env(tmp_path, server), VERTEX, total=1.0)
        took = time.monotonic() - started
    assert took < 5.0
    assert "within the request's deadline" in str(error)


def azure_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, server: LoopbackServer
) -> dict[str, str]:
    # azure-identity reads its own variables from the process environment.
    monkeypatch.setenv("IDENTITY_ENDPOINT", server.url + "/msi/token")
    monkeypatch.setenv("IDENTITY_HEADER", IDENTITY_HEADER)
    for name in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "MSI_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    return {
        "ELELEM_AZURE_BASE_URL": server.url + "/openai/v1",
        "ELELEM_CONFIG": str(tmp_path / "none.toml"),
        "HOME": str(tmp_path),
    }


def expiring(token: object, expires_on: object) -> Reply:
    return json_reply({"access_token": token, "expires_on": expires_on, "token_type": "Bearer"})


AZURE_ANSWERS: dict[str, Reply] = {
    "not-json": raw(b"<html>identity down</html>"),
    "list": raw(b"[1, 2]"),
    "nested-200k": raw(DEEP),
    "expires-1e308": raw(b'{"access_token": "tok-0123456789", "expires_on": 1e308}'),
    "token-a-number": expiring(5, str(int(time.time()) + 3600)),
    "too-big": expiring("a" * (MAX_TOKEN_ANSWER + 1), str(int(time.time()) + 3600)),
    "echoes-the-header": status(
        400, json.dumps({"error": f"bad header {IDENTITY_HEADER}"}).encode()
    ),
}


@pytest.mark.parametrize("answer", sorted(AZURE_ANSWERS))
def test_an_azure_identity_endpoint_answering_no_token(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, answer: str
) -> None:
    with LoopbackServer(lambda _request: AZURE_ANSWERS[answer]) as server:
        error = ask(azure_env(monkeypatch, tmp_path, server), "azure:gpt-5-mini-prod")
        requests = server.requests
    assert str(error).startswith("provider azure: Entra ID: ")
    assert all(r.path.startswith("/msi/token") for r in requests)
    assert IDENTITY_HEADER not in str(error) and IDENTITY_HEADER[:12] not in str(error)
    if answer == "too-big":
        assert f"answered more than {MAX_TOKEN_ANSWER} bytes" in str(error)
    if answer == "token-a-number":
        assert "not a string (int)" in str(error)


def test_an_azure_identity_fetch_ends_by_the_request_deadline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with LoopbackServer(lambda _request: no_headers(30)) as server:
        env = azure_env(monkeypatch, tmp_path, server)
        started = time.monotonic()
        error = ask(env, "azure:gpt-5-mini-prod", total=1.0)
        took = time.monotonic() - started
    assert took < 5.0
    assert "deadline" in str(error)


def test_the_command_line_names_the_endpoint_and_exits_as_authentication(
    tmp_path: Path,
) -> None:
    """One run of each through ``elelem ask``: a typed one-line failure, not 70."""
    with LoopbackServer(lambda _request: GOOGLE_ANSWERS["expires-1e308"]) as server:
        file = authorized_user_file(tmp_path, server.url + "/oauth2/token")
        env = base_env(
            tmp_path,
            GOOGLE_APPLICATION_CREDENTIALS=str(file),
            ELELEM_VERTEX_ANTHROPIC_BASE_URL=server.url,
            GOOGLE_CLOUD_PROJECT="proj-hostile",
        )
        google = run(env, "ask", "-m", VERTEX, "hi")
    answer = AZURE_ANSWERS["echoes-the-header"]
    with LoopbackServer(lambda _request: answer) as server:
        env = base_env(
            tmp_path,
            ELELEM_AZURE_BASE_URL=server.url + "/openai/v1",
            IDENTITY_ENDPOINT=server.url + "/msi/token",
            IDENTITY_HEADER=IDENTITY_HEADER,
        )
        azure = run(env, "ask", "-m", "azure:gpt-5-mini-prod", "hi")
    assert google.returncode == azure.returncode != 70
    assert "/oauth2/token" in google.stderr and "Traceback" not in google.stderr
    assert "Entra ID" in azure.stderr and "Traceback" not in azure.stderr
    assert IDENTITY_HEADER not in azure.stderr + azure.stdout
