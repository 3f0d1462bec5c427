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

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import BinaryIO, ParamSpec, TypeVar

import click

from elelem.cli.exits import EXIT_USAGE, Failure
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


MAX_IMAGES = 16
"""Generated images (or audio clips) written to files by one answer at most
(all are kept in the conversation)."""

_EXCLUSIVE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def save_images(
    parts: Iterable[Part], directory: Path, stem: str, limit: int = MAX_IMAGES
) -> tuple[list[Path], int]:
    """Write the first ``limit`` generated images of ``parts`` that hold their
    bytes to ``directory`` as ``{stem}-{n}{ext}``; return the paths written
    and how many more were not (see :func:`_save`)."""
    extension = lambda t: EXTENSIONS_BY_TYPE.get(t, ".bin")  # noqa: E731
    return _save(parts, ImageBlock, extension, directory, stem, limit)


def save_audio(
    parts: Iterable[Part], directory: Path, stem: str, limit: int = MAX_IMAGES
) -> tuple[list[Path], int]:
    """Write every audio block of ``parts`` that holds its bytes (generated
    speech) to ``directory`` as ``{stem}-{n}.{format}``, as :func:`save_images`."""
    extension = lambda t: "." + AUDIO_FORMATS.get(t, "bin")  # noqa: E731
    return _save(parts, AudioBlock, extension, directory, stem, limit)


def _save(
    parts: Iterable[Part],
    kind: type[ImageBlock | AudioBlock],
    extension: Callable[[str], str],
    directory: Path,
    stem: str,
    limit: int,
) -> tuple[list[Path], int]:
    """Each file is created exclusively (``O_EXCL``, ``O_NOFOLLOW``): a name
    taken — by a file, or a symlink planted to redirect the write — is never
    written through; ``{stem}-{n}-2{ext}``, ``-3``, … is tried instead."""
    written: list[Path] = []
    skipped = 0
    for part in parts:
        if not isinstance(part, kind) or not isinstance(part.source, BytesSource):
            continue
        if len(written) >= limit:
            skipped += 1
            continue
        directory.mkdir(parents=True, exist_ok=True)
        name, ext = f"{stem}-{len(written) + 1}", extension(part.media_type or "")
        written.append(_write_new(directory, name, ext, part.source.blob.data))
    return written, skipped


def _write_new(directory: Path, name: str, ext: str, data: bytes) -> Path:
    for attempt in range(1, 101):
        path = directory / (f"{name}{ext}" if attempt == 1 else f"{name}-{attempt}{ext}")
        try:
            fd = os.open(path, _EXCLUSIVE, 0o644)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        return path
    raise Failure(f"{directory}: {name}{ext} and 99 more names are taken", EXIT_USAGE)


__all__ = [
    "MAX_IMAGES",
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
