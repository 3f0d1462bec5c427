"""`elelem ask -a PATH|URL|-` and piped stdin: the exact request each sends,
the attachment line shown, and generated images written to files."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest

from cli_helpers import ELELEM, KEY, MODEL, base_env, run, text_reply
from elelem.testing.servers import LoopbackServer, replay, sse_body, status
from media_fixtures import pdf, png

PNG = png(4, 3)
PDF = pdf(["Q3 revenue was 42 million."])
PNG64 = base64.b64encode(PNG).decode()
PDF64 = base64.b64encode(PDF).decode()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return base_env(tmp_path)


def anthropic(env: dict[str, str], server: LoopbackServer) -> dict[str, str]:
    return {**env, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}


def run_bytes(env: dict[str, str], *args: str, stdin: bytes) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [ELELEM, *args], env=env, input=stdin, capture_output=True, timeout=60, check=False
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def _content(server: LoopbackServer) -> list[dict[str, object]]:
    body = json.loads(server.requests[0].body)
    content: list[dict[str, object]] = body["messages"][0]["content"]
    return content


def test_ask_attaches_an_image_and_a_pdf(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "dot.png").write_bytes(PNG)
    # The name says text; the magic bytes say PDF, and win.
    (tmp_path / "q3.txt").write_bytes(PDF)
    with LoopbackServer([replay(text_reply("A dot and a report."))]) as server:
        result = run(
            anthropic(env, server),
            "ask",
            "-m",
            MODEL,
            "-a",
            str(tmp_path / "dot.png"),
            "-a",
            str(tmp_path / "q3.txt"),
            "What are these?",
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("A dot and a report.\n")
    assert _content(server) == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG64}},
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": PDF64},
            "title": "q3.txt",
        },
        {"type": "text", "text": "What are these?"},
    ]
    shown = run(env, "show", "last")
    assert shown.returncode == 0, shown.stderr
    assert f"[image dot.png 4\u00d73, {len(PNG)} B]" in shown.stdout
    assert f"[document q3.txt (PDF, 1 page), {len(PDF)} B]" in shown.stdout


def test_a_pdf_piped_as_attachment(env: dict[str, str]) -> None:
    with LoopbackServer([replay(text_reply("Summary."))]) as server:
        result = run_bytes(
            anthropic(env, server), "ask", "-m", MODEL, "-a", "-", "summarise", stdin=PDF
        )
    assert result.returncode == 0, result.stderr
    assert _content(server) == [
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": PDF64},
        },
        {"type": "text", "text": "summarise"},
    ]


def test_piped_text_goes_before_the_prompt(env: dict[str, str]) -> None:
    with LoopbackServer([replay(text_reply("Short."))]) as server:
        result = run(
            anthropic(env, server), "ask", "-m", MODEL, "summarise", stdin="line one\nline two\n"
        )
    assert result.returncode == 0, result.stderr
    assert _content(server) == [{"type": "text", "text": "line one\nline two\n\nsummarise"}]


def test_piped_bytes_that_are_not_text_are_attached(env: dict[str, str]) -> None:
    with LoopbackServer([replay(text_reply("A dot."))]) as server:
        result = run_bytes(anthropic(env, server), "ask", "-m", MODEL, "what is it", stdin=PNG)
    assert result.returncode == 0, result.stderr
    assert _content(server)[0] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG64},
    }


def test_a_url_attachment_is_sent_as_a_url(env: dict[str, str]) -> None:
    with LoopbackServer([replay(text_reply("A cat."))]) as server:
        result = run(
            anthropic(env, server),
            "ask",
            "-m",
            MODEL,
            "-a",
            "https://example.com/cat.jpg",
            "what is it",
        )
    assert result.returncode == 0, result.stderr
    assert _content(server)[0] == {
        "type": "image",
        "source": {"type": "url", "url": "https://example.com/cat.jpg"},
    }


def test_a_missing_attachment_is_a_usage_error_before_anything_is_sent(
    env: dict[str, str], tmp_path: Path
) -> None:
    result = run(env, "ask", "-m", MODEL, "-a", str(tmp_path / "nope.png"), "hi")
    assert result.returncode == 2
    assert result.stderr == (
        f"elelem: cannot read attachment {tmp_path / 'nope.png'}: No such file or directory\n"
    )


def test_a_generated_image_is_written_to_a_file(env: dict[str, str], tmp_path: Path) -> None:
    frames = [
        (
            None,
            json.dumps(
                {
                    "candidates": [
                        {
                            "content": {
                                "role": "model",
                                "parts": [
                                    {"text": "Here is your dot."},
                                    {"inlineData": {"mimeType": "image/png", "data": PNG64}},
                                ],
                            },
                            "finishReason": "STOP",
                        }
                    ],
                    "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 7},
                    "modelVersion": "gemini-2.5-flash-image",
                }
            ),
        )
    ]
    out = tmp_path / "images"
    with LoopbackServer([replay(sse_body(frames))]) as server:
        result = run(
            {**env, "GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": "g-test-key"},
            "ask",
            "-m",
            "google:gemini-2.5-flash-image",
            "--images-dir",
            str(out),
            "draw a dot",
        )
    assert result.returncode == 0, result.stderr
    (written,) = sorted(out.iterdir())
    assert written.read_bytes() == PNG and written.suffix == ".png"
    assert f"image saved to {written}\n" in result.stderr
    assert "Here is your dot." in result.stdout
    assert f"[image 4\u00d73, {len(PNG)} B]" in result.stdout


def test_a_blob_gone_from_the_store_is_a_store_error_naming_it(
    env: dict[str, str], tmp_path: Path
) -> None:
    import hashlib
    import sqlite3

    (tmp_path / "dot.png").write_bytes(PNG)
    with LoopbackServer([replay(text_reply("A dot."))]) as server:
        first = run(
            anthropic(env, server), "ask", "-m", MODEL, "-a", str(tmp_path / "dot.png"), "what?"
        )
    assert first.returncode == 0, first.stderr
    db = sqlite3.connect(Path(env["ELELEM_HOME"]) / "elelem.db")
    db.execute("DELETE FROM blobs")
    db.commit()
    db.close()
    with LoopbackServer([replay(text_reply("unused"))]) as server:
        again = run(anthropic(env, server), "ask", "-c", "last", "and now?")
    sha = hashlib.sha256(PNG).hexdigest()
    assert again.returncode == 3
    assert again.stderr.startswith(f"elelem: blob sha256:{sha} is not in store ")
    assert server.requests == []


def test_citations_into_an_attached_pdf_render_with_their_pages(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "q3.pdf").write_bytes(pdf(["a", "b", "c", "d"]))
    citation = {
        "type": "page_location",
        "cited_text": "Revenue rose 12%.",
        "document_index": 0,
        "document_title": "Q3 2025 Quarterly Report",
        "start_page_number": 3,
        "end_page_number": 5,
    }
    start = {
        "id": "msg_cite",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [],
        "usage": {"input_tokens": 50, "output_tokens": 1},
    }
    frames = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Up 12%."},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "citations_delta", "citation": citation},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"input_tokens": 50, "output_tokens": 6},
        },
        {"type": "message_stop"},
    ]
    body = sse_body([(str(f["type"]), json.dumps(f)) for f in frames])
    pdf_path = str(tmp_path / "q3.pdf")
    with LoopbackServer([replay(body), replay(body)]) as server:
        e = anthropic(env, server)
        short = run(e, "ask", "-m", MODEL, "-a", pdf_path, "How did revenue do?")
        full = run(e, "ask", "-m", MODEL, "--citations", "full", "-a", pdf_path, "And?")
    assert short.returncode == 0, short.stderr
    assert short.stdout == (
        "Up 12%.[1]\n\n[1] Q3 2025 Quarterly Report, pp. 3\u20134\n\nusage: 50 in · 6 out · $0.0002\n"
    )
    assert "[1] Q3 2025 Quarterly Report, pp. 3\u20134\n    \u201cRevenue rose 12%.\u201d\n" in (
        full.stdout
    )


def _wire(provider: str, body: dict[str, object]) -> object:
    if provider == "openai":
        return body["input"][0]["content"]  # type: ignore[index]
    if provider == "google":
        return body["contents"][0]["parts"]  # type: ignore[index]
    if provider == "bedrock":
        return body["messages"][0]["content"]  # type: ignore[index]
    return body["messages"][0]  # type: ignore[index]


DATA_PNG = f"data:image/png;base64,{PNG64}"
DATA_PDF = f"data:application/pdf;base64,{PDF64}"
QUESTION = "What are these?"

WIRE = {
    "openai": [
        {"type": "input_image", "image_url": DATA_PNG, "detail": "auto"},
        {"type": "input_file", "filename": "q3.pdf", "file_data": DATA_PDF},
        {"type": "input_text", "text": QUESTION},
    ],
    "google": [
        {"inlineData": {"mimeType": "image/png", "data": PNG64}},
        {"inlineData": {"mimeType": "application/pdf", "data": PDF64}},
        {"text": QUESTION},
    ],
    "bedrock": [
        {"image": {"format": "png", "source": {"bytes": PNG64}}},
        {"document": {"format": "pdf", "name": "q3 pdf", "source": {"bytes": PDF64}}},
        {"text": QUESTION},
    ],
    "ollama-native": {"role": "user", "content": QUESTION, "images": [PNG64]},
    "deepseek": {"role": "user", "content": QUESTION},
}

SETUP = {
    "openai": ("gpt-5-mini", {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "{url}/v1"}),
    "google": ("gemini-2.5-flash", {"GEMINI_API_KEY": "g-test", "GOOGLE_GEMINI_BASE_URL": "{url}"}),
    "bedrock": (
        "amazon.nova-micro-v1:0",
        {
            "AWS_BEARER_TOKEN_BEDROCK": "b-test",
            "AWS_REGION": "us-east-1",
            "ELELEM_BEDROCK_BASE_URL": "{url}",
        },
    ),
    "ollama-native": ("llava", {"ELELEM_OLLAMA_NATIVE_BASE_URL": "{url}"}),
    "deepseek": (
        "deepseek-chat",
        {"DEEPSEEK_API_KEY": "d-test", "ELELEM_DEEPSEEK_BASE_URL": "{url}"},
    ),
}


@pytest.mark.parametrize("provider", sorted(WIRE))
def test_ask_a_sends_each_providers_own_form(
    provider: str, env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "dot.png").write_bytes(PNG)
    (tmp_path / "q3.pdf").write_bytes(PDF)
    model, extra = SETUP[provider]
    refused = status(400, b'{"error": {"message": "stop here"}}')
    with LoopbackServer([refused]) as server:
        e = {**env, **{k: v.format(url=server.url) for k, v in extra.items()}}
        a = ["-a", str(tmp_path / "dot.png"), "-a", str(tmp_path / "q3.pdf")]
        result = run(e, "ask", "-m", f"{provider}:{model}", *a, QUESTION)
    assert result.returncode == 1, result.stderr  # the server refused: only the request counts
    assert _wire(provider, json.loads(server.requests[0].body)) == WIRE[provider]
