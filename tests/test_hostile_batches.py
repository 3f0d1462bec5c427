"""Batch results against hostile answers (issue #41): results naming
requests the batch never had are reported, never dropped without a word;
Gemini's inline batch results with bad values are typed errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elelem.errors import MalformedStreamError
from elelem.testing.servers import LoopbackServer, status
from test_batches import (
    ANTHROPIC_BATCH,
    CONFIG,
    GEMINI_RESPONSE,
    MESSAGE,
    answer,
    anthropic_api,
    client,
    gemini_operation,
    run,
)


def test_results_for_requests_the_batch_never_had_are_reported(tmp_path: Path) -> None:
    stray = dict(MESSAGE, id="msg_x", content=[{"type": "text", "text": "Berlin."}])
    reply = anthropic_api(
        {"custom_id": "r1", "result": {"type": "succeeded", "message": MESSAGE}},
        {"custom_id": "r9\x1b[2J", "result": {"type": "succeeded", "message": stray}},
        {"custom_id": "zz", "result": {"type": "succeeded", "message": stray}},
    )
    with LoopbackServer(reply) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant",
               "ELELEM_HOME": str(tmp_path), "ELELEM_CONFIG": CONFIG}  # fmt: skip
        run(env, "batch", "submit", "-", "-m", "anthropic:claude-sonnet-4-5", stdin="France?\n")
        results: Any = run(env, "batch", "results", ANTHROPIC_BATCH["id"])
    assert results.exit_code == 0, results.stderr
    assert results.stdout == "r1: Paris.\n"
    assert results.stderr == (
        "elelem: warning: 2 results name a request the batch never had "
        "(custom_id r9, zz): not stored\n"
        "1 results, $0.0000465 at the batch price\n"
    )


DEEP = "[" * 100_000 + "]" * 100_000


def gemini_finished(inlined: Any) -> bytes:
    """Gemini's finished batch operation whose inline responses are ``inlined``
    (a ``"DEEP"`` string stands for JSON nested 100,000 deep)."""
    operation = gemini_operation("BATCH_STATE_SUCCEEDED", done=True)
    operation["response"]["inlinedResponses"]["inlinedResponses"] = inlined
    return json.dumps(operation).replace('"DEEP"', DEEP).encode()


GEMINI_CASES: dict[str, tuple[Any, str | list[tuple[str, str | None, str | None]]]] = {
    "key-a-number": ([{"response": GEMINI_RESPONSE, "metadata": {"key": 5}}], "key of response 0 is a int, not text"),
    "key-an-object": ([{"response": GEMINI_RESPONSE, "metadata": {"key": {}}}], "key of response 0 is a dict, not text"),
    "entry-a-string": (["x"], "inlined response 0 is a str, not an object"),
    "metadata-a-list": ([{"response": GEMINI_RESPONSE, "metadata": []}], "the metadata of response 0 is a list, not an object"),
    "response-deep": ([{"response": "DEEP"}], "JSON nested too deeply to decode"),
    "error-deep": ([{"error": "DEEP"}], "JSON nested too deeply to decode"),
    "key-a-lone-surrogate": ([{"response": GEMINI_RESPONSE, "metadata": {"key": "\ud800"}}], "JSON is malformed"),
    "more-than-asked": (
        [{"response": GEMINI_RESPONSE}] * 3,
        [("r1", None, "Paris."), ("r2", None, "Paris."), ("#3", None, "Paris.")],
    ),
    "neither-response-nor-error": (
        [{}],
        [("r1", "neither a response nor an error: {}", None), ("r2", "no result for this request", None)],
    ),
    "response-a-string": (
        [{"response": "hi"}],
        [("r1", "malformed-stream: gemini response is not a JSON object", None),
         ("r2", "no result for this request", None)],
    ),
    "candidates-a-string": (
        [{"response": {"candidates": "x"}}],
        [("r1", "malformed-stream: gemini candidates is not a list", None),
         ("r2", "no result for this request", None)],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(GEMINI_CASES))
def test_gemini_batch_results_with_hostile_values(case: str) -> None:
    inlined, expected = GEMINI_CASES[case]
    replies = [
        answer(gemini_operation("BATCH_STATE_PENDING")),
        status(200, gemini_finished(inlined)),
    ]
    with LoopbackServer(replies) as server:
        env = {"GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": "g"}
        with client(env) as batches:
            record = batches.batch("google:gemini-2.5-flash", ["a", "b"])
            if isinstance(expected, str):
                with pytest.raises(MalformedStreamError) as caught:
                    batches.batch_results(record)
                assert expected in str(caught.value)
                return
            results = batches.batch_results(record)
    shown = [(r.custom_id, r.error, r.response.text if r.response else None) for r in results]
    assert shown == expected
