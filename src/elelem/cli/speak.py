"""``elelem speak``: text spoken by a speech model, written as it arrives.

``elelem speak -m openai:gpt-4o-mini-tts "Hello there." -o hello.mp3``
streams ``audio/speech`` (:meth:`elelem.SyncClient.speak_stream`) and writes
each piece of the audio to the file (or, with no ``-o``, to stdout) the
moment it arrives, so a player reading the file or the pipe starts before
the speech is whole.  Audio is data: stdout that is a terminal is refused.
What was spoken, its usage and cost are one line on stderr.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

import click

from elelem.cli.exits import EXIT_USAGE, Failure, debug_option, guarded
from elelem.cli.flags import Finite
from elelem.cli.inputs import stdin_text
from elelem.cli.safety import binary_stdout
from elelem.cli.testmodel import TEST_SPEECH, command_client, is_test_model
from elelem.render import sanitize_line
from elelem.speech.streamed_speech import STREAM_FORMATS

MODEL_ENV = "ELELEM_SPEECH_MODEL"

SPOKEN_LIMIT = 1024 * 1024
"""The most bytes of text read from stdin to speak (OpenAI takes 4,096
characters a request): an endless pipe is refused, not read on."""

FORMATS = ("mp3", "wav", "opus", "aac", "flac", "pcm")
"""The ``response_format`` values of ``audio/speech``."""


def _model_name(model: str) -> str:
    """``model``, with ``test`` spelled as the test model's address."""
    return TEST_SPEECH if is_test_model(model) else model


def _report(speech: Any, written: int, where: str) -> None:
    # The pieces were written as they came: the summary, not the whole
    # audio joined again (which would double the memory of a long answer).
    usage, cost = speech.core.summary()
    tokens = (
        f"{usage.input} input and {usage.output} output tokens"
        if usage is not None
        else "usage not reported"
    )
    line = (
        f"{written} bytes of {speech.core.call.media_type} to {where}; {tokens}, {cost.describe()}"
    )
    click.echo(sanitize_line(line), err=True)


@click.command("speak")
@click.argument("text", nargs=-1)
@click.option("-m", "--model", help=f"provider:model (default ${MODEL_ENV}).")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the audio to FILE as it arrives (default: stdout, never a terminal).",
)
@click.option("--voice", default="alloy", show_default=True, help="The voice.")
@click.option(
    "--format", "fmt", type=click.Choice(FORMATS), default="mp3", show_default=True,
    help="The audio's format.",
)  # fmt: skip
@click.option("--instructions", help="How to speak (gpt-4o-mini-tts and newer).")
@click.option("--speed", type=Finite(0.25, 4.0), help="0.25 to 4.0 (default 1).")
@click.option(
    "--stream-format", type=click.Choice(STREAM_FORMATS), default="audio", show_default=True,
    help="'audio': the file itself; 'sse': events with usage (gpt-4o-mini-tts and newer).",
)  # fmt: skip
@debug_option
@guarded
def speak_command(
    text: tuple[str, ...],
    model: str | None,
    output: Path | None,
    voice: str,
    fmt: str,
    instructions: str | None,
    speed: float | None,
    stream_format: str,
) -> None:
    """Speak TEXT (or the text piped on stdin) with a speech model, writing
    the audio as it arrives."""
    spoken = " ".join(text) if text else (stdin_text(SPOKEN_LIMIT) or "")
    if not spoken.strip():
        raise Failure("nothing to speak: give TEXT or pipe it on stdin", EXIT_USAGE)
    model = model or os.environ.get(MODEL_ENV) or None
    if model is None:
        raise Failure(f"name the speech model with -m provider:model or ${MODEL_ENV}", EXIT_USAGE)
    if output is None and sys.stdout.isatty():
        raise Failure("audio is data: redirect stdout or use -o FILE", EXIT_USAGE)
    model = _model_name(model)
    with command_client(model) as client:
        speech = client.speak_stream(
            model,
            spoken,
            voice=voice,
            format=fmt,
            instructions=instructions,
            speed=speed,
            stream_format=stream_format,
        )
        with speech, ExitStack() as files:
            if output is None:
                sys.stdout.flush()
                where, sink = "stdout", binary_stdout
            else:
                # Opened at the first piece: a request refused before any
                # audio leaves no empty file behind.
                where, sink = str(output), lambda: files.enter_context(output.open("wb"))
            written = _write(speech, sink, where)
        _report(speech, written, where)


def _write(speech: Any, open_sink: Callable[[], IO[bytes]], where: str) -> int:
    """Write each piece of ``speech`` as it arrives to the sink ``open_sink``
    gives at the first piece; the bytes written.  A failure after some audio
    says how much of it ``where`` holds."""
    written = 0
    sink: IO[bytes] | None = None
    try:
        for piece in speech:
            if sink is None:
                sink = open_sink()
            sink.write(piece)
            sink.flush()  # the reader (a player, a pipe) has it now
            written += len(piece)
    except Exception:
        if written:
            note = f"{where} holds only the first {written} bytes of the audio"
            click.echo(sanitize_line(note), err=True)
        raise
    return written


__all__ = ["MODEL_ENV", "speak_command"]
