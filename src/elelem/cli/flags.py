"""The click options commands share: the model and its tools, timeouts,
how an answer is shown, which conversation to continue, how much of an
input is read."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from decimal import Decimal
from typing import Any, ParamSpec, TypeVar

import click

from elelem.transport import Timeouts
from elelem.turns.limits import UsageLimits
from elelem.vocabulary import CodeExecution, HostedTool, Skill, WebFetch, WebSearch, XSearch


class Finite(click.FloatRange):
    """A :class:`click.FloatRange` that also refuses ``nan`` and ``inf``:
    ``nan`` passes every range comparison, so a range alone lets it through."""

    what = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite {self.what}", param, ctx)
        return number


class Seconds(Finite):
    """A number of seconds, 0 or more, finite (0 already says "never"
    wherever a timeout or pause may be off), and nothing past
    :data:`threading.TIMEOUT_MAX` (some 292 years), which a thread's wait
    cannot take (``demo --pace 1e308`` killed the serving thread and ended
    the stream early)."""

    what = "number of seconds"

    def __init__(self) -> None:
        super().__init__(min=0, max=threading.TIMEOUT_MAX)


SECONDS = Seconds()


P = ParamSpec("P")


R = TypeVar("R")


def max_bytes_option(default: int, what: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``--max-bytes N``: the most of ``what`` (an input file) that is read."""
    return click.option(
        "--max-bytes",
        # Bounded so a read of that size can be asked for at all.
        type=click.IntRange(min=1, max=2**62),
        default=default,
        show_default=True,
        help=f"Refuse {what} larger than this.",
    )


def hosted_tools(
    web_search: bool,
    web_fetch: bool,
    code_execution: bool,
    x_search: bool = False,
    skills: tuple[Skill, ...] = (),
) -> tuple[HostedTool, ...]:
    """The neutral hosted tools the flags ask for (a skill asks for code execution)."""
    tools: list[HostedTool] = []
    if web_search:
        tools.append(WebSearch())
    if x_search:
        tools.append(XSearch())
    if web_fetch:
        tools.append(WebFetch())
    if code_execution or skills:
        tools.append(CodeExecution(skills=skills))
    return tuple(tools)


def model_options(fn: Callable[P, R]) -> Callable[P, R]:
    """The options of commands that talk to a model."""
    decorators = [
        click.option(
            "-m",
            "--model",
            metavar="MODEL",
            help="provider:model (anthropic:claude-sonnet-4-5), a provider (its default "
            "model), a known model id (`elelem models`) or an alias (`elelem aliases`); "
            "default: $ELELEM_MODEL, the config file's model, else the first provider "
            "whose key is set.",
        ),
        click.option("-s", "--system", metavar="TEXT", help="A system prompt for this turn."),
        click.option("--web-search", is_flag=True, help="Let the provider search the web."),
        click.option("--x-search", is_flag=True, help="Let xAI search posts on X (Responses)."),
        click.option("--web-fetch", is_flag=True, help="Let the provider fetch web pages."),
        click.option("--code-execution", is_flag=True, help="Let the provider run code."),
        click.option(
            "--skill",
            "skills",
            multiple=True,
            metavar="SKILL",
            help="Load an Agent Skill into the code-execution container (anthropic:pptx for "
            "Anthropic's own, else a Skills API id; @VERSION pins one); implies --code-execution.",
        ),
        click.option("--max-tokens", type=click.IntRange(min=1), help="Cap the answer's length."),
        click.option(
            "-o",
            "--option",
            "option_pairs",
            type=(str, str),
            multiple=True,
            metavar="KEY VALUE",
            help="A generation option: temperature, top-p, max-tokens, seed, stop (repeatable), "
            "tool-choice, reasoning-effort, reasoning-budget, or extra.NAME (a provider body "
            "field; VALUE as JSON).",
        ),
        click.option(
            "--effort",
            type=click.Choice(["minimal", "low", "medium", "high"]),  # options.EFFORTS
            help="How hard the model should reason (each provider's reasoning-effort field).",
        ),
        click.option(
            "--schema",
            metavar="SCHEMA",
            help="Answer as JSON of this schema: 'name, age int, bio: a short bio' "
            "(types str, int, float, bool) or a JSON Schema file; the answer is validated.",
        ),
        click.option(
            "--cache",
            is_flag=False,
            flag_value="on",
            default=None,
            type=click.Choice(["on", "5m", "1h", "24h"]),  # ask.CACHE_TTLS
            metavar="[5m|1h|24h]",
            help="Ask the provider to cache the prompt prefix (for at least this long, if "
            "given); what it cannot honour is left out and noted in the turn's record.",
        ),
        click.option(
            "--context-editing",
            metavar="clear-tool-uses[,clear-thinking]",
            help="Let the provider clear old tool results and/or earlier reasoning from the "
            "prompt it reads (Anthropic); the log keeps everything, and a provider without "
            "it notes the option as left out in the turn's record.",
        ),
        click.option(
            "--json",
            "as_json",
            is_flag=True,
            help="Write the stream as NDJSON events on stdout instead of rendering it.",
        ),
        click.option("--no-store", is_flag=True, help="Keep this conversation in memory only."),
        click.option(
            "--no-stream",
            is_flag=True,
            help="Ask for the whole answer at once (not streamed) and show it when it has "
            "arrived; it is stored as a streamed one is.",
        ),
        click.option(
            "--timeout",
            type=SECONDS,
            metavar="SECONDS",
            help=f"Give up on an answer after this long in all (default {Timeouts.total:g}; "
            "0: never).",
        ),
        click.option(
            "--idle-timeout",
            type=SECONDS,
            metavar="SECONDS",
            help=f"Give up when the provider sends nothing for this long (default "
            f"{Timeouts.idle:g}; 0: never).",
        ),
    ]
    for decorate in reversed(decorators):
        fn = decorate(fn)
    return display_options(fn)


