"""Files by reference (issue #42): an image or PDF goes to a provider once,
through its Files API, and every later request refers to it by the id the
provider gave; a file the provider lost is uploaded again, once.

The servers are loopback Files APIs speaking the documented wire:

- Anthropic: https://platform.claude.com/docs/en/api/files-create (``POST
  /v1/files`` multipart, beta ``files-api-2025-04-14``; ``GET``/``DELETE``
  ``/v1/files``), and https://platform.claude.com/docs/en/build-with-claude/files
  (a message refers to ``{"type": "document", "source": {"type": "file",
  "file_id"}}``; an unknown id is a 404 ``not_found_error``).
- Gemini: https://ai.google.dev/gemini-api/docs/files and
  https://ai.google.dev/api/files (the resumable upload: ``start`` answered
  with ``X-Goog-Upload-URL``, then ``upload, finalize``; the answer's
  ``file.uri`` referred to as ``fileData.fileUri``; files expire after 48
  hours, the answer's ``expirationTime``).
"""

from __future__ import annotations

import base64
import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from elelem import Client, SyncClient
from elelem.cli import main
from elelem.conversation import Conversation, SQLiteStore
from elelem.conversation.files import FileRef, ProviderFiles, utc_time
from elelem.conversation.sqlite import MIGRATIONS
from elelem.errors import MalformedStreamError, StreamError
from elelem.providers.files import FileUploader
from elelem.recordings.loopback import RecordedRequest, Reply, Send, anthropic_text_body
from elelem.testing.responses_state import StatefulResponses
from elelem.testing.servers import LoopbackServer
from elelem.turns.drive import send, send_sync
from elelem.vocabulary import BytesSource, DocumentBlock, ImageBlock, Message, TextBlock
from media_fixtures import pdf, png
from store_helpers import write_as_version
from test_store import BACKENDS, opener, pg_url

__all__ = ["pg_url"]  # the session fixture test_store defines

PDF = pdf(["Q3 revenue was 42 million."])
PDF64 = base64.b64encode(PDF).decode()


def _json(status: int, obj: object, headers: dict[str, str] | None = None) -> Reply:
    return Reply(
        status,
        {"content-type": "application/json", **(headers or {})},
        (Send(json.dumps(obj).encode()),),
    )


def _not_found(file_id: str) -> Reply:
    """Anthropic's error for an unknown file id."""
    error = {"type": "not_found_error", "message": f"File not found: {file_id}"}
    return _json(404, {"type": "error", "error": error})


def _file_ids(node: Any) -> list[str]:
    """Every ``source.file_id`` / ``fileData.fileUri`` a request body refers to."""
    found: list[str] = []
    if isinstance(node, dict):
        if node.get("type") == "file" and "file_id" in node:
            found.append(node["file_id"])
        if "fileUri" in node:
            found.append(node["fileUri"])
        for value in node.values():
            found.extend(_file_ids(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_file_ids(value))
    return found


class AnthropicFiles:
    """Anthropic's Files API and Messages, holding files in memory."""

    def __init__(self, *, always_lose: bool = False) -> None:
        self.held: dict[str, bytes] = {}
        self.uploads = 0
        self.always_lose = always_lose

    def __call__(self, request: RecordedRequest) -> Reply:
        path = request.path.split("?")[0]
        if path == "/v1/files" and request.method == "POST":
            assert request.headers["anthropic-beta"] == "files-api-2025-04-14"
            assert request.headers["content-type"].startswith("multipart/form-data; boundary=")
            self.uploads += 1
            file_id = f"file_{self.uploads:04d}"
            assert PDF in request.body and b'name="file"; filename="report.pdf"' in request.body
            self.held[file_id] = PDF
            return _json(
                200,
                {
                    "id": file_id,
                    "type": "file",
                    "filename": "report.pdf",
                    "mime_type": "application/pdf",
                    "size_bytes": len(PDF),
                    "created_at": "2026-12-04T10:00:00Z",
                    "downloadable": False,
                },
            )
        if path == "/v1/files" and request.method == "GET":
            data = [
                {
                    "id": i,
                    "type": "file",
                    "filename": "report.pdf",
                    "size_bytes": len(b),
                    "mime_type": "application/pdf",
                }
                for i, b in self.held.items()
            ]
            return _json(200, {"data": data, "has_more": False})
        if path.startswith("/v1/files/") and request.method == "DELETE":
            file_id = path.rsplit("/", 1)[1]
            if self.held.pop(file_id, None) is None:
                return _not_found(file_id)
            return _json(200, {"id": file_id, "type": "file_deleted"})
        assert path == "/v1/messages", path
        body = json.loads(request.body)
        for file_id in _file_ids(body):
            assert "files-api-2025-04-14" in request.headers["anthropic-beta"]
            if self.always_lose or file_id not in self.held:
                return _not_found(file_id)
        return Reply(200, {"content-type": "text/event-stream"}, (Send(anthropic_text_body("ok")),))


def _env(server: LoopbackServer) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "sk-ant-test-0123456789",
        "GEMINI_API_KEY": "gm-test-0123456789",
        "GOOGLE_GEMINI_BASE_URL": server.url,
        "ELELEM_CONFIG": str(Path(__file__).with_name("empty-config.toml")),
    }


