"""History processors: what a request carries of a long conversation.

A turn's ``history=[…]`` processors run before each request, in order, over
the projection of the log; they never rewrite the log:

- :class:`KeepLastTurns` ``(n)`` sends the last ``n`` turns;
- :class:`TrimToTokens` ``(budget=None, reserve=None)`` drops the oldest
  turns until the request's estimate (:mod:`elelem.tokens`) fits ``budget``,
  by default the target model's context window from the model catalog
  (:func:`elelem.providers.capabilities.model_info`) less ``reserve`` for
  the answer (default: the model's most output tokens, else 8192); the last
  turn is always sent;
- :class:`Summarize` ``(model=None, keep_last=2, over_tokens=None)`` has a
  model (the turn's own by default) summarize every turn but the last
  ``keep_last`` — when the history's estimate is over ``over_tokens``, or
  always without it — and stores the summary as a ``compaction`` overlay
  with its provenance (provider, model, response id, usage): from then on
  every projection, of this run and of later ones, carries the summary in
  place of those turns.

A processor works on whole turns, so a tool call is never separated from
its result (both belong to the turn that made the call), and a history
never starts with an assistant message or a tool result: what is cut is cut
up to the next user message of the kept turns.  Any callable taking and
returning a :class:`History` is a processor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeAlias

from elelem.conversation.events import Compaction, Draft, Event, kind_of
from elelem.conversation.log import Conversation
from elelem.conversation.projections import Projection
from elelem.errors import ElelemError
from elelem.providers.capabilities import model_info
from elelem.tokens import estimate_messages
from elelem.turns.actions import READ, Append, Flow, Send
from elelem.vocabulary import EventId, Message, TextBlock, ToolResultBlock, ToolSpec

if TYPE_CHECKING:
    from elelem.providers import Target
    from elelem.providers.protocol import Model

SUMMARY_INSTRUCTIONS = (
    "Summarize the conversation above for the assistant that will continue it: "
    "the user's goals, the facts and decisions established, tool results that "
    "still matter, and open questions. Write only the summary."
)


class HistoryError(ElelemError, ValueError):
    """A history processor cannot do what it was asked (a token budget with
    no context window known for the model, say)."""


@dataclass(frozen=True)
class History:
    """The history a request is about to carry: each message with the events
    its parts came from and its turn (None for what a projection made up,
    such as a compaction's summary), and what the estimate needs."""

    messages: tuple[Message, ...]
    origins: tuple[tuple[EventId | None, ...], ...]
    turns: tuple[int | None, ...]
    provider: str
    model: str
    system: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    dropped: tuple[Any, ...] = field(default=())

    @classmethod
    def of(cls, projection: Projection, events: Sequence[Event], **context: Any) -> History:
        """The history of ``projection`` over ``events``."""
        turn_of = {e.id: e.turn for e in events}
        turns = tuple(
            next((turn_of[o] for o in origin if o is not None and o in turn_of), None)
            for origin in projection.origins
        )
        return cls(
            projection.messages, projection.origins, turns, dropped=projection.dropped, **context
        )

    def projection(self) -> Projection:
        """The history as a projection again."""
        return Projection(self.messages, self.origins, self.dropped)

    def estimate(self) -> int:
        """The request's input tokens, estimated."""
        return estimate_messages(
            self.messages, self.provider, system=self.system, tools=self.tools
        ).total

    def turn_numbers(self) -> list[int]:
        """The turns the history holds, oldest first."""
        return sorted({t for t in self.turns if t is not None})

    def from_turn(self, first: int) -> History:
        """The messages of turns ``first`` on (and the summaries before them
        kept), started at a user message that is not a tool result."""
        keep = [i for i, t in enumerate(self.turns) if t is None or t >= first]
        cut = [i for i in keep if self.turns[i] is not None]
        while cut and not _opens(self.messages[cut[0]]):
            keep.remove(cut.pop(0))
        return replace(
            self,
            messages=tuple(self.messages[i] for i in keep),
            origins=tuple(self.origins[i] for i in keep),
            turns=tuple(self.turns[i] for i in keep),
        )


def _opens(message: Message) -> bool:
    """Whether a history may start at ``message``: a user message, not tool results."""
    return message.role == "user" and not any(
        isinstance(p, ToolResultBlock) for p in message.content
    )


HistoryProcessor: TypeAlias = Callable[[History], History]
"""A processor: a history in, the history to send out."""


@dataclass(frozen=True)
class KeepLastTurns:
    """Send the last ``n`` turns (and the summaries of earlier ones)."""

    n: int

    def __post_init__(self) -> None:
        n = self.n
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"KeepLastTurns needs n of 1 or more, not {n!r}")

    def __call__(self, history: History) -> History:
        turns = history.turn_numbers()
        if len(turns) <= self.n:
            return history
        return history.from_turn(turns[-self.n])


