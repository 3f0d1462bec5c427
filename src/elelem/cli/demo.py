"""``elelem demo``: a recorded conversation played through the real path.

The recording (the shipped sample, or ``--cassette PATH`` in any corpus
format) is served by a loopback HTTP server on 127.0.0.1; the client, the
transport driver, the shape's parser and the assembler stream it into a
SQLite conversation store (a temporary one unless ``--keep``) while the
renderer shows it; then the store is listed as ``elelem log`` would.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import click
import msgspec

from elelem.cli.console import make_renderer
from elelem.cli.exits import EXIT_USAGE, Failure, debug_option, guarded
from elelem.cli.flags import SECONDS, display_options
from elelem.cli.history import log_line
from elelem.cli.inspect import detect_shape, recorded_provider
from elelem.cli.inspect_kinds import (
    embedding_inputs,
    embedding_wire,
    exchange_kind,
    multipart_field,
)
from elelem.cli.safety import command_catalog
from elelem.cli.store import store_from_env
from elelem.cli.turns import render_observer, run_turn
from elelem.client import SyncClient
from elelem.conversation import Conversation, MessageBody, Store, open_store
from elelem.errors import StreamError, UnsupportedError
from elelem.providers import COMPATIBLE, Catalog, load_shape
from elelem.recordings.cassettes import Interaction, load
from elelem.recordings.loopback import LoopbackServer, Pause, Reply, Send, frame_ends
from elelem.render import Renderer
from elelem.vocabulary import (
    AudioBlock,
    CallId,
    CodeExecution,
    HostedTool,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    WebFetch,
    WebSearch,
)
from elelem.vocabulary.json import JSONValue

DEMO_KEY_ENV = "ELELEM_DEMO_KEY"
DEMO_KEY = "demo-key-not-a-secret"
OPENAI_STYLE = frozenset({"openai_responses", "openai_chat"})


def sample_recording() -> Path:
    """The shipped sample: one Anthropic turn with thinking, a web search and citations."""
    return Path(str(resources.files("elelem") / "data" / "demo.yaml"))


def paced(interaction: Interaction, pace: float) -> Reply:
    """The recorded response as a reply, one SSE frame (or line) per write,
    ``pace`` seconds apart so the stream is seen arriving."""
    response = interaction.response
    body = response.body
    headers = {"content-type": response.headers.get("content-type", "text/event-stream")}
    if response.streamed and pace > 0:
        ends = frame_ends(body) or [i + 1 for i, b in enumerate(body) if b == 0x0A]
        script: list[Send | Pause] = []
        last = 0
        for end in ends:
            script += [Send(body[last:end]), Pause(pace)]
            last = end
        if last < len(body):
            script.append(Send(body[last:]))
        return Reply(response.status, headers, tuple(script))
    return Reply(response.status, headers, (Send(body),))


def _texts(value: JSONValue) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for item in value for t in _texts(item)]
    if isinstance(value, dict):
        if value.get("type") in ("tool_result", "function_call_output", "image", "input_image"):
            return []
        if isinstance(value.get("text"), str):
            return [value["text"]]
        for key in ("content", "parts"):
            if key in value:
                return _texts(value[key])
    return []


def user_text(request: JSONValue) -> str | None:
    """The text of the last user message of a recorded request body, or None
    (a request that only returns tool results continues the turn)."""
    if not isinstance(request, dict):
        return None
    items = request.get("messages") or request.get("contents") or request.get("input")
    if isinstance(items, str):
        return items
    if not isinstance(items, list):
        return None
    for item in reversed(items):
        if isinstance(item, dict) and item.get("role") == "user":
            text = "\n".join(t for t in _texts(item) if t.strip())
            return text or None
        if isinstance(item, dict) and item.get("role") in ("assistant", "model"):
            return None
    return None


def _result_text(content: JSONValue) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(_texts(content)) if content is not None else ""


def recorded_tool_results(request: JSONValue) -> tuple[ToolResultBlock, ...]:
    """The client tool results a recorded request sends back after the last
    assistant message (Anthropic ``tool_result`` blocks, OpenAI Responses
    ``function_call_output`` items, Chat Completions ``tool`` messages)."""
    if not isinstance(request, dict):
        return ()
    items = request.get("messages") or request.get("input")
    if not isinstance(items, list):
        return ()
    out: list[ToolResultBlock] = []
    for item in reversed(items):
        if not isinstance(item, dict) or item.get("role") in ("assistant", "model"):
            break
        if item.get("type") == "function_call_output":
            out.append(
                ToolResultBlock(CallId(str(item.get("call_id"))), _result_text(item.get("output")))
            )
        elif item.get("role") == "tool":
            call = CallId(str(item.get("tool_call_id")))
            out.append(ToolResultBlock(call, _result_text(item.get("content"))))
        elif item.get("role") == "user" and isinstance(item.get("content"), list):
            for block in reversed(item["content"]):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append(
                        ToolResultBlock(
                            CallId(str(block.get("tool_use_id"))),
                            _result_text(block.get("content")),
                            is_error=bool(block.get("is_error")),
                        )
                    )
    return tuple(reversed(out))


def _named(
    results: tuple[ToolResultBlock, ...], conversation: Conversation
) -> tuple[ToolResultBlock, ...]:
    # Results name the tool the call they answer named, where the log has it.
    names = {
        p.id: p.name
        for m in conversation.history()
        for p in m.content
        if isinstance(p, ToolCallBlock)
    }
    return tuple(msgspec.structs.replace(r, name=r.name or names.get(r.call_id)) for r in results)


def recorded_tools(shape: str, request: JSONValue) -> tuple[HostedTool, ...]:
    """The hosted tools a recorded request enabled, in the neutral surface."""
    tools = request.get("tools") if isinstance(request, dict) else None
    out: list[HostedTool] = []
    for tool in tools if isinstance(tools, list) else []:
        kind = tool.get("type") if isinstance(tool, dict) else None
        if not isinstance(kind, str):
            continue
        version = kind if shape == "anthropic_messages" else None
        if kind.startswith("web_search"):
            out.append(WebSearch(version=version))
        elif kind.startswith("web_fetch"):
            out.append(WebFetch(version=version))
        elif kind.startswith(("code_execution", "code_interpreter")):
            out.append(CodeExecution(version=version))
    return tuple(out)


def _unplayable(shape: str | None) -> str:
    """Why an interaction of ``shape`` cannot be played ("" when it can)."""
    if shape is None:
        return "cannot tell its wire shape (not a model request?)"
    try:
        load_shape(shape)
    except UnsupportedError as exc:
        return str(exc)
    return ""


def _provider(interaction: Interaction, shape: str) -> str:
    return recorded_provider(interaction, shape, command_catalog())


def _model(interaction: Interaction, provider: str) -> str:
    body = interaction.request.json if interaction.request is not None else None
    name = body.get("model") if isinstance(body, dict) else None
    if not isinstance(name, str) or not name:
        path = interaction.request.path if interaction.request is not None else ""
        found = re.search(r"models/([^/:]+)", path)
        name = found.group(1) if found else "recorded"
    return f"{provider}:{name}"


def loopback_catalog(server_url: str, shapes: dict[str, str]) -> Catalog:
    """The catalog with each replayed provider pointed at the loopback server,
    speaking the shape its recording is in, with a dummy key."""
    catalog = command_catalog()
    for provider, shape in shapes.items():
        base = server_url + ("/v1" if shape in OPENAI_STYLE else "")
        if provider in catalog and catalog.get(provider).shape == shape:
            spec = catalog.get(provider)
        else:
            template = "anthropic" if shape == "anthropic_messages" else "openai"
            spec = msgspec.structs.replace(COMPATIBLE[template], name=provider, shape=shape)
        catalog.add(
            msgspec.structs.replace(
                spec, base_url=base, key_env=(DEMO_KEY_ENV,), base_url_env=(), key_required=True
            )
        )
    return catalog


@contextmanager
def demo_store(keep: bool) -> Iterator[tuple[Store, str]]:
    """The user's store with ``keep``, else a temporary one removed afterwards."""
    if keep:
        store = store_from_env()
        yield store, "your conversation store"
        return
    home = Path(tempfile.mkdtemp(prefix="elelem-demo-"))
    try:
        store = open_store(home / "elelem.db")
        try:
            yield store, f"{home / 'elelem.db'} (temporary: removed on exit; --keep keeps it)"
        finally:
            close = getattr(store, "close", None)
            if close is not None:
                close()
    finally:
        shutil.rmtree(home, ignore_errors=True)