def _question(text: str) -> Message:
    return Message("user", (TextBlock(text), DocumentBlock.from_bytes(PDF, filename="report.pdf")))


def _messages_bodies(server: LoopbackServer, path: str) -> list[dict[str, Any]]:
    return [json.loads(r.body) for r in server.requests if r.path.split("?")[0].endswith(path)]


def test_a_second_turn_with_the_same_pdf_sends_the_file_id_not_the_bytes(tmp_path: Path) -> None:
    files = AnthropicFiles()
    store = SQLiteStore(tmp_path / "files.db")
    conv = Conversation.create(store)
    uploader = FileUploader(store)
    with LoopbackServer(files) as server, SyncClient(env=_env(server)) as client:
        for n in (1, 2):
            result = send_sync(
                conv, client, "anthropic:claude-sonnet-4-5", _question(f"q{n}"), files=uploader
            )
            assert result.text == "ok"
        turns = _messages_bodies(server, "/v1/messages")
        raw = [r.body for r in server.requests if r.path.startswith("/v1/messages")]
    assert files.uploads == 1 and uploader.uploads == 1
    assert [_file_ids(b) for b in turns] == [["file_0001"], ["file_0001", "file_0001"]]
    assert all(PDF64.encode() not in body for body in raw)
    document = turns[1]["messages"][2]["content"][1]
    assert document == {"type": "document", "source": {"type": "file", "file_id": "file_0001"}}
    (ref,) = ProviderFiles(store).all()
    assert (ref.provider, ref.file_id, ref.size, ref.expires_at) == (
        "anthropic",
        "file_0001",
        len(PDF),
        None,
    )
    # The log keeps the bytes (by blob), never the provider's id.
    kept = conv.history()[0].content[1]
    assert isinstance(kept, DocumentBlock) and isinstance(kept.source, BytesSource)
    assert kept.source.blob.data == PDF


def test_a_deleted_file_is_uploaded_again_once_and_the_request_resent(tmp_path: Path) -> None:
    files = AnthropicFiles()
    store = SQLiteStore(tmp_path / "files.db")
    conv = Conversation.create(store)
    uploader = FileUploader(store)
    with LoopbackServer(files) as server, SyncClient(env=_env(server)) as client:
        send_sync(conv, client, "anthropic:claude-sonnet-4-5", _question("q1"), files=uploader)
        files.held.clear()  # deleted at the provider
        result = send_sync(
            conv, client, "anthropic:claude-sonnet-4-5", _question("q2"), files=uploader
        )
        turns = _messages_bodies(server, "/v1/messages")
    assert result.text == "ok"
    assert files.uploads == 2
    assert [_file_ids(b) for b in turns] == [
        ["file_0001"],
        ["file_0001", "file_0001"],
        ["file_0002", "file_0002"],
    ]
    assert [r.file_id for r in ProviderFiles(store).all()] == ["file_0002"]
    # The failed attempt is on record.
    records = [r for t in conv.turns() for r in t.responses]
    assert [r.complete for r in records] == [True, False, True]
    assert "File not found: file_0001" in (records[1].error or "")


