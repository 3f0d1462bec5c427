"""Images and documents on every wire: the exact JSON each shape sends for
an image and a PDF (fixtures made here), inside tool results, the drop
reports where a wire cannot carry one, provider size limits before sending,
and generated images coming back and replayed natively."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from elelem.errors import AttachmentTooLargeError
from elelem.providers import load_shape
from elelem.stream.assembler import assemble
from elelem.vocabulary import (
    BytesSource,
    DocumentBlock,
    FileSource,
    ImageBlock,
    Message,
    ProviderId,
    ProviderPayload,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from elelem.vocabulary.drop import UNSUPPORTED, Drop
from elelem.vocabulary.ids import CallId
from elelem.wire import ModelRequest
from media_fixtures import pdf, png

PNG = png(4, 3)
PDF = pdf(["Q3 revenue was 42 million."])
PNG64 = base64.b64encode(PNG).decode()
PDF64 = base64.b64encode(PDF).decode()
IMAGE = ImageBlock.from_bytes(PNG, filename="dot.png")
REPORT = DocumentBlock.from_bytes(PDF, title="Q3 Report", filename="q3.pdf", citations=True)


def _encode(shape: str, provider: str, *messages: Message, model: str = "m") -> Any:
    request = ModelRequest(model=model, messages=tuple(messages))
    return load_shape(shape).encode_request(request, provider=ProviderId(provider), stream=False)


def _user(*parts: Any) -> Message:
    return Message("user", (*parts, TextBlock("What is this?")), "user")


def test_anthropic_image_and_pdf() -> None:
    body = _encode("anthropic_messages", "anthropic", _user(IMAGE, REPORT)).body
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG64},
                },
                {
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": PDF64},
                    "title": "Q3 Report",
                    "citations": {"enabled": True},
                },
                {"type": "text", "text": "What is this?"},
            ],
        }
    ]


def test_anthropic_every_document_source_and_search_results() -> None:
    blocks = (
        ImageBlock.from_url("https://example.com/cat.jpg"),
        ImageBlock(FileSource(ProviderPayload(ProviderId("anthropic"), "file", None, "file_011"))),
        DocumentBlock.from_text("plain words", title="Notes", context="from the wiki"),
        DocumentBlock.from_chunks(["one", "two"], title="Chunks", citations=True),
        DocumentBlock.search_result("https://kb.example.com/r", "Refunds", ["30 days."]),
    )
    encoded = _encode("anthropic_messages", "anthropic", Message("user", blocks, "user"))
    assert encoded.body["messages"][0]["content"] == [
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
        {"type": "image", "source": {"type": "file", "file_id": "file_011"}},
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "plain words"},
            "title": "Notes",
            "context": "from the wiki",
        },
        {
            "type": "document",
            "source": {
                "type": "content",
                "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
            },
            "title": "Chunks",
            "citations": {"enabled": True},
        },
        {
            "type": "search_result",
            "source": "https://kb.example.com/r",
            "title": "Refunds",
            "content": [{"type": "text", "text": "30 days."}],
            "citations": {"enabled": True},
        },
    ]
    assert encoded.dropped == ()
    # A Files API id needs its beta.
    assert encoded.headers["anthropic-beta"] == "files-api-2025-04-14"


def _tool_turn() -> tuple[Message, Message]:
    call = Message(
        "assistant",
        (ToolCallBlock(CallId("call_1"), "screenshot", "{}"),),
        "assistant",
        ProviderId("other"),
    )
    result = ToolResultBlock(
        CallId("call_1"), "here it is", name="screenshot", attachments=(IMAGE,)
    )
    return call, Message("user", (result,), "tool")


def test_anthropic_image_inside_a_tool_result() -> None:
    body = _encode("anthropic_messages", "anthropic", *_tool_turn()).body
    assert body["messages"][1]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "call_1",
            "content": [
                {"type": "text", "text": "here it is"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG64},
                },
            ],
        }
    ]


def test_responses_image_and_pdf_and_function_call_output() -> None:
    body = _encode("openai_responses", "openai", _user(IMAGE, REPORT)).body
    assert body["input"] == [
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_image",
                    "image_url": f"data:image/png;base64,{PNG64}",
                    "detail": "auto",
                },
                {
                    "type": "input_file",
                    "filename": "q3.pdf",
                    "file_data": f"data:application/pdf;base64,{PDF64}",
                },
                {"type": "input_text", "text": "What is this?"},
            ],
        }
    ]
    tool = _encode("openai_responses", "openai", *_tool_turn()).body["input"]
    assert tool[-1] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": [
            {"type": "input_text", "text": "here it is"},
            {
                "type": "input_image",
                "image_url": f"data:image/png;base64,{PNG64}",
                "detail": "auto",
            },
        ],
    }


def test_responses_urls_and_file_ids() -> None:
    file = FileSource(ProviderPayload(ProviderId("openai"), "file", None, "file-abc"))
    blocks = (
        ImageBlock.from_url("https://example.com/cat.jpg", detail="low"),
        DocumentBlock(URLSource_pdf := _url_pdf(), "application/pdf"),
        DocumentBlock(file, "application/pdf"),
    )
    del URLSource_pdf
    body = _encode("openai_responses", "openai", Message("user", blocks, "user")).body
    assert body["input"][0]["content"] == [
        {"type": "input_image", "image_url": "https://example.com/cat.jpg", "detail": "low"},
        {"type": "input_file", "file_url": "https://example.com/a.pdf"},
        {"type": "input_file", "file_id": "file-abc"},
    ]


def _url_pdf() -> Any:
    from elelem.vocabulary import URLSource

    return URLSource("https://example.com/a.pdf")


def test_chat_image_and_pdf_on_openai() -> None:
    body = _encode("openai_chat", "openai", _user(IMAGE, REPORT)).body
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}},
                {
                    "type": "file",
                    "file": {
                        "filename": "q3.pdf",
                        "file_data": f"data:application/pdf;base64,{PDF64}",
                    },
                },
                {"type": "text", "text": "What is this?"},
            ],
        }
    ]


def test_chat_dialects_that_take_no_images_or_files_report_the_drop() -> None:
    encoded = _encode("openai_chat", "deepseek", _user(IMAGE, REPORT))
    assert encoded.body["messages"] == [{"role": "user", "content": "What is this?"}]
    assert list(encoded.dropped) == [
        Drop(
            "messages[0].content[0]",
            "image",
            UNSUPPORTED,
            "the deepseek chat dialect takes no images",
        ),
        Drop(
            "messages[0].content[1]",
            "document",
            UNSUPPORTED,
            "the deepseek chat dialect takes no files",
        ),
    ]
    groq = _encode("openai_chat", "groq", _user(IMAGE, REPORT))
    assert groq.body["messages"][0]["content"][0]["type"] == "image_url"
    assert len(groq.dropped) == 1 and "takes no files" in groq.dropped[0].detail


def test_gemini_image_and_pdf_and_tool_result_parts() -> None:
    body = _encode("gemini", "google", _user(IMAGE, REPORT)).body
    assert body["contents"] == [
        {
            "role": "user",
            "parts": [
                {"inlineData": {"mimeType": "image/png", "data": PNG64}},
                {"inlineData": {"mimeType": "application/pdf", "data": PDF64}},
                {"text": "What is this?"},
            ],
        }
    ]
    contents = _encode("gemini", "google", *_tool_turn()).body["contents"]
    assert contents[-1]["parts"][1:] == [{"inlineData": {"mimeType": "image/png", "data": PNG64}}]
    assert contents[-1]["parts"][0]["functionResponse"]["name"] == "screenshot"


def test_bedrock_image_and_pdf_and_tool_result() -> None:
    body = _encode("bedrock_converse", "bedrock", _user(IMAGE, REPORT)).body
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"image": {"format": "png", "source": {"bytes": PNG64}}},
                {
                    "document": {
                        "format": "pdf",
                        "name": "Q3 Report",
                        "source": {"bytes": PDF64},
                        "citations": {"enabled": True},
                    }
                },
                {"text": "What is this?"},
            ],
        }
    ]
    tool = _encode("bedrock_converse", "bedrock", *_tool_turn()).body["messages"][-1]
    assert tool["content"][0]["toolResult"]["content"] == [
        {"text": "here it is"},
        {"image": {"format": "png", "source": {"bytes": PNG64}}},
    ]


def test_ollama_images_and_the_pdf_it_cannot_take() -> None:
    encoded = _encode("ollama_native", "ollama-native", _user(IMAGE, REPORT))
    assert encoded.body["messages"] == [
        {"role": "user", "content": "What is this?", "images": [PNG64]}
    ]
    assert encoded.dropped == (
        Drop(
            "messages[0].content[1]",
            "document",
            UNSUPPORTED,
            "Ollama takes no document of type application/pdf",
        ),
    )


@pytest.mark.parametrize(
    ("shape", "provider", "limit"),
    [
        ("anthropic_messages", "anthropic", 5 * 1024 * 1024),
        ("bedrock_converse", "bedrock", 3_932_160),
    ],
)
def test_an_image_over_the_providers_limit_fails_before_sending(
    shape: str, provider: str, limit: int
) -> None:
    big = ImageBlock.from_bytes(PNG + b"\x00" * limit, filename="huge.png")
    with pytest.raises(AttachmentTooLargeError) as err:
        _encode(shape, provider, _user(big))
    assert err.value.limit == limit
    assert f"image huge.png is {len(PNG) + limit:,} bytes" in str(err.value)
    assert f"up to {limit:,} bytes" in str(err.value)


def test_a_pdf_over_anthropics_page_limit_fails_naming_it() -> None:
    long = DocumentBlock.from_bytes(pdf(["x"] * 101), title="Long")
    with pytest.raises(AttachmentTooLargeError, match="has 101 pages; Anthropic takes"):
        _encode("anthropic_messages", "anthropic", _user(long))


def test_a_foreign_file_id_is_never_sent() -> None:
    file = ImageBlock(FileSource(ProviderPayload(ProviderId("openai"), "file", None, "file-abc")))
    encoded = _encode("anthropic_messages", "anthropic", _user(file))
    assert encoded.body["messages"][0]["content"] == [{"type": "text", "text": "What is this?"}]
    assert "a openai file id cannot be sent to anthropic" in str(encoded.dropped[0])


# -- images coming back ------------------------------------------------------------


def test_a_responses_generated_image_is_an_image_block_replayed_natively() -> None:
    openai = ProviderId("openai")
    item = {
        "id": "ig_1",
        "type": "image_generation_call",
        "status": "completed",
        "output_format": "png",
        "result": PNG64,
        "revised_prompt": "a dot",
    }
    body = {
        "id": "resp_1",
        "object": "response",
        "model": "gpt-5",
        "status": "completed",
        "output": [item],
        "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
    }
    chunks = load_shape("openai_responses").parse_response(json.dumps(body).encode(), openai)
    response = assemble(chunks, openai)
    started, hosted, image = response.content
    assert (started.state, hosted.state) == ("started", "completed")  # type: ignore[union-attr]
    assert isinstance(image, ImageBlock) and isinstance(image.source, BytesSource)
    assert image.source.blob.data == PNG
    assert (image.media_type, image.width, image.height) == ("image/png", 4, 3)
    # The bytes live once: the hosted item keeps its place for them, empty.
    assert hosted.payload.value["result"] is None  # type: ignore[union-attr]
    replay = _encode("openai_responses", "openai", _user(), response.to_message())
    assert replay.body["input"][-1] == item
    assert replay.dropped == ()


def test_a_gemini_inline_image_is_an_image_block_replayed_with_its_signature() -> None:
    google = ProviderId("google")
    part = {"inlineData": {"mimeType": "image/png", "data": PNG64}, "thoughtSignature": "sig"}
    body = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "Here:"}, part]},
                "finishReason": "STOP",
            }
        ],
        "modelVersion": "gemini-2.5-flash-image",
    }
    chunks = load_shape("gemini").parse_response(json.dumps(body).encode(), google)
    response = assemble(chunks, google)
    _, image = response.content
    assert isinstance(image, ImageBlock) and isinstance(image.source, BytesSource)
    assert image.source.blob.data == PNG and (image.width, image.height) == (4, 3)
    replay = _encode("gemini", "google", _user(), response.to_message())
    assert replay.body["contents"][-1]["parts"] == [{"text": "Here:"}, part]


def test_images_over_the_whole_requests_limit_fail_naming_it() -> None:
    # Three 7 MB images: each under Gemini's 20 MB, together over it as base64.
    parts = [ImageBlock.from_bytes(PNG + bytes(7 * 1024 * 1024)) for _ in range(3)]
    with pytest.raises(AttachmentTooLargeError) as err:
        _encode("gemini", "google", _user(*parts))
    assert err.value.limit == 20 * 1024 * 1024
    assert "Gemini takes requests of up to 20,971,520 bytes" in str(err.value)


def test_chat_sends_a_tool_results_image_in_the_user_message_after_it() -> None:
    messages = _encode("openai_chat", "openai", *_tool_turn()).body["messages"]
    assert messages[-2:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "here it is"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[attachments of tool result call_1]"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}},
            ],
        },
    ]


@pytest.mark.parametrize(
    ("url", "media_type"),
    [
        ("https://example.com/chart.png", "image/png"),
        ("https://example.com/photo.WEBP?v=2", "image/webp"),
        ("https://example.com/scan.jpeg", "image/jpeg"),
        ("https://example.com/render", "image/jpeg"),  # nothing says: the usual one
    ],
)
def test_a_gemini_image_by_url_is_sent_with_the_media_type_its_name_says(
    url: str, media_type: str
) -> None:
    # fileData requires mimeType (https://ai.google.dev/api/caching#FileData);
    # a .png sent as image/jpeg is misread.
    body = _encode("gemini", "google", _user(ImageBlock.from_url(url))).body
    assert body["contents"][0]["parts"][0] == {"fileData": {"mimeType": media_type, "fileUri": url}}
