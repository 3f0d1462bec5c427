"""Client.batch / batch_status / batch_results against loopback stand-ins of
the Anthropic, OpenAI and Gemini batch APIs: the exact wire JSON of each
step, results read by each shape's own whole-body parser, costs at half
price, and a record that a second client (another process) carries on from.

The bodies are written from each provider's documented examples (the corpus
holds no batch traffic)."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from elelem import Client, SyncClient
from elelem.batches import BatchRecord, BatchRequest, batch_price
from elelem.errors import ConfigError, UnsupportedError
from elelem.providers.pricing import price
from elelem.testing.servers import LoopbackServer, RecordedRequest, Reply, status
from elelem.vocabulary import GenerationOptions, Usage

CONFIG = str(Path(__file__).with_name("empty-config.toml"))  # no config: an empty file


def answer(data: Any) -> Reply:
    return status(200, json.dumps(data).encode())


def jsonl(*lines: Any) -> Reply:
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    return status(200, body, content_type="application/binary")


def client(env: dict[str, str]) -> SyncClient:
    return SyncClient(env={"ELELEM_CONFIG": CONFIG, **env}, max_retries=0)


ANTHROPIC_BATCH: dict[str, Any] = {
    "id": "msgbatch_013Zva2CMHLNnXjNJJKqJ2EF",
    "type": "message_batch",
    "processing_status": "in_progress",
    "request_counts": {"processing": 2, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
    "ended_at": None,
    "created_at": "2024-09-24T18:37:24.100435Z",
    "expires_at": "2024-09-25T18:37:24.100435Z",
    "cancel_initiated_at": None,
    "results_url": None,
}
MESSAGE = {
    "id": "msg_014VwiXbi91y3JMjcpyGBHX5",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5-20250929",
    "content": [{"type": "text", "text": "Paris."}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 11, "output_tokens": 4},
}


def anthropic_api(*results: dict[str, Any], **counts: int) -> Callable[[RecordedRequest], Reply]:
    """A Message Batches stand-in: create answers in progress, a read
    answers ended (with ``counts``), the results URL gives ``results``."""
    ended = dict(ANTHROPIC_BATCH, processing_status="ended")
    ended["request_counts"] = dict(ANTHROPIC_BATCH["request_counts"], **counts)
    results_path = f"/v1/messages/batches/{ANTHROPIC_BATCH['id']}/results"

    def reply(request: RecordedRequest) -> Reply:
        if request.method == "POST":
            return answer(ANTHROPIC_BATCH)
        if request.path == results_path:
            return jsonl(*results)
        # the results URL is absolute: it names this server
        return answer(dict(ended, results_url=f"http://{request.headers['host']}{results_path}"))

    return reply


def test_anthropic_message_batch_submit_status_results() -> None:
    errored = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    reply = anthropic_api(
        {"custom_id": "capital", "result": {"type": "succeeded", "message": MESSAGE}},
        {"custom_id": "r2", "result": {"type": "errored", "error": errored}},
        processing=0,
        succeeded=1,
        errored=1,
    )
    with LoopbackServer(reply) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant"}
        options = GenerationOptions(max_tokens=64)
        requests: list[BatchRequest | str] = [
            BatchRequest("Capital of France?", "capital", "Be brief.", options),
            "Hi",
        ]
        with client(env) as c:
            record = c.batch("anthropic:claude-sonnet-4-5", requests)
        # another process: only the record crosses
        record = msgspec.json.decode(msgspec.json.encode(record), type=BatchRecord)
        with client(env) as c:
            now = c.batch_status(record)
            results = c.batch_results(now)
        create, get, read = server.requests
    assert (create.method, create.path) == ("POST", "/v1/messages/batches")
    assert create.headers["x-api-key"] == "sk-ant" and create.headers["anthropic-version"]
    sent = json.loads(create.body)["requests"]
    assert [r["custom_id"] for r in sent] == ["capital", "r2"]
    assert sent[0]["params"] == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 64,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Capital of France?"}]}],
    }
    assert "stream" not in sent[1]["params"]
    assert (record.state, record.raw_state, record.batch_id) == (
        "running",
        "in_progress",
        "msgbatch_013Zva2CMHLNnXjNJJKqJ2EF",
    )
    assert (get.method, get.path) == (
        "GET",
        "/v1/messages/batches/msgbatch_013Zva2CMHLNnXjNJJKqJ2EF",
    )
    assert get.headers["anthropic-version"] and get.headers["x-api-key"] == "sk-ant"
    assert (now.state, now.done, now.counts["succeeded"]) == ("ended", True, 1)
    assert read.path == "/v1/messages/batches/msgbatch_013Zva2CMHLNnXjNJJKqJ2EF/results"
    first, second = results
    assert first.custom_id == "capital" and first.error is None
    assert first.response is not None and first.response.text == "Paris."
    assert first.response.response_id == "msg_014VwiXbi91y3JMjcpyGBHX5"
    assert first.response.finish is not None and first.response.finish.reason == "stop"
    usage = Usage(input=11, output=4)
    full = price("anthropic", "claude-sonnet-4-5", usage)
    assert full.total == Decimal("0.000093")  # $3 in, $15 out per million
    assert first.cost.total == Decimal("0.0000465")
    assert second.response is None
    assert (
        second.error == '{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}'
    )


RESPONSE = {
    "id": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
    "object": "response",
    "created_at": 1741476542,
    "status": "completed",
    "model": "gpt-4o-mini-2024-07-18",
    "output": [
        {
            "type": "message",
            "id": "msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Paris.", "annotations": []}],
        }
    ],
    "usage": {
        "input_tokens": 36,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 87,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 123,
    },
}


def openai_batch(state: str, output: str | None = None) -> dict[str, Any]:
    return {
        "id": "batch_abc123",
        "object": "batch",
        "endpoint": "/v1/responses",
        "errors": None,
        "input_file_id": "file-abc123",
        "completion_window": "24h",
        "status": state,
        "output_file_id": output,
        "error_file_id": None,
        "request_counts": {"total": 1, "completed": 1 if output else 0, "failed": 0},
    }


def test_openai_batch_uploads_a_jsonl_file_then_reads_the_output_file() -> None:
    uploaded = {"id": "file-abc123", "object": "file", "bytes": 120, "created_at": 1677610602,
                "filename": "batch.jsonl", "purpose": "batch"}  # fmt: skip
    line = {"id": "batch_req_123", "custom_id": "r1",
            "response": {"status_code": 200, "request_id": "req_123", "body": RESPONSE},
            "error": None}  # fmt: skip
    replies = [
        answer(uploaded),
        answer(openai_batch("validating")),
        answer(openai_batch("completed", "file-cvaTdG")),
        jsonl(line),
    ]
    with LoopbackServer(replies) as server:
        env = {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "sk-o"}
        with client(env) as c:
            record = c.batch("openai:gpt-4o-mini", ["Capital of France?"])
            now = c.batch_status(record)
            [result] = c.batch_results(now)
        upload, create, get, read = server.requests
    assert (upload.path, upload.headers["authorization"]) == ("/v1/files", "Bearer sk-o")
    kind, _, boundary = upload.headers["content-type"].partition("; boundary=")
    assert kind == "multipart/form-data"
    parts = upload.body.split(b"--" + boundary.encode())
    assert parts[1] == b'\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n'
    head, _, file = parts[2].partition(b"\r\n\r\n")
    assert head == (
        b'\r\nContent-Disposition: form-data; name="file"; filename="batch.jsonl"'
        b"\r\nContent-Type: application/jsonl"
    )
    [row] = [json.loads(x) for x in file.splitlines() if x.strip()]
    assert row == {
        "custom_id": "r1",
        "method": "POST",
        "url": "/v1/responses",
        "body": {
            "model": "gpt-4o-mini",
            "input": [{"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": "Capital of France?"}]}],
            "store": False,
            "include": ["reasoning.encrypted_content"],
        },
    }  # fmt: skip
    assert json.loads(create.body) == {
        "input_file_id": "file-abc123",
        "endpoint": "/v1/responses",
        "completion_window": "24h",
    }
    assert (record.state, now.state, now.output) == ("pending", "ended", "file-cvaTdG")
    assert (get.method, get.path) == ("GET", "/v1/batches/batch_abc123")
    assert (read.method, read.path) == ("GET", "/v1/files/file-cvaTdG/content")
    assert result.response is not None and result.response.text == "Paris."
    assert result.request_id == "req_123"
    full = price("openai", "gpt-4o-mini", result.response.usage)
    assert result.cost == batch_price(full) and result.cost.total == full.total / 2  # type: ignore[operator]


GEMINI_RESPONSE = {
    "candidates": [
        {"content": {"parts": [{"text": "Paris."}], "role": "model"}, "finishReason": "STOP",
         "index": 0}
    ],
    "usageMetadata": {"promptTokenCount": 8, "candidatesTokenCount": 3, "totalTokenCount": 11},
    "modelVersion": "gemini-2.5-flash",
}  # fmt: skip


def gemini_operation(state: str, done: bool = False) -> dict[str, Any]:
    meta = {
        "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
        "model": "models/gemini-2.5-flash",
        "displayName": "elelem batch of 2",
        "batchStats": {"requestCount": "2", "pendingRequestCount": "0" if done else "2"},
        "state": state,
        "name": "batches/123456",
    }
    out: dict[str, Any] = {"name": "batches/123456", "metadata": meta}
    if done:
        out["done"] = True
        out["response"] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput",
            "inlinedResponses": {
                "inlinedResponses": [
                    {"response": GEMINI_RESPONSE},
                    {"error": {"code": 400, "message": "Invalid argument"}},
                ]
            },
        }
    return out


def test_gemini_batch_mode_inline_requests_async() -> None:
    replies = [
        answer(gemini_operation("BATCH_STATE_PENDING")),
        answer(gemini_operation("BATCH_STATE_SUCCEEDED", done=True)),
        answer(gemini_operation("BATCH_STATE_SUCCEEDED", done=True)),
    ]

    async def main(server: LoopbackServer) -> Any:
        env = {"GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": "g", "ELELEM_CONFIG": CONFIG}
        async with Client(env=env, max_retries=0) as c:
            record = await c.batch("google:gemini-2.5-flash", ["Capital of France?", "x"])
            now = await c.batch_status(record)
            return record, now, await c.batch_results(now)

    with LoopbackServer(replies) as server:
        record, now, results = anyio.run(main, server)
        create, get, read = server.requests
    assert create.path == "/v1beta/models/gemini-2.5-flash:batchGenerateContent"
    assert create.headers["x-goog-api-key"] == "g"
    batch = json.loads(create.body)["batch"]
    assert batch["displayName"] == "elelem batch of 2"
    first = batch["inputConfig"]["requests"]["requests"][0]
    assert first["metadata"] == {"key": "r1"}
    assert first["request"]["contents"] == [
        {"role": "user", "parts": [{"text": "Capital of France?"}]}
    ]
    assert (record.batch_id, record.state, record.counts) == (
        "batches/123456",
        "pending",
        {"requestCount": 2, "pendingRequestCount": 2},
    )
    assert (get.method, get.path, read.path) == (
        "GET",
        "/v1beta/batches/123456",
        "/v1beta/batches/123456",
    )
    assert now.state == "ended"
    ok, bad = results
    assert (ok.custom_id, bad.custom_id) == ("r1", "r2")
    assert ok.response is not None and ok.response.text == "Paris."
    assert ok.response.usage is not None and ok.response.usage.input == 8
    assert bad.error == '{"code":400,"message":"Invalid argument"}'


def test_providers_without_a_batch_api_and_bad_requests() -> None:
    with client({"DEEPSEEK_API_KEY": "k"}) as c, pytest.raises(UnsupportedError, match="deepseek"):
        c.batch("deepseek:deepseek-chat", ["x"])
    with client({"OPENAI_API_KEY": "k"}) as c:
        with pytest.raises(ConfigError, match="custom_id 'a' is given twice"):
            c.batch("openai:gpt-4o-mini", [BatchRequest("x", "a"), BatchRequest("y", "a")])
        with pytest.raises(ConfigError, match="at least one request"):
            c.batch("openai:gpt-4o-mini", [])


def test_results_before_the_batch_ended_is_a_clear_error() -> None:
    record = BatchRecord("anthropic", "anthropic:claude-x", "anthropic", "msgbatch_1", "running",  # type: ignore[arg-type]
                         "in_progress", ("r1",))  # fmt: skip
    with (
        client({"ANTHROPIC_API_KEY": "k"}) as c,
        pytest.raises(UnsupportedError, match="no results yet"),
    ):
        c.batch_results(record)


# -- the commands and the log -----------------------------------------------------


def run(env: dict[str, str], *args: str, stdin: str = "") -> Any:
    """``elelem ARGS`` in this process; the environment is exactly ``env``."""
    import os

    from click.testing import CliRunner

    from elelem.cli import main

    blank = {k: None for k in os.environ if k not in env}
    result = CliRunner().invoke(main, list(args), input=stdin, env={**blank, **env})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def test_batch_commands_submit_status_results_through_the_log(tmp_path: Any) -> None:
    from elelem.conversation import open_store
    from elelem.providers.costs import events_cost
    from elelem.turns.batchlog import find, latest

    second = dict(MESSAGE, id="msg_2", content=[{"type": "text", "text": "Rome.\x1b[2J"}])
    reply = anthropic_api(
        {"custom_id": "r2", "result": {"type": "succeeded", "message": second}},
        {"custom_id": "r1", "result": {"type": "succeeded", "message": MESSAGE}},
    )

    with LoopbackServer(reply) as server:
        env = {
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "sk-ant",
            "ELELEM_HOME": str(tmp_path),
            "ELELEM_CONFIG": CONFIG,
        }
        prompts = "Capital of France?\nCapital of Italy?\n"
        submitted = run(env, "batch", "submit", "-", "-m", "anthropic:claude-sonnet-4-5",
                        "--max-tokens", "50", stdin=prompts)  # fmt: skip
        conversation_line, batch_line = submitted.stdout.splitlines()
        status = run(env, "batch", "status", ANTHROPIC_BATCH["id"])
        results = run(env, "batch", "results", conversation_line.split()[1])
        again = run(env, "batch", "results", ANTHROPIC_BATCH["id"])
        sent = json.loads(server.requests[0].body)["requests"]
        requests_made = len(server.requests)
    assert submitted.exit_code == 0, submitted.stderr
    assert batch_line == "batch msgbatch_013Zva2CMHLNnXjNJJKqJ2EF: running (in_progress)"
    assert [r["params"]["max_tokens"] for r in sent] == [50, 50]
    assert status.stdout == (
        "batch msgbatch_013Zva2CMHLNnXjNJJKqJ2EF: ended (ended); "
        "canceled 0, errored 0, expired 0, processing 2, succeeded 0\n"
    )
    assert results.stdout == "r1: Paris.\nr2: Rome.\n"  # the escape sequence is not shown
    # $0.000093 a response at the standard price: half of it twice
    assert results.stderr == "2 results, $0.0001 at the batch price\n"
    assert again.stdout == results.stdout and requests_made == 3  # read from the log
    store = open_store(tmp_path / "elelem.db")
    conversation = find(store, ANTHROPIC_BATCH["id"])
    assert latest(conversation).state == "ended"
    assert events_cost(conversation.events).total == Decimal("0.000093")
    turns = conversation.turns()
    assert [(t.turn, t.trigger, t.model) for t in turns[1:]] == [
        (1, "batch", "anthropic:claude-sonnet-4-5"),
        (2, "batch", "anthropic:claude-sonnet-4-5"),
    ]
    assert [t.responses[0].tier for t in turns[1:]] == ["batch", "batch"]
    assert turns[2].responses[0].response_id == "msg_2"
    store.close()


def test_batch_commands_on_gemini_and_openai(tmp_path: Any) -> None:
    gemini = [
        answer(gemini_operation("BATCH_STATE_PENDING")),
        answer(gemini_operation("BATCH_STATE_SUCCEEDED", done=True)),
        answer(gemini_operation("BATCH_STATE_SUCCEEDED", done=True)),
    ]
    rows = '{"custom_id": "fr", "prompt": "Capital of France?"}\n{"prompt": "x"}\n'
    with LoopbackServer(gemini) as server:
        env = {"GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": "g",
               "ELELEM_HOME": str(tmp_path / "g"), "ELELEM_CONFIG": CONFIG}  # fmt: skip
        submitted = run(env, "batch", "submit", "-", "--jsonl", "-m", "google:gemini-2.5-flash",
                        stdin=rows)  # fmt: skip
        results = run(env, "batch", "results", "batches/123456", "--json")
    assert submitted.stdout.splitlines()[1] == "batch batches/123456: pending (BATCH_STATE_PENDING)"
    lines = [json.loads(line) for line in results.stdout.splitlines()]
    assert lines == [
        {"custom_id": "fr", "text": "Paris.", "finish": "stop", "error": None},
        {"custom_id": "r2", "text": "", "finish": "error",
         "error": '{"code":400,"message":"Invalid argument"}'},
    ]  # fmt: skip
    line = {"id": "batch_req_1", "custom_id": "r1", "error": None,
            "response": {"status_code": 200, "request_id": "req_1", "body": RESPONSE}}  # fmt: skip
    uploaded = {"id": "file-abc123", "object": "file", "purpose": "batch"}
    openai = [answer(uploaded), answer(openai_batch("validating")),
              answer(openai_batch("completed", "file-out")), jsonl(line)]  # fmt: skip
    with LoopbackServer(openai) as server:
        env = {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "k",
               "ELELEM_HOME": str(tmp_path / "o"), "ELELEM_CONFIG": CONFIG}  # fmt: skip
        run(env, "batch", "submit", "-", "-m", "openai:gpt-4o-mini", stdin="Capital of France?\n")
        status = run(env, "batch", "status", "batch_abc123")
        results = run(env, "batch", "results", "batch_abc123")
    assert (
        status.stdout == "batch batch_abc123: ended (completed); completed 1, failed 0, total 1\n"
    )
    assert results.stdout == "r1: Paris.\n"
