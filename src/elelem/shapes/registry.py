"""The shapes by name: built-in and plugin shapes register the same way.

:func:`register_shape` adds a shape under its name: a
:class:`~elelem.wire.Shape` value, or ``"module:attribute"`` imported on
first use (the six built-in shapes are registered so, below, which keeps
``import elelem`` free of shape code).  A plugin registers its own from its
``elelem.plugins`` entry point; the catalog finds a shape with
:func:`shape_named`, which runs the plugins once when a name is not
registered.  A provider speaks a plugin shape through a config table
(``shape = "my_wire"``) or a :class:`~elelem.providers.ProviderSpec`.
"""

from __future__ import annotations

import importlib
import threading

from elelem.errors import RegistryError, UnsupportedError
from elelem.vocabulary import load_plugins
from elelem.vocabulary.registry import register_shape_name
from elelem.wire import Shape

_lock = threading.Lock()
_shapes: dict[str, Shape | str] = {}

BUILTIN_SHAPES = (
    "anthropic_messages",
    "openai_responses",
    "openai_chat",
    "gemini",
    "bedrock_converse",
    "ollama_native",
    "gemini_interactions",
)
"""The shapes elelem ships, each its package's ``SHAPE``."""


def register_shape(name: str, shape: Shape | str) -> None:
    """Register ``shape`` under ``name``: a shape value (its ``name`` must be
    ``name``) or ``"module:attribute"`` naming one, loaded on first use.

    Registering the same again is a no-op; another shape under a taken name
    is a :class:`~elelem.errors.RegistryError`.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise RegistryError(f"a shape name must be an identifier, not {name!r}")
    if isinstance(shape, str):
        if shape.count(":") != 1:
            raise RegistryError(f"shape {name}: {shape!r} is not 'module:attribute'")
    elif getattr(shape, "name", None) != name:
        raise RegistryError(f"shape {name}: the value's name is {getattr(shape, 'name', None)!r}")
    with _lock:
        existing = _shapes.get(name)
        if existing is not None and existing is not shape and existing != shape:
            raise RegistryError(f"shape {name!r} is already registered")
        _shapes[name] = shape
    register_shape_name(name)


def shape_named(name: str) -> Shape:
    """The shape registered as ``name`` (loading it on first use).

    :class:`~elelem.errors.UnsupportedError` for a name nobody registered
    (after running the plugins once); an import error inside a registered
    module propagates unchanged, since that is a bug to see.
    """
    found = _shapes.get(name)
    if found is None:
        load_plugins()
        found = _shapes.get(name)
    if found is None:
        raise UnsupportedError(f"shape {name} is not supported yet")
    if not isinstance(found, str):
        return found
    module, _, attribute = found.partition(":")
    shape: Shape = getattr(importlib.import_module(module), attribute)
    if getattr(shape, "name", None) != name:
        raise RegistryError(f"shape {name}: {found} names a shape called {shape.name!r}")
    with _lock:
        _shapes[name] = shape
    return shape


def shape_names() -> tuple[str, ...]:
    """Every registered shape name, built-in first."""
    return tuple(_shapes)


for _name in BUILTIN_SHAPES:
    register_shape(_name, f"elelem.shapes.{_name}:SHAPE")

__all__ = ["BUILTIN_SHAPES", "register_shape", "shape_named", "shape_names"]
