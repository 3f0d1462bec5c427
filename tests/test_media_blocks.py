"""The image and document block types: registered through the registry,
immutable, every source, the assembler builds them, storage round-trips
them, the renderer shows a line (never bytes), footnotes name pages."""

from __future__ import annotations

import io

import msgspec
import pytest
from rich.console import Console

from elelem import codec
from elelem.errors import DecodeError
from elelem.render.lines import Footnotes, attachment_line
from elelem.render.renderer import Renderer
from elelem.stream import BlockEnd, BlockStart, Finish, ResponseStart
from elelem.stream.assembler import assemble
from elelem.vocabulary import (
    Attribution,
    Blob,
    BytesSource,
    ChunksSource,
    DocumentBlock,
    DocumentLocation,
    FileSource,
    ImageBlock,
    Message,
    ProviderId,
    ProviderPayload,
    SearchResultSource,
    Source,
    TextSource,
    URLSource,
    block_type,
)
from elelem.vocabulary.registry import CORE_BLOCK_TYPES
from media_fixtures import pdf, png

PNG = png(1280, 800)


def test_image_and_document_arrive_through_the_registry_not_the_core() -> None:
    assert block_type("image") is ImageBlock
    assert block_type("document") is DocumentBlock
    assert ImageBlock not in CORE_BLOCK_TYPES and DocumentBlock not in CORE_BLOCK_TYPES


def test_from_bytes_reads_the_media_type_size_and_pages() -> None:
    image = ImageBlock.from_bytes(PNG, filename="screenshot.png")
    assert (image.media_type, image.width, image.height) == ("image/png", 1280, 800)
    document = DocumentBlock.from_bytes(pdf(["a", "b", "c"]), title="Q3")
    assert (document.media_type, document.pages) == ("application/pdf", 3)
    with pytest.raises(DecodeError, match="is not an image"):
        ImageBlock.from_bytes(b"%PDF-1.4 nope", filename="x.pdf")


def test_blocks_are_immutable() -> None:
    image = ImageBlock.from_bytes(PNG)
    with pytest.raises(AttributeError):
        image.width = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        image.source.blob.size = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    "block",
    [
        ImageBlock.from_bytes(PNG, filename="s.png", detail="high"),
        ImageBlock.from_url("https://example.com/cat.jpg", "image/jpeg"),
        ImageBlock(FileSource(ProviderPayload(ProviderId("openai"), "file", None, "file-abc"))),
        DocumentBlock.from_bytes(pdf(), title="Q3", citations=True, context="board pack"),
        DocumentBlock.from_text("plain words", title="Notes"),
        DocumentBlock.from_chunks(["first", "second"], title="Chunks", citations=True),
        DocumentBlock.search_result("https://kb.example/refunds", "Refunds", ["30 days."]),
        DocumentBlock(URLSource("https://example.com/a.pdf"), "application/pdf"),
    ],
)
def test_every_source_round_trips_through_the_codec(block: ImageBlock | DocumentBlock) -> None:
    message = Message("user", (block,), "user")
    data = codec.dumps(message)
    assert codec.loads(data, Message) == message
    assert codec.general_loads(data, Message) == message
    assert codec.dumps(codec.loads(data, Message)) == data


def test_the_wire_encoding_of_an_image_names_its_blob() -> None:
    image = ImageBlock.from_bytes(png(1, 1))
    sha = Blob(png(1, 1)).sha256
    assert codec.dumps(image) == (
        b'{"type":"image","source":{"kind":"bytes","blob":{"sha256":"'
        + sha.encode()
        + b'","size":%d}},"media_type":"image/png","filename":null,"title":null,' % len(png(1, 1))
        + b'"width":1,"height":1,"detail":null,"payloads":[]}'
    )


def test_malformed_values_are_refused_naming_what() -> None:
    with pytest.raises(DecodeError, match="needs a media_type"):
        ImageBlock(BytesSource(Blob(PNG)))
    with pytest.raises(DecodeError, match="image/"):
        ImageBlock(URLSource("https://x"), "application/pdf")
    with pytest.raises(DecodeError, match="width and height"):
        ImageBlock(URLSource("https://x"), width=3)
    with pytest.raises(DecodeError, match="detail"):
        ImageBlock(URLSource("https://x"), detail="ultra")
    with pytest.raises(DecodeError):
        codec.loads(b'{"type":"image","source":{"kind":"text","text":"x"}}', ImageBlock)


