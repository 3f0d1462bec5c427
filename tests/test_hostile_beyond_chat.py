"""Hostile providers on the surfaces beyond chat (issue #33, round three):
batch, embedding and speech answers that are deep, of the wrong type, out
of range, or that point the API key at another host.  Every one is a typed
error naming what was wrong; the servers run on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from elelem import SyncClient
from elelem.batches import BatchRecord
from elelem.errors import MalformedStreamError
from elelem.testing.servers import LoopbackServer, Reply, Send, status
from elelem.vocabulary import ProviderId

CONFIG = str(Path(__file__).with_name("empty-config.toml"))  # no config: an empty file
KEY = "sk-ant-hostile-0123456789"
DEEP = b"[" * 100_000 + b"]" * 100_000


def client(env: dict[str, str]) -> SyncClient:
    return SyncClient(env={"ELELEM_CONFIG": CONFIG, **env}, max_retries=0)


def jsonl(*lines: Any) -> Reply:
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    return status(200, body, content_type="application/binary")


def record(output: str | None) -> BatchRecord:
    return BatchRecord(
        ProviderId("anthropic"),
        "anthropic:claude-sonnet-4-5",
        "anthropic",
        "msgbatch_1",
        "ended",
        "ended",
        ("r1",),
        output=output,
    )


@pytest.mark.parametrize("where", ["{evil}/steal", "//127.0.0.1:{port}/steal"])
def test_a_results_url_on_another_host_is_not_followed_with_the_key(where: str) -> None:
    with LoopbackServer([status(200, b"{}")]) as evil, LoopbackServer([]) as server:
        output = where.format(evil=evil.url, port=evil.url.rsplit(":", 1)[1])
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        with client(env) as c, pytest.raises(MalformedStreamError) as caught:
            c.batch_results(record(output))
        assert evil.requests == [] and server.requests == []
    port, evil_port = server.url.rsplit(":", 1)[1], evil.url.rsplit(":", 1)[1]
    scheme = "http" if where.startswith("{") else ""
    assert caught.value.message == (
        f"the batch's results URL is on {scheme}://127.0.0.1:{evil_port},"
        f" not on the endpoint's http://127.0.0.1:{port}: not followed (the request would"
        " carry the API key)"
    )
    assert caught.value.retryable is False


def test_a_results_url_on_the_endpoints_own_origin_is_followed() -> None:
    line = {"custom_id": "r1", "result": {"type": "expired"}}
    with LoopbackServer([jsonl(line)]) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        with client(env) as c:
            (result,) = c.batch_results(record(server.url + "/v1/results"))
        (sent,) = server.requests
    assert (sent.path, sent.headers["x-api-key"]) == ("/v1/results", KEY)
    assert (result.custom_id, result.error) == ("r1", "expired")


ANSWER = "the answer to {what} is not what the API documents: {why}"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"id": "msgbatch_1"}', "the answer has no string 'processing_status'"),
        (b'{"id": 7, "processing_status": "ended"}', "the answer has no string 'id'"),
        (
            b'{"id": "b", "processing_status": "ended", "results_url": 3}',
            "the answer's 'results_url' is a int, not a string",
        ),
        (DEEP, "JSON nested too deeply to decode"),
    ],
    ids=["no state", "numeric id", "numeric url", "deep"],
)
def test_a_hostile_batch_object_is_malformed(body: bytes, why: str) -> None:
    with LoopbackServer([status(200, body)]) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        with client(env) as c, pytest.raises(MalformedStreamError) as caught:
            c.batch_status(record(None))
    assert caught.value.message == ANSWER.format(what="read the batch", why=why)


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        ([{"result": {"type": "errored"}}], "the answer has no string 'custom_id'"),
        ([{"custom_id": "r1", "result": [1]}], "the result of 'r1' is a list, not an object"),
        (
            [{"custom_id": "r1", "result": {"type": "succeeded"}}],
            "the succeeded result of 'r1' has no message",
        ),
    ],
    ids=["no id", "list result", "no message"],
)
def test_a_hostile_anthropic_results_line_is_malformed(lines: list[Any], why: str) -> None:
    with LoopbackServer([jsonl(*lines)]) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        with client(env) as c, pytest.raises(MalformedStreamError) as caught:
            c.batch_results(record("/v1/results"))
    assert caught.value.message == ANSWER.format(what="read the results", why=why)


def test_a_custom_id_answered_twice_is_malformed_not_half_dropped() -> None:
    twice = [{"custom_id": "r1", "result": {"type": kind}} for kind in ("errored", "canceled")]
    with LoopbackServer([jsonl(*twice)]) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        with client(env) as c, pytest.raises(MalformedStreamError) as caught:
            c.batch_results(record("/v1/results"))
    assert caught.value.message == "the batch's results hold custom_id 'r1' twice"


def openai_record(output: str) -> BatchRecord:
    return BatchRecord(ProviderId("openai"), "openai:gpt-4o-mini", "openai", "batch_1", "ended", "completed",
                       ("r1",), output=output)  # fmt: skip


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ({"custom_id": "r1", "response": "x"}, "the response of 'r1' is a str, not an object"),
        (
            {"custom_id": "r1", "response": {"status_code": 200}},
            "the response of 'r1' has no body",
        ),
        (
            {"custom_id": "r1", "response": {"status_code": 500, "request_id": []}},
            "the answer's 'request_id' is a list, not a string",
        ),
    ],
    ids=["str response", "no body", "list request id"],
)
def test_a_hostile_openai_output_line_is_malformed(line: Any, why: str) -> None:
    with LoopbackServer([jsonl(line)]) as server:
        env = {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "sk-test"}
        with client(env) as c, pytest.raises(MalformedStreamError) as caught:
            c.batch_results(openai_record("file-1"))
    assert caught.value.message == ANSWER.format(what="read the results", why=why)


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"name": "batches/1", "metadata": []}', "the batch's metadata is a list, not an object"),
        (
            b'{"name": "batches/1", "done": true, "response": {"inlinedResponses":'
            b' {"inlinedResponses": [3]}}}',
            "inlined response 0 is a int, not an object",
        ),
    ],
    ids=["list metadata", "int entry"],
)
def test_a_hostile_gemini_batch_is_malformed(body: bytes, why: str) -> None:
    gemini = BatchRecord(ProviderId("google"), "google:gemini-2.5-flash", "gemini", "batches/1", "ended",
                         "BATCH_STATE_SUCCEEDED", ("r1",))  # fmt: skip
    with LoopbackServer([status(200, body)]) as server:
        env = {"GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": "g-key"}
        with client(env) as c, pytest.raises(MalformedStreamError) as caught:
            c.batch_results(gemini)
    assert caught.value.message == ANSWER.format(what="read the batch results", why=why)


def embed_answer(*vectors: Any) -> Reply:
    data = [{"index": i, "embedding": v} for i, v in enumerate(vectors)]
    return status(200, json.dumps({"data": data}).encode())


def embed_error(replies: list[Reply], inputs: list[str], **kwargs: Any) -> MalformedStreamError:
    with LoopbackServer(replies) as server:
        env = {"ELELEM_MISTRAL_BASE_URL": server.url + "/v1", "MISTRAL_API_KEY": "m"}
        with client(env) as c, pytest.raises(MalformedStreamError) as caught:
            c.embed("mistral:mistral-embed", inputs, **kwargs)
    assert caught.value.retryable is False
    return caught.value


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (status(200, b'{"data": ' + DEEP + b"}"), "is not JSON: JSON nested too deeply to decode"),
        (
            status(200, b'{"data": [{"index": 0, "embedding": [1' + b"0" * 400 + b"]}]}"),
            "holds a vector with a value past float range",
        ),
        (
            status(200, b'{"data": [{"index": true, "embedding": [1.0]}]}'),
            "holds an item with a bad index True",
        ),
        (embed_answer([]), "holds a vector of 0 dimensions at 0, not 0 of the first"),
    ],
    ids=["deep", "huge int", "bool index", "empty vector"],
)
def test_a_hostile_embedding_answer_is_malformed(reply: Reply, why: str) -> None:
    error = embed_error([reply], ["a"])
    assert error.message == f"the mistral embedding answer {why}"


def test_embedding_vectors_of_mixed_or_unasked_dimensions_are_malformed() -> None:
    mixed = embed_error([embed_answer([1.0, 2.0], [1.0])], ["a", "b"])
    assert mixed.message == (
        "the mistral embedding answer holds a vector of 1 dimensions at 1, not 2 of the first"
    )
    unasked = embed_error([embed_answer([1.0, 2.0, 3.0])], ["a"], dimensions=2)
    assert unasked.message == (
        "the mistral embedding answer holds a vector of 3 dimensions at 0, not 2 asked for"
    )
    # 513 inputs are two requests (Mistral takes 512): the second answers 3-wide.
    first = embed_answer(*([[0.5, 0.5]] * 512))
    across = embed_error([first, embed_answer([1.0, 2.0, 3.0])], ["x"] * 513)
    assert across.message == (
        "the mistral embedding answers disagree: input 512 has 3 dimensions, input 0 has 2"
    )


def test_a_transcript_nested_too_deep_is_malformed() -> None:
    from elelem.vocabulary import AudioBlock

    voice = AudioBlock.from_bytes(b"RIFF0000WAVE", "audio/wav")
    with LoopbackServer([status(200, b'{"text": "x", "usage": ' + DEEP + b"}")]) as server:
        env = {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "sk-t"}
        with client(env) as c, pytest.raises(MalformedStreamError) as caught:
            c.transcribe("openai:gpt-4o-transcribe", voice)
    assert caught.value.message == (
        "the answer to transcribe is not what the API documents: JSON nested too deeply to decode"
    )


@pytest.mark.parametrize(
    ("batch_id", "path"),
    [
        ("a#frag", "/v1/messages/batches/a%23frag"),
        ("a?x=1", "/v1/messages/batches/a%3Fx%3D1"),
        ("../files", "/v1/messages/batches/..%2Ffiles"),
        ("a\r\nX-Evil: 1", "/v1/messages/batches/a%0D%0AX-Evil%3A%201"),
    ],
)
def test_a_provider_given_batch_id_stays_one_path_segment(batch_id: str, path: str) -> None:
    answer = b'{"id": "x", "processing_status": "ended"}'
    with LoopbackServer([status(200, answer)]) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        with client(env) as c:
            c.batch_status(msgspec.structs.replace(record(None), batch_id=batch_id))
        (sent,) = server.requests
    assert sent.path == path


def test_a_batch_id_that_is_not_text_is_malformed() -> None:
    with LoopbackServer([]) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        with client(env) as c, pytest.raises(MalformedStreamError) as caught:
            c.batch_status(msgspec.structs.replace(record(None), batch_id="\udcff"))
        assert server.requests == []
    assert caught.value.message == ("the batch id '\\udcff' is not text a request path can carry")


@pytest.mark.parametrize("collection", [[], ["-c", "notes"]], ids=["printed", "stored"])
def test_embed_refuses_a_vector_past_float32_range(tmp_path: Path, collection: list[str]) -> None:
    from click.testing import CliRunner

    from elelem.cli import main

    # 1e39 is a float64, but no float32: the vector would hold inf.
    with LoopbackServer([embed_answer([0.5, 1e39])]) as server:
        env = {
            "ELELEM_HOME": str(tmp_path),
            "ELELEM_CONFIG": CONFIG,
            "ELELEM_MISTRAL_BASE_URL": server.url + "/v1",
            "MISTRAL_API_KEY": "m",
        }
        args = ["embed", "-m", "mistral:mistral-embed", *collection, "hi"]
        result = CliRunner().invoke(main, args, env=env)
    assert (result.exit_code, result.stdout, result.stderr) == (
        1,
        "",
        "elelem: the mistral:mistral-embed answer's vector 0 holds a value that is not a"
        " finite number\n",
    )


def test_a_collection_refuses_a_vector_that_is_not_finite(tmp_path: Path) -> None:
    from array import array

    from elelem.conversation import SQLiteStore
    from elelem.embeddings.collections import Collections, Item
    from elelem.errors import ConfigError

    store = SQLiteStore(tmp_path / "store.db")
    notes = Collections(store).open("notes", "mistral:mistral-embed", 2)
    with pytest.raises(ConfigError) as caught:
        notes.upsert([Item("a", array("f", [0.5, float("nan")]))])
    assert str(caught.value) == "item 'a' holds a value that is not a finite number"
    assert notes.count() == 0
    store.close()


def test_an_endless_run_of_tiny_blocks_stops_at_the_block_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each 20-byte unknown event was kept as a block of some hundred bytes:
    # 256 MiB of them (the body limit) would have held gigabytes.
    import elelem.stream.assembler as assembler
    from elelem.errors import LimitExceededError

    monkeypatch.setattr(assembler, "MAX_BLOCKS", 50)
    body = b'data: {"type":"x"}\n\n' * 51 + b'data: {"type":"speech.audio.done"}\n\n'
    events = Reply(200, {"content-type": "text/event-stream"}, (Send(body),))
    with LoopbackServer([events]) as server:
        env = {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "sk-t"}
        with client(env) as c, pytest.raises(LimitExceededError) as caught:
            speech = c.speak_stream("openai:gpt-4o-mini-tts", "hi", stream_format="sse")
            with speech:
                for _ in speech:
                    pass
    assert caught.value.message == (
        "the response passed 50 blocks (limit Assembler.max_blocks = 50)"
    )
    assert (caught.value.limit, caught.value.retryable) == ("Assembler.max_blocks", False)


def test_the_block_limit_holds_exactly_its_number() -> None:
    from elelem.errors import LimitExceededError
    from elelem.stream import Assembler, BlockEnd, BlockStart, ResponseStart

    assembler = Assembler(ProviderId("openai"), max_blocks=3)
    assembler.feed(ResponseStart(provider=ProviderId("openai")))
    for key in range(3):
        assembler.feed(BlockStart(key, "unknown", raw={"type": "x"}))
        assembler.feed(BlockEnd(key))
    with pytest.raises(LimitExceededError):
        assembler.feed(BlockStart(3, "unknown", raw={"type": "x"}))


@pytest.mark.parametrize("count", [b"\xb2", b"9" * 5000, b"-1", b"1e3"])
def test_a_token_count_header_that_is_no_count_is_no_usage(count: bytes) -> None:
    # '\xb2' reads as '²', a digit to str.isdigit: int() raised ValueError (exit 70).
    body = json.dumps({"embeddings": [[0.5, 0.25]], "response_type": "embeddings_floats"})
    headers = {"content-type": "application/json",
               "x-amzn-bedrock-input-token-count": count.decode("latin-1")}  # fmt: skip
    with LoopbackServer([Reply(200, headers, (Send(body.encode()),))]) as server:
        env = {
            "ELELEM_BEDROCK_BASE_URL": server.url,
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
            "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            "AWS_REGION": "us-east-1",
        }
        with client(env) as c:
            got = c.embed("bedrock:cohere.embed-english-v3", ["a"])
    assert ([list(v) for v in got], got.usage) == ([[0.5, 0.25]], None)


def test_gemini_batch_counts_keep_numbers_and_skip_what_is_none() -> None:
    # "\u00b2" passed str.isdigit: int() raised, and the whole status failed.
    stats = {"requestCount": "2", "successfulRequestCount": 1, "pendingRequestCount": "\u00b2",
             "failedRequestCount": "9" * 5000, "x": True}  # fmt: skip
    body = json.dumps({"name": "batches/1", "metadata": {"state": "BATCH_STATE_RUNNING",
                                                         "batchStats": stats}})  # fmt: skip
    gemini = BatchRecord(ProviderId("google"), "google:gemini-2.5-flash", "gemini", "batches/1",
                         "running", "BATCH_STATE_RUNNING", ("r1",))  # fmt: skip
    with LoopbackServer([status(200, body.encode())]) as server:
        env = {"GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": "g-key"}
        with client(env) as c:
            now = c.batch_status(gemini)
    assert now.counts == {"requestCount": 2, "successfulRequestCount": 1}
