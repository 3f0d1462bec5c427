"""A shape as a value: :class:`ShapeSpec` (docs/architecture.md §2.1), sans-IO.

A shape owns the request encoder, the frame parser, the non-streaming
response mapping and the error classifier; every package builds its
``SHAPE`` as a :class:`ShapeSpec` of those functions.  The types a shape
takes and gives (:class:`~elelem.wire.ModelRequest`,
:class:`~elelem.wire.EncodedRequest`, the :class:`~elelem.wire.FrameParser`
and :class:`~elelem.wire.Shape` protocols) live in :mod:`elelem.wire`, so
that the transport driver, which feeds frames to a parser and knows nothing
else about the shape, loads no shape code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from elelem.errors import ConfigError, StreamError
from elelem.shapes.skeleton import typed_parse
from elelem.stream import Chunk
from elelem.vocabulary import ProviderId
from elelem.vocabulary.registry import register_shape_name
from elelem.wire import EncodedRequest, FrameParser, Framing, ModelRequest
from elelem.wire.batch import BatchWire
from elelem.wire.counting import TokenCounter
from elelem.wire.embeddings import EmbeddingWires
from elelem.wire.files import FilesWire
from elelem.wire.listing import ModelListing
from elelem.wire.live import LiveWire
from elelem.wire.speech import SpeechWire, TranscriptionWire


@dataclass(frozen=True)
class ShapeSpec:
    """One wire shape as a value: a :class:`~elelem.wire.Shape` made of its package's functions.

    Every shape package builds its ``SHAPE`` this way from the same parts
    under the same names (see :mod:`elelem.shapes`): ``encode`` is its
    encoder's ``encode_request(request, *, provider, stream)``, ``parser``
    its parser class (``(provider, request=None)``), ``parse_body`` its
    ``parse_body(body, provider, request=None)``, ``classify`` its errors'
    ``classify_error(status, headers, body)``.  No shape needs a class of its
    own beside it.

    The other kinds of exchange a wire has are values beside them, each
    from the package's module of that kind's name: ``counting`` its
    ``counting.COUNTER`` (a :class:`~elelem.wire.counting.TokenCounter`),
    ``listing`` its ``listing.LISTING`` (a
    :class:`~elelem.wire.listing.ModelListing`), ``speech`` its
    ``speech.SPEECH`` and ``transcription`` its
    ``transcription.TRANSCRIPTION`` (:mod:`elelem.wire.speech`), ``live``
    its ``live.LIVE`` (a :class:`~elelem.wire.live.LiveWire`), ``files`` its
    ``files.FILES`` (a :class:`~elelem.wire.files.FilesWire`),
    ``embeddings`` its ``embeddings.EMBEDDINGS`` (a
    :class:`~elelem.wire.embeddings.EmbeddingWires`), ``batch`` its
    ``batch.BATCH`` (a :class:`~elelem.wire.batch.BatchWire`); None where
    the wire has not the kind.

    A shape whose wire has per-provider conventions (Chat Completions) names
    them in ``dialects`` (name -> the shape's own dialect value); its
    ``encode`` also takes ``dialect=``.  :meth:`with_dialect` binds one
    (``dialect``: a name of ``dialects`` or a value of their type), which then
    serves every provider; unbound, each provider gets the dialect of its
    own name, as the encoder decides.  ``conventions`` builds a dialect
    value from a dialect name ("" for the default) and fields over it
    (:meth:`with_conventions`: a compatible server's conventions set one by
    one in a config file).
    """

    name: str
    framing: Framing
    encode: Callable[..., EncodedRequest]
    parser: Callable[..., FrameParser]
    parse_body: Callable[..., list[Chunk]]
    classify: Callable[[int, Mapping[str, str], bytes], StreamError]
    dialects: Mapping[str, object] = field(default_factory=dict)
    dialect: object = None
    conventions: Callable[[str, Mapping[str, object], str], object] | None = None
    counting: TokenCounter | None = None
    listing: ModelListing | None = None
    speech: SpeechWire | None = None
    transcription: TranscriptionWire | None = None
    live: LiveWire | None = None
    files: FilesWire | None = None
    embeddings: EmbeddingWires | None = None
    batch: BatchWire | None = None

    def __post_init__(self) -> None:
        # Its name is a shape's name wherever it was built (ToolSpec.native keys).
        register_shape_name(self.name)

    def encode_request(
        self, request: ModelRequest, *, provider: ProviderId, stream: bool = True
    ) -> EncodedRequest:
        """The wire request for ``request``."""
        if self.dialect is None:
            return self.encode(request, provider=provider, stream=stream)
        return self.encode(request, provider=provider, stream=stream, dialect=self.dialect)

    def new_parser(self, provider: ProviderId, request: Any = None) -> FrameParser:
        """A parser for one streamed response to ``request`` (the neutral
        request, or where a shape reads it the raw wire request JSON)."""
        return self.parser(provider, request)

    @typed_parse
    def parse_response(self, body: bytes, provider: ProviderId, request: Any = None) -> list[Chunk]:
        """The chunks of a non-streaming response body."""
        return self.parse_body(body, provider, request)

    def classify_error(self, status: int, headers: Mapping[str, str], body: bytes) -> StreamError:
        """A typed error for an HTTP error response."""
        return self.classify(status, headers, body)

    def with_dialect(self, dialect: object) -> ShapeSpec:
        """This shape speaking ``dialect`` to every provider it serves: the name
        of one of its :attr:`dialects`, or a dialect value of the same type.

        :class:`~elelem.errors.ConfigError` for a shape without dialects, an
        unknown name or a value of another type.
        """
        if not self.dialects:
            raise ConfigError(f"shape {self.name} has no dialects (dialect = {dialect!r})")
        if isinstance(dialect, str):
            if dialect not in self.dialects:
                known = ", ".join(sorted(self.dialects))
                raise ConfigError(f"unknown {self.name} dialect {dialect!r} (known: {known})")
        elif not any(type(dialect) is type(value) for value in self.dialects.values()):
            raise ConfigError(f"{dialect!r} is not a dialect of shape {self.name}")
        return replace(self, dialect=dialect)

    def with_conventions(
        self, fields: Mapping[str, object], *, dialect: str = "", where: str = ""
    ) -> ShapeSpec:
        """This shape bound to the dialect ``dialect`` names (the default when
        empty) with ``fields`` over it.

        :class:`~elelem.errors.ConfigError` (naming ``where``) for a shape
        without conventions, an unknown dialect or a field it does not take.
        """
        where = where or f"shape {self.name}"
        if self.conventions is None:
            raise ConfigError(f"{where}: shape {self.name} has no conventions to set")
        if dialect and dialect not in self.dialects:
            known = ", ".join(sorted(self.dialects))
            raise ConfigError(f"unknown {self.name} dialect {dialect!r} (known: {known})")
        return replace(self, dialect=self.conventions(dialect, fields, where))

    def __repr__(self) -> str:
        bound = "" if self.dialect is None else f", dialect={self.dialect!r}"
        return f"ShapeSpec({self.name!r}, {self.framing!r}{bound})"


__all__ = ["ShapeSpec"]
