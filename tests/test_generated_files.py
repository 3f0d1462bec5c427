"""Files hosted code execution made, found in a conversation and fetched
into its store on request (bounded), through the library and the CLI, on
loopback servers.

Wire examples: Anthropic's code execution tool page
(https://docs.claude.com/en/docs/agents-and-tools/tool-use/code-execution-tool,
"Retrieve generated files": a ``bash_code_execution_tool_result`` whose
result holds ``{"type": "bash_code_execution_output", "file_id": …}``, the
bytes from ``GET /v1/files/{file_id}/content`` with the ``files-api-2025-04-14``
beta); OpenAI's code interpreter guide
(https://platform.openai.com/docs/guides/tools-code-interpreter: the answer
cites a made file with a ``container_file_citation`` annotation naming
``container_id``, ``file_id`` and ``filename``; the bytes from ``GET
/v1/containers/{container_id}/files/{file_id}/content``,
https://platform.openai.com/docs/api-reference/container-files).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from elelem import Client
from elelem.conversation import Conversation, SQLiteStore
from elelem.conversation.generated import GeneratedFileBody
from elelem.errors import LimitExceededError
from elelem.providers import load_catalog
from elelem.providers.generated import fetch_generated, generated_files
from elelem.render.markdown import conversation_markdown
from elelem.testing.servers import LoopbackServer, Reply, Send
from elelem.turns.toolloop import run
from elelem.vocabulary import CodeExecution, DocumentBlock, ImageBlock
from elelem.wire.files import GeneratedFile
from test_block_and_tool_tables import PNG
from toolloop_wires import CONFIG, _responses, _sse

FILE_ID = "file_011CNha8iCJcU1wXNR6q4V8w"
RUN = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "bash_code_execution",
       "input": {"command": "python plot.py"}}  # fmt: skip
RESULT = {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_1",
          "content": {"type": "bash_code_execution_result", "stdout": "saved chart.png",
                      "stderr": "", "return_code": 0,
                      "content": [{"type": "bash_code_execution_output", "file_id": FILE_ID}]}}  # fmt: skip


def _anthropic_answer() -> Reply:
    start = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
             "content": [], "stop_reason": None,
             "usage": {"input_tokens": 10, "output_tokens": 1}}  # fmt: skip
    frames: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    frames += [
        {"type": "content_block_start", "index": 0, "content_block": {**RUN, "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": json.dumps(RUN["input"])}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": RESULT},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 2,
         "delta": {"type": "text_delta", "text": "The chart is saved."}},
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]  # fmt: skip
    return _sse(frames)


def _metadata() -> Reply:
    # GET /v1/files/{id}: the file object (https://docs.claude.com/en/api/files-metadata).
    meta = {"type": "file", "id": FILE_ID, "filename": "chart.png", "mime_type": "image/png",
            "size_bytes": len(PNG), "created_at": "2026-12-05T01:00:00Z", "downloadable": True}  # fmt: skip
    return Reply(200, {"content-type": "application/json"}, (Send(json.dumps(meta).encode()),))


def _file(data: bytes, media_type: str, **more: Any) -> Reply:
    return Reply(200, {"content-type": media_type, **more.pop("headers", {})},
                 (Send(data),), **more)  # fmt: skip


def _anthropic_turn(tmp_path: Path, *replies: Reply) -> tuple[Conversation, LoopbackServer]:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    with LoopbackServer([_anthropic_answer(), *replies]) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-secret",
               "ELELEM_CONFIG": CONFIG}  # fmt: skip

        async def main() -> None:
            async with Client(env=env) as client:
                await run(conv, client, "anthropic:claude-test", "plot it",
                          hosted_tools=[CodeExecution()])  # fmt: skip
                target = client.target("anthropic:claude-test")
                for file in generated_files(conv.events, load_catalog()):
                    with httpx2.Client() as http:
                        fetch_generated(conv, target, file, http, max_bytes=1024)

        asyncio.run(main())
    return conv, server


def test_a_file_anthropics_code_execution_made_is_fetched_into_the_store(
    tmp_path: Path,
) -> None:
    conv, server = _anthropic_turn(tmp_path, _metadata(), _file(PNG, "image/png"))
    assert generated_files(conv.events, load_catalog()) == [GeneratedFile("anthropic", FILE_ID)]
    _, metadata, download = server.requests
    assert (metadata.method, metadata.path) == ("GET", f"/v1/files/{FILE_ID}")
    assert (download.method, download.path) == ("GET", f"/v1/files/{FILE_ID}/content")
    for request in (metadata, download):
        assert request.headers["anthropic-beta"] == "files-api-2025-04-14"
        assert request.headers["x-api-key"] == "sk-ant-secret"
    (body,) = [e.body for e in conv.events if isinstance(e.body, GeneratedFileBody)]
    (image,) = body.content
    assert isinstance(image, ImageBlock) and image.media_type == "image/png"
    assert conv.store.get_blob(image.source.blob.sha256) == PNG  # type: ignore[union-attr]
    # Fetching again downloads nothing: the event is there.
    target = load_catalog().target("anthropic", {"ANTHROPIC_API_KEY": "k",
                                                 "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})  # fmt: skip
    with httpx2.Client() as http:
        again = fetch_generated(conv, target, GeneratedFile("anthropic", FILE_ID), http)
    assert again == body
    # The exports show it as an attachment, the key nowhere.
    markdown = conversation_markdown(conv.info, conv.events)
    line = f"*file made by code execution: chart.png (anthropic {FILE_ID}, {len(PNG):,} bytes)*"
    assert line in markdown
    assert (body.filename, image.filename) == ("chart.png", "chart.png")
    assert "sk-ant-secret" not in markdown


def test_a_file_over_the_bound_is_refused_and_nothing_kept(tmp_path: Path) -> None:
    big = b"x" * 2048
    for reply in (
        _file(big, "text/csv", headers={"content-length": str(len(big))}),  # announced
        _file(big, "text/csv", chunked=True),  # only counted as it streams
    ):
        with pytest.raises(LimitExceededError, match="limit max_bytes = 1024"):
            _anthropic_turn(tmp_path / str(id(reply)), _metadata(), reply)


MESSAGE = {"type": "message", "id": "msg_2", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": "Here it is: sandbox:/mnt/data/sales.csv",
                        "annotations": [{"type": "container_file_citation", "container_id": "cntr_1",
                                         "file_id": "cfile_9", "filename": "sales.csv",
                                         "start_index": 12, "end_index": 39}]}]}  # fmt: skip
CALL = {"type": "code_interpreter_call", "id": "ci_1", "status": "completed",
        "container_id": "cntr_1", "code": "df.to_csv('sales.csv')", "outputs": []}  # fmt: skip
CSV = b"month,sales\njan,3\n"


def test_a_container_file_the_code_interpreter_cited_is_fetched_through_the_cli(
    tmp_path: Path,
) -> None:
    from cli_helpers import base_env
    from cli_helpers import run as run_cli

    store = SQLiteStore(tmp_path / "store.db")
    conv = Conversation.create(store)
    with LoopbackServer([_responses([CALL, MESSAGE], 1), _file(CSV, "text/csv")]) as server:
        env = {**base_env(tmp_path), "OPENAI_BASE_URL": server.url + "/v1",
               "OPENAI_API_KEY": "sk-secret-openai", "ELELEM_STORE": str(tmp_path / "store.db")}  # fmt: skip

        async def main() -> None:  # the turn in process; the files commands as a user runs them
            async with Client(env=env) as client:
                await run(conv, client, "openai:gpt-test", "sales csv",
                          hosted_tools=[CodeExecution()])  # fmt: skip

        asyncio.run(main())
        out = tmp_path / "sales.csv"
        got = run_cli(env, "files", "download", "cfile_9", "-o", str(out))
        assert got.returncode == 0, got.stderr
    assert out.read_bytes() == CSV
    assert got.stderr == "kept sales.csv: 18 bytes\n"
    assert server.requests[1].path == "/v1/containers/cntr_1/files/cfile_9/content"
    assert server.requests[1].headers["authorization"] == "Bearer sk-secret-openai"
    listed = run_cli(env, "files", "generated", "--json")
    (entry,) = [json.loads(line) for line in listed.stdout.splitlines()]
    (document,) = [
        b for e in Conversation.open(store, conv.id).events
        if isinstance(e.body, GeneratedFileBody) for b in e.body.content
    ]  # fmt: skip
    assert isinstance(document, DocumentBlock) and document.media_type == "text/csv"
    sha256 = document.source.blob.sha256  # type: ignore[union-attr]
    assert entry == {"provider": "openai", "id": "cfile_9", "container": "cntr_1",
                     "filename": "sales.csv", "sha256": sha256, "size": 18}  # fmt: skip
    # `elelem show` shows the fetched file where it was fetched; the key is in no output.
    show = run_cli(env, "show")
    assert "file made by code execution: sales.csv (openai cntr_1/cfile_9, 18 bytes)" in show.stdout
    assert "sk-secret-openai" not in got.stderr + listed.stdout + show.stdout + show.stderr


def test_a_refused_download_names_the_status_never_the_key(tmp_path: Path) -> None:
    from elelem.errors import NotFoundError
    from elelem.testing.servers import status

    echo = (
        b'{"type":"error","error":{"type":"not_found_error","message":"no file for sk-ant-secret"}}'
    )
    with pytest.raises(NotFoundError) as caught:
        _anthropic_turn(tmp_path, _metadata(), status(404, echo))
    assert "404" in str(caught.value) and "downloading a generated file" in str(caught.value)
    assert "sk-ant-secret" not in str(caught.value)
    assert b"sk-ant-secret" not in (caught.value.body or b"")