PLAYED_KINDS = frozenset({"embeddings", "transcription"})
"""The exchanges beside chat that ``demo`` plays through the client (the
others, a batch or a file upload say, are shown by ``elelem inspect``)."""


def _plan_entry(interaction: Interaction) -> tuple[str, str] | str:
    """``(shape or exchange kind, provider)`` of a playable interaction, or
    why it cannot be played."""
    kind = exchange_kind(interaction)
    if kind is None:
        shape = detect_shape(interaction)
        why = _unplayable(shape)
        if why:
            return why
        assert shape is not None
        return shape, _provider(interaction, shape)
    if kind not in PLAYED_KINDS:
        return f"a {kind} exchange is not played (elelem inspect shows it)"
    provider = _provider(interaction, "openai_chat")
    if kind == "embeddings":
        wire = embedding_wire(interaction, provider).name
        if wire in ("titan", "cohere", "vertex", "vertex-gemini"):
            return f"a {wire} embeddings exchange is not played (elelem inspect shows it)"
        if wire == "ollama":
            provider = "ollama-native"
    return kind, provider


def play(path: Path, store: Store, renderer: Renderer, *, pace: float) -> Conversation:
    """Play every interaction of the recording at ``path`` as a turn of one
    new conversation (a recorded error response is shown, and play goes on);
    an embeddings or transcription exchange goes through the client's own
    ``embed`` or ``transcribe_stream``, its result shown beside the turns."""
    recording = load(path)
    plan: list[tuple[Interaction, str, str]] = []
    skipped: list[str] = []
    for interaction in recording.interactions:
        entry = _plan_entry(interaction)
        if isinstance(entry, str):
            skipped.append(f"interaction {interaction.index}: {entry}")
            continue
        plan.append((interaction, *entry))
    for line in skipped:
        renderer.notice(f"skipped {line}", "yellow")
    if not plan:
        raise Failure(f"{path}: nothing to play ({'; '.join(skipped)})", EXIT_USAGE)
    conversation = Conversation.create(store)
    replies = [paced(interaction, pace) for interaction, _, _ in plan]
    with LoopbackServer(replies, lifetime=600.0) as server:
        catalog = loopback_catalog(server.url, _shapes(plan))
        for interaction, shape, provider in plan:
            if shape in PLAYED_KINDS:
                play_exchange(interaction, shape, provider, catalog, renderer)
                continue
            body: Any = interaction.request.json if interaction.request is not None else None
            text = user_text(body)
            if text is None and not conversation.events:
                text = f"(recorded interaction {interaction.index}; its request was not recorded)"
            results = _named(recorded_tool_results(body), conversation)
            if results and conversation.events:
                conversation.add_tool_results(results)
                for result in results:
                    renderer.part(result)
            if text is not None:
                renderer.user(text)
            try:
                env = {DEMO_KEY_ENV: DEMO_KEY}
                turn = run_turn(
                    conversation,
                    catalog.target(_model(interaction, provider), env),
                    text,
                    render_observer(renderer),
                    catalog=catalog,
                    renderer=renderer,
                    hosted_tools=recorded_tools(shape, body),
                    env=env,
                    replaying=True,
                )
            except StreamError as exc:
                if renderer.active:
                    renderer.interrupt("the recorded response ended in an error")
                renderer.notice(f"recorded error: {exc.kind}: {exc.message}", "red")
                continue
            renderer.cost = turn.cost.describe()
            renderer.end_answer()
    title = store.info(conversation.id).title
    if title is None or title.startswith("(recorded interaction"):
        # No recorded question to name it by: the file and what was answered.
        store.set_title(conversation.id, replay_title(path, conversation))
    return conversation


