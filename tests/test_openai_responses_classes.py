"""Responses traffic as recordings from elsewhere show it: items that share
an id, parallel tool runs that finish out of order, server-side tools on any
provider name (xAI), a conversation stored server-side, and a final snapshot
that restates an item (gpt-5.x).

The fixtures are written by hand from the public formats:

- the Responses streaming events (``response.output_item.added`` /
  ``.done`` with ``output_index``, ``response.completed`` with the final
  ``output``; platform.openai.com/docs/api-reference/responses-streaming),
  which xAI serves at ``https://api.x.ai/v1/responses``
  (docs.x.ai/docs/guides/responses-api);
- xAI's agentic server-side tools (docs.x.ai/docs/guides/tools/overview):
  the request's ``tools`` name ``x_search`` / ``web_search``; each function
  the server runs arrives as a ``custom_tool_call`` item named for it
  (``x_keyword_search``, ``view_x_video``…), parallel runs as several items
  in flight at once, and the ids of one response's items derive from one
  response id, so two items can carry the same id.
"""

from __future__ import annotations

import json
from typing import Any

from elelem.shapes.openai_responses import SHAPE
from elelem.shapes.openai_responses.encoder import encode_request, native_items
from elelem.stream import AssembledResponse, assemble
from elelem.vocabulary import HostedActivity, ProviderId, ReasoningBlock
from elelem.wire import ModelRequest

GATEWAY = ProviderId("grok-gateway")  # a provider name that says nothing of xAI
RID = "b7b464ea-cc85-d44a-0f2f-1f7320e703c3"


def response(status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": RID,
        "object": "response",
        "model": "grok-4-fast",
        "status": status,
        "store": False,
        "tools": [{"type": "x_search"}, {"type": "web_search"}],
        "output": output,
        "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
    }


def run(events: list[dict[str, Any]], provider: ProviderId = GATEWAY) -> AssembledResponse:
    parser = SHAPE.new_parser(provider)
    chunks = []
    for event in events:
        chunks += parser.message(event["type"], json.dumps(event))
    chunks += parser.eof()
    return assemble(chunks, provider)


def added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def reasoning(enc: str, text: str) -> dict[str, Any]:
    summary = [{"type": "summary_text", "text": text}]
    return {"type": "reasoning", "id": f"rs_{RID}", "summary": summary, "encrypted_content": enc}


def search(n: int, status: str = "completed") -> dict[str, Any]:
    action = {"type": "search", "query": f"q{n}"}
    return {
        "type": "web_search_call",
        "id": f"ws_{RID}_call_{n}",
        "status": status,
        "action": action,
    }


def message(text: str) -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": []}
    return {
        "type": "message",
        "id": f"msg_{RID}",
        "role": "assistant",
        "status": "completed",
        "content": [part],
    }


def test_reasoning_items_that_share_an_id_stay_distinct() -> None:
    # Four reasoning items, all under the response's one reasoning id; the
    # third streamed only as events naming its id, the fourth only in the
    # final output.
    first, second, third, fourth = (
        reasoning(e, t) for e, t in (("E1", "a"), ("E2", "b"), ("E3", "c"), ("E4", "d"))
    )
    events = [
        {"type": "response.created", "response": response("in_progress", [])},
        added(0, {**first, "encrypted_content": None, "summary": []}),
        done(0, first),
        added(1, search(1, "in_progress")),
        done(1, search(1)),
        added(2, {**second, "encrypted_content": None, "summary": []}),
        done(2, second),
        {
            "type": "response.output_item.added",
            "item": {**third, "encrypted_content": None, "summary": []},
        },
        {"type": "response.output_item.done", "item": third},
        {
            "type": "response.completed",
            "response": response("completed", [first, search(1), second, third, fourth]),
        },
    ]
    got = run(events)
    blocks = [b for b in got.content if isinstance(b, ReasoningBlock)]
    assert [b.text for b in blocks] == ["a", "b", "c", "d"]
    assert [b.payloads[0].value["encrypted_content"] for b in blocks] == ["E1", "E2", "E3", "E4"]
    replayed = [
        i["encrypted_content"]
        for i in native_items(got.to_message(), GATEWAY)
        if i["type"] == "reasoning"
    ]
    assert replayed == ["E1", "E2", "E3", "E4"]


def test_a_whole_body_keeps_every_item_of_a_shared_id() -> None:
    body = response(
        "completed", [reasoning("E1", "a"), search(1), reasoning("E2", "b"), message("done")]
    )
    got = assemble(SHAPE.parse_body(json.dumps(body).encode(), GATEWAY, None), GATEWAY)
    assert [
        b.payloads[0].value["encrypted_content"]
        for b in got.content
        if isinstance(b, ReasoningBlock)
    ] == [
        "E1",
        "E2",
    ]


