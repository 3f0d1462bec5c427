"""Fallback: a list of models tried in turn, usable wherever a model is.

``Fallback(["anthropic:claude-sonnet-4-5", "openai:gpt-4.1"])`` sends a
request to the first target; when that fails *before any chunk of its
response arrived* with an error the client's retry policy counts as
retryable (a connect failure, 408/409/429/5xx/529, an overload, a stream
that broke before its first event), it sends the same request to the next
target, and so on.  The client's own retries of one target come first (set
``max_retries=0`` on the client to move on at the first failure).

What the switch leaves behind:

- a :class:`~elelem.stream.Retry` chunk on the stream, ``fallback`` naming
  the target moved to (its ``reason`` ``falling back to openai:gpt-4.1``,
  ``kind``/``status``/``message`` the failure), before the next target's
  ``response-start``;
- the same notice in the answering response's ``retries``, hence in the
  log's response record;
- the answering provider and model in the response's ``response-start``, so
  the turn engine records the response under the provider that produced it.

Nothing that began streaming is moved: an error after the first chunk
propagates (and the turn engine records the partial response).

The history goes to each target through its encoder, which replays a
provider's own messages natively and every other message through the
portable projection, reporting each drop in the request's ``dropped`` (the
record's ``dropped``).  Response-level payloads (an Anthropic container)
go only to the provider that returned them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import msgspec

from elelem.errors import StreamError
from elelem.providers.catalog import Target, parse_model
from elelem.providers.protocol import CoreModel, Model, Opening
from elelem.stream import AssembledResponse, ResponseStart, Retry
from elelem.transport.faces import (
    Around,
    Effects,
    Pair,
    close_of,
    step_of,
)
from elelem.transport.retry import retries_before_content
from elelem.vocabulary import Part, ProviderId

if TYPE_CHECKING:
    pass

MESSAGE_LIMIT = 300
"""Characters of a failure's message a fallback notice keeps."""


def _address(item: str | Target | Model) -> str:
    return item if isinstance(item, str) else item.address


class Fallback(CoreModel):
    """Targets (addresses, :class:`~elelem.providers.Target`\\ s or other
    models) tried in turn (see the module docs).  Addresses are resolved
    when first tried, so a target that is never needed needs no key."""

    def __init__(self, targets: Iterable[str | Target | Model]) -> None:
        self.targets = tuple(targets)
        if not self.targets:
            raise ValueError("a Fallback needs at least one target")
        for t in self.targets:
            if isinstance(t, str) and not t.strip():
                raise ValueError("a Fallback target address is empty")

    def __repr__(self) -> str:
        return f"Fallback({[_address(t) for t in self.targets]!r})"

    @property
    def address(self) -> str:
        """The addresses joined with commas (what ``-m a,b`` writes)."""
        return ",".join(_address(t) for t in self.targets)

    @property
    def provider(self) -> ProviderId:
        """The first target's provider (the answering one names itself)."""
        first = self.targets[0]
        return ProviderId(parse_model(first)[0]) if isinstance(first, str) else first.provider

    @property
    def model(self) -> str:
        """The first target's model name."""
        first = self.targets[0]
        return parse_model(first)[1] if isinstance(first, str) else first.model

    def core(self, opening: Opening) -> FallbackCore:
        """The stream that tries each target in turn (each asked
        non-streamed when ``streamed`` is False)."""
        return FallbackCore(self, opening)


class FallbackCore(Around):
    """A fallback's stream, written once (read through either face): the
    targets, the current target's stream, and the decision to move on."""

    def __init__(self, fallback: Fallback, opening: Opening) -> None:
        self.fallback = fallback
        self._opening = opening
        self._index = 0
        self._fed = False
        self.notices: list[Retry] = []
        """The switches made so far, in order."""
        self.output_type: Any = None
        self.target: Target | Model = opening.host.target(fallback.targets[0])
        self._inner: Any = self._open(self.target)

    def _open(self, target: Target | Model) -> Any:
        asked = self._opening.request
        payloads = tuple(p for p in asked.response_payloads if p.provider == target.provider)
        request = msgspec.structs.replace(asked, model=target.model, response_payloads=payloads)
        inner = self._opening.open(target, request)
        assembler = getattr(getattr(inner, "core", inner), "assembler", None)
        if assembler is not None:
            # The answering response's record lists every switch before it.
            for notice in self.notices:
                assembler.feed(notice)
        return inner

    def _switch(self, exc: BaseException) -> Retry | None:
        """The notice of the move to the next target after ``exc``, or None
        when ``exc`` is not one to move past (it then propagates)."""
        if self._fed or self._index + 1 >= len(self.fallback.targets):
            return None
        if not isinstance(exc, StreamError) or not retries_before_content(exc):
            return None
        self._index += 1
        target = self._opening.host.target(self.fallback.targets[self._index])
        notice = Retry(
            attempt=len(self.notices) + 1,
            delay=0.0,
            reason=f"falling back to {target.address}",
            kind=exc.kind,
            status=exc.status,
            message=exc.message[:MESSAGE_LIMIT],
            request_id=exc.request_id,
            fallback=target.address,
        )
        self.notices.append(notice)
        self.target = target
        return notice

    def stepping(self) -> Effects[Pair | None]:
        """The next ``(chunk, committed)`` pair (a switch is a ``Retry``
        pair), or None at the end."""
        try:
            pair = yield step_of(self._inner)
        except BaseException as exc:
            notice = self._switch(exc)
            if notice is None:
                raise
            yield close_of(self._inner)
            self._inner = self._open(self.target)
            return notice, ()
        return self._seen(pair)

    def _seen(self, pair: Pair | None) -> Pair | None:
        if pair is None:
            return None
        chunk = pair[0]
        if type(chunk) is Retry:
            return pair  # the target's own retry: nothing arrived yet
        self._fed = True
        if type(chunk) is ResponseStart and (chunk.provider is None or chunk.model is None):
            # The engine records the response under the target that answered.
            named = msgspec.structs.replace(
                chunk,
                provider=chunk.provider or self.target.provider,
                model=chunk.model or self.target.model,
            )
            return named, pair[1]
        return pair

    # -- what needs no I/O (the current target's) ----------------------------------

    @property
    def retries(self) -> list[Retry]:
        """The switches, then the current target's own retries."""
        return [*self.notices, *getattr(self._inner, "retries", ())]

    def partial(self) -> AssembledResponse:
        """What arrived from the current target."""
        result: AssembledResponse = self._inner.partial()
        return result

    def result(self) -> AssembledResponse:
        """The current target's assembled response."""
        result: AssembledResponse = self._inner.result()
        return result

    def open_parts(self) -> tuple[Part, ...]:
        """The current target's blocks in progress."""
        parts: tuple[Part, ...] = self._inner.open_parts()
        return parts


__all__ = ["Fallback", "FallbackCore"]
