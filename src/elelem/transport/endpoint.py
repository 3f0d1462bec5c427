"""Where a request goes and how it authenticates, with the key kept secret."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from elelem.vocabulary import ProviderId

REDACTED = "[redacted]"


@dataclass(frozen=True, repr=False, eq=False)
class Endpoint:
    """A provider endpoint: base URL, plain headers and the secret API key.

    The key goes only into the ``auth_header`` request header (prefixed with
    ``auth_scheme`` when one is set, e.g. ``Bearer``).  It never appears in
    this object's repr, in an error message or in a log line: error bodies
    and transport messages pass through :meth:`redact` first.
    """

    provider: ProviderId
    base_url: str
    api_key: str | None = None
    auth_header: str = "authorization"
    auth_scheme: str = "Bearer"
    headers: Mapping[str, str] = field(default_factory=dict)

    def url(self, path: str) -> str:
        """``path`` (relative to the base URL, query allowed) joined to the base URL."""
        if path.startswith(("http://", "https://")):
            return path
        if not path:
            return self.base_url
        return self.base_url.rstrip("/") + "/" + path.lstrip("/")

    def request_headers(self, extra: Mapping[str, str]) -> dict[str, str]:
        """Headers for one request: ours, then the shape's ``extra``, then auth.

        Auth comes last so that no shape header can replace or leak it.
        """
        out = {k.lower(): v for k, v in self.headers.items()}
        out.update({k.lower(): v for k, v in extra.items()})
        if self.api_key:
            value = f"{self.auth_scheme} {self.api_key}" if self.auth_scheme else self.api_key
            out[self.auth_header.lower()] = value
        return out

    def redact(self, text: str) -> str:
        """``text`` with every occurrence of the API key replaced."""
        if self.api_key and len(self.api_key) >= 4 and self.api_key in text:
            return text.replace(self.api_key, REDACTED)
        return text

    def redact_bytes(self, data: bytes) -> bytes:
        """``data`` with every occurrence of the API key replaced."""
        if self.api_key and len(self.api_key) >= 4:
            key = self.api_key.encode("utf-8")
            if key in data:
                return data.replace(key, REDACTED.encode("ascii"))
        return data

    def __repr__(self) -> str:
        key = REDACTED if self.api_key else None
        return (
            f"Endpoint(provider={self.provider!r}, base_url={self.base_url!r}, "
            f"api_key={key!r}, auth_header={self.auth_header!r}, "
            f"headers={sorted(self.headers)!r})"
        )

    __str__ = __repr__


__all__ = ["REDACTED", "Endpoint"]