def test_a_file_lost_again_after_its_upload_is_not_uploaded_a_third_time(tmp_path: Path) -> None:
    files = AnthropicFiles(always_lose=True)
    store = SQLiteStore(tmp_path / "files.db")
    conv = Conversation.create(store)
    uploader = FileUploader(store)
    with (
        LoopbackServer(files) as server,
        SyncClient(env=_env(server)) as client,
        pytest.raises(StreamError) as caught,
    ):
        send_sync(conv, client, "anthropic:claude-sonnet-4-5", _question("q1"), files=uploader)
    assert caught.value.status == 404
    assert files.uploads == 2
    assert len(_messages_bodies(server, "/v1/messages")) == 2


class GeminiFiles:
    """Gemini's resumable upload and generateContent."""

    def __init__(self, base: str = "") -> None:
        self.base = base
        self.uploads = 0
        self.held: set[str] = set()
        self.starts: list[RecordedRequest] = []

    def __call__(self, request: RecordedRequest) -> Reply:
        path = request.path.split("?")[0]
        if path == "/upload/v1beta/files" and "upload_id=" not in request.path:
            assert request.headers["x-goog-upload-protocol"] == "resumable"
            assert request.headers["x-goog-upload-command"] == "start"
            assert request.headers["x-goog-upload-header-content-length"] == str(len(PDF))
            assert request.headers["x-goog-upload-header-content-type"] == "application/pdf"
            assert json.loads(request.body) == {"file": {"display_name": "report.pdf"}}
            self.starts.append(request)
            url = f"{self.base}/upload/v1beta/files?upload_id=u{len(self.starts)}&upload_protocol=resumable"
            return _json(200, {}, {"x-goog-upload-url": url, "x-goog-upload-status": "active"})
        if "upload_id=" in request.path:
            assert request.headers["x-goog-upload-command"] == "upload, finalize"
            assert request.headers["x-goog-upload-offset"] == "0"
            assert request.body == PDF
            self.uploads += 1
            name = f"files/pdf{self.uploads}"
            self.held.add(f"{self.base}/v1beta/{name}")
            return _json(
                200,
                {
                    "file": {
                        "name": name,
                        "displayName": "report.pdf",
                        "mimeType": "application/pdf",
                        "sizeBytes": str(len(PDF)),
                        "expirationTime": "2026-12-06T10:00:00.123456Z",
                        "uri": f"{self.base}/v1beta/{name}",
                        "state": "ACTIVE",
                    }
                },
            )
        assert ":generateContent" in path or ":streamGenerateContent" in path, path
        for uri in _file_ids(json.loads(request.body)):
            if uri not in self.held:
                bare = uri.rsplit("/", 1)[1]
                message = (
                    f"You do not have permission to access the File {bare} or it may not exist."
                )
                error = {"code": 403, "message": message, "status": "PERMISSION_DENIED"}
                return _json(403, {"error": error})
        frame = {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
            ],
            "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 1},
        }
        return Reply(
            200,
            {"content-type": "text/event-stream"},
            (Send(b"data: " + json.dumps(frame).encode() + b"\r\n\r\n"),),
        )


def test_gemini_uploads_resumably_and_an_expired_id_is_uploaded_again(tmp_path: Path) -> None:
    now = [datetime(2026, 12, 5, 10, 0, tzinfo=UTC)]
    gemini = GeminiFiles()
    store = SQLiteStore(tmp_path / "files.db")
    conv = Conversation.create(store)
    uploader = FileUploader(store, clock=lambda: now[0])
    with LoopbackServer(gemini) as server, SyncClient(env=_env(server)) as client:
        gemini.base = server.url
        send_sync(conv, client, "google:gemini-2.5-flash", _question("q1"), files=uploader)
        send_sync(conv, client, "google:gemini-2.5-flash", _question("q2"), files=uploader)
        now[0] += timedelta(days=2)  # past the recorded expirationTime
        send_sync(conv, client, "google:gemini-2.5-flash", _question("q3"), files=uploader)
        bodies = [json.loads(r.body) for r in server.requests if "GenerateContent" in r.path]
        raw = [r.body for r in server.requests if "GenerateContent" in r.path]
    uri1, uri2 = f"{server.url}/v1beta/files/pdf1", f"{server.url}/v1beta/files/pdf2"
    assert gemini.uploads == 2
    assert [_file_ids(b) for b in bodies] == [[uri1], [uri1, uri1], [uri2, uri2, uri2]]
    assert bodies[0]["contents"][0]["parts"][1] == {
        "fileData": {"mimeType": "application/pdf", "fileUri": uri1}
    }
    assert all(PDF64.encode() not in body for body in raw)
    (ref,) = ProviderFiles(store, lambda: now[0]).all()
    assert ref.expires_at == "2026-12-06T10:00:00.123456Z"


