"""The conformance corpus replayed through each cloud route (issue #28).

Every recorded response of a shape a cloud serves is read by the driver
through that cloud's endpoint — its route (Vertex AI's paths, Claude's
``rawPredict`` body) and a bearer signer — and must give exactly what
``elelem inspect`` prints for it, while the request went to the cloud's path
with the token."""

from __future__ import annotations

import asyncio
import csv
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest

from elelem.cli.inspect import _error_line as inspect_error_line
from elelem.cli.inspect import _response_lines as inspect_lines
from elelem.cli.inspect import detect_shape, inspect_interaction, recorded_provider
from elelem.errors import ElelemError, MalformedStreamError, StreamError, TransportError
from elelem.providers import load_shape
from elelem.providers.clouds import vertex_anthropic_route, vertex_gemini_route
from elelem.providers.recognize import RAW_REQUEST_SHAPES
from elelem.recordings.cassettes import Interaction, load
from elelem.recordings.replaying import RecordedRequestShape, recorded_reply
from elelem.testing.servers import LoopbackServer
from elelem.transport import Driver, Endpoint, ResponseStream
from elelem.transport.bearer import BearerSigner
from elelem.transport.endpoint import Route
from elelem.vocabulary import ProviderId
from elelem.wire import EncodedRequest, ModelRequest

TOKEN = "ya29.corpus-route-token-0123456789"
PREFIX = "v1/projects/proj-c/locations/us-east5"


class StaticToken:
    """A token source that always gives the same token (no expiry)."""

    def fetch(self) -> tuple[str, datetime | None]:
        return TOKEN, None

    def secrets(self) -> tuple[str, ...]:
        return ()


class CanonicalPath(RecordedRequestShape):
    """The recorded request, sent to the shape's own canonical path (which the
    route then moves), with a model named for a route that needs one."""

    def __init__(
        self, shape: Any, wire: Any, interaction: Interaction, paths: tuple[str, str]
    ) -> None:
        super().__init__(shape, wire, interaction)
        self._paths = paths

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        body = {**self._body, "model": "claude-sonnet-4-5"}
        return EncodedRequest(path=self._paths[0 if stream else 1], body=body, stream=stream)


ROUTES: dict[str, tuple[str, tuple[str, str], Route | None, str, str]] = {
    # name: (shape, its own paths streamed and not, route, paths sent streamed and not)
    "vertex": (
        "gemini",
        (
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            "/v1beta/models/gemini-2.5-flash:generateContent",
        ),
        vertex_gemini_route(PREFIX),
        f"/{PREFIX}/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        f"/{PREFIX}/publishers/google/models/gemini-2.5-flash:generateContent",
    ),
    "vertex-anthropic": (
        "anthropic_messages",
        ("/v1/messages", "/v1/messages"),
        vertex_anthropic_route(PREFIX),
        f"/{PREFIX}/publishers/anthropic/models/claude-sonnet-4-5:streamRawPredict",
        f"/{PREFIX}/publishers/anthropic/models/claude-sonnet-4-5:rawPredict",
    ),
    "azure": (
        "openai_responses",
        ("/responses", "/responses"),
        None,
        "/openai/v1/responses",
        "/openai/v1/responses",
    ),
    "azure-chat": (
        "openai_chat",
        ("/chat/completions", "/chat/completions"),
        None,
        "/openai/v1/chat/completions",
        "/openai/v1/chat/completions",
    ),
    "azure-anthropic": (
        "anthropic_messages",
        ("/v1/messages", "/v1/messages"),
        None,
        "/anthropic/v1/messages",
        "/anthropic/v1/messages",
    ),
}
BASES = {"azure": "/openai/v1", "azure-chat": "/openai/v1", "azure-anthropic": "/anthropic"}
"""The path of each Azure resource's base URL (Vertex's is the host alone)."""


def interactions_of(root: Path, shape: str) -> list[Interaction]:
    with open(root / "INDEX.tsv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    found = []
    for row in rows:
        for interaction in load(root / row["local_file"]).interactions:
            if detect_shape(interaction) == shape:
                found.append(interaction)
    return found


def as_json(value: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))


def outcome(interaction: Interaction, stream: ResponseStream, error: BaseException | None) -> Any:
    n = interaction.index
    if isinstance(error, MalformedStreamError | TransportError):
        return type(error).__name__
    result = stream.partial() if error is not None else stream.assembler.result()
    if interaction.response.status >= 400:
        return as_json([inspect_error_line(n, error)] if error is not None else [])
    lines = inspect_lines(n, result)
    if error is not None:
        lines.append(inspect_error_line(n, error))
    return as_json(lines)


@pytest.mark.parametrize("route_name", list(ROUTES))
def test_the_corpus_through_a_cloud_route(corpus: Path, route_name: str) -> None:
    shape_name, canonical, route, streamed_path, whole_path = ROUTES[route_name]
    cases = interactions_of(corpus, shape_name)
    assert cases, f"the corpus holds no {shape_name} recording"
    real = load_shape(shape_name)
    signer = BearerSigner(StaticToken(), where=f"provider {route_name}")
    got: list[Any] = []
    expected: list[Any] = []

    async def main(server: LoopbackServer) -> None:
        driver = Driver()
        base = server.url + BASES.get(route_name, "")
        try:
            for interaction in cases:
                provider = recorded_provider(interaction, shape_name)
                raw = interaction.request is not None and shape_name in RAW_REQUEST_SHAPES
                wire = interaction.request.json if raw and interaction.request else None
                shape = CanonicalPath(real, wire, interaction, canonical)
                endpoint = Endpoint(provider, base, signer=signer, route=route)
                stream = ResponseStream(
                    driver,
                    endpoint,
                    shape,
                    ModelRequest(model="recorded", messages=()),
                    timeouts=driver.timeouts,
                    stream=interaction.response.streamed,
                )
                error: BaseException | None = None
                try:
                    async with stream:
                        await stream.final()
                except StreamError as exc:
                    error = exc
                got.append(outcome(interaction, stream, error))
        finally:
            await driver.aclose()

    for interaction in cases:
        try:
            expected.append(as_json(inspect_interaction(interaction, wire_replay=False)))
        except ElelemError as exc:
            expected.append(type(exc).__name__)
    replies = [recorded_reply(i.response) for i in cases]
    with LoopbackServer(replies) as server:
        asyncio.run(main(server))
    assert got == expected
    assert len(server.requests) == len(cases)
    for interaction, sent in zip(cases, server.requests, strict=True):
        assert sent.path == (streamed_path if interaction.response.streamed else whole_path)
        assert sent.headers["authorization"] == f"Bearer {TOKEN}"
    assert signer.refreshes == 1  # one token served the whole corpus