def test_the_assembler_builds_a_generated_image_from_its_bytes() -> None:
    raw = {
        "type": "image",
        "source": {"kind": "bytes", "blob": {"base64": "iVBORw0KGgo="}},
        "media_type": "image/png",
    }
    response = assemble(
        [
            ResponseStart(),
            BlockStart(0, "image", raw=raw),
            BlockEnd(0),
            Finish("stop"),
        ]
    )
    (image,) = response.content
    assert isinstance(image, ImageBlock) and isinstance(image.source, BytesSource)
    assert image.source.blob.data == b"\x89PNG\r\n\x1a\n"


def test_the_renderer_shows_a_line_never_the_bytes() -> None:
    big = PNG + b"\x00" * (312 * 1024 - len(PNG))
    image = ImageBlock.from_bytes(big, filename="screenshot.png")
    assert attachment_line(image) == "[image screenshot.png 1280\u00d7800, 312 KB]"
    doc = DocumentBlock.from_bytes(pdf(["a", "b"]), title="Q3 Report")
    assert attachment_line(doc) == f"[document Q3 Report (PDF, 2 pages), {len(pdf(['a', 'b']))} B]"
    assert attachment_line(DocumentBlock.from_text("hello", title="Notes")) == (
        "[document Notes (text), 5 characters]"
    )
    assert attachment_line(ImageBlock.from_url("https://example.com/cat.jpg")) == (
        "[image https://example.com/cat.jpg]"
    )
    evil = ImageBlock.from_bytes(PNG, filename="a\x1b]52;c;evil\x07.png")
    assert "\x1b" not in attachment_line(evil)
    out = io.StringIO()
    renderer = Renderer(Console(file=out, width=100))
    renderer.part(image)
    assert out.getvalue() == "[image screenshot.png 1280\u00d7800, 312 KB]\n"


def test_document_footnotes_name_the_pages() -> None:
    notes = Footnotes()
    q3 = Source(title="Q3 2025 Quarterly Report", document=DocumentLocation(0, "page", 3, 5))
    notes.cite(Attribution(Source(url="https://example.com/a", title="Example")))
    assert notes.cite(Attribution(q3, excerpt="Revenue rose 12%.")) == 2
    assert notes.lines() == [
        "[1] Example — example.com",
        "    https://example.com/a",
        "[2] Q3 2025 Quarterly Report, pp. 3\u20134",
    ]
    assert notes.lines(excerpts=True)[-1] == "    \u201cRevenue rose 12%.\u201d"


def test_location_labels_in_the_documents_own_units() -> None:
    assert DocumentLocation(0, "page", 3, 4).label == "p. 3"
    assert DocumentLocation(0, "char", 0, 120).label == "chars 0\u2013120"
    assert DocumentLocation(0, "block", 1, 2).label == "block 1"
    assert DocumentLocation(0, "block", 1, 3).label == "blocks 1\u20132"


def test_a_plain_source_encodes_as_it_always_did() -> None:
    assert codec.dumps(Source(url="u", title="t")) == b'{"url":"u","title":"t"}'
    with_doc = Source(title="t", document=DocumentLocation(1, "page", 2, 3, 0, 1))
    assert msgspec.json.decode(codec.dumps(with_doc))["document"] == {
        "index": 1,
        "unit": "page",
        "start": 2,
        "end": 3,
        "message": 0,
        "block": 1,
    }
    assert codec.loads(codec.dumps(with_doc), Source) == with_doc


def test_document_text_of_each_textual_source() -> None:
    assert DocumentBlock.from_text("abc").text == "abc"
    assert DocumentBlock(ChunksSource(("a", "b"))).text == "a\n\nb"
    assert DocumentBlock(SearchResultSource("s", ("x",))).text == "x"
    assert DocumentBlock(TextSource("t")).name is None
    assert DocumentBlock.from_bytes(b"notes\n", filename="n.md").text == "notes\n"
    assert DocumentBlock.from_bytes(pdf()).text is None
