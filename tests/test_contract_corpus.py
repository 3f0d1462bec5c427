"""Recorded provider traffic through the real driver equals the shape's direct parse.

The done-when test of issue 4: the recorded Anthropic web-search stream,
served on loopback, comes out of ``Client.stream(...).final()`` with the same
blocks, citations and hosted activities that ``elelem inspect`` prints for
the same file.  Then a sweep: every Anthropic Messages and OpenAI Responses
interaction of the corpus goes through the driver and must give exactly the
``elelem inspect`` lines.  The corpus is read in place (skipped where absent).
"""

from __future__ import annotations

import asyncio
import csv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import pytest

from elelem import Client
from elelem.cli.inspect import SHAPES, detect_shape, inspect_interaction, inspect_recording
from elelem.cli.inspect import _response_lines as inspect_lines
from elelem.codec import to_builtins
from elelem.errors import ElelemError
from elelem.providers import load_shape
from elelem.shapes.base import FrameParser, ModelRequest, Shape
from elelem.stream import AssembledResponse, Chunk
from elelem.testing.cassettes import Interaction, load
from elelem.testing.servers import LoopbackServer, Reply, Send, replay
from elelem.transport import Driver, Endpoint
from elelem.vocabulary import HostedActivity, ProviderId, TextBlock, WebSearch

WEB_SEARCH = (
    "vercel__ai/packages__anthropic__src____fixtures____anthropic-web-search-tool.1.chunks.txt"
)
WEB_SEARCH_JSON = (
    "vercel__ai/packages__anthropic__src____fixtures____anthropic-web-search-tool.1.json"
)


def env_for(server: LoopbackServer) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "sk-ant-loopback-1",
        "OPENAI_BASE_URL": server.url,
        "OPENAI_API_KEY": "sk-loopback-1",
        "ELELEM_CONFIG": "/nonexistent/elelem.toml",
    }


def as_json(lines: list[dict[str, Any]]) -> Any:
    return msgspec.json.decode(msgspec.json.encode(lines))


def test_recorded_web_search_stream_through_client_equals_elelem_inspect(corpus: Path) -> None:
    path = corpus / WEB_SEARCH
    (interaction,) = load(path).interactions
    expected = as_json(inspect_recording(str(path)))

    async def main() -> AssembledResponse:
        body = interaction.response.body
        with LoopbackServer([replay(body, chunk_size=1500)]) as server:
            async with Client(env=env_for(server)) as client:
                stream = client.stream("anthropic:claude-sonnet-4-20250514", "What's new in tech?")
                async with stream:
                    return await stream.final()

    result = asyncio.run(main())
    assert as_json(inspect_lines(0, result)) == expected
    # And, spelled out, what the file holds.
    texts = [b for b in result.content if isinstance(b, TextBlock)]
    cited = [b for b in texts if b.attributions]
    activities = [a for a in result.content if isinstance(a, HostedActivity)]
    assert [(a.name, a.state) for a in activities] == [
        ("web_search", "started"),
        ("web_search", "completed"),
    ]
    assert activities[0].input == {"query": "tech news today September 26 2025"}
    assert len(texts) == 19 and len(cited) == 9
    assert sum(len(b.attributions) for b in cited) == 14
    assert all(a.source.url.startswith("https://") for b in cited for a in b.attributions)
    assert result.finish_reason == "stop" and result.response_id == "msg_01LHpEgU4KbfgXGVi3UtHQY1"
    assert result.usage is not None and result.usage.hosted == {"web_search": 1, "web_fetch": 0}


def test_web_search_request_names_the_tool_version_in_payloads(corpus: Path) -> None:
    """Sent with the hosted tool, the parser records its wire version; all else is equal."""
    path = corpus / WEB_SEARCH
    (interaction,) = load(path).interactions
    expected = as_json(inspect_recording(str(path)))

    async def main() -> AssembledResponse:
        with LoopbackServer([replay(interaction.response.body)]) as server:
            async with Client(env=env_for(server)) as client:
                return await client.stream(
                    "anthropic:claude-sonnet-4-20250514", "q", hosted_tools=(WebSearch(),)
                ).final()

    result = asyncio.run(main())
    got = as_json(inspect_lines(0, result))
    versions = [line["activity"]["payload"]["version"] for line in got if line["kind"] == "hosted"]
    assert versions == ["web_search_20250305", "web_search_20250305"]
    for line in got:
        if line["kind"] == "hosted":
            line["activity"]["payload"]["version"] = None
    assert got == expected


