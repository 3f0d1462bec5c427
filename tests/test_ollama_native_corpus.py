"""The Ollama native shape over every Ollama ``/api/chat`` recording in the corpus.

Each file must parse and ``elelem inspect`` must accept it; each response
must keep every artifact the wire holds, counted here straight from the raw
NDJSON lines (thinking, content, tool calls, finish reason, token counts,
durations); and the assistant message native replay rebuilds from a
response must equal the one the recording sent back in the next request.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import corpus_root
from elelem.cli import main
from elelem.recordings import cassettes
from elelem.shapes.ollama_native import SHAPE, assistant_wire
from elelem.stream import AssembledResponse, Assembler
from elelem.vocabulary import ProviderId, ReasoningBlock, TextBlock, ToolCallBlock

OLLAMA = ProviderId("ollama-native")


def _files() -> list[str]:
    root = corpus_root()
    with open(root / "INDEX.tsv", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [
        r["local_file"] for r in rows if r["provider"] == "ollama" and "/api/chat" in r["notes"]
    ]


FILES = _files()
PARAMS = FILES


def _calls(path: Path) -> list[cassettes.Interaction]:
    interactions = cassettes.load(path).interactions
    return [i for i in interactions if i.request is not None and i.request.path == "/api/chat"]


def _assemble(interaction: cassettes.Interaction) -> AssembledResponse:
    parser = SHAPE.new_parser(OLLAMA)
    assembler = Assembler(OLLAMA)
    for chunk in parser.open(interaction.response.status, interaction.response.headers):
        assembler.feed(chunk)
    for line in interaction.response.body.decode().splitlines():
        if line.strip():
            for chunk in parser.message("", line):
                assembler.feed(chunk)
    for chunk in parser.eof():
        assembler.feed(chunk)
    return assembler.result()


def _raw_artifacts(body: bytes) -> dict[str, Any]:
    """What the wire holds, read without the shape."""
    lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
    final = lines[-1]
    return {
        "thinking": "".join(o["message"].get("thinking") or "" for o in lines),
        "content": "".join(o["message"].get("content") or "" for o in lines),
        "calls": [c for o in lines for c in o["message"].get("tool_calls") or []],
        "done_reason": final["done_reason"],
        "counts": (final["prompt_eval_count"], final["eval_count"]),
        "final": {k: v for k, v in final.items() if k != "message"},
    }


def test_the_corpus_holds_both_ollama_recordings() -> None:
    assert sorted(Path(f).name for f in FILES) == [
        "crates__jp_llm__tests__fixtures__ollama__test_chat_completion_stream.yml",
        "crates__jp_llm__tests__fixtures__ollama__test_tool_call_reasoning.yml",
    ]


@pytest.mark.parametrize("name", PARAMS)
def test_every_response_keeps_every_artifact(corpus: Path, name: str) -> None:
    interactions = _calls(corpus / name)
    assert interactions
    for interaction in interactions:
        raw = _raw_artifacts(interaction.response.body)
        result = _assemble(interaction)
        assert result.complete
        reasoning = "".join(b.text for b in result.blocks if isinstance(b, ReasoningBlock))
        text = "".join(b.text for b in result.blocks if isinstance(b, TextBlock))
        calls = [b for b in result.blocks if isinstance(b, ToolCallBlock)]
        assert (reasoning, text) == (raw["thinking"], raw["content"])
        assert [(c.id, c.name, c.input) for c in calls] == [
            (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in raw["calls"]
        ]
        assert result.usage is not None
        assert (result.usage.input, result.usage.output) == raw["counts"]
        assert result.finish is not None and result.finish.raw == raw["done_reason"]
        assert result.finish_reason == ("tool-calls" if calls else "stop")
        (envelope,) = result.finish.payloads
        assert isinstance(envelope.value, dict)
        kept = {k: v for k, v in envelope.value.items() if k != "first_created_at"}
        assert kept == raw["final"]


def _merged_assistant(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The recorded follow-up's assistant turn as one message.

    jp's client splits one response into a message per part (thinking, then
    tool calls) and sends ``null``/``[]`` for absent fields; Ollama reads the
    merged message the same way.
    """
    merged: dict[str, Any] = {"role": "assistant", "content": ""}
    for m in messages:
        merged["content"] += m.get("content") or ""
        if m.get("thinking"):
            merged["thinking"] = merged.get("thinking", "") + m["thinking"]
        if m.get("tool_calls"):
            merged.setdefault("tool_calls", []).extend(m["tool_calls"])
    return merged


def test_native_replay_equals_the_recorded_follow_up(corpus: Path) -> None:
    path = (
        corpus / "dcdpr__jp/crates__jp_llm__tests__fixtures__ollama__test_tool_call_reasoning.yml"
    )
    if not path.exists():
        pytest.skip("recording not in this corpus")
    first, second = _calls(path)
    wire, dropped = assistant_wire(_assemble(first).to_message(), OLLAMA)
    assert dropped == []
    assert second.request is not None and isinstance(second.request.json, dict)
    sent = second.request.json["messages"]
    assistants = [m for m in sent if m["role"] == "assistant"]
    assert [m["role"] for m in sent] == ["user", "assistant", "assistant", "tool"]
    # elelem sends back the call's id and index as Ollama sent them; jp's client
    # drops both.  They must be exactly the response's, and the rest equal.
    (call,) = wire["tool_calls"]
    assert (call.pop("id"), call["function"].pop("index")) == ("call_uw6k4egz", 0)
    assert wire == _merged_assistant(assistants)


@pytest.mark.parametrize("name", PARAMS)
def test_inspect_reads_the_recording(corpus: Path, name: str) -> None:
    outcome = CliRunner().invoke(main, ["inspect", "--json", "--wire-replay", str(corpus / name)])
    assert outcome.exit_code == 0, outcome.output
    lines = [json.loads(line) for line in outcome.output.splitlines()]
    kinds = [line["kind"] for line in lines]
    assert kinds.count("finish") == kinds.count("replay") == len(_calls(corpus / name))
    assert {line["provider"] for line in lines if line["kind"] == "response"} == {"ollama-native"}
