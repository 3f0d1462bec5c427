"""The ``session`` event: what a live session did that is no message and no
response (see :mod:`elelem.turns.live`).

``what`` is one of :data:`SESSION_NOTES` (an open set: a note a later
version writes loads as it is); ``detail`` is its JSON, as the session
saw it (a provider's session object, a resumption handle, an interruption's
item and ``audio_end_ms`` with the transcript heard, an unknown server
event, what a dropped connection lost).
"""

from __future__ import annotations

import msgspec

from elelem.conversation.events import register_event_kind
from elelem.vocabulary.json import JSONValue

SESSION_NOTES = (
    "opened",  # the server accepted the session: its id and settings
    "updated",  # the server's session settings now (after the client's update)
    "resumed",  # a dropped connection was resumed with a handle: the same session
    "input-transcript",  # a user turn's transcript that came after its message
    "interrupted",  # the user cut in: the item, audio_end_ms, the transcript heard
    "rate-limits",  # the server's rate limits now
    "go-away",  # the server will close the connection soon
    "error",  # an error event that did not end the session
    "dropped",  # the connection dropped and is resumed: what was in progress is kept
    "lost",  # the connection dropped with no way to resume: what it lost
    "unknown",  # a server event no protocol models, kept as it came
    "closed",  # the session ended
)
"""The notes a live session writes."""


class SessionNote(msgspec.Struct, frozen=True, gc=False):
    """One note of a live session (see the module docstring)."""

    what: str
    detail: JSONValue = None


register_event_kind("session", SessionNote)

__all__ = ["SESSION_NOTES", "SessionNote"]
