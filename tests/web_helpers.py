"""Helpers for the web tests: the AI SDK's own reader (Node + the `ai` npm
package), streams of recorded responses relayed through a real ASGI server,
and headless Chromium."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from elelem.cli.demo import DEMO_KEY, DEMO_KEY_ENV, loopback_catalog, paced, sample_recording
from elelem.cli.inspect import detect_shape, recorded_frames, recorded_provider
from elelem.client import Client, Messages
from elelem.errors import IncompleteStreamError, MalformedStreamError, StreamError, TransportError
from elelem.providers.recognize import RAW_REQUEST_SHAPES
from elelem.recordings.cassettes import Interaction, load
from elelem.stream import AssembledResponse, Assembler, Chunk, Finish
from elelem.testing.servers import LoopbackServer, RecordedRequest, Reply
from elelem.vocabulary import Message, Part, ProviderId, WebSearch
from shape_modules import shape_module

NODE_DIR = Path(__file__).resolve().parent / "web_node"
_PINNED: dict[str, str] = json.loads((NODE_DIR / "package.json").read_text())["dependencies"]
PINNED_AI = _PINNED["ai"]
PINNED_AI7 = _PINNED["ai7"].removeprefix("npm:ai@")
ROOT = Path(__file__).resolve().parent.parent


def ai_reader_ready() -> str:
    """Install the pinned `ai` package (npm ci) where it is missing; return
    the node binary.  Skips only where Node or npm is absent."""
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        pytest.skip(
            "Node.js and npm are needed to run the `ai` package's reader: "
            "apt-get install nodejs npm (bash .ci/run does)"
        )
    if not _ready():
        npm_ci()
    return node


def ai7_reader_ready() -> str:
    """The Node >= 22 binary that runs `ai` 7 (installed by .ci/node22 where
    the machine's is older), the locked packages installed.  Skips where
    Node or npm is absent or Node 22 cannot be installed."""
    ai_reader_ready()
    done = subprocess.run(
        [str(ROOT / ".ci" / "node22")], capture_output=True, text=True, timeout=300, check=False
    )
    if done.returncode != 0 or not done.stdout.strip():
        pytest.skip(f"Node 22 could not be installed (.ci/node22): {done.stderr[-300:]}")
    return done.stdout.strip()


def _installed(name: str) -> str | None:
    found = NODE_DIR / "node_modules" / name / "package.json"
    return str(json.loads(found.read_text())["version"]) if found.is_file() else None


def _ready() -> bool:
    """Whether the locked packages are installed (the pinned `ai` 6 and 7)."""
    return (
        _installed("ai") == PINNED_AI
        and _installed("ai7") == PINNED_AI7
        and _installed("esbuild") == _PINNED["esbuild"]
        and _installed("axe-core") == _PINNED["axe-core"]
    )


def npm_ci() -> None:
    """Install tests/web_node's locked packages (`ai` 6 and 7, esbuild,
    axe-core), one test process at a time (xdist workers share the folder)."""
    npm = shutil.which("npm")
    assert npm is not None
    with open(NODE_DIR / "package.json", "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # released when the file closes
        if _ready():
            return  # another worker installed them while this one waited
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=NODE_DIR,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, f"npm ci failed: {done.stderr}"


def read_with_ai(
    node: str, requests: list[dict[str, Any]], package: str = "ai"
) -> list[dict[str, Any]]:
    """Each request ({url, body, messages?}) read by the `ai` package's
    DefaultChatTransport and readUIMessageStream (``package`` "ai7": ai 7,
    with the node of :func:`ai7_reader_ready`): {message, chunks, errors,
    status, invalid} per request."""
    return run_node(node, "read_ui_stream.mjs", requests, package)


def run_node(node: str, script: str, given: object, package: str) -> list[dict[str, Any]]:
    """tests/web_node's ``script`` run by ``node`` with ``given`` (as JSON)
    and the `ai` ``package`` to import: the JSON lines it printed."""
    done = subprocess.run(
        [node, str(NODE_DIR / script), json.dumps(given), package],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_PROXY": "127.0.0.1"},
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def demo_interaction() -> Interaction:
    """The shipped demo recording's one interaction."""
    return load(sample_recording()).interactions[0]


