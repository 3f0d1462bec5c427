"""The Anthropic Messages wire shape (docs/architecture.md §2), sans-IO.

``SHAPE`` implements :class:`elelem.wire.Shape`: the request encoder
(native replay of Anthropic's own messages, portable encoding of the rest),
the SSE frame parser, the non-streaming response mapping and the error
classifier.

Provider payloads this shape writes (``provider`` is the parser's provider,
``anthropic`` for Anthropic itself), all replayed verbatim by native replay:

``citation``
    on an :class:`~elelem.vocabulary.Attribution`: the raw citation object
    (``encrypted_index`` included).
``signature`` / ``redacted_thinking``
    on a reasoning block: the signature string / the redacted ``data`` string.
``block_fields``
    on a text, reasoning or tool-call block: wire fields the neutral block
    does not model (a tool use's ``caller``), as an object.
``server_tool_use`` / ``<type>_tool_result``
    on a hosted transition: the raw server-tool block, ``version`` the tool
    version the request selected (``web_search_20250305``) or None.
``message``
    on :class:`~elelem.stream.Finish`: the message envelope without its
    content (stop details, container, context management, final usage).
"""

from __future__ import annotations

from elelem.shapes.anthropic_messages.batch import BATCH
from elelem.shapes.anthropic_messages.counting import COUNTER
from elelem.shapes.anthropic_messages.encoder import (
    API_VERSION,
    DEFAULT_MAX_TOKENS,
    MESSAGES_PATH,
    assistant_wire,
    encode_request,
    hosted_tool_definition,
)
from elelem.shapes.anthropic_messages.errors import (
    ERROR_TYPES,
    ERRORS,
    classify_error,
    error_from_event,
)
from elelem.shapes.anthropic_messages.files import FILES
from elelem.shapes.anthropic_messages.listing import LISTING
from elelem.shapes.anthropic_messages.mapping import (
    DEFAULT_TOOL_VERSIONS,
    FINISH_REASONS,
    finish_reason,
    map_usage,
)
from elelem.shapes.anthropic_messages.parser import (
    MessagesParser,
    citation_attribution,
    parse_body,
    response_chunks,
)
from elelem.shapes.base import ShapeSpec

SHAPE = ShapeSpec(
    "anthropic_messages",
    "sse",
    encode=encode_request,
    parser=MessagesParser,
    parse_body=parse_body,
    classify=classify_error,
    counting=COUNTER,
    listing=LISTING,
    files=FILES,
    batch=BATCH,
)
"""The Anthropic Messages shape.  Its parser and ``parse_body`` take the
neutral request or the raw wire request JSON (it names the hosted tool
versions)."""

__all__ = [
    "API_VERSION",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_TOOL_VERSIONS",
    "ERRORS",
    "ERROR_TYPES",
    "FINISH_REASONS",
    "MESSAGES_PATH",
    "SHAPE",
    "MessagesParser",
    "assistant_wire",
    "citation_attribution",
    "classify_error",
    "encode_request",
    "error_from_event",
    "finish_reason",
    "hosted_tool_definition",
    "map_usage",
    "parse_body",
    "response_chunks",
]