def test_an_upload_url_on_another_host_is_refused_and_gets_no_key(tmp_path: Path) -> None:
    gemini = GeminiFiles(base="http://198.51.100.7:9")
    store = SQLiteStore(tmp_path / "files.db")
    conv = Conversation.create(store)
    with (
        LoopbackServer(gemini) as server,
        SyncClient(env=_env(server)) as client,
        pytest.raises(MalformedStreamError, match="the answer named another host"),
    ):
        send_sync(
            conv, client, "google:gemini-2.5-flash", _question("q1"), files=FileUploader(store)
        )
    assert gemini.uploads == 0
    assert ProviderFiles(store).all() == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_file_table_records_ids_with_expiry_in_each_backend(
    backend: str, request: pytest.FixtureRequest
) -> None:
    store = opener(backend, request)()
    assert store.schema_version >= 4  # type: ignore[attr-defined]
    now = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)
    table = ProviderFiles(store, lambda: now)  # type: ignore[arg-type]
    table.record(FileRef("ab" * 32, "google", "u1", "2026-12-05T09:00:00Z", "2026-12-05T10:00:00Z"))
    table.record(FileRef("cd" * 32, "openai", "file-x", "2026-12-05T09:00:00Z", None, 12))
    table.record(FileRef("cd" * 32, "openai", "file-y", "2026-12-05T09:30:00Z", None, 12))
    assert table.live("ab" * 32, "google") is None  # expired at exactly now
    assert table.live("cd" * 32, "openai") == FileRef(
        "cd" * 32, "openai", "file-y", "2026-12-05T09:30:00Z", None, 12
    )
    assert table.forget("openai", "file-x") == 0  # replaced by file-y already
    assert table.forget("openai", "file-y") == 1
    assert [r.file_id for r in table.all()] == ["u1"]
    assert table.all("openai") == []
    store.close()


def test_a_version_3_store_gains_the_file_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    write_as_version(monkeypatch, 3)
    with SQLiteStore(path) as old:
        assert old.schema_version == 3  # type: ignore[attr-defined]
        conv = Conversation.create(old)
        conv.add_user("kept")
    monkeypatch.undo()
    with SQLiteStore(path) as store:
        assert store.schema_version == len(MIGRATIONS)  # type: ignore[attr-defined]
        assert Conversation.open(store, conv.id).text == "kept"
        assert ProviderFiles(store).all() == []  # type: ignore[arg-type]
    raw = sqlite3.connect(path)
    names = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    raw.close()
    assert "provider_files" in names


def test_files_list_and_rm_on_the_command_line(tmp_path: Path) -> None:
    files = AnthropicFiles()
    db = tmp_path / "files.db"
    store = SQLiteStore(db)
    conv = Conversation.create(store)
    runner = CliRunner()
    with LoopbackServer(files) as server:
        env = {**_env(server), "ELELEM_STORE": str(db), "ELELEM_HOME": str(tmp_path / "home")}
        with SyncClient(env=env) as client:
            send_sync(
                conv,
                client,
                "anthropic:claude-sonnet-4-5",
                _question("q1"),
                files=FileUploader(store),
            )
        sha = ProviderFiles(store).all()[0].sha256
        listed = runner.invoke(main, ["files", "list"], env=env)
        assert (listed.exit_code, listed.stdout) == (
            0,
            f"anthropic  file_0001  sha256:{sha[:12]}  {len(PDF):,} bytes"
            "  expires kept until deleted\n",
        )
        remote = runner.invoke(
            main, ["files", "list", "--remote", "--provider", "anthropic"], env=env
        )
        assert (remote.exit_code, remote.stdout) == (0, "anthropic  file_0001  report.pdf\n")
        removed = runner.invoke(main, ["files", "rm", "file_0001"], env=env)
        assert (removed.exit_code, removed.stderr) == (0, "deleted file_0001 at anthropic\n")
        assert files.held == {} and ProviderFiles(store).all() == []
        again = runner.invoke(main, ["files", "rm", "file_0001"], env=env)
        assert again.exit_code == 2  # a usage error
        assert "no uploaded file 'file_0001' is recorded" in again.stderr
        sneaky = runner.invoke(
            main, ["files", "rm", "../v1/models", "--provider", "anthropic"], env=env
        )
        assert sneaky.exit_code == 2
        assert "'../v1/models' is not a anthropic file id" in sneaky.stderr
        assert [r.method for r in server.requests].count("DELETE") == 1


