"""The live chat's images of a tool result (``data-tool-media``): sent right
after the result's own chunk, transient, each shown image its own bytes as a
``data:`` URL of the media type its magic bytes name, with its SHA-256 for
``/blob/<sha256>``; bytes that only claim to be an image, an image over the
inline limit and a document are their line alone."""

from __future__ import annotations

import base64
import hashlib

from elelem.vocabulary import DocumentBlock, ImageBlock, ToolResultBlock
from elelem.web.images import THUMBNAIL_LIMIT
from elelem.web.ui_chunks import UIMessageEncoder
from web_helpers import png

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
