"""Re-rendering a stored conversation log, turn by turn."""

from __future__ import annotations

from collections.abc import Sequence

from elelem.conversation import (
    OVERLAY_KINDS,
    Awaiting,
    Decision,
    Event,
    HostedBody,
    MessageBody,
    ResponseRecord,
    TurnStart,
    turn_views,
)
from elelem.conversation.context_edits import ContextEdits
from elelem.conversation.generated import GeneratedFileBody
from elelem.conversation.session import SessionNote
from elelem.providers.costs import events_cost
from elelem.render.event_lines import context_edits_line, generated_line
from elelem.render.lines import (
    awaiting_line,
    decision_line,
    record_outcome,
    session_line,
)
from elelem.render.renderer import Renderer
from elelem.render.sanitize import sanitize_line
from elelem.vocabulary import DocumentBlock, ImageBlock, TextBlock


def render_events(renderer: Renderer, events: Sequence[Event]) -> None:
    """Show a conversation's events as they were lived: each user message,
    then the answer (its blocks and hosted activity in stream order), its
    footnotes and the turn's usage and cost.

    Overlays change projections, not what happened, so they are not shown;
    events of a kind nobody registered are kept in the log and named here.
    """
    for view in turn_views(events):
        answered = False
        for event in view.events:
            body = event.body
            if isinstance(body, MessageBody):
                answered |= _message(renderer, body)
            elif isinstance(body, HostedBody):
                renderer.part(body.activity)
                answered = True
            elif isinstance(body, ResponseRecord):
                renderer.add_usage(body.usage)
                outcome = record_outcome(body)
                if outcome is not None:
                    kind, text = outcome
                    renderer.notice(text, "red" if kind == "error" else "yellow")
                else:
                    renderer.finished(body.finish, body.failure)
                answered = True
            elif isinstance(body, Awaiting):
                renderer.notice(awaiting_line(body), "yellow")
            elif isinstance(body, Decision):
                renderer.notice(decision_line(body))
            elif isinstance(body, SessionNote):
                renderer.notice(session_line(body))
            elif isinstance(body, ContextEdits):
                renderer.notice(context_edits_line(body))
            elif isinstance(body, GeneratedFileBody):
                renderer.notice(generated_line(body))
                for part in body.content:
                    renderer.part(part)
            elif isinstance(body, TurnStart) or event.kind in OVERLAY_KINDS:
                continue
            else:
                renderer.notice(f"[{sanitize_line(event.kind)} event kept, not shown]")
        if answered:
            renderer.cost = events_cost(view.events).describe()
            renderer.end_answer()


def _message(renderer: Renderer, body: MessageBody) -> bool:
    if body.role == "assistant":
        for part in body.content:
            renderer.part(part)
        return True
    text = "".join(p.text for p in body.content if isinstance(p, TextBlock))
    if body.role == "system":
        renderer.notice(f"system: {text}")
    elif body.source.startswith("context"):
        renderer.notice(f"{body.source}: {text}")
    elif body.source == "tool" or not text:
        for part in body.content:
            renderer.part(part)
    else:
        renderer.user(text)
        for part in body.content:
            if isinstance(part, (ImageBlock, DocumentBlock)):
                renderer.part(part)
    return False


__all__ = ["render_events"]
