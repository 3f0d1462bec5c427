"""``elelem live``: a live session (OpenAI Realtime, Azure OpenAI, Gemini Live)
from the command line.

``--audio-in`` sends a WAV file as the user's turn (turned into the
session's PCM rate, mono), ``--text`` sends a message of text (repeatable:
each after the answer to the one before); the transcript of the model's
speech (or its text) is printed as it streams, sanitized; ``--audio-out``
writes what the model said as a WAV file.  Tools, MCP servers and approvals
are the ones of ``elelem ask`` (``--functions``, ``--tool``, ``--mcp``,
``--approve``); an MCP server's sampling is served by
``--mcp-sampling-model`` and its requests for input are declined (nobody is
asked during a live session), each request recorded in the conversation.  Ctrl-C ends the session and keeps what arrived; the
session is stored as a conversation that ``elelem show`` and the viewer
read.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from elelem.cli.exits import EXIT_USAGE, Failure, debug_option, guarded
from elelem.cli.store import store_from_env
from elelem.cli.tools import Toolset, asking_in_background, call_line, tool_options
from elelem.conversation import Conversation
from elelem.conversation.events import MessageBody
from elelem.reading import read_file
from elelem.render import sanitize
from elelem.shapes.live_items import pcm16_at, wav_bytes, wav_pcm
from elelem.stream import Finish, TextDelta
from elelem.vocabulary import ToolCallBlock, ToolResultBlock
from elelem.wire.live import AudioOut, TranscriptDelta

MAX_AUDIO_IN = 64 * 1024 * 1024
"""The largest WAV file ``--audio-in`` reads."""

PIECE_MS = 100
"""How much audio one message carries when a file is sent."""


def _audio_in(path: Path, rate: int) -> bytes:
    try:
        samples, given, channels = wav_pcm(read_file(path, MAX_AUDIO_IN))
    except ValueError as exc:
        raise Failure(f"--audio-in {sanitize(str(path))}: {exc}", EXIT_USAGE) from None
    return pcm16_at(samples, given, channels, rate)


def _show_calls(conversation: Conversation) -> None:
    """The calls and results of the step just run, one line each on stderr."""
    results: dict[str, ToolResultBlock] = {}
    calls: list[ToolCallBlock] = []
    for event in reversed(conversation.events):
        body = event.body
        if not isinstance(body, MessageBody):
            continue
        found = [p for p in body.content if isinstance(p, ToolResultBlock)]
        if found:
            results.update((r.call_id, r) for r in found)
            continue
        calls = [p for p in body.content if isinstance(p, ToolCallBlock)] + calls
        if not any(isinstance(p, ToolCallBlock) for p in body.content):
            break
    for call in calls:
        click.echo(call_line(call, results.get(call.id)), err=True)


def _converse(session: Any, texts: list[str], audio: bytes | None, spoken: bytearray) -> None:
    pending = list(texts)
    if audio is not None:
        step = session.input_rate * 2 * PIECE_MS // 1000
        for at in range(0, len(audio), step):
            session.send_audio(audio[at : at + step])
        session.commit()
    elif pending:
        session.send_text(pending.pop(0))
    for output in session:
        if isinstance(output, AudioOut):
            spoken += output.pcm
        elif isinstance(output, (TranscriptDelta, TextDelta)):
            click.echo(sanitize(output.text), nl=False)
        elif isinstance(output, Finish):
            if output.reason == "tool-calls":
                click.echo("", err=True)
                _show_calls(session.conversation)
                continue
            click.echo("")
            if not pending:
                return
            session.send_text(pending.pop(0))


@click.command("live")
@click.option("-m", "--model", required=True, help="provider:model of a live model.")
@click.option("--audio-in", type=click.Path(dir_okay=False, path_type=Path),
              help="A WAV file to send as the user's turn.")  # fmt: skip
@click.option("--audio-out", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write what the model said (WAV).")  # fmt: skip
@click.option("--text", "texts", multiple=True, help="A message of text (repeatable).")
@click.option("-s", "--system", help="The session's instructions.")
@click.option("--voice", help="The model's voice (the provider's name for it).")
@tool_options
@debug_option
@guarded
def live_command(
    model: str,
    audio_in: Path | None,
    audio_out: Path | None,
    texts: tuple[str, ...],
    system: str | None,
    voice: str | None,
    **params: Any,
) -> None:
    """A live session: speak a WAV file or type, hear and read the answer."""
    from elelem.client import SyncClient  # deferred: the client loads the catalog
    from elelem.turns.live_session import live_sync

    if audio_in is None and not texts:
        raise Failure("nothing to say: give --audio-in FILE or --text TEXT", EXIT_USAGE)
    store = store_from_env()
    conversation = Conversation.create(store)
    client = SyncClient(env=os.environ)
    toolset = Toolset.from_params(params)
    approve = toolset.approver()
    if approve == "defer":
        raise Failure("--defer waits for a later process; a live session cannot", EXIT_USAGE)
    # Nobody is asked during a live session (the terminal shows the
    # transcript): a server's request for input is declined, the reason kept
    # in the conversation with the request, as its served sampling is.
    toolset.elicitor.interactive = False
    toolset.elicitor.declining = "a live session asks nobody"
    spoken = bytearray()
    with toolset, asking_in_background(toolset, conversation, os.environ):
        session = live_sync(
            client,
            model,
            conversation=conversation,
            tools=toolset.all_tools(),
            approve=approve,
            instructions=system,
            voice=voice,
            output="text" if audio_in is None and audio_out is None else "audio",
            max_steps=toolset.max_steps,
            vad=False,
        )
        audio = _audio_in(audio_in, session.input_rate) if audio_in is not None else None
        try:
            with session:
                _converse(session, list(texts), audio, spoken)
        finally:
            if audio_out is not None and spoken:
                audio_out.write_bytes(wav_bytes(bytes(spoken), session.output_rate))
                click.echo(f"audio saved to {sanitize(str(audio_out))}", err=True)
            click.echo(f"conversation {sanitize(conversation.id)}", err=True)
    sys.stdout.flush()


__all__ = ["live_command"]