def test_ask_sends_attachments_by_id_only_when_asked_to(tmp_path: Path) -> None:
    files = AnthropicFiles()
    report = tmp_path / "report.pdf"
    report.write_bytes(PDF)
    runner = CliRunner()
    model = ["-m", "anthropic:claude-sonnet-4-5"]
    with LoopbackServer(files) as server:
        env = {
            **_env(server),
            "ELELEM_STORE": str(tmp_path / "ask.db"),
            "ELELEM_HOME": str(tmp_path / "home"),
        }
        plain = runner.invoke(main, ["ask", *model, "-a", str(report), "q0"], env=env)
        assert (plain.exit_code, files.uploads) == (0, 0)  # opt-in: bytes by default
        env["ELELEM_UPLOAD_FILES"] = "1"
        first = runner.invoke(main, ["ask", *model, "-a", str(report), "q1"], env=env)
        second = runner.invoke(
            main, ["ask", *model, "-c", "last", "-a", str(report), "q2"], env=env
        )
        bad = runner.invoke(main, ["ask", *model, "q3"], env={**env, "ELELEM_UPLOAD_FILES": "y"})
        bodies = _messages_bodies(server, "/v1/messages")
    assert (first.exit_code, second.exit_code, files.uploads) == (0, 0, 1)
    assert PDF64 in json.dumps(bodies[0])
    assert [_file_ids(b) for b in bodies] == [[], ["file_0001"], ["file_0001", "file_0001"]]
    assert bad.exit_code == 2 and "ELELEM_UPLOAD_FILES must be 1 or 0, not 'y'" in bad.stderr


def test_a_provider_without_a_files_api_still_gets_bytes(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "files.db")
    uploader = FileUploader(store)
    messages = (_question("q"),)
    with SyncClient(
        env={"DEEPSEEK_API_KEY": "sk-test-0123456789", "ELELEM_CONFIG": "/nonexistent/elelem.toml"}
    ) as client:
        target = client.target("deepseek:deepseek-chat")
    assert target.shape.files is not None  # the wire has one; the provider does not
    assert uploader.refer(messages, target) is messages
    assert uploader.uploads == 0 and ProviderFiles(store).all() == []


