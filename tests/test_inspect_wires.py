"""``elelem inspect`` reads the embeddings answer of every wire elelem embeds
with (and Ollama's legacy route) by that wire's own ``decode``, Anthropic's
and Gemini's batches as the client reads them, and never stops on a body
nested too deep: bodies written from each provider's documented examples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import recording_mix as mix
from cli_helpers import base_env, run
from elelem import SyncClient
from elelem.batches import BatchRecord
from elelem.cli.inspect import inspect_recording
from elelem.cli.inspect_kinds import answer_summary
from elelem.codec import to_builtins
from elelem.embeddings import embedding_wires
from elelem.testing.servers import LoopbackServer, status
from elelem.vocabulary import ProviderId

WIRES = embedding_wires()

VECTORS = [[0.5, -0.25, 1.0], [0.125, 2.0, -1.5]]
BEDROCK = "https://bedrock-runtime.us-east-1.amazonaws.com/model"
GEMINI = "https://generativelanguage.googleapis.com/v1beta"
VERTEX = (
    "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1"
    "/publishers/google/models"
)

EMBEDDINGS: list[tuple[str, str, dict[str, Any], dict[str, Any], int]] = [
    ("mistral", "https://api.mistral.ai/v1/embeddings",
     {"model": "mistral-embed", "input": ["a", "b"]},
     {"data": [{"index": i, "embedding": v} for i, v in enumerate(VECTORS)],
      "usage": {"prompt_tokens": 2, "total_tokens": 2}}, 2),
    ("voyage", "https://api.voyageai.com/v1/embeddings",
     {"model": "voyage-3.5", "input": ["a", "b"], "input_type": "query"},
     {"object": "list", "data": [{"object": "embedding", "index": i, "embedding": v}
                                 for i, v in enumerate(VECTORS)],
      "usage": {"total_tokens": 3}}, 2),
    ("compatible", "https://api.together.xyz/v1/embeddings",
     {"model": "BAAI/bge-base-en-v1.5", "input": "a"},
     {"data": [{"index": 0, "embedding": VECTORS[0]}]}, 1),
    ("gemini", f"{GEMINI}/models/gemini-embedding-001:batchEmbedContents",
     {"requests": [{"model": "models/gemini-embedding-001",
                    "content": {"parts": [{"text": t}]}} for t in "ab"]},
     {"embeddings": [{"values": v} for v in VECTORS]}, 2),
    ("gemini", f"{GEMINI}/models/text-embedding-004:embedContent",
     {"model": "models/text-embedding-004", "content": {"parts": [{"text": "a"}]}},
     {"embedding": {"values": VECTORS[0]}}, 1),
    ("vertex", f"{VERTEX}/text-embedding-005:predict",
     {"instances": [{"content": "a"}, {"content": "b"}]},
     {"predictions": [{"embeddings": {"values": v, "statistics": {"token_count": 3,
                                                                  "truncated": i == 1}}}
                      for i, v in enumerate(VECTORS)],
      "metadata": {"billableCharacterCount": 2}}, 2),
    ("ollama", "http://localhost:11434/api/embed",
     {"model": "all-minilm", "input": ["a", "b"]},
     {"model": "all-minilm", "embeddings": VECTORS, "prompt_eval_count": 2}, 2),
    ("ollama", "http://localhost:11434/api/embeddings",
     {"model": "nomic-embed-text", "prompt": "a"}, {"embedding": VECTORS[0]}, 1),
    ("titan", f"{BEDROCK}/amazon.titan-embed-text-v2%3A0/invoke",
     {"inputText": "a"}, {"embedding": VECTORS[0], "inputTextTokenCount": 2}, 1),
    ("cohere", f"{BEDROCK}/cohere.embed-english-v3/invoke",
     {"texts": ["a", "b"], "input_type": "search_document", "embedding_types": ["float"]},
     {"id": "e1", "embeddings": {"float": VECTORS}, "texts": ["a", "b"],
      "response_type": "embeddings_by_type"}, 2),
]  # fmt: skip


@pytest.mark.parametrize(("wire", "url", "sent", "answer", "count"), EMBEDDINGS)
def test_every_embedding_wire_is_read_by_its_own_decode(
    tmp_path: Path, wire: str, url: str, sent: dict[str, Any], answer: dict[str, Any], count: int
) -> None:
    body = json.dumps(answer).encode()
    exchange = mix.Exchange("POST", url, json.dumps(sent).encode(), 200, body)
    path = tmp_path / "embeddings.har"
    path.write_text(mix.har([exchange]), encoding="utf-8")
    (line,) = inspect_recording(str(path))
    decoded = WIRES[wire].decode(body, count)
    assert (line["exchange"], line["wire"]) == ("embeddings", wire)
    assert line["count"] == len(decoded.vectors) == count
    assert line["dimensions"] == 3
    assert line["usage"] == to_builtins(decoded.usage)
    assert line["truncated"] == list(decoded.truncated)
    assert line["encoding"] == "float"


def test_the_legacy_ollama_answer_is_one_vector() -> None:
    decoded = WIRES["ollama"].decode(b'{"embedding": [0.5, 1.5]}', 1)
    assert [list(v) for v in decoded.vectors] == [[0.5, 1.5]]
    assert decoded.usage is None


ANTHROPIC = "https://api.anthropic.com/v1/messages/batches"


def message(text: str) -> dict[str, Any]:
    return {"id": f"msg_{text}", "type": "message", "role": "assistant",
            "model": "claude-haiku-4-5", "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 9, "output_tokens": 1}}  # fmt: skip


def anthropic_batch(status_: str) -> dict[str, Any]:
    return {"id": "msgbatch_1", "type": "message_batch", "processing_status": status_,
            "request_counts": {"processing": 0, "succeeded": 1, "errored": 1,
                               "canceled": 0, "expired": 0},
            "results_url": f"{ANTHROPIC}/msgbatch_1/results" if status_ == "ended" else None}  # fmt: skip


ANTHROPIC_RESULTS = b"\n".join(
    json.dumps(line).encode()
    for line in [
        {"custom_id": "a", "result": {"type": "succeeded", "message": message("Yes.")}},
        {"custom_id": "b", "result": {"type": "errored", "error": {
            "type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}}},
    ]
)  # fmt: skip
GEMINI_DONE = {
    "name": "batches/123",
    "metadata": {"@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
                 "state": "BATCH_STATE_SUCCEEDED",
                 "batchStats": {"requestCount": "1", "successfulRequestCount": "1"}},
    "done": True,
    "response": {"@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput",
                 "inlinedResponses": {"inlinedResponses": [
                     {"response": {"candidates": [{"content": {"parts": [{"text": "Blue."}],
                                                               "role": "model"},
                                                   "finishReason": "STOP"}],
                                   "usageMetadata": {"promptTokenCount": 4,
                                                     "candidatesTokenCount": 1},
                                   "modelVersion": "gemini-2.5-flash"},
                      "metadata": {"key": "g1"}}]}},
}  # fmt: skip


def test_anthropic_and_gemini_batches_are_what_the_client_reads(tmp_path: Path) -> None:
    exchanges = [
        mix.Exchange("GET", f"{ANTHROPIC}/msgbatch_1", b"", 200,
                     json.dumps(anthropic_batch("ended")).encode()),
        mix.Exchange("GET", f"{ANTHROPIC}/msgbatch_1/results", b"", 200, ANTHROPIC_RESULTS,
                     response_type="application/binary"),
        mix.Exchange("GET", f"{GEMINI}/batches/123", b"", 200, json.dumps(GEMINI_DONE).encode()),
    ]  # fmt: skip
    path = tmp_path / "batches.har"
    path.write_text(mix.har(exchanges), encoding="utf-8")
    poll, results, gemini = inspect_recording(str(path))
    replies = [status(200, e.response) for e in exchanges]
    with LoopbackServer(replies) as server:
        env = {"ELELEM_CONFIG": "/nonexistent", "ANTHROPIC_BASE_URL": server.url,
               "ANTHROPIC_API_KEY": "k", "GEMINI_API_KEY": "k",
               "ELELEM_GOOGLE_BASE_URL": server.url}  # fmt: skip
        with SyncClient(env=env, max_retries=0) as c:
            start = BatchRecord(ProviderId("anthropic"), "anthropic:claude-haiku-4-5",
                                "anthropic", "msgbatch_1", "running", "in_progress", ("a", "b"))  # fmt: skip
            record = c.batch_status(start)
            # The results URL is on the recorded host: the client is pointed
            # at the loopback server with the same path.
            local = BatchRecord(record.provider, record.model, record.wire, record.batch_id,
                                record.state, record.raw_state, record.custom_ids,
                                output="/v1/messages/batches/msgbatch_1/results")  # fmt: skip
            got = c.batch_results(local)
            google = BatchRecord(ProviderId("google"), "google:gemini-2.5-flash", "gemini",
                                 "batches/123", "running", "", ("g1",))  # fmt: skip
            gemini_got = c.batch_results(google)
    assert (poll["batch_id"], poll["state"], poll["raw_state"], poll["counts"]) == (
        record.batch_id, record.state, record.raw_state, dict(record.counts))  # fmt: skip
    assert results["results"] == [
        {"custom_id": r.custom_id, "error": r.error,
         "response": None if r.response is None else answer_summary(r.response)}
        for r in got
    ]  # fmt: skip
    assert [r["custom_id"] for r in results["results"]] == ["a", "b"]
    assert results["results"][0]["response"]["text"] == "Yes."
    assert gemini["state"] == "ended"
    assert gemini["results"] == [
        {"custom_id": r.custom_id, "error": r.error,
         "response": None if r.response is None else answer_summary(r.response)}
        for r in gemini_got
    ]  # fmt: skip
    assert gemini["results"][0]["response"]["text"] == "Blue."


def test_a_body_nested_too_deep_is_an_error_never_a_crash(tmp_path: Path) -> None:
    # Every kind of exchange answered with JSON nested 100,000 deep (the
    # hardening round's exit-70 case), beside a good embeddings exchange.
    deep = b"[" * 100_000 + b"]" * 100_000
    exchanges = [
        mix.Exchange(e.method, e.url, e.request, e.status, deep) for e in mix.exchanges()[1:]
    ]
    path = tmp_path / "deep.har"
    path.write_text(mix.har([*exchanges, mix.exchanges()[1]]), encoding="utf-8")
    result = run(base_env(tmp_path), "inspect", "--json", str(path))
    assert (result.returncode, result.stderr) == (0, "")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["interaction"] for line in lines] == list(range(len(exchanges) + 1))
    assert lines[-1]["count"] == 2
    speech = {2, 12}  # audio is bytes, whatever they hold
    unknown = {11}
    for n, line in enumerate(lines[:-1]):
        if n in unknown:
            assert line["exchange"] == "unknown"
        elif n not in speech:
            assert line["error"]["type"] in ("malformed", "malformed-stream", "not-found"), line
    single = tmp_path / "deep.json"
    single.write_text(json.dumps({"status": 200, "body": deep.decode()}), encoding="utf-8")
    result = run(base_env(tmp_path), "inspect", str(single))
    assert (result.returncode, result.stderr) == (
        2, f"elelem: {single}: interaction 0: its body is nested too deeply to read\n")  # fmt: skip


def test_an_embeddings_body_recorded_alone_is_read(tmp_path: Path) -> None:
    # A raw JSON body, no request beside it: told by its answer.
    body = mix.exchanges()[1].response
    path = tmp_path / "embeddings.json"
    path.write_bytes(body)
    (line,) = inspect_recording(str(path))
    decoded = WIRES["openai"].decode(body, 2)
    assert (line["exchange"], line["method"], line["path"], line["count"]) == (
        "embeddings", None, None, len(decoded.vectors))  # fmt: skip
    assert line["usage"] == to_builtins(decoded.usage)


def test_a_stream_recorded_without_its_last_event_is_incomplete(tmp_path: Path) -> None:
    # The transcription and the speech cut before their done events: each
    # exchange says so, as the client's stream would, and the file is read.
    exchanges = mix.exchanges()
    cut = [
        mix.Exchange(e.method, e.url, e.request, 200, e.response.rsplit(b"data:", 1)[0],
                     e.request_type, e.response_type)
        for e in (exchanges[5], exchanges[13])
    ]  # fmt: skip
    path = tmp_path / "cut.har"
    path.write_text(mix.har([*cut, exchanges[1]]), encoding="utf-8")
    transcription, speech, embeddings = inspect_recording(str(path))
    assert transcription["error"] == {
        "type": "incomplete-stream",
        "message": "the recorded transcription stream ended without its last event",
    }
    assert speech["error"] == {
        "type": "incomplete-stream",
        "message": "the recorded speech stream ended without its last event",
    }
    assert embeddings["count"] == 2


COUNTS = [
    ("anthropic:claude-haiku-4-5", "https://api.anthropic.com/v1/messages/count_tokens",
     {"input_tokens": 2095}),
    ("openai:gpt-4o-mini", "https://api.openai.com/v1/responses/input_tokens",
     {"object": "response.input_tokens", "input_tokens": 11}),
    ("google:gemini-2.5-flash",
     f"{GEMINI}/models/gemini-2.5-flash:countTokens",
     {"totalTokens": 31, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 31}]}),
]  # fmt: skip


@pytest.mark.parametrize(("model", "url", "answer"), COUNTS)
def test_a_token_count_is_what_count_tokens_returns(
    tmp_path: Path, model: str, url: str, answer: dict[str, Any]
) -> None:
    body = json.dumps(answer).encode()
    exchange = mix.Exchange("POST", url, b'{"model": "m"}', 200, body)
    path = tmp_path / "count.har"
    path.write_text(mix.har([exchange]), encoding="utf-8")
    (line,) = inspect_recording(str(path))
    with LoopbackServer([status(200, body)]) as server:
        env = {"ELELEM_CONFIG": "/nonexistent", "ANTHROPIC_BASE_URL": server.url,
               "ANTHROPIC_API_KEY": "k", "OPENAI_BASE_URL": server.url + "/v1",
               "OPENAI_API_KEY": "k", "GEMINI_API_KEY": "k",
               "ELELEM_GOOGLE_BASE_URL": server.url}  # fmt: skip
        with SyncClient(env=env, max_retries=0) as c:
            count = c.count_tokens(model, "How many tokens?")
    assert count.source == "provider"
    assert (line["exchange"], line["input"], line["source"], line["endpoint"]) == (
        "token-count", count.input, count.source, count.note)  # fmt: skip


def test_file_uploads_of_each_provider_name_their_file(tmp_path: Path) -> None:
    uploads = [
        mix.Exchange("POST", "https://api.anthropic.com/v1/files", b"", 200, json.dumps(
            {"id": "file_011", "type": "file", "filename": "a.pdf", "size_bytes": 1024}).encode()),
        mix.Exchange("POST", "https://generativelanguage.googleapis.com/upload/v1beta/files",
                     b"", 200, json.dumps({"file": {"name": "files/abc", "sizeBytes": "2048",
                                                    "mimeType": "audio/wav"}}).encode()),
    ]  # fmt: skip
    path = tmp_path / "uploads.har"
    path.write_text(mix.har(uploads), encoding="utf-8")
    anthropic, gemini = inspect_recording(str(path))
    assert (anthropic["provider"], anthropic["file_id"], anthropic["bytes"]) == (
        "anthropic", "file_011", 1024)  # fmt: skip
    assert (gemini["provider"], gemini["file_id"], gemini["bytes"]) == (
        "google", "files/abc", "2048")  # fmt: skip
