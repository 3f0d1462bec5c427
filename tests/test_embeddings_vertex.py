"""Embeddings on Google Vertex AI (``vertex:MODEL``, issue #30) on loopback
stand-ins of Vertex and of Google's token endpoint.

The wire is ``POST /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:predict``
with ``instances: [{content, task_type}]`` and ``parameters:
{outputDimensionality}``, answered by ``predictions[].embeddings.{values,
statistics.{token_count, truncated}}``.  No recording of this endpoint
exists in the corpus: the answers here are written from Google's documented
examples (the "Get text embeddings" guide and the REST reference of
``TextEmbeddingPredictionParams``), token counts as the JSON numbers with a
fraction part (``6.0``) the service writes.
"""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cloud_helpers import TokenServer, json_reply, rsa_key, service_account_file
from elelem import SyncClient
from elelem.cli import main
from elelem.embeddings import Embeddings, batches, embedding_wires
from elelem.errors import MalformedStreamError, UnsupportedError
from elelem.testing.servers import LoopbackServer, RecordedRequest, Reply, status
from elelem.vocabulary import Drop

WIRES = embedding_wires()

NO_CONFIG = "/nonexistent/elelem.toml"
PREFIX = "/v1/projects/proj-emb/locations/us-central1/publishers/google/models/"


def prediction(values: list[Any], tokens: object, truncated: bool = False) -> dict[str, Any]:
    stats = {"token_count": tokens, "truncated": truncated}
    return {"embeddings": {"values": values, "statistics": stats}}


def env_for(server: TokenServer, tmp_path: Path) -> dict[str, str]:
    credentials = service_account_file(tmp_path, server.token_uri, rsa_key(), "proj-emb")
    return {
        "ELELEM_CONFIG": NO_CONFIG,
        "GOOGLE_APPLICATION_CREDENTIALS": str(credentials),
        "ELELEM_VERTEX_BASE_URL": server.url,
        "GOOGLE_CLOUD_LOCATION": "us-central1",
    }


def embed(env: dict[str, str], model: str, inputs: Any, **kwargs: Any) -> Embeddings:
    with SyncClient(env=env, max_retries=0) as client:
        return client.embed(model, inputs, **kwargs)


def test_gemini_embedding_one_text_a_request_with_task_dimensions_and_usage(
    tmp_path: Path,
) -> None:
    replies = [
        json_reply({"predictions": [prediction([0.5, -0.25, 1.0], 6.0)]}),
        json_reply({"predictions": [prediction([0.0, 1.0, 0.5], 2048.0, truncated=True)]}),
        json_reply({"predictions": [prediction([1.0, 0.0, 0.0], 3)]}),
    ]
    with TokenServer(replies) as server:
        got = embed(
            env_for(server, tmp_path),
            "vertex:gemini-embedding-001",
            ["what is a cat?", "a very long text", "dog"],
            task="query",
            dimensions=3,
        )
        sent = server.model_requests()
    assert [r.path for r in sent] == [PREFIX + "gemini-embedding-001:predict"] * 3
    assert {r.headers["authorization"] for r in sent} == {f"Bearer {server.tokens[0]}"}
    assert len(server.tokens) == 1  # one token serves every request
    assert [json.loads(r.body) for r in sent] == [
        {
            "instances": [{"content": text, "task_type": "RETRIEVAL_QUERY"}],
            "parameters": {"outputDimensionality": 3},
        }
        for text in ["what is a cat?", "a very long text", "dog"]
    ]
    assert [list(v) for v in got] == [[0.5, -0.25, 1.0], [0.0, 1.0, 0.5], [1.0, 0.0, 0.0]]
    assert (got.model, got.provider, got.requests) == ("vertex:gemini-embedding-001", "vertex", 3)
    assert got.usage is not None and got.usage.input == 6 + 2048 + 3
    assert got.usage.raw == [
        {"statistics": [{"token_count": 6.0, "truncated": False}]},
        {"statistics": [{"token_count": 2048.0, "truncated": True}]},
        {"statistics": [{"token_count": 3, "truncated": False}]},
    ]
    # gemini-embedding-001: $0.15 per million input tokens
    assert got.cost.total == Decimal("0.00030855")
    assert got.dropped == (
        Drop(
            "inputs[1]",
            "text",
            "truncated",
            "the vertex-gemini embedding endpoint cut the text to what the model takes"
            " before embedding it",
        ),
    )