class OpenAIFiles:
    """OpenAI's Files API (https://platform.openai.com/docs/api-reference/files/create:
    multipart ``purpose`` and ``file``, the file object with ``expires_at``
    in Unix seconds) beside Responses (delegated to the stateful loopback
    Responses API) and Chat Completions (one streamed ``ok``)."""

    def __init__(self) -> None:
        self.responses = StatefulResponses()
        self.uploads: list[bytes] = []

    def __call__(self, request: RecordedRequest) -> Reply:
        path = request.path.split("?")[0]
        if path == "/v1/files":
            assert request.headers["authorization"] == "Bearer sk-test-0123456789"
            assert b'name="purpose"\r\n\r\nuser_data\r\n' in request.body
            self.uploads.append(request.body)
            return _json(
                200,
                {
                    "id": f"file-{len(self.uploads)}",
                    "object": "file",
                    "bytes": len(PDF),
                    "created_at": 1764900000,
                    "expires_at": 1893456000,
                    "filename": "report.pdf",
                    "purpose": "user_data",
                },
            )
        if path == "/v1/chat/completions":
            chunk = {
                "id": "c1",
                "object": "chat.completion.chunk",
                "model": "gpt-4o",
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": "ok"},
                        "finish_reason": "stop",
                    }
                ],
            }
            return Reply(
                200,
                {"content-type": "text/event-stream"},
                (Send(b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"),),
            )
        return self.responses(request)


@pytest.mark.parametrize("wire", ["responses", "chat"])
def test_openai_uploads_a_pdf_once_for_either_wire(tmp_path: Path, wire: str) -> None:
    config = tmp_path / "elelem.toml"
    # OpenAI on Chat Completions: the built-in record amended (docs/cli.md).
    config.write_text('[providers.openai]\nshape = "openai_chat"\n' if wire == "chat" else "")
    model = "openai:gpt-4o"
    openai = OpenAIFiles()
    store = SQLiteStore(tmp_path / "files.db")
    conv = Conversation.create(store)
    uploader = FileUploader(store)
    image = ImageBlock.from_bytes(png(4, 4), filename="dot.png")
    with LoopbackServer(openai) as server:
        env = {
            "OPENAI_BASE_URL": server.url + "/v1",
            "OPENAI_API_KEY": "sk-test-0123456789",
            "ELELEM_CONFIG": str(config),
        }
        with SyncClient(env=env) as client:
            for n in (1, 2):
                question = Message("user", (*_question(f"q{n}").content, image))
                send_sync(conv, client, model, question, files=uploader)
        bodies = [json.loads(r.body) for r in server.requests if not r.path.endswith("/files")]
    chat = wire == "chat"
    # Chat Completions takes no image by id: only the PDF is uploaded there.
    assert len(openai.uploads) == (1 if chat else 2)
    assert PDF in openai.uploads[0] and b'filename="report.pdf"' in openai.uploads[0]
    last = bodies[1]["messages" if chat else "input"][-1]["content"]
    if chat:
        assert last[1] == {"type": "file", "file": {"file_id": "file-1"}}
        assert last[2]["type"] == "image_url"
    else:
        assert last[1] == {"type": "input_file", "file_id": "file-1"}
        assert last[2] == {"type": "input_image", "file_id": "file-2", "detail": "auto"}
    assert PDF64 not in json.dumps(bodies)
    refs = ProviderFiles(store).all()
    assert {r.expires_at for r in refs} == {"2030-01-01T00:00:00+00:00"}


def test_expiry_times_read_as_providers_write_them() -> None:
    assert utc_time("2026-12-06T10:00:00.123456789Z") == datetime(
        2026, 12, 6, 10, 0, 0, 123456, tzinfo=UTC
    )
    assert utc_time("2026-12-06T10:00:00") == datetime(2026, 12, 6, 10, tzinfo=UTC)
    with pytest.raises(ValueError):
        utc_time("tomorrow")


def test_the_async_driver_refers_by_id_the_same_way(tmp_path: Path) -> None:
    files = AnthropicFiles()
    store = SQLiteStore(tmp_path / "files.db")
    conv = Conversation.create(store)
    uploader = FileUploader(store)

    async def two_turns(env: dict[str, str]) -> None:
        async with Client(env=env) as client:
            for n in (1, 2):
                await send(
                    conv, client, "anthropic:claude-sonnet-4-5", _question(f"q{n}"), files=uploader
                )

    with LoopbackServer(files) as server:
        anyio.run(two_turns, _env(server))
        turns = _messages_bodies(server, "/v1/messages")
    assert files.uploads == 1
    assert [_file_ids(b) for b in turns] == [["file_0001"], ["file_0001", "file_0001"]]


def test_gemini_answering_403_for_a_lost_file_gets_it_uploaded_again(tmp_path: Path) -> None:
    gemini = GeminiFiles()
    store = SQLiteStore(tmp_path / "files.db")
    conv = Conversation.create(store)
    uploader = FileUploader(store)
    with LoopbackServer(gemini) as server, SyncClient(env=_env(server)) as client:
        gemini.base = server.url
        send_sync(conv, client, "google:gemini-2.5-flash", _question("q1"), files=uploader)
        gemini.held.clear()  # deleted at Google before its 48 hours
        result = send_sync(conv, client, "google:gemini-2.5-flash", _question("q2"), files=uploader)
    assert result.text == "ok"
    assert gemini.uploads == 2
    assert [r.file_id for r in ProviderFiles(store).all()] == [f"{server.url}/v1beta/files/pdf2"]
