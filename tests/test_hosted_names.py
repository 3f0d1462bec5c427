"""Provider-neutral hosted-activity names: the one table, every shape's use of it,
native replay that still speaks the provider's own names, and the whole corpus.
"""

from __future__ import annotations

import csv
import importlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from elelem.cli.inspect import detect_shape, inspect_interaction
from elelem.recordings.cassettes import load
from elelem.shapes.anthropic_messages import SHAPE as ANTHROPIC_SHAPE
from elelem.shapes.anthropic_messages import assistant_wire
from elelem.shapes.anthropic_messages.mapping import map_usage as anthropic_usage
from elelem.shapes.anthropic_messages.mapping import version_for
from elelem.shapes.common import hosted_activity_line
from elelem.shapes.gemini_interactions import SHAPE as INTERACTIONS_SHAPE
from elelem.shapes.openai_chat.mapping import map_usage as chat_usage
from elelem.shapes.openai_responses import SHAPE as RESPONSES_SHAPE
from elelem.shapes.openai_responses.mapping import map_usage as responses_usage
from elelem.stream import AssembledResponse, Assembler, Chunk
from elelem.vocabulary import (
    HOSTED_ACTIVITY_NAMES,
    PROVIDER_ACTIVITY_NAMES,
    SEARCH_SOURCES,
    SERVER_SIDE_TOOLS,
    CodeExecution,
    HostedActivity,
    Message,
    ProviderId,
    hosted_counter_name,
    hosted_counts,
    neutral_activity_name,
)
from elelem.wire import ModelRequest

ANTHROPIC = ProviderId("anthropic")

# -- the table ---------------------------------------------------------------------------


def test_the_documented_neutral_names() -> None:
    assert sorted(HOSTED_ACTIVITY_NAMES) == [
        "code_execution",
        "file_search",
        "image_generation",
        "map_search",
        "mcp",
        "shell",
        "tool_search",
        "web_fetch",
        "web_search",
        "x_search",
    ]
    assert all(HOSTED_ACTIVITY_NAMES[name] for name in HOSTED_ACTIVITY_NAMES)


def test_every_provider_name_maps_onto_a_documented_neutral_name() -> None:
    assert set(PROVIDER_ACTIVITY_NAMES.values()) <= set(HOSTED_ACTIVITY_NAMES)
    # A neutral name is never also a provider alias (it would map to itself anyway).
    assert set(PROVIDER_ACTIVITY_NAMES).isdisjoint(HOSTED_ACTIVITY_NAMES)


@pytest.mark.parametrize(
    ("wire", "neutral"),
    [
        # Anthropic server tools
        ("web_search", "web_search"),
        ("web_fetch", "web_fetch"),
        ("code_execution", "code_execution"),
        ("bash_code_execution", "code_execution"),
        ("text_editor_code_execution", "code_execution"),
        ("tool_search_tool_regex", "tool_search"),
        ("tool_search_tool_bm25", "tool_search"),
        # OpenAI Responses tool types
        ("web_search_preview", "web_search"),
        ("code_interpreter", "code_execution"),
        ("file_search", "file_search"),
        ("image_generation", "image_generation"),
        ("mcp", "mcp"),
        ("mcp_list_tools", "mcp"),
        ("shell", "shell"),
        ("tool_search", "tool_search"),
        # Gemini tools
        ("google_search", "web_search"),
        ("google_search_retrieval", "web_search"),
        ("url_context", "web_fetch"),
        ("google_maps", "map_search"),
        # xAI server-side functions
        ("x_keyword_search", "x_search"),
        ("x_semantic_search", "x_search"),
        ("x_user_search", "x_search"),
        ("x_thread_fetch", "x_search"),
        ("web_search_with_snippets", "web_search"),
        ("browse_page", "web_search"),
        # Nobody mapped these: the provider's own spelling stays.
        ("advisor", "advisor"),
        ("document_search", "document_search"),
        ("view_x_video", "view_x_video"),
        ("", ""),
    ],
)
def test_neutral_activity_name(wire: str, neutral: str) -> None:
    assert neutral_activity_name(wire) == neutral


