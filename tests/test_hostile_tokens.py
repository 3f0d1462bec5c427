"""Fetched credentials are the process's secrets (issue #41, high).

A Vertex AI (Google) or Azure Entra ID access token is fetched at run time;
a model that echoes the bearer token it was sent, in its answer, in an
error or through a tool, must find it removed from every channel: stdout,
``--json``, the store, ``export``, ``show``, ``serve``'s pages and UI
stream, and the tracer's captured content.  The refresh token, client
secret and managed-identity header held beside the token likewise."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import pytest

from cli_helpers import base_env, run
from cloud_helpers import (
    CLIENT_SECRET,
    REFRESH_TOKEN,
    TokenServer,
    authorized_user_file,
    json_reply,
)
from elelem.redaction import (
    PROCESS_SECRETS,
    REDACTED,
    ProcessRedactor,
    held_secrets,
    hold,
    hold_secrets,
)
from elelem.testing.servers import LoopbackServer, RecordedRequest, Reply, replay, sse_body, status
from test_contract_stream import SAMPLES

AZURE_TOKEN = "eyJ0eXAiOiJKV1Qi.entra-echo-token.0123456789abcdef"
IDENTITY_HEADER = "identity-header-echo-secret-0123456789"
VERTEX_TOKEN = "ya29.access-token-1-0123456789abcdef"  # TokenServer's first token


def vertex_token(n: int) -> str:
    """TokenServer's ``n``-th token (one per process)."""
    return VERTEX_TOKEN.replace("-1-", f"-{n}-")


def echoing(sample: str, text: str) -> bytes:
    """The contract sample's SSE body with ``text`` inside its answer text."""
    frames = [
        (name, data.replace("wörld ✓", f"wörld ✓ {text}"))
        for name, data in SAMPLES[sample]().frames
    ]
    return sse_body(frames)


class Cloud(NamedTuple):
    model: str
    secrets: tuple[str, ...]
    env: dict[str, str]


def vertex_env(tmp_path: Path, server: TokenServer) -> dict[str, str]:
    """The command's environment for Vertex AI's Claude through a gcloud user
    file whose token endpoint is ``server``'s."""
    file = authorized_user_file(tmp_path, server.token_uri)
    return base_env(
        tmp_path,
        GOOGLE_APPLICATION_CREDENTIALS=str(file),
        ELELEM_VERTEX_ANTHROPIC_BASE_URL=server.url,
        GOOGLE_CLOUD_PROJECT="proj-echo",
    )


@contextmanager
def vertex(tmp_path: Path, replies: int) -> Iterator[Cloud]:
    """Vertex AI through a gcloud user file: refresh token and client secret
    held, the token fetched from a loopback OAuth endpoint."""
    bodies = [
        echoing("anthropic_messages", f"your token is {vertex_token(n)}, {REFRESH_TOKEN}")
        for n in range(1, replies + 1)
    ]
    with TokenServer([replay(b) for b in bodies], token_path="/oauth2/token") as server:
        env = vertex_env(tmp_path, server)
        yield Cloud(
            "vertex-anthropic:claude-sonnet-4-5",
            (*map(vertex_token, range(1, replies + 1)), REFRESH_TOKEN, CLIENT_SECRET),
            env,
        )
    # One token per request made (each process fetches its own).
    assert server.tokens == [vertex_token(n) for n in range(1, len(server.tokens) + 1)]


@contextmanager
def azure(tmp_path: Path) -> Iterator[Cloud]:
    """Azure OpenAI through DefaultAzureCredential's managed identity."""
    body = echoing("openai_responses", f"your token is {AZURE_TOKEN} ({IDENTITY_HEADER})")

    def answer(request: RecordedRequest) -> Reply:
        if request.path.startswith("/msi/token"):
            return json_reply(
                {"access_token": AZURE_TOKEN, "expires_on": str(int(time.time()) + 3600),
                 "resource": "https://cognitiveservices.azure.com", "token_type": "Bearer"}
            )  # fmt: skip
        return replay(body)

    with LoopbackServer(answer) as server:
        env = base_env(
            tmp_path,
            ELELEM_AZURE_BASE_URL=server.url + "/openai/v1",
            IDENTITY_ENDPOINT=server.url + "/msi/token",
            IDENTITY_HEADER=IDENTITY_HEADER,
        )
        yield Cloud("azure:gpt-5-mini-prod", (AZURE_TOKEN, IDENTITY_HEADER), env)


def store_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def assert_nowhere(secrets: tuple[str, ...], *texts: str, data: bytes = b"") -> None:
    for secret in secrets:
        for text in texts:
            assert secret not in text and secret[:12] not in text
        assert secret.encode() not in data