def test_text_embedding_models_take_250_texts_a_request(tmp_path: Path) -> None:
    texts = [f"t{i}" for i in range(251)]

    def reply(request: RecordedRequest) -> Reply:
        if request.path == "/token":
            return json_reply({"access_token": "ya29.t", "expires_in": 3600})
        instances = json.loads(request.body)["instances"]
        answer = {
            "predictions": [prediction([float(i), 1.0], 1.0) for i in range(len(instances))],
            "metadata": {"billableCharacterCount": 2 * len(instances)},
        }
        return json_reply(answer)

    with LoopbackServer(reply) as server:
        credentials = service_account_file(tmp_path, server.url + "/token", rsa_key(), "proj-emb")
        env = {
            "ELELEM_CONFIG": NO_CONFIG,
            "GOOGLE_APPLICATION_CREDENTIALS": str(credentials),
            "ELELEM_VERTEX_BASE_URL": server.url,
            "GOOGLE_CLOUD_LOCATION": "us-central1",
        }
        got = embed(env, "vertex:text-embedding-005", texts, task="classification")
        first, second = (r for r in server.requests if r.path != "/token")
    assert first.path == PREFIX + "text-embedding-005:predict"
    one = json.loads(first.body)
    assert len(one["instances"]) == 250 and "parameters" not in one
    assert one["instances"][7] == {"content": "t7", "task_type": "CLASSIFICATION"}
    assert json.loads(second.body) == {
        "instances": [{"content": "t250", "task_type": "CLASSIFICATION"}]
    }
    assert len(got) == 251 and got.requests == 2
    assert list(got[249]) == [249.0, 1.0] and list(got[250]) == [0.0, 1.0]
    assert got.usage is not None and got.usage.input == 251
    assert got.usage.raw[1] == {
        "statistics": [{"token_count": 1.0, "truncated": False}],
        "metadata": {"billableCharacterCount": 2},
    }
    assert got.dropped == ()


def test_requests_are_cut_at_20000_estimated_tokens() -> None:
    wire = WIRES["vertex"]
    texts = ["x"] * 5
    cut = batches(texts, wire, lambda text: 6000)
    assert [(start, len(chunk)) for start, chunk in cut] == [(0, 3), (3, 2)]
    assert WIRES["vertex-gemini"].max_inputs == 1


def test_express_mode_key_goes_to_the_projectless_path() -> None:
    reply = json_reply({"predictions": [prediction([1.0], 1.0)]})
    with LoopbackServer([reply]) as server:
        env = {
            "ELELEM_CONFIG": NO_CONFIG,
            "GOOGLE_VERTEX_API_KEY": "AQ.express-key-0123",
            "ELELEM_VERTEX_BASE_URL": server.url,
        }
        got = embed(env, "vertex:gemini-embedding-001", "hi")
        (sent,) = server.requests
    assert sent.path == "/v1/publishers/google/models/gemini-embedding-001:predict"
    assert sent.headers["x-goog-api-key"] == "AQ.express-key-0123"
    assert list(got[0]) == [1.0]


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({"candidates": []}, "has no predictions list"),
        ({"predictions": [{"values": [1.0]}]}, "holds prediction 0 without embeddings"),
        ({"predictions": [prediction([1.0], "6")]}, "holds a token_count that is no count: '6'"),
        ({"predictions": [prediction([1.0], 1.5)]}, "holds a token_count that is no count: 1.5"),
        ({"predictions": [prediction(["a"], 1)]}, "holds a vector with a value"),
        ({"predictions": []}, "holds 0 vectors for 1 inputs"),
    ],
)
def test_a_malformed_answer_is_a_malformed_stream_error(
    tmp_path: Path, answer: Any, why: str
) -> None:
    with TokenServer([json_reply(answer)]) as server, pytest.raises(MalformedStreamError) as info:
        embed(env_for(server, tmp_path), "vertex:text-embedding-005", "hi")
    assert f"the vertex embedding answer {why}" in str(info.value)
    assert server.tokens[0] not in str(info.value)


def test_an_error_status_is_typed_and_names_no_token(tmp_path: Path) -> None:
    body = b'{"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}'
    with TokenServer([status(400, body)]) as server, pytest.raises(Exception) as info:
        embed(env_for(server, tmp_path), "vertex:gemini-embedding-001", "hi")
    assert getattr(info.value, "status", None) == 400
    assert server.tokens[0] not in str(info.value)


def test_claude_on_vertex_has_no_embeddings(tmp_path: Path) -> None:
    with TokenServer([]) as server:
        env = env_for(server, tmp_path)
        with pytest.raises(UnsupportedError, match="vertex-anthropic has no embedding endpoint"):
            embed(env, "vertex-anthropic:claude-sonnet-4-5", "hi")
    assert server.server.requests == []


def test_the_cli_embeds_with_a_vertex_model(tmp_path: Path) -> None:
    reply = json_reply({"predictions": [prediction([0.5, 0.25], 4.0)]})
    with TokenServer([reply]) as server:
        env = {**env_for(server, tmp_path), "ELELEM_HOME": str(tmp_path / "home")}
        # The command refuses a config file ELELEM_CONFIG names that is not there.
        del env["ELELEM_CONFIG"]
        env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
        blank = {k: None for k in os.environ if k not in env}
        result = CliRunner().invoke(
            main, ["embed", "-m", "vertex:gemini-embedding-001", "hello"], env={**blank, **env}
        )
        (sent,) = server.model_requests()
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "[0.5, 0.25]\n"
    # below a millionth: significant digits, never exponent notation
    assert result.stderr == "1 vector; 1 request, 4 tokens, $0.0000006\n"
    assert sent.path == PREFIX + "gemini-embedding-001:predict"
