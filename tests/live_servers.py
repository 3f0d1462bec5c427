"""Loopback WebSocket servers speaking OpenAI Realtime (GA) and Gemini Live.

Each server plays a script: a list of steps, each either events to send, or
the type of client event it waits for next (every client event it receives
is checked against the official SDK's types first: ``openai``'s
``types.realtime.RealtimeClientEvent``, with no field the model does not
declare, and ``google-genai``'s ``LiveClientMessage``, which forbids unknown
fields).  The events are written after the providers' published examples:

- OpenAI Realtime server events:
  https://platform.openai.com/docs/api-reference/realtime-server-events
  (Azure OpenAI serves the same events:
  https://learn.microsoft.com/azure/ai-foundry/openai/realtime-audio-reference)
- Gemini Live messages: https://ai.google.dev/api/live
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable
from typing import Any

from websockets.sync.server import ServerConnection, serve

Step = tuple[str, Any]  # ("send", [events]) | ("expect", type) | ("close", code) | ("drop", None)


def _no_extra(model: Any, where: str = "$") -> None:
    """Fail on any field the SDK model does not declare (pydantic keeps them)."""
    from pydantic import BaseModel

    if isinstance(model, BaseModel):
        extra = model.model_extra or {}
        assert not extra, f"{where}: fields the SDK does not know: {sorted(extra)}"
        for name in type(model).model_fields:
            _no_extra(getattr(model, name), f"{where}.{name}")
    elif isinstance(model, list):
        for i, item in enumerate(model):
            _no_extra(item, f"{where}[{i}]")


def openai_client_event(text: str) -> dict[str, Any]:
    """A client event, validated against the openai SDK's realtime types."""
    from openai.types.realtime import RealtimeClientEvent
    from pydantic import TypeAdapter

    event = json.loads(text)
    model = TypeAdapter(RealtimeClientEvent).validate_python(event)
    _no_extra(model)
    return dict(event)


def gemini_client_message(text: str | bytes) -> dict[str, Any]:
    """A client message, validated against google-genai's LiveClientMessage."""
    from google.genai import types

    message = json.loads(text)
    types.LiveClientMessage.model_validate(message)
    assert len(message) == 1, f"a client message holds exactly one field: {sorted(message)}"
    return dict(message)


def kind_of_openai(event: dict[str, Any]) -> str:
    return str(event["type"])


def kind_of_gemini(message: dict[str, Any]) -> str:
    return next(iter(message))


class ScriptedServer:
    """One scripted session per connection, on 127.0.0.1, port 0."""

    def __init__(
        self,
        scripts: list[list[Step]],
        validate: Callable[[str | bytes], dict[str, Any]],
        kind: Callable[[dict[str, Any]], str],
        binary: bool = False,
    ) -> None:
        self.scripts = list(scripts)
        self.validate = validate
        self.kind = kind
        self.binary = binary
        self.received: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.failures: list[str] = []
        self.server = serve(self._session, "127.0.0.1", 0)
        self.port = self.server.socket.getsockname()[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.thread.join(5)
        assert not self.failures, self.failures

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _session(self, socket: ServerConnection) -> None:
        self.headers.append(dict(socket.request.headers) if socket.request else {})
        self.paths.append(socket.request.path if socket.request else "")
        script = self.scripts.pop(0)
        try:
            for action, value in script:
                if action == "send":
                    for event in value:
                        data = json.dumps(event)
                        socket.send(data.encode() if self.binary else data)
                elif action == "expect":
                    self._expect(socket, value)
                elif action == "drop":
                    socket.socket.close()  # no close frame: a dropped connection
                    return
                elif action == "close":
                    socket.close(value)
                    return
            socket.close()
        except Exception as exc:  # noqa: BLE001 - reported by __exit__
            self.failures.append(f"{type(exc).__name__}: {exc}")
            socket.close(1011)

    def _expect(self, socket: ServerConnection, wanted: str) -> None:
        while True:
            event = self.validate(socket.recv(10))
            self.received.append(event)
            kind = self.kind(event)
            if kind == wanted:
                return
            # Audio keeps streaming while the server waits for something else.
            if kind not in ("input_audio_buffer.append", "realtimeInput"):
                raise AssertionError(f"expected {wanted}, got {kind}")


def pcm(ms: int, rate: int, level: int = 1000) -> bytes:
    """``ms`` milliseconds of a PCM16 square wave at ``rate`` (not silence)."""
    samples = rate * ms // 1000
    out = bytearray()
    for i in range(samples):
        out += (level if (i // 20) % 2 else -level).to_bytes(2, "little", signed=True)
    return bytes(out)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


__all__ = [
    "ScriptedServer",
    "b64",
    "gemini_client_message",
    "kind_of_gemini",
    "kind_of_openai",
    "openai_client_event",
    "pcm",
]
