"""Usage that adds up, over every recorded response of the corpus.

Where the wire states a total, ``Usage.total`` equals it exactly; every
counter any recording shows is accounted for (in a neutral field, in
``hosted``, or as a named part of one of those); and the cases the issue
names come out as they should.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from elelem.cli.inspect import detect_shape, inspect_interaction
from elelem.errors import ElelemError
from elelem.recordings.cassettes import load
from shape_modules import shape_module

TOTALS = {
    "openai_chat": "total_tokens",
    "openai_responses": "total_tokens",
    "gemini": "totalTokenCount",
    "gemini_interactions": "total_tokens",
    "bedrock_converse": "totalTokens",
}
"""The wire's own total, per shape (Anthropic and Ollama state none)."""

PART = "a part of a counter above (a breakdown by kind, modality or cache lifetime)"
NOT_TOKENS = "not a usage count (a price or a time)"

ACCOUNTED: dict[str, dict[str, str]] = {
    "anthropic_messages": {
        "input_tokens": "input",
        "output_tokens": "output + reasoning",
        "output_tokens_details.thinking_tokens": "reasoning",
        "cache_read_input_tokens": "cache_read",
        "cache_creation_input_tokens": "cache_write",
        "cache_creation.ephemeral_5m_input_tokens": PART,
        "cache_creation.ephemeral_1h_input_tokens": PART,
        "server_tool_use.web_search_requests": "hosted.web_search",
        "server_tool_use.web_fetch_requests": "hosted.web_fetch",
        # the per-model-call split of the same totals (advisor runs)
        "iterations.[].input_tokens": PART,
        "iterations.[].output_tokens": PART,
        "iterations.[].cache_read_input_tokens": PART,
        "iterations.[].cache_creation_input_tokens": PART,
        "iterations.[].cache_creation.ephemeral_5m_input_tokens": PART,
        "iterations.[].cache_creation.ephemeral_1h_input_tokens": PART,
    },
    "openai_responses": {
        "input_tokens": "input + cache_read + cache_write",
        "input_tokens_details.cached_tokens": "cache_read",
        "input_tokens_details.cache_write_tokens": "cache_write",
        "output_tokens": "output + reasoning",
        "output_tokens_details.reasoning_tokens": "reasoning",
        "total_tokens": "total",
        "num_server_side_tools_used": "hosted.server_side_tools",
        "num_sources_used": "hosted.search_sources",
        "server_side_tool_usage_details.web_search_calls": "hosted.web_search",
        "server_side_tool_usage_details.x_search_calls": "hosted.x_search",
        "server_side_tool_usage_details.code_interpreter_calls": "hosted.code_execution",
        "server_side_tool_usage_details.file_search_calls": "hosted.file_search",
        "server_side_tool_usage_details.mcp_calls": "hosted.mcp",
        "server_side_tool_usage_details.document_search_calls": "hosted.document_search",
    },
    "openai_chat": {
        "prompt_tokens": "input + cache_read + cache_write",
        "prompt_tokens_details.cached_tokens": "cache_read",
        "prompt_tokens_details.cache_write_tokens": "cache_write",
        "prompt_cache_hit_tokens": "cache_read",
        "prompt_cache_miss_tokens": PART,
        "prompt_tokens_details.audio_tokens": PART,
        "prompt_tokens_details.image_tokens": PART,
        "prompt_tokens_details.text_tokens": PART,
        "prompt_tokens_details.video_tokens": PART,
        "completion_tokens": "output + reasoning",
        "completion_tokens_details.reasoning_tokens": "reasoning",
        "completion_tokens_details.audio_tokens": PART,
        "completion_tokens_details.image_tokens": PART,
        "completion_tokens_details.accepted_prediction_tokens": PART,
        "completion_tokens_details.rejected_prediction_tokens": PART,
        "total_tokens": "total",
        "num_sources_used": "hosted.search_sources",
        "server_tool_use_details.web_search_requests": "hosted.web_search",
        # OpenRouter's count of the tool calls behind those requests
        "server_tool_use_details.tool_calls_requested": PART,
        "server_tool_use_details.tool_calls_executed": PART,
        "cost": NOT_TOKENS,
        "cost_in_usd_ticks": NOT_TOKENS,
        "cost_details.upstream_inference_cost": NOT_TOKENS,
        "cost_details.upstream_inference_prompt_cost": NOT_TOKENS,
        "cost_details.upstream_inference_completions_cost": NOT_TOKENS,
        "prompt_time": NOT_TOKENS,
        "completion_time": NOT_TOKENS,
        "queue_time": NOT_TOKENS,
        "total_time": NOT_TOKENS,
    },
    "gemini": {
        "promptTokenCount": "input + cache_read",
        "promptTokensDetails.[].tokenCount": PART,
        "candidatesTokenCount": "output",
        "candidatesTokensDetails.[].tokenCount": PART,
        "thoughtsTokenCount": "reasoning",
        "toolUsePromptTokenCount": "input",
        "toolUsePromptTokensDetails.[].tokenCount": PART,
        "totalTokenCount": "total",
    },
    "gemini_interactions": {
        "total_input_tokens": "input + cache_read",
        "total_cached_tokens": "cache_read",
        "input_tokens_by_modality.[].tokens": PART,
        "total_output_tokens": "output",
        "total_thought_tokens": "reasoning",
        "total_tool_use_tokens": "input",
        "tool_use_tokens_by_modality.[].tokens": PART,
        "total_tokens": "total",
    },
    "bedrock_converse": {
        "inputTokens": "input",
        "outputTokens": "output",
        "totalTokens": "total",
    },
    "ollama_native": {
        "prompt_eval_count": "input",
        "eval_count": "output",
    },
}
"""Where every counter the corpus shows goes."""


