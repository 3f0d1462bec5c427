"""The login a remote MCP server's OAuth gives (issue #40): kept 0600 under
elelem's home, its tokens secrets of the whole process as soon as held."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

from elelem.redaction import ProcessRedactor
from elelem.tools.mcp_auth import TokenFile, logins, token_path

URL = "https://mcp.example.test/mcp"


def test_a_login_is_kept_0600_and_its_tokens_redacted_once_held(tmp_path: Path) -> None:
    from mcp.shared.auth import OAuthToken

    env = {"ELELEM_HOME": str(tmp_path / "home")}
    path = token_path(URL, env)
    store = TokenFile(path, URL)
    token = OAuthToken(access_token="at-4f9c2e77d1b0a5", refresh_token="rt-91aa03e6c2f4b8")
    asyncio.run(store.set_tokens(token))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.parent == tmp_path / "home" / "mcp-oauth"
    assert asyncio.run(store.get_tokens()) == token
    echoed = "tool said: at-4f9c2e77d1b0a5 and rt-91aa03e6c2f4b8"
    assert ProcessRedactor().redact(echoed) == "tool said: [redacted] and [redacted]"
    assert logins(env) == [URL]
    assert store.forget() and not store.forget()
    assert logins(env) == []


def test_one_file_per_server(tmp_path: Path) -> None:
    env = {"ELELEM_HOME": str(tmp_path)}
    assert token_path(URL, env) != token_path("https://mcp.example.test/other", env)
    assert token_path(URL, env) == token_path(URL + "?x=1", env)  # the query is no part of it
