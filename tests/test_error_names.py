"""An error's one-line summary names the provider the caller called.

The shapes' error tables label their messages by wire (``chat``,
``gemini``, ``ollama``); a caller who called OpenRouter, Google or
ollama-native must read ``openrouter 400 …``, ``google 400 …``,
``ollama-native 404 …``.  The error bodies are written from each provider's
documented error format: OpenRouter's ``{"error": {"code", "message"}}``
(openrouter.ai/docs/api-reference/errors, also sent mid-stream as an SSE
chunk), Google's ``{"error": {"code", "message", "status"}}``
(ai.google.dev/gemini-api/docs/troubleshooting), Ollama's ``{"error":
"…"}`` (github.com/ollama/ollama/blob/main/docs/api.md#errors).
"""

from __future__ import annotations

import json

import pytest

from elelem import SyncClient
from elelem.errors import InvalidRequestError, ProviderStreamError, StreamError
from elelem.testing.servers import LoopbackServer, replay, sse_body, status


def _error(provider: str, reply: object, env_var: str, model: str) -> StreamError:
    with LoopbackServer([reply]) as server:  # type: ignore[list-item]
        env = {env_var: server.url, "ELELEM_CONFIG": "/nonexistent/x.toml", "OPENROUTER_API_KEY": "k",
               "GEMINI_API_KEY": "k"}  # fmt: skip
        with SyncClient(env=env, max_retries=0) as client, pytest.raises(StreamError) as info:
            client.stream(f"{provider}:{model}", "hi").final()
    return info.value


def test_an_http_error_names_the_provider_not_the_wire() -> None:
    body = json.dumps({"error": {"code": 400, "message": "model is required"}}).encode()
    error = _error("openrouter", status(400, body), "ELELEM_OPENROUTER_BASE_URL", "x/y")
    assert isinstance(error, InvalidRequestError)
    assert error.message == "openrouter 400 error: model is required"
    google = json.dumps(
        {"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}}
    ).encode()
    error = _error("google", status(400, google), "ELELEM_GOOGLE_BASE_URL", "gemini-2.5-flash")
    assert error.message == "google 400 INVALID_ARGUMENT: API key not valid."
    missing = json.dumps({"error": "model 'q' not found"}).encode()
    error = _error("ollama-native", status(404, missing), "ELELEM_OLLAMA_NATIVE_BASE_URL", "q")
    assert error.message == "ollama-native 404 error: model 'q' not found"


def test_an_error_inside_a_stream_names_the_provider() -> None:
    start = {"id": "gen-1", "object": "chat.completion.chunk", "model": "x/y",
             "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]}  # fmt: skip
    failed = {"error": {"code": 502, "message": "Provider returned error"}}
    body = sse_body([(None, json.dumps(start)), (None, json.dumps(failed))])
    error = _error("openrouter", replay(body), "ELELEM_OPENROUTER_BASE_URL", "x/y")
    assert isinstance(error, ProviderStreamError)
    assert error.message == "openrouter 502 error: Provider returned error"
