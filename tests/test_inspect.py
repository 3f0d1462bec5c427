"""``elelem inspect``: exact NDJSON on small recordings, exit 0 on the whole
Anthropic corpus, one-line errors with exit 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import corpus_root
from elelem.cli import main

# The console script installed beside this interpreter (pyproject: elelem = "elelem.cli:main").
ELELEM = str(Path(sys.executable).parent / "elelem")

SIG_STREAM = "\n".join(
    json.dumps(e, separators=(",", ":"))
    for e in [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]
)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def lines(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_inspect_prints_the_specified_ndjson(tmp_path: Path) -> None:
    path = tmp_path / "one.chunks.txt"
    path.write_text(SIG_STREAM + "\n")
    code, out, err = run("inspect", "--json", str(path))
    assert (code, err) == (0, "")
    assert lines(out) == [
        {
            "kind": "response",
            "interaction": 0,
            "provider": "anthropic",
            "response_id": "msg_1",
            "model": "claude-x",
        },
        {
            "kind": "block",
            "interaction": 0,
            "block": {
                "type": "text",
                "text": "hi",
                "attributions": [],
                "payloads": [],
                "complete": True,
            },
        },
        {
            "kind": "usage",
            "interaction": 0,
            "usage": {
                "input": 10,
                "output": 5,
                "cache_read": 0,
                "cache_write": 0,
                "reasoning": 0,
                "hosted": {},
                "raw": {"input_tokens": 10, "output_tokens": 5},
            },
        },
        {"kind": "finish", "interaction": 0, "reason": "stop"},
    ]


def test_wire_replay_follows_each_response(tmp_path: Path) -> None:
    path = tmp_path / "two.chunks.txt"
    path.write_text(SIG_STREAM + "\n" + SIG_STREAM.replace("msg_1", "msg_2") + "\n")
    code, out, _ = run("inspect", "--json", "--wire-replay", str(path))
    assert code == 0
    objs = lines(out)
    assert [(o["kind"], o["interaction"]) for o in objs] == [
        ("response", 0),
        ("block", 0),
        ("usage", 0),
        ("finish", 0),
        ("replay", 0),
        ("response", 1),
        ("block", 1),
        ("usage", 1),
        ("finish", 1),
        ("replay", 1),
    ]
    assert objs[4]["wire"] == {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}


def test_hosted_and_citation_lines(tmp_path: Path) -> None:
    message = {
        "id": "msg_h",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "stop_reason": "end_turn",
        "usage": {
            "input_tokens": 1,
            "output_tokens": 2,
            "server_tool_use": {"web_search_requests": 1},
        },
        "content": [
            {
                "type": "server_tool_use",
                "id": "srv_1",
                "name": "web_search",
                "input": {"query": "q"},
            },
            {
                "type": "web_search_tool_result",
                "tool_use_id": "srv_1",
                "content": [
                    {"type": "web_search_result", "url": "https://a.example/", "title": "A"},
                ],
            },
            {
                "type": "text",
                "text": "cited",
                "citations": [
                    {
                        "type": "web_search_result_location",
                        "url": "https://a.example/",
                        "title": "A",
                        "cited_text": "quote",
                        "encrypted_index": "EI",
                    }
                ],
            },
        ],
    }
    path = tmp_path / "h.json"
    path.write_text(json.dumps(message))
    code, out, _ = run("inspect", "--json", str(path))
    assert code == 0
    objs = lines(out)
    assert [o["kind"] for o in objs] == ["response", "hosted", "hosted", "block", "usage", "finish"]
    started, completed, block = objs[1]["activity"], objs[2]["activity"], objs[3]["block"]
    assert started == {
        "type": "hosted",
        "id": "srv_1",
        "name": "web_search",
        "state": "started",
        "input": {"query": "q"},
        "summary": "",
        "payload": {
            "provider": "anthropic",
            "format": "server_tool_use",
            "version": None,
            "value": message["content"][0],
        },
    }
    assert (completed["state"], completed["summary"]) == ("completed", "1 result")
    assert block["attributions"] == [
        {
            "source": {"url": "https://a.example/", "title": "A"},
            "excerpt": "quote",
            "range": None,
            "replay": {
                "provider": "anthropic",
                "format": "citation",
                "version": None,
                "value": message["content"][2]["citations"][0],
            },
            "complete": True,
        }
    ]
    assert objs[4]["usage"]["hosted"] == {"web_search": 1}


def test_recorded_error_event_is_an_error_line(tmp_path: Path) -> None:
    body = (
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_e",'
        '"model":"m","content":[],"usage":{"input_tokens":1,"output_tokens":0}}}\n\n'
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
        '"message":"Overloaded"}}\n\n'
    )
    path = tmp_path / "err.bin"
    path.write_text(body)
    code, out, _ = run("inspect", "--json", str(path))
    assert code == 0
    objs = lines(out)
    assert objs[0]["kind"] == "response"
    assert objs[-1] == {
        "kind": "error",
        "interaction": 0,
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


def test_output_is_ascii_so_text_cannot_drive_the_terminal(tmp_path: Path) -> None:
    evil = "a\x1b]8;;http://x\x07b\u202ec\x7f\u0085"
    path = tmp_path / "e.chunks.txt"
    path.write_text(SIG_STREAM.replace('"text":"hi"', '"text":' + json.dumps(evil)) + "\n")
    code, out, _ = run("inspect", "--json", str(path))
    assert code == 0
    assert out.isascii()
    assert not any(ch in out for ch in "\x1b\x07\x7f")
    assert lines(out)[1]["block"]["text"] == evil


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("not.txt", "hello\n", "unknown recording format"),
        ("t.json", '{"id": "msg_1", "content": [', "truncated or malformed JSON body"),
        ("cut.chunks.txt", SIG_STREAM.rsplit("\n", 1)[0] + "\n", "without a terminal event"),
        ("cut2.chunks.txt", SIG_STREAM[:-20] + "\n", "line 6 is not a JSON payload"),
        ("x.json", '{"something": "else"}', "cannot tell its wire shape"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, name: str, content: str, problem: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    code, out, err = run("inspect", "--json", str(path))
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"elelem: {path}: ")
    assert problem in err


def test_shape_not_built_yet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Shape detection is a table: a detected shape the catalog has not got is named."""
    from elelem.providers import recognize

    monkeypatch.setattr(
        recognize,
        "PAYLOAD_RULES",
        [(lambda p: "future" in p, "future_shape"), *recognize.PAYLOAD_RULES],
    )
    path = tmp_path / "f.json"
    path.write_text('{"future": true}')
    code, out, err = run("inspect", "--json", str(path))
    assert (code, out) == (2, "")
    assert err == f"elelem: {path}: interaction 0: shape future_shape not supported yet\n"


