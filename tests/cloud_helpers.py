"""Stand-ins for the clouds' credential services, on loopback (issue #28).

- :func:`service_account_file` writes a Google service-account key file
  with a freshly generated RSA key whose ``token_uri`` is a loopback server;
  :func:`verify_assertion` checks the JWT google-auth signs with it.
- :func:`authorized_user_file` writes a ``gcloud auth application-default
  login`` file with its own ``token_uri``.
- :class:`TokenServer` answers the OAuth token endpoint (a new token each
  time, with the lifetime asked) and serves scripted model replies on the
  other paths; it records everything.
- :class:`FakeAzureCredential` is a real ``TokenCredential``: ``get_token``
  returns tokens of a scripted sequence and records the scopes asked.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import parse_qs

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from elelem.testing.servers import LoopbackServer, RecordedRequest, Reply, Send

CLIENT_EMAIL = "elelem-test@proj-test.iam.gserviceaccount.com"
REFRESH_TOKEN = "1//0g-refresh-token-do-not-show-0123456789"
CLIENT_SECRET = "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23"


class RSAKey(NamedTuple):
    private_pem: str
    public: rsa.RSAPublicKey


def rsa_key() -> RSAKey:
    """A new 2048-bit RSA key (the size Google issues)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode("ascii")
    return RSAKey(pem, key.public_key())


def service_account_file(folder: Path, token_uri: str, key: RSAKey, project: str) -> Path:
    """A service-account key file of ``project`` whose token endpoint is ``token_uri``."""
    path = folder / "service-account.json"
    info = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": "0123456789abcdef",
        "private_key": key.private_pem,
        "client_email": CLIENT_EMAIL,
        "client_id": "100000000000000000001",
        "token_uri": token_uri,
    }
    path.write_text(json.dumps(info), encoding="utf-8")
    return path


def authorized_user_file(folder: Path, token_uri: str) -> Path:
    """A gcloud application-default user credentials file naming ``token_uri``."""
    path = folder / "application_default_credentials.json"
    info = {
        "type": "authorized_user",
        "client_id": "764086051850-test.apps.googleusercontent.com",
        "client_secret": CLIENT_SECRET,
        "refresh_token": REFRESH_TOKEN,
        "token_uri": token_uri,
    }
    path.write_text(json.dumps(info), encoding="utf-8")
    return path


def _b64(segment: str) -> bytes:
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


def verify_assertion(assertion: str, public: rsa.RSAPublicKey) -> dict[str, Any]:
    """The claims of a JWT signed RS256 by the key (raises if the signature is bad)."""
    head, claims, signature = assertion.split(".")
    public.verify(
        _b64(signature),
        f"{head}.{claims}".encode("ascii"),
        padding.PKCS1v15(),
        hashes.SHA256(),
    )
    assert json.loads(_b64(head)) == {"alg": "RS256", "typ": "JWT", "kid": "0123456789abcdef"}
    decoded: dict[str, Any] = json.loads(_b64(claims))
    return decoded


def form(request: RecordedRequest) -> dict[str, str]:
    """A form-encoded request body as a dict."""
    return {k: v[0] for k, v in parse_qs(request.body.decode("ascii")).items()}


def json_reply(value: object, status: int = 200) -> Reply:
    """A JSON response."""
    return Reply(status, {"content-type": "application/json"}, (Send(json.dumps(value).encode()),))


class TokenServer:
    """OAuth token endpoint at ``token_path`` plus scripted model replies.

    Token *n* (from 1) is ``{prefix}-{n}-…`` valid for ``lifetime`` seconds.
    ``model_replies`` answer the other requests, in order.
    """

    def __init__(
        self,
        model_replies: Sequence[Reply],
        *,
        token_path: str = "/token",
        prefix: str = "ya29.access-token",
        lifetime: int = 3600,
        token_error: Reply | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.clock = clock
        self.token_path = token_path
        self.prefix = prefix
        self.lifetime = lifetime
        self.token_error = token_error
        self.tokens: list[str] = []
        self._replies = list(model_replies)
        self.server = LoopbackServer(self._answer)

    def _answer(self, request: RecordedRequest) -> Reply:
        if request.path.split("?")[0] == self.token_path:
            if self.token_error is not None:
                return self.token_error
            token = f"{self.prefix}-{len(self.tokens) + 1}-0123456789abcdef"
            self.tokens.append(token)
            lifetime = self.lifetime
            if self.clock is not None:
                # The server keeps the test's time: a token lives `lifetime`
                # seconds of the clock the client stamps requests with.
                ahead = (self.clock.now - datetime.now(UTC)).total_seconds()
                lifetime += int(ahead)
            return json_reply(
                {"access_token": token, "expires_in": lifetime, "token_type": "Bearer"}
            )
        if not self._replies:
            return json_reply({"error": "no reply scripted"}, 500)
        return self._replies.pop(0)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def token_uri(self) -> str:
        return self.server.url + self.token_path

    def token_requests(self) -> list[RecordedRequest]:
        return [r for r in self.server.requests if r.path.split("?")[0] == self.token_path]

    def model_requests(self) -> list[RecordedRequest]:
        return [r for r in self.server.requests if r.path.split("?")[0] != self.token_path]

    def __enter__(self) -> TokenServer:
        self.server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(None, None, None)


class AccessToken(NamedTuple):
    """What ``azure.core.credentials.AccessToken`` is: a token and its expiry (epoch seconds)."""

    token: str
    expires_on: int


class FakeAzureCredential:
    """A ``TokenCredential`` handing out ``tokens`` in turn, each valid until
    ``expires(n)`` (epoch seconds); it records each scope asked."""

    def __init__(self, tokens: Sequence[str], expires: Callable[[int], datetime]) -> None:
        self._tokens = list(tokens)
        self._expires = expires
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        self.scopes.append(scopes)
        n = len(self.scopes)
        return AccessToken(self._tokens[n - 1], int(self._expires(n).timestamp()))


class Clock:
    """A settable clock for the client (timezone-aware UTC)."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now
