"""A page people keep open: ``elelem serve``'s URL stays the same across
restarts (its token kept 0600 in elelem's home; ``--token`` gives another),
and a browser opening it without the token is told, in a page, which command
prints it.  Real ``elelem serve`` processes on 127.0.0.1 (port 0), each in
its own tmp home with no inherited ELELEM_* variable."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

from cli_helpers import base_env, run, serving


def test_the_url_printed_before_a_restart_still_opens(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    with serving(env) as (_, first):
        pass
    kept = Path(env["ELELEM_HOME"]) / "serve-token"
    assert kept.read_text() == f"{first}\n"
    assert kept.stat().st_mode & 0o777 == 0o600
    with (
        serving(env) as (base, second),
        urllib.request.urlopen(f"{base}/?token={first}", timeout=10) as page,
    ):
        assert page.status == 200
    assert second == first


def test_token_gives_the_url_its_token(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    mine = "my-own-token-0123456789abcdefABC"  # 32, as the URL pattern of the helper
    with serving(env, "--token", mine) as (_, token):
        assert token == mine
    bad = run(env, "serve", "--port", "0", "--token", "short")
    assert (bad.returncode, bad.stderr) == (
        2,
        "elelem: --token: give 16 to 128 of A-Z, a-z, 0-9, _ and -\n",
    )


def test_a_browser_without_the_token_is_told_which_command_prints_it(tmp_path: Path) -> None:
    with serving(base_env(tmp_path)) as (base, _):
        request = urllib.request.Request(base + "/", headers={"accept": "text/html,*/*"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        page = refused.value.read().decode()
        assert refused.value.code == 403
        assert refused.value.headers["content-type"] == "text/html; charset=utf-8"
        assert refused.value.headers["content-security-policy"] == "default-src 'none'"
        assert "<code>elelem serve</code>" in page
        with pytest.raises(urllib.error.HTTPError) as api:
            urllib.request.urlopen(base + "/api/chat", data=b"{}", timeout=10)
        assert api.value.read() == b"missing or wrong access token"  # the API: plain text