def counters(obj: Any, prefix: str = "") -> Iterator[tuple[str, int | float]]:
    """The numeric leaves of a usage object, by dotted path (lists as ``[]``)."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from counters(value, f"{prefix}{key}.")
    elif isinstance(obj, list):
        for value in obj:
            yield from counters(value, f"{prefix}[].")
    elif isinstance(obj, int | float) and not isinstance(obj, bool):
        yield prefix[:-1], obj


def corpus_usages(corpus: Path) -> Iterator[tuple[str, int, str, dict[str, Any]]]:
    """``(file, interaction, shape, usage)`` for every response with usage."""
    with (corpus / "INDEX.tsv").open() as index:
        rows = list(csv.DictReader(index, delimiter="\t"))
    for row in rows:
        name = row["local_file"]
        try:
            recording = load(corpus / name)
        except ElelemError:
            continue  # a format nothing reads yet: the cassette tests say so
        for interaction in recording.interactions:
            shape = detect_shape(interaction)
            if shape is None:
                continue
            try:
                lines = inspect_interaction(
                    interaction, wire_replay=False, shape_name=shape, module=shape_module(shape)
                )
            except ElelemError:
                continue  # the contract tests pin what each such file gives
            for line in lines:
                if line["kind"] == "usage":
                    yield name, interaction.index, shape, line["usage"]


@pytest.fixture(scope="module")
def usages(corpus: Path) -> list[tuple[str, int, str, dict[str, Any]]]:
    return list(corpus_usages(corpus))


def total(usage: dict[str, Any]) -> int:
    return sum(usage[k] for k in ("input", "output", "cache_read", "cache_write", "reasoning"))


def test_the_total_equals_the_wires_wherever_it_states_one(
    usages: list[tuple[str, int, str, dict[str, Any]]],
) -> None:
    checked = []
    for name, n, shape, usage in usages:
        key = TOTALS.get(shape)
        raw = usage["raw"]
        if key is None or not isinstance(raw, dict) or not isinstance(raw.get(key), int):
            continue
        checked.append((name, n, total(usage), raw[key]))
    wrong = [c for c in checked if c[2] != c[3]]
    assert wrong == []
    assert len(checked) == 110


def test_every_counter_the_corpus_shows_is_accounted_for(
    usages: list[tuple[str, int, str, dict[str, Any]]],
) -> None:
    seen: dict[str, set[str]] = {}
    for _name, _n, shape, usage in usages:
        if isinstance(usage["raw"], dict):
            for path, _ in counters(usage["raw"]):
                seen.setdefault(shape, set()).add(path)
    unaccounted = {
        shape: sorted(paths - ACCOUNTED.get(shape, {}).keys()) for shape, paths in seen.items()
    }
    assert {s: p for s, p in unaccounted.items() if p} == {}
    assert sorted(seen) == sorted(ACCOUNTED)


def usage_of(
    usages: list[tuple[str, int, str, dict[str, Any]]], suffix: str, n: int = 0
) -> dict[str, Any]:
    (found,) = [u for name, i, _, u in usages if name.endswith(suffix) and i == n]
    return {k: v for k, v in found.items() if k != "raw"}


def test_the_named_cases(usages: list[tuple[str, int, str, dict[str, Any]]]) -> None:
    # Anthropic thinking tokens are reasoning, out of output_tokens (1,699 = 1,560 + 139).
    assert usage_of(usages, "anthropic-claude-opus-5-reasoning-high.1.json") == {
        "input": 51,
        "output": 1560,
        "cache_read": 0,
        "cache_write": 0,
        "reasoning": 139,
        "hosted": {},
    }
    # Gemini's tool-use prompt tokens are input: 17 + 102 + 241 + 412 = 772 on the wire.
    gemini = usage_of(usages, "test_google__test_google_model_web_search_tool_stream.yaml")
    assert (gemini["input"], gemini["output"], gemini["reasoning"], total(gemini)) == (
        119,
        241,
        412,
        772,
    )
    # xAI's count of every server-side tool call is hosted, beside the per-tool counters.
    xai = usage_of(usages, "xai-x-search-tool.chunks.txt")
    assert xai["hosted"] == {
        "web_search": 0,
        "x_search": 1,
        "code_execution": 0,
        "file_search": 0,
        "mcp": 0,
        "document_search": 0,
        "server_side_tools": 6,
        "search_sources": 0,
    }
    # OpenAI counts no hosted calls in usage: they are the output's six
    # completed web_search_call items (billed per call).
    openai = usage_of(usages, "openai-web-search-tool.1.chunks.txt")
    assert openai["hosted"] == {"web_search": 6}
    # OpenRouter passing on a reasoning count larger than completion_tokens:
    # reasoning is bounded by it, so 42 + 52 = 94 as the wire says.
    router = usage_of(usages, "openrouter__test_multi_turn_conversation.yml", 1)
    assert (router["input"], router["output"], router["reasoning"]) == (42, 0, 52)
