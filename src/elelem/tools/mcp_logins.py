"""The MCP logins elelem keeps: one 0600 file, by issuer, then by resource.

``elelem mcp login URL`` signs in at the authorization server (the
*issuer*) that the MCP server at ``URL`` (the *resource*) names.  What it
gives is kept in ``mcp-oauth/logins.json`` under elelem's home::

    {"issuers": {
        "https://auth.example": {
            "client": {...},                  # the client registration, shared
            "resources": {
                "https://a.example/mcp": {"tokens": {...}},
                "https://b.example/mcp": {"tokens": {...}, "client": {...}}}}}}

The client registration (the client id, and secret, dynamic registration
gave) belongs to the issuer, so a second server of the same issuer signs in
as the same client rather than registering again (see
:func:`shared_client`).  Tokens belong to one resource: MCP requires
resource indicators (RFC 8707), so a token is issued for one server and is
only ever read back for that server's URL.  A resource that signed in as
another client of its issuer (the shared one's redirect port was taken)
keeps that client beside its tokens, and refreshes with it.  A login whose
issuer is not known yet (a client given beforehand, before discovery) is
kept under the issuer ``""`` until it is.

Every token and client secret is made a secret of the whole process
(:func:`elelem.redaction.hold_secrets`) as soon as it is read or written,
so no message, record or export shows it; the file is created 0600 (never
through a symlink) and each write replaces it whole.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from elelem.errors import MCPServerError
from elelem.home import PRIVATE_FILE, create_private, home_dir, private_parent
from elelem.redaction import hold_secrets

UNKNOWN_ISSUER = ""
"""The issuer a login is kept under until discovery names its own."""


def resource_key(url: str) -> str:
    """The key of the server at ``url``: its scheme, host, port and path (a
    query is no part of which server it is)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def issuer_key(issuer: str) -> str:
    """The key of an issuer: as given, a root issuer without its trailing
    slash (``https://as.example/`` and ``https://as.example`` name one
    server, RFC 8414 §3.3 as the SDK compares them)."""
    parts = urlsplit(issuer)
    if parts.path in ("", "/") and not parts.query:
        return f"{parts.scheme}://{parts.netloc}"
    return issuer


def store_path(env: Mapping[str, str] | None = None) -> Path:
    """The file that keeps every MCP login."""
    return home_dir(env) / "mcp-oauth" / "logins.json"


class LoginStore:
    """The logins file (see the module docs): read whole, written whole."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> dict[str, Any]:
        """The logins, ``{"issuers": {...}}`` (empty without a file); every
        secret in it held for redaction."""
        self._fold_old_files()
        data = self._load()
        _hold(data)
        return data

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"issuers": {}}
        except (OSError, ValueError) as exc:
            raise MCPServerError(f"the MCP logins file {self.path} cannot be read: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("issuers"), dict):
            raise MCPServerError(f"the MCP logins file {self.path} is not elelem's logins")
        return data

    def write(self, data: dict[str, Any]) -> None:
        """Replace the file with ``data`` (0600, its secrets held)."""
        _hold(data)
        private_parent(self.path)
        fresh = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        fresh.unlink(missing_ok=True)
        create_private(fresh)
        fresh.chmod(PRIVATE_FILE)
        fresh.write_text(json.dumps(data), encoding="utf-8")
        fresh.replace(self.path)

    def find(self, url: str) -> tuple[str, dict[str, Any]] | None:
        """The issuer and entry of the server at ``url``, if it has a login."""
        key = resource_key(url)
        for issuer, kept in self.read()["issuers"].items():
            entry = kept.get("resources", {}).get(key)
            if entry is not None:
                return issuer, entry
        return None

    def logins(self) -> dict[str, list[str]]:
        """The servers with a login, by issuer (``""``: not known yet)."""
        issuers = self.read()["issuers"]
        return {i: sorted(kept.get("resources", {})) for i, kept in sorted(issuers.items())}

    def forget(self, target: str) -> list[str]:
        """Forget an issuer (every login under it, and its client
        registration) or one server's login; the servers forgotten."""
        data = self.read()
        issuers = data["issuers"]
        issuer = issuer_key(target)
        if issuer in issuers and target.strip():
            gone = sorted(issuers.pop(issuer).get("resources", {}))
            self.write(data)
            return gone or [issuer]
        key = resource_key(target)
        for name, kept in list(issuers.items()):
            if kept.get("resources", {}).pop(key, None) is not None:
                if not kept["resources"]:
                    del issuers[name]  # its last server: the registration goes with it
                self.write(data)
                return [key]
        return []

    def _fold_old_files(self) -> None:
        """Fold the logins of elelem before this file (one file a server,
        ``mcp-oauth/HASH.json``) into it, each under the issuer its client
        was registered with, then remove them."""
        folder = self.path.parent
        old = [f for f in folder.glob("*.json") if f != self.path] if folder.is_dir() else []
        if not old:
            return
        data = self._load()
        for file in old:
            with contextlib.suppress(ValueError):  # not a login: left where it is
                kept = json.loads(file.read_text(encoding="utf-8"))
                if not isinstance(kept, dict) or not isinstance(kept.get("url"), str):
                    continue
                client = kept.get("client")
                issuer = issuer_key((client or {}).get("issuer") or UNKNOWN_ISSUER)
                entry = {k: kept[k] for k in ("tokens", "client") if k in kept}
                place = data["issuers"].setdefault(issuer, {"resources": {}})
                place["resources"][resource_key(kept["url"])] = entry
                self.write(data)
                file.unlink()