def test_missing_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    code, out, err = run("inspect", "--json", str(tmp_path / "none.yaml"))
    assert (code, out) == (2, "")
    assert err == f"elelem: {tmp_path / 'none.yaml'}: cannot read: No such file or directory\n"


def _anthropic_files() -> list[str]:
    root = corpus_root()
    rows = [ln.split("\t") for ln in (root / "INDEX.tsv").read_text().splitlines()[1:]]
    return [row[0] for row in rows if row[4] == "anthropic"]


@pytest.mark.parametrize("name", _anthropic_files())
def test_inspect_every_anthropic_corpus_file(corpus: Path, name: str) -> None:
    code, out, err = run("inspect", "--json", "--wire-replay", str(corpus / name))
    assert (code, err) == (0, ""), err
    objs = lines(out)
    kinds = {o["kind"] for o in objs}
    assert kinds & {"response", "error"}
    for obj in objs:
        if obj["kind"] == "response":
            assert obj["provider"] == "anthropic"


SUBPROCESS_FILES = [
    "pydantic__pydantic-ai/tests__models__cassettes__test_anthropic__test_pause_turn_web_search_streaming_vcr.yaml",
    "vercel__ai/packages__anthropic__src____fixtures____anthropic-mcp.1.chunks.txt",
    "dcdpr__jp/crates__jp_llm__tests__fixtures__anthropic__test_redacted_thinking.yml",
]


