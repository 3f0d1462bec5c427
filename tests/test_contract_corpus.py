"""Recorded provider traffic through the real driver equals the shape's direct parse.

The done-when test of issue 4: the recorded Anthropic web-search stream,
served on loopback, comes out of ``Client.stream(...).final()`` with the same
blocks, citations and hosted activities that ``elelem inspect`` prints for
the same file.  Then a sweep: every recorded model response of the corpus,
for every shape that exists, goes through the driver and must give exactly
the ``elelem inspect`` lines.  The corpus is read in place (skipped where absent).
"""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path
from typing import Any

import msgspec
import pytest

from elelem import Client
from elelem.cli.inspect import _error_line as inspect_error_line
from elelem.cli.inspect import _response_lines as inspect_lines
from elelem.cli.inspect import (
    detect_shape,
    inspect_interaction,
    inspect_recording,
    recorded_provider,
)
from elelem.codec import to_builtins
from elelem.errors import ElelemError, UnsupportedError
from elelem.providers import load_shape
from elelem.providers.recognize import RAW_REQUEST_SHAPES
from elelem.recordings.cassettes import Interaction, load
from elelem.recordings.replaying import RecordedRequestShape, Replayed, through_driver
from elelem.stream import AssembledResponse
from elelem.testing.servers import LoopbackServer, replay
from elelem.vocabulary import HostedActivity, ProviderId, TextBlock, WebSearch
from elelem.wire import Shape

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


def corpus_cases() -> list[Any]:
    from conftest import corpus_root

    root = corpus_root()
    with open(root / "INDEX.tsv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    # Gemini Interactions is a parked shape the driver does not load; its
    # recordings are swept by tests/test_gemini_interactions.py instead.
    return [
        pytest.param(row["local_file"], id=row["local_file"].split("/")[-1])
        for row in rows
        if not (row["provider"] == "google" and row["api_shape"] == "other")
    ]


def replayed(interaction: Interaction, shape: Shape, provider: str) -> Replayed:
    """The interaction through :func:`elelem.recordings.replaying.through_driver`
    (a framing or transport fault raised)."""
    (out,) = through_driver([(interaction, shape, ProviderId(provider))])
    if isinstance(out, ElelemError):
        raise out
    return out


@pytest.mark.parametrize("local_file", corpus_cases())
def test_every_recorded_interaction_through_the_driver(corpus: Path, local_file: str) -> None:
    """Responses, and recorded errors (HTTP statuses and mid-stream error events)
    alike: the driver gives exactly what ``elelem inspect`` prints."""
    checked = 0
    for interaction in load(corpus / local_file).interactions:
        shape_name = detect_shape(interaction)
        if shape_name is None:
            continue  # another endpoint the cassette also recorded (uploads, listings)
        try:
            real = load_shape(shape_name)
        except UnsupportedError:
            continue  # a shape not built yet
        provider = recorded_provider(interaction, shape_name)
        try:
            expected: Any = as_json(inspect_interaction(interaction, wire_replay=False))
        except ElelemError as exc:
            expected = type(exc).__name__
        recorded = interaction.request is not None and shape_name in RAW_REQUEST_SHAPES
        wire = interaction.request.json if recorded and interaction.request is not None else None
        shape = RecordedRequestShape(real, wire, interaction)
        got: Any
        try:
            result, error = replayed(interaction, shape, provider)
        except ElelemError as exc:
            got = type(exc).__name__
        else:
            n = interaction.index
            if interaction.response.status >= 400:
                got = as_json([inspect_error_line(n, error)] if error is not None else [])
            else:
                lines = inspect_lines(n, result)
                if error is not None:
                    lines.append(inspect_error_line(n, error))
                got = as_json(lines)
        assert got == expected, f"interaction {interaction.index}"
        checked += 1
    assert checked > 0, f"{local_file}: no model response of a built shape"


def test_payload_values_survive_the_driver_byte_exact(corpus: Path) -> None:
    """The opaque web-search payloads (encrypted content) come through unchanged."""
    (interaction,) = load(corpus / WEB_SEARCH).interactions
    result, error = replayed(interaction, load_shape("anthropic_messages"), "anthropic")
    assert error is None
    completed = [
        a for a in result.content if isinstance(a, HostedActivity) and a.state == "completed"
    ]
    assert len(completed) == 1 and completed[0].payload is not None
    raw = to_builtins(completed[0].payload)["value"]
    body = interaction.response.body.decode("utf-8")
    for item in raw["content"]:
        assert msgspec.json.encode(item["encrypted_content"]).decode() in body
