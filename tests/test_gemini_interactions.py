"""Gemini's Interactions API (response side) over its corpus recordings and rules."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from elelem.cli import main
from elelem.cli.inspect import inspect_interaction
from elelem.errors import (
    InvalidRequestError,
    MalformedStreamError,
)
from elelem.recordings import cassettes
from elelem.shapes.gemini_interactions import SHAPE, interaction_steps
from elelem.stream import AssembledResponse, Assembler, Chunk
from elelem.vocabulary import (
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    Source,
    TextBlock,
    ToolCallBlock,
    neutral_activity_name,
)
from test_gemini_corpus import INTERACTIONS_FILES

G = ProviderId("google")
PARAMS = INTERACTIONS_FILES


def _chunks(interaction: cassettes.Interaction) -> list[Chunk]:
    response = interaction.response
    if not response.streamed:
        return SHAPE.parse_response(response.body, G)
    parser = SHAPE.new_parser(G)
    out = list(parser.open(200, {}))
    for frame in cassettes.sse_frames(response.body):
        out += parser.message(frame.event, frame.data)
    return out + list(parser.eof())


def _assemble(chunks: list[Chunk]) -> AssembledResponse:
    assembler = Assembler(G)
    assembler.feed_all(chunks)
    return assembler.result()


def _raw(interaction: cassettes.Interaction) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The steps and the final interaction, rebuilt straight from the raw events."""
    response = interaction.response
    if not response.streamed:
        body = response.json()
        assert isinstance(body, dict)
        return body["steps"], body
    steps: dict[int, dict[str, Any]] = {}
    final: dict[str, Any] = {}
    for frame in cassettes.sse_frames(response.body):
        event = json.loads(frame.data)
        kind = event["event_type"]
        if kind == "step.start":
            steps[event["index"]] = dict(event["step"])
        elif kind == "step.delta":
            step, delta = steps[event["index"]], event["delta"]
            if delta.get("type") == "text":
                content = step.setdefault("content", [{"type": "text", "text": ""}])
                content[0]["text"] += delta["text"]
            elif "annotations" in delta:
                step["content"][0].setdefault("annotations", []).extend(delta["annotations"])
            elif delta.get("type") == "thought_signature":
                step["signature"] = delta["signature"]
            elif delta.get("type") == "arguments_delta":
                step["arguments"] = json.loads(delta["arguments"])
            else:
                step.update({k: v for k, v in delta.items() if k != "type"})
        elif kind == "interaction.completed":
            final = event["interaction"]
    return [steps[i] for i in sorted(steps)], final


@pytest.mark.parametrize("name", PARAMS)
def test_every_interaction_parses_loses_nothing_and_rebuilds_its_steps(
    name: str, corpus: Path
) -> None:
    (interaction,) = cassettes.load(corpus / name).interactions
    result = _assemble(_chunks(interaction))
    steps, final = _raw(interaction)
    kinds = [s["type"] for s in steps]
    assert len([b for b in result.blocks if isinstance(b, ReasoningBlock)]) == kinds.count(
        "thought"
    )
    texts = [b for b in result.blocks if isinstance(b, TextBlock)]
    assert [b.text for b in texts] == [
        s["content"][0]["text"] for s in steps if s["type"] == "model_output"
    ]
    notes = [
        a
        for s in steps
        if s["type"] == "model_output"
        for a in s["content"][0].get("annotations", [])
    ]
    got = [a for b in texts for a in b.attributions]
    assert [(a.range, a.source) for a in got] == [
        ((n["start_index"], n["end_index"]), Source(n["url"], n["title"])) for n in notes
    ]
    calls = [b for b in result.blocks if isinstance(b, ToolCallBlock)]
    assert [(c.id, c.name, c.input) for c in calls] == [
        (s["id"], s["name"], s["arguments"]) for s in steps if s["type"] == "function_call"
    ]
    # Hosted steps (google_search_call / _result, …), named from the step type
    # through the documented table of neutral names.
    assert [(a.id, a.name, a.state) for a in result.activities] == [
        (
            s.get("id") or s["call_id"],
            neutral_activity_name(s["type"].rpartition("_")[0]),
            "started" if s["type"].endswith("_call") else "completed",
        )
        for s in steps
        if s["type"].endswith(("_call", "_result")) and not s["type"].startswith("function_")
    ]
    assert result.usage is not None and result.usage.raw == final["usage"]
    assert result.finish is not None and result.finish.raw == final["status"]
    wire, dropped = interaction_steps(result.to_message(), G)
    assert dropped == ()
    assert wire == {"steps": steps}


@pytest.mark.parametrize("name", PARAMS)
def test_every_interactions_recording_reads_and_inspect_and_demo_read_it(
    name: str, corpus: Path
) -> None:
    # The parser reads every recording (with the wire replay of its steps)...
    (interaction,) = cassettes.load(corpus / name).interactions
    module = importlib.import_module("elelem.shapes.gemini_interactions")
    lines = inspect_interaction(
        interaction, wire_replay=True, shape_name="gemini_interactions", module=module
    )
    kinds = [line["kind"] for line in lines]
    assert (kinds[0], kinds[-2], kinds[-1]) == ("response", "finish", "replay")
    # ... and the command reads it as the catalog's shape (#42: no longer parked).
    result = CliRunner().invoke(main, ["inspect", "--json", str(corpus / name)])
    assert result.exit_code == 0, result.stderr
    shown = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["kind"] for line in shown][-1] == "finish"


