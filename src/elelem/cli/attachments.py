"""Attachments on the command line: ``elelem ask -a PATH|URL|-`` (repeatable),
piped stdin combined with the prompt, and generated images written to files.

The media type of a file comes from its magic bytes, else its name
(:func:`~elelem.vocabulary.sniff.sniff_media_type`); a URL's from its name.
Images become :class:`~elelem.vocabulary.ImageBlock`\\ s, audio (WAV, MP3,
OGG, FLAC, M4A, …) :class:`~elelem.vocabulary.AudioBlock`\\ s, everything else a
:class:`~elelem.vocabulary.DocumentBlock`.  Piped text with a prompt is sent
before the prompt (``cat notes.txt | elelem ask "summarise"``); piped bytes
that are not text are attached as if ``-a -`` had been given.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import BinaryIO, ParamSpec, TypeVar

import click

from elelem.cli.common import EXIT_USAGE, Failure
from elelem.errors import DecodeError
from elelem.reading import ReadRefused, read_file, read_stream
from elelem.vocabulary import (
    AudioBlock,
    BytesSource,
    DocumentBlock,
    ImageBlock,
    Message,
    Part,
    TextBlock,
    URLSource,
)
from elelem.vocabulary.audio import AUDIO_FORMATS, audio_media_type
from elelem.vocabulary.sniff import media_type_of_name, sniff_media_type

P = ParamSpec("P")
R = TypeVar("R")

Attachment = ImageBlock | DocumentBlock | AudioBlock

MAX_ATTACHMENT = 512 * 1024 * 1024
"""Bytes read from one attachment at most (no provider takes more inline)."""

EXTENSIONS_BY_TYPE = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
}


def attach_option(fn: Callable[P, R]) -> Callable[P, R]:
    """``-a/--attach PATH|URL|-``, repeatable."""
    return click.option(
        "-a",
        "--attach",
        "attachments",
        multiple=True,
        metavar="PATH|URL|-",
        help="Attach an image, audio or a document (a file, an http(s) URL, or - for stdin); "
        "repeatable.  The type comes from the magic bytes, else the name.",
    )(fn)


def _read(source: BinaryIO, what: str) -> bytes:
    try:
        return read_stream(source, MAX_ATTACHMENT)
    except ReadRefused as exc:
        raise Failure(f"{what}: {exc}", EXIT_USAGE) from None


def block_of_bytes(data: bytes, name: str | None) -> Attachment:
    """The block for ``data`` (an image or a document), named ``name``."""
    if not data:
        raise Failure(f"attachment {name or '-'} is empty", EXIT_USAGE)
    audio = audio_media_type(data, name)
    if audio is not None:
        try:
            return AudioBlock.from_bytes(data, audio, filename=name)
        except DecodeError as exc:
            raise Failure(f"attachment {name or '-'}: {exc.detail}", EXIT_USAGE) from None
    media_type = sniff_media_type(data, name)
    if media_type is None:
        raise Failure(
            f"attachment {name or '-'}: elelem cannot tell what it is (not an image,"
            " PDF or UTF-8 text)",
            EXIT_USAGE,
        )
    try:
        if media_type.startswith("image/"):
            return ImageBlock.from_bytes(data, media_type, filename=name)
        return DocumentBlock.from_bytes(data, media_type, filename=name, title=name)
    except DecodeError as exc:
        raise Failure(f"attachment {name or '-'}: {exc.detail}", EXIT_USAGE) from None


def load_attachment(spec: str, stdin: BinaryIO | None = None) -> Attachment:
    """The block ``-a spec`` names: ``-`` (stdin's bytes), an http(s) URL, or
    a file path."""
    if spec == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        return block_of_bytes(_read(stream, "stdin"), None)
    if spec.startswith(("http://", "https://")):
        audio = audio_media_type(b"", spec)
        if audio is not None:
            return AudioBlock.from_url(spec, audio)
        media_type = media_type_of_name(spec)
        if media_type is not None and media_type.startswith("image/"):
            return ImageBlock(URLSource(spec), media_type)
        return DocumentBlock(URLSource(spec), media_type or "application/pdf", title=None)
    path = Path(spec)
    try:
        data = read_file(path, MAX_ATTACHMENT)
    except ReadRefused as exc:
        raise Failure(f"cannot read attachment {spec}: {exc}", EXIT_USAGE) from None
    except OSError as exc:
        raise Failure(f"cannot read attachment {spec}: {exc.strerror or exc}", EXIT_USAGE) from None
    return block_of_bytes(data, path.name)


def user_message(text: str, attachments: Sequence[Attachment]) -> Message | str:
    """What the user sends: the text alone, or a message of the attachments
    then the text."""
    if not attachments:
        return text
    content: list[Part] = list(attachments)
    if text:
        content.append(TextBlock(text))
    return Message("user", tuple(content), "user")


def prompt_and_attachments(
    prompt: str, specs: Sequence[str], stdin: BinaryIO | None
) -> tuple[str, list[Attachment]]:
    """The prompt text and attachments of ``ask``: ``-a`` specs loaded in
    order; piped stdin (``stdin`` not None) is the prompt when none was given,
    text put before the prompt when one was, or an attachment when it is not
    text."""
    blocks = [load_attachment(spec, stdin) for spec in specs]
    text = prompt
    if stdin is not None and "-" not in specs:
        data = _read(stdin, "stdin")
        if data:
            kind = sniff_media_type(data)
            if kind is not None and kind.startswith("text/"):
                piped = data.decode("utf-8", "replace").strip()
                text = f"{piped}\n\n{prompt}" if prompt and piped else piped or prompt
            else:
                blocks.append(block_of_bytes(data, None))
    return text.strip(), blocks


def piped_stdin() -> BinaryIO | None:
    """stdin's bytes stream when something is piped in, None at a terminal."""
    if sys.stdin is None or sys.stdin.isatty():
        return None
    return sys.stdin.buffer


def save_images(parts: Iterable[Part], directory: Path, stem: str) -> list[Path]:
    """Write every generated image of ``parts`` that holds its bytes to
    ``directory`` as ``{stem}-{n}{ext}``; return the paths written."""
    return _save(parts, ImageBlock, lambda t: EXTENSIONS_BY_TYPE.get(t, ".bin"), directory, stem)


def save_audio(parts: Iterable[Part], directory: Path, stem: str) -> list[Path]:
    """Write every audio block of ``parts`` that holds its bytes (generated
    speech) to ``directory`` as ``{stem}-{n}.{format}``; return the paths."""
    return _save(parts, AudioBlock, lambda t: "." + AUDIO_FORMATS.get(t, "bin"), directory, stem)


def _save(
    parts: Iterable[Part],
    kind: type[ImageBlock | AudioBlock],
    extension: Callable[[str], str],
    directory: Path,
    stem: str,
) -> list[Path]:
    written: list[Path] = []
    for part in parts:
        if not isinstance(part, kind) or not isinstance(part.source, BytesSource):
            continue
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{stem}-{len(written) + 1}{extension(part.media_type or '')}"
        path.write_bytes(part.source.blob.data)
        written.append(path)
    return written


__all__ = [
    "Attachment",
    "attach_option",
    "block_of_bytes",
    "load_attachment",
    "piped_stdin",
    "prompt_and_attachments",
    "save_audio",
    "save_images",
    "user_message",
]
