"""Middleware: a model wrapped in transforms of its request and its chunks.

``wrap(model, a, b)`` goes wherever a model goes.  Each middleware may
change the neutral request before it is encoded
(:meth:`Middleware.request`: default options, a guardrail that refuses a
request, a cache key) and the chunk stream after it is parsed
(:meth:`Middleware.chunk`: redact, rewrite, drop, add).  They compose like
layers: requests pass ``a`` then ``b`` on the way in; chunks pass ``b``
then ``a`` on the way out.  The chunks that come out go through the one
:class:`~elelem.stream.Assembler` of the wrapped stream, so the log, the
renderer and the tool loop see the transformed response (the inner
stream's own assembly is not used).

The built-in prompt cache is one: :class:`PromptCaching` sets
:class:`~elelem.vocabulary.PromptCache` on every request that does not set
its own, as :class:`DefaultOptions` does for any option.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from elelem.providers.catalog import Target
from elelem.providers.protocol import CoreModel, Model, Opening
from elelem.stream import Assembler, Chunk, Retry
from elelem.transport.faces import (
    Around,
    Assembled,
    Effects,
    Pair,
    step_of,
)
from elelem.vocabulary import CacheTTL, GenerationOptions, PromptCache, ProviderId

if TYPE_CHECKING:
    from elelem.wire import ModelRequest


class Middleware:
    """A transform of a model's requests and chunks; both default to nothing.
    Subclass and override either (they must not block: they run in the
    stream's loop)."""

    def request(self, request: ModelRequest) -> ModelRequest:
        """The request to send instead of ``request`` (raise to refuse it)."""
        return request

    def chunk(self, chunk: Chunk) -> Sequence[Chunk]:
        """The chunks that stand for ``chunk`` (none drops it)."""
        return (chunk,)


class DefaultOptions(Middleware):
    """Give every request ``options``' values for what its own options leave
    unset (a field at its default)."""

    def __init__(self, options: GenerationOptions) -> None:
        self.options = options

    def request(self, request: ModelRequest) -> ModelRequest:
        """``request`` with the defaults filled in."""
        blank = GenerationOptions()
        own = request.options
        filled = {
            name: getattr(self.options, name)
            for name in own.__struct_fields__
            if getattr(own, name) == getattr(blank, name)
            and getattr(self.options, name) != getattr(blank, name)
        }
        if not filled:
            return request
        return msgspec.structs.replace(request, options=msgspec.structs.replace(own, **filled))


class PromptCaching(DefaultOptions):
    """The prompt cache (``--cache``) as middleware: every request that sets
    no cache of its own asks for one with ``ttl``."""

    def __init__(self, ttl: CacheTTL | None = None) -> None:
        super().__init__(GenerationOptions(cache=PromptCache(ttl=ttl)))


class Wrapped(CoreModel):
    """``model`` with ``middleware`` around it (see :func:`wrap`)."""

    def __init__(self, model: str | Target | Model, middleware: Sequence[Middleware]) -> None:
        self.inner = model
        self.middleware = tuple(middleware)

    def __repr__(self) -> str:
        names = ", ".join(type(m).__name__ for m in self.middleware)
        return f"wrap({self.address!r}, {names})"

    @property
    def address(self) -> str:
        """The wrapped model's address."""
        return self.inner if isinstance(self.inner, str) else self.inner.address

    @property
    def provider(self) -> ProviderId:
        """The wrapped model's provider."""
        from elelem.providers.catalog import parse_model

        inner = self.inner
        return ProviderId(parse_model(inner)[0]) if isinstance(inner, str) else inner.provider

    @property
    def model(self) -> str:
        """The wrapped model's name."""
        from elelem.providers.catalog import parse_model

        inner = self.inner
        return parse_model(inner)[1] if isinstance(inner, str) else inner.model

    def core(self, opening: Opening) -> WrappedCore:
        """The inner model's stream of the transformed request (non-streamed
        when ``streamed`` is False), its chunks transformed on the way out."""
        target = opening.host.target(self.inner)
        request = msgspec.structs.replace(opening.request, model=target.model)
        for layer in self.middleware:
            request = layer.request(request)
        return WrappedCore(opening.open(target, request), self.middleware, target.provider)


class WrappedCore(Assembled, Around):
    """A wrapped model's stream, written once (read through either face):
    the inner stream's chunks through the transforms into its own assembler."""

    def __init__(self, inner: Any, middleware: Sequence[Middleware], provider: ProviderId) -> None:
        self._inner = inner
        self._layers = tuple(reversed(middleware))
        self.assembler = Assembler(provider)
        self._ready: list[Chunk] = []
        self.retries: list[Retry] = []
        self.output_type: Any = None

    def stepping(self) -> Effects[Pair | None]:
        """The next transformed ``(chunk, committed)`` pair, or None at the end."""
        while not self._ready:
            pair = yield step_of(self._inner)
            if pair is None:
                return None
            self._out(pair[0])
        return self._next_ready()

    def _out(self, chunk: Chunk) -> None:
        chunks = [chunk]
        for layer in self._layers:
            chunks = [c for one in chunks for c in layer.chunk(one)]
        self._ready.extend(chunks)

    def _next_ready(self) -> Pair | None:
        if not self._ready:
            return None
        chunk = self._ready.pop(0)
        if type(chunk) is Retry:
            self.retries.append(chunk)
        return chunk, self.assembler.feed(chunk)


def wrap(model: str | Target | Model, *middleware: Middleware) -> Wrapped:
    """``model`` with ``middleware`` around it: a model that goes wherever one goes."""
    if not middleware:
        raise ValueError("wrap needs at least one middleware")
    for layer in middleware:
        if not isinstance(layer, Middleware):
            raise TypeError(f"{layer!r} is not a Middleware")
    return Wrapped(model, middleware)


__all__ = [
    "DefaultOptions",
    "Middleware",
    "PromptCaching",
    "Wrapped",
    "WrappedCore",
    "wrap",
]
