"""Client.embed and SyncClient.embed against loopback stand-ins of every
embedding wire: the exact request JSON each provider documents, the vectors
decoded to float32 arrays in input order, batching to each wire's limit,
usage and cost, drops, and typed errors.

The answers are written from each provider's documented examples (the
corpus holds no embedding traffic), with values exact in float32."""

from __future__ import annotations

import base64
import json
import struct
from array import array
from decimal import Decimal
from typing import Any

import anyio
import pytest

from elelem import Client, SyncClient
from elelem.embeddings import Embeddings, EmbeddingWire, batches, embedding_wires
from elelem.errors import AuthenticationError, ConfigError, MalformedStreamError, UnsupportedError
from elelem.testing.servers import LoopbackServer, RecordedRequest, Reply, Send, status
from elelem.vocabulary import Drop

WIRES = embedding_wires()

CONFIG = "/nonexistent/elelem.toml"


def answer(data: Any, headers: dict[str, str] | None = None) -> Reply:
    return status(200, json.dumps(data).encode(), headers=headers)


def b64(values: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


def embed(model: str, env: dict[str, str], inputs: Any, **kwargs: Any) -> Embeddings:
    with SyncClient(env={"ELELEM_CONFIG": CONFIG, **env}, max_retries=0) as client:
        return client.embed(model, inputs, **kwargs)


def test_openai_asks_for_base64_and_decodes_float32_bytes() -> None:
    data = [
        {"object": "embedding", "index": 1, "embedding": b64([0.25, -1.5])},
        {"object": "embedding", "index": 0, "embedding": b64([0.5, 2.0])},
    ]
    reply = answer(
        {
            "object": "list",
            "data": data,
            "model": "text-embedding-3-small",
            "usage": {"prompt_tokens": 8, "total_tokens": 8},
        }
    )
    with LoopbackServer([reply]) as server:
        env = {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "sk-test"}
        got = embed("openai:text-embedding-3-small", env, ["hello", "world"], dimensions=2)
        (sent,) = server.requests
    assert sent.method == "POST" and sent.path == "/v1/embeddings"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert json.loads(sent.body) == {
        "model": "text-embedding-3-small",
        "input": ["hello", "world"],
        "encoding_format": "base64",
        "dimensions": 2,
    }
    assert [v.typecode for v in got] == ["f", "f"]
    assert [list(v) for v in got] == [[0.5, 2.0], [0.25, -1.5]]
    assert got.usage is not None and got.usage.input == 8
    assert got.usage.raw == [{"prompt_tokens": 8, "total_tokens": 8}]
    # text-embedding-3-small: $0.02 per million input tokens
    assert got.cost.total == Decimal("0.00000016")
    assert (got.requests, got.dimensions, got.dropped) == (1, 2, ())
    assert got.dropped == ()


def test_a_task_the_wire_cannot_say_is_a_structured_drop() -> None:
    reply = answer({"data": [{"index": 0, "embedding": b64([1.0])}]})
    with LoopbackServer([reply]) as server:
        env = {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "k"}
        got = embed("openai:text-embedding-3-small", env, "q", task="query")
        body = json.loads(server.requests[0].body)
    assert "task" not in body and "input_type" not in body
    assert got.dropped == (
        Drop("task", "query", "unsupported", "the openai embedding wire takes no task"),
    )
    assert got.usage is None and got.cost.total is None
    assert got.cost.unknown == ("openai:text-embedding-3-small: the response reported no usage",)


def test_gemini_batches_at_100_with_task_and_dimensions() -> None:
    texts = [f"t{i}" for i in range(101)]

    def reply(request: RecordedRequest) -> Reply:
        n = len(json.loads(request.body)["requests"])
        return answer({"embeddings": [{"values": [float(i), 0.5]} for i in range(n)]})

    with LoopbackServer(reply) as server:
        env = {"GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": "g-key"}
        got = embed("google:gemini-embedding-001", env, texts, task="document", dimensions=2)
        first, second = server.requests
    assert first.path == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    assert first.headers["x-goog-api-key"] == "g-key"
    one = json.loads(first.body)["requests"]
    assert len(one) == 100 and len(json.loads(second.body)["requests"]) == 1
    assert one[3] == {
        "model": "models/gemini-embedding-001",
        "content": {"parts": [{"text": "t3"}]},
        "taskType": "RETRIEVAL_DOCUMENT",
        "outputDimensionality": 2,
    }
    assert len(got) == 101 and got.requests == 2
    assert list(got[99]) == [99.0, 0.5] and list(got[100]) == [0.0, 0.5]
    assert got.dropped == ()


def bedrock_env(server: LoopbackServer) -> dict[str, str]:
    return {
        "ELELEM_BEDROCK_BASE_URL": server.url,
        "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        "AWS_REGION": "us-east-1",
    }


def test_bedrock_titan_one_text_per_signed_invocation() -> None:
    replies = [
        # Titan v2 takes 256, 512 or 1024 dimensions and answers as many.
        answer({"embedding": [0.5, 0.25] + [0.0] * 254, "inputTextTokenCount": 3}),
        answer({"embedding": [-0.5, 1.0] + [0.0] * 254, "inputTextTokenCount": 4}),
    ]
    with LoopbackServer(replies) as server:
        got = embed(
            "bedrock:amazon.titan-embed-text-v2:0",
            bedrock_env(server),
            ["a b", "c d e"],
            dimensions=256,
        )
        first, second = server.requests
    assert first.path == "/model/amazon.titan-embed-text-v2%3A0/invoke"
    assert first.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert json.loads(first.body) == {"inputText": "a b", "dimensions": 256}
    assert json.loads(second.body) == {"inputText": "c d e", "dimensions": 256}
    assert [list(v) for v in got] == [[0.5, 0.25] + [0.0] * 254, [-0.5, 1.0] + [0.0] * 254]
    assert got.usage is not None and got.usage.input == 7
    # amazon.titan-embed-text-v2:0: $0.02 per million input tokens
    assert got.cost.total == Decimal("0.00000014")


def test_bedrock_cohere_task_and_the_token_count_header() -> None:
    body = {
        "id": "e1",
        "response_type": "embeddings_by_type",
        "texts": ["x", "y"],
        "embeddings": {"float": [[0.125, 0.5], [1.0, -2.0]]},
    }
    reply = answer(body, {"x-amzn-bedrock-input-token-count": "5"})
    with LoopbackServer([reply]) as server:
        got = embed(
            "bedrock:cohere.embed-english-v3", bedrock_env(server), ["x", "y"], task="query"
        )
        (sent,) = server.requests
    assert sent.path == "/model/cohere.embed-english-v3/invoke"
    assert json.loads(sent.body) == {
        "texts": ["x", "y"],
        "input_type": "search_query",
        "embedding_types": ["float"],
    }
    assert [list(v) for v in got] == [[0.125, 0.5], [1.0, -2.0]]
    assert got.usage is not None and got.usage.input == 5
    assert got.usage.raw == [{"x-amzn-bedrock-input-token-count": "5"}]


def test_bedrock_model_without_an_embedding_wire_is_unsupported() -> None:
    with LoopbackServer([]) as server, pytest.raises(UnsupportedError, match="no embedding"):
        embed("bedrock:anthropic.claude-3-haiku", bedrock_env(server), "x")


def test_ollama_native_api_embed() -> None:
    reply = answer(
        {"model": "all-minilm", "embeddings": [[0.5, 0.5]], "total_duration": 14143917,
         "load_duration": 1019500, "prompt_eval_count": 2}
    )  # fmt: skip
    with LoopbackServer([reply]) as server:
        got = embed("ollama-native:all-minilm", {"ELELEM_OLLAMA_NATIVE_BASE_URL": server.url}, "hi")
        (sent,) = server.requests
    assert sent.path == "/api/embed"
    assert json.loads(sent.body) == {"model": "all-minilm", "input": ["hi"]}
    assert [list(v) for v in got] == [[0.5, 0.5]]
    assert got.usage is not None and got.usage.input == 2
    assert (got.cost.total, got.cost.unknown) == (0, ())  # local: nothing to pay


def test_ollama_openai_compatible_endpoint_asks_for_floats() -> None:
    reply = answer({"object": "list", "data": [{"index": 0, "embedding": [0.5]}]})
    with LoopbackServer([reply]) as server:
        got = embed("ollama:all-minilm", {"ELELEM_OLLAMA_BASE_URL": server.url + "/v1"}, ["a"])
        (sent,) = server.requests
    assert sent.path == "/v1/embeddings"
    assert json.loads(sent.body) == {"model": "all-minilm", "input": ["a"]}
    assert list(got[0]) == [0.5]


def test_mistral_output_dimension() -> None:
    reply = answer(
        {"id": "e", "object": "list", "model": "codestral-embed",
         "data": [{"object": "embedding", "embedding": [0.25], "index": 0}],
         "usage": {"prompt_tokens": 3, "total_tokens": 3, "completion_tokens": 0}}
    )  # fmt: skip
    with LoopbackServer([reply]) as server:
        env = {"ELELEM_MISTRAL_BASE_URL": server.url + "/v1", "MISTRAL_API_KEY": "m"}
        got = embed("mistral:codestral-embed", env, "code", dimensions=1)
        (sent,) = server.requests
    assert json.loads(sent.body) == {
        "model": "codestral-embed",
        "input": ["code"],
        "output_dimension": 1,
    }
    assert got.usage is not None and got.usage.input == 3


def test_voyage_needs_no_catalog_entry_and_takes_input_type() -> None:
    reply = answer(
        {"object": "list", "data": [{"object": "embedding", "embedding": [0.5, 1.0], "index": 0}],
         "model": "voyage-3.5", "usage": {"total_tokens": 6}}
    )  # fmt: skip
    with LoopbackServer([reply]) as server:
        env = {"ELELEM_VOYAGE_BASE_URL": server.url + "/v1", "VOYAGE_API_KEY": "pa-key"}
        got = embed("voyage:voyage-3.5", env, ["doc"], task="document", dimensions=2)
        (sent,) = server.requests
    assert sent.path == "/v1/embeddings" and sent.headers["authorization"] == "Bearer pa-key"
    assert json.loads(sent.body) == {
        "model": "voyage-3.5",
        "input": ["doc"],
        "output_dimension": 2,
        "input_type": "document",
    }
    assert got.usage is not None and got.usage.input == 6
    assert got.provider == "voyage" and got.dropped == ()


def test_any_openai_compatible_server_from_the_config(tmp_path: Any) -> None:
    reply = answer({"data": [{"index": 0, "embedding": [0.75]}], "usage": {"prompt_tokens": 1}})
    with LoopbackServer([reply]) as server:
        config = tmp_path / "elelem.toml"
        config.write_text(
            f'[providers.local]\ncompatible = "openai"\nbase_url = "{server.url}/v1"\n',
            encoding="utf-8",
        )
        got = embed("local:nomic-embed", {"ELELEM_CONFIG": str(config)}, "x")
        (sent,) = server.requests
    assert sent.path == "/v1/embeddings"
    assert json.loads(sent.body) == {"model": "nomic-embed", "input": ["x"]}
    assert list(got[0]) == [0.75]


def test_anthropic_has_no_embeddings() -> None:
    with pytest.raises(UnsupportedError, match="provider anthropic has no embedding endpoint"):
        embed("anthropic:claude-x", {"ANTHROPIC_API_KEY": "k"}, "x")


def test_bad_arguments_are_typed_errors_naming_them() -> None:
    env = {"OPENAI_API_KEY": "k"}
    with pytest.raises(ConfigError, match="unknown embedding task 'search'"):
        embed("openai:e", env, "x", task="search")
    with pytest.raises(ConfigError, match="dimensions must be a positive integer, not 0"):
        embed("openai:e", env, "x", dimensions=0)
    with pytest.raises(ConfigError, match=r"inputs\[1\] is a int, not a string"):
        embed("openai:e", env, ["x", 3])


def test_an_http_error_is_the_providers_typed_error_with_the_key_redacted() -> None:
    body = b'{"error": {"message": "Incorrect API key provided: sk-secret", "type": "invalid_request_error", "code": "invalid_api_key"}}'
    with LoopbackServer([status(401, body)]) as server:
        env = {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "sk-secret"}
        with pytest.raises(AuthenticationError) as caught:
            embed("openai:text-embedding-3-small", env, "x")
    assert "sk-secret" not in str(caught.value)
    assert caught.value.status == 401


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"not json", "is not JSON"),
        (b'{"data": [{"index": 0, "embedding": "@@"}]}', "not base64"),
        (b'{"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}', "bad index 0"),
        (b'{"data": []}', "holds 0 vectors for 1 inputs"),
        (b'{"data": [{"index": 0, "embedding": ["a"]}]}', "not a number"),
    ],
)  # fmt: skip
def test_a_malformed_answer_is_a_malformed_stream_error(body: bytes, why: str) -> None:
    with LoopbackServer([status(200, body)]) as server:
        env = {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "k"}
        with pytest.raises(MalformedStreamError, match=why):
            embed("openai:text-embedding-3-small", env, "x")


