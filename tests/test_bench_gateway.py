"""The gateway benchmark's harness pieces: its loopback server (warm-up
routing, bulk and paced delivery on one kept-alive connection) and the
summary's ratio to the floor, paired rep by rep."""

from __future__ import annotations

import http.client
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the benchmarks package lives beside src/, not in it
    sys.path.insert(0, str(ROOT))

from benchmarks import streams  # noqa: E402
from benchmarks.gateway import quantile, summarize  # noqa: E402
from tests.test_bench import serving  # noqa: E402

DELTAS = ["Hello", ", wörld", "! ", "🙂"]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[int, streams.Stream, streams.Stream]]:
    stream = streams.build("openai_chat", DELTAS, 6)
    warm = streams.build("openai_chat", DELTAS, 2)
    raw = {"openai_chat:6": stream.events, "warm:openai_chat": warm.events}
    with serving("benchmarks.gateway_server", raw, tmp_path) as port:
        yield port, stream, warm


def _post(conn: http.client.HTTPConnection, path: str) -> tuple[int, bytes]:
    conn.request("POST", path, body=b'{"stream":true}', headers={"content-length": "15"})
    resp = conn.getresponse()
    return resp.status, resp.read()


def test_server_warms_up_then_serves_bulk_and_paced(
    server: tuple[int, streams.Stream, streams.Stream],
) -> None:
    port, stream, warm = server
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    path = "/g/{}/openai_chat:6/{}/v1/chat/completions"
    assert _post(conn, path.format("n1", "paced")) == (200, warm.body)  # warm until /measure
    assert _post(conn, path.format("n1", "paced")) == (200, warm.body)
    assert _post(conn, "/measure/n1") == (204, b"")
    assert _post(conn, path.format("n1", "paced")) == (200, stream.body)
    assert _post(conn, path.format("n2", "bulk")) == (200, warm.body)
    assert _post(conn, "/measure/n2") == (204, b"")
    assert _post(conn, path.format("n2", "bulk")) == (200, stream.body)
    assert _post(conn, "/elsewhere")[0] == 404
    conn.close()


def test_ratio_is_paired_rep_by_rep() -> None:
    def row(client: str, rep: int, cpu: float) -> dict[str, object]:
        return {
            "shape": "openai_chat",
            "mode": "bulk",
            "n": 10,
            "client": client,
            "rep": rep,
            "status": "ok",
            "failures": 0,
            "first_failure": None,
            "cpu_us_per_event": cpu,
            "events": 100,
            "events_per_s": 1000.0,
            "rss_kb_per_stream": 4.0,
            "ttft_s": [0.001, 0.002, 0.010],
            "wall_s": 0.1,
        }

    rows = [row("floor", 0, 2.0), row("elelem", 0, 3.0), row("floor", 1, 4.0)]
    rows.append(row("elelem", 1, 4.4))
    elelem = next(s for s in summarize(rows) if s["client"] == "elelem")
    # 1.5 and 1.1: their median, not the ratio of medians (3.7 / 3.0)
    assert elelem["ratios"] == [1.5, pytest.approx(1.1)]
    assert elelem["ratio"] == pytest.approx(1.3)
    assert (elelem["ttft_p50_ms"], elelem["ttft_p99_ms"], elelem["streams"]) == (2.0, 10.0, 20)
    assert quantile([], 0.5) is None
