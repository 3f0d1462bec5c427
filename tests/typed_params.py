"""Check a JSON request body against an official SDK's typed params.

The OpenAI SDK spells each request as ``TypedDict`` params
(``openai.types.responses.response_create_params``, ...): a body elelem
encodes must hold only keys those types name, every required key, and
values of the annotated types, all the way down.  pydantic cannot say this
of a ``TypedDict`` (it ignores unknown keys and validates ``Iterable``
fields lazily), so this walks the annotations itself.  A list of what does
not fit comes back (empty: the body is one the SDK could have built).
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

import typing_extensions
from typing_extensions import get_type_hints

_NONE = type(None)
_WRAPPERS = {
    typing.Required,
    typing.NotRequired,
    typing.Annotated,
    typing_extensions.Required,
    typing_extensions.NotRequired,
    typing_extensions.Annotated,
}


def mismatches(value: Any, annotation: Any, path: str = "$") -> list[str]:
    """What of ``value`` does not fit ``annotation`` (each ``path: why``)."""
    origin = get_origin(annotation)
    if annotation is Any or annotation is object:
        return []
    if origin in _WRAPPERS:
        return mismatches(value, get_args(annotation)[0], path)
    if hasattr(annotation, "__value__") and not isinstance(annotation, type):
        return mismatches(value, annotation.__value__, path)  # a type alias statement
    if origin in (Union, types.UnionType):
        options = get_args(annotation)
        tries = [mismatches(value, option, path) for option in options]
        if any(not t for t in tries):
            return []
        return [f"{path}: fits none of {len(options)} forms ({min(tries, key=len)[0]})"]
    if origin is Literal:
        return (
            []
            if value in get_args(annotation)
            else [f"{path}: {value!r} not in {get_args(annotation)}"]
        )
    if annotation is _NONE:
        return [] if value is None else [f"{path}: not null"]
    if typing_extensions.is_typeddict(annotation):
        return _typed_dict(value, annotation, path)
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence, tuple):
        if not isinstance(value, list):
            return [f"{path}: not an array"]
        (item,) = get_args(annotation)[:1] or (Any,)
        return [m for i, v in enumerate(value) for m in mismatches(v, item, f"{path}[{i}]")]
    if origin in (dict, collections.abc.Mapping) or annotation is dict:
        if not isinstance(value, dict):
            return [f"{path}: not an object"]
        args = get_args(annotation)
        if len(args) == 2:
            return [m for k, v in value.items() for m in mismatches(v, args[1], f"{path}.{k}")]
        return []
    if annotation is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{path}: not a number"]
    if annotation is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{path}: not an integer"]
    if isinstance(annotation, type):
        return [] if isinstance(value, annotation) else [f"{path}: not {annotation.__name__}"]
    return []  # a form this walk does not read (a TypeVar): taken as it is


def _typed_dict(value: Any, annotation: Any, path: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: not an object ({annotation.__name__})"]
    hints = get_type_hints(annotation, include_extras=True)
    out = [f"{path}.{k}: no such key in {annotation.__name__}" for k in value if k not in hints]
    out += [
        f"{path}.{k}: required by {annotation.__name__}"
        for k in annotation.__required_keys__
        if k not in value
    ]
    for key, item in value.items():
        if key in hints:
            out += mismatches(item, hints[key], f"{path}.{key}")
    return out