def _events(
    *steps: tuple[dict[str, Any], list[dict[str, Any]]], status: str = "completed"
) -> list[Chunk]:
    parser = SHAPE.new_parser(G)
    out = list(
        parser.message(
            "",
            json.dumps(
                {"event_type": "interaction.created", "interaction": {"id": "i1", "model": "m"}}
            ),
        )
    )
    for n, (step, deltas) in enumerate(steps):
        out += parser.message(
            "", json.dumps({"event_type": "step.start", "index": n, "step": step})
        )
        for delta in deltas:
            out += parser.message(
                "", json.dumps({"event_type": "step.delta", "index": n, "delta": delta})
            )
        out += parser.message("", json.dumps({"event_type": "step.stop", "index": n}))
    done = {
        "event_type": "interaction.completed",
        "interaction": {
            "id": "i1",
            "status": status,
            "usage": {
                "total_input_tokens": 9,
                "total_cached_tokens": 4,
                "total_output_tokens": 2,
                "total_thought_tokens": 1,
            },
        },
    }
    out += parser.message("", json.dumps(done))
    out += parser.message("", "[DONE]")
    return out + list(parser.eof())


def test_annotation_byte_offsets_become_code_points_and_a_cut_character_drops_the_range() -> None:
    text = "Ünïcode ☕ facts."
    start = text.encode().index(b"facts")
    good = {
        "type": "url_citation",
        "url": "https://a.example",
        "title": "a",
        "start_index": start,
        "end_index": start + 5,
    }
    cut = {
        "type": "url_citation",
        "url": "https://b.example",
        "title": "b",
        "start_index": 1,
        "end_index": 4,
    }
    result = _assemble(
        _events(
            (
                {"type": "model_output"},
                [
                    {"type": "text", "text": text},
                    {"type": "text_annotation_delta", "annotations": [good, cut]},
                ],
            )
        )
    )
    (block,) = result.blocks
    assert isinstance(block, TextBlock)
    assert [a.range for a in block.attributions] == [(10, 15), None]
    assert text[10:15] == "facts"
    usage = result.usage
    assert usage is not None and (usage.input, usage.cache_read, usage.output, usage.reasoning) == (
        5,
        4,
        2,
        1,
    )


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        ("completed", "stop"),
        ("requires_action", "tool-calls"),
        ("incomplete", "max-tokens"),
        ("cancelled", "aborted"),
        ("paused_for_x", "paused_for_x"),
    ],
)
def test_final_status_is_the_finish_reason(status: str, reason: str) -> None:
    result = _assemble(_events(status=status))
    assert result.finish is not None and (result.finish.reason, result.finish.raw) == (
        reason,
        status,
    )


def test_an_unknown_step_is_kept_whole_and_replayed() -> None:
    step = {"type": "image_generation", "id": "g1"}
    result = _assemble(_events((step, [{"type": "image", "data": "AA=="}])))
    wire, _ = interaction_steps(result.to_message(), G)
    assert wire == {"steps": [{"type": "image_generation", "id": "g1", "data": "AA=="}]}


def test_error_event_and_truncation_and_bad_frames() -> None:
    parser = SHAPE.new_parser(G)
    with pytest.raises(InvalidRequestError, match="bad thing"):
        parser.message(
            "",
            json.dumps(
                {
                    "event_type": "error",
                    "error": {"code": "INVALID_ARGUMENT", "message": "bad thing"},
                }
            ),
        )
    parser = SHAPE.new_parser(G)
    parser.message(
        "", json.dumps({"event_type": "interaction.created", "interaction": {"id": "i"}})
    )
    # Without interaction.completed: nothing, and the driver's incomplete-stream error.
    assert parser.eof() == ()
    with pytest.raises(MalformedStreamError, match=r"before interaction\.created"):
        SHAPE.new_parser(G).message("", json.dumps({"event_type": "step.stop", "index": 0}))


def test_a_thought_signature_that_is_no_string_is_recorded_malformed_and_not_replayed() -> None:
    # ai.google.dev/gemini-api/docs/interactions: a thought step carries its
    # signature as a string; one that is not is recorded malformed on the
    # block (issue #42's one payload policy), never replayed as it came; a
    # signature payload that is no string (a hand-built log) is a drop record.
    odd = {"type": "thought", "signature": 5}
    result = _assemble(
        _events((odd, [{"type": "thought_summary", "content": {"type": "text", "text": "hm"}}]))
    )
    wire, dropped = interaction_steps(result.to_message(), G)
    assert "signature" not in wire["steps"][0]
    assert [(d.where, d.what, d.why, d.detail) for d in dropped] == [
        (
            "content[0]",
            "signature",
            "malformed",
            "google signature at frame 4: thought.signature: a number, not a string",
        )
    ]
    bad = ReasoningBlock("hm", payloads=(ProviderPayload(G, "signature", None, ["x"]),))
    wire, dropped = interaction_steps(Message("assistant", (bad,), provider=G), G)
    assert "signature" not in wire["steps"][0]
    assert [(d.where, d.what, d.detail) for d in dropped] == [
        ("content[0]", "signature", "not a string: the thought goes unsigned")
    ]


def test_arguments_given_whole_at_the_step_start_are_the_calls() -> None:
    from elelem.stream import ToolCallDelta

    call = {
        "type": "function_call",
        "id": "c1",
        "name": "get_weather",
        "arguments": {"city": "Oslo"},
    }
    deltas = [c for c in _events((call, [])) if isinstance(c, ToolCallDelta)]
    assert [json.loads(d.arguments) for d in deltas] == [{"city": "Oslo"}]