def test_counter_names_and_counts() -> None:
    assert hosted_counter_name("web_search_requests") == "web_search"
    assert hosted_counter_name("code_interpreter_calls") == "code_execution"
    assert hosted_counter_name("x_search_calls") == "x_search"
    assert hosted_counter_name("document_search_calls") == "document_search"
    assert hosted_counter_name("_calls") == "_calls"
    assert hosted_counter_name("web_fetch") == "web_fetch"
    counters = {
        "web_search_requests": 2,
        "web_fetch_requests": 0,
        "google_search_requests": 3,  # the same capability: counts add up
        "tool_calls_requested": 1,  # no counter suffix: not a count of hosted work
        "odd_requests": "many",  # not an integer: left to raw
        "flag_requests": True,
    }
    assert hosted_counts(counters, "_requests") == {"web_search": 5, "web_fetch": 0}
    assert hosted_counts({}, "_calls") == {}


# -- usage counters of each shape ---------------------------------------------------------


def test_anthropic_usage_counters_are_neutral() -> None:
    raw = {
        "input_tokens": 10,
        "output_tokens": 5,
        "server_tool_use": {
            "web_search_requests": 2,
            "web_fetch_requests": 0,
            "code_execution_requests": 1,
        },
    }
    assert anthropic_usage(raw).hosted == {"web_search": 2, "web_fetch": 0, "code_execution": 1}


def test_responses_usage_counters_are_neutral() -> None:
    raw = {
        "input_tokens": 1,
        "output_tokens": 1,
        "server_side_tool_usage_details": {
            "web_search_calls": 0,
            "x_search_calls": 1,
            "code_interpreter_calls": 2,
            "file_search_calls": 0,
            "mcp_calls": 3,
            "document_search_calls": 0,
        },
    }
    assert responses_usage(raw).hosted == {
        "web_search": 0,
        "x_search": 1,
        "code_execution": 2,
        "file_search": 0,
        "mcp": 3,
        "document_search": 0,
    }


def test_openrouter_counts_only_hosted_work() -> None:
    raw = {
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "server_tool_use_details": {
            "web_search_requests": 1,
            "tool_calls_requested": 1,
            "tool_calls_executed": 1,
        },
    }
    assert chat_usage(raw).hosted == {"web_search": 1}


# -- Anthropic: neutral names out, Anthropic names replayed --------------------------------


def _anthropic(
    content: list[dict[str, Any]], request: ModelRequest | dict[str, Any] | None = None
) -> AssembledResponse:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    chunks = ANTHROPIC_SHAPE.parse_response(json.dumps(message).encode(), ANTHROPIC, request)
    assembler = Assembler(ANTHROPIC)
    assembler.feed_all(chunks)
    return assembler.result()


BASH_USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_1",
    "name": "bash_code_execution",
    "input": {"command": "ls -la"},
}
BASH_RESULT = {
    "type": "bash_code_execution_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": {
        "type": "bash_code_execution_result",
        "stdout": "total 0\n",
        "stderr": "",
        "return_code": 0,
        "content": [],
    },
}
EDIT_USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_2",
    "name": "text_editor_code_execution",
    "input": {"command": "create", "path": "/tmp/a.py", "file_text": "print(1)\n"},
}
EDIT_RESULT = {
    "type": "text_editor_code_execution_tool_result",
    "tool_use_id": "srvtoolu_2",
    "content": {"type": "text_editor_code_execution_create_result", "is_file_update": False},
}