@pytest.mark.parametrize("cloud", ["vertex", pytest.param("azure", marks=pytest.mark.slow)])
def test_an_echoed_fetched_token_is_in_no_cli_channel(tmp_path: Path, cloud: str) -> None:
    context = vertex(tmp_path, 2) if cloud == "vertex" else azure(tmp_path)
    with context as found:
        shown = run(found.env, "ask", "-m", found.model, "hi")
        events = run(found.env, "ask", "--json", "-m", found.model, "hi")
    assert shown.returncode == 0, shown.stderr
    assert events.returncode == 0, events.stderr
    assert f"your token is {REDACTED}" in shown.stdout
    text = "".join(
        e.get("text", "")
        for e in map(json.loads, events.stdout.splitlines())
        if e["type"] == "text-delta"
    )
    assert f"your token is {REDACTED}" in text
    exported = tmp_path / "export.jsonl"
    later = run(found.env, "show")
    out = run(found.env, "export", "-o", str(exported))
    assert later.returncode == 0 and out.returncode == 0, later.stderr + out.stderr
    assert f"your token is {REDACTED}" in later.stdout
    assert_nowhere(
        found.secrets,
        shown.stdout,
        shown.stderr,
        events.stdout,
        events.stderr,
        later.stdout,
        exported.read_text(encoding="utf-8"),
        data=store_bytes(tmp_path / "home"),
    )


def test_a_token_echoed_in_an_error_is_redacted(tmp_path: Path) -> None:
    echo = json.dumps({"error": {"type": "permission_error", "message": f"bad {VERTEX_TOKEN}"}})
    with TokenServer([status(403, echo.encode())], token_path="/oauth2/token") as server:
        env = vertex_env(tmp_path, server)
        result = run(env, "ask", "--json", "-m", "vertex-anthropic:claude-sonnet-4-5", "hi")
    assert result.returncode != 0 and result.returncode != 70, result.stderr
    assert REDACTED in result.stderr + result.stdout
    assert_nowhere((VERTEX_TOKEN,), result.stdout, result.stderr)


