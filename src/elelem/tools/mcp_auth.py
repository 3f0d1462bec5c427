"""OAuth 2.1 for remote MCP servers, through the ``mcp`` SDK's client provider.

The SDK's ``OAuthClientProvider`` does the protocol: protected-resource and
authorization-server discovery, dynamic client registration, PKCE, the
``iss`` check, refresh, scope step-up.  elelem gives it

- :class:`~elelem.tools.mcp_logins.ResourceLogin`: what a login keeps, in
  one 0600 file by issuer, then by server (:mod:`elelem.tools.mcp_logins`):
  the issuer's client registration, shared by its servers, and each
  server's own tokens; every token and client secret is a secret of the
  whole process as soon as it is read or received;
- :class:`LoopbackRedirect`: the browser is sent to the authorization page
  (Python's ``webbrowser``, which ``$BROWSER`` overrides) and the code is
  received on a one-shot ``http://127.0.0.1:PORT/callback``.

Without a login (``interactive=False``) a server that needs one is an
error saying what to run: ``elelem mcp login URL``.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio

from elelem.errors import MCPServerError
from elelem.redaction import hold_secrets
from elelem.tools.mcp_logins import LoginStore, ResourceLogin, store_path

LOGIN_TIMEOUT = 300.0
"""Seconds the user has to finish a login in the browser."""


class LoopbackRedirect:
    """A one-shot redirect target on 127.0.0.1 and the browser sent to the
    authorization page (see the module docs)."""

    def __init__(self) -> None:
        self._socket = socket.socket()
        # Linux lets a later login listen on this port again (see take) only
        # when both sockets allow it: the connection this one accepts stays
        # in TIME_WAIT a while after the login.
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
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

    def take(self, uri: str) -> bool:
        """Listen at ``uri`` instead (a client registration's own redirect,
        ``http://127.0.0.1:PORT/callback``), before the browser is sent:
        False when it is not such a URI or its port is taken."""
        parts = urlsplit(uri)
        if (parts.scheme, parts.hostname, parts.path) != ("http", "127.0.0.1", "/callback"):
            return False
        if parts.port == self.port:
            return True
        taken = socket.socket()
        # The last login's connection on that port may linger in TIME_WAIT;
        # a port another process listens on is still refused.
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            taken.bind(("127.0.0.1", parts.port or 80))
            taken.listen(1)
        except OSError:
            taken.close()
            return False
        self._socket.close()
        self._socket, self.port, self.uri = taken, taken.getsockname()[1], uri
        return True

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
    you publish) is used as the client id where the server takes one.

    A server whose issuer already has a client registration kept (another
    server of the same authorization server signed in before) signs in as
    that client, listening on its registered redirect; its tokens are its
    own (:mod:`elelem.tools.mcp_logins`)."""
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

    storage = ResourceLogin(LoginStore(store_path(env)), url)
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
        storage.keep_client(given.model_dump(mode="json", exclude_none=True))

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
    provider = _issuer_sharing()(
        server_url=url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=redirect.redirect_handler if redirect else no_login,
        callback_handler=redirect.callback_handler if redirect else no_callback,
        client_metadata_url=client_metadata_url,
    )
    provider.elelem_login, provider.elelem_redirect = storage, redirect
    return provider


def _issuer_sharing() -> Any:
    """The SDK's ``OAuthClientProvider``, told the client registration its
    issuer already has: the issuer is known once discovery picked the
    authorization server (``_select_authorization_server``, the SDK's one
    step between reading the protected-resource metadata and checking the
    stored client against the issuer), and the kept registration is used
    when this server has none of its own and its redirect port is free."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull

    class IssuerSharing(OAuthClientProvider):
        elelem_login: ResourceLogin
        elelem_redirect: LoopbackRedirect | None

        def _select_authorization_server(self, advertised: list[str]) -> str:
            issuer = super()._select_authorization_server(advertised)
            shared = self.elelem_login.shared_client(issuer)
            redirect = self.elelem_redirect
            if shared is None or self.context.client_info is not None or redirect is None:
                return issuer
            client = OAuthClientInformationFull.model_validate(shared)
            uris = client.redirect_uris or []
            if len(uris) == 1 and redirect.take(str(uris[0])):
                self.context.client_info = client
                self.context.client_metadata.redirect_uris = list(uris)
            return issuer

    return IssuerSharing


def has_login(url: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether a login is kept for the server at ``url``."""
    return LoginStore(store_path(env)).find(url) is not None


def logins(env: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """The servers with a kept login, by issuer (``""``: not known yet)."""
    return LoginStore(store_path(env)).logins()


def logout(target: str, env: Mapping[str, str] | None = None) -> list[str]:
    """Forget the logins of an issuer (``target`` names it; its client
    registration too) or of one server (``target`` its URL); the servers
    forgotten (none: nothing was kept for ``target``)."""
    return LoginStore(store_path(env)).forget(target)


__all__ = ["LOGIN_TIMEOUT", "LoopbackRedirect", "has_login", "logins", "logout", "oauth"]
