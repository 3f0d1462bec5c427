"""``elelem ask`` on the clouds, against loopback stand-ins of the clouds and
their credential services (issue #28, "Done when").

Each run authenticates as a user would — a service-account file, a gcloud
user file, Azure's DefaultAzureCredential through a managed-identity
endpoint — and afterwards no credential is in the output, the error
stream, the ``--json`` events or any file of the store."""

from __future__ import annotations

import json
import time
from pathlib import Path

from cli_helpers import base_env, run
from cloud_helpers import (
    CLIENT_SECRET,
    REFRESH_TOKEN,
    TokenServer,
    authorized_user_file,
    json_reply,
    rsa_key,
    service_account_file,
)
from elelem.testing.servers import (
    LoopbackServer,
    RecordedRequest,
    Reply,
    Send,
    replay,
    sse_body,
    status,
)
from test_contract_stream import SAMPLES


def store_bytes(home: Path) -> bytes:
    """Every file the store wrote, concatenated (the database, its WAL, blobs)."""
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def assert_nowhere(secrets: list[str], *texts: str, store: bytes) -> None:
    for secret in secrets:
        for text in texts:
            assert secret not in text
        assert secret.encode() not in store


def test_ask_vertex_gemini_with_a_service_account(tmp_path: Path) -> None:
    key = rsa_key()
    body = sse_body(SAMPLES["gemini"]().frames)
    with TokenServer([replay(body), replay(body)]) as server:
        file = service_account_file(tmp_path, server.token_uri, key, "proj-cli")
        env = base_env(
            tmp_path,
            GOOGLE_APPLICATION_CREDENTIALS=str(file),
            ELELEM_VERTEX_BASE_URL=server.url,
            GOOGLE_CLOUD_LOCATION="us-central1",
        )
        shown = run(env, "ask", "-m", "vertex:gemini-2.5-flash", "hi")
        events = run(env, "ask", "--json", "-m", "vertex:gemini-2.5-flash", "hi")
    assert shown.returncode == 0, shown.stderr
    assert "Hello, wörld ✓" in shown.stdout
    assert events.returncode == 0, events.stderr
    kinds = [json.loads(line)["type"] for line in events.stdout.splitlines()]
    assert "finish" in kinds and kinds[-1] == "turn"
    paths = {r.path for r in server.model_requests()}
    assert paths == {
        "/v1/projects/proj-cli/locations/us-central1/publishers/google/models/"
        "gemini-2.5-flash:streamGenerateContent?alt=sse"
    }
    assert len(server.tokens) == 2  # one per process: nothing is cached on disk
    secrets = [*server.tokens, key.private_pem.splitlines()[1]]
    assert_nowhere(
        secrets,
        shown.stdout,
        shown.stderr,
        events.stdout,
        events.stderr,
        store=store_bytes(tmp_path / "home"),
    )


