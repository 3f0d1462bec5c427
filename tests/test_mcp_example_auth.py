"""`elelem mcp login` against an authorization server the tests did not
write: the `mcp` SDK's own example (`examples/servers/simple-auth` of
modelcontextprotocol/python-sdk, the sdist of the installed `mcp`), fetched
by `make mcp-example` (CI runs it: .ci/run) into tests/mcp_examples, never
copied into the repository.

Its authorization server and its resource server run on 127.0.0.1
(`localhost`, the name the example serves under), the resource server
with `--oauth-strict` (RFC 8707: a token is accepted only by the server it
was issued for): a login, then the server's tools listed and called with
the kept login, no browser at hand.  The slow variant runs two resource
servers of one issuer: two logins register one client and get one token
each, each server takes its own; `mcp list` groups them by issuer and
`mcp logout ISSUER` forgets both.  The browser is
tests/oauth_form_browser.py: it follows the redirects and submits the
example's sign-in form as the page filled it in.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import IO

import pytest

from cli_helpers import base_env, run

EXAMPLE = Path(__file__).parent / "mcp_examples" / f"mcp-{version('mcp')}" / "simple-auth"
BROWSER = Path(__file__).parent / "oauth_form_browser.py"

pytestmark = pytest.mark.skipif(
    not (EXAMPLE / "mcp_simple_auth").is_dir(),
    reason="the mcp SDK's example OAuth server is not fetched here: `make mcp-example` "
    "fetches it from the mcp sdist (CI does)",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start(args: list[str], port: int, log: IO[bytes]) -> subprocess.Popen[bytes]:
    """One of the example's servers, once it accepts connections."""
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE)}
    env = {k: v for k, v in env.items() if not k.startswith("ELELEM_")}
    process = subprocess.Popen([sys.executable, "-m", *args, "--port", str(port)],
                               cwd=EXAMPLE, env=env, stdout=log, stderr=log)  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            if process.poll() is not None:
                break
            time.sleep(0.1)
    process.kill()
    raise AssertionError(f"{args[0]} did not start: {Path(log.name).read_text()[-2000:]}")


@contextlib.contextmanager
def example_servers(tmp_path: Path, count: int) -> Iterator[tuple[str, list[str], Path]]:
    """The example's authorization server and ``count`` resource servers:
    the issuer, the servers' URLs, and the authorization server's log."""
    issuer_port, ports = free_port(), [free_port() for _ in range(count)]
    issuer = f"http://localhost:{issuer_port}"
    log_path = tmp_path / "as.log"
    started: list[subprocess.Popen[bytes]] = []
    with open(log_path, "wb") as as_log, open(tmp_path / "rs.log", "wb") as rs_log:
        try:
            started.append(start(["mcp_simple_auth.auth_server"], issuer_port, as_log))
            for port in ports:
                rs = ["mcp_simple_auth", "--auth-server", issuer,
                      "--transport", "streamable-http", "--oauth-strict"]  # fmt: skip
                started.append(start(rs, port, rs_log))
            yield issuer, [f"http://localhost:{port}/mcp" for port in ports], log_path
        finally:
            for process in started:
                process.terminate()
                process.wait(10)


def login(env: dict[str, str], url: str) -> None:
    out = run(env, "mcp", "login", url)
    # Two tools: the server's get_time, and elelem's read_resource for its resources.
    assert (out.returncode, out.stdout) == (0, f"signed in to {url} (2 tools)\n"), out.stderr


def call_get_time(env: dict[str, str], url: str, tokens: list[str]) -> None:
    """List the server's tools and call one with the kept login, no browser
    at hand (a new sign-in would fail): the server took the token sent."""
    out = run({**env, "BROWSER": "false"}, "mcp", "tools", url, "--call", "get_time", "{}")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[:2] == ["localhost speaks MCP 2026-07-28",
                                           "  get_time  Get the current server time."]  # fmt: skip
    assert json.loads(out.stdout.partition("get_time result: ")[2])["timezone"] == "UTC"
    assert not any(token in out.stdout + out.stderr for token in tokens)


def kept_logins(env: dict[str, str]) -> dict[str, dict[str, object]]:
    kept = Path(env["ELELEM_HOME"]) / "mcp-oauth" / "logins.json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    issuers: dict[str, dict[str, object]] = json.loads(kept.read_text())["issuers"]
    return issuers


def introspected(issuer: str, token: str) -> dict[str, object]:
    """What the authorization server says it issued ``token`` for."""
    request = urllib.request.Request(f"{issuer}/introspect", data=f"token={token}".encode())
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as answer:
        found: dict[str, object] = json.loads(answer.read())
        return found


def test_login_at_the_sdks_example_server_then_its_tools(tmp_path: Path) -> None:
    env = base_env(tmp_path, BROWSER=f"{sys.executable} {BROWSER} %s")
    with example_servers(tmp_path, 1) as (issuer, (url,), _log):
        login(env, url)
        ((kept_issuer, place),) = kept_logins(env).items()
        assert kept_issuer == issuer
        token = place["resources"][url]["tokens"]["access_token"]  # type: ignore[index]
        assert introspected(issuer, token)["aud"] == url
        call_get_time(env, url, [token])
    assert run(env, "mcp", "list").stdout == f"{issuer}\n  {url}\n"


@pytest.mark.slow
def test_two_servers_of_one_issuer_share_the_client_not_the_token(tmp_path: Path) -> None:
    env = base_env(tmp_path, BROWSER=f"{sys.executable} {BROWSER} %s")
    with example_servers(tmp_path, 2) as (issuer, (first, second), as_log):
        login(env, first)
        login(env, second)
        # One client registered with the issuer, one token issued for each server.
        requests = as_log.read_text()
        assert requests.count('"POST /register HTTP/1.1" 201') == 1, requests
        assert requests.count('"POST /token HTTP/1.1" 200') == 2, requests
        place = kept_logins(env)[issuer]
        assert sorted(place) == ["client", "resources"]
        resources: dict[str, dict[str, dict[str, str]]] = place["resources"]  # type: ignore[assignment]
        tokens = {url: entry["tokens"]["access_token"] for url, entry in resources.items()}
        assert len(set(tokens.values())) == 2
        for url, token in tokens.items():
            assert introspected(issuer, token)["aud"] == url
        # --oauth-strict: each server takes only a token issued for it.
        for url in (first, second):
            call_get_time(env, url, list(tokens.values()))
    # Both listed in URL order (the ports are random, so sort the two here too).
    low, high = sorted((first, second))
    assert run(env, "mcp", "list").stdout == f"{issuer}\n  {low}\n  {high}\n"
    out = run(env, "mcp", "logout", issuer)
    assert out.stdout == f"signed out of {low}\nsigned out of {high}\n"
    assert run(env, "mcp", "list").stdout == ""
