"""An OpenAI batch made for ``/v1/chat/completions`` is read as Chat
Completions: each result body by the shape of the endpoint it came from
(its ``object``), not by the Responses shape of ``openai:`` targets.

The output file is the Batch API's documented JSONL
(platform.openai.com/docs/guides/batch, "Retrieving the results": one
line per request, ``response.body`` a ``chat.completion`` object); the
stand-in serves it at ``GET /v1/files/{output_file_id}/content``
(platform.openai.com/docs/api-reference/files/retrieve-contents).
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from elelem import SyncClient
from elelem.batches import BatchRecord
from elelem.providers.pricing import batch_price, price
from elelem.testing.servers import LoopbackServer, status
from elelem.vocabulary import ProviderId, Usage
from test_batches import RESPONSE, run

COMPLETION = {
    "id": "chatcmpl-123",
    "object": "chat.completion",
    "created": 1711652795,
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hello."},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 22, "completion_tokens": 2, "total_tokens": 24},
    "system_fingerprint": "fp_123",
}


def _line(custom_id: str, body: dict[str, Any]) -> bytes:
    response = {"status_code": 200, "request_id": f"req_{custom_id}", "body": body}
    line = {"id": f"batch_req_{custom_id}", "custom_id": custom_id, "response": response,
            "error": None}  # fmt: skip
    return json.dumps(line).encode() + b"\n"


OUTPUT = _line("r1", COMPLETION) + _line("r2", RESPONSE)
RECORD = BatchRecord(ProviderId("openai"), "openai:gpt-4o-mini", "openai", "batch_abc123", "ended",
                     "completed", ("r1", "r2"), output="file-out")  # fmt: skip


def test_each_result_is_read_by_the_shape_of_its_body() -> None:
    with LoopbackServer([status(200, OUTPUT, content_type="application/binary")]) as server:
        env = {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "sk-o",
               "ELELEM_CONFIG": "/nonexistent/elelem.toml"}  # fmt: skip
        with SyncClient(env=env, max_retries=0) as client:
            chat, responses = client.batch_results(RECORD)
        (read,) = server.requests
    assert read.path == "/v1/files/file-out/content"
    assert chat.error is None and chat.response is not None
    assert (chat.response.text, chat.response.response_id) == ("Hello.", "chatcmpl-123")
    assert chat.response.finish is not None and chat.response.finish.reason == "stop"
    usage = chat.response.usage
    assert usage is not None and (usage.input, usage.output) == (22, 2)
    full = price("openai", "gpt-4o-mini", Usage(input=22, output=2))
    assert chat.cost == batch_price(full) and chat.cost.total == Decimal("0.00000225")
    assert chat.request_id == "req_r1"
    # A Responses body in the same file is still read as Responses.
    assert responses.response is not None and responses.response.text == "Paris."


def test_batch_results_prints_a_chat_completions_batch(tmp_path: Path) -> None:
    uploaded = {"id": "file-abc123", "object": "file", "purpose": "batch"}
    batch = {"id": "batch_abc123", "object": "batch", "endpoint": "/v1/chat/completions",
             "status": "completed", "output_file_id": "file-out", "error_file_id": None,
             "request_counts": {"total": 1, "completed": 1, "failed": 0}}  # fmt: skip
    replies = [
        status(200, json.dumps(uploaded).encode()),
        status(200, json.dumps(batch).encode()),  # created, and already completed
        status(200, _line("r1", COMPLETION), content_type="application/binary"),
    ]
    with LoopbackServer(replies) as server:
        env = {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": "k",
               "ELELEM_HOME": str(tmp_path), "ELELEM_CONFIG": str(Path(__file__).with_name("empty-config.toml"))}  # fmt: skip
        run(env, "batch", "submit", "-", "-m", "openai:gpt-4o-mini", stdin="Hi\n")
        results = run(env, "batch", "results", "batch_abc123", "--json")
    assert json.loads(results.stdout) == {
        "custom_id": "r1",
        "text": "Hello.",
        "finish": "stop",
        "error": None,
    }
