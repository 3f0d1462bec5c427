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
import threading
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, Union, overload

import msgspec

from elelem.errors import AttributionRangeError, DecodeError, PayloadError
from elelem.vocabulary.activity import HostedActivity
from elelem.vocabulary.blob import Blob
from elelem.vocabulary.blocks import Block, UnknownBlock
from elelem.vocabulary.message import Part
from elelem.vocabulary.registry import block_type, block_types, block_types_generation

T = TypeVar("T")

_PATH_RE = re.compile(r" - at `(\$[^`]*)`$")
# msgspec reports a missing or unexpected field at its object; the bad field
# is the one it names.
_FIELD_RE = re.compile(r"^Object (?:missing required|contains unknown) field `([^`]*)`$")


STORED_EVENT = 1
"""The MessagePack extension code of an event's canonical JSON inside a
stored row (:mod:`elelem.conversation.loaded`): a loaded event keeps it in
place of its body until the body is first read, and encoded it stands for
that body, exactly as stored."""


class _StoredBody(msgspec.Struct, gc=False):
    body: msgspec.Raw


_stored_body = msgspec.json.Decoder(_StoredBody)


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, UnknownBlock):
        return obj.raw
    if type(obj) is msgspec.msgpack.Ext and obj.code == STORED_EVENT:
        return _stored_body.decode(obj.data).body
    if isinstance(obj, Blob):
        collecting = _collector.blobs
        if collecting is not None:
            collecting.append(obj)
        return obj.to_json()
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


def dec_hook(typ: type, obj: Any) -> Any:
    """The msgspec ``dec_hook`` of every vocabulary decoder: blocks and
    hosted transitions through the registry, unknown tags as UnknownBlock."""
    if typ is _BLOCK_MARKER:
        return _decode_block(obj, allow_hosted=False)
    if typ is _PART_MARKER:
        return _decode_block(obj, allow_hosted=True)
    if typ is UnknownBlock:
        return UnknownBlock(obj)
    if typ is Blob:
        return Blob.from_json(obj)
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
        return msgspec.convert(obj, typ, dec_hook=dec_hook)
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


class _Collector(threading.local):
    blobs: list[Blob] | None = None


_collector = _Collector()


def dumps(value: object) -> bytes:
    """Encode any vocabulary value (or JSON made of them) as canonical JSON bytes."""
    return _encoder.encode(value)


class collect_blobs:
    """Within the block, every :class:`~elelem.vocabulary.blob.Blob` that
    :func:`dumps` encodes (as its reference) is appended to the list given,
    in encoding order: a store keeps their bytes beside the events.

    A plain class, not a generator: a store enters one per append."""

    __slots__ = ("_found", "_previous")

    def __enter__(self) -> list[Blob]:
        self._previous = _collector.blobs
        self._found: list[Blob] = []
        _collector.blobs = self._found
        return self._found

    def __exit__(self, *exc: object) -> None:
        _collector.blobs = self._previous


def dumps_with_blobs(value: object) -> tuple[bytes, list[Blob]]:
    """:func:`dumps`, and every blob the value references (see :func:`collect_blobs`)."""
    with collect_blobs() as found:
        data = _encoder.encode(value)
    return data, found


# -- the fast path of decoding --------------------------------------------------
#
# Through the markers, every block costs a Python call, a decode to builtins
# and a ``msgspec.convert``.  Where the requested type holds a marker, a second
# decoder types it as a tagged union of the block classes registered now, so
# msgspec builds the blocks itself.  A value that does not fit (a tag nobody
# registered, or any error) is decoded again by the general path, which alone
# decides the result and the errors; what the fast path returns is what the
# general path would.  A registration makes the union stale: the decoders are
# rebuilt when the registry's generation moves.

Restore = Callable[[Any], Any]
"""Turns a value decoded as a fast form back into the requested type."""

_UNION_ORIGINS = (Union, types.UnionType)
# Typing forms built at run time (mypy checks written types only).
_UNION: Any = Union
_ANNOTATED: Any = Annotated
_DICT: Any = dict
_SEQUENCES: dict[Any, Any] = {tuple: tuple, list: list, set: set, frozenset: frozenset}


def _unions() -> tuple[Any, Any]:
    # array_like structs cannot share a union with object-shaped ones; such a
    # block decodes through the general path instead.
    classes = tuple(c for c in block_types() if not c.__struct_config__.array_like)
    return _UNION[classes], _UNION[(*classes, HostedActivity)]


