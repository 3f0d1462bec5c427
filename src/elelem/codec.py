"""The one canonical JSON encoding of every vocabulary value.

``dumps(value)`` gives compact UTF-8 JSON with fields in declaration order,
every field present; ``loads(data, type)`` decodes it back.  Blocks decode
through the registry: a registered tag becomes its class, any other tag an
:class:`~elelem.vocabulary.UnknownBlock` that re-encodes byte-identically.
A malformed value of a registered type raises :class:`~elelem.errors.DecodeError`
naming the path of the bad field.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar, overload

import msgspec

from elelem.errors import AttributionRangeError, DecodeError, PayloadError
from elelem.vocabulary.activity import HostedActivity
from elelem.vocabulary.blocks import Block, UnknownBlock
from elelem.vocabulary.message import Part
from elelem.vocabulary.registry import block_type

T = TypeVar("T")

_PATH_RE = re.compile(r" - at `(\$[^`]*)`$")
# msgspec reports a missing or unexpected field at its object; the bad field
# is the one it names.
_FIELD_RE = re.compile(r"^Object (?:missing required|contains unknown) field `([^`]*)`$")


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, UnknownBlock):
        return obj.raw
    raise TypeError(f"elelem's codec cannot encode a {type(obj).__name__}")


def _decode_block(obj: Any, allow_hosted: bool) -> Any:
    if not isinstance(obj, dict):
        raise DecodeError(f"expected a block object, got {type(obj).__name__}")
    tag = obj.get("type")
    if not isinstance(tag, str):
        raise DecodeError("a block needs a string 'type'", "$.type")
    if tag == "hosted":
        if allow_hosted:
            return _convert(obj, HostedActivity)
        raise DecodeError("a hosted-activity transition is not a content block", "$.type")
    cls = block_type(tag)
    if cls is None:
        return UnknownBlock(obj)
    return _convert(obj, cls)


_BLOCK_MARKER: object = Block
_PART_MARKER: object = Part


def _dec_hook(typ: type, obj: Any) -> Any:
    if typ is _BLOCK_MARKER:
        return _decode_block(obj, allow_hosted=False)
    if typ is _PART_MARKER:
        return _decode_block(obj, allow_hosted=True)
    if typ is UnknownBlock:
        return UnknownBlock(obj)
    raise NotImplementedError(f"elelem's codec cannot decode {typ!r}")


def _split(message: str) -> tuple[str, str]:
    m = _PATH_RE.search(message)
    if m is None:
        return message, "$"
    return message[: m.start()], m.group(1)


def _join(outer: str, inner: str) -> str:
    return outer + inner[1:] if inner.startswith("$") else outer


def _convert(obj: Any, typ: type[T]) -> T:
    try:
        return msgspec.convert(obj, typ, dec_hook=_dec_hook)
    except msgspec.ValidationError as exc:
        raise _as_decode_error(exc) from None


def _as_decode_error(exc: msgspec.ValidationError) -> DecodeError:
    message, outer = _split(str(exc))
    # A value's own check (__post_init__, or a nested block decoded through
    # the registry) knows the path inside the value; msgspec knows where the
    # value sits.  Joined, they name the bad field from the top.
    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, DecodeError):
        return DecodeError(cause.detail, _join(outer, cause.path))
    if isinstance(cause, (PayloadError, AttributionRangeError)):
        return DecodeError(str(cause), _join(outer, cause.path))
    field = _FIELD_RE.match(message)
    if field is not None:
        outer = f"{outer}.{field.group(1)}"
    return DecodeError(message, outer)


_encoder = msgspec.json.Encoder(enc_hook=_enc_hook)
_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}


def dumps(value: object) -> bytes:
    """Encode any vocabulary value (or JSON made of them) as canonical JSON bytes."""
    return _encoder.encode(value)


@overload
def loads(data: bytes | str, type: type[T]) -> T: ...
@overload
def loads(data: bytes | str, type: Any) -> Any: ...
def loads(data: bytes | str, type: Any) -> Any:
    """Decode canonical JSON ``data`` as ``type`` (a vocabulary type or a typing form).

    Raises :class:`DecodeError` naming the path of the first bad field, or the
    position of a JSON syntax error.
    """
    decoder = _decoders.get(type)
    if decoder is None:
        decoder = msgspec.json.Decoder(type, dec_hook=_dec_hook)
        _decoders[type] = decoder
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise _as_decode_error(exc) from None
    except msgspec.DecodeError as exc:
        raise DecodeError(f"malformed JSON: {exc}") from None


def to_builtins(value: object) -> Any:
    """The value as plain JSON-compatible Python objects (dicts, lists, …)."""
    return msgspec.to_builtins(value, enc_hook=_enc_hook)


def from_builtins(obj: Any, type: type[T]) -> T:
    """Convert plain Python JSON objects into ``type``, validating as :func:`loads` does."""
    return _convert(obj, type)


__all__ = ["dumps", "from_builtins", "loads", "to_builtins"]
