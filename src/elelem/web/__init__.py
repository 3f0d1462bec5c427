"""elelem on the web: the AI SDK's UI message stream from any provider, the
local conversation viewer (``elelem serve``) and the HTML export.

The UI message stream carries the portable projection only: no
:class:`~elelem.vocabulary.ProviderPayload` value reaches a browser.
"""

from elelem.web.asgi import (
    DONE,
    AwaitingApproval,
    Pair,
    UIMessageStreamResponse,
    relay,
    sse_body,
    sse_event,
    ui_message_chunks,
    with_approvals,
)
from elelem.web.messages import approvals_from_ui, messages_from_ui
from elelem.web.ui_chunks import (
    FINISH_REASONS,
    UI_MESSAGE_STREAM_HEADERS,
    UIChunk,
    UIMessageEncoder,
    search_entry_point,
)

__all__ = [
    "DONE",
    "FINISH_REASONS",
    "UI_MESSAGE_STREAM_HEADERS",
    "AwaitingApproval",
    "Pair",
    "UIChunk",
    "UIMessageEncoder",
    "UIMessageStreamResponse",
    "approvals_from_ui",
    "messages_from_ui",
    "relay",
    "search_entry_point",
    "sse_body",
    "sse_event",
    "ui_message_chunks",
    "with_approvals",
]
