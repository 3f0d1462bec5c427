"""Which fields each event of the OpenAI Responses stream holds, for the
parser (:mod:`elelem.shapes.openai_responses.parser`) to tell a field
nobody modelled, which it keeps, from the ones it reads or that hold
nothing; and the progress events of an item (``….in_progress``,
``….done``), which carry nothing its done item lacks and are checked and
passed over.
"""

from __future__ import annotations

_RESPONSE = frozenset({"type", "sequence_number", "response"})
_ITEM = frozenset({"type", "sequence_number", "output_index", "item"})
_DELTA = frozenset({"type", "sequence_number", "item_id", "output_index", "delta", "obfuscation"})
EVENT_FIELDS: dict[str, frozenset[str]] = {
    "response.created": _RESPONSE,
    "response.in_progress": _RESPONSE,
    "response.queued": _RESPONSE,
    "response.completed": _RESPONSE,
    "response.incomplete": _RESPONSE,
    "response.failed": _RESPONSE,
    "response.cancelled": _RESPONSE,
    "response.output_item.added": _ITEM,
    "response.output_item.done": _ITEM,
    "response.content_part.added": _DELTA - {"delta", "obfuscation"} | {"content_index", "part"},
    "response.output_text.delta": _DELTA | {"content_index", "logprobs"},
    "response.refusal.delta": _DELTA | {"content_index", "logprobs"},
    "response.output_text.annotation.added": _DELTA - {"delta", "obfuscation"}
    | {"content_index", "annotation_index", "annotation"},
    "response.reasoning_summary_part.added": _DELTA - {"delta", "obfuscation"}
    | {"summary_index", "part"},
    "response.reasoning_summary_text.delta": _DELTA | {"summary_index"},
    "response.reasoning_text.delta": _DELTA | {"content_index"},
    "response.function_call_arguments.delta": _DELTA,
    "response.custom_tool_call_input.delta": _DELTA,
}
"""The fields of each event the parser handles: its own, and the ones the
item at ``done`` holds too (``logprobs``) or that hold nothing
(``sequence_number``, ``obfuscation``: random padding)."""

PROGRESS_FIELDS = _DELTA | {
    "content_index",
    "summary_index",
    "command_index",
    "logprobs",
    # What the item at ``done`` holds whole: text, a part, a call's input, a
    # patch, code, a shell command and its output, a partial image.
    "text",
    "part",
    "arguments",
    "input",
    "diff",
    "code",
    "command",
    "output",
    "partial_image_b64",
    "partial_image_index",
    "background",
    "output_format",
    "quality",
    "size",
}
"""The fields of an item's progress events (``….in_progress``, ``….done``)
that carry nothing its done item lacks; any other is kept as an event field."""

# Progress events of items whose final state arrives in output_item.done: they
# carry nothing the done item lacks, so they are checked and passed over.
PROGRESS_SUFFIXES = (
    ".in_progress",
    ".searching",
    ".completed",
    ".interpreting",
    ".generating",
    ".partial_image",
    ".failed",
    ".done",
    ".added",
    ".delta",
)
PROGRESS_PREFIXES = (
    "response.web_search_call.",
    "response.file_search_call.",
    "response.code_interpreter_call.",
    "response.code_interpreter_call_code.",
    "response.image_generation_call.",
    "response.mcp_call.",
    "response.mcp_call_arguments.",
    "response.mcp_list_tools.",
    "response.apply_patch_call_operation_diff.",
    "response.shell_call_command.",
    "response.shell_call_output_content.",
    "response.custom_tool_call_input.done",
    "response.function_call_arguments.done",
    "response.output_text.done",
    "response.refusal.done",
    "response.content_part.done",
    "response.reasoning_summary_text.done",
    "response.reasoning_summary_part.done",
    "response.reasoning_text.done",
)


__all__ = ["EVENT_FIELDS", "PROGRESS_FIELDS", "PROGRESS_PREFIXES", "PROGRESS_SUFFIXES"]
