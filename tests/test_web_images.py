"""The live chat's images of a tool result (``data-tool-media``): sent right
after the result's own chunk, transient, each shown image its own bytes as a
``data:`` URL of the media type its magic bytes name, with its SHA-256 for
``/blob/<sha256>``; bytes that only claim to be an image, an image over the
inline limit and a document are their line alone.  A stock ``useChat``
reader (``ai`` 7; ``ai`` 6 in the slow run) accepts the chunk and keeps no
copy of the bytes in its message."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from elelem.stream import Assembler, Chunk
from elelem.stream.chunks import BlockEnd, BlockStart, Finish, ResponseStart, ToolCallDelta
from elelem.testing.asgi import ASGIServer
from elelem.vocabulary import DocumentBlock, ImageBlock, Part, ProviderId, ToolResultBlock
from elelem.web import UIMessageStreamResponse
from elelem.web.images import THUMBNAIL_LIMIT
from elelem.web.ui_chunks import UIMessageEncoder
from web_helpers import ai7_reader_ready, ai_reader_ready, png, read_with_ai

FORGED = b'<svg xmlns="http://www.w3.org/2000/svg"><script>1</script></svg>'


def test_a_results_images_follow_it_checked_by_their_bytes() -> None:
    screen = png(4, 3)
    # A real PNG claimed as JPEG: sent as what its bytes are.
    shot = ImageBlock.from_bytes(screen, "image/jpeg", filename="shot.jpg")
    forged = ImageBlock.from_bytes(FORGED, "image/png")
    huge = ImageBlock.from_bytes(screen + b"\0" * THUMBNAIL_LIMIT, "image/png")
    report = DocumentBlock.from_bytes(b"%PDF-1.4\n%%EOF\n", "application/pdf", filename="r.pdf")
    result = ToolResultBlock(
        "call_1", "the page", name="screenshot", attachments=(shot, forged, huge, report)
    )
    out = UIMessageEncoder().tool_results([result, ToolResultBlock("call_2", "plain")])
    assert [c["type"] for c in out] == [
        "start",
        "tool-output-available",
        "data-tool-media",
        "tool-output-available",  # a result with nothing attached: no media chunk
    ]
    media = out[2]
    assert media["transient"] is True
    assert media["data"] == {
        "toolCallId": "call_1",
        "media": [
            {
                "kind": "image",
                "caption": "[image shot.jpg 4×3, 73 B]",
                "url": "data:image/png;base64," + base64.b64encode(screen).decode(),
                "sha256": hashlib.sha256(screen).hexdigest(),
                "name": "shot.jpg",
            },
            {"kind": "image", "caption": "[image, 64 B]"},
            {"kind": "image", "caption": "[image 4×3, 8.0 MB]"},
            {"kind": "document", "caption": "[document r.pdf (PDF), 15 B]"},
        ],
    }


@pytest.fixture(params=[pytest.param("ai", marks=pytest.mark.slow), "ai7"])
def reader(request: pytest.FixtureRequest) -> tuple[str, str]:
    package = str(request.param)
    return (ai7_reader_ready() if package == "ai7" else ai_reader_ready()), package


async def _screenshot_run() -> AsyncIterator[tuple[Chunk | None, tuple[Part, ...]]]:
    assembler = Assembler(ProviderId("anthropic"))
    chunks: list[Chunk] = [
        ResponseStart("resp_1", "claude-x", ProviderId("anthropic")),
        BlockStart(0, "tool-call", id="call_1", name="screenshot"),
        ToolCallDelta(0, "{}"),
        BlockEnd(0),
        Finish("tool-calls"),
    ]
    for chunk in chunks:
        yield chunk, assembler.feed(chunk)
    shot = ImageBlock.from_bytes(png(4, 3), "image/png")
    yield None, (ToolResultBlock("call_1", "the screen", attachments=(shot,)),)


def test_a_stock_reader_accepts_the_media_chunk_and_keeps_no_copy(
    reader: tuple[str, str],
) -> None:
    node, package = reader

    async def run(_request: Request) -> UIMessageStreamResponse:
        version = 7 if package == "ai7" else 6
        return UIMessageStreamResponse(_screenshot_run(), ai_version=version)

    with ASGIServer(Starlette(routes=[Route("/x", run, methods=["POST"])])) as server:
        (got,) = read_with_ai(node, [{"url": server.url + "/x", "body": {}}], package)
    assert got["errors"] == [] and got["invalid"] is None
    media: list[dict[str, Any]] = [c for c in got["chunks"] if c["type"] == "data-tool-media"]
    assert [m["data"]["media"][0]["caption"] for m in media] == ["[image 4×3, 73 B]"]
    parts = got["message"]["parts"]
    assert [p["type"] for p in parts] == ["step-start", "tool-screenshot"]
    assert (parts[1]["state"], parts[1]["output"]) == ("output-available", "the screen")