def test_async_embed_runs_batches_concurrently_and_keeps_input_order() -> None:
    texts = [f"t{i}" for i in range(250)]

    def reply(request: RecordedRequest) -> Reply:
        got = [r["content"]["parts"][0]["text"] for r in json.loads(request.body)["requests"]]
        vectors = [{"values": [float(t[1:])]} for t in got]
        return answer({"embeddings": vectors})

    async def main(server: LoopbackServer) -> Embeddings:
        env = {"GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": "k", "ELELEM_CONFIG": CONFIG}
        async with Client(env=env) as client:
            return await client.embed("google:gemini-embedding-001", texts, concurrency=3)

    with LoopbackServer(reply) as server:
        got = anyio.run(main, server)
    assert [v[0] for v in got] == [float(i) for i in range(250)]
    assert got.requests == 3 and len(server.requests) == 3


def test_async_embed_raises_the_first_error_as_itself() -> None:
    replies = [status(401, b'{"error": {"message": "bad key", "code": "invalid_api_key"}}')]

    async def main(server: LoopbackServer) -> None:
        env = {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "k"}
        async with Client(env=env, max_retries=0) as client:
            await client.embed("openai:text-embedding-3-small", ["a", "b"])

    with LoopbackServer(replies) as server, pytest.raises(AuthenticationError):
        anyio.run(main, server)


