"""OAuth 2.1 for remote MCP servers, through the ``mcp`` SDK's client provider.

The SDK's ``OAuthClientProvider`` does the protocol: protected-resource and
authorization-server discovery, dynamic client registration, PKCE, the
``iss`` check, refresh, scope step-up.  elelem gives it

- :class:`TokenFile`: what a login keeps (the tokens and the registered
  client) in one file per server under elelem's home, ``mcp-oauth/``,
  created 0600; every token and client secret is made a secret of the
  whole process (:func:`elelem.redaction.hold_secrets`) as soon as it is
  read or received, so no message, record or export shows it;
- :class:`LoopbackRedirect`: the browser is sent to the authorization page
  (Python's ``webbrowser``, which ``$BROWSER`` overrides) and the code is
  received on a one-shot ``http://127.0.0.1:PORT/callback``.

Without a login (``interactive=False``) a server that needs one is an
error saying what to run: ``elelem mcp login URL``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio

from elelem.errors import MCPServerError
from elelem.home import PRIVATE_FILE, create_private, home_dir, private_parent
from elelem.redaction import hold_secrets

LOGIN_TIMEOUT = 300.0
"""Seconds the user has to finish a login in the browser."""


def token_path(url: str, env: Mapping[str, str] | None = None) -> Path:
    """The file that keeps the login of the server at ``url``."""
    parts = urlsplit(url)
    key = f"{parts.scheme}://{parts.netloc}{parts.path}".encode()
    return home_dir(env) / "mcp-oauth" / f"{hashlib.sha256(key).hexdigest()[:32]}.json"


class TokenFile:
    """The SDK's ``TokenStorage``, in one 0600 file (see the module docs)."""

    def __init__(self, path: Path, url: str) -> None:
        self.path = path
        self.url = url

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise MCPServerError(f"the MCP login file {self.path} cannot be read: {exc}") from None
        if not isinstance(data, dict):
            raise MCPServerError(f"the MCP login file {self.path} is not a JSON object")
        _hold(data)
        return data

    def _write(self, key: str, value: Any) -> None:
        data = self._read()
        data["url"] = self.url
        data[key] = value
        _hold(data)
        private_parent(self.path)
        create_private(self.path)
        self.path.chmod(PRIVATE_FILE)
        self.path.write_text(json.dumps(data), encoding="utf-8")

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        tokens = self._read().get("tokens")
        return None if tokens is None else OAuthToken.model_validate(tokens)

    async def set_tokens(self, tokens: Any) -> None:
        self._write("tokens", tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        client = self._read().get("client")
        return None if client is None else OAuthClientInformationFull.model_validate(client)

    async def set_client_info(self, client_info: Any) -> None:
        self._write("client", client_info.model_dump(mode="json", exclude_none=True))

    def forget(self) -> bool:
        """Remove the login (True when there was one)."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True


def _hold(data: Mapping[str, Any]) -> None:
    tokens = data.get("tokens") or {}
    client = data.get("client") or {}
    hold_secrets(tokens.get("access_token"), tokens.get("refresh_token"))
    hold_secrets(client.get("client_secret"))


class LoopbackRedirect:
    """A one-shot redirect target on 127.0.0.1 and the browser sent to the
    authorization page (see the module docs)."""

    def __init__(self) -> None:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(1)
        self.port: int = self._socket.getsockname()[1]
        self.uri = f"http://127.0.0.1:{self.port}/callback"
        self._pending: Future[dict[str, list[str]]] | None = None

    async def redirect_handler(self, authorization_url: str) -> None:
        """Open the authorization page in the browser (the redirect target
        listens first: a browser may come back before it returns)."""
        import webbrowser

        self._pending = ThreadPoolExecutor(1, "elelem-mcp-login").submit(self._receive)
        opened = await anyio.to_thread.run_sync(webbrowser.open, authorization_url)
        if not opened:
            raise MCPServerError(f"no browser could be opened to sign in at {authorization_url}")

    async def callback_handler(self) -> Any:
        """Wait for the browser's redirect; the code, state and issuer it carries."""
        from mcp.shared.auth import AuthorizationCodeResult

        pending = self._pending
        if pending is None:
            raise MCPServerError("the browser was not sent to the authorization page")
        try:
            query = await anyio.to_thread.run_sync(pending.result, LOGIN_TIMEOUT)
        except TimeoutError:
            raise MCPServerError(f"no sign-in within {LOGIN_TIMEOUT:g} s") from None
        if "code" not in query:
            error = query.get("error", ["no code"])[0]
            raise MCPServerError(f"the authorization server did not authorize: {error}")
        return AuthorizationCodeResult(
            code=query["code"][0],
            state=query.get("state", [None])[0],
            iss=query.get("iss", [None])[0],
        )

    def _receive(self) -> dict[str, list[str]]:
        connection, _ = self._socket.accept()
        with connection:
            request = connection.recv(65536).decode("latin-1")
            target = request.split(" ", 2)[1] if request.count(" ") >= 2 else "/"
            page = b"elelem: signed in; you can close this tab.\n"
            connection.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: "
                + str(len(page)).encode()
                + b"\r\nconnection: close\r\n\r\n"
                + page
            )
        return parse_qs(urlsplit(target).query)

    def close(self) -> None:
        self._socket.close()