def timeouts_of(params: Mapping[str, Any]) -> Timeouts:
    """The transport timeouts ``--timeout`` and ``--idle-timeout`` ask for."""
    timeouts = Timeouts()
    if params.get("timeout") is not None:
        timeouts = replace(timeouts, total=params["timeout"])
    if params.get("idle_timeout") is not None:
        timeouts = replace(timeouts, idle=params["idle_timeout"])
    return timeouts


COUNT_LIMITS: tuple[tuple[str, str, str], ...] = (
    ("requests", "--max-requests", "requests to the model"),
    ("input_tokens", "--max-input-tokens", "input tokens read (cache reads and writes included)"),
    ("output_tokens", "--max-output-tokens", "output tokens generated (reasoning included)"),
    ("total_tokens", "--max-total-tokens", "input and output tokens together"),
    ("tool_calls", "--max-tool-calls", "tool calls run"),
)
"""The count options of :func:`limit_options`: the :class:`UsageLimits`
field, the flag, and what it counts."""

LIMIT_MAX = 2**62
"""The largest count a limit option takes (a count past it is no bound)."""


def limit_options(fn: Callable[P, R]) -> Callable[P, R]:
    """``--max-requests``, ``--max-input-tokens``, ``--max-output-tokens``,
    ``--max-total-tokens``, ``--max-tool-calls`` and ``--max-cost``: the
    :class:`~elelem.turns.limits.UsageLimits` of each turn (``ask``'s one
    run, each turn of ``chat``, the run ``approve`` and ``resume``
    continue), the sampling served to its MCP servers counted in them; read
    by :func:`limits_of`."""
    for field, flag, what in reversed(COUNT_LIMITS):
        # No tool call at all is a bound worth giving (approve a call's
        # decision without running it); no request, or no token, is not.
        least = 0 if field == "tool_calls" else 1
        fn = click.option(
            flag,
            f"limit_{field}",
            type=click.IntRange(min=least, max=LIMIT_MAX),
            metavar="N",
            help=f"End the turn (exit 4) before it goes over N {what}, MCP sampling included.",
        )(fn)
    return click.option(
        "--max-cost",
        "limit_cost",
        type=Finite(min=0),
        metavar="USD",
        help="End the turn (exit 4) before its estimated cost goes over USD dollars "
        "(a model without a known price ends it at once).",
    )(fn)


def limits_of(params: Mapping[str, Any]) -> UsageLimits | None:
    """The usage limits the :func:`limit_options` ask for (None without any)."""
    counts = {field: params.get(f"limit_{field}") for field, _flag, _what in COUNT_LIMITS}
    given = {field: value for field, value in counts.items() if value is not None}
    cost = params.get("limit_cost")
    if cost is not None:
        given["cost"] = Decimal(str(cost))  # the dollars as typed, not a float's tail
    return UsageLimits(**given) if given else None


def display_options(fn: Callable[P, R]) -> Callable[P, R]:
    """``--reasoning`` and ``--citations``: how an answer is shown."""
    fn = click.option(
        "--citations",
        type=click.Choice(["short", "full"]),
        default="short",
        show_default=True,
        help="Footnotes only, or with the quoted excerpts.",
    )(fn)
    return click.option(
        "--reasoning",
        type=click.Choice(["hidden", "summary", "full"]),
        default="summary",
        show_default=True,
        help="How much of the model's reasoning to show.",
    )(fn)


def continue_option(fn: Callable[P, R]) -> Callable[P, R]:
    """``-c/--continue [ID]``: the latest conversation, or the one named."""
    return click.option(
        "-c",
        "--continue",
        "continue_",
        is_flag=False,
        flag_value="last",
        default=None,
        metavar="[ID]",
        help="Continue a conversation: the latest, or the one with this id (or id prefix).",
    )(fn)
