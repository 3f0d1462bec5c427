"""``elelem inspect`` on a recording that mixes every exchange kind, in six
published containers (``recording_mix``): every exchange shown, nothing
refused, and every value of a non-chat exchange equal to what the library
returns for the same body -- the real ``SyncClient`` (``embed``, ``speak``,
``transcribe``, ``transcribe_stream``, ``batch``, ``batch_status``,
``batch_results``) and the model listing, each served the recorded answer
by a loopback server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx2
import pytest

import recording_mix as mix
from elelem import SyncClient
from elelem.batches import BatchRecord, BatchRequest
from elelem.cli.inspect import inspect_recording
from elelem.cli.inspect_kinds import answer_summary
from elelem.cli.inspect_summary import summary
from elelem.codec import to_builtins
from elelem.errors import StreamError
from elelem.providers.listing import list_remote_models
from elelem.shapes.openai_chat import SHAPE as CHAT
from elelem.shapes.openai_chat import alternatives
from elelem.stream import Assembler
from elelem.testing.servers import LoopbackServer, Reply, status
from elelem.transport import Endpoint
from elelem.vocabulary import AudioBlock, ProviderId
from test_containers import bedrock_eventstream

CONFIG = "/nonexistent/elelem.toml"
EXCHANGES = mix.exchanges()
KINDS = [
    "chat", "embeddings", "embeddings", "speech", "transcription", "transcription",
    "file-upload", "batch-create", "batch-poll", "batch-poll", "batch-poll", "batch-results",
    "unknown", "speech", "model-list",
]  # fmt: skip


def reply(exchange: mix.Exchange) -> Reply:
    return status(exchange.status, exchange.response, content_type=exchange.response_type)


def client(server: LoopbackServer) -> SyncClient:
    env = {
        "ELELEM_CONFIG": CONFIG,
        "OPENAI_BASE_URL": server.url + "/v1",
        "OPENAI_API_KEY": "sk-test",
        "ELELEM_OLLAMA_NATIVE_BASE_URL": server.url,
    }
    return SyncClient(env=env, max_retries=0)


def served(*exchanges: mix.Exchange) -> Iterator[SyncClient]:
    with LoopbackServer([reply(e) for e in exchanges]) as server, client(server) as c:
        yield c


def by_interaction(lines: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for line in lines:
        out.setdefault(int(line["interaction"]), []).append(line)
    return out


async def listed(endpoint: Endpoint) -> list[str]:
    async with httpx2.AsyncClient() as http:
        return [m.id for m in await list_remote_models("openai_chat", endpoint, http)]


def the_library() -> dict[int, dict[str, Any]]:
    """What the library returns for each recorded non-chat answer, by interaction."""
    e = EXCHANGES
    out: dict[int, dict[str, Any]] = {}
    for c in served(e[1]):
        got = c.embed("openai:text-embedding-3-small", ["a", "b"])
        assert got.usage is not None
        out[1] = {"count": len(got), "dimensions": got.dimensions,
                  "usage_input": got.usage.input, "usage_raw": got.usage.raw}  # fmt: skip
    for c in served(e[2]):
        got = c.embed("ollama-native:nomic-embed-text", ["a"])
        out[2] = {"count": len(got), "dimensions": got.dimensions, "usage": got.usage}
    for c in served(e[3]):
        audio = c.speak("openai:tts-1", "Hello there.", format="mp3")
        out[3] = {"bytes": len(audio.source.blob.data), "media_type": audio.media_type}  # type: ignore[union-attr]
    wav = AudioBlock.from_bytes(mix.WAV, "audio/wav")
    for c in served(e[4]):
        transcript = c.transcribe("openai:whisper-1", wav)
        out[4] = {"text": transcript.text, "usage": transcript.usage}
    for c in served(e[5]):
        with c.transcribe_stream("openai:gpt-4o-mini-transcribe", wav) as stream:
            pieces = list(stream)
            final = stream.final()
        out[5] = {"text": final.text, "usage": final.usage, "deltas": len(pieces)}
    for c in served(e[6], e[7]):
        asked = [BatchRequest("What is 2+2?", custom_id="r-1"),
                 BatchRequest("Capital of France?", custom_id="r-2")]  # fmt: skip
        record = c.batch("openai:gpt-4o-mini", asked)
        out[7] = {"batch_id": record.batch_id, "state": record.state,
                  "raw_state": record.raw_state, "counts": dict(record.counts)}  # fmt: skip
    for n in (8, 10):
        for c in served(e[n]):
            now = c.batch_status(record)
            out[n] = {"batch_id": now.batch_id, "state": now.state,
                      "raw_state": now.raw_state, "counts": dict(now.counts)}  # fmt: skip
            if n == 10:
                record = now
    for c in served(e[9]):
        with pytest.raises(StreamError) as caught:
            c.batch_status(record)
        out[9] = {"error": {"type": caught.value.provider_type,
                            "message": caught.value.provider_message}}  # fmt: skip
    assert isinstance(record, BatchRecord) and record.output == "file-out"
    for c in served(e[11]):
        results = c.batch_results(record)
        out[11] = {"results": [
            {"custom_id": r.custom_id, "error": r.error,
             "response": None if r.response is None else answer_summary(r.response)}
            for r in results
        ]}  # fmt: skip
    for c in served(e[13]):
        speech = c.speak_stream("openai:gpt-4o-mini-tts", "Hi.", format="pcm", stream_format="sse")
        with speech:
            whole = speech.final()
        data = whole.audio.source.blob.data  # type: ignore[union-attr]
        out[13] = {"bytes": len(data), "media_type": whole.audio.media_type,
                   "usage": to_builtins(whole.usage)}  # fmt: skip
    for c in served(e[14]):
        endpoint = c.target("openai:gpt-4o-mini").endpoint

        out[14] = {"models": anyio.run(listed, endpoint)}
    return out


@pytest.fixture(scope="module")
def library() -> dict[int, dict[str, Any]]:
    return the_library()


def test_the_library_reads_what_was_recorded(library: dict[int, dict[str, Any]]) -> None:
    # The library's side of the comparison, with the recorded values.
    assert library[1] == {"count": 2, "dimensions": 3, "usage_input": 4,
                          "usage_raw": [{"prompt_tokens": 4, "total_tokens": 4}]}  # fmt: skip
    assert library[2] == {"count": 1, "dimensions": 4, "usage": None}
    assert library[3] == {"bytes": len(mix.AUDIO), "media_type": "audio/mpeg"}
    assert library[5]["deltas"] == 2 and library[5]["text"] == "Hello there."
    assert [library[n]["raw_state"] for n in (7, 8, 10)] == ["validating", "in_progress",
                                                             "completed"]  # fmt: skip
    assert library[9] == {"error": {"type": "invalid_request_error", "message": "No batch found"}}
    assert [r["response"]["text"] for r in library[11]["results"]] == ["Four.", "Paris."]
    assert library[13]["bytes"] == 24 and library[13]["media_type"] == "audio/pcm"
    assert library[14] == {"models": ["gpt-4o-mini", "tts-1"]}


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("container", list(mix.CONTAINERS))
def test_every_exchange_of_every_container_is_the_library_reading(
    tmp_path: Path, container: str, gzipped: bool, library: dict[int, dict[str, Any]]
) -> None:
    path = mix.write(tmp_path, container, gzipped=gzipped)
    seen = by_interaction(inspect_recording(str(path)))
    assert sorted(seen) == list(range(len(EXCHANGES)))
    kinds = [
        lines[0].get("exchange", "chat") if lines[0]["kind"] == "exchange" else "chat"
        for _, lines in sorted(seen.items())
    ]
    assert kinds == KINDS
    line = {n: lines[0] for n, lines in seen.items() if lines[0]["kind"] == "exchange"}
    for n, exchange in enumerate(EXCHANGES):
        if n in line:
            assert line[n]["method"] == exchange.method
            assert line[n]["path"] == exchange.path
            assert line[n]["status"] == exchange.status

    # Embeddings: count, dimensions, encoding, usage as Client.embed has them.
    openai, ollama = line[1], line[2]
    assert (openai["count"], openai["dimensions"], openai["encoding"]) == (
        library[1]["count"], library[1]["dimensions"], "base64")  # fmt: skip
    assert openai["usage"]["input"] == library[1]["usage_input"]
    assert [openai["usage"]["raw"]] == library[1]["usage_raw"]
    assert (ollama["wire"], ollama["count"], ollama["dimensions"], ollama["usage"]) == (
        "ollama", library[2]["count"], library[2]["dimensions"], library[2]["usage"])  # fmt: skip
    # Speech, and the whole and streamed transcriptions.
    assert (line[3]["bytes"], line[3]["media_type"], line[3]["streamed"]) == (
        library[3]["bytes"], library[3]["media_type"], False)  # fmt: skip
    assert (line[4]["text"], line[4]["usage"], line[4]["streamed"]) == (
        library[4]["text"], library[4]["usage"], False)  # fmt: skip
    assert (line[5]["text"], line[5]["usage"], line[5]["deltas"], line[5]["streamed"]) == (
        library[5]["text"], library[5]["usage"], library[5]["deltas"], True)  # fmt: skip
    # Batches: the object created and polled, the failed poll, the results.
    for n in (7, 8, 10):
        fields = {k: line[n][k] for k in ("batch_id", "state", "raw_state", "counts")}
        assert fields == library[n]
    assert line[9]["error"] == library[9]["error"]
    assert line[11]["results"] == library[11]["results"]
    assert (line[13]["bytes"], line[13]["media_type"], line[13]["usage"], line[13]["streamed"]) == (
        library[13]["bytes"], library[13]["media_type"], library[13]["usage"], True)  # fmt: skip
    assert line[14]["models"] == library[14]["models"]
    assert line[12] == {"kind": "exchange", "interaction": 12, "exchange": "unknown",
                        "method": "GET", "path": "/v1/assistants", "status": 200,
                        "provider": None}  # fmt: skip


def test_the_chat_exchange_shows_every_choice(tmp_path: Path) -> None:
    path = mix.write(tmp_path, "har")
    chat = by_interaction(inspect_recording(str(path)))[0]
    # The library's own reading of the body: the parser, the one assembler,
    # and alternatives() for every choice past the first.
    assembler = Assembler(ProviderId("openai"))
    assembler.feed_all(CHAT.parse_response(EXCHANGES[0].response, ProviderId("openai")))
    result = assembler.result()
    (second,) = alternatives(result)
    assert [line["kind"] for line in chat] == ["response", "block", "usage", "finish", "choice"]
    assert chat[1]["block"] == to_builtins(result.content[0])
    assert chat[1]["block"]["name"] == "get_weather"
    assert chat[4] == {
        "kind": "choice",
        "interaction": 0,
        "choice": 1,
        "blocks": [to_builtins(part) for part in second.content],
        "finish": "stop",
    }
    assert chat[4]["blocks"][0]["text"] == "It is sunny in Paris."


def test_the_summary_shows_every_exchange_and_one_line_of_polls(tmp_path: Path) -> None:
    path = mix.write(tmp_path, "vcrpy")
    text = summary(inspect_recording(str(path)))
    assert text == [
        "interaction 0: openai gpt-4o-mini-2024-07-18",
        "  blocks: 1 tool-call",
        "  usage: input 40, output 22",
        "  finish: tool-calls",
        "  choice 1: 1 text, finish stop",
        "interaction 1: embeddings openai text-embedding-3-small",
        "  2 vectors of 3 dimensions (base64)",
        "  usage: input 4",
        "interaction 2: embeddings ollama nomic-embed-text",
        "  1 vector of 4 dimensions (float)",
        "interaction 3: speech openai tts-1",
        f"  {len(mix.AUDIO)} bytes of mp3 audio",
        "interaction 4: transcription openai whisper-1",
        "  text: Hello there.",
        "interaction 5: transcription openai gpt-4o-mini-transcribe",
        "  text: Hello there. (2 deltas streamed)",
        "interaction 6: file-upload openai: POST /v1/files -> 200",
        "interaction 7: batch-create openai",
        "  batch batch_abc: pending (validating)",
        "interactions 8-10: 3 batch polls openai, 1 failed",
        "  final: ended (completed)",
        "interaction 11: batch-results openai",
        "  2 results",
        "    r-1: gpt-4o-mini-2024-07-18: Four.",
        "    r-2: gpt-4o-mini-2024-07-18: Paris.",
        "interaction 12: unknown: GET /v1/assistants -> 200",
        "interaction 13: speech openai gpt-4o-mini-tts",
        "  24 bytes of pcm audio, streamed",
        "  usage: input 14, output 120",
        "interaction 14: model-list openai",
        "  2 models",
    ]


def test_a_recording_of_batch_calls_only_is_read(tmp_path: Path) -> None:
    path = tmp_path / "batch.har"
    path.write_text(mix.har(EXCHANGES[7:12]), encoding="utf-8")
    lines = inspect_recording(str(path))
    assert [line["exchange"] for line in lines] == [
        "batch-create", "batch-poll", "batch-poll", "batch-poll", "batch-results",
    ]  # fmt: skip


def test_hundreds_of_polls_are_one_summary_entry(tmp_path: Path) -> None:
    polls = [EXCHANGES[8], EXCHANGES[9]] * 150 + [EXCHANGES[10]]
    path = tmp_path / "polls.har"
    path.write_text(mix.har(polls), encoding="utf-8")
    assert summary(inspect_recording(str(path))) == [
        "interactions 0-300: 301 batch polls openai, 150 failed",
        "  final: ended (completed)",
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_a_bedrock_converse_recording_names_its_model(tmp_path: Path, stream: bool) -> None:
    # Bedrock's answer names no model, streamed or not; its request path does
    # (percent-encoded, as the SDKs send a model id with a colon).
    answer = {
        "output": {"message": {"role": "assistant", "content": [{"text": "Hi."}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5},
    }
    model = "anthropic.claude-3-haiku-20240307-v1:0"
    route = "converse-stream" if stream else "converse"
    url = f"https://bedrock-runtime.us-east-1.amazonaws.com/model/{quote(model)}/{route}"
    body = bedrock_eventstream() if stream else json.dumps(answer).encode()
    kind = "application/vnd.amazon.eventstream" if stream else "application/json"
    exchange = mix.Exchange("POST", url, b'{"messages":[]}', 200, body, response_type=kind)
    path = tmp_path / "bedrock.har"
    path.write_text(mix.har([exchange]), encoding="utf-8")
    head = inspect_recording(str(path))[0]
    assert (head["kind"], head["provider"], head["model"]) == ("response", "bedrock", model)
    assert summary(inspect_recording(str(path)))[0] == f"interaction 0: bedrock {model}"


def test_a_streamed_n2_answer_shows_its_second_choice(tmp_path: Path) -> None:
    from test_openai_chat_choices import N2

    body = "".join(f"data: {data}\n\n" for data in N2).encode()
    exchange = mix.Exchange("POST", f"{mix.OPENAI}/chat/completions",
                            json.dumps({**mix.CHAT_REQUEST, "stream": True}).encode(), 200,
                            body, response_type="text/event-stream")  # fmt: skip
    path = tmp_path / "n2.httprr"
    path.write_bytes(mix.httprr([exchange]))
    lines = inspect_recording(str(path))
    assert [line["kind"] for line in lines] == ["response", "block", "usage", "finish", "choice"]
    assert lines[1]["block"]["name"] == "weather"
    choice = lines[4]
    assert (choice["choice"], choice["finish"]) == (1, "tool-calls")
    assert [(b["type"], b["name"], b["arguments"]) for b in choice["blocks"]] == [
        ("tool-call", "clock", '{"tz":"CET"}')
    ]
    assert summary(lines)[-1] == "  choice 1: 1 tool-call, finish tool-calls"
