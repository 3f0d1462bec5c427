"""The bearer signer: when a token is fetched, what it sends, what it hides."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from elelem.errors import AuthenticationError, ConfigError
from elelem.transport import Endpoint
from elelem.transport.bearer import MAX_REMEMBERED, BearerSigner
from elelem.vocabulary import ProviderId

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


class Tokens:
    """A token source of numbered tokens, each valid ``life`` from ``start``."""

    def __init__(self, life: timedelta | None = timedelta(hours=1), pause: float = 0.0) -> None:
        self.life = life
        self.pause = pause
        self.start = T0
        self.count = 0
        self.secret = "refresh-secret-0123456789"

    def fetch(self) -> tuple[str, datetime | None]:
        time.sleep(self.pause)
        self.count += 1
        expiry = self.start + self.life if self.life is not None else None
        return f"tok-{self.count}-0123456789abcdef", expiry

    def secrets(self) -> tuple[str, ...]:
        return (self.secret,)


def sign(signer: BearerSigner, now: datetime) -> str:
    return signer.sign("POST", "/p", "", {"host": "h"}, b"", now)["authorization"]


def test_fetched_once_then_again_within_the_margin() -> None:
    source = Tokens()
    signer = BearerSigner(source, where="provider p")
    assert signer.due(T0)
    assert sign(signer, T0) == "Bearer tok-1-0123456789abcdef"
    assert not signer.due(T0 + timedelta(minutes=54, seconds=59))
    assert signer.due(T0 + timedelta(minutes=55))  # five minutes before expiry
    source.start = T0 + timedelta(minutes=55)
    signer.refresh(T0 + timedelta(minutes=55))
    assert sign(signer, T0 + timedelta(minutes=56)) == "Bearer tok-2-0123456789abcdef"
    assert signer.refreshes == 2 and signer.expiry == T0 + timedelta(minutes=115)


def test_a_token_without_expiry_is_kept() -> None:
    signer = BearerSigner(Tokens(life=None), where="provider p")
    sign(signer, T0)
    assert not signer.due(T0 + timedelta(days=30))


def test_the_redactor_knows_every_token_held_and_the_source_secrets() -> None:
    source = Tokens()
    signer = BearerSigner(source, where="provider p")
    endpoint = Endpoint(ProviderId("p"), "http://127.0.0.1:9", signer=signer)
    sign(signer, T0)
    first = "tok-1-0123456789abcdef"
    source.start = T0 + timedelta(hours=2)
    signer.refresh(T0 + timedelta(hours=2))
    text = f"old {first} new tok-2-0123456789abcdef secret {source.secret}"
    assert endpoint.redact(text) == "old [redacted] new [redacted] secret [redacted]"
    assert first not in repr(signer) and first not in repr(endpoint)
    for n in range(MAX_REMEMBERED + 3):
        source.start = T0 + timedelta(hours=3 + n * 2)
        signer.refresh(source.start)
    assert len(signer.secrets()) == MAX_REMEMBERED + 1  # the tokens kept, and the secret


def test_a_bad_token_is_refused_before_it_is_sent() -> None:
    class Broken(Tokens):
        def fetch(self) -> tuple[str, datetime | None]:
            return "tok\r\nx-injected: 1", None

    with pytest.raises(ConfigError, match="the access token: the value holds a line break"):
        sign(BearerSigner(Broken(), where="provider p"), T0)

    class Empty(Tokens):
        def fetch(self) -> tuple[str, datetime | None]:
            return "", None

    with pytest.raises(AuthenticationError, match=r"^provider p: the credential gave no token$"):
        sign(BearerSigner(Empty(), where="provider p"), T0)


def test_racing_refreshes_fetch_once() -> None:
    source = Tokens(pause=0.05)
    signer = BearerSigner(source, where="provider p")
    threads = [threading.Thread(target=signer.refresh, args=(T0,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert source.count == 1