def fast_type(typ: Any) -> tuple[Any, Restore | None]:
    """``typ`` with its Block/Part markers typed as the registered block
    classes, and the :data:`Restore` back to ``typ`` (None when the decoded
    value already is one).  ``(typ, None)`` when ``typ`` holds no marker.

    The union members are the registered classes themselves; only structs
    holding a marker get a stand-in struct, rebuilt into ``typ`` by the restore.
    """
    block, part = _unions()
    return _fast_form(typ, block, part, set())


def _fast_form(typ: Any, block: Any, part: Any, seen: set[Any]) -> tuple[Any, Restore | None]:
    if typ is _BLOCK_MARKER:
        return block, None
    if typ is _PART_MARKER:
        return part, None
    if isinstance(typ, type) and issubclass(typ, msgspec.Struct):
        return _fast_struct(typ, block, part, seen)
    origin = typing.get_origin(typ)
    args = typing.get_args(typ)
    if origin is None or not args:
        return typ, None
    if origin is Annotated:
        inner, restore = _fast_form(args[0], block, part, seen)
        if inner is args[0]:
            return typ, None
        return _ANNOTATED[(inner, *typ.__metadata__)], restore
    forms = [_fast_form(a, block, part, seen) for a in args]
    if all(f is a for (f, _), a in zip(forms, args, strict=True)):
        return typ, None
    if origin in _UNION_ORIGINS:
        return _fast_union(typ, forms)
    if origin in _SEQUENCES:
        return _fast_sequence(typ, origin, args, forms)
    if origin is dict and forms[0][0] is args[0]:
        value = forms[1][1]
        fast = _DICT[args[0], forms[1][0]]
        if value is None:
            return fast, None
        return fast, lambda v: {k: value(x) for k, x in v.items()}
    # A form this does not know keeps its markers: the hook decodes them.
    return typ, None


def _fast_union(typ: Any, forms: list[tuple[Any, Restore | None]]) -> tuple[Any, Restore | None]:
    fast = _UNION[tuple(f for f, _ in forms)]
    by_class: dict[type, Restore] = {}
    for f, restore in forms:
        if restore is None:
            continue
        runtime = typing.get_origin(f) or f
        if not isinstance(runtime, type) or runtime in by_class:
            return typ, None
        by_class[runtime] = restore
    if not by_class:
        return fast, None

    def restore_union(v: Any) -> Any:
        restore = by_class.get(type(v))
        return v if restore is None else restore(v)

    return fast, restore_union


def _fast_sequence(
    typ: Any,
    origin: Any,
    args: tuple[Any, ...],
    forms: list[tuple[Any, Restore | None]],
) -> tuple[Any, Restore | None]:
    fast = origin[tuple(f for f, _ in forms)]
    restores = [r for _, r in forms]
    if all(r is None for r in restores):
        return fast, None
    build = _SEQUENCES[origin]
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        each = [r or (lambda x: x) for r in restores]
        return fast, lambda v: tuple(r(x) for r, x in zip(each, v, strict=True))
    one = restores[0]
    assert one is not None
    return fast, lambda v: build(one(x) for x in v)


def _fast_struct(
    typ: type[msgspec.Struct], block: Any, part: Any, seen: set[Any]
) -> tuple[Any, Restore | None]:
    if typ in seen:
        # A recursive struct keeps its own type inside itself (hook path there).
        return typ, None
    seen.add(typ)
    try:
        fields = msgspec.structs.fields(typ)
        forms = [_fast_form(f.type, block, part, seen) for f in fields]
    finally:
        seen.discard(typ)
    if all(fast is f.type for (fast, _), f in zip(forms, fields, strict=True)):
        return typ, None
    config = typ.__struct_config__
    spec = []
    for f, (fast, _) in zip(fields, forms, strict=True):
        if f.default is not msgspec.NODEFAULT:
            default = msgspec.field(default=f.default, name=f.encode_name)
        elif f.default_factory is not msgspec.NODEFAULT:
            default = msgspec.field(default_factory=f.default_factory, name=f.encode_name)
        else:
            default = msgspec.field(name=f.encode_name)
        spec.append((f.name, fast, default))
    try:
        mirror = msgspec.defstruct(
            f"_Fast{typ.__name__}",
            spec,
            module=__name__,
            tag_field=config.tag_field,
            tag=config.tag,
            forbid_unknown_fields=config.forbid_unknown_fields,
            array_like=config.array_like,
            # Never built by hand, only decoded: required fields may follow
            # optional ones (as a kw_only original's do).
            kw_only=True,
            gc=False,
        )
    except TypeError:
        # msgspec refuses the stand-in (an unusual default or config): the
        # whole value takes the general path.
        return typ, None
    names = tuple(f.name for f in fields)
    changed = [(i, r) for i, (_, r) in enumerate(forms) if r is not None]
    astuple = msgspec.structs.astuple
    if tuple(getattr(typ, "__match_args__", ())) != names:

        def restore(v: Any) -> Any:
            values = list(astuple(v))
            for i, r in changed:
                values[i] = r(values[i])
            return typ(**dict(zip(names, values, strict=True)))

    elif changed:

        def restore(v: Any) -> Any:
            values = list(astuple(v))
            for i, r in changed:
                values[i] = r(values[i])
            return typ(*values)

    else:
        # The common case (a message: its blocks are already the real classes).
        def restore(v: Any) -> Any:
            return typ(*astuple(v))

    return mirror, restore