def test_ask_vertex_anthropic_with_a_gcloud_user_file(tmp_path: Path) -> None:
    body = sse_body(SAMPLES["anthropic_messages"]().frames)
    with TokenServer([replay(body)], token_path="/oauth2/token") as server:
        file = authorized_user_file(tmp_path, server.token_uri)
        env = base_env(
            tmp_path,
            GOOGLE_APPLICATION_CREDENTIALS=str(file),
            ELELEM_VERTEX_ANTHROPIC_BASE_URL=server.url,
            GOOGLE_CLOUD_PROJECT="proj-claude",
        )
        result = run(env, "ask", "-m", "vertex-anthropic:claude-sonnet-4-5", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Hello, wörld ✓")
    (sent,) = server.model_requests()
    assert sent.path == (
        "/v1/projects/proj-claude/locations/global/publishers/anthropic/models/"
        "claude-sonnet-4-5:streamRawPredict"
    )
    assert json.loads(sent.body)["anthropic_version"] == "vertex-2023-10-16"
    assert_nowhere(
        [*server.tokens, REFRESH_TOKEN, CLIENT_SECRET],
        result.stdout,
        result.stderr,
        store=store_bytes(tmp_path / "home"),
    )


def test_ask_azure_with_default_azure_credential_via_managed_identity(tmp_path: Path) -> None:
    token = "eyJ0eXAiOiJKV1Qi.managed-identity-token.0123456789"
    header = "identity-header-secret-0123456789"
    body = sse_body(SAMPLES["openai_responses"]().frames)

    def answer(request: RecordedRequest) -> Reply:
        if request.path.startswith("/msi/token"):
            return json_reply(
                {"access_token": token, "expires_on": str(int(time.time()) + 3600),
                 "resource": "https://cognitiveservices.azure.com", "token_type": "Bearer"}
            )  # fmt: skip
        return replay(body)

    with LoopbackServer(answer) as server:
        env = base_env(
            tmp_path,
            ELELEM_AZURE_BASE_URL=server.url + "/openai/v1",
            IDENTITY_ENDPOINT=server.url + "/msi/token",
            IDENTITY_HEADER=header,
        )
        result = run(env, "ask", "-m", "azure:gpt-5-mini-prod", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Hello, wörld ✓")
    identity, sent = server.requests
    assert identity.path == (
        "/msi/token?api-version=2019-08-01&resource=https://cognitiveservices.azure.com"
    )
    assert identity.headers["x-identity-header"] == header
    assert sent.path == "/openai/v1/responses"
    assert sent.headers["authorization"] == f"Bearer {token}"
    assert json.loads(sent.body)["model"] == "gpt-5-mini-prod"
    assert_nowhere(
        [token, header], result.stdout, result.stderr, store=store_bytes(tmp_path / "home")
    )


def test_ask_azure_with_an_api_key_that_the_server_echoes(tmp_path: Path) -> None:
    key = "azure-openai-key-cli-0123456789abcdef"
    echo = status(401, json.dumps({"error": {"code": "401", "message": f"key {key}"}}).encode())
    with LoopbackServer([echo]) as server:
        env = base_env(
            tmp_path,
            ELELEM_AZURE_BASE_URL=server.url + "/openai/v1",
            AZURE_OPENAI_API_KEY=key,
        )
        result = run(env, "ask", "-m", "azure:dep", "hi")
    assert result.returncode == 1
    assert "[redacted]" in result.stderr
    (sent,) = server.requests
    assert sent.headers["api-key"] == key
    assert_nowhere(
        [key, key[:12]], result.stdout, result.stderr, store=store_bytes(tmp_path / "home")
    )


def metadata_server(model_reply: Reply) -> LoopbackServer:
    """A Compute Engine metadata server (project, service account, token)
    that also serves the model's reply on any other path."""
    flavor = {"metadata-flavor": "Google"}

    def answer(request: RecordedRequest) -> Reply:
        path = request.path
        if not path.startswith("/computeMetadata/") and path != "/":
            return model_reply
        if path.startswith("/computeMetadata/v1/project/project-id"):
            return Reply(200, {"content-type": "text/plain", **flavor}, (Send(b"proj-gce"),))
        if "/service-accounts/default/token" in path:
            value = {"access_token": GCE_TOKEN, "expires_in": 3599, "token_type": "Bearer"}
        elif "/service-accounts/default/" in path:
            value = {"email": "sa@proj-gce.iam.gserviceaccount.com", "aliases": ["default"],
                     "scopes": ["https://www.googleapis.com/auth/cloud-platform"]}  # fmt: skip
        else:  # the ping that tells google-auth it runs on Google Cloud
            return Reply(200, {"content-type": "text/plain", **flavor}, (Send(b""),))
        body = json.dumps(value).encode()
        return Reply(200, {"content-type": "application/json", **flavor}, (Send(body),))

    return LoopbackServer(answer)


GCE_TOKEN = "ya29.metadata-server-token-0123456789"


def test_ask_vertex_with_the_metadata_server(tmp_path: Path) -> None:
    body = sse_body(SAMPLES["gemini"]().frames)
    with metadata_server(replay(body)) as server:
        host = server.url.removeprefix("http://")
        env = base_env(
            tmp_path,
            GCE_METADATA_HOST=host,
            GCE_METADATA_IP=host,
            ELELEM_VERTEX_BASE_URL=server.url,
        )
        result = run(env, "ask", "-m", "vertex:gemini-2.5-flash", "hi")
    assert result.returncode == 0, result.stderr
    assert "Hello, wörld ✓" in result.stdout
    sent = [r for r in server.requests if r.path.startswith("/v1/")]
    assert [r.path for r in sent] == [
        "/v1/projects/proj-gce/locations/global/publishers/google/models/"
        "gemini-2.5-flash:streamGenerateContent?alt=sse"
    ]
    assert sent[0].headers["authorization"] == f"Bearer {GCE_TOKEN}"
    token_asks = [r for r in server.requests if "/default/token" in r.path]
    assert token_asks[0].headers["metadata-flavor"] == "Google"
    assert_nowhere([GCE_TOKEN], result.stdout, result.stderr, store=store_bytes(tmp_path / "home"))


def test_no_cloud_credentials_is_one_line_and_exit_2(tmp_path: Path) -> None:
    closed = "127.0.0.1:9"  # nothing listens: not on Google Cloud
    env = base_env(tmp_path, GCE_METADATA_HOST=closed, GCE_METADATA_IP=closed)
    vertex = run(env, "ask", "-m", "vertex:gemini-2.5-flash", "hi")
    assert vertex.returncode == 2
    assert vertex.stderr.startswith(
        "elelem: provider vertex: Google credentials: none found: set "
        "GOOGLE_APPLICATION_CREDENTIALS to a service-account file, run `gcloud auth "
        "application-default login`, or run on Google Cloud ("
    )
    assert vertex.stderr.count("\n") == 1
    azure = run(env, "ask", "-m", "azure:dep", "hi")
    assert (azure.returncode, azure.stderr) == (
        2,
        "elelem: provider azure: which Azure resource? set AZURE_OPENAI_ENDPOINT, "
        "AZURE_RESOURCE_NAME or AZURE_OPENAI_RESOURCE or ELELEM_AZURE_BASE_URL\n",
    )
