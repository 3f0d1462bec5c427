"""``elelem approve ID`` and ``elelem resume ID``: continue a run that stopped
for approvals (``ask --defer``) or for external tools' results.

Both read what the run waits for from the log (any earlier process may have
stopped it), take the answers from the command line (``--yes CALL``, ``--no
CALL``, ``--all``, ``--result CALL=TEXT``), and ``approve`` asks y/n on the
terminal for each call left; then the run goes on as ``elelem.resume`` runs
it: the decision stored first, the approved calls run with the tools given
(``--functions``, ``--tool``, ``--mcp``), the answer streamed.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from elelem.cli.ask import awaiting_line, open_session
from elelem.cli.exits import EXIT_USAGE, Failure, debug_option, guarded
from elelem.cli.flags import limit_options, limits_of, model_options
from elelem.cli.history import resolve_conversation
from elelem.cli.store import store_from_env
from elelem.cli.tools import Toolset, call_line, tool_options
from elelem.conversation import Conversation
from elelem.render import sanitize_line
from elelem.turns.deferred import lacking_tools
from elelem.turns.pending import Pending, pending
from elelem.turns.toolloop import ToolLoop


def _decide(
    waiting: Pending, yes: set[str], no: set[str], every: bool, ask: bool
) -> dict[str, bool]:
    """Each waiting call's approval, from the flags, else asked on the terminal."""
    named = {c.id for c in waiting.approval} | {a.id for a in waiting.approvals}
    both = sorted(yes & no)
    if both:
        # Neither wins: a slip of the hand must not run a refused call.
        raise Failure(f"call {both[0]!r} is given both --yes and --no", EXIT_USAGE)
    unknown = sorted((yes | no) - named)
    if unknown:
        raise Failure(f"no call {unknown[0]!r} awaits approval here", EXIT_USAGE)
    approvals: dict[str, bool] = {}
    questions: list[tuple[str, str]] = [
        (c.id, call_line(c).replace("called ", "run ", 1)) for c in waiting.approval
    ]
    questions += [
        (a.id, f"let the provider run {sanitize_line(a.name)}") for a in waiting.approvals
    ]
    for ident, question in questions:
        if ident in yes or ident in no:
            approvals[ident] = ident in yes
        elif every:
            approvals[ident] = True
        elif ask and sys.stdin.isatty():
            approvals[ident] = click.confirm(f"{question}?", default=False, err=True)
        else:
            raise Failure(
                f"call {sanitize_line(ident)} awaits approval: give --yes {sanitize_line(ident)} "
                "or --no it (or --all)",
                EXIT_USAGE,
            )
    return approvals


def _results(waiting: Pending, given: tuple[str, ...]) -> dict[str, str]:
    results: dict[str, str] = {}
    for item in given:
        ident, sep, text = item.partition("=")
        if not sep:
            raise Failure(f"--result {item!r}: write CALL=TEXT", EXIT_USAGE)
        if ident in results:
            raise Failure(f"--result {ident!r} is given twice", EXIT_USAGE)
        results[ident] = text
    wanted = {c.id for c in waiting.results}
    extra = sorted(set(results) - wanted)
    if extra:
        raise Failure(f"no call {extra[0]!r} awaits a result here", EXIT_USAGE)
    missing = [c for c in waiting.results if c.id not in results]
    if missing:
        shown = ", ".join(f"{sanitize_line(c.id)} ({sanitize_line(c.name)})" for c in missing)
        raise Failure(f"calls await results: {shown}: give --result CALL=TEXT", EXIT_USAGE)
    return results


