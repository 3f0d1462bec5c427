"""The verifying TLS context every driver's HTTP clients share, its CA
certificates read at the first TLS handshake.

Reading the system's CA bundle costs about 630 million instructions, a
quarter of a plain ``elelem ask``, and a request to ``http://`` (a local
server, every loopback test) never needs it.  :class:`HandshakeLoadedContext`
is the context httpx2 makes by default (``httpcore2.default_ssl_context``:
a TLS client, certificate and host name checked, the CA file or directory
of ``SSL_CERT_FILE``/``SSL_CERT_DIR`` as ``ssl.create_default_context``
reads it, else OpenSSL's compiled-in CA paths) with that bundle loaded at
its first ``wrap_socket``/``wrap_bio`` (every TLS connection goes through
one), or when its CA certificates are asked for.  Every setting a caller
makes (ALPN, options) stays on the one object; a handshake that somehow
bypassed the load would find no CA and fail, never pass unverified.  On
macOS and Windows, where httpx2 makes another kind of context
(``truststore``), the context is httpx2's own, made at once.
"""

from __future__ import annotations

import functools
import os
import platform
import re
import ssl
import sys
import threading
from typing import Any

import httpx2
from httpcore2._ssl import CA_FILE_CANDIDATES

_HASHED = re.compile(r"[0-9a-fA-F]{8}\.\d")
"""A certificate's hashed name in a CA directory (``1a2b3c4d.0``), as httpcore2 looks for."""


class HandshakeLoadedContext(ssl.SSLContext):
    """httpx2's default verifying context whose CA bundle (``cafile``,
    ``capath``) is loaded before its first TLS connection (see the module)."""

    _locations: tuple[str | None, str | None]
    _loaded: bool
    _loading: threading.Lock

    @classmethod
    def made(
        cls, cafile: str | None, capath: str | None, *, as_default: bool = False
    ) -> HandshakeLoadedContext:
        """A verifying TLS client context that will load ``cafile``/``capath``;
        ``as_default``: with what ``ssl.create_default_context`` adds (the
        ``SSLKEYLOGFILE`` it honours; Python 3.13's strict verify flags)."""
        context = cls(ssl.PROTOCOL_TLS_CLIENT)
        if as_default:
            if sys.version_info >= (3, 13):
                context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN | ssl.VERIFY_X509_STRICT
            keylog = os.environ.get("SSLKEYLOGFILE")
            if keylog and not sys.flags.ignore_environment:
                context.keylog_filename = keylog
        context._locations = (cafile, capath)
        context._loaded = not (cafile or capath)  # nothing to load: as httpcore2
        context._loading = threading.Lock()
        return context

    def _load(self) -> None:
        if self._loaded:
            return
        with self._loading:  # one load, whichever thread connects first
            if not self._loaded:
                self.load_verify_locations(*self._locations)
                self._loaded = True

    def wrap_socket(self, *args: Any, **kwargs: Any) -> Any:
        self._load()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> Any:
        self._load()
        return super().wrap_bio(*args, **kwargs)

    def get_ca_certs(self, binary_form: bool = False) -> Any:
        self._load()
        return super().get_ca_certs(binary_form)

    def cert_store_stats(self) -> dict[str, int]:
        self._load()
        return super().cert_store_stats()


def verifying_context() -> ssl.SSLContext:
    """httpx2's default certificate-verifying TLS context, made once per
    process for the CA settings in force (``SSL_CERT_FILE``,
    ``SSL_CERT_DIR``): one context serves any number of clients, async and
    blocking, and loads the CA bundle once, at its first TLS connection."""
    return _context_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _context_for(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    # httpcore2.default_ssl_context, each branch with its bundle read later.
    if cafile:  # ssl.create_default_context(cafile=SSL_CERT_FILE)
        return HandshakeLoadedContext.made(cafile, None, as_default=True)
    if capath:  # ssl.create_default_context(capath=SSL_CERT_DIR)
        return HandshakeLoadedContext.made(None, capath, as_default=True)
    if platform.system() in ("Windows", "Darwin"):  # truststore's context: made as it is
        return httpx2.create_ssl_context()
    # Linux: OpenSSL's compiled-in paths, else the first CA file of the usual places.
    paths = ssl.get_default_verify_paths()
    found = paths.openssl_cafile if os.path.isfile(paths.openssl_cafile) else None
    directory = paths.openssl_capath if os.path.isdir(paths.openssl_capath) else None
    if directory and not found and not any(_HASHED.fullmatch(f) for f in os.listdir(directory)):
        directory = None
    if not found and not directory:
        found = next(filter(os.path.isfile, CA_FILE_CANDIDATES), None)
    return HandshakeLoadedContext.made(found, directory)


__all__ = ["HandshakeLoadedContext", "verifying_context"]