def oauth(
    url: str,
    *,
    interactive: bool,
    env: Mapping[str, str] | None = None,
    redirect: LoopbackRedirect | None = None,
    client_id: str | None = None,
    client_secret: str | None = None,
    client_metadata_url: str | None = None,
) -> Any:
    """The SDK's ``OAuthClientProvider`` for the server at ``url`` (an
    ``httpx2.Auth``): interactive, it signs in through ``redirect``; not
    interactive, it uses (and refreshes) a stored login only.  A
    ``client_id`` (and ``client_secret``) the authorization server issued
    beforehand is kept and used instead of registering; a
    ``client_metadata_url`` (the https URL of a client ID metadata document
    you publish) is used as the client id where the server takes one."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

    storage = TokenFile(token_path(url, env), url)
    if interactive and redirect is None:
        redirect = LoopbackRedirect()
    redirect_uri = redirect.uri if redirect else "http://127.0.0.1/callback"
    if client_id is not None:
        hold_secrets(client_secret)
        method = "client_secret_basic" if client_secret else "none"
        given = OAuthClientInformationFull(
            client_id=client_id,
            client_secret=client_secret,
            redirect_uris=[redirect_uri],  # type: ignore[list-item]
            token_endpoint_auth_method=method,
        )
        storage._write("client", given.model_dump(mode="json", exclude_none=True))

    async def no_login(authorization_url: str) -> None:
        raise MCPServerError(
            f"the MCP server at {url} needs authorization: run `elelem mcp login {url}`"
        )

    async def no_callback() -> Any:
        raise MCPServerError(f"no login for {url}")  # pragma: no cover - no_login raised first

    metadata = OAuthClientMetadata(
        client_name="elelem",
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=redirect.redirect_handler if redirect else no_login,
        callback_handler=redirect.callback_handler if redirect else no_callback,
        client_metadata_url=client_metadata_url,
    )


def has_login(url: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether a login is kept for the server at ``url``."""
    return token_path(url, env).exists()


def logins(env: Mapping[str, str] | None = None) -> list[str]:
    """The URLs of the servers with a kept login."""
    folder = home_dir(env) / "mcp-oauth"
    found = []
    for file in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(file.read_text(encoding="utf-8"))
            if isinstance(data, dict) and isinstance(data.get("url"), str):
                found.append(data["url"])
    return found


__all__ = [
    "LOGIN_TIMEOUT",
    "LoopbackRedirect",
    "TokenFile",
    "has_login",
    "logins",
    "oauth",
    "token_path",
]
