"""Gemini Interactions requests (issue #42): the body as the API documents
it, and a conversation that continues with ``previous_interaction_id``.

The request body is the ``CreateInteraction`` form of
ai.google.dev/api/interactions-api (``model``, ``input`` a list of steps:
``user_input`` with ``text``/media/``function_result`` contents,
``model_output``, ``function_call``, ``thought``; ``system_instruction``;
``tools``; ``generation_config``; ``previous_interaction_id``; ``stream``).
The loopback server below answers whole interactions as the API returns
them (``id``, ``status``, ``steps``, ``usage``) and, as the API does by
default (``store`` true), keeps each interaction so a later one may name it
(ai.google.dev/gemini-api/docs/interactions).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from elelem import SyncClient
from elelem.conversation import Conversation, SQLiteStore
from elelem.recordings.loopback import RecordedRequest, Reply, Send
from elelem.shapes.gemini_interactions import SHAPE
from elelem.testing.servers import LoopbackServer
from elelem.turns.drive import send_sync
from elelem.vocabulary import (
    GenerationOptions,
    ImageBlock,
    Message,
    ProviderId,
    ReasoningOptions,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
)
from elelem.vocabulary.ids import CallId
from elelem.wire import ModelRequest

G = ProviderId("google-interactions")
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)


def test_a_request_is_the_documented_create_interaction_body() -> None:
    weather = ToolSpec("get_weather", "Weather of a city", {"type": "object"})
    request = ModelRequest(
        "gemini-3-pro",
        (
            Message("system", (TextBlock("Be brief."),), "system"),
            Message("user", (TextBlock("Look:"), ImageBlock.from_bytes(PNG)), "user"),
        ),
        system="You help.",
        tools=(weather,),
        options=GenerationOptions(
            temperature=0.2, max_tokens=100, reasoning=ReasoningOptions(effort="low")
        ),
    )
    encoded = SHAPE.encode_request(request, provider=G, stream=True)
    assert encoded.path == "/v1beta/interactions"
    image = {"type": "image", "mime_type": "image/png", "data": ImageBlock.from_bytes(PNG).source.blob.base64()}  # type: ignore[union-attr]  # fmt: skip
    assert encoded.body == {
        "model": "gemini-3-pro",
        "input": [{"type": "user_input", "content": [{"type": "text", "text": "Look:"}, image]}],
        "system_instruction": "You help.\n\nBe brief.",
        "tools": [
            {
                "type": "function",
                "name": "get_weather",
                "description": "Weather of a city",
                "parameters": {"type": "object"},
            }
        ],
        "generation_config": {
            "max_output_tokens": 100,
            "temperature": 0.2,
            "thinking_summaries": "auto",
            "thinking_level": "low",
        },
        "stream": True,
    }
    assert encoded.dropped == ()


def test_a_tool_result_is_a_function_result_step() -> None:
    result = ToolResultBlock(CallId("call_1"), "18 C", name="get_weather")
    request = ModelRequest("m", (Message("user", (result,)),))
    body = SHAPE.encode_request(request, provider=G, stream=False).body
    # A step of its own (the API's Step union), not a content of user_input.
    assert body["input"] == [
        {"type": "function_result", "call_id": "call_1", "result": "18 C", "name": "get_weather"}
    ]


class Interactions:
    """A loopback Interactions API that keeps every interaction (see module)."""

    def __init__(self) -> None:
        self.kept: dict[str, list[Any]] = {}

    def __call__(self, request: RecordedRequest) -> Reply:
        body = json.loads(request.body)
        previous = body.get("previous_interaction_id")
        context = [*self.kept.get(previous, []), *body["input"]]
        iid = f"v1_int{len(self.kept) + 1}"
        said = {
            "type": "model_output",
            "content": [{"type": "text", "text": f"saw {len(context)} steps"}],
        }
        self.kept[iid] = [*context, said]
        answer = {
            "id": iid,
            "model": body["model"],
            "status": "completed",
            "steps": [said],
            "usage": {"total_input_tokens": 3, "total_output_tokens": 2},
        }
        return Reply(
            200, {"content-type": "application/json"}, (Send(json.dumps(answer).encode()),)
        )


def test_a_conversation_continues_with_previous_interaction_id(tmp_path: Path) -> None:
    server_state = Interactions()
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    env = {"GEMINI_API_KEY": "g-test-0123456789", "ELELEM_CONFIG": "/nonexistent/elelem.toml"}
    with LoopbackServer(server_state) as server:
        env["GOOGLE_GEMINI_BASE_URL"] = server.url
        with SyncClient(env=env) as client:
            said = [
                send_sync(conv, client, "google-interactions:gemini-3-pro", f"q{n}").text
                for n in (1, 2, 3)
            ]
        bodies = [json.loads(r.body) for r in server.requests]
    # The model saw the whole conversation each time; only the new input was sent.
    assert said == ["saw 1 steps", "saw 3 steps", "saw 5 steps"]
    assert [(b.get("previous_interaction_id"), len(b["input"])) for b in bodies] == [
        (None, 1),
        ("v1_int1", 1),
        ("v1_int2", 1),
    ]
