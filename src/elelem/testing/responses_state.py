"""A loopback Responses API that keeps state as OpenAI documents it.

For the tests and the benchmark of provider-held history (issue #42): a
reply function for :class:`~elelem.recordings.loopback.LoopbackServer`
that answers ``POST /v1/responses`` and ``POST /v1/conversations`` on the
documented wire:

- a response is stored unless the request says ``store: false``
  (platform.openai.com/docs/api-reference/responses/create, ``store``
  defaults to true); a request naming ``previous_response_id`` is answered
  with the stored response's input and output before its own input
  (platform.openai.com/docs/guides/conversation-state); one naming a
  response it does not hold is refused with the documented 400
  (``invalid_request_error``, ``code: previous_response_not_found``,
  ``param: previous_response_id``);
- a conversation (platform.openai.com/docs/api-reference/conversations/create)
  collects the input and output items of each response made in it;
- the answer is streamed (``response.created``, ``response.output_item.added``,
  ``response.content_part.added``, ``response.output_text.delta``,
  ``response.output_text.done``, ``response.content_part.done``,
  ``response.output_item.done``, ``response.completed``: the events of
  platform.openai.com/docs/api-reference/responses-streaming) or whole.

Each answer says how many input items the model saw in all, ``turn N: M
items``, so a test tells a full replay from a continuation by the same
context seen.  :meth:`StatefulResponses.forget` drops a stored response (it
expired, or was deleted).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from elelem.recordings.loopback import RecordedRequest, Reply, Send, sse_body

_JSON = {"content-type": "application/json"}


class StatefulResponses:
    """The reply function of a stateful Responses server (see the module)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.stored: dict[str, list[Any]] = {}
        self.conversations: dict[str, list[Any]] = {}
        self.answered = 0
        self.seen: list[int] = []  # the input items each answered request saw in all

    def forget(self, response_id: str) -> None:
        """Drop a stored response, as its expiry or a delete does."""
        with self._lock:
            self.stored.pop(response_id, None)

    def __call__(self, request: RecordedRequest) -> Reply:
        with self._lock:
            if request.method == "POST" and request.path.endswith("/conversations"):
                return self._conversation()
            if request.method != "POST" or not request.path.endswith("/responses"):
                return _error(404, "Not found", "invalid_request_error", None, None)
            return self._respond(json.loads(request.body))

    def _conversation(self) -> Reply:
        cid = f"conv_{len(self.conversations) + 1:04d}"
        self.conversations[cid] = []
        body = {"id": cid, "object": "conversation", "created_at": 0, "metadata": {}}
        return Reply(200, _JSON, (Send(json.dumps(body).encode()),))

    def _respond(self, body: dict[str, Any]) -> Reply:
        given = body.get("input", [])
        items = [{"role": "user", "content": given}] if isinstance(given, str) else list(given)
        previous = body.get("previous_response_id")
        conversation = body.get("conversation")
        cid = conversation.get("id") if isinstance(conversation, dict) else conversation
        if previous is not None:
            if previous not in self.stored:
                message = f"Previous response with id '{previous}' not found."
                return _error(
                    400,
                    message,
                    "invalid_request_error",
                    "previous_response_not_found",
                    "previous_response_id",
                )
            context = [*self.stored[previous], *items]
        elif cid is not None:
            if cid not in self.conversations:
                message = f"Conversation with id '{cid}' not found."
                return _error(404, message, "invalid_request_error", None, "conversation")
            context = [*self.conversations[cid], *items]
        else:
            context = items
        self.answered += 1
        self.seen.append(len(context))
        rid = f"resp_{self.answered:04d}"
        text = f"turn {self.answered}: {len(context)} items"
        message_item = {
            "type": "message",
            "id": f"msg_{self.answered:04d}",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        store = body.get("store", True) is not False
        if store:
            self.stored[rid] = [*context, message_item]
        if cid is not None:
            self.conversations[cid] += [*items, message_item]
        response = {
            "id": rid,
            "object": "response",
            "created_at": 1741476542,
            "status": "completed",
            "model": body.get("model"),
            "output": [message_item],
            "previous_response_id": previous,
            "conversation": {"id": cid} if cid is not None else None,
            "store": store,
            "usage": {
                "input_tokens": 10 * len(context),
                "output_tokens": 5,
                "total_tokens": 10 * len(context) + 5,
            },
        }
        if body.get("stream"):
            return Reply(200, {"content-type": "text/event-stream"}, (Send(_stream(response)),))
        return Reply(200, _JSON, (Send(json.dumps(response).encode()),))


def _stream(response: dict[str, Any]) -> bytes:
    [item] = response["output"]
    [part] = item["content"]
    opening = {**response, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": opening},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": [], "status": "in_progress"}},
        {"type": "response.content_part.added", "item_id": item["id"], "output_index": 0, "content_index": 0, "part": {**part, "text": ""}},
        {"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0, "delta": part["text"]},
        {"type": "response.output_text.done", "item_id": item["id"], "output_index": 0, "content_index": 0, "text": part["text"]},
        {"type": "response.content_part.done", "item_id": item["id"], "output_index": 0, "content_index": 0, "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": response},
    ]  # fmt: skip
    for n, event in enumerate(events):
        event["sequence_number"] = n
    return sse_body([(str(e["type"]), json.dumps(e)) for e in events])


def _error(status: int, message: str, kind: str, code: str | None, param: str | None) -> Reply:
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return Reply(status, _JSON, (Send(json.dumps(body).encode()),))


__all__ = ["StatefulResponses"]
