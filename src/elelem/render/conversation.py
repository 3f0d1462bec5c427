"""Re-rendering a stored conversation log, turn by turn."""

from __future__ import annotations

from collections.abc import Sequence

from elelem.conversation import Event, MessageBody, ResponseRecord, turn_views
from elelem.providers.costs import events_cost
from elelem.render.event_lines import KeptEvent, Notice, event_shown, message_speaker
from elelem.render.lines import record_outcome
from elelem.render.renderer import Renderer
from elelem.render.sanitize import sanitize_line
from elelem.vocabulary import DocumentBlock, HostedActivity, ImageBlock


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
            shown = event_shown(event)
            if isinstance(shown, MessageBody):
                answered |= _message(renderer, shown)
            elif isinstance(shown, HostedActivity):
                renderer.part(shown)
                answered = True
            elif isinstance(shown, ResponseRecord):
                renderer.add_usage(shown.usage)
                outcome = record_outcome(shown)
                if outcome is not None:
                    kind, text = outcome
                    renderer.notice(text, "red" if kind == "error" else "yellow")
                else:
                    renderer.finished(shown.finish, shown.failure)
                answered = True
            elif isinstance(shown, Notice):
                renderer.notice(shown.text, "yellow" if shown.warning else "dim")
                for part in shown.parts:
                    renderer.part(part)
            elif isinstance(shown, KeptEvent):
                renderer.notice(f"[{sanitize_line(shown.kind)} event kept, not shown]")
        if answered:
            renderer.cost = events_cost(view.events).describe()
            renderer.end_answer()


def _message(renderer: Renderer, body: MessageBody) -> bool:
    speaker, text = message_speaker(body)
    if speaker == "assistant":
        for part in body.content:
            renderer.part(part)
        return True
    if speaker == "system":
        renderer.notice(f"system: {text}")
    elif speaker == "context":
        renderer.notice(f"{body.source}: {text}")
    elif speaker == "tool":
        for part in body.content:
            renderer.part(part)
    else:
        renderer.user(text)
        for part in body.content:
            if isinstance(part, (ImageBlock, DocumentBlock)):
                renderer.part(part)
    return False


__all__ = ["render_events"]