def _hold(data: Mapping[str, Any]) -> None:
    for kept in data.get("issuers", {}).values():
        hold_secrets((kept.get("client") or {}).get("client_secret"))
        for entry in kept.get("resources", {}).values():
            tokens = entry.get("tokens") or {}
            hold_secrets(tokens.get("access_token"), tokens.get("refresh_token"))
            hold_secrets((entry.get("client") or {}).get("client_secret"))


class ResourceLogin:
    """The SDK's ``TokenStorage`` for one server (one resource) of the
    :class:`LoginStore`: its tokens, and the client it signs in as (its own,
    else its issuer's)."""

    def __init__(self, store: LoginStore, url: str) -> None:
        self.store = store
        self.url = url
        self.key = resource_key(url)
        self.issuer: str | None = None
        """The issuer discovery named for this server (None until it has)."""

    def _entry(self, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """This server's issuer and entry in ``data``, moved under the
        issuer discovery named (made when there is none)."""
        found: tuple[str, dict[str, Any]] = (UNKNOWN_ISSUER, {})
        for issuer, kept in data["issuers"].items():
            if self.key in kept.get("resources", {}):
                found = issuer, kept["resources"][self.key]
                break
        issuer, entry = found
        named = issuer_key(self.issuer) if self.issuer is not None else issuer
        if named != issuer:
            data["issuers"].get(issuer, {}).get("resources", {}).pop(self.key, None)
            if issuer in data["issuers"] and not data["issuers"][issuer]["resources"]:
                del data["issuers"][issuer]
        place = data["issuers"].setdefault(named, {"resources": {}})
        place["resources"][self.key] = entry
        return named, entry

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        found = self.store.find(self.url)
        tokens = found[1].get("tokens") if found else None
        return None if tokens is None else OAuthToken.model_validate(tokens)

    async def set_tokens(self, tokens: Any) -> None:
        data = self.store.read()
        _issuer, entry = self._entry(data)
        entry["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        self.store.write(data)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        found = self.store.find(self.url)
        if found is None:
            return None
        issuer, entry = found
        client = entry.get("client")
        if client is None and issuer != UNKNOWN_ISSUER:
            client = self.store.read()["issuers"][issuer].get("client")
        return None if client is None else OAuthClientInformationFull.model_validate(client)

    async def set_client_info(self, client_info: Any) -> None:
        if client_info.issuer is not None:
            self.issuer = client_info.issuer  # the SDK stamps what it registered with
        self.keep_client(client_info.model_dump(mode="json", exclude_none=True))

    def keep_client(self, client: dict[str, Any]) -> None:
        """Keep ``client`` as this server's: its issuer's shared
        registration when the issuer has none (or has this one), else the
        server's own."""
        data = self.store.read()
        issuer, entry = self._entry(data)
        kept = data["issuers"][issuer]
        shared = kept.get("client")
        if issuer != UNKNOWN_ISSUER and (
            shared is None or shared["client_id"] == client["client_id"]
        ):
            kept["client"] = client
            entry.pop("client", None)
        else:
            entry["client"] = client
        self.store.write(data)

    def shared_client(self, issuer: str) -> dict[str, Any] | None:
        """The client registration kept for ``issuer`` (as JSON), if any;
        and from now on this server is known to be ``issuer``'s."""
        self.issuer = issuer
        kept = self.store.read()["issuers"].get(issuer_key(issuer))
        return None if kept is None else kept.get("client")


__all__ = [
    "UNKNOWN_ISSUER",
    "LoginStore",
    "ResourceLogin",
    "issuer_key",
    "resource_key",
    "store_path",
]
