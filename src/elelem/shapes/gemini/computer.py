"""Gemini computer use (https://ai.google.dev/gemini-api/docs/computer-use),
what its two wires share: generateContent's spelling here, the Interactions
API's in :mod:`elelem.shapes.gemini_interactions.computer`, both reading
the same predefined functions as the ``computer`` tool's calls and answering
with the same fields.

The ``computerUse`` tool (``{"computerUse": {"environment":
"ENVIRONMENT_BROWSER"}}``) gives the model a fixed set of predefined
functions (``click_at``, ``type_text_at``, ``navigate``…); it calls them as
ordinary ``functionCall`` parts, possibly with a ``safety_decision``
argument whose ``decision`` is ``require_confirmation``.  The client
performs the action and answers with a ``functionResponse`` whose
``response`` holds the page's ``url`` (and ``safety_acknowledgement:
"true"`` when the action it confirmed carried a safety decision) and whose
``parts`` hold the screenshot as ``inlineData``.

elelem reads such a call as a tool call named ``computer`` (as Anthropic's
and OpenAI's computer calls are), its arguments ``{"action": "click_at",
…the call's args}``, so :class:`elelem.tools.ComputerTool` and its approval
run it on every wire; the wire name is kept in a ``computer_action`` payload
so native replay sends the call back as it came.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import msgspec

from elelem.shapes.common import find_payload
from elelem.shapes.hosted_tools import HostedSite
from elelem.vocabulary import ComputerUse, Message, ToolCallBlock, ToolResultBlock
from elelem.vocabulary.payload import CURRENT_URL, NEUTRAL

PREDEFINED_ACTIONS = frozenset(
    {
        # Gemini 3.x's browser actions ("Supported environments": browser).
        "click",
        "double_click",
        "triple_click",
        "middle_click",
        "right_click",
        "mouse_down",
        "mouse_up",
        "move",
        "type",
        "wait",
        "press_key",
        "key_down",
        "key_up",
        "hotkey",
        "take_screenshot",
        "scroll",
        # Gemini 2.5's ("Supported UI actions (Gemini 2.5)").
        "open_web_browser",
        "wait_5_seconds",
        "go_back",
        "go_forward",
        "search",
        "navigate",
        "click_at",
        "hover_at",
        "type_text_at",
        "key_combination",
        "scroll_document",
        "scroll_at",
        "drag_and_drop",
    }
)
"""The predefined browser functions the documentation lists, for Gemini
3.x and for 2.5 (``navigate``, ``go_back``, ``go_forward`` and
``drag_and_drop`` are in both)."""

ACTION_FORMAT = "computer_action"
"""The payload format holding a computer call's wire function name."""

ENVIRONMENTS = {"browser": "ENVIRONMENT_BROWSER"}
"""The neutral environments Gemini's ``computerUse`` operates, and its spelling."""


def checked_environment(
    tool: ComputerUse, site: HostedSite, wire: str, entry: str, environments: Mapping[str, str]
) -> str | None:
    """The wire's spelling of ``tool``'s environment, or None with the tool
    reported dropped (a non-browser screen: elelem asks Gemini for a browser
    only); display options the ``entry`` has no room for reported (its
    coordinates are on a 0-999 grid whatever the screen)."""
    environment = environments.get(tool.environment)
    if environment is None:
        site.drop(
            "computer_use", f"{wire} computer use operates a browser, not {tool.environment!r}"
        )
        return None
    for option in ("display_number", "version"):
        if getattr(tool, option) is not None:
            site.drop("computer_use", f"{entry} has no such option", field=option)
    return environment


def computer_row(tool: ComputerUse, site: HostedSite) -> None:
    """The ``computerUse`` tool (see :func:`checked_environment`)."""
    environment = checked_environment(tool, site, "Gemini", "computerUse", ENVIRONMENTS)
    if environment is None:
        return
    spec: dict[str, Any] = {"environment": environment}
    if tool.excluded_actions:
        spec["excludedPredefinedFunctions"] = list(tool.excluded_actions)
    site.tools.append({"computerUse": spec})