def test_anthropic_code_execution_helpers_are_code_execution_and_replay_as_sent() -> None:
    request = ModelRequest(
        model="claude-x", messages=(Message.user("go"),), hosted_tools=(CodeExecution(),)
    )
    content = [BASH_USE, BASH_RESULT, EDIT_USE, EDIT_RESULT]
    result = _anthropic(content, request)
    activities = [a for a in result.content if isinstance(a, HostedActivity)]
    assert [(a.id, a.name, a.state, a.summary) for a in activities] == [
        ("srvtoolu_1", "code_execution", "started", ""),
        ("srvtoolu_1", "code_execution", "completed", "exit 0"),
        ("srvtoolu_2", "code_execution", "started", ""),
        ("srvtoolu_2", "code_execution", "completed", "created file"),
    ]
    # The input is what Anthropic sent; the payload keeps Anthropic's own name.
    assert activities[0].input == {"command": "ls -la"}
    assert activities[2].input == EDIT_USE["input"]
    payloads = [a.payload for a in activities]
    assert [(p.format, p.version) for p in payloads if p is not None] == [
        ("server_tool_use", "code_execution_20250825"),
        ("bash_code_execution_tool_result", "code_execution_20250825"),
        ("server_tool_use", "code_execution_20250825"),
        ("text_editor_code_execution_tool_result", "code_execution_20250825"),
    ]
    assert [p.value["name"] for p in payloads if p is not None and "name" in p.value] == [
        "bash_code_execution",
        "text_editor_code_execution",
    ]
    # Native replay rebuilds the blocks byte for byte, Anthropic names included.
    wire, dropped = assistant_wire(result.to_message(), ANTHROPIC)
    assert dropped == ()
    assert wire["content"] == content
    # Portable replay speaks the neutral name.
    assert hosted_activity_line(activities[1]) == (
        '[hosted code_execution {"command": "ls -la"}: completed, exit 0]'
    )