@dataclass(frozen=True)
class TrimToTokens:
    """Drop the oldest turns until the estimate fits ``budget`` (default: the
    model's context window less ``reserve``, itself by default the model's
    most output tokens, else 8192); the last turn always stays."""

    budget: int | None = None
    reserve: int | None = None

    def __post_init__(self) -> None:
        for name, least in (("budget", 0), ("reserve", 0)):
            value = getattr(self, name)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < least
            ):
                raise ValueError(f"TrimToTokens needs {name} of {least} or more, not {value!r}")

    def limit(self, history: History) -> int:
        """The budget in force for ``history``'s model."""
        if self.budget is not None:
            return self.budget
        info = model_info(history.provider, history.model)
        if info.context_window is None:
            raise HistoryError(
                f"no context window is known for {history.provider}:{history.model}: "
                "give TrimToTokens(budget=…)"
            )
        reserve = self.reserve
        if reserve is None:
            reserve = info.max_output_tokens if info.max_output_tokens is not None else 8192
        return info.context_window - reserve

    def __call__(self, history: History) -> History:
        budget = self.limit(history)
        turns = history.turn_numbers()
        if len(turns) <= 1 or history.estimate() <= budget:
            return history
        # The estimate only falls as older turns go, so the first turn to
        # keep is found by bisection: log(n) estimates of the history, not n
        # (dropping one turn at a time made a long conversation quadratic).
        low, high = 1, len(turns) - 1
        while low < high:
            middle = (low + high) // 2
            if history.from_turn(turns[middle]).estimate() <= budget:
                high = middle
            else:
                low = middle + 1
        return history.from_turn(turns[low])


@dataclass(frozen=True)
class Summarize:
    """Have ``model`` (the turn's own when None) summarize every turn but
    the last ``keep_last``, stored as a compaction overlay (see the module
    docs); only when the estimate is over ``over_tokens``, if given."""

    model: str | Target | Model | None = None
    keep_last: int = 2
    over_tokens: int | None = None
    instructions: str = SUMMARY_INSTRUCTIONS

    def __call__(self, history: History) -> History:
        return history  # its work is done before the others run (compact)

    def older(self, history: History) -> list[int]:
        """The turns to summarize now (none: nothing to do)."""
        turns = history.turn_numbers()
        if len(turns) <= self.keep_last:
            return []
        if self.over_tokens is not None and history.estimate() <= self.over_tokens:
            return []
        return turns[: len(turns) - self.keep_last]

    def compact(
        self, conversation: Conversation, history: History, target: Target | Model, turn: int
    ) -> Flow[bool]:
        """Summarize and store the compaction; True when one was stored."""
        older = self.older(history)
        if not older:
            return False
        last = older[-1]
        kept = [i for i, t in enumerate(history.turns) if t is None or t <= last]
        messages = [history.messages[i] for i in kept]
        ask = "Summarize the conversation so far, as instructed."
        messages.append(Message("user", (TextBlock(ask),), "user"))
        model = self.model if self.model is not None else target
        arguments: dict[str, Any] = {"messages": tuple(messages), "system": self.instructions,
                                     "tools": (), "hosted_tools": (), "options": None,
                                     "response_payloads": ()}  # fmt: skip
        stream = yield Send(model, arguments)  # type: ignore[arg-type]
        while (yield READ) is not None:
            pass
        result = stream.result()
        # The summary read every turn up to ``last`` (earlier summaries
        # included), so it stands for all of them.
        first = min((e.turn for e in conversation.events if e.turn > 0), default=older[0])
        compaction = Compaction(
            first, last, result.text,
            provider=result.provider, model=result.model,
            response_id=result.response_id, usage=result.usage,
        )  # fmt: skip
        yield Append((Draft(kind_of(compaction), compaction, turn),))
        return True


def processed(
    conversation: Conversation,
    processors: Sequence[HistoryProcessor],
    target: Target | Model,
    request: dict[str, Any],
    turn: int,
) -> Flow[Projection]:
    """The projection a request carries: the summaries made first, then each
    processor over the history in order."""

    def history() -> History:
        return History.of(
            conversation.project(), conversation.events,
            provider=str(target.provider), model=target.model,
            system=request.get("system"), tools=tuple(request.get("tools", ())),
        )  # fmt: skip

    for processor in processors:
        if isinstance(processor, Summarize):
            yield from processor.compact(conversation, history(), target, turn)
    current = history()
    for processor in processors:
        current = processor(current)
    return current.projection()


__all__ = [
    "SUMMARY_INSTRUCTIONS",
    "History",
    "HistoryError",
    "HistoryProcessor",
    "KeepLastTurns",
    "Summarize",
    "TrimToTokens",
    "processed",
]
