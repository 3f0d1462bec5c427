"""``elelem transcribe``: what an audio file says, printed as it is heard.

``elelem transcribe -m openai:gpt-4o-transcribe voice.wav`` streams
``audio/transcriptions`` (:meth:`elelem.SyncClient.transcribe_stream`) and
prints each piece of text the moment it arrives; ``--no-stream`` asks for
the whole transcript at once (:meth:`elelem.SyncClient.transcribe`).  The
file is read bounded (a FIFO or a device is refused, and a file past
:data:`elelem.speech.endpoints.AUDIO_LIMIT`).  The text is the model's: it is printed
sanitized, never raw; ``--json`` prints one JSON object (ASCII-escaped)
instead.  Usage and cost are one line on stderr.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from elelem.cli.exits import EXIT_USAGE, Failure, debug_option, guarded, utf8_text
from elelem.cli.json_out import echo_json
from elelem.render import sanitize, sanitize_line
from elelem.speech.endpoints import Transcript, audio_of

MODEL_ENV = "ELELEM_TRANSCRIBE_MODEL"


def _client() -> Any:
    from elelem.client import SyncClient  # deferred: the client loads the catalog

    return SyncClient(env=os.environ)


def _report(heard: Transcript) -> None:
    usage = heard.usage
    if isinstance(usage, dict) and usage.get("type", "tokens") == "tokens":
        tokens = f"{usage.get('input_tokens')} input and {usage.get('output_tokens')} output tokens"
    elif isinstance(usage, dict):
        tokens = f"usage {json.dumps(usage, ensure_ascii=True)}"
    else:
        tokens = "usage not reported"
    cost = heard.cost.describe() if heard.cost is not None else "cost unknown"
    click.echo(sanitize_line(f"{tokens}, {cost}"), err=True)


def _row(heard: Transcript) -> dict[str, Any]:
    cost = heard.cost
    return {
        "text": heard.text,
        "usage": heard.usage,
        "cost": None if cost is None or cost.total is None else str(cost.total),
        "cost_unknown": list(cost.unknown) if cost is not None else [],
        "request_id": heard.request_id,
        "raw": heard.raw,
    }


@click.command("transcribe")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-m", "--model", help=f"provider:model (default ${MODEL_ENV}).")
@click.option("--language", help="The audio's language (ISO-639-1, e.g. en).")
@click.option("--prompt", help="Text to guide the model (names, spelling).")
@click.option(
    "--stream/--no-stream", default=True, show_default=True,
    help="Print the text as it arrives (gpt-4o-transcribe and newer; Whisper answers whole).",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="One JSON object with text, usage, cost.")
@debug_option
@guarded
def transcribe_command(
    file: Path,
    model: str | None,
    language: str | None,
    prompt: str | None,
    stream: bool,
    as_json: bool,
) -> None:
    """Transcribe the audio FILE with a transcription model, printing the
    text as it arrives."""
    model = model or os.environ.get(MODEL_ENV) or None
    if model is None:
        raise Failure(f"name the model with -m provider:model or ${MODEL_ENV}", EXIT_USAGE)
    if language is not None and not utf8_text(language, "--language").strip():
        raise Failure("--language is empty", EXIT_USAGE)
    if prompt is not None and not utf8_text(prompt, "--prompt").strip():
        raise Failure("--prompt is empty", EXIT_USAGE)
    audio = audio_of(file)
    if not audio.source.blob.data:  # type: ignore[union-attr]
        raise Failure(f"{file} is empty: no audio to transcribe", EXIT_USAGE)
    with _client() as client:
        if not stream:
            heard = client.transcribe(model, audio, language=language, prompt=prompt)
            if not as_json:
                click.echo(sanitize(heard.text))
        else:
            pieces = client.transcribe_stream(model, audio, language=language, prompt=prompt)
            with pieces:
                for text in pieces:
                    if not as_json:
                        click.echo(sanitize(text), nl=False)  # flushed: seen as heard
                heard = pieces.final()
            if not as_json:
                click.echo()
    if as_json:
        echo_json(_row(heard))  # written as encoded: a long transcript is not held twice more
    _report(heard)


__all__ = ["MODEL_ENV", "transcribe_command"]