def test_serve_and_its_ui_stream_redact_a_fetched_token(tmp_path: Path) -> None:
    """The viewer with the redactor ``elelem serve`` gives it (the
    process's): a token the client fetches after the app was made is
    removed from the stream and the pages."""
    from elelem.client import Client
    from elelem.conversation import open_store
    from elelem.providers import load_catalog
    from elelem.testing.asgi import ASGIServer
    from elelem.web.app import create_app

    with vertex(tmp_path, 1) as found:
        env = found.env
        store = open_store(tmp_path / "s.db")
        store.redactor = ProcessRedactor()  # as `elelem serve` opens it
        app = create_app(
            store,
            token="tok",
            model=found.model,
            client=lambda: Client(catalog=load_catalog(env=env), env=env),
            redactor=ProcessRedactor(),
        )
        with ASGIServer(app) as served:
            request = urllib.request.Request(
                f"{served.url}/api/chat?token=tok",
                data=json.dumps({"text": "what is my token?"}).encode(),
                headers={"content-type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=30) as response:
                sent = response.read().decode()
                conversation = response.headers["x-elelem-conversation"]
            with urllib.request.urlopen(
                f"{served.url}/c/{conversation}?token=tok", timeout=30
            ) as response:
                page = response.read().decode()
        store.close()
    deltas = "".join(
        json.loads(line[6:])["delta"]
        for line in sent.splitlines()
        if line.startswith("data: {") and '"text-delta"' in line
    )
    assert f"your token is {REDACTED}" in deltas
    assert f"your token is {REDACTED}" in page
    assert_nowhere(found.secrets, sent, page, data=(tmp_path / "s.db").read_bytes())


def test_captured_span_content_is_redacted(tmp_path: Path) -> None:
    """``GenAITracer(capture_content=True)``: an echoed static key and a
    fetched token are out of the output messages and tool spans."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from elelem import SyncClient, run_sync
    from elelem.conversation import Conversation, SQLiteStore
    from elelem.telemetry import GenAITracer
    from elelem.tools import tool
    from toolloop_wires import anthropic_calls, anthropic_text

    key = "sk-ant-span-echo-0123456789abcdef"
    fetched = "ya29.span-fetched-token-0123456789"
    hold_secrets(fetched)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = GenAITracer(provider, capture_content=True)

    @tool
    def whoami() -> str:
        """Who the caller is."""
        return f"token {fetched}"

    replies = [
        anthropic_calls([("c1", "whoami", {})]),
        anthropic_text(f"key {key} and token {fetched}"),
    ]
    env = {
        "ANTHROPIC_API_KEY": key,
        "ELELEM_CONFIG": "/nonexistent/elelem.toml",
    }
    with LoopbackServer(replies) as server:
        env["ANTHROPIC_BASE_URL"] = server.url
        with SyncClient(env=env, hooks=[tracer]) as client:
            conversation = Conversation.create(SQLiteStore(tmp_path / "t.db"))
            result = run_sync(
                conversation,
                client,
                "anthropic:claude-test",
                "hi",
                tools=[whoami],
                on_call=tracer.tool_call,
            )
    assert f"key {key}" in result.text  # the answer itself is the caller's
    attributes = json.dumps([dict(span.attributes or {}) for span in exporter.get_finished_spans()])
    assert attributes.count(REDACTED) >= 3
    assert key[:12] not in attributes and fetched[:12] not in attributes


def test_the_process_redactor_follows_what_is_held() -> None:
    import gc

    class Owner:
        def secrets(self) -> tuple[str, ...]:
            return ("held-by-its-owner-0123456789",)

    redactor = ProcessRedactor(["static-secret-0123456789"])
    assert redactor.redact("x static-secret-0123456789") == f"x {REDACTED}"
    owner = hold(Owner(), Owner.secrets)
    assert redactor.redact("held-by-its-owner-0123456789") == REDACTED
    hold_secrets("token-fetched-later-0123456789")
    assert redactor.redact("token-fetched-later-0123456789") == REDACTED
    assert PROCESS_SECRETS.redact("a token-fetched-later-0123456789") == f"a {REDACTED}"
    del owner  # held weakly: gone with its owner
    gc.collect()
    assert "held-by-its-owner-0123456789" not in held_secrets()
    assert redactor.redact("held-by-its-owner-0123456789") == "held-by-its-owner-0123456789"
    assert redactor.echo_bound >= 10 * len("token-fetched-later-0123456789")


def test_azure_environment_credential_secrets_are_the_processs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """EnvironmentCredential's client secret and certificate password (and
    the managed-identity header) are secrets of the command line and of
    every Entra ID endpoint, whatever echoes them."""
    from elelem.cli.safety import secrets_in_force
    from elelem.providers.cloud_credentials import AzureTokenSource

    values = {
        "AZURE_CLIENT_SECRET": "client-secret-of-the-env-0123456789",
        "AZURE_CLIENT_CERTIFICATE_PASSWORD": "certificate-password-0123456789",
        "IDENTITY_HEADER": "identity-header-of-the-env-0123456789",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    redactor = secrets_in_force({"ELELEM_CONFIG": "/nonexistent/elelem.toml", **values})
    echoed = " / ".join(values.values())
    assert redactor.redact(echoed) == " / ".join([REDACTED] * 3)
    source = AzureTokenSource(object(), "https://cognitiveservices.azure.com/.default", "azure")
    assert set(source.secrets()) == set(values.values())


@pytest.mark.parametrize("outcome", ["result", pytest.param("error", marks=pytest.mark.slow)])
def test_a_tool_echoing_the_fetched_token_is_redacted_everywhere(
    tmp_path: Path, outcome: str
) -> None:
    """A tool whose result (or error) holds the bearer token the process
    fetched: not in ``--json``, stderr's status lines, or the store."""
    from toolloop_wires import anthropic_calls, anthropic_text

    functions = tmp_path / "tools.py"
    body = (
        f'return "token {VERTEX_TOKEN}"'
        if outcome == "result"
        else f'raise RuntimeError("bad token {VERTEX_TOKEN}")'
    )
    functions.write_text(f'def whoami() -> str:\n    """Who I am."""\n    {body}\n')
    replies = [anthropic_calls([("c1", "whoami", {})]), anthropic_text("done")]
    with TokenServer(replies, token_path="/oauth2/token") as server:
        env = vertex_env(tmp_path, server)
        model = "vertex-anthropic:claude-sonnet-4-5"
        result = run(env, "ask", "--json", "--functions", str(functions), "-m", model, "hi")
        sent = server.model_requests()
    assert result.returncode == 0, result.stderr
    assert server.tokens == [VERTEX_TOKEN]
    # The follow-up is built from the log, which holds nothing secret: the
    # model is sent the result redacted, as for a static key.
    assert VERTEX_TOKEN not in sent[1].body.decode() and REDACTED in sent[1].body.decode()
    assert_nowhere(
        (VERTEX_TOKEN,), result.stdout, result.stderr, data=store_bytes(tmp_path / "home")
    )
