"""The logins a remote MCP server's OAuth gives (issue #40), as the SDK's
token storage sees them (elelem.tools.mcp_logins): one 0600 file by
issuer, then by server; the issuer's client registration shared by its
servers, each server's tokens its own and never read for another; every
token and secret redacted once held.  The whole flow against the SDK's own
example authorization server is tests/test_mcp_example_auth.py."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from typing import Any

import pytest

from elelem.redaction import ProcessRedactor
from elelem.tools.mcp_auth import LoopbackRedirect, has_login, logins, logout, oauth
from elelem.tools.mcp_logins import LoginStore, ResourceLogin, store_path

ISSUER = "https://auth.example.test/"
A = "https://a.example.test/mcp"
B = "https://b.example.test/mcp"


def token(n: int) -> Any:
    from mcp.shared.auth import OAuthToken

    return OAuthToken(access_token=f"at-{n}-4f9c2e77d1b0a5", refresh_token=f"rt-{n}-91aa03e6c2f4")


def client(client_id: str, port: int = 41234, issuer: str | None = ISSUER) -> Any:
    from mcp.shared.auth import OAuthClientInformationFull

    return OAuthClientInformationFull(
        client_id=client_id,
        client_secret=f"secret-of-{client_id}-77e1",
        redirect_uris=[f"http://127.0.0.1:{port}/callback"],  # type: ignore[list-item]
        issuer=issuer,
    )


def sign_in(store: LoginStore, url: str, n: int, registered: Any | None) -> ResourceLogin:
    """What the SDK does with a server's storage in one login: read it,
    name the issuer (discovery), register a client when none is shared,
    keep the tokens."""
    login = ResourceLogin(store, url)
    asyncio.run(login.get_client_info())
    shared = login.shared_client(ISSUER)
    if shared is None and registered is not None:
        asyncio.run(login.set_client_info(registered))
    asyncio.run(login.set_tokens(token(n)))
    return login


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"ELELEM_HOME": str(tmp_path / "home")}


def test_logins_are_kept_by_issuer_then_server_in_one_0600_file(env: dict[str, str]) -> None:
    store = LoginStore(store_path(env))
    sign_in(store, A, 1, client("c-1"))
    second = sign_in(store, B, 2, client("c-2"))  # not registered: the issuer's is shared
    path = store_path(env)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.parent == Path(env["ELELEM_HOME"]) / "mcp-oauth"
    kept = json.loads(path.read_text())
    assert list(kept["issuers"]) == ["https://auth.example.test"]
    place = kept["issuers"]["https://auth.example.test"]
    assert place["client"]["client_id"] == "c-1"
    assert place["resources"] == {
        A: {"tokens": token(1).model_dump(mode="json", exclude_none=True)},
        B: {"tokens": token(2).model_dump(mode="json", exclude_none=True)},
    }
    assert asyncio.run(second.get_client_info()) == client("c-1")
    assert logins(env) == {"https://auth.example.test": [A, B]}
    assert has_login(A, env) and has_login(B + "?x=1", env)  # a query is no part of it


def test_a_token_is_never_read_for_another_server(env: dict[str, str]) -> None:
    store = LoginStore(store_path(env))
    sign_in(store, A, 1, client("c-1"))
    sign_in(store, B, 2, None)
    for url, n in ((A, 1), (B, 2)):
        assert asyncio.run(ResourceLogin(store, url).get_tokens()) == token(n)
    # A third server of the same issuer (and host) has no token until it signs in.
    other = ResourceLogin(store, "https://a.example.test/other")
    assert asyncio.run(other.get_tokens()) is None
    assert asyncio.run(other.get_client_info()) is None  # the issuer is not known yet


def test_a_server_that_registered_its_own_client_keeps_it(env: dict[str, str]) -> None:
    store = LoginStore(store_path(env))
    sign_in(store, A, 1, client("c-1"))
    login = ResourceLogin(store, B)
    login.issuer = ISSUER
    asyncio.run(login.set_client_info(client("c-2", port=41235)))  # the shared port was taken
    asyncio.run(login.set_tokens(token(2)))
    assert asyncio.run(login.get_client_info()).client_id == "c-2"
    assert asyncio.run(ResourceLogin(store, A).get_client_info()).client_id == "c-1"


def test_secrets_are_redacted_once_held(env: dict[str, str]) -> None:
    sign_in(LoginStore(store_path(env)), A, 7, client("c-7"))
    LoginStore(store_path(env)).read()
    echoed = "tool said: at-7-4f9c2e77d1b0a5, rt-7-91aa03e6c2f4 and secret-of-c-7-77e1"
    assert ProcessRedactor().redact(echoed) == "tool said: [redacted], [redacted] and [redacted]"


def test_logout_forgets_an_issuer_or_one_server(env: dict[str, str]) -> None:
    store = LoginStore(store_path(env))
    sign_in(store, A, 1, client("c-1"))
    sign_in(store, B, 2, None)
    assert logout(B, env) == [B]
    assert logins(env) == {"https://auth.example.test": [A]}
    assert logout(B, env) == []
    sign_in(store, B, 2, None)
    assert logout(ISSUER, env) == [A, B]  # the issuer with its trailing slash, or without
    assert logins(env) == {}
    # Its last server gone, the registration goes too: a new login registers.
    sign_in(store, A, 3, client("c-3"))
    assert asyncio.run(ResourceLogin(store, A).get_client_info()).client_id == "c-3"
    assert logout("https://auth.example.test", env) == [A]


def test_the_one_file_a_server_logins_are_folded_in(env: dict[str, str]) -> None:
    folder = store_path(env).parent
    folder.mkdir(parents=True)
    old = {"url": A, "tokens": token(1).model_dump(mode="json"), "client": {
        **client("c-1").model_dump(mode="json", exclude_none=True)}}  # fmt: skip
    (folder / "0123abcd.json").write_text(json.dumps(old))
    assert logins(env) == {"https://auth.example.test": [A]}
    assert list(folder.iterdir()) == [store_path(env)]
    assert asyncio.run(ResourceLogin(LoginStore(store_path(env)), A).get_tokens()) == token(1)


def test_the_provider_listens_on_the_shared_clients_redirect(env: dict[str, str]) -> None:
    """The SDK step elelem hooks (the authorization server picked from the
    protected-resource metadata) tells the provider the issuer; the kept
    registration is then the client, its redirect port taken."""
    store = LoginStore(store_path(env))
    redirect = LoopbackRedirect()
    free = LoopbackRedirect()  # a port known free, given back
    port = free.port
    free.close()
    sign_in(store, A, 1, client("c-1", port=port))
    provider = oauth(B, interactive=True, env=env, redirect=redirect)
    assert provider._select_authorization_server([ISSUER]) == ISSUER
    assert provider.context.client_info.client_id == "c-1"
    assert (redirect.port, redirect.uri) == (port, f"http://127.0.0.1:{port}/callback")
    assert [str(u) for u in provider.context.client_metadata.redirect_uris] == [redirect.uri]
    redirect.close()


def test_a_logins_file_that_is_not_json_is_a_typed_error(env: dict[str, str]) -> None:
    from elelem.errors import MCPServerError

    path = store_path(env)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    (path.parent / "0123abcd.json").write_text(json.dumps({"url": A}))
    with pytest.raises(MCPServerError, match=r"the MCP logins file .* cannot be read"):
        logins(env)
