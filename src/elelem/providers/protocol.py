"""A model that is not one catalog address: what goes wherever a model goes.

A :class:`~elelem.providers.Target` is one provider's model, reached over
HTTP.  A :class:`Model` is anything else that answers a neutral request with
a response stream: an in-process model (:class:`elelem.testing.TestModel`),
a list of targets tried in turn (:class:`elelem.Fallback`), a model with
middleware around it (:func:`elelem.wrap`).  The client, the turn engine and
the tool loop take either, and ask a :class:`Model` for its stream through
:meth:`Model.open`, handing it the client (a :class:`ModelHost`) so that it
can resolve and open the targets it stands for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeAlias, runtime_checkable

from elelem.vocabulary import ProviderId

if TYPE_CHECKING:
    from elelem.providers.catalog import Target
    from elelem.stream import AssembledResponse, Chunk
    from elelem.transport import Timeouts
    from elelem.transport.faces import ChatFace, Core, SyncChatFace
    from elelem.wire import ModelRequest


class ModelHost(Protocol):
    """What a :class:`Model` may ask of the client that opens it."""

    def target(self, model: str | Target | Model) -> Target | Model:
        """Resolve an address (a target or a model is returned as it is)."""
        ...

    def open(
        self,
        target: Target | Model,
        request: ModelRequest,
        *,
        timeouts: Timeouts | None = None,
        sync: bool = False,
        streamed: bool = True,
    ) -> Any:
        """The response stream of ``request`` (its ``model`` replaced by the
        target's own) to ``target``: async, or blocking with ``sync``;
        ``streamed`` False asks a catalog target for the whole answer at once
        (and is handed on to a :class:`Model`)."""
        ...


@runtime_checkable
class Model(Protocol):
    """Something that answers a neutral request with a response stream.

    ``address`` is what the log's turn start records; ``provider`` and
    ``model`` name it in the records of what it answers, unless its stream's
    ``response-start`` names the provider that actually answered.
    """

    @property
    def address(self) -> str:
        """What the turn start records (``test:test-model``, ``a,b``)."""
        ...

    @property
    def provider(self) -> ProviderId:
        """The provider the model's answers are recorded under by default."""
        ...

    @property
    def model(self) -> str:
        """The model name a request carries by default."""
        ...

    def open(
        self,
        host: ModelHost,
        request: ModelRequest,
        *,
        timeouts: Timeouts | None,
        sync: bool,
        streamed: bool = True,
    ) -> Any:
        """The stream answering ``request``: an async stream (``step``,
        ``aclose``, ``partial``, ``result``, ``open_parts``, ``request_id``,
        ``dropped``) or with ``sync`` a blocking one (``step``, ``close``, …).
        ``streamed`` False (``--no-stream``) is to be handed on to every
        target the model opens through ``host``, so that each request asks
        for the whole answer at once; a model that sends no request may
        ignore it."""
        ...


def resolved_address(model: Target | Model) -> str:
    """What a log records of ``model``: a catalog target's resolved
    ``provider:model`` (an alias resolved), a Model's own address."""
    from elelem.providers.catalog import Target

    return model.resolved if isinstance(model, Target) else model.address


AnyModel: TypeAlias = "Target | Model"
"""Whatever goes where a model goes, once resolved."""


class Opening(NamedTuple):
    """One call of :meth:`Model.open` as a value: the host the model was
    opened by, the request, and how its stream is read."""

    host: ModelHost
    request: ModelRequest
    timeouts: Timeouts | None
    sync: bool
    streamed: bool = True

    def open(self, target: Target | Model, request: ModelRequest) -> Any:
        """The stream of ``request`` to ``target``, opened through the host
        as this one was (the same timeouts, face and streaming)."""
        return self.host.open(
            target, request, timeouts=self.timeouts, sync=self.sync, streamed=self.streamed
        )


class CoreModel:
    """A :class:`Model` whose stream is a core written once and read through
    the async or the blocking face: a subclass says only how :meth:`core`
    makes it from the :class:`Opening`."""

    def open(
        self,
        host: ModelHost,
        request: ModelRequest,
        *,
        timeouts: Timeouts | None,
        sync: bool,
        streamed: bool = True,
    ) -> ChatFace | SyncChatFace:
        """The stream answering ``request`` (see :meth:`Model.open`): the
        core of :meth:`core`, read async or, with ``sync``, blocking."""
        from elelem.transport.faces import chat_face

        return chat_face(self.core(Opening(host, request, timeouts, sync, streamed)), sync=sync)

    def core(self, opening: Opening) -> Core[Chunk, AssembledResponse]:
        """The core of the stream :meth:`open` opens."""
        raise NotImplementedError


__all__ = ["AnyModel", "CoreModel", "Model", "ModelHost", "Opening"]
