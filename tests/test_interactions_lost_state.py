"""A lost ``previous_interaction_id`` on Gemini Interactions (issue #42)
falls back to the whole history, recorded, as a lost
``previous_response_id`` does on Responses (tests/test_provider_state.py).

The errors are the Interactions API's documented form
(ai.google.dev/gemini-api/docs/api-errors: ``{"error": {"code":
"not_found", "message": "The requested resource was not found."}}`` with
HTTP 404; ``model_not_found`` for a model), and Google's ``generateContent``
form a Google front end may still give (``{"error": {"code": 404,
"status": "NOT_FOUND", "message"}}``).  The loopback server keeps
interactions as tests/test_interactions_requests.py's does, and forgets
one as the provider does past its retention.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elelem import SyncClient
from elelem.conversation import Conversation, SQLiteStore
from elelem.errors import (
    FULL_REPLAY,
    AuthenticationError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitError,
    RecoverableError,
    ServerError,
)
from elelem.recordings.loopback import RecordedRequest, Reply, Send
from elelem.shapes.gemini_interactions.errors import classify_error, error_from_event
from elelem.testing.servers import LoopbackServer
from elelem.turns.drive import send_sync
from elelem.vocabulary.drop import EXPIRED
from test_interactions_requests import Interactions

NOT_FOUND = {"error": {"code": "not_found", "message": "The requested resource was not found."}}
MODEL = "google-interactions:gemini-3-pro"


class Forgetful(Interactions):
    """The loopback Interactions API, answering 404 ``not_found`` to a
    request that continues an interaction it no longer holds."""

    def __init__(self) -> None:
        super().__init__()
        self.forgotten: set[str] = set()

    def __call__(self, request: RecordedRequest) -> Reply:
        previous = json.loads(request.body).get("previous_interaction_id")
        if previous in self.forgotten:
            body = json.dumps(NOT_FOUND).encode()
            return Reply(404, {"content-type": "application/json"}, (Send(body),))
        return super().__call__(request)


def test_a_lost_interaction_falls_back_to_the_whole_history_recorded(tmp_path: Path) -> None:
    state = Forgetful()
    conv = Conversation.create(SQLiteStore(tmp_path / "lost.db"))
    env = {"GEMINI_API_KEY": "g-test-0123456789", "ELELEM_CONFIG": "/nonexistent/elelem.toml"}
    with LoopbackServer(state) as server:
        env["GOOGLE_GEMINI_BASE_URL"] = server.url
        with SyncClient(env=env) as client:
            for n in (1, 2):
                send_sync(conv, client, MODEL, f"q{n}")
            state.forgotten.add("v1_int2")  # expired on the provider
            result = send_sync(conv, client, MODEL, "q3")
            after = send_sync(conv, client, MODEL, "q4")
        bodies = [json.loads(r.body) for r in server.requests]
    # Turn 3: refused once, then sent whole (the model saw all 5 steps);
    # turn 4 continues the interaction the replay made.
    assert (result.text, after.text) == ("saw 5 steps", "saw 7 steps")
    assert [(b.get("previous_interaction_id"), len(b["input"])) for b in bodies[2:]] == [
        ("v1_int2", 1),
        (None, 5),
        ("v1_int3", 1),
    ]
    records = [r for t in conv.turns() for r in t.responses]
    failed = [r for r in records if r.finish == "aborted"]
    assert len(failed) == 1 and "not_found" in (failed[0].error or "")
    assert [(d.where, d.what, d.why, d.detail) for d in result.responses[-1].dropped] == [
        (
            "previous_interaction_id",
            "previous_interaction_id",
            EXPIRED,
            "google-interactions no longer holds v1_int2: the whole history was sent",
        )
    ]
    assert after.responses[-1].dropped == ()


@pytest.mark.parametrize(
    "body",
    [
        NOT_FOUND,
        {"error": {"code": 404, "status": "NOT_FOUND", "message": "Interaction v1_x not found."}},
    ],
    ids=["interactions form", "google form"],
)
def test_a_missing_interaction_asks_for_a_full_replay(body: dict[str, object]) -> None:
    error = classify_error(404, {}, json.dumps(body).encode())
    assert isinstance(error, RecoverableError) and error.status == 404
    assert [(p.action, dict(p.target)) for p in error.patches] == [(FULL_REPLAY, {"id": "*"})]


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (404, {"error": {"code": "model_not_found", "message": "No model x."}}, NotFoundError),
        (
            404,
            {"error": {"code": 404, "status": "NOT_FOUND", "message": "models/x is not found"}},
            NotFoundError,
        ),
        (403, {"error": {"code": "permission_denied", "message": "No."}}, PermissionDeniedError),
        (429, {"error": {"code": "quota_exceeded", "message": "Daily."}}, RateLimitError),
    ],
    ids=["model_not_found", "google model not found", "permission_denied", "quota_exceeded"],
)
def test_other_errors_are_their_documented_class_and_no_replay(
    status: int, body: dict[str, object], kind: type[Exception]
) -> None:
    error = classify_error(status, {}, json.dumps(body).encode())
    assert type(error) is kind and not isinstance(error, RecoverableError)
    if body["error"]["code"] == "quota_exceeded":  # type: ignore[index]
        assert error.retryable is False  # a daily quota: retrying soon cannot help


def test_a_stream_error_event_reads_the_documented_code() -> None:
    error = error_from_event({"error": {"code": "rate_limit_exceeded", "message": "Slow down."}})
    assert type(error) is RateLimitError
    assert error.message == "gemini interactions stream rate_limit_exceeded: Slow down."


# The error page's codes and the class each raises in a stream, where no HTTP
# status stands beside the code (the class its HTTP status names).
DOCUMENTED_CODES = {
    "invalid_request": InvalidRequestError,
    "failed_precondition": InvalidRequestError,
    "out_of_range": InvalidRequestError,
    "parameter_unknown": InvalidRequestError,
    "authentication": AuthenticationError,
    "permission_denied": PermissionDeniedError,
    "model_not_found": NotFoundError,
    "rate_limit_exceeded": RateLimitError,
    "quota_exceeded": RateLimitError,
    "api_error": ServerError,
    "unavailable": OverloadedError,
}


@pytest.mark.parametrize(("code", "kind"), DOCUMENTED_CODES.items(), ids=DOCUMENTED_CODES)
def test_every_documented_code_in_a_stream_is_its_class(code: str, kind: type) -> None:
    error = error_from_event({"error": {"code": code, "message": "m"}})
    assert type(error) is kind
    assert error.message == f"gemini interactions stream {code}: m"
