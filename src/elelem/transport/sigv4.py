"""AWS Signature Version 4 request signing (header form), stdlib only.

Sans-IO: the caller hands over the request exactly as it will be sent
(method, the path and query as on the wire, headers, body) and the time to
stamp it with; the signer returns the headers to add.  Nothing here reads a
clock, the environment or a file.

The canonical URI is the wire path URI-encoded once more.  AWS documents
that for every service but S3 "each path segment must be URI-encoded twice":
the wire path already carries the first encoding (Bedrock's model id
``anthropic.claude-…-v1:0`` travels as ``…-v1%3A0``), so the canonical
request holds ``…-v1%253A0``, as AWS recomputes it.  The path is not
normalised (no ``.``/``..`` segments are removed): the paths elelem builds
have none.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from datetime import UTC, datetime
from urllib.parse import quote, unquote

from elelem.errors import ConfigError

ALGORITHM = "AWS4-HMAC-SHA256"
REDACTED = "[redacted]"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def _encode(text: str, safe: str = "") -> str:
    # RFC 3986 unreserved characters stay; everything else is %XX upper-case.
    return quote(text, safe="-_.~" + safe)


def canonical_uri(path: str) -> str:
    """The canonical URI of a wire ``path``: each segment URI-encoded (again)."""
    return _encode(path or "/", safe="/")


def canonical_query(query: str) -> str:
    """The canonical query string: each name and value decoded, strictly
    re-encoded, and the pairs sorted by name then value."""
    if not query:
        return ""
    pairs = []
    for part in query.split("&"):
        name, _, value = part.partition("=")
        pairs.append((_encode(unquote(name)), _encode(unquote(value))))
    return "&".join(f"{name}={value}" for name, value in sorted(pairs))


def _canonical_value(value: str) -> str:
    return " ".join(value.split())


def canonical_request(
    method: str,
    path: str,
    query: str,
    headers: Mapping[str, str],
    signed: tuple[str, ...],
    payload_hash: str,
) -> str:
    """The canonical request over the ``signed`` header names (lower-case, sorted)."""
    lower = {k.lower(): v for k, v in headers.items()}
    lines = "".join(f"{name}:{_canonical_value(lower[name])}\n" for name in signed)
    return "\n".join(
        (
            method.upper(),
            canonical_uri(path),
            canonical_query(query),
            lines,
            ";".join(signed),
            payload_hash,
        )
    )


def signing_key(secret_access_key: str, date: str, region: str, service: str) -> bytes:
    """The key derived from the secret for one day, region and service."""
    key = _hmac(("AWS4" + secret_access_key).encode("utf-8"), date)
    key = _hmac(key, region)
    key = _hmac(key, service)
    return _hmac(key, "aws4_request")


def amz_date(now: datetime) -> str:
    """``now`` as the ``x-amz-date`` basic ISO 8601 UTC form (``20150830T123600Z``)."""
    if now.tzinfo is None or now.utcoffset() is None:
        # A naive time would be read as local time by astimezone: a wrong signature.
        raise ConfigError(f"the signing time must be timezone-aware, not {now.isoformat()}")
    return now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


class SigV4Signer:
    """Signs requests for one AWS service and region with IAM credentials.

    ``session_token`` (temporary STS credentials) is sent as
    ``x-amz-security-token`` and signed.  ``sign_payload`` adds and signs
    ``x-amz-content-sha256`` (S3 requires it; Bedrock does not).  The secret
    and the session token never appear in this object's repr; :meth:`secrets`
    lists them so that whoever writes error text can redact them.
    """

    __slots__ = (
        "_secret",
        "access_key_id",
        "region",
        "service",
        "session_token",
        "sign_payload",
    )

    def __init__(
        self,
        access_key_id: str,
        secret_access_key: str,
        session_token: str | None = None,
        *,
        region: str,
        service: str,
        sign_payload: bool = False,
    ) -> None:
        if not access_key_id or not secret_access_key:
            raise ConfigError("SigV4 needs both an access key id and a secret access key")
        self.access_key_id = access_key_id
        self._secret = secret_access_key
        self.session_token = session_token or None
        self.region = region
        self.service = service
        self.sign_payload = sign_payload

    def scope(self, now: datetime) -> str:
        """The credential scope ``YYYYMMDD/region/service/aws4_request``."""
        return f"{amz_date(now)[:8]}/{self.region}/{self.service}/aws4_request"

    def string_to_sign(self, canonical: str, now: datetime) -> str:
        """The string to sign for a canonical request made at ``now``."""
        digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        return f"{ALGORITHM}\n{amz_date(now)}\n{self.scope(now)}\n{digest}"

    def sign(
        self,
        method: str,
        path: str,
        query: str,
        headers: Mapping[str, str],
        body: bytes,
        now: datetime,
    ) -> dict[str, str]:
        """The headers to add to the request for it to be signed at ``now``.

        ``path`` and ``query`` are as sent on the wire (already
        percent-encoded); ``headers`` must hold ``host``.  Signed are
        ``host``, ``x-amz-date`` and, when present, ``x-amz-security-token``
        and ``x-amz-content-sha256``.
        """
        stamp = amz_date(now)
        added = {"x-amz-date": stamp}
        if self.session_token:
            added["x-amz-security-token"] = self.session_token
        payload_hash = hashlib.sha256(body).hexdigest()
        if self.sign_payload:
            added["x-amz-content-sha256"] = payload_hash
        merged = {k.lower(): v for k, v in headers.items()}
        if "host" not in merged:
            raise ValueError("a request to sign needs a host header")
        merged.update(added)
        signed = tuple(sorted(name for name in merged if name == "host" or name in added))
        canonical = canonical_request(method, path, query, merged, signed, payload_hash)
        key = signing_key(self._secret, stamp[:8], self.region, self.service)
        signature = hmac.new(
            key, self.string_to_sign(canonical, now).encode("utf-8"), hashlib.sha256
        ).hexdigest()
        added["authorization"] = (
            f"{ALGORITHM} Credential={self.access_key_id}/{self.scope(now)}, "
            f"SignedHeaders={';'.join(signed)}, Signature={signature}"
        )
        return added

    def secrets(self) -> tuple[str, ...]:
        """The values that must never be shown: the secret and the session token."""
        return (self._secret, self.session_token) if self.session_token else (self._secret,)

    def __repr__(self) -> str:
        token = REDACTED if self.session_token else None
        return (
            f"SigV4Signer(access_key_id={self.access_key_id!r}, secret_access_key={REDACTED!r}, "
            f"session_token={token!r}, region={self.region!r}, service={self.service!r})"
        )

    __str__ = __repr__


__all__ = [
    "ALGORITHM",
    "EMPTY_SHA256",
    "SigV4Signer",
    "amz_date",
    "canonical_query",
    "canonical_request",
    "canonical_uri",
    "signing_key",
]
