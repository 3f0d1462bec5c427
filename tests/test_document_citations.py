"""Citations into documents of the conversation: Anthropic's char, page,
content-block and search-result locations become attributions naming the
document (which block of which message, its title) and the location in its
own unit, with the excerpt; the raw citation stays for replay."""

from __future__ import annotations

import json
from typing import Any

from elelem.providers import load_shape
from elelem.render.lines import Footnotes
from elelem.shapes.anthropic_messages import SHAPE
from elelem.stream.assembler import assemble
from elelem.vocabulary import (
    Attribution,
    DocumentBlock,
    DocumentLocation,
    Message,
    ProviderId,
    ProviderPayload,
    Source,
    TextBlock,
)
from elelem.wire import ModelRequest
from media_fixtures import pdf

ANTHROPIC = ProviderId("anthropic")

REPORT = DocumentBlock.from_bytes(pdf(["p1", "p2", "p3", "p4"]), citations=True)
NOTES = DocumentBlock.from_text("The sky is blue. Grass is green.", title="Notes", citations=True)
CHUNKS = DocumentBlock.from_chunks(["Alpha.", "Beta.", "Gamma."], title="Greek", citations=True)
RESULT = DocumentBlock.search_result(
    "https://kb.example.com/refunds", "Refund policy", ["Refunds within 30 days.", "Ask."]
)

REQUEST = ModelRequest(
    model="claude-sonnet-4-5",
    messages=(
        Message("system", (TextBlock("be brief"),), "system"),
        Message("user", (TextBlock("Read these."), REPORT, NOTES), "user"),
        Message("assistant", (TextBlock("Read."),), "assistant"),
        Message("user", (CHUNKS, RESULT, TextBlock("Summarise.")), "user"),
    ),
)

CITATIONS: list[dict[str, Any]] = [
    {
        "type": "page_location",
        "cited_text": "Q3 revenue was 42 million.",
        "document_index": 0,
        "document_title": "Q3 2025 Quarterly Report",
        "start_page_number": 3,
        "end_page_number": 5,
    },
    {
        "type": "char_location",
        "cited_text": "The sky is blue.",
        "document_index": 1,
        "document_title": None,
        "start_char_index": 0,
        "end_char_index": 16,
    },
    {
        "type": "content_block_location",
        "cited_text": "Beta.",
        "document_index": 2,
        "document_title": "Greek",
        "start_block_index": 1,
        "end_block_index": 2,
    },
    {
        "type": "search_result_location",
        "cited_text": "Refunds within 30 days.",
        "source": "https://kb.example.com/refunds",
        "title": "Refund policy",
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
    },
]