def _go_on(ref: str, params: dict[str, Any], ask: bool) -> None:
    store = store_from_env()
    conv = Conversation.open(store, resolve_conversation(store, ref))
    waiting = pending(conv)
    if waiting is None:
        raise Failure(f"conversation {sanitize_line(conv.id)} awaits nothing", EXIT_USAGE)
    approvals = _decide(waiting, set(params.pop("yes")), set(params.pop("no")),
                        params.pop("all_calls"), ask)  # fmt: skip
    results = _results(waiting, params.pop("results"))
    where = (params.pop("temporal"), params.pop("dbos"))
    if any(where):
        if limits_of(params) is not None:
            # The durable run goes on in its workers, under the limits it
            # was started with: a bound given here would bind nothing.
            raise Failure("the usage-limit options apply to a run continued here, "
                          "not to one sent to --temporal or --dbos", EXIT_USAGE)  # fmt: skip
        _deliver(where, str(conv.id), approvals, results)
        return
    session = open_session(store, conv.id, params)
    toolset = session.toolset or Toolset()
    with toolset:
        names = set(ToolLoop(toolset.all_tools()).tools)
        lacking = lacking_tools(waiting, approvals, names)
        lacking += sorted({c.name for c in waiting.ready} - names - set(lacking))
        if lacking:
            raise Failure(
                f"the approved call of {sanitize_line(lacking[0])} needs its tool: give "
                "--functions, --tool or --mcp",
                EXIT_USAGE,
            )
        result = session.answer(None, resume=(approvals, results))
    if session.renderer is not None:
        click.echo(f"conversation {sanitize_line(session.conversation.id)}", err=True)
    awaiting_line(session, result)


def _deliver(
    where: tuple[str | None, str | None],
    conv_id: str,
    approvals: dict[str, bool],
    results: dict[str, str],
) -> None:
    """Send the decisions to the conversation's durable run, on Temporal or
    on DBOS (its workers run the approved calls; the log shows the rest)."""
    import asyncio

    from elelem.cli.worker import dbos_delivery, temporal_delivery

    temporal, dbos = where
    if temporal and dbos:
        raise Failure("give --temporal or --dbos, not both", EXIT_USAGE)
    deliver = temporal_delivery(temporal) if temporal else dbos_delivery(str(dbos))
    asyncio.run(deliver(conv_id, approvals, results))
    click.echo(f"decisions sent to the durable run of {sanitize_line(conv_id)}", err=True)


def _decision_options(fn: Any) -> Any:
    for decorate in reversed(
        [
            click.option(
                "--yes",
                "yes",
                multiple=True,
                metavar="CALL",
                help="Approve this call (repeatable).",
            ),
            click.option(
                "--no", "no", multiple=True, metavar="CALL", help="Refuse this call (repeatable)."
            ),
            click.option(
                "--all", "all_calls", is_flag=True, help="Approve every call not named by --no."
            ),
            click.option(
                "--result",
                "results",
                multiple=True,
                metavar="CALL=TEXT",
                help="The result of an external tool's call (repeatable).",
            ),
            click.option(
                "--temporal",
                metavar="HOST:PORT",
                default=None,
                help="The run is durable on this Temporal server: send it the decisions.",
            ),
            click.option(
                "--dbos",
                metavar="URL",
                default=None,
                help="The run is durable on DBOS with this system database: send it the decisions.",
            ),
        ]
    ):
        fn = decorate(fn)
    return fn


def _command(name: str, ask: bool, doc: str) -> click.Command:
    """One of the two commands: the same options, asking on the terminal or not."""

    def command(ref: str, **params: Any) -> None:
        _go_on(ref, params, ask=ask)

    command.__doc__ = doc
    for decorate in (
        guarded,
        debug_option,
        limit_options,
        tool_options,
        model_options,
        _decision_options,
    ):
        command = decorate(command)
    return click.command(name)(click.argument("ref", metavar="ID")(command))


approve_command = _command(
    "approve",
    True,
    """Approve or refuse the calls conversation ID stopped for (asking y/n on
    the terminal for each one no flag names), then go on.""",
)
resume_command = _command(
    "resume",
    False,
    """Go on with conversation ID, which stopped for approvals or external
    results: every answer from the flags, nothing asked.""",
)


__all__ = ["approve_command", "resume_command"]