def test_batches_respect_inputs_and_estimated_tokens() -> None:
    wire = EmbeddingWire("w", 3, WIRES["openai"].encode, WIRES["openai"].decode, max_tokens=10)
    texts = ["aaaa", "bb", "c", "ddddddd", "e"]
    assert batches(texts, wire, len) == [(0, ("aaaa", "bb", "c")), (3, ("ddddddd", "e"))]
    assert batches(["x" * 20, "y"], wire, len) == [(0, ("x" * 20,)), (1, ("y",))]
    assert batches([], wire, len) == []


def test_embeddings_as_bytes_and_empty_input() -> None:
    got = embed("openai:text-embedding-3-small", {"OPENAI_API_KEY": "k"}, [])
    assert (len(got), got.requests, got.dimensions) == (0, 0, None)
    vector = array("f", [0.5, 1.0])
    assert Embeddings("m", got.provider, (vector,), None, got.cost).as_bytes() == [vector.tobytes()]


def test_chunked_reply_is_read_whole() -> None:
    payload = json.dumps({"data": [{"index": 0, "embedding": b64([0.5] * 64)}]}).encode()
    reply = Reply(
        200,
        {"content-type": "application/json"},
        (Send(payload[:50]), Send(payload[50:])),
        chunked=True,
    )
    with LoopbackServer([reply]) as server:
        env = {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "k"}
        got = embed("openai:text-embedding-3-small", env, "x")
    assert list(got[0]) == [0.5] * 64
