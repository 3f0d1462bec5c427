"""Smoke tests of the benchmark harness pieces that need no peer SDK.

The stream builders, the loopback server, the child's measurement of the
floor client, the results document and the storage run are exercised on
small inputs; the peers (the ``bench`` extra) are never needed, and the one
test that uses orjson skips without it.
"""

from __future__ import annotations

import contextlib
import gc
import http.client
import json
import pickle
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the benchmarks package lives beside src/, not in it
    sys.path.insert(0, str(ROOT))

from benchmarks import report, streams  # noqa: E402
from benchmarks.corpus import recorded_payloads, streaming_files, text_deltas  # noqa: E402
from benchmarks.server import chunked  # noqa: E402

DELTAS = ["Hello", ", wörld", "! ", "🙂"]


def sse_payloads(stream: streams.Stream) -> list[tuple[str | None, str]]:
    """(event name, data) of every event, parsed back from its bytes."""
    out = []
    for raw in stream.events:
        text = raw.decode("utf-8")
        assert text.endswith(("\n\n", "\r\n\r\n")), text
        name, data = None, None
        for line in text.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
        assert data is not None
        out.append((name, data))
    return out


def test_anthropic_stream_framing_and_text() -> None:
    s = streams.build("anthropic_messages", DELTAS, 6)
    events = sse_payloads(s)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "ping",
        *["content_block_delta"] * 6,
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    for name, data in events:
        assert json.loads(data)["type"] == name
    texts = [json.loads(d)["delta"]["text"] for n, d in events if n == "content_block_delta"]
    assert texts == ["Hello", ", wörld", "! ", "🙂", "Hello", ", wörld"]
    assert s.text == "Hello, wörld! 🙂Hello, wörld"
    assert json.loads(events[-2][1])["usage"]["output_tokens"] == 6


def test_responses_stream_sequence_and_done_text() -> None:
    s = streams.build("openai_responses", DELTAS, 5)
    events = [json.loads(d) for _, d in sse_payloads(s)]
    assert [e["sequence_number"] for e in events] == list(range(13))
    assert events[0]["type"] == "response.created"
    assert events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["status"] == "completed"
    full = "Hello, wörld! 🙂Hello"
    assert events[-1]["response"]["output"][0]["content"][0]["text"] == full
    assert s.text == full
    assert sum(e["type"] == "response.output_text.delta" for e in events) == 5


def test_chat_stream_ends_with_usage_and_done() -> None:
    s = streams.build("openai_chat", DELTAS, 3)
    events = sse_payloads(s)
    assert all(name is None for name, _ in events)
    assert events[-1][1] == "[DONE]"
    chunks = [json.loads(d) for _, d in events[:-1]]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": "", "refusal": None}
    assert [c["choices"][0]["delta"]["content"] for c in chunks[1:4]] == DELTAS[:3]
    assert chunks[4]["choices"][0]["finish_reason"] == "stop"
    assert chunks[5]["choices"] == []
    assert chunks[5]["usage"]["completion_tokens"] == 3


def test_gemini_stream_crlf_and_finish_on_last() -> None:
    s = streams.build("gemini", DELTAS, 4)
    assert all(e.endswith(b"\r\n\r\n") for e in s.events)
    chunks = [json.loads(d) for _, d in sse_payloads(s)]
    assert [c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks] == DELTAS
    assert [c["candidates"][0].get("finishReason") for c in chunks] == [None, None, None, "STOP"]


def test_build_rejects_empty_input() -> None:
    with pytest.raises(ValueError, match="at least one delta"):
        streams.build("gemini", DELTAS, 0)
    with pytest.raises(ValueError, match="no text deltas"):
        streams.build("gemini", [], 3)


def test_corpus_deltas_are_the_recorded_ones(corpus: Path) -> None:
    files = streaming_files(corpus, "anthropic_messages")
    text_file = next(f for f in files if f.name.endswith("anthropic-text.chunks.txt"))
    payloads = list(recorded_payloads(text_file))
    assert len(payloads) == 12
    deltas = [p["delta"]["text"] for p in payloads if p["type"] == "content_block_delta"]
    assert "".join(deltas) == (
        "Hello! I'm doing well, thank you for asking. How are you doing today?"
        " Is there anything I can help you with?"
    )
    for shape in streams.SHAPES:
        assert len(text_deltas(shape, corpus)) > 20, shape


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[int, dict[str, streams.Stream]]]:
    built = {
        "a.3": streams.build("anthropic_messages", DELTAS, 3),
        "a.9": streams.build("anthropic_messages", DELTAS, 9),
    }
    with serving("benchmarks.server", {k: s.events for k, s in built.items()}, tmp_path) as port:
        yield port, built


