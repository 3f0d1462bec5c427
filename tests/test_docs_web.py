"""docs/web.md's useChat backend runs as written: served by uvicorn, answered
by a loopback provider replaying the demo, read by the `ai` package."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from elelem.cli.demo import paced
from elelem.testing.asgi import ASGIServer
from elelem.testing.servers import LoopbackServer
from web_helpers import ai_reader_ready, demo_interaction, read_with_ai

DOC = Path(__file__).resolve().parent.parent / "docs" / "web.md"


def test_the_fastapi_example_relays_to_use_chat(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    node = ai_reader_ready()
    (example,) = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    reply = paced(demo_interaction(), 0)
    with LoopbackServer(lambda _request: reply) as provider:
        monkeypatch.setenv("ELELEM_ANTHROPIC_BASE_URL", provider.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-docs-example")
        monkeypatch.setenv("ELELEM_CONFIG", str(tmp_path / "none.toml"))
        monkeypatch.setenv("ELELEM_HOME", str(tmp_path))
        namespace: dict[str, object] = {"__name__": "docs_web"}
        exec(compile(example, str(DOC), "exec"), namespace)
        with ASGIServer(namespace["app"]) as server:
            (got,) = read_with_ai(node, [{"url": server.url + "/api/chat", "body": {}}])
        sent = provider.requests[0].body.decode()
    assert got["errors"] == []
    assert '"text":"hi"' in sent and '"web_search_20250305"' in sent
    parts = got["message"]["parts"]
    assert [p["url"] for p in parts if p["type"] == "source-url"] == [
        "https://en.wikipedia.org/wiki/Eiffel_Tower",
        "https://www.toureiffel.paris/en/the-monument/key-figures",
        "https://www.toureiffel.paris/en/the-monument/history",
        "https://www.britannica.com/topic/Eiffel-Tower-Paris-France",
    ]
    (search,) = [p for p in parts if p["type"] == "data-hosted-activity"]
    assert search["data"]["state"] == "completed"
    assert got["message"]["metadata"]["finishReason"] == "stop"
