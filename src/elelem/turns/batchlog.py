"""Batches in the conversation log: durable, so any later process carries on.

One conversation per batch, titled ``batch <provider batch id>``:

1. at submission, a ``batch`` event holding the :class:`BatchRecord`
   (turn 0), then one turn per request (trigger ``batch``, the model
   address and system prompt) with its user message — what was sent;
2. at each status read that changed something, another ``batch`` event:
   the latest one is the batch's state (append-only, never rewritten);
3. when the results are read, each request's turn gets the response's
   blocks and its response record (``tier`` ``batch``, so costs are at the
   batch price); a request the provider failed gets a record saying why.
   Results are recorded once; reading them again reads the log.
"""

from __future__ import annotations

from collections.abc import Sequence

from elelem.batches.core import BatchResult
from elelem.conversation import Conversation, Store
from elelem.conversation.events import (
    Draft,
    MessageBody,
    ResponseRecord,
    TurnStart,
    register_event_kind,
)
from elelem.errors import ConfigError
from elelem.turns.engine import ResponseDrafts
from elelem.vocabulary import ConversationId, TextBlock
from elelem.vocabulary.registry import register_turn_trigger
from elelem.wire import ModelRequest
from elelem.wire.batch import BatchRecord

BATCH_KIND = "batch"
register_event_kind(BATCH_KIND, BatchRecord)
register_turn_trigger("batch", "a request of a batch (elelem.batches)")

TITLE = "batch "


def record_submission(
    store: Store, record: BatchRecord, requests: Sequence[tuple[str, ModelRequest]]
) -> Conversation:
    """A new conversation holding ``record`` and the ``requests`` it sent
    (``(custom_id, request)`` in order), in one commit."""
    conversation = Conversation.create(store, title=TITLE + record.batch_id)
    drafts = [Draft.of(record)]
    for turn, (_custom_id, request) in enumerate(requests, start=1):
        drafts.append(Draft.of(TurnStart("batch", record.model, request.system), turn=turn))
        for message in request.messages:
            drafts.extend(_at_turn(conversation.message_drafts(message), turn))
    conversation.append(*drafts)
    return conversation


def _at_turn(drafts: Sequence[Draft], turn: int) -> list[Draft]:
    return [Draft(d.kind, d.body, turn, d.response, d.id) for d in drafts]


def latest(conversation: Conversation) -> BatchRecord:
    """The batch record of ``conversation`` as last recorded."""
    found = [e.body for e in conversation.events if e.kind == BATCH_KIND]
    record = found[-1] if found else None
    if not isinstance(record, BatchRecord):
        raise ConfigError(f"conversation {conversation.id} holds no batch")
    return record


def find(store: Store, ref: str) -> Conversation:
    """The batch conversation of ``ref``: a conversation id, or a provider's
    batch id (``msgbatch_…``, ``batch_…``, ``batches/…``)."""
    for info in store.list_conversations():
        if info.title == TITLE + ref:
            return Conversation.open(store, info.id)
    return Conversation.open(store, ConversationId(ref))


def record_status(conversation: Conversation, record: BatchRecord) -> bool:
    """Append ``record`` when it differs from the latest one; True if it did."""
    if record == latest(conversation):
        return False
    conversation.append(Draft.of(record))
    return True


def recorded(conversation: Conversation) -> bool:
    """True when the batch's results are in the log already."""
    return any(e.kind == "response" for e in conversation.events)


def record_results(conversation: Conversation, results: Sequence[BatchResult]) -> tuple[str, ...]:
    """Each result in its request's turn (results in request order), in one
    commit.  Returns the custom ids of results for requests the batch never
    had (no turn of the log asks them): not stored, and the caller says so."""
    record = latest(conversation)
    turns = {custom_id: n for n, custom_id in enumerate(record.custom_ids, start=1)}
    drafts: list[Draft] = []
    strays: list[str] = []
    number = conversation.next_response()
    for result in results:
        turn = turns.get(result.custom_id)
        if turn is None:
            strays.append(result.custom_id)  # nothing in the log to answer
            continue
        response = result.response
        parts = ResponseDrafts(record.provider, _model(record), turn, number, 0, None)
        if response is not None:
            drafts.extend(parts.parts(response.content))
            body = parts.answered(response, result.request_id, response.dropped, tier="batch")
        else:
            body = ResponseRecord(
                provider=record.provider,
                model=_model(record),
                request_id=result.request_id,
                finish="error",
                failure=result.error,
                complete=False,
                error=result.error,
                tier="batch",
            )
        drafts.append(Draft.of(body, turn=turn, response=number))
        number += 1
    conversation.append(*drafts)
    return tuple(strays)


def results_of(conversation: Conversation) -> list[tuple[str, str, ResponseRecord]]:
    """Each recorded result: custom id, the answer's text and its response
    record, in request order."""
    record = latest(conversation)
    out = []
    for view in conversation.turns():
        if not 1 <= view.turn <= len(record.custom_ids) or not view.responses:
            continue
        text = "".join(
            block.text
            for event in view.events
            if isinstance(event.body, MessageBody) and event.body.role == "assistant"
            for block in event.body.content
            if isinstance(block, TextBlock)
        )
        out.append((record.custom_ids[view.turn - 1], text, view.responses[-1]))
    return out


def _model(record: BatchRecord) -> str:
    return record.model.partition(":")[2] or record.model


__all__ = [
    "BATCH_KIND",
    "find",
    "latest",
    "record_results",
    "record_status",
    "record_submission",
    "recorded",
    "results_of",
]
