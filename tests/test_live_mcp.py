"""`elelem live --mcp`: the MCP servers of a live session are bound as in
`ask` (elelem.cli.tools `asking_in_background`): a server's sampling is
served by `--mcp-sampling-model` and recorded, its request for input is
declined (nobody is asked during a live session) with the reason recorded.
The model is a loopback Realtime server (tests/live_servers.py) that calls
the MCP server's tool; the MCP servers are real SDK servers that ask
through 2026-07-28 `input_required` rounds."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("websockets")

from cli_helpers import base_env
from cli_helpers import run as run_process
from elelem.shapes.live_items import wav_bytes
from live_servers import ScriptedServer, kind_of_openai, openai_client_event, pcm
from test_live_cli import _answer_events, run
from test_mcp_server_requests import server_requests

HERE = Path(__file__).parent


def _script(tool: str, arguments: dict[str, Any]) -> list[tuple[str, object]]:
    # https://platform.openai.com/docs/api-reference/realtime-server-events
    call = [
        {"type": "input_audio_buffer.committed", "event_id": "e1", "item_id": "item_u",
         "previous_item_id": None},
        {"type": "response.created", "event_id": "e3", "response": {"id": "resp_1"}},
        {"type": "response.function_call_arguments.done", "event_id": "e4",
         "response_id": "resp_1", "item_id": "item_fc", "output_index": 0, "call_id": "call_1",
         "name": tool, "arguments": json.dumps(arguments)},
        {"type": "response.done", "event_id": "e5",
         "response": {"id": "resp_1", "status": "completed",
                      "usage": {"input_tokens": 50, "output_tokens": 10}}},
    ]  # fmt: skip
    return [
        ("send", [{"type": "session.created", "event_id": "e0", "session": {"id": "sess"}}]),
        ("expect", "session.update"),
        ("expect", "input_audio_buffer.commit"),
        ("expect", "response.create"),
        ("send", call),
        ("expect", "conversation.item.create"),
        ("expect", "response.create"),
        ("send", _answer_events(["Done."])),
    ]


def live_with(tmp_path: Path, server: str, tool: str, arguments: dict[str, Any], *more: str) -> Any:
    (tmp_path / "q.wav").write_bytes(wav_bytes(pcm(200, 16_000), 16_000))
    with ScriptedServer([_script(tool, arguments)], openai_client_event, kind_of_openai) as rt:
        env = base_env(tmp_path, OPENAI_API_KEY="sk-live-mcp", OPENAI_BASE_URL=rt.base_url + "/v1")
        done = run(env, "live", "-m", "openai:gpt-realtime", "--audio-in",
                   str(tmp_path / "q.wav"), "--mcp", server, *more)  # fmt: skip
        assert done.exit_code == 0, done.stderr
        outputs = [e for e in rt.received if e["type"] == "conversation.item.create"]
    (output,) = [
        e["item"]["output"] for e in outputs if e["item"]["type"] == "function_call_output"
    ]
    return env, done, output


def test_live_serves_an_mcp_servers_sampling_and_records_it(tmp_path: Path) -> None:
    server = f"{sys.executable} {HERE / 'mcp_sampling_server.py'}"
    env, done, output = live_with(tmp_path, server, "limerick", {"topic": "a"},
                                  "--mcp-sampling-model", "test")  # fmt: skip
    assert output == "test-model: Test answer to: A limerick on a"
    assert "sampled test-model for " in done.stderr
    ((method, outcome, usage),) = [
        (r["method"], r["outcome"], r["usage"]) for r in server_requests(env)
    ]
    assert (method, outcome, usage["output"]) == ("sampling/createMessage", "served", 23)


def test_live_declines_a_request_for_input_with_the_reason_recorded(tmp_path: Path) -> None:
    server = f"{sys.executable} {HERE / 'mcp_elicit_server.py'}"
    env, _done, output = live_with(tmp_path, server, "book_table", {})
    assert json.loads(output) == {"action": "decline", "content": None}
    ((request),) = server_requests(env)
    assert (request["method"], request["outcome"]) == ("elicitation/create", "decline")
    assert request["detail"]["reason"] == "a live session asks nobody"
    assert run_process(env, "export", "last").stdout.count("sk-live-mcp") == 0
