"""The ``generated-file`` event: a file a provider's hosted code execution
made (Anthropic's code execution tool, OpenAI's code interpreter), fetched
into the store on request (:func:`elelem.providers.generated.fetch_generated`,
``elelem files download``).

The event keeps the file as one image or document block in ``content``, so
its bytes are a blob of the store like any attachment's (counted, exported,
never pruned while the event stands); ``provider``, ``file_id`` and
``container_id`` say where it came from.  It changes no projection: the
model's history is what it was; ``show``, the Markdown and HTML exports and
the page show it as an attachment of the turn it was fetched in.
"""

from __future__ import annotations

import msgspec

from elelem.conversation.events import register_event_kind
from elelem.vocabulary import DocumentBlock, ImageBlock


class GeneratedFileBody(msgspec.Struct, frozen=True, gc=False):
    """One fetched file (see the module docstring)."""

    provider: str
    file_id: str
    content: tuple[ImageBlock | DocumentBlock, ...]
    container_id: str | None = None
    filename: str | None = None


register_event_kind("generated-file", GeneratedFileBody)

__all__ = ["GeneratedFileBody"]