def test_anthropic_tool_search_streamed_is_tool_search() -> None:
    frames: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_2",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "server_tool_use",
                "id": "srvtoolu_9",
                "name": "tool_search_tool_regex",
                "input": {},
            },
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"pattern": "weather"}'},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {
                "type": "tool_search_tool_result",
                "tool_use_id": "srvtoolu_9",
                "content": {
                    "type": "tool_search_tool_search_result",
                    "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}],
                },
            },
        },
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    ]
    wire_request = {
        "tools": [{"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}]
    }
    parser = ANTHROPIC_SHAPE.new_parser(ANTHROPIC, wire_request)
    chunks: list[Chunk] = []
    for frame in frames:
        chunks.extend(parser.message(frame["type"], json.dumps(frame)))
    chunks.extend(parser.eof())
    assembler = Assembler(ANTHROPIC)
    assembler.feed_all(chunks)
    activities = assembler.result().activities
    assert [(a.name, a.state, a.input, a.summary) for a in activities] == [
        ("tool_search", "started", {"pattern": "weather"}, ""),
        ("tool_search", "completed", {"pattern": "weather"}, "1 tool found"),
    ]
    versions = [a.payload.version for a in activities if a.payload is not None]
    assert versions == ["tool_search_tool_regex_20251119", "tool_search_tool_regex_20251119"]


def test_anthropic_result_without_its_use_is_named_from_the_result_type() -> None:
    """The server_tool_use came in an earlier response the request does not hold."""
    result = _anthropic([BASH_RESULT], {"tools": [{"type": "code_execution_20250825"}]})
    (activity,) = result.activities
    assert (activity.name, activity.state, activity.input) == ("code_execution", "completed", None)


def test_anthropic_result_named_from_the_request_history() -> None:
    """A paused turn: the request's history holds the use, under Anthropic's name."""
    history = {
        "tools": [{"type": "code_execution_20250825", "name": "code_execution"}],
        "messages": [{"role": "assistant", "content": [BASH_USE]}],
    }
    (activity,) = _anthropic([BASH_RESULT], history).activities
    assert (activity.name, activity.input) == ("code_execution", {"command": "ls -la"})
    assert activity.payload is not None and activity.payload.version == "code_execution_20250825"


def test_anthropic_version_lookup_uses_the_wire_name() -> None:
    versions = {"code_execution": "code_execution_20250825", "web_search": "web_search_20250305"}
    assert version_for("bash_code_execution", versions) == "code_execution_20250825"
    assert version_for("text_editor_code_execution", versions) == "code_execution_20250825"
    assert version_for("web_search", versions) == "web_search_20250305"
    assert version_for("advisor", versions) is None


# -- OpenAI Responses and xAI -------------------------------------------------------------


def _responses(output: list[dict[str, Any]], provider: str = "openai") -> AssembledResponse:
    body = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "m",
        "output": output,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    chunks = RESPONSES_SHAPE.parse_response(json.dumps(body).encode(), ProviderId(provider))
    assembler = Assembler(ProviderId(provider))
    assembler.feed_all(chunks)
    return assembler.result()


def test_responses_items_take_neutral_names() -> None:
    output = [
        {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "wiki", "tools": []},
        {
            "type": "code_interpreter_call",
            "id": "ci_1",
            "status": "completed",
            "code": "print(1)",
            "container_id": "cntr_1",
            "outputs": [],
        },
    ]
    result = _responses(output)
    assert [(a.id, a.name, a.state) for a in result.activities] == [
        ("mcpl_1", "mcp", "started"),
        ("mcpl_1", "mcp", "completed"),
        ("ci_1", "code_execution", "started"),
        ("ci_1", "code_execution", "completed"),
    ]
    items = [a.payload.value for a in result.activities if a.payload is not None]
    assert items == output


def test_xai_server_side_functions_take_neutral_names() -> None:
    output = [
        {
            "type": "custom_tool_call",
            "id": "ctc_1",
            "call_id": "xs_1",
            "name": "x_keyword_search",
            "input": '{"query": "from:xai"}',
            "status": "completed",
        },
        {
            "type": "custom_tool_call",
            "id": "ctc_2",
            "call_id": "xs_2",
            "name": "view_x_video",
            "input": '{"video_url": "https://x.example/v"}',
            "status": "completed",
        },
    ]
    result = _responses(output, "xai")
    assert [(a.id, a.name, a.state) for a in result.activities] == [
        ("ctc_1", "x_search", "started"),
        ("ctc_1", "x_search", "completed"),
        ("ctc_2", "view_x_video", "started"),
        ("ctc_2", "view_x_video", "completed"),
    ]


# -- Gemini Interactions --------------------------------------------------------------------


def test_gemini_interactions_hosted_steps_take_neutral_names() -> None:
    body = {
        "id": "i1",
        "object": "interaction",
        "model": "m",
        "status": "completed",
        "steps": [
            {"type": "google_maps_call", "id": "g1", "arguments": {"query": "cafes"}},
            {"type": "google_maps_result", "call_id": "g1", "result": [{"place": "a"}]},
            {"type": "url_context_call", "id": "u1", "arguments": {"urls": ["https://a.b"]}},
            {"type": "url_context_result", "call_id": "u1", "result": []},
        ],
        "usage": {"total_input_tokens": 1, "total_output_tokens": 1},
    }
    chunks = INTERACTIONS_SHAPE.parse_response(json.dumps(body).encode(), ProviderId("google"))
    assembler = Assembler(ProviderId("google"))
    assembler.feed_all(chunks)
    assert [(a.id, a.name, a.state, a.summary) for a in assembler.result().activities] == [
        ("g1", "map_search", "started", ""),
        ("g1", "map_search", "completed", "1 result"),
        ("u1", "web_fetch", "started", ""),
        ("u1", "web_fetch", "completed", "0 results"),
    ]


# -- the whole corpus -------------------------------------------------------------------------

# Names no table maps, seen in the corpus: kept as the provider spelled them.
# view_x_video: an xAI server-side function its recording shows (issue #31),
# now recognised as hosted from the tools the response declares.
UNMAPPED_IN_CORPUS = {"advisor", "document_search", "view_x_video"}
COUNTERS_OF_NO_ACTIVITY = {SERVER_SIDE_TOOLS, SEARCH_SOURCES}


INTERACTIONS = importlib.import_module("elelem.shapes.gemini_interactions")


def _corpus_names(root: Path) -> tuple[Counter[tuple[str, str, str]], Counter[tuple[str, str]]]:
    """(shape, activity name, state) and (shape, usage counter) over every corpus
    response, through each shape as ``elelem inspect`` runs it."""
    with open(root / "INDEX.tsv", encoding="utf-8") as f:
        files = [row["local_file"] for row in csv.DictReader(f, delimiter="\t")]
    activities: Counter[tuple[str, str, str]] = Counter()
    counters: Counter[tuple[str, str]] = Counter()
    for name in files:
        for interaction in load(root / name).interactions:
            shape = detect_shape(interaction)
            if shape is None:
                continue  # an upload or listing the cassette also recorded
            # Gemini's Interactions API is parked out of the CLI: its parser
            # is read directly.
            parked = INTERACTIONS if shape == "gemini_interactions" else None
            lines = inspect_interaction(
                interaction, wire_replay=False, shape_name=shape, module=parked
            )
            for line in lines:
                if line["kind"] == "hosted":
                    activity = line["activity"]
                    activities[(shape, activity["name"], activity["state"])] += 1
                elif line["kind"] == "usage":
                    for key in line["usage"].get("hosted") or {}:
                        counters[(shape, key)] += 1
    return activities, counters


def test_every_corpus_activity_and_counter_has_a_neutral_name(corpus: Path) -> None:
    activities, counters = _corpus_names(corpus)
    names = {name for _, name, _ in activities} | {key for _, key in counters}
    # two neutral counters count no one activity: all server-side tool calls, search sources
    assert names <= set(HOSTED_ACTIVITY_NAMES) | UNMAPPED_IN_CORPUS | COUNTERS_OF_NO_ACTIVITY
    assert names.isdisjoint(PROVIDER_ACTIVITY_NAMES)
    assert activities == Counter(
        {
            ("anthropic_messages", "advisor", "started"): 2,
            ("anthropic_messages", "advisor", "completed"): 2,
            ("anthropic_messages", "code_execution", "started"): 10,
            ("anthropic_messages", "code_execution", "completed"): 10,
            ("anthropic_messages", "mcp", "started"): 2,
            ("anthropic_messages", "mcp", "completed"): 2,
            ("anthropic_messages", "tool_search", "started"): 2,
            ("anthropic_messages", "tool_search", "completed"): 2,
            ("anthropic_messages", "web_fetch", "started"): 6,
            ("anthropic_messages", "web_fetch", "completed"): 5,
            ("anthropic_messages", "web_fetch", "failed"): 1,
            ("anthropic_messages", "web_search", "started"): 24,
            ("anthropic_messages", "web_search", "completed"): 24,
            ("gemini", "code_execution", "started"): 2,
            ("gemini", "code_execution", "completed"): 1,
            ("gemini", "web_search", "started"): 4,
            ("gemini", "web_search", "completed"): 4,
            ("gemini_interactions", "web_search", "started"): 2,
            ("gemini_interactions", "web_search", "completed"): 2,
            ("openai_responses", "code_execution", "started"): 11,
            ("openai_responses", "code_execution", "completed"): 11,
            ("openai_responses", "file_search", "started"): 4,
            ("openai_responses", "file_search", "completed"): 4,
            ("openai_responses", "image_generation", "started"): 1,
            ("openai_responses", "image_generation", "completed"): 1,
            ("openai_responses", "mcp", "started"): 7,
            ("openai_responses", "mcp", "completed"): 7,
            ("openai_responses", "shell", "started"): 2,
            ("openai_responses", "shell", "completed"): 2,
            ("openai_responses", "tool_search", "started"): 2,
            ("openai_responses", "tool_search", "completed"): 2,
            ("openai_responses", "web_search", "started"): 26,
            ("openai_responses", "web_search", "completed"): 26,
            # xAI's x_search functions, hosted by what the response declares (issue #31).
            ("openai_responses", "x_search", "started"): 1,
            ("openai_responses", "x_search", "completed"): 1,
            ("openai_responses", "view_x_video", "started"): 1,
            ("openai_responses", "view_x_video", "completed"): 1,
        }
    )
    assert set(counters) == {
        ("anthropic_messages", "web_fetch"),
        ("anthropic_messages", "web_search"),
        ("openai_chat", "search_sources"),
        ("openai_chat", "web_search"),
        ("openai_responses", "code_execution"),
        ("openai_responses", "document_search"),
        ("openai_responses", "file_search"),
        ("openai_responses", "image_generation"),
        ("openai_responses", "mcp"),
        ("openai_responses", "search_sources"),
        ("openai_responses", "server_side_tools"),
        ("openai_responses", "shell"),
        ("openai_responses", "tool_search"),
        ("openai_responses", "web_search"),
        ("openai_responses", "x_search"),
    }
