"""The bad-value walk over what the options do not reach (issue #41): the
credential surfaces (Google's ADC file and variables, Azure's identity
variables), the MCP surface (``--mcp`` addresses) and recordings
(``inspect`` and ``demo --cassette`` of hostile files).  Each run is one
``elelem: …`` line and an exit of 1 or 2: never 70, never a traceback.

Commands run in-process (click's CliRunner) against loopback servers; no
value reaches the network."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import base_env
from elelem.cli import main
from elelem.testing.servers import LoopbackServer, status

DEEP = "[" * 100_000 + "]" * 100_000

ADC_FILES: dict[str, str | bytes] = {
    "garbage": "this is not JSON {[",
    "binary": bytes(range(256)) * 4,
    "empty": "",
    "a-string": '"a credentials file"',
    "a-list": "[1, 2]",
    "no-type": "{}",
    "unknown-type": '{"type": "nonesuch"}',
    "nested-100k": DEEP,
    "user-without-secret": '{"type": "authorized_user", "client_id": "x"}',
    "user-token-uri-a-number": json.dumps(
        {
            "type": "authorized_user",
            "client_id": "c",
            "client_secret": "s-0123456789",
            "refresh_token": "r-0123456789",
            "token_uri": 5,
        }
    ),
    "service-account-bad-key": json.dumps(
        {
            "type": "service_account",
            "client_email": "a@b",
            "private_key": "-----BEGIN nonsense",
            "token_uri": "http://127.0.0.1:9/token",
        }
    ),
    "lone-surrogate": '{"type": "authorized_user", "client_id": "\\ud800"}',
}

IDENTITY_VALUES: dict[str, dict[str, str]] = {
    "endpoint-not-a-url": {"IDENTITY_ENDPOINT": "::", "IDENTITY_HEADER": "h-0123456789"},
    "endpoint-file": {"IDENTITY_ENDPOINT": "file:///etc/passwd", "IDENTITY_HEADER": "h-01234567"},
    "endpoint-bad-ipv6": {"IDENTITY_ENDPOINT": "http://[::1", "IDENTITY_HEADER": "h-0123456789"},
    "header-with-a-newline": {
        "IDENTITY_ENDPOINT": "http://127.0.0.1:9/msi",
        "IDENTITY_HEADER": "h\r\nx: y",
    },
    "client-secret-without-tenant": {"AZURE_CLIENT_ID": "c", "AZURE_CLIENT_SECRET": "s-01234567"},
    "client-id-empty": {"AZURE_CLIENT_ID": "", "AZURE_TENANT_ID": "", "AZURE_CLIENT_SECRET": ""},
    "certificate-missing": {
        "AZURE_TENANT_ID": "t",
        "AZURE_CLIENT_ID": "c",
        "AZURE_CLIENT_CERTIFICATE_PATH": "/nonexistent/cert.pem",
    },
}

MCP_ADDRESSES = [
    "",
    "http://",
    "http://[::1",
    "https://127.0.0.1:9/mcp\x1b[2J",
    "file:///etc/passwd",
    "/nonexistent/elelem-mcp-server",
    "\udcff",
]

RECORDINGS: dict[str, str | bytes] = {
    "nested-100k.json": DEEP,
    "wrapper-deep-body.json": json.dumps({"status": 200, "headers": {}, "body": DEEP}),
    "har-not-a-har.har": '{"log": 5}',
    "har-entries-a-string.har": '{"log": {"entries": "x"}}',
    "cassette-binary.yaml": bytes(range(256)) * 4,
    "cassette-alias-bomb.yaml": "a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\ninteractions: *c\n",
    "empty.json": "",
}


def run(env: dict[str, str | None], *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), env=env, input="")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args}: escaped {result.exception!r}") from result.exception
    return result.exit_code, result.stderr


def one_line(code: int, stderr: str) -> None:
    """Exit 1 or 2 and one ``elelem:`` line (after the notices of retries
    made, when the failure was worth retrying)."""
    assert "Traceback" not in stderr, stderr
    assert code in (1, 2), (code, stderr)
    lines = [line for line in stderr.splitlines() if not line.startswith("retrying in ")]
    assert len(lines) == 1 and lines[0].startswith("elelem: "), stderr


@pytest.fixture(scope="module")
def refusing() -> Iterator[LoopbackServer]:
    with LoopbackServer(lambda _request: status(400, b'{"error": "no"}'), lifetime=600) as server:
        yield server


def isolated(tmp_path: Path, **extra: str) -> dict[str, str | None]:
    """No variable of the user's (azure-identity and google-auth read the
    process environment too: each name they read is unset here)."""
    names = (
        "GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG", "GOOGLE_CLOUD_PROJECT",
        "IDENTITY_ENDPOINT", "IDENTITY_HEADER", "MSI_ENDPOINT", "MSI_SECRET",
        "AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET",
        "AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_USERNAME",
    )  # fmt: skip
    env: dict[str, str | None] = dict.fromkeys(names)
    env.update(base_env(tmp_path, **extra))
    return env


@pytest.mark.parametrize("name", sorted(ADC_FILES))
def test_a_bad_google_credentials_file(tmp_path: Path, name: str, refusing: LoopbackServer) -> None:
    path = tmp_path / "adc.json"
    content = ADC_FILES[name]
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    env = isolated(
        tmp_path,
        GOOGLE_APPLICATION_CREDENTIALS=str(path),
        ELELEM_VERTEX_BASE_URL=refusing.url,
        GOOGLE_CLOUD_PROJECT="proj-bad",
        GOOGLE_CLOUD_LOCATION="us-central1",
    )
    one_line(*run(env, "ask", "-m", "vertex:gemini-2.5-flash", "--timeout", "5", "hi"))


SLOW = pytest.mark.slow  # azure-core's own retries of the identity request, with backoff


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=SLOW) if n in ("endpoint-file", "endpoint-not-a-url") else n
        for n in sorted(IDENTITY_VALUES)
    ],
)
def test_bad_azure_identity_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, refusing: LoopbackServer
) -> None:
    env = isolated(tmp_path, ELELEM_AZURE_BASE_URL=refusing.url + "/openai/v1")
    env.update(IDENTITY_VALUES[name])
    for key, value in env.items():  # azure-identity reads os.environ itself
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)
    code, stderr = run(env, "ask", "-m", "azure:gpt-5-mini-prod", "--timeout", "5", "hi")
    one_line(code, stderr)
    assert "h-0123456789" not in stderr and "s-01234567" not in stderr


@pytest.mark.parametrize(
    "address",
    [pytest.param(a, marks=SLOW) if a.startswith("http://") else a for a in MCP_ADDRESSES],
)
def test_a_bad_mcp_address(tmp_path: Path, address: str, refusing: LoopbackServer) -> None:
    env = isolated(tmp_path, ANTHROPIC_API_KEY="sk-ant-0123456789", ANTHROPIC_BASE_URL=refusing.url)
    one_line(*run(env, "ask", "-m", "anthropic:claude-x", "--mcp", address, "hi"))


@pytest.mark.parametrize("name", sorted(RECORDINGS))
@pytest.mark.parametrize(
    "command", [("inspect",), pytest.param(("demo", "--pace", "0", "--cassette"), marks=SLOW)]
)
def test_a_bad_recording(tmp_path: Path, name: str, command: tuple[str, ...]) -> None:
    path = tmp_path / name
    content = RECORDINGS[name]
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    one_line(*run(isolated(tmp_path), *command, str(path)))
