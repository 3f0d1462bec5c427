"""The drivers' verifying TLS context reads its CA bundle at the first TLS
handshake (elelem.transport.tls): a request to ``http://`` never pays for
it, a TLS connection (blocking: ``wrap_socket``; async: ``wrap_bio``) is
verified against it, and an unknown issuer is refused."""

from __future__ import annotations

import platform
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from elelem.testing.servers import LoopbackServer, status
from elelem.transport.tls import HandshakeLoadedContext, verifying_context
from test_azure_environment_credential import _certificate as self_signed


def _certificate(tmp: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, as PEM files."""
    cert_path, key_path, _, _ = self_signed(tmp, name, san=True)
    return cert_path, key_path


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello over TLS"
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        del args


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTPS server on 127.0.0.1 (its URL) and the CA file that trusts it."""
    cert_path, key_path = _certificate(tmp_path, "loopback")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_port}/", cert_path
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_plain_http_never_reads_the_bundle(tmp_path: Path) -> None:
    context = HandshakeLoadedContext.made(str(_certificate(tmp_path, "ca")[0]), None)
    with LoopbackServer([status(204, b"")]) as server, httpx2.Client(verify=context) as client:
        assert client.get(server.url).status_code == 204
    assert context._loaded is False  # nothing read yet
    assert context.cert_store_stats()["x509"] == 1  # read when asked for


def test_a_blocking_tls_request_is_verified_against_the_bundle(
    tls_server: tuple[str, Path],
) -> None:
    url, ca = tls_server
    context = HandshakeLoadedContext.made(str(ca), None)
    with httpx2.Client(verify=context) as client:
        response = client.get(url)
    assert (response.status_code, response.text) == (200, "hello over TLS")


def test_an_async_tls_request_is_verified_against_the_bundle(
    tls_server: tuple[str, Path],
) -> None:
    url, ca = tls_server
    context = HandshakeLoadedContext.made(str(ca), None)

    async def get() -> tuple[int, str]:
        async with httpx2.AsyncClient(verify=context) as client:
            response = await client.get(url)
        return response.status_code, response.text

    assert anyio.run(get) == (200, "hello over TLS")


def test_an_unknown_issuer_is_refused(tls_server: tuple[str, Path], tmp_path: Path) -> None:
    url, _ = tls_server
    other = _certificate(tmp_path, "other")[0]
    context = HandshakeLoadedContext.made(str(other), None)
    with httpx2.Client(verify=context) as client, pytest.raises(httpx2.ConnectError) as caught:
        client.get(url)
    assert "CERTIFICATE_VERIFY_FAILED" in str(caught.value)


SETTINGS = ("protocol", "verify_mode", "check_hostname", "options", "verify_flags",
            "minimum_version", "maximum_version", "keylog_filename")  # fmt: skip


def _same_as_httpx2(ours: ssl.SSLContext) -> None:
    theirs = httpx2.create_ssl_context()  # the same CA settings in force
    assert isinstance(ours, HandshakeLoadedContext)
    assert [getattr(ours, s) for s in SETTINGS] == [getattr(theirs, s) for s in SETTINGS]
    assert ours.get_ca_certs(binary_form=True) == theirs.get_ca_certs(binary_form=True)
    assert ours.cert_store_stats() == theirs.cert_store_stats()


@pytest.mark.skipif(platform.system() != "Linux", reason="httpx2 uses truststore elsewhere")
def test_the_default_context_is_httpx2s_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.delenv("SSLKEYLOGFILE", raising=False)
    _same_as_httpx2(verifying_context())


def test_a_ca_file_in_force_is_read_as_httpx2_reads_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cert_path, _ = _certificate(tmp_path, "ca")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_path))
    monkeypatch.setenv("SSLKEYLOGFILE", str(tmp_path / "keys.log"))
    context = verifying_context()
    assert context._loaded is False  # type: ignore[attr-defined]
    _same_as_httpx2(context)
    assert context.cert_store_stats()["x509"] == 1  # the one certificate of that file