def test_recorded_non_streaming_twin_through_client_complete(corpus: Path) -> None:
    path = corpus / WEB_SEARCH_JSON
    (interaction,) = load(path).interactions
    expected = as_json(inspect_recording(str(path)))

    async def main() -> AssembledResponse:
        body = interaction.response.body
        with LoopbackServer([replay(body, content_type="application/json")]) as server:
            async with Client(env=env_for(server)) as client:
                return await client.complete("anthropic:claude-sonnet-4-20250514", "q")

    assert as_json(inspect_lines(0, asyncio.run(main()))) == expected


# -- the sweep ----------------------------------------------------------------------


class RecordedRequestShape:
    """The real shape, with the recorded wire request handed to its parser (as
    ``elelem inspect`` does), so hosted tool versions come out the same."""

    def __init__(self, shape: Shape, wire: Any) -> None:
        self._shape = shape
        self._wire = wire
        self.name = shape.name
        self.framing = shape.framing

    def encode_request(self, request: ModelRequest, **kwargs: Any) -> Any:
        return self._shape.encode_request(request, **kwargs)

    def new_parser(self, provider: ProviderId, request: Any = None) -> FrameParser:
        return self._shape.new_parser(provider, self._wire)

    def parse_response(self, body: bytes, provider: ProviderId, request: Any = None) -> list[Chunk]:
        return self._shape.parse_response(body, provider, self._wire)

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> Any:
        return self._shape.classify_error(status, headers, body)


SHAPE_OF = {
    "messages": ("anthropic_messages", "anthropic"),
    "responses": ("openai_responses", "openai"),
}


def corpus_cases() -> list[Any]:
    from conftest import corpus_root

    root = corpus_root()
    if root is None:
        return []
    with open(root / "INDEX.tsv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [
        pytest.param(
            row["local_file"], SHAPE_OF[row["api_shape"]], id=row["local_file"].split("/")[-1]
        )
        for row in rows
        if row["provider"] in ("anthropic", "openai") and row["api_shape"] in SHAPE_OF
    ]


def through_driver(interaction: Interaction, shape: Shape, provider: str) -> AssembledResponse:
    response = interaction.response
    content_type = response.headers.get("content-type") or (
        "text/event-stream" if response.streamed else "application/json"
    )
    reply = Reply(response.status, {"content-type": content_type}, (Send(response.body),))
    request = ModelRequest(model="recorded", messages=())

    async def main() -> AssembledResponse:
        with LoopbackServer([reply]) as server:
            driver = Driver()
            endpoint = Endpoint(ProviderId(provider), server.url, api_key="sk-loopback-1")
            try:
                if response.streamed:
                    return await driver.stream(endpoint, shape, request).final()
                return await driver.complete(endpoint, shape, request)
            finally:
                await driver.aclose()

    return asyncio.run(main())


@pytest.mark.parametrize(("local_file", "shape_provider"), corpus_cases())
def test_every_recorded_interaction_through_the_driver(
    corpus: Path, local_file: str, shape_provider: tuple[str, str]
) -> None:
    shape_name, provider = shape_provider
    real = load_shape(shape_name)
    checked = 0
    for interaction in load(corpus / local_file).interactions:
        if detect_shape(interaction) != shape_name:
            continue  # another endpoint the cassette also recorded (uploads, listings)
        try:
            expected = as_json(inspect_interaction(interaction, wire_replay=False))
        except ElelemError as exc:
            expected = type(exc).__name__
        if interaction.response.status >= 400 or (
            isinstance(expected, list) and any(line["kind"] == "error" for line in expected)
        ):
            continue  # a recorded error: the fault suite covers error paths
        recorded = interaction.request is not None and SHAPES[shape_name].wire_request
        wire = interaction.request.json if recorded and interaction.request is not None else None
        shape = RecordedRequestShape(real, wire)
        try:
            got: Any = as_json(
                inspect_lines(interaction.index, through_driver(interaction, shape, provider))
            )
        except ElelemError as exc:
            got = type(exc).__name__
        assert got == expected, f"interaction {interaction.index}"
        checked += 1
    if checked == 0:
        pytest.skip(f"{local_file}: only recorded errors")


def test_payload_values_survive_the_driver_byte_exact(corpus: Path) -> None:
    """The opaque web-search payloads (encrypted content) come through unchanged."""
    (interaction,) = load(corpus / WEB_SEARCH).interactions
    result = through_driver(interaction, load_shape("anthropic_messages"), "anthropic")
    completed = [
        a for a in result.content if isinstance(a, HostedActivity) and a.state == "completed"
    ]
    assert len(completed) == 1 and completed[0].payload is not None
    raw = to_builtins(completed[0].payload)["value"]
    body = interaction.response.body.decode("utf-8")
    for item in raw["content"]:
        assert msgspec.json.encode(item["encrypted_content"]).decode() in body