def computer_actions(request: object) -> frozenset[str]:
    """The predefined function names a response to ``request`` reads as
    computer calls: none unless the request asked for computer use, and
    never a name the request declares as its own function."""
    hosted = getattr(request, "hosted_tools", ()) or ()
    if not any(isinstance(tool, ComputerUse) for tool in hosted):
        return frozenset()
    declared = {getattr(t, "name", None) for t in getattr(request, "tools", ()) or ()}
    for tool in hosted:
        if isinstance(tool, ComputerUse):
            declared.update(tool.excluded_actions)
    return PREDEFINED_ACTIONS - declared


def call_arguments(action: str, args: dict[str, Any]) -> dict[str, Any]:
    """The neutral arguments of a computer call: the action, then its args."""
    return {"action": action, **{k: v for k, v in args.items() if k != "action"}}


def wire_call(block: ToolCallBlock, provider: str) -> tuple[str, bool] | None:
    """(The predefined function name, whether the call had ``args``) of a
    computer call read from ``provider``, or None for any other call."""
    payload = find_payload(block.payloads, provider, ACTION_FORMAT)
    value = payload.value if payload is not None else None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    return value["name"], value.get("args") is True


def wire_args(args: Any) -> Any:
    """A computer call's args as the wire had them (without the neutral ``action``)."""
    return {k: v for k, v in args.items() if k != "action"} if isinstance(args, dict) else args


def computer_calls(messages: Iterable[Message], provider: str) -> dict[str, tuple[str, bool]]:
    """Every computer call's id -> (its predefined function name, whether it
    carried a ``safety_decision`` the application must acknowledge)."""
    found: dict[str, tuple[str, bool]] = {}
    for message in messages:
        if message.provider != provider:
            continue
        for part in message.content:
            if isinstance(part, ToolCallBlock):
                call = wire_call(part, provider)
                if call is not None:
                    found[part.id] = (call[0], _has_safety_decision(part.arguments))
    return found


def _has_safety_decision(arguments: str) -> bool:
    try:
        args = msgspec.json.decode(arguments or "{}")
    except msgspec.DecodeError:
        return False
    return isinstance(args, dict) and isinstance(args.get("safety_decision"), dict)


def computer_answer(part: ToolResultBlock, confirmed: bool, acknowledged: object) -> dict[str, Any]:
    """What a computer call's answer tells the model: the page's URL, the
    acknowledgement of a safety decision (``acknowledged``, as the wire
    spells it) for an action that ran (the approval callback saw the
    decision), never for a refused or failed one (its ``error`` instead)."""
    answer: dict[str, Any] = {}
    if part.is_error:
        answer["error"] = part.content
        return answer
    url = find_payload(part.payloads, NEUTRAL, CURRENT_URL)
    if url is not None and isinstance(url.value, str):
        answer["url"] = url.value
    if part.content:
        answer["content"] = part.content
    if confirmed:
        answer["safety_acknowledgement"] = acknowledged
    return answer


def computer_response(
    part: ToolResultBlock,
    action: str,
    confirmed: bool,
    screenshot: Callable[[], dict[str, Any] | None],
) -> dict[str, Any]:
    """The ``response`` and ``parts`` of a computer call's ``functionResponse``:
    :func:`computer_answer` (``safety_acknowledgement: "true"``) and the
    screenshot as the one part."""
    response = computer_answer(part, confirmed, "true")
    out: dict[str, Any] = {"name": action, "response": response}
    shot = screenshot()
    if shot is not None:
        out["parts"] = [shot]
    return out


__all__ = [
    "ACTION_FORMAT",
    "ENVIRONMENTS",
    "PREDEFINED_ACTIONS",
    "call_arguments",
    "checked_environment",
    "computer_actions",
    "computer_answer",
    "computer_calls",
    "computer_response",
    "computer_row",
    "wire_args",
    "wire_call",
]
