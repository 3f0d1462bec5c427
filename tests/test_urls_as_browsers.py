"""Citation and media URLs are judged as browsers judge them (the WHATWG URL
Standard): a URL ``safe_url`` lets through must parse in Node's ``URL``
(the standard's reference behaviour in V8, as the live chat's ``new URL()``),
to the same host ``domain`` shows (issue #33)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from elelem.render.sanitize import domain, safe_url

HOSTILE = [
    "https://exa mple.com",
    "https://exa%20mple.com/x",
    "https://exa<mple.com",
    "https://exa^mple.com",
    "https://exa|mple.com",
    "https://example.com:99999/",
    "https://example.com:8o/",
    "https://evil.example\\@good.example/",
    "https://good.example\\evil",
    "https://[::1/",
    "https://[zz::1]/",
    "https://1.2.3.4.5/",
    "https://256.1.1.1/",
    "https://ex%ample.com/",
    "https://xn--/",
    "https://a..b/",
    "https:// example.com/",
    "https://0x7f.1/",
    "https://1.2.3.04/",
]
FINE = [
    "https://example.com/a?b=c#d",
    "HTTP://Example.COM:8080/p q",
    "https://user:pw@example.com/",
    "https://[::1]:443/x",
    "https://127.0.0.1/",
    "https://bücher.example/straße",
    "https://en.wikipedia.org/wiki/Eiffel_Tower",
    "https://exam\u00adple.com/",  # the soft hyphen is removed (sanitize), as a browser does
    "https://example.com./",
]


def _node_hosts(urls: list[str]) -> list[str | None]:
    script = (
        "const urls = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify(urls.map(u => { try { return new URL(u).hostname }"
        " catch (e) { return null } })));"
    )
    done = subprocess.run(
        ["node", "-e", script], input=json.dumps(urls), capture_output=True, text=True, check=True
    )
    hosts: list[str | None] = json.loads(done.stdout)
    return hosts


@pytest.mark.skipif(shutil.which("node") is None, reason="Node is installed by .ci/run")
def test_every_url_elelem_links_parses_in_a_browser_to_the_same_host() -> None:
    urls = [*HOSTILE, *FINE, "https://exa\x7fmple.com/"]
    linked = [(url, shown) for url in urls if (shown := safe_url(url)) is not None]
    assert len(linked) == len(FINE) + 1
    hosts = _node_hosts([shown for _, shown in linked])
    for (url, shown), host in zip(linked, hosts, strict=True):
        assert host is not None, f"elelem links {shown!r}, a browser's URL() throws"
        ours = domain(url).encode("idna").decode() if "[" not in host else f"[{domain(url)}]"
        assert ours == host.removeprefix("www."), url


@pytest.mark.parametrize("url", HOSTILE)
def test_a_url_a_browser_rejects_or_reads_otherwise_is_not_linked(url: str) -> None:
    assert safe_url(url) is None


@pytest.mark.parametrize("url", FINE)
def test_an_ordinary_url_is_linked(url: str) -> None:
    assert safe_url(url) is not None