def test_parallel_items_commit_and_replay_in_output_order() -> None:
    events = [
        {"type": "response.created", "response": response("in_progress", [])},
        *(added(n, search(n, "in_progress")) for n in range(4)),
        done(2, search(2)),
        done(3, search(3)),
        done(0, search(0)),
        done(1, search(1)),
        added(4, message("four searches")),
        done(4, message("four searches")),
        {
            "type": "response.completed",
            "response": response(
                "completed", [*(search(n) for n in range(4)), message("four searches")]
            ),
        },
    ]
    got = run(events)
    ended = [a.id for a in got.content if isinstance(a, HostedActivity) and a.terminal]
    assert ended == [f"ws_{RID}_call_{n}" for n in range(4)]
    items = native_items(got.to_message(), GATEWAY)
    assert [i["id"] for i in items] == [*(f"ws_{RID}_call_{n}" for n in range(4)), f"msg_{RID}"]


def test_a_stream_cut_after_out_of_order_items_keeps_the_finished_ones() -> None:
    parser = SHAPE.new_parser(GATEWAY)
    for event in [
        {"type": "response.created", "response": response("in_progress", [])},
        added(0, search(0, "in_progress")),
        added(1, search(1, "in_progress")),
        done(1, search(1)),
    ]:
        held = parser.message(event["type"], json.dumps(event))
    assert held == []  # item 0 is still running
    (released,) = parser.eof()
    assert released.transition.id == f"ws_{RID}_call_1"


def test_xai_server_tools_are_hosted_under_any_provider_name() -> None:
    call = {
        "type": "custom_tool_call",
        "id": f"ctc_{RID}_xs_call_1",
        "call_id": "xs_call_1",
        "name": "x_keyword_search",
        "input": '{"query":"from:xai","limit":5}',
        "status": "completed",
    }
    events = [
        {"type": "response.created", "response": response("in_progress", [])},
        added(0, {**call, "status": "in_progress"}),
        done(0, call),
        added(1, message("found")),
        done(1, message("found")),
        {"type": "response.completed", "response": response("completed", [call, message("found")])},
    ]
    got = run(events)
    assert [(a.name, a.state) for a in got.activities] == [
        ("x_search", "started"),
        ("x_search", "completed"),
    ]
    assert got.finish is not None and got.finish.reason == "stop"


def test_a_stored_conversation_replays_reasoning_without_encrypted_content_by_id() -> None:
    # platform.openai.com/docs/guides/reasoning ("Keeping reasoning items in
    # context"): with store: true the reasoning item is kept server-side and
    # passed back by id beside its function call; no encrypted_content comes.

    openai = ProviderId("openai")
    thought = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Look it up."}],
    }
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "lookup",
            "arguments": '{"q":"x"}', "status": "completed"}  # fmt: skip
    stored = {**response("in_progress", []), "id": "resp_1", "store": True, "tools": []}
    events = [
        {"type": "response.created", "response": stored},
        added(0, {**thought, "summary": []}),
        done(0, thought),
        added(1, {**call, "arguments": ""}),
        done(1, call),
        {
            "type": "response.completed",
            "response": {**stored, "status": "completed", "output": [thought, call]},
        },
    ]
    got = run(events, openai)
    assert got.finish is not None and got.finish.reason == "tool-calls"
    encoded = encode_request(
        ModelRequest(model="o4-mini", messages=(got.to_message(),)), provider=openai
    )
    assert encoded.body["input"] == [thought, call]
    assert encoded.body["store"] is True
    assert encoded.dropped == ()


def test_a_final_snapshot_that_restates_an_item_replays_and_the_other_is_kept() -> None:
    # The Responses stream ends with response.completed carrying the whole
    # output (api-reference/responses-streaming); when its item differs from
    # the output_item.done before it (another encrypted_content), the final
    # snapshot is what the response is, and what replay sends.

    openai = ProviderId("openai")
    streamed, final = reasoning("E-done", "plan"), reasoning("E-final", "plan")
    events = [
        {"type": "response.created", "response": response("in_progress", [])},
        added(0, {**streamed, "encrypted_content": None, "summary": []}),
        done(0, streamed),
        added(1, message("ok")),
        done(1, message("ok")),
        {"type": "response.completed", "response": response("completed", [final, message("ok")])},
    ]
    got = run(events, openai)
    (block,) = [b for b in got.content if isinstance(b, ReasoningBlock)]
    assert block.payloads[0].value == streamed  # the streamed snapshot, kept
    assert got.finish is not None
    (revised,) = [p for p in got.finish.payloads if p.format == "revised-items"]
    assert revised.value == [{"output_index": 0, "item": final, "streamed": streamed}]
    request = ModelRequest(
        model="gpt-5.1", messages=(got.to_message(),), response_payloads=got.finish.payloads
    )
    items = encode_request(request, provider=openai).body["input"]
    assert [i.get("encrypted_content") for i in items if i["type"] == "reasoning"] == ["E-final"]