@pytest.mark.parametrize("name", SUBPROCESS_FILES)
def test_console_script_runs_as_a_process(corpus: Path, name: str) -> None:
    proc = subprocess.run(
        [ELELEM, "inspect", "--json", str(corpus / name)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    objs = lines(proc.stdout)
    assert objs[0]["kind"] == "response"
    assert objs[-1]["kind"] == "finish"


def test_pause_turn_in_corpus_reports_paused(corpus: Path) -> None:
    code, out, _ = run("inspect", "--json", str(corpus / SUBPROCESS_FILES[0]))
    assert code == 0
    finishes = [o["reason"] for o in lines(out) if o["kind"] == "finish"]
    assert finishes == ["paused", "stop"]


def test_process_error_has_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{")
    proc = subprocess.run(
        [ELELEM, "inspect", "--json", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"elelem: {path}: truncated or malformed JSON body\n"


SETUP_AND_CALL = """\
interactions:
- request:
    headers: {}
    method: POST
    uri: https://api.anthropic.com/v1/files
  response:
    headers:
      content-type:
      - application/json
    parsed_body:
      id: file_1
    status:
      code: 200
      message: OK
- request:
    headers: {}
    method: POST
    parsed_body:
      model: claude-x
    uri: https://api.anthropic.com/v1/messages
  response:
    headers:
      content-type:
      - application/json
    parsed_body:
      id: msg_9
      type: message
      role: assistant
      model: claude-x
      content: []
      stop_reason: end_turn
      usage:
        input_tokens: 1
        output_tokens: 0
    status:
      code: 200
      message: OK
version: 1
"""


def test_setup_calls_beside_model_calls_are_reported_as_exchanges(tmp_path: Path) -> None:
    path = tmp_path / "setup.yaml"
    path.write_text(SETUP_AND_CALL)
    code, out, _ = run("inspect", "--json", str(path))
    assert code == 0
    objs = lines(out)
    assert objs[0] == {
        "kind": "exchange",
        "interaction": 0,
        "exchange": "file-upload",
        "method": "POST",
        "path": "/v1/files",
        "status": 200,
        "provider": "anthropic",
        "file_id": "file_1",
        "purpose": None,
        "bytes": None,
    }
    assert objs[1] == {
        "kind": "response",
        "interaction": 1,
        "provider": "anthropic",
        "response_id": "msg_9",
        "model": "claude-x",
    }
    assert [o["kind"] for o in objs[2:]] == ["usage", "finish"]


def test_a_recording_without_a_model_call_is_still_read(tmp_path: Path) -> None:
    # Setup calls only (two file uploads, one unknown call): each is shown,
    # nothing is refused.
    setup = SETUP_AND_CALL.split("- request:")[1]
    unknown = setup.replace("/v1/files", "/v1/skills")
    path = tmp_path / "setup-only.yaml"
    path.write_text(
        f"interactions:\n- request:{setup}- request:{setup}- request:{unknown}version: 1\n"
    )
    code, out, err = run("inspect", "--json", str(path))
    assert (code, err) == (0, "")
    objs = lines(out)
    assert [o["exchange"] for o in objs] == ["file-upload", "file-upload", "unknown"]
    assert objs[2] == {
        "kind": "exchange",
        "interaction": 2,
        "exchange": "unknown",
        "method": "POST",
        "path": "/v1/skills",
        "status": 200,
        "provider": None,
    }
    code, out, err = run("inspect", str(path))
    assert out.splitlines()[-1] == "interaction 2: unknown: POST /v1/skills -> 200"


def test_inspect_prints_a_human_summary_by_default(corpus: Path) -> None:
    """Without --json: per interaction the blocks by kind, hosted calls,
    citations, payloads, usage and finish (the counts docs/cli.md promises)."""
    name = (
        "vercel__ai/packages__anthropic__src____fixtures____anthropic-web-search-tool.1.chunks.txt"
    )
    code, out, err = run("inspect", str(corpus / name))
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "interaction 0: anthropic claude-sonnet-4-20250514",
        "  blocks: 19 text",
        "  hosted calls: 1 web_search",
        "  citations: 14 (4 sources)",
        "  payloads: 2 kept for replay",
        "  usage: input 15,665, output 795, web_search 1",
        "  finish: stop",
    ]


def test_inspect_summary_names_skipped_calls_and_reasoning(corpus: Path) -> None:
    name = "dcdpr__jp/crates__jp_llm__tests__fixtures__anthropic__test_redacted_thinking.yml"
    code, out, _ = run("inspect", "--wire-replay", str(corpus / name))
    assert code == 0
    assert out.splitlines() == [
        "interaction 0: anthropic claude-haiku-4-5-20251001",
        "  blocks: 1 reasoning, 1 text",
        "  payloads: 1 kept for replay",
        "  usage: input 93, output 382",
        "  finish: stop",
        "  native replay: built (--json shows it)",
        "interaction 1: anthropic claude-haiku-4-5-20251001",
        "  blocks: 1 text",
        "  usage: input 248, output 270",
        "  finish: stop",
        "  native replay: built (--json shows it)",
    ]
