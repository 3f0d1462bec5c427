"""A stopped run's pending calls in ``elelem serve``: shown with Approve and
Deny buttons (and a box for an external tool's result), answered through
``POST /api/resume``.

The conversation page of a run that ended ``awaiting-approval`` or
``awaiting-results`` (:func:`elelem.turns.pending.pending`) shows every
call it waits for: the tool's name and every argument, sanitized, wrapped
and never cut (what is approved is what is shown).  The page's script posts
the answers as a :class:`ResumeRequest`; they are checked as
:func:`elelem.resume` checks them — every call answered, no unknown id, an
approved call's tool among those ``serve`` was given (``--functions``) —
before anything is stored, and the resumed run streams back as a chat turn
does (:func:`~elelem.web.asgi.relay`).  Later calls of the resumed run wait
for the page again (``approve="defer"``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Collection, Sequence
from typing import Annotated, Any

import msgspec

from elelem.conversation import Conversation
from elelem.render.lines import call_arguments
from elelem.turns.deferred import resume
from elelem.turns.limits import UsageLimits
from elelem.turns.pending import Pending
from elelem.vocabulary import HostedActivity, ToolCallBlock
from elelem.web.asgi import AwaitingApproval, Observer, Pair, relay, with_approvals
from elelem.web.chat import RunScope, no_scope
from elelem.web.html import attribute, line, text

MAX_RESUME_CALLS = 1000
"""The most calls one resume request may answer (approvals, results each)."""

MAX_RESUME_BODY = 4 << 20
"""A resume request's largest body: a page's answers to one stopped step
(far fewer than a million call ids: refused by its length, before work)."""

_Calls = msgspec.Meta(max_length=MAX_RESUME_CALLS)


class ResumeRequest(msgspec.Struct, forbid_unknown_fields=True):
    """What the page posts to go on with a stopped run: the conversation,
    each waiting call's approval (by call id), each external call's result,
    and the model to go on with (by default the stopped turn's); at most
    :data:`MAX_RESUME_CALLS` of each."""

    conversation: str
    approvals: Annotated[dict[str, bool], _Calls] = {}
    results: Annotated[dict[str, str], _Calls] = {}
    model: str | None = None


def _arguments(arguments: str) -> str:
    """Every argument, one per row: the name, then the JSON value in a
    ``<pre>`` the stylesheet wraps (never cut)."""
    pairs = call_arguments(arguments)
    if pairs is None:
        pairs = [("arguments", arguments)]
    if not pairs:
        return '<p class="arguments">no arguments</p>'
    rows = "".join(
        f"<dt>{line(name)}</dt><dd><pre>{text(value)}</pre></dd>" for name, value in pairs
    )
    return f'<dl class="arguments">{rows}</dl>'


def _choice(call_id: str, label: str) -> str:
    """Approve and Deny for one call (``label``: untrusted, one line)."""
    ident = attribute(call_id)
    return (
        f'<div class="choice" role="group" aria-label="{line(label)}">'
        f'<button type="button" class="approve" data-call="{ident}" aria-pressed="false">'
        "Approve</button>"
        f'<button type="button" class="deny" data-call="{ident}" aria-pressed="false">'
        "Deny</button></div>"
    )


def _approval(call: ToolCallBlock, tools: Collection[str]) -> str:
    name = line(call.name)
    missing = ""
    if call.name not in tools:
        missing = (
            f'<p class="warn">elelem serve was given no tool {name}: approving this call is '
            "refused (start it with --functions)</p>"
        )
    choice = _choice(call.id, "run " + call.name)
    return (
        f'<fieldset class="call"><legend>run <code>{name}</code></legend>'
        f"{_arguments(call.arguments)}{missing}{choice}</fieldset>"
    )


def _hosted(activity: HostedActivity) -> str:
    given = activity.input if isinstance(activity.input, dict) else {}
    name = str(given.get("name") or activity.name)
    server = str(given.get("server_label") or "")
    where = f" on {line(server)}" if server else ""
    arguments = _arguments(str(given.get("arguments") or ""))
    choice = _choice(activity.id, "let the provider run " + name)
    return (
        f'<fieldset class="call"><legend>let the provider run <code>{line(name)}</code>'
        f"{where}</legend>{arguments}{choice}</fieldset>"
    )


def _result(call: ToolCallBlock, number: int) -> str:
    box = f"pending-result-{number}"
    return (
        f'<fieldset class="call"><legend>result of <code>{line(call.name)}</code></legend>'
        f"{_arguments(call.arguments)}"
        f'<label for="{box}">Result</label>'
        f'<textarea id="{box}" class="result" rows="2" '
        f'data-call="{attribute(call.id)}"></textarea></fieldset>'
    )


def pending_form(waiting: Pending, tools: Collection[str]) -> str:
    """The section listing what ``waiting`` waits for, under the last turn:
    Approve and Deny for each call awaiting approval (a call of a tool not in
    ``tools`` is marked), a result box for each external call, the calls that
    will run without asking, and Continue.  With a single call to approve
    and nothing else, Approve or Deny goes on at once."""
    wanted = ["approval"] if waiting.approval or waiting.approvals else []
    wanted += ["results"] if waiting.results else []
    heading = "Waiting for " + " and ".join(wanted)
    parts = [_approval(c, tools) for c in waiting.approval]
    parts += [_hosted(a) for a in waiting.approvals]
    parts += [_result(c, i) for i, c in enumerate(waiting.results, 1)]
    ready = "".join(
        f"<li><code>{line(c.name)}</code>{_arguments(c.arguments)}</li>" for c in waiting.ready
    )
    if ready:
        parts.append(f'<div class="ready"><p>runs without asking:</p><ul>{ready}</ul></div>')
    direct = len(waiting.approval) + len(waiting.approvals) == 1 and not waiting.results
    submit = "" if direct else '<button type="submit" class="primary">Continue</button>'
    return (
        '<section id="pending" class="pending" aria-labelledby="pending-title">'
        f'<h2 id="pending-title">{heading}</h2>'
        f'<form id="pending-form" data-direct="{"yes" if direct else "no"}">'
        f"{''.join(parts)}{submit}</form></section>"
    )


def resume_pairs(
    conversation: Conversation,
    make_client: Callable[[], Any],
    model: Any,
    request: ResumeRequest,
    tools: Sequence[Any],
    scope: RunScope = no_scope,
    limits: UsageLimits | None = None,
) -> AsyncIterator[Pair | AwaitingApproval]:
    """The pairs of the resumed run as it is stored (the results of the
    calls it ran, then the answer); its next calls wait for the page (a
    ``tool-approval-request`` each).  ``model`` (an address or an
    in-process model) defaults to the stopped turn's address.  The run runs
    inside ``scope`` (:data:`~elelem.web.chat.RunScope`), bounded by
    ``limits``."""

    async def run(on_chunk: Observer, on_call: Any) -> None:
        async with make_client() as client, scope(conversation, client):
            await resume(
                conversation,
                client,
                model,
                approvals=request.approvals,
                results=request.results,
                tools=tools,
                approve="defer",
                on_chunk=on_chunk,
                on_call=on_call,
                limits=limits,
            )

    return with_approvals(conversation, relay(run))


async def releasing(
    held: set[str], key: str, pairs: AsyncIterator[Pair | AwaitingApproval]
) -> AsyncIterator[Pair | AwaitingApproval]:
    """``pairs``, then ``key`` taken out of ``held`` (the conversations a
    resume is running on) however the stream ends."""
    try:
        async for pair in pairs:
            yield pair
    finally:
        held.discard(key)


__all__ = ["ResumeRequest", "pending_form", "releasing", "resume_pairs"]