@contextlib.contextmanager
def serving(module: str, raw: dict[str, tuple[bytes, ...]], tmp_path: Path) -> Iterator[int]:
    """A benchmark server process (``module``) over ``raw``; its port."""
    path = tmp_path / "streams.pickle"
    path.write_bytes(pickle.dumps(raw))
    proc = subprocess.Popen(
        [sys.executable, "-m", module, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stdin is not None
    try:
        yield int(proc.stdout.readline())
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0


def _post(conn: http.client.HTTPConnection, path: str) -> tuple[int, bytes]:
    conn.request(
        "POST", path, body=b'{"stream":true}', headers={"content-type": "application/json"}
    )
    resp = conn.getresponse()
    return resp.status, resp.read()


def test_server_serves_keys_in_turn_in_both_modes(
    server: tuple[int, dict[str, streams.Stream]],
) -> None:
    port, built = server
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    for mode in ("bulk", "per_event"):
        prefix = f"/s/t-{mode}/a.3,a.9/{mode}"
        # keep-alive: three requests on one connection, the last key repeats
        assert _post(conn, prefix + "/v1/messages") == (200, built["a.3"].body)
        assert _post(conn, prefix + "/v1/messages") == (200, built["a.9"].body)
        assert _post(conn, prefix + "/v1/messages") == (200, built["a.9"].body)
    status, body = _post(conn, "/s/t/nope/bulk/v1/messages")
    assert status == 404
    assert json.loads(body)["error"]["type"] == "not_found_error"
    conn.close()


def test_chunked_framing() -> None:
    assert chunked(b"hello world, 16b") == b"10\r\nhello world, 16b\r\n"


def test_child_measures_the_floor_and_catches_wrong_results(
    server: tuple[int, dict[str, streams.Stream]],
) -> None:
    pytest.importorskip("orjson", reason="the floor parses with orjson (bench extra)")
    import asyncio

    from benchmarks.child import run_task

    port, built = server
    task = {
        "client": "floor",
        "shape": "anthropic_messages",
        "mode": "per_event",
        "key": "a.9",
        "nonce": "child",
        "warm": "a.3",
        "warm_digest": built["a.3"].digest,
        "digest": built["a.9"].digest,
        "chars": len(built["a.9"].text),
    }
    loop = asyncio.new_event_loop()
    try:
        ok = run_task(f"http://127.0.0.1:{port}", task, loop)
        assert ok["status"] == "ok"
        assert ok["cpu_s"] > 0 and ok["wall_s"] >= ok["cpu_s"] * 0.5
        wrong = run_task(
            f"http://127.0.0.1:{port}", {**task, "nonce": "w", "digest": "0" * 64}, loop
        )
        assert wrong["status"] == "wrong result (35 chars, expected 35)"
        unsupported = {**task, "client": "litellm", "shape": "openai_responses"}
        assert run_task(f"http://127.0.0.1:{port}", unsupported, loop)["status"] == (
            "not available: LiteLLM completion() does not speak openai_responses"
        )
    finally:
        loop.close()


def test_results_document_has_the_issue_shape() -> None:
    import dataclasses

    from benchmarks.plan import QUICK

    class FakeDriver:
        def __init__(self) -> None:
            self.plan = dataclasses.replace(QUICK, events=1000)
            self.shapes = ["anthropic_messages"]
            self.modes = ["bulk"]
            self.clients = ["floor", "elelem", "anthropic_sdk_final", "litellm"]
            self.streams = {
                "anthropic_messages.1000": streams.build("anthropic_messages", DELTAS, 1000)
            }

        def key(self, shape: str, n: int) -> str:
            return f"{shape}.{n}"

    driver = FakeDriver()
    from benchmarks.plan import Measurements

    events = len(driver.streams["anthropic_messages.1000"].events)
    assert events == 1006
    m = Measurements()
    for client, cpu in (("floor", 0.002012), ("elelem", 0.004024), ("anthropic_sdk_final", 0.1006)):
        m.streaming[("anthropic_messages", "bulk", client)] = [
            {"status": "ok", "cpu_s": cpu, "rss_kb": 512}
        ]
    m.streaming[("anthropic_messages", "bulk", "litellm")] = [{"status": "failed: boom"}]
    storage = report.storage_summary(
        [
            {
                "status": "ok",
                "events": 1000,
                **{f"{k}_cpu_s": 0.01 for k in ("append", "load")},
                **{f"floor_{k}_cpu_s": 0.005 for k in ("append", "load")},
                **{f"{k}_wall_s": 0.02 for k in ("append", "load", "floor_append", "floor_load")},
                **{f"{k}_tenth_us": 10.0 for k in ("append_first", "append_last")},
                **{f"floor_{k}_tenth_us": 5.0 for k in ("append_first", "append_last")},
                "ref_msgspec_plain_cpu_s": 0.0125,
                "ref_json_dicts_cpu_s": 0.05,
                "ref_msgpack_arrays_cpu_s": 0.006,
                "ref_msgpack_arrays_floor_cpu_s": 0.002,
            }
        ]
    )
    doc = report.results_document(driver, m, storage, 1.0)  # type: ignore[arg-type]
    cells = doc["streaming"]["anthropic_messages"]["bulk"]
    assert set(cells) == {"floor", "elelem", "anthropic_sdk_final", "litellm"}
    assert cells["floor"]["us_per_event"] == 2.0
    assert cells["floor"]["ratio_to_floor"] == 1.0
    assert cells["elelem"]["ratio_to_floor"] == 2.0
    assert cells["anthropic_sdk_final"]["ratio_to_floor"] == 50.0
    assert cells["anthropic_sdk_final"]["ratio_to_elelem"] == 25.0
    assert cells["elelem"]["rss_growth_mb"] == 0.5
    assert cells["litellm"] == {
        "events": 1006,
        "us_per_event": None,
        "rss_growth_mb": None,
        "runs_ok": 0,
        "status": "failed: boom",
        "ratio_to_floor": None,
        "ratio_to_elelem": None,
    }
    assert doc["storage"]["append"]["ratio_to_floor"] == 2.0
    assert doc["storage"]["load"]["ratio_to_floor"] == 2.0
    assert doc["storage"]["append"]["us_per_event"] == 10.0
    assert doc["storage"]["load"]["references"] == {
        "json_dicts": {"us_per_event": 50.0, "ratio_to_floor": 10.0},
        "msgspec_plain": {"us_per_event": 12.5, "ratio_to_floor": 2.5},
        # against its own raw SELECT, not the canonical rows'
        "msgpack_arrays": {"us_per_event": 6.0, "ratio_to_floor": 3.0},
    }
    assert doc["targets"] == [
        {
            "target": "elelem/floor, anthropic_messages, bulk",
            "value": 2.0,
            "limit": 2.5,
            "verdict": "met",
        },
        {"target": "storage append/raw sqlite3", "value": 2.0, "limit": 2.0, "verdict": "met"},
        {"target": "storage load/raw sqlite3", "value": 2.0, "limit": 2.0, "verdict": "met"},
        {
            "target": "storage append growth, first tenth->last tenth",
            "value": 1.0,
            "limit": 1.3,
            "verdict": "met",
        },
    ]
    json.dumps(doc)  # the file is plain JSON
    text = report.render(doc)
    assert "| floor: httpx2 + SSE line split + orjson | 2.00 µs (1.0x) |" in text
    assert "| LiteLLM + stream_chunk_builder | n/a [1] |" in text
    assert "[1] failed: boom" in text
    assert "| msgspec -> plain structs (the typed bound) | 12.50 | 2.50x |" in text
    assert "| json.loads -> dicts | 50.00 | 10.00x |" in text


def test_storage_run_small(tmp_path: Path, corpus: Path) -> None:
    from benchmarks.storage import run

    out = run(200, tmp_path)
    assert out["events"] == 200
    assert out["append_cpu_s"] > 0 and out["floor_load_cpu_s"] > 0
    assert out["bytes"] > 200 * 100
    # Every reference loader read all 200 events (it raises otherwise).
    assert {k for k in out if k.startswith("ref_")} == {
        "ref_msgspec_plain_cpu_s",
        "ref_msgspec_dicts_cpu_s",
        "ref_json_dicts_cpu_s",
        "ref_msgpack_arrays_cpu_s",
        "ref_msgpack_arrays_floor_cpu_s",
        "ref_load_then_every_body_cpu_s",
        "ref_eager_decode_cpu_s",
    }


def test_render_benchmark_feeds_one_block_as_the_driver_commits_it(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchmarks import render

    chunks = render.chunks_for(DELTAS, 6)
    _, pairs = render.assemble_cpu(chunks)
    committed = [c for _, c in pairs if c]
    assert [p.text for (p,) in committed] == ["Hello, wörld! 🙂Hello, wörld"]
    assert render.main(["--sizes", "50,100", "--runs", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["deltas", "render", "µs", "ratio", "assembler", "µs"]
    assert [line.split()[0] for line in lines[2:]] == ["50", "100"]
    assert lines[2].split()[2] == "1.00x"


def test_sync_iteration_reads_the_same_text_both_ways(capsys: pytest.CaptureFixture[str]) -> None:
    """The blocking chunk-by-chunk benchmark: both sides read exactly the
    stream's text (each asserts it) and the line carries the ratio."""
    pytest.importorskip("orjson", reason="the floor decodes with orjson: the bench extra")
    from benchmarks import sync_iteration

    floor_us, mine_us = sync_iteration.measure(200, 1)
    assert floor_us > 0 and mine_us > 0
    assert sync_iteration.main(["--deltas", "100", "--runs", "1"]) == 0
    line = capsys.readouterr().out
    assert line.startswith("100 deltas, best of 1: floor ") and line.rstrip().endswith("x)")


@pytest.mark.parametrize(
    "args",
    [["anthropic", "sync", "1"], ["google", "async", "1", "--probe"], ["groq", "floor", "1"]],
)
def test_one_event_reads_assemble_the_rows_text(args: list[str]) -> None:
    """The instruction-count harness: each side reads the row's text from
    one event per read (each checks it), and the shell is left as it was."""
    pytest.importorskip("orjson", reason="the floor decodes with orjson: the bench extra")
    from benchmarks import one_event_reads

    from elelem.transport.stream_core import StreamCore

    opened = StreamCore._opened
    frozen = gc.get_freeze_count()
    assert one_event_reads.main(args) == 0
    assert StreamCore._opened is opened
    assert gc.get_freeze_count() == frozen  # the heap frozen for the reads is thawed


def test_the_measured_region_runs_on_a_frozen_heap_and_thaws_after() -> None:
    """benchmarks.heap: what lived before the region is in no generation a
    collection walks (the permanent one), and back in the oldest afterwards."""
    from benchmarks.heap import frozen_heap

    held: list[object] = []
    frozen = gc.get_freeze_count()
    with frozen_heap():
        assert not any(o is held for o in gc.get_objects())
        assert gc.get_freeze_count() > frozen
    assert any(o is held for o in gc.get_objects(generation=2))
    assert gc.get_freeze_count() == frozen


def test_provider_streams_are_each_providers_own_chunks(corpus: Path) -> None:
    """The per-provider table's streams: one per provider the corpus records,
    the recording's own chunk bytes repeated, and a twin with one unknown
    field on every chunk; elelem's parser assembles exactly the stream's text
    from both, the typed fast path taking nearly every repeated chunk."""
    from benchmarks import providers

    from elelem.providers import load_shape
    from elelem.recordings.cassettes import sse_frames
    from elelem.stream import Assembler
    from elelem.vocabulary import ProviderId, TextBlock

    recordings = providers.recordings(corpus)
    rows = {(r.provider, r.shape) for r in recordings}
    assert {
        ("anthropic", "anthropic_messages"),
        ("openrouter", "openai_chat"),
        ("perplexity", "openai_chat"),
        ("deepseek", "openai_chat"),
        ("groq", "openai_chat"),
        ("mistral", "openai_chat"),
        ("openai", "openai_responses"),
        ("google", "gemini"),
    } <= rows
    assert len(rows) == len(recordings)  # one per provider and shape
    for rec in recordings:
        plain = providers.build(rec, 200)
        probed = providers.build(rec, 200, probe=True)
        recorded = {data for _, data in rec.frames}
        frames = [(f.event, f.data) for f in sse_frames(plain.body_bytes())]
        # Byte for byte, but for the Responses events that repeat the whole
        # text once more (done events, the completed response), which hold
        # the built stream's text.
        rewritten = [d for _, d in frames if d not in recorded]
        assert all(
            json.loads(d)["type"].endswith(".done") or json.loads(d)["type"] == "response.completed"
            for d in rewritten
        ), rec.provider
        assert len(rewritten) <= (4 if rec.shape == "openai_responses" else 0)
        assert all(
            d.rstrip().endswith(',"x_bench_probe":1}') or d.strip() == "[DONE]"
            for _, d in ((f.event, f.data) for f in sse_frames(probed.body_bytes()))
        )
        for stream in (plain, probed):
            parser = load_shape(stream.shape).new_parser(ProviderId("bench"))
            typed = parser.fast  # type: ignore[attr-defined]
            hits = []

            def counting(event: str, data: str, typed: Any = typed, hits: list[int] = hits) -> Any:
                chunks = typed(event, data)
                hits.append(chunks is not None)
                return chunks

            parser.fast = counting  # type: ignore[attr-defined]
            assembler = Assembler(ProviderId("bench"))
            for frame in sse_frames(stream.body_bytes()):
                assembler.feed_all(list(parser.message(frame.event, frame.data)))
            assembler.feed_all(list(parser.eof()))
            result = assembler.result()
            text = "".join(b.text for b in result.blocks if isinstance(b, TextBlock))
            assert text == stream.text, (rec.provider, stream.variant)
            assert sum(hits) >= 190, (rec.provider, stream.variant, sum(hits))


def test_provider_ratio_is_paired_run_by_run() -> None:
    """A row's ratio is the median of the two sides' ratio in each run (a slow
    spell slows both); the least times and their ratio are kept beside it,
    and a failed run pairs with nothing."""
    from benchmarks import providers

    floor = [2e-6, 4e-6, None, 2.5e-6]  # run 2 failed; run 1 was a slow spell
    mine = [3e-6, 6e-6, 1e-6, 2.5e-6]
    cell = providers._cell("bulk_elelem", floor, mine)
    assert cell == {
        "bulk_elelem_floor_us": 2.0,
        "bulk_elelem_us": 1.0,
        "bulk_elelem_ratio": 1.5,  # the median of 1.5, 1.5 and 1.0
        "bulk_elelem_best_ratio": 0.5,
        "bulk_elelem_runs": 3,
    }
    assert providers._cell("x", [None], [1e-6])["x_ratio"] is None


def test_provider_table_renders_a_mode_not_measured_as_na() -> None:
    from benchmarks import providers

    row: dict[str, Any] = {
        "provider": "groq",
        "shape": "openai_chat",
        "variant": "as recorded",
        "recording": "groq.chunks.txt",
    }
    row |= providers._cell("bulk_elelem", [2e-6], [3e-6])
    row |= providers._cell("per_event_elelem", [], [])
    line = providers.render([row]).splitlines()[2]
    assert line == (
        "| groq | openai_chat | groq.chunks.txt | 2.00 | 3.00 | 1.50x | 1.50x | n/a | n/a | n/a | n/a |"
    )


def test_embedding_benchmark_checks_every_client_against_the_floor(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from benchmarks import embeddings

    assert embeddings.main(["--inputs", "2050", "--dimensions", "8", "--runs", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "2050 inputs x 8 dimensions, median of 1 runs"
    names = [line.split()[0] for line in lines[2:]]
    assert names[:3] == ["floor", "elelem_sync", "elelem_async"]
    assert lines[2].split()[3] == "1.00"


def test_encode_blocks_encodes_every_corpus_answer_through_every_shape() -> None:
    from benchmarks.encode_blocks import TARGETS, conversations, requests, round_of

    messages, faults = conversations()
    assert (len(messages), faults) == (168, 4)
    assert all(m.role == "assistant" and m.provider for m in messages)
    work = requests(messages)
    assert len(work) == 168 * len(TARGETS) == 1176
    # Each round encodes every request; its drop records are counted, so the
    # same work gives the same count.
    assert round_of(work) == round_of(work) > 0
