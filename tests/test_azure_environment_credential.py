"""Azure ``EnvironmentCredential`` end to end (issue #41): no credential
object given, ``DefaultAzureCredential`` reads a client secret or a client
certificate from the ``AZURE_*`` variables, MSAL asks a loopback Entra ID
for a token, and the Azure OpenAI stand-in receives it as the bearer.

The Entra stand-in speaks the Microsoft identity platform's documented
wire over HTTPS (MSAL refuses a plain-HTTP authority):
``GET /{tenant}/v2.0/.well-known/openid-configuration``
(learn.microsoft.com/entra/identity-platform/v2-protocols-oidc, "Find
your app's OpenID configuration document URI") and ``POST
/{tenant}/oauth2/v2.0/token`` with ``grant_type=client_credentials`` and a
``client_secret``, or a ``client_assertion`` JWT signed by the
certificate (learn.microsoft.com/entra/identity-platform/
v2-oauth2-client-creds-grant-flow, "First case: Access token request
with a shared secret", "Second case: Access token request with a
certificate"; the assertion's claims:
learn.microsoft.com/entra/identity-platform/certificate-credentials).
Its certificate is self-signed for 127.0.0.1 and trusted through
``REQUESTS_CA_BUNDLE`` (what azure-core's requests transport reads); MSAL's
instance discovery, which would ask ``login.microsoftonline.com`` first, is
off with ``ELELEM_AZURE_INSTANCE_DISCOVERY=0``, as a disconnected cloud
needs.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from cloud_helpers import TokenServer
from elelem import Client
from elelem.errors import AuthenticationError, ConfigError
from test_azure import NO_CONFIG, OPENAI_SCOPE, ask, reply_for

TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
CLIENT = "6731de76-14a6-49ae-97bc-6eba6914391e"
SECRET = "qWgdYAmab0YSkuL1qKv5bPX-entra-secret"
TOKEN = "eyJ0eXAiOiJKV1Qi.entra-access-token.0123456789"


def _certificate(tmp: Path, name: str, san: bool) -> tuple[Path, Path, x509.Certificate, Any]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
    )
    if san:
        address = x509.IPAddress(ipaddress.ip_address("127.0.0.1"))
        builder = builder.add_extension(x509.SubjectAlternativeName([address]), critical=False)
    cert = builder.sign(key, hashes.SHA256())
    cert_path, key_path = tmp / f"{name}.crt", tmp / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path, cert, key


@dataclass
class Entra:
    """The loopback Entra ID token service (see the module docstring)."""

    client_cert: x509.Certificate | None = None
    asked: list[tuple[str, str, dict[str, list[str]]]] = field(default_factory=list)
    url: str = ""

    def issuer(self) -> str:
        return f"{self.url}/{TENANT}"

    def answer(self, method: str, path: str, form: dict[str, list[str]]) -> tuple[int, Any]:
        self.asked.append((method, path, form))
        base = self.issuer()
        if method == "GET" and path == f"/{TENANT}/v2.0/.well-known/openid-configuration":
            return 200, {
                "token_endpoint": f"{base}/oauth2/v2.0/token",
                "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                "device_authorization_endpoint": f"{base}/oauth2/v2.0/devicecode",
                "issuer": f"{base}/v2.0",
                "jwks_uri": f"{base}/discovery/v2.0/keys",
            }
        if method == "POST" and path == f"/{TENANT}/oauth2/v2.0/token" and self._proven(form):
            return 200, {
                "token_type": "Bearer",
                "expires_in": 3599,
                "ext_expires_in": 3599,
                "access_token": TOKEN,
            }
        refused = {
            "error": "invalid_client",
            "error_description": "AADSTS7000215: Invalid client secret provided.",
            "error_codes": [7000215],
        }
        return 401, refused

    def _proven(self, form: dict[str, list[str]]) -> bool:
        if form.get("grant_type") != ["client_credentials"] or form.get("client_id") != [CLIENT]:
            return False
        if form.get("scope") != [OPENAI_SCOPE]:
            return False
        if self.client_cert is None:
            return form.get("client_secret") == [SECRET]
        kind = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        if form.get("client_assertion_type") != [kind]:
            return False
        key = self.client_cert.public_key()
        assert isinstance(key, rsa.RSAPublicKey)
        claims = jwt.decode(
            form["client_assertion"][0],
            key,
            algorithms=["RS256", "PS256"],
            audience=f"{self.issuer()}/oauth2/v2.0/token",
        )
        return bool(claims["iss"] == claims["sub"] == CLIENT)


@pytest.fixture
def entra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Entra]:
    cert_path, key_path, _, _ = _certificate(tmp_path, "entra-standin", san=True)
    service = Entra()

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, method: str) -> None:
            size = int(self.headers.get("content-length") or 0)
            form = parse_qs(self.rfile.read(size).decode()) if size else {}
            code, body = service.answer(method, self.path.split("?")[0], form)
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._reply("GET")

        def do_POST(self) -> None:
            self._reply("POST")

        def log_message(self, *args: Any) -> None:
            del args

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    service.url = f"https://127.0.0.1:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    for name in ("AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_USERNAME",
                 "AZURE_PASSWORD", "AZURE_FEDERATED_TOKEN_FILE", "IDENTITY_ENDPOINT",
                 "MSI_ENDPOINT", "AZURE_TOKEN_CREDENTIALS", "CURL_CA_BUNDLE"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AZURE_TENANT_ID", TENANT)
    monkeypatch.setenv("AZURE_CLIENT_ID", CLIENT)
    monkeypatch.setenv("AZURE_AUTHORITY_HOST", service.url)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert_path))
    try:
        yield service
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _env(server: TokenServer) -> dict[str, str]:
    return {
        "ELELEM_CONFIG": NO_CONFIG,
        "ELELEM_AZURE_CHAT_BASE_URL": server.url + "/openai/v1",
        "ELELEM_AZURE_INSTANCE_DISCOVERY": "0",
    }


def _token_requests(entra: Entra) -> list[dict[str, list[str]]]:
    return [form for method, path, form in entra.asked if method == "POST"]


def test_a_client_secret_from_the_environment(
    entra: Entra, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_CLIENT_SECRET", SECRET)
    with TokenServer([reply_for("openai_chat"), reply_for("openai_chat")]) as server:
        client = Client(env=_env(server))
        first = ask(client, "azure-chat:gpt-4o-prod")
        ask(client, "azure-chat:gpt-4o-prod")  # the token is fresh: not asked again
        sent = server.model_requests()
    assert first.text == "Hello, wörld ✓again"
    assert [r.headers["authorization"] for r in sent] == [f"Bearer {TOKEN}"] * 2
    assert [(m, p) for m, p, _ in entra.asked] == [
        ("GET", f"/{TENANT}/v2.0/.well-known/openid-configuration"),
        ("POST", f"/{TENANT}/oauth2/v2.0/token"),
    ]
    (form,) = _token_requests(entra)
    assert (form["grant_type"], form["client_secret"]) == (["client_credentials"], [SECRET])


def test_a_client_certificate_from_the_environment(
    entra: Entra, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert_path, key_path, cert, _ = _certificate(tmp_path, "client", san=False)
    both = tmp_path / "client.pem"  # the private key and the certificate, one PEM file
    both.write_bytes(key_path.read_bytes() + cert_path.read_bytes())
    entra.client_cert = cert
    monkeypatch.setenv("AZURE_CLIENT_CERTIFICATE_PATH", str(both))
    with TokenServer([reply_for("openai_chat")]) as server:
        ask(Client(env=_env(server)), "azure-chat:gpt-4o-prod")
        (sent,) = server.model_requests()
    assert sent.headers["authorization"] == f"Bearer {TOKEN}"
    (form,) = _token_requests(entra)
    assert "client_secret" not in form and len(form["client_assertion"]) == 1


def test_a_refused_secret_is_an_authentication_error_naming_the_endpoint(
    entra: Entra, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_CLIENT_SECRET", SECRET + "-wrong")
    with TokenServer([]) as server:
        with pytest.raises(AuthenticationError) as caught:
            ask(Client(env=_env(server)), "azure-chat:gpt-4o-prod")
        assert server.model_requests() == []
    shown = f"{caught.value} {caught.value!r}"
    assert shown.startswith(
        f"provider azure-chat: Entra ID: no token for {OPENAI_SCOPE} from the token endpoint"
        f" {entra.issuer()}/oauth2/v2.0/token: "
    )
    assert "AADSTS7000215" in shown and SECRET not in shown


def test_instance_discovery_is_a_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    with TokenServer([]) as server:
        env = {**_env(server), "ELELEM_AZURE_INSTANCE_DISCOVERY": "maybe"}
        with pytest.raises(ConfigError, match=r"ELELEM_AZURE_INSTANCE_DISCOVERY is 0 or 1"):
            ask(Client(env=env), "azure-chat:gpt-4o-prod")
