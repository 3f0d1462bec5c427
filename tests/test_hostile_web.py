"""The viewer against hostile values (issue #41, low): an escape character
in a call id, a resume naming a million calls, an unknown provider, and a
citation URL with text beside its IPv6 brackets."""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from elelem.conversation import Awaiting, SQLiteStore
from elelem.render.sanitize import safe_url
from elelem.testing.servers import LoopbackServer
from elelem.turns.pending import Pending, pending
from elelem.vocabulary import ToolCallBlock
from elelem.web.approvals import MAX_RESUME_BODY, MAX_RESUME_CALLS, pending_form
from test_web_approvals import (
    LOCATION,
    TOKEN,
    answer,
    charge,
    post,
    serving,
    stopped,
)


@pytest.fixture(scope="module")
def anthropic() -> Iterator[LoopbackServer]:
    """The approvals suite's Anthropic stand-in (a charge call to approve)."""
    with LoopbackServer(answer, lifetime=300) as server:
        yield server


def test_an_escape_character_in_a_call_id_is_no_raw_control_on_the_page() -> None:
    call = ToolCallBlock("call_\x1b[31mred\x07", "charge", "{}")
    waiting = Pending(1, Awaiting(approval=(call.id,), results=()), (call,), ())
    form = pending_form(waiting, {"charge"})
    assert "\x1b" not in form and "\x07" not in form
    # Written as character references, which the page's script reads back
    # as the id the run waits for.
    assert form.count('data-call="call_&#27;[31mred&#7;"') == 2
    result = Pending(1, Awaiting(results=(call.id,)), (call,), ())
    assert 'data-call="call_&#27;[31mred&#7;"' in pending_form(result, set())


@pytest.mark.parametrize(
    "url", ["https://[::1]x/", "https://x[::1]/", "https://[::1]]/", "http://[::1]:80x/"]
)
def test_text_beside_ipv6_brackets_is_never_a_link(url: str) -> None:
    assert safe_url(url) is None


def test_an_ipv6_url_as_written_is_still_a_link() -> None:
    assert safe_url("https://u@[::1]:8443/p?q") == "https://u@[::1]:8443/p?q"


def test_the_ui_stream_relays_no_such_source_url() -> None:
    from elelem.vocabulary import Attribution, Source
    from elelem.web.ui_chunks import _Sources

    out: list[Any] = []
    _Sources().cite(Attribution(Source(url="https://[::1]x/", title="t")), out)
    assert out == [
        {
            "type": "source-document",
            "sourceId": "source-1",
            "mediaType": "application/octet-stream",
            "title": "t",
        }
    ]


def test_a_resume_naming_a_million_calls_is_refused_before_any_work(
    tmp_path: Path, anthropic: LoopbackServer
) -> None:
    store = SQLiteStore(tmp_path / "log.db")
    conv = stopped(store, anthropic)
    ids = b",".join(b'"call_%d":true' % n for n in range(1_000_000))
    body = b'{"conversation":"%s","approvals":{%s}}' % (conv.id.encode(), ids)
    over = {f"call_{n}": True for n in range(MAX_RESUME_CALLS + 1)}
    with serving(store, anthropic, [charge, LOCATION]) as server:
        # The body's length is declared: refused before one byte of it is read.
        connection = http.client.HTTPConnection(server.url.removeprefix("http://"), timeout=30)
        started = time.monotonic()
        connection.putrequest("POST", f"/api/resume?token={TOKEN}")
        connection.putheader("content-type", "application/json")
        connection.putheader("content-length", str(len(body)))
        connection.endheaders()
        refused = connection.getresponse()
        took = time.monotonic() - started
        text = refused.read().decode()
        connection.close()
        listed = post(server.url, {"conversation": conv.id, "approvals": over})
    assert len(body) > MAX_RESUME_BODY
    assert (refused.status, text) == (413, "request too large")
    assert took < 2.0
    assert listed[0] == 400
    assert f"length <= {MAX_RESUME_CALLS}" in listed[1]
    assert pending(conv) is not None  # nothing was decided


def test_an_unknown_provider_is_a_400_before_any_stream(
    tmp_path: Path, anthropic: LoopbackServer
) -> None:
    store = SQLiteStore(tmp_path / "log.db")
    with serving(store, anthropic, []) as server:
        request = urllib.request.Request(
            f"{server.url}/api/chat?token={TOKEN}",
            data=json.dumps({"text": "hi", "model": "nosuch:model"}).encode(),
            headers={"content-type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        body = refused.value.read().decode()
    assert refused.value.code == 400
    assert body.startswith("unknown provider 'nosuch' (known: alibaba, anthropic, ")
    assert store.list_conversations() == []  # nothing was started
