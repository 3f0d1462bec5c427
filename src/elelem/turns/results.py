"""What a turn produces: the drafts of one provider response as it is
read (one per block or hosted transition), its response record, and the
turn's :class:`TurnResult`.  :class:`~elelem.turns.engine.TurnEngine`
appends them; the flows built on it return the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from elelem.conversation.context_edits import ContextEdits
from elelem.conversation.events import (
    Draft,
    HostedBody,
    MessageBody,
    ResponseRecord,
)
from elelem.providers.costs import records_cost
from elelem.providers.pricing import Cost
from elelem.shapes.context_editing import applied_edits
from elelem.stream import AssembledResponse
from elelem.turns.actions import (
    Append,
    StreamView,
)
from elelem.vocabulary import (
    Drop,
    HostedActivity,
    Message,
    Part,
    ProviderId,
    ToolCallBlock,
    Usage,
)


class TurnResult(msgspec.Struct, frozen=True):
    """What one turn produced.

    ``messages`` are the assistant messages of the turn (one per provider
    response, in order); ``responses`` their records; ``usage`` their sum;
    ``end`` is ``completed``, ``paused`` (the provider paused and the
    continuation bound was 0), or ``max-continuations``.
    """

    turn: int
    messages: tuple[Message, ...]
    responses: tuple[ResponseRecord, ...]
    usage: Usage
    end: str

    @property
    def text(self) -> str:
        """The turn's assistant text, all responses joined: a continued
        (paused) response goes on where the last one stopped; the text after
        a tool-loop step (a response that asked for tool calls) starts a new
        paragraph, so two steps never run into one word."""
        out: list[str] = []
        after_calls = False
        for message in self.messages:
            text = message.text
            if text and out and after_calls:
                out.append("\n\n")
            if text:
                out.append(text)
            if any(isinstance(p, ToolCallBlock) for p in message.content):
                after_calls = bool(out)
            elif text:
                after_calls = False
        return "".join(out)

    @property
    def finish(self) -> str | None:
        """The finish reason of the last response."""
        return self.responses[-1].finish if self.responses else None

    @property
    def cost(self) -> Cost:
        """What the turn's responses cost (see :mod:`elelem.providers.pricing`):
        ``cost.total`` in US dollars, None when a price is unknown."""
        return records_cost(self.responses)


# -- one response ----------------------------------------------------------------


@dataclass
class ResponseDrafts:
    """The drafts of one provider response, numbered ``response`` in turn
    ``turn``; ``committed`` counts the parts already appended."""

    provider: ProviderId
    model: str
    turn: int
    response: int
    continuation: int
    request: Any  # the EventId the request's history ended at, or None
    committed: int = 0

    def parts(self, parts: Sequence[Part]) -> tuple[Draft, ...]:
        """One draft per block or hosted transition."""
        out = []
        for part in parts:
            if isinstance(part, HostedActivity):
                body: Any = HostedBody(part, self.provider, self.model)
                out.append(Draft("hosted", body, self.turn, self.response))
            else:
                body = MessageBody("assistant", (part,), "assistant", self.provider, self.model)
                out.append(Draft("message", body, self.turn, self.response))
        return tuple(out)

    def record(self, result: AssembledResponse, stream: StreamView) -> ResponseRecord:
        """The response record of ``result``."""
        # The request's drops name places in the request, the assembler's
        # start with "response": one list tells them apart by ``where``.
        return self.answered(result, stream.request_id, tuple(stream.dropped) + result.dropped)

    def answered(
        self,
        result: AssembledResponse,
        request_id: str | None,
        dropped: tuple[Drop, ...],
        *,
        tier: str | None = None,
    ) -> ResponseRecord:
        """The response record of ``result`` answering request ``request_id``,
        with ``dropped`` the drops it records (a streamed response's, or a
        batch result's at the ``batch`` price ``tier``)."""
        finish = result.finish
        return ResponseRecord(
            provider=result.provider or self.provider,
            model=result.model or self.model,
            response_id=result.response_id,  # type: ignore[arg-type]
            request_id=request_id,
            finish=finish.reason if finish is not None else None,
            finish_raw=finish.raw if finish is not None else None,
            failure=finish.failure if finish is not None else None,
            usage=result.usage,
            complete=result.complete,
            dropped=dropped,
            continuation=self.continuation,
            request=self.request,
            payloads=finish.payloads if finish is not None else (),
            retries=result.retries,
            tier=tier,
        )

    def closing(self, result: AssembledResponse, record: ResponseRecord) -> Append:
        """The parts not committed yet (none after a whole stream), the
        record, and the context edits the provider applied, as an overlay."""
        tail = self.parts(result.content[self.committed :])
        drafts = [*tail, Draft.of(record, turn=self.turn, response=self.response)]
        provider = record.provider or self.provider
        edits = applied_edits(p for p in record.payloads if p.provider == provider)
        if edits:
            applied = ContextEdits(provider, self.response, tuple(edits))
            drafts.append(Draft.of(applied, turn=self.turn, response=self.response))
        return Append(tuple(drafts))


__all__ = ["ResponseDrafts", "TurnResult"]
