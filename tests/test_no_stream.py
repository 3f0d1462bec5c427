"""``--no-stream`` (issue #26): ``ask`` and ``chat`` send the request
non-streamed, show the answer once it has arrived, and store it exactly as a
streamed answer is stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from cli_helpers import KEY, MODEL, base_env, text_reply
from elelem.cli import main
from elelem.codec import to_builtins
from elelem.conversation import Conversation, open_store
from elelem.recordings.loopback import RecordedRequest
from elelem.testing.servers import LoopbackServer, replay, sse_body

ANSWER = "The Eiffel Tower is 330 m tall; it was finished in 1889."


def whole_body(text: str, msg_id: str = "msg_02FollowUp") -> bytes:
    """The non-streamed Anthropic body holding what :func:`text_reply` streams."""
    return json.dumps(
        {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 120, "output_tokens": 9},
        }
    ).encode()


def stored(env: dict[str, str]) -> list[list[Any]]:
    """Every event of the one stored conversation; an event id (unique to
    each store) is written as the event's position."""
    store = open_store(Path(env["ELELEM_HOME"]) / "elelem.db")
    try:
        (info,) = store.list_conversations()
        events = Conversation.open(store, info.id).events
    finally:
        store.close()
    position: dict[str, str] = {str(e.id): f"#{i}" for i, e in enumerate(events)}

    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [plain(v) for v in value]
        return position.get(value, value) if isinstance(value, str) else value

    return [[e.kind, e.turn, e.response, plain(to_builtins(e.body))] for e in events]


def run(
    tmp: Path, argv: list[str], reply: bytes, content_type: str, stdin: str | None = None
) -> tuple[Result, RecordedRequest, list[list[Any]]]:
    """``elelem ARGV`` against a loopback provider serving ``reply``: its
    result, the one request it sent, and the stored conversation."""
    with LoopbackServer([replay(reply, content_type=content_type)]) as server:
        env = base_env(
            tmp,
            ANTHROPIC_API_KEY=KEY,
            ANTHROPIC_BASE_URL=server.url,
            GEMINI_API_KEY="g-test-key",
            GOOGLE_GEMINI_BASE_URL=server.url,
        )
        result = CliRunner().invoke(main, argv, env=env, input=stdin)
    assert result.exit_code == 0, result.stderr
    (request,) = server.requests
    return result, request, stored(env)


def test_ask_no_stream_sends_stream_false_and_stores_as_streamed(tmp_path: Path) -> None:
    argv = ["ask", "-m", MODEL, "How tall is the Eiffel Tower?"]
    streamed, streamed_request, streamed_log = run(
        tmp_path / "a", argv, text_reply(ANSWER), "text/event-stream"
    )
    whole, whole_request, whole_log = run(
        tmp_path / "b", [*argv, "--no-stream"], whole_body(ANSWER), "application/json"
    )
    streamed_body, whole_body_sent = (json.loads(r.body) for r in (streamed_request, whole_request))
    assert streamed_body["stream"] is True
    assert "stream" not in whole_body_sent  # Anthropic's non-streamed request leaves it out
    assert {k: v for k, v in whole_body_sent.items() if k != "stream"} == {
        k: v for k, v in streamed_body.items() if k != "stream"
    }
    assert whole.stdout == streamed.stdout
    assert ANSWER in whole.stdout
    assert whole_log == streamed_log
    assert [e[0] for e in whole_log] == ["turn-start", "message", "message", "response"]


def gemini_answer(text: str) -> dict[str, Any]:
    """One Gemini response holding ``text``: the whole body, or the one
    frame of a stream."""
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 14},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "resp-no-stream-1",
    }


def test_chat_no_stream_uses_gemini_generate_content(tmp_path: Path) -> None:
    argv = ["chat", "-m", "google:gemini-2.5-flash"]
    frame = json.dumps(gemini_answer(ANSWER))
    streamed, streamed_request, streamed_log = run(
        tmp_path / "a", argv, sse_body([(None, frame)]), "text/event-stream", "How tall?\n"
    )
    whole, whole_request, whole_log = run(
        tmp_path / "b", [*argv, "--no-stream"], frame.encode(), "application/json", "How tall?\n"
    )
    assert streamed_request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert whole_request.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert whole_request.body == streamed_request.body
    assert whole.stdout == streamed.stdout
    assert ANSWER in whole.stdout
    assert whole_log == streamed_log
    assert [e[0] for e in whole_log] == ["turn-start", "message", "message", "response"]


def test_client_stream_streamed_false_is_one_whole_exchange(tmp_path: Path) -> None:
    from elelem import SyncClient

    with LoopbackServer([replay(whole_body(ANSWER), content_type="application/json")]) as server:
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url}
        with SyncClient(env=env) as client, client.stream(MODEL, "hi", streamed=False) as stream:
            assert list(stream.text()) == [ANSWER]  # the whole text, at once
    assert "stream" not in json.loads(server.requests[0].body)


def test_ask_json_no_stream_writes_the_streamed_events(tmp_path: Path) -> None:
    argv = ["ask", "--json", "-m", MODEL, "How tall is the Eiffel Tower?"]
    streamed, _, _ = run(tmp_path / "a", argv, text_reply(ANSWER), "text/event-stream")
    whole, _, _ = run(
        tmp_path / "b", [*argv, "--no-stream"], whole_body(ANSWER), "application/json"
    )
    events = [json.loads(line) for line in whole.stdout.splitlines()]
    assert [e["type"] for e in events] == [
        "response-start",
        "usage",
        "block-start",
        "text-delta",
        "block-end",
        "finish",
        "turn",
    ]
    assert events[1]["usage"]["output"] == 9  # the final count: a whole body has no running one
    assert events[3]["text"] == ANSWER
    streamed_events = [json.loads(line) for line in streamed.stdout.splitlines()]
    # The stream's first usage is message_start's running count (1 output
    # token); its final one (9) comes after the block.  Otherwise the same.
    running, final = streamed_events.pop(1), streamed_events.pop(4)
    assert (running["usage"]["output"], final["usage"]) == (1, events.pop(1)["usage"])
    events[-1].pop("conversation"), streamed_events[-1].pop("conversation")
    assert events == streamed_events