@contextmanager
def replaying(interaction: Interaction) -> Iterator[Any]:
    """A loopback provider answering every request with ``interaction``'s
    recorded response; yields a function opening a real client stream to it
    (the demo's Anthropic recording) for some messages, with the loopback
    server as its ``server`` attribute."""
    reply = paced(interaction, 0)

    def answer(_request: RecordedRequest) -> Reply:
        return reply

    with LoopbackServer(answer, lifetime=300) as server:
        catalog = loopback_catalog(server.url, {"anthropic": "anthropic_messages"})

        async def pairs(
            messages: Messages = "How tall is the Eiffel Tower, and when was it finished?",
        ) -> AsyncIterator[tuple[Chunk, tuple[Part, ...]]]:
            async with Client(catalog=catalog, env={DEMO_KEY_ENV: DEMO_KEY}) as client:
                stream = client.stream(
                    "anthropic:claude-sonnet-4-5",
                    messages,
                    hosted_tools=(WebSearch(version="web_search_20250305"),),
                )
                async with stream:
                    async for pair in stream.with_commits():
                        yield pair

        pairs.server = server  # type: ignore[attr-defined]
        yield pairs


def _sans_io_chunks(
    shape: Any, interaction: Interaction, provider: ProviderId, request: object
) -> tuple[list[Chunk], StreamError | None]:
    """Every chunk the recorded response gives, parsed in-process frame by
    frame (each chunk is needed, which the driver's result does not keep),
    and the provider error it ended in."""
    response = interaction.response
    chunks: list[Chunk] = []
    try:
        if not response.streamed:
            chunks.extend(shape.parse_response(response.body, provider, request))
            return chunks, None
        parser = shape.new_parser(provider, request)
        chunks.extend(parser.open(response.status, response.headers))
        for event, data in recorded_frames(response, shape.framing):
            chunks.extend(parser.message(event, data))
        chunks.extend(parser.eof())
        if not any(type(c) is Finish for c in chunks):
            raise IncompleteStreamError("the stream ended without a terminal event")
    except (MalformedStreamError, TransportError):
        raise
    except StreamError as exc:  # a provider error the recording holds
        return chunks, exc
    return chunks, None


def recorded_pairs(
    interaction: Interaction,
) -> tuple[list[tuple[Chunk, tuple[Part, ...]]], AssembledResponse, Exception | None]:
    """The recorded response's chunks, each with what the assembler committed
    for it (sans-IO, as `elelem inspect` reads a recording), the assembled
    response and the provider error the recording ended in."""
    name = detect_shape(interaction)
    assert name is not None
    shape = shape_module(name).SHAPE
    provider = recorded_provider(interaction, name)
    raw = name in RAW_REQUEST_SHAPES
    wire = interaction.request.json if raw and interaction.request else None
    chunks, error = _sans_io_chunks(shape, interaction, provider, wire)
    assembler = Assembler(provider)
    pairs = [(chunk, assembler.feed(chunk)) for chunk in chunks]
    result = assembler.result() if assembler.finished else assembler.partial()
    return pairs, result, error


CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1200,1600",
)


def chromium_paths() -> tuple[str, str]:
    """Debian's chromium and chromium-driver; skips where they are absent."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        pytest.skip(
            "headless browser tests need Debian's chromium and chromium-driver: "
            "apt-get install chromium chromium-driver (bash .ci/run does)"
        )
    return browser, driver


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium driven by selenium, with a fresh profile, logging
    the page's console (to check no script ran)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver_path = chromium_paths()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="elelem-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def png(width: int = 3, height: int = 2) -> bytes:
    """A small, valid red PNG (for attachment tests)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


AXE = NODE_DIR / "node_modules" / "axe-core" / "axe.min.js"


def axe_violations(driver: Any) -> list[dict[str, Any]]:
    """The serious and critical accessibility violations axe-core (the npm
    package, injected by the test: the page's policy runs no script of ours)
    finds on the page, as ``{id, impact, targets}``."""
    ai_reader_ready()  # npm ci installs axe-core beside the `ai` package
    if not AXE.is_file():
        npm_ci()
    driver.execute_script(AXE.read_text("utf-8"))
    driver.set_script_timeout(60)
    found = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {iframes: false, resultTypes: ['violations']})"
        ".then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact,"
        " targets: v.nodes.map(n => n.target.join(' '))}))))"
        ".catch(e => done([{id: 'axe-failed', impact: 'critical', targets: [String(e)]}]));"
    )
    return [v for v in found if v["impact"] in ("serious", "critical")]


def assistant(provider: str, model: str, *content: Part) -> Message:
    """An assistant message of ``provider``'s ``model`` holding ``content``."""
    return Message(
        role="assistant",
        source="assistant",
        provider=ProviderId(provider),
        model=model,
        content=content,
    )
