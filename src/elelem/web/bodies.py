"""Reading a request's body within bounds: a size limit checked before and
while reading, and a time limit (413, 408), then decoding it (400)."""

from __future__ import annotations

from typing import TypeVar, cast

import anyio
import msgspec
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from elelem.vocabulary.json import decode_json

T = TypeVar("T")

MAX_CHAT_BODY = 32 << 20
"""A chat request's largest body (attachments travel in it, base64)."""

BODY_TIMEOUT = 10.0
"""Seconds a request's body has to arrive."""


async def bounded_body(request: Request, limit: int, seconds: float) -> bytes | Response:
    """The request's body, read while it stays within ``limit`` bytes and
    ``seconds``; else the refusal to send (the rest is never read)."""
    declared = request.headers.get("content-length")
    # ASCII digits only, and few: '²' (a Latin-1 header byte) is a digit to
    # str.isdigit but no number to int, which refuses 4,300 digits too.
    number = declared is not None and declared.isascii() and declared.isdigit()
    if declared is not None and (not number or len(declared) > 18 or int(declared) > limit):
        return PlainTextResponse("request too large", status_code=413)
    pieces: list[bytes] = []
    held = 0
    try:
        with anyio.fail_after(seconds):
            async for piece in request.stream():
                held += len(piece)
                if held > limit:
                    return PlainTextResponse("request too large", status_code=413)
                pieces.append(piece)
    except TimeoutError:
        return PlainTextResponse("request body too slow", status_code=408)
    return b"".join(pieces)


async def decoded(
    request: Request, kind: type[T], limit: int, what: str, seconds: float = BODY_TIMEOUT
) -> T | Response:
    """The request's JSON body as ``kind`` (read as :func:`bounded_body`
    reads it), or the refusal to send (413, 408, 400)."""
    raw = await bounded_body(request, limit, seconds)
    if isinstance(raw, Response):
        return raw
    try:
        return cast(T, decode_json(raw, type=kind))
    except msgspec.DecodeError as exc:
        return PlainTextResponse(f"bad {what} request: {exc}", status_code=400)


__all__ = ["BODY_TIMEOUT", "MAX_CHAT_BODY", "bounded_body", "decoded"]