class _Decoders:
    """The decoders of one requested type: the general one (markers through
    the hook) and, when the type holds a marker, the fast one."""

    __slots__ = ("fast", "general", "generation", "restore")

    def __init__(self, typ: Any) -> None:
        self.generation = block_types_generation()
        self.general: msgspec.json.Decoder[Any] = msgspec.json.Decoder(typ, dec_hook=dec_hook)
        self.fast: msgspec.json.Decoder[Any] | None = None
        self.restore: Restore | None = None
        try:
            fast, restore = fast_type(typ)
            if fast is not typ:
                self.fast, self.restore = msgspec.json.Decoder(fast, dec_hook=dec_hook), restore
        except Exception:  # noqa: BLE001 - not lost: the general decoder (built above) serves
            # msgspec refuses a stand-in for some plugin's type (a field it
            # cannot decode, an annotation that does not resolve, …).
            self.fast = None


_decoders: dict[Any, _Decoders] = {}


def _decoders_of(typ: Any) -> _Decoders:
    decoders = _decoders.get(typ)
    if decoders is None or decoders.generation != block_types_generation():
        decoders = _decoders[typ] = _Decoders(typ)
    return decoders


@overload
def loads(data: bytes | str, type: type[T]) -> T: ...
@overload
def loads(data: bytes | str, type: Any) -> Any: ...
def loads(data: bytes | str, type: Any) -> Any:
    """Decode canonical JSON ``data`` as ``type`` (a vocabulary type or a typing form).

    Raises :class:`DecodeError` naming the path of the first bad field, or the
    position of a JSON syntax error.
    """
    decoders = _decoders_of(type)
    if decoders.fast is not None:
        value = _fast_loads(decoders, data)
        if value is not _MISS:
            return value
    return _general(decoders.general, data)


_MISS: Any = object()


def _fast_loads(decoders: _Decoders, data: bytes | str) -> Any:
    assert decoders.fast is not None
    try:
        value = decoders.fast.decode(data)
        return value if decoders.restore is None else decoders.restore(value)
    except Exception:  # noqa: BLE001 - not lost: the general path decides, errors included
        return _MISS


def _general(decoder: msgspec.json.Decoder[Any], data: bytes | str) -> Any:
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise _as_decode_error(exc) from None
    except msgspec.DecodeError as exc:
        raise DecodeError(f"malformed JSON: {exc}") from None


def general_loads(data: bytes | str, type: Any) -> Any:
    """:func:`loads` through the general path only (every marker through the
    registry hook): the reference the fast path is checked against."""
    return _general(_decoders_of(type).general, data)


def _builtins_hook(obj: Any) -> Any:
    # JSON kept as it was stored (a raw body, a loaded event's body not yet
    # read) has no builtin form of its own: its decoded JSON is.
    if type(obj) is msgspec.Raw:
        return msgspec.json.decode(obj)
    found = _enc_hook(obj)
    return msgspec.json.decode(found) if type(found) is msgspec.Raw else found


def to_builtins(value: object) -> Any:
    """The value as plain JSON-compatible Python objects (dicts, lists, …)."""
    return msgspec.to_builtins(value, enc_hook=_builtins_hook)


def from_builtins(obj: Any, type: type[T]) -> T:
    """Convert plain Python JSON objects into ``type``, validating as :func:`loads` does."""
    return _convert(obj, type)


__all__ = [
    "STORED_EVENT",
    "Restore",
    "collect_blobs",
    "dumps",
    "dumps_with_blobs",
    "fast_type",
    "from_builtins",
    "general_loads",
    "loads",
    "to_builtins",
]
