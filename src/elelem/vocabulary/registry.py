"""Merge-extensible registries: block types, their mappings, and the open sets of names.

Block types, message sources, finish reasons, turn triggers and turn-end
reasons are open sets keyed by their discriminant string.  Plugins add
members in code (``register_*``) or through the ``elelem.plugins``
entry-point group, whose entries are callables run once with no arguments.
A member nobody registered is still a valid value: consumers keep it and
take their default arm.

A block type arrives with its mappings (docs/architecture.md §2.2.1, the admission rule):
:func:`register_block_mapping` gives, per wire shape, the function that
spells a block of that type as one of the wire's content parts, and the
line a terminal shows for it.  A shape's encoder takes the mapping where it
has no form of its own, and reports a drop (``unsupported``) where there is
none; the portable projection keeps the block for a shape with a mapping.
Shapes themselves are registered the same way (:mod:`elelem.shapes.registry`),
and so are providers (:func:`register_provider`: one
:class:`~elelem.vocabulary.provider_record.ProviderRecord` each, the built-in
ones of :mod:`elelem.vocabulary.builtin_providers` first).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec

from elelem.errors import RegistryError
from elelem.vocabulary.audio import AudioBlock
from elelem.vocabulary.blocks import CORE_BLOCK_TYPES
from elelem.vocabulary.builtin_providers import BUILTIN_RECORDS
from elelem.vocabulary.media import DocumentBlock, ImageBlock
from elelem.vocabulary.provider_record import ProviderRecord, record_problems
from elelem.vocabulary.tags import BLOCK_TYPES, is_reserved_tag

V = TypeVar("V")

_lock = threading.Lock()
_block_types = BLOCK_TYPES
_plugins_loaded = False
_plugins_ran: set[tuple[str, str, str]] = set()
# Bumped by every registration that changes the block types: decoders built
# from the registry (the codec's fast path) compare it to know they are stale.
_generation = 0


def _after_plugins(table: Mapping[str, V], key: str) -> V | None:
    """``table[key]``, or None; when nobody registered ``key``, the plugins
    are run once first (they may register it)."""
    found = table.get(key)
    if found is None and not _plugins_loaded:
        load_plugins()
        found = table.get(key)
    return found


def add_once(table: dict[str, V], key: str, value: V, taken: Callable[[V], Exception]) -> bool:
    """Add ``value`` to ``table`` under ``key`` (the caller holds the
    registry's lock) and say True; the same value there already is a no-op
    (False), another is refused with ``taken(existing)``: the one rule of
    every registry of names (block types, providers, event kinds)."""
    existing = table.get(key)
    if existing is None:
        table[key] = value
        return True
    if existing != value:
        raise taken(existing)
    return False


def _tag_of(cls: type[msgspec.Struct]) -> object:
    config = getattr(cls, "__struct_config__", None)
    return getattr(config, "tag", None)


def register_block_type(tag: str, cls: type[msgspec.Struct]) -> None:
    """Register ``cls`` as the block type for ``tag``.

    ``cls`` must be a frozen msgspec Struct tagged ``tag`` on the ``type``
    field, so that it encodes with its tag.  Registering the same class again
    is a no-op; a different class for a taken tag is a :class:`RegistryError`.
    """
    if not isinstance(tag, str) or not tag:
        raise RegistryError("a block tag must be a non-empty string")
    if tag == "hosted":
        raise RegistryError("'hosted' is reserved for hosted-activity transitions")
    if not (isinstance(cls, type) and issubclass(cls, msgspec.Struct)):
        raise RegistryError(f"block type for {tag!r} must be a msgspec.Struct subclass")
    config = cls.__struct_config__
    if config.tag_field != "type" or _tag_of(cls) != tag:
        raise RegistryError(
            f"block type {cls.__name__} must be declared with tag_field='type', tag={tag!r}"
        )
    if not config.frozen:
        raise RegistryError(f"block type {cls.__name__} must be frozen")
    global _generation
    with _lock:
        if add_once(
            _block_types,
            tag,
            cls,
            lambda old: RegistryError(f"block tag {tag!r} is already registered to {old.__name__}"),
        ):
            _generation += 1


def block_type(tag: str) -> type[msgspec.Struct] | None:
    """The class registered for ``tag``, or None (decode as UnknownBlock)."""
    return _after_plugins(_block_types, tag)


BlockEncoder = Callable[[Any, str], Mapping[str, Any] | None]
"""Spells a block as one content part of a wire: ``(block, provider)`` ->
the part's JSON object, or None when this block cannot go (the encoder
reports the drop).  ``provider`` is a
:class:`~elelem.vocabulary.drop.BlockSite`: the provider's
name, which also says where the block stands and takes drop records."""


BlockRenderer = Callable[[Any], str]
"""The one line a terminal shows for a block (plain text; the renderer
sanitizes it)."""


@dataclass(frozen=True)
class BlockMapping:
    """What a block type maps to beyond the vocabulary: per shape name its
    :data:`BlockEncoder`, and its :data:`BlockRenderer`."""

    encoders: Mapping[str, BlockEncoder] = field(default_factory=dict)
    render: BlockRenderer | None = None


_mappings: dict[str, BlockMapping] = {}


def register_block_mapping(
    tag: str,
    *,
    encoders: Mapping[str, BlockEncoder] | None = None,
    render: BlockRenderer | None = None,
) -> None:
    """Register mappings of block type ``tag``: ``encoders`` by shape name
    (``"anthropic_messages"``, …), and ``render``.

    Registrations merge: a later call adds shapes, or the renderer.  The same
    function again is a no-op; a different one for a shape (or a renderer)
    already mapped is a :class:`RegistryError`, as is a tag that names no
    registered block type.
    """
    if _block_types.get(tag) is None:
        raise RegistryError(f"no block type {tag!r} is registered: register it first")
    with _lock:
        old = _mappings.get(tag, BlockMapping())
        merged = dict(old.encoders)
        for shape, encode in (encoders or {}).items():
            if not callable(encode):
                raise RegistryError(f"the {shape} encoder of block type {tag!r} is not callable")
            if merged.get(shape, encode) is not encode:
                raise RegistryError(f"block type {tag!r} already has a {shape} encoder")
            merged[shape] = encode
        if render is not None and old.render not in (None, render):
            raise RegistryError(f"block type {tag!r} already has a renderer")
        _mappings[tag] = BlockMapping(merged, render or old.render)


def block_mapping(tag: str) -> BlockMapping | None:
    """The mappings registered for block type ``tag``, or None."""
    return _after_plugins(_mappings, tag)


def block_tags() -> tuple[str, ...]:
    """Every registered block tag."""
    return tuple(_block_types)


def block_types() -> tuple[type[msgspec.Struct], ...]:
    """Every registered block class, in registration order."""
    return tuple(_block_types.values())


def block_types_generation() -> int:
    """A number that changes whenever a block type is registered; whatever is
    built from :func:`block_types` is current while it is unchanged."""
    return _generation


class OpenSet:
    """An open set of names: known members plus any string a provider sends."""

    def __init__(self, what: str, members: Iterable[str]) -> None:
        self.what = what
        self._members: dict[str, str] = {m: "" for m in members}

    def register(self, name: str, description: str = "") -> str:
        """Add ``name`` (idempotent) and return it."""
        if not isinstance(name, str) or not name:
            raise RegistryError(f"a {self.what} must be a non-empty string")
        with _lock:
            self._members.setdefault(name, description)
        return name

    def __contains__(self, name: object) -> bool:
        return name in self._members

    def members(self) -> tuple[str, ...]:
        """The registered members, in registration order."""
        return tuple(self._members)


FINISH_REASONS = OpenSet(
    "finish reason",
    ["stop", "tool-calls", "max-tokens", "paused", "refused", "content-filter", "error", "aborted"],
)
MESSAGE_SOURCES = OpenSet(
    "message source", ["user", "assistant", "tool", "system", "context", "steering"]
)
TURN_TRIGGERS = OpenSet("turn trigger", ["user", "tool-results", "continuation", "retry"])
TURN_END_REASONS = OpenSet(
    "turn-end reason", ["completed", "paused", "interrupted", "error", "max-continuations"]
)


SHAPE_NAMES = OpenSet("shape name", ())
"""Every wire shape's name, registered as the shape is (built-in or a
plugin's: :mod:`elelem.shapes.registry` and each ``ShapeSpec``): what
:attr:`~elelem.vocabulary.ToolSpec.native` may be keyed by."""


def register_shape_name(name: str) -> str:
    """Add a wire shape's name to :data:`SHAPE_NAMES` (the shape registry
    and every shape value call this)."""
    return SHAPE_NAMES.register(name)


def is_shape_name(name: str) -> bool:
    """Whether ``name`` is a registered shape's (running the plugins once
    when it is not yet)."""
    if name not in SHAPE_NAMES and not _plugins_loaded:
        load_plugins()
    return name in SHAPE_NAMES


def register_finish_reason(name: str, description: str = "") -> str:
    """Add a finish reason to the open set."""
    return FINISH_REASONS.register(name, description)


def register_message_source(name: str, description: str = "") -> str:
    """Add a message source to the open set."""
    return MESSAGE_SOURCES.register(name, description)


def register_turn_trigger(name: str, description: str = "") -> str:
    """Add a turn trigger to the open set."""
    return TURN_TRIGGERS.register(name, description)


def register_turn_end_reason(name: str, description: str = "") -> str:
    """Add a turn-end reason to the open set."""
    return TURN_END_REASONS.register(name, description)


def load_plugins(group: str = "elelem.plugins") -> list[str]:
    """Run every entry point of ``group`` not run before; return the names run now.

    An entry point is a callable taking no arguments that calls the
    ``register_*`` functions.  Each runs at most once per process (a later
    call only picks up newly installed plugins).  A failing plugin raises
    :class:`RegistryError` naming it; nothing is skipped silently, and it
    is retried by the next call.  Decoding calls this lazily the first time
    it meets a block tag nobody registered.
    """
    # Deferred: importlib.metadata (zipfile, csv, email) is needed only here,
    # the first time a plugin is looked for, not by every ``import elelem``.
    from importlib.metadata import entry_points

    global _plugins_loaded
    _plugins_loaded = True
    ran: list[str] = []
    for ep in entry_points(group=group):
        key = (group, ep.name, ep.value)
        if key in _plugins_ran:
            continue
        try:
            hook: Callable[[], object] = ep.load()
            hook()
        except Exception as exc:
            raise RegistryError(f"elelem plugin {ep.name!r} ({ep.value}) failed: {exc}") from exc
        _plugins_ran.add(key)
        ran.append(ep.name)
    return ran


_providers: dict[str, ProviderRecord] = {}
_provider_generation = 0
_PROVIDER_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*")


def register_provider(record: ProviderRecord) -> None:
    """Register ``record`` under its name: every table keyed by provider
    name (the catalog, models and aliases, prices, telemetry names, the
    chat dialects, the embedding and batch wires) is derived from these.

    The same record again is a no-op; another under a taken name, or a
    record whose fields contradict each other
    (:func:`~elelem.vocabulary.provider_record.record_problems`), is a
    :class:`RegistryError` naming what is wrong.
    """
    if not isinstance(record, ProviderRecord):
        raise RegistryError(f"a provider must be a ProviderRecord, not {type(record).__name__}")
    if not _PROVIDER_NAME.fullmatch(record.name):
        raise RegistryError(
            f"provider name {record.name!r} must be lower-case letters, digits, '.', '_' or '-'"
        )
    problems = record_problems(record)
    if problems:
        raise RegistryError(f"provider {record.name}: " + "; ".join(problems))
    global _provider_generation
    with _lock:
        if add_once(
            _providers,
            record.name,
            record,
            lambda _: RegistryError(f"provider {record.name!r} is already registered"),
        ):
            _provider_generation += 1


def provider_record(name: str) -> ProviderRecord | None:
    """The record registered as ``name`` (running the plugins once when
    nobody registered it), or None."""
    return _after_plugins(_providers, name)


def provider_records() -> tuple[ProviderRecord, ...]:
    """Every registered provider record, the built-ins first, after running
    the plugins once."""
    if not _plugins_loaded:
        load_plugins()
    return tuple(_providers.values())


def providers_generation() -> int:
    """A number that changes whenever a provider is registered; tables
    derived from :func:`provider_records` are current while it is unchanged."""
    return _provider_generation


class RecordTable(Mapping[str, Any]):
    """A table derived from the registered records and read live (a
    plugin's provider appears in it once registered).

    Keyed by provider name, ``pick`` gives a record's value, or None to
    leave the record out; keyed otherwise (by shape, …), ``build`` makes the
    whole table from the records.  The table is rebuilt only when
    :func:`providers_generation` changed.
    """

    def __init__(
        self,
        pick: Callable[[ProviderRecord], Any] | None = None,
        *,
        build: Callable[[tuple[ProviderRecord, ...]], dict[str, Any]] | None = None,
    ) -> None:
        if (pick is None) == (build is None):
            raise RegistryError("a record table takes pick or build, one of them")
        self._pick = pick
        self._build = build
        self._built = -1
        self._table: dict[str, Any] = {}

    def _current(self) -> dict[str, Any]:
        if self._built != _provider_generation or not _plugins_loaded:
            records = provider_records()
            if self._build is not None:
                self._table = self._build(records)
            else:
                assert self._pick is not None
                table = {r.name: self._pick(r) for r in records}
                self._table = {name: value for name, value in table.items() if value is not None}
            self._built = _provider_generation
        return self._table

    def __getitem__(self, name: str) -> Any:
        return self._current()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())

    def __repr__(self) -> str:
        return f"RecordTable({self._current()!r})"


for _record in BUILTIN_RECORDS:
    register_provider(_record)

for _cls in CORE_BLOCK_TYPES:
    register_block_type(str(_tag_of(_cls)), _cls)

# Images, documents and audio are not core: they arrive through the registry, as a
# plugin's block types would (their encoder, renderer and token mappings
# live with each shape, the renderer and elelem.tokens).
register_block_type("image", ImageBlock)
register_block_type("document", DocumentBlock)
register_block_type("audio", AudioBlock)

__all__ = [
    "FINISH_REASONS",
    "MESSAGE_SOURCES",
    "SHAPE_NAMES",
    "TURN_END_REASONS",
    "TURN_TRIGGERS",
    "BlockEncoder",
    "BlockMapping",
    "BlockRenderer",
    "OpenSet",
    "RecordTable",
    "add_once",
    "block_mapping",
    "block_tags",
    "block_type",
    "block_types",
    "block_types_generation",
    "is_reserved_tag",
    "is_shape_name",
    "load_plugins",
    "provider_record",
    "provider_records",
    "providers_generation",
    "register_block_mapping",
    "register_block_type",
    "register_finish_reason",
    "register_message_source",
    "register_provider",
    "register_shape_name",
    "register_turn_end_reason",
    "register_turn_trigger",
]