def replay_title(path: Path, conversation: Conversation) -> str:
    """``the first words of the first answer (file.yaml)`` (the file alone
    when nothing was answered in text)."""
    for event in conversation.events:
        body = event.body
        if isinstance(body, MessageBody) and body.role == "assistant":
            words = " ".join(
                p.text for p in body.content if isinstance(p, TextBlock) and p.text.strip()
            ).split()
            if words:
                snippet = " ".join(words[:10])
                return f"{snippet}{'…' if len(words) > 10 else ''} ({path.name})"
    return path.name


def _shapes(plan: list[tuple[Interaction, str, str]]) -> dict[str, str]:
    """The shape each replayed provider speaks: its chat recordings' own, and
    for a provider seen only in embeddings or transcription, its catalog's."""
    shapes = {p: s for _, s, p in plan if s not in PLAYED_KINDS}
    catalog = command_catalog()
    for _, kind, provider in plan:
        if kind in PLAYED_KINDS and provider not in shapes:
            known = provider in catalog and catalog.get(provider).shape
            shapes[provider] = known or "openai_chat"
    return shapes


def _recorded_texts(interaction: Interaction) -> list[str]:
    """The texts a recorded embeddings request sent (the answer is checked
    against their number, as the client checks every answer)."""
    sent = interaction.request.json if interaction.request is not None else None
    sent = sent if isinstance(sent, dict) else {}
    for key in ("input", "texts", "prompt"):
        value = sent.get(key)
        if isinstance(value, list):
            return [str(v) for v in value]
        if isinstance(value, str):
            return [value]
    requests = sent.get("requests")
    if isinstance(requests, list):
        return ["recorded"] * len(requests)
    return ["recorded"] * max(embedding_inputs(interaction), 1)