def _response(citations: list[dict[str, Any]]) -> bytes:
    return json.dumps(
        {
            "id": "msg_doc",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [
                {"type": "text", "text": "Revenue was 42M.", "citations": citations},
            ],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
    ).encode()


def test_every_document_location_becomes_an_exact_attribution() -> None:
    chunks = SHAPE.parse_response(_response(CITATIONS), ANTHROPIC, REQUEST)
    (block,) = assemble(chunks, ANTHROPIC).content
    assert isinstance(block, TextBlock)
    assert block.attributions == (
        Attribution(
            Source(
                title="Q3 2025 Quarterly Report",
                document=DocumentLocation(0, "page", 3, 5, message=1, block=1),
            ),
            excerpt="Q3 revenue was 42 million.",
            replay=ProviderPayload(ANTHROPIC, "citation", None, CITATIONS[0]),
        ),
        Attribution(
            # No title on the wire: the document's own.
            Source(title="Notes", document=DocumentLocation(1, "char", 0, 16, message=1, block=2)),
            excerpt="The sky is blue.",
            replay=ProviderPayload(ANTHROPIC, "citation", None, CITATIONS[1]),
        ),
        Attribution(
            Source(title="Greek", document=DocumentLocation(2, "block", 1, 2, message=3, block=0)),
            excerpt="Beta.",
            replay=ProviderPayload(ANTHROPIC, "citation", None, CITATIONS[2]),
        ),
        Attribution(
            Source(
                title="Refund policy",
                document=DocumentLocation(0, "block", 0, 1, message=3, block=1),
            ),
            excerpt="Refunds within 30 days.",
            replay=ProviderPayload(ANTHROPIC, "citation", None, CITATIONS[3]),
        ),
    )


def test_without_the_request_the_location_is_still_kept() -> None:
    chunks = SHAPE.parse_response(_response(CITATIONS[:1]), ANTHROPIC, None)
    (block,) = assemble(chunks, ANTHROPIC).content
    assert isinstance(block, TextBlock)
    assert block.attributions[0].source == Source(
        title="Q3 2025 Quarterly Report", document=DocumentLocation(0, "page", 3, 5)
    )


def test_page_citations_render_as_footnotes_with_pages() -> None:
    chunks = SHAPE.parse_response(_response(CITATIONS[:2]), ANTHROPIC, REQUEST)
    (block,) = assemble(chunks, ANTHROPIC).content
    assert isinstance(block, TextBlock)
    notes = Footnotes()
    for attribution in block.attributions:
        notes.cite(attribution)
    assert notes.lines() == [
        "[1] Q3 2025 Quarterly Report, pp. 3\u20134",
        "[2] Notes, chars 0\u201316",
    ]
    assert notes.lines(excerpts=True) == [
        "[1] Q3 2025 Quarterly Report, pp. 3\u20134",
        "    \u201cQ3 revenue was 42 million.\u201d",
        "[2] Notes, chars 0\u201316",
        "    \u201cThe sky is blue.\u201d",
    ]


BEDROCK = ProviderId("bedrock")

BEDROCK_CITATION: dict[str, Any] = {
    "title": "Q3 2025 Quarterly Report",
    "sourceContent": [{"text": "Q3 revenue was 42 million."}],
    "location": {"documentPage": {"documentIndex": 0, "start": 3, "end": 4}},
}


def _bedrock_attribution() -> Attribution:
    return Attribution(
        # Bedrock's page span is inclusive: pages 3 to 4.
        Source(title="Q3 2025 Quarterly Report", document=DocumentLocation(0, "page", 3, 5)),
        excerpt="Q3 revenue was 42 million.",
        replay=ProviderPayload(BEDROCK, "citation", None, BEDROCK_CITATION),
    )


def test_bedrock_streamed_document_citations_become_attributions() -> None:
    shape = load_shape("bedrock_converse")
    parser = shape.new_parser(BEDROCK)
    events = [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Revenue was 42M."}}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"citation": BEDROCK_CITATION}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": "end_turn"}),
        ("metadata", {"usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}}),
    ]
    chunks = [c for name, body in events for c in parser.message(name, json.dumps(body))]
    chunks += parser.eof()
    (block,) = assemble(chunks, BEDROCK).content
    assert isinstance(block, TextBlock)
    assert block.text == "Revenue was 42M."
    assert block.attributions == (_bedrock_attribution(),)


def test_bedrock_whole_response_citations_content() -> None:
    body = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "citationsContent": {
                            "content": [{"text": "Revenue was 42M."}],
                            "citations": [BEDROCK_CITATION],
                        }
                    }
                ],
            }
        },
        "stopReason": "end_turn",
        "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7},
    }
    chunks = load_shape("bedrock_converse").parse_response(json.dumps(body).encode(), BEDROCK)
    (block,) = assemble(chunks, BEDROCK).content
    assert isinstance(block, TextBlock)
    assert block.text == "Revenue was 42M."
    assert block.attributions == (_bedrock_attribution(),)
    assert (
        ProviderPayload(
            BEDROCK,
            "citations_content",
            None,
            body["output"]["message"]["content"][0]["citationsContent"],  # type: ignore[index]
        )
        in block.payloads
    )


def test_the_portable_projection_keeps_title_excerpt_and_location() -> None:
    from elelem.conversation import Conversation, SQLiteStore, portable_history

    chunks = SHAPE.parse_response(_response(CITATIONS[:1]), ANTHROPIC, REQUEST)
    message = assemble(chunks, ANTHROPIC).to_message()
    with SQLiteStore(":memory:") as store:
        convo = Conversation.create(store)
        convo.add_message(message)
        (portable,) = portable_history(convo.events).messages
    (block,) = portable.content
    assert isinstance(block, TextBlock)
    (attribution,) = block.attributions
    assert attribution.replay is None
    assert attribution.excerpt == "Q3 revenue was 42 million."
    assert attribution.source == Source(
        title="Q3 2025 Quarterly Report",
        document=DocumentLocation(0, "page", 3, 5, message=1, block=1),
    )
