"""``-m test``: a deterministic model that needs no key and no network, so
every command can be tried at once (``ask``, ``chat``, ``--functions``,
``--tool``, ``--mcp``, ``serve``'s chat).

It is the library's :class:`~elelem.testing.TestModel` answering in-process:
its first answer to a request that offers tools calls each of them once,
with arguments built from the tool's JSON Schema (an MCP server's every
listed tool, in the order listed: a conformance client); once the results
are back, or when no tool is offered, it streams a reasoning block and an
answer that repeats the prompt (with the tool results) and cites one
source.  The same prompt gets the same answer, always."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
import os
import struct
import wave
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import msgspec

from elelem.cli.default_model import TEST_ADDRESS, TEST_MODEL_NAMES, is_test_model
from elelem.cli.safety import command_catalog
from elelem.providers import Catalog
from elelem.recordings.loopback import LoopbackServer, RecordedRequest, Send
from elelem.recordings.loopback import Reply as LoopbackReply
from elelem.testing.models import TEST_SOURCE, Reply, TestModel
from elelem.vocabulary import Attribution, Message, TextBlock, ToolResultBlock
from elelem.wire import ModelRequest


def _prompt(messages: tuple[Message, ...]) -> str:
    """The text of the last message the user wrote (not a tool result)."""
    for message in reversed(messages):
        if message.role != "user":
            continue
        texts = [p.text for p in message.content if isinstance(p, TextBlock)]
        if texts:
            return " ".join(texts)
    return ""


def _results(messages: tuple[Message, ...]) -> tuple[ToolResultBlock, ...]:
    if not messages:
        return ()
    return tuple(p for p in messages[-1].content if isinstance(p, ToolResultBlock))


@dataclass(kw_only=True)
class CommandTestModel(TestModel):
    """The model ``-m test`` stands for (see the module docs)."""

    __test__ = False

    def answer(self, request: ModelRequest) -> Reply:
        """Each offered tool called once; then the echoing, cited answer."""
        results = _results(request.messages)
        prompt = _prompt(request.messages)
        if not results and request.tools:
            names = ", ".join(spec.name for spec in request.tools)
            return Reply(
                reasoning=f"Tools are offered ({names}): I call each once.",
                calls=tuple(super().answer(request).calls),
            )
        text = f"Test answer to: {prompt}" if prompt else "Test answer."
        if results:
            answered = {r.name or r.call_id: r.content for r in results}
            text += f"\n\nThe tools answered: {json.dumps(answered, ensure_ascii=False)}"
        return Reply(
            text=text,
            reasoning="The test model answers without a key: it repeats the prompt.",
            citations=(Attribution(TEST_SOURCE, excerpt="test excerpt"),),
        )


def test_model() -> CommandTestModel:
    """A fresh ``-m test`` model (each counts its own responses)."""
    return CommandTestModel()


TEST_EMBEDDING = "test:test-embedding"
"""The address ``elelem embed -m test`` embeds with."""

TEST_SPEECH = "test:test-speech"
"""The address ``elelem speak -m test`` speaks with."""

TEST_DIMENSIONS = 8
"""The length of a test embedding."""

TEST_KEY_ENV = "ELELEM_TEST_MODEL_KEY"
TEST_KEY = "test-key-not-a-secret"


def test_vector(text: str) -> list[float]:
    """The test embedding of ``text``: the same text, the same unit vector
    (its SHA-256 read as signed bytes, normalized)."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()[:TEST_DIMENSIONS]
    raw = [b - 256 if b > 127 else b for b in digest]
    norm = math.sqrt(sum(v * v for v in raw)) or 1.0
    return [v / norm for v in raw]


def test_wav(text: str) -> bytes:
    """The test speech of ``text``: a mono 16-bit 8 kHz WAV of silence, a
    tenth of a second per word."""
    frames = b"\x00\x00" * (800 * max(1, len(text.split())))
    out = io.BytesIO()
    with wave.open(out, "wb") as audio:
        audio.setnchannels(1)
        audio.setsampwidth(2)
        audio.setframerate(8000)
        audio.writeframes(frames)
    return out.getvalue()


def _json_reply(status: int, value: object) -> LoopbackReply:
    body = json.dumps(value).encode()
    return LoopbackReply(status, {"content-type": "application/json"}, (Send(body),))


def _refusal(message: str) -> LoopbackReply:
    return _json_reply(400, {"error": {"message": message, "type": "invalid_request_error"}})


def _answer_wire(request: RecordedRequest) -> LoopbackReply:
    """OpenAI's embeddings and speech endpoints, answered for the test
    models (https://platform.openai.com/docs/api-reference/embeddings,
    https://platform.openai.com/docs/api-reference/audio/createSpeech)."""
    body = json.loads(request.body or b"{}")
    if request.path.endswith("/embeddings"):
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else list(texts or [])
        data = []
        for index, text in enumerate(texts):
            vector = test_vector(str(text))
            encoded: object = vector
            if body.get("encoding_format") == "base64":
                encoded = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(len(str(t).split()) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return _json_reply(
            200, {"object": "list", "data": data, "model": body.get("model"), "usage": usage}
        )
    if request.path.endswith("/audio/speech"):
        if body.get("response_format") not in ("wav", None):
            return _refusal("the test speech model speaks WAV only: --format wav")
        if body.get("stream_format", "audio") != "audio":
            return _refusal(
                "the test speech model streams the audio file only: --stream-format audio"
            )
        audio = test_wav(str(body.get("input", "")))
        return LoopbackReply(200, {"content-type": "audio/wav"}, (Send(audio),))
    return _refusal(
        f"the test model has no {request.path} endpoint: chat with -m test in ask or chat"
    )


def is_test_address(model: str | None) -> bool:
    """Whether ``model`` names a test model (``test`` or ``test:…``)."""
    return model is not None and (is_test_model(model) or model.strip().startswith("test:"))


@contextmanager
def test_client(catalog: Catalog) -> Iterator[Any]:
    """A blocking client whose ``test`` provider is a loopback server on
    127.0.0.1 speaking OpenAI's embeddings and speech wires for the test
    models (no key, no network), over ``catalog``'s other providers."""
    from elelem.client import SyncClient

    with LoopbackServer(_answer_wire, lifetime=3600) as server:
        spec = msgspec.structs.replace(
            catalog.get("openai"),
            name="test",
            base_url=server.url + "/v1",
            key_env=(TEST_KEY_ENV,),
            base_url_env=(),
            key_required=True,
            # OpenAI's conventions are those of its Chat Completions twin;
            # the test provider speaks only the embeddings and speech wires.
            conventions={},
        )
        catalog.add(spec)
        env = {**os.environ, TEST_KEY_ENV: TEST_KEY}
        with SyncClient(env=env, catalog=catalog) as client:
            yield client


def command_client(model: str | None = None) -> Any:
    """The blocking client a command asks ``model`` through: for a test
    model (``-m test``) one over a loopback server speaking its wire (no
    key, no network), else one reading keys from the environment; use it
    as ``with``."""
    if is_test_address(model):
        return test_client(command_catalog())
    from elelem.client import SyncClient  # deferred: the client loads the catalog

    return SyncClient(env=os.environ)


__all__ = [
    "TEST_ADDRESS",
    "TEST_DIMENSIONS",
    "TEST_EMBEDDING",
    "TEST_MODEL_NAMES",
    "TEST_SPEECH",
    "CommandTestModel",
    "command_client",
    "is_test_address",
    "is_test_model",
    "test_client",
    "test_model",
    "test_vector",
    "test_wav",
]