def play_exchange(
    interaction: Interaction, kind: str, provider: str, catalog: Catalog, renderer: Renderer
) -> None:
    """One recorded embeddings or transcription exchange through the real
    client, served by the loopback server, and what it returned shown."""
    sent = interaction.request.json if interaction.request is not None else None
    name = sent.get("model") if isinstance(sent, dict) else None
    if kind == "transcription":
        name = multipart_field(interaction, "model")
    model = f"{provider}:{name or 'recorded'}"
    env = {DEMO_KEY_ENV: DEMO_KEY}
    with SyncClient(catalog=catalog, env=env, max_retries=0) as client:
        try:
            if kind == "embeddings":
                got = client.embed(model, _recorded_texts(interaction))
                usage = f", {got.usage.input:,} input tokens" if got.usage else ""
                vectors = "vector" if len(got) == 1 else "vectors"
                renderer.notice(
                    f"embeddings {model}: {len(got)} {vectors} of {got.dimensions} "
                    f"dimensions{usage}"
                )
                return
            audio = AudioBlock.from_bytes(b"recorded audio", "audio/wav")
            with client.transcribe_stream(model, audio) as stream:
                pieces = list(stream)
                transcript = stream.final()
            streamed = f" ({len(pieces)} pieces streamed)" if len(pieces) > 1 else ""
            renderer.notice(f"transcription {model}{streamed}: {transcript.text}")
        except StreamError as exc:
            renderer.notice(f"recorded error: {exc.kind}: {exc.message}", "red")


@click.command("demo")
@click.option(
    "--cassette",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Play this recording (any corpus format) instead of the shipped sample.",
)
@click.option(
    "--pace",
    type=SECONDS,
    default=0.02,
    show_default=True,
    help="Seconds between streamed frames (0: as fast as possible).",
)
@click.option("--keep", is_flag=True, help="Store the conversation in your own store.")
@display_options
@debug_option
@guarded
def demo_command(
    cassette: Path | None, pace: float, keep: bool, reasoning: str, citations: str
) -> None:
    """Play a recorded conversation (web search, citations, reasoning) offline,
    through the real client, parser, assembler, store and renderer."""
    renderer = make_renderer(reasoning, citations)
    with demo_store(keep) as (store, where):
        played = play(cassette or sample_recording(), store, renderer, pace=pace)
        click.echo()
        click.echo(f"stored in {where}; elelem log:")
        # The conversation played, not the whole log of the user's store.
        click.echo(log_line(store.info(played.id)))


__all__ = [
    "demo_command",
    "loopback_catalog",
    "paced",
    "play",
    "recorded_tool_results",
    "recorded_tools",
    "sample_recording",
    "user_text",
]
