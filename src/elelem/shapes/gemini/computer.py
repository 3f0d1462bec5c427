"""Gemini computer use (https://ai.google.dev/gemini-api/docs/computer-use),
what its two wires share: generateContent's spelling here, the Interactions
API's in :mod:`elelem.shapes.gemini_interactions.computer`, both reading
the same predefined functions as the ``computer`` tool's calls and answering
with the same fields.

The ``computerUse`` tool (``{"computerUse": {"environment":
"ENVIRONMENT_BROWSER"}}``, or ``ENVIRONMENT_MOBILE`` / ``ENVIRONMENT_DESKTOP``:
google-genai's ``Environment``) gives the model a fixed set of predefined
functions for its screen: a browser's (``click_at``, ``type_text_at``,
``navigate``… for Gemini 2.5; ``click``, ``type``, ``scroll``… for 3.x), and
the mobile and desktop environments' own (a long press, opening an app…).
It calls them as ordinary ``functionCall`` parts, possibly with a
``safety_decision`` argument whose ``decision`` is ``require_confirmation``.
The client performs the action and answers with a ``functionResponse``
whose ``response`` holds the page's ``url`` when it has one (and
``safety_acknowledgement: "true"`` when the action it confirmed carried a
safety decision) and whose ``parts`` hold the screenshot as ``inlineData``.

elelem reads such a call as a tool call named ``computer`` (as Anthropic's
and OpenAI's computer calls are), its arguments ``{"action": "click_at",
…the call's args}``, so :class:`elelem.tools.ComputerTool` and its approval
run it on every wire; the wire name is kept in a ``computer_action`` payload
so native replay sends the call back as it came.  Which names are
predefined differs per environment and model, so elelem keeps no list of
them: a request that asks for computer use offers the model its own
functions and the predefined ones only, so every call of a function the
request does not declare (nor exclude) is the computer's
(:class:`ComputerActions`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from elelem.shapes.common import find_payload
from elelem.shapes.hosted_tools import ComputerScreens, HostedSite
from elelem.vocabulary import ComputerUse, Message, ToolCallBlock, ToolResultBlock
from elelem.vocabulary.payload import CURRENT_URL, NEUTRAL

ACTION_FORMAT = "computer_action"
"""The payload format holding a computer call's wire function name."""

ENVIRONMENTS: Mapping[str, str] = {
    "browser": "browser",
    "mobile": "mobile",
    "desktop": "desktop",
    # A desktop of a named operating system (OpenAI's environments): Gemini's
    # desktop environment names none, so the name is reported, not sent.
    "mac": "desktop",
    "windows": "desktop",
    "linux": "desktop",
    "ubuntu": "desktop",
}
"""Each neutral environment -> the screen Gemini operates for it (its
``browser``, ``mobile`` or ``desktop`` environment)."""

WIRE_ENVIRONMENTS: Mapping[str, str] = {
    "browser": "ENVIRONMENT_BROWSER",
    "mobile": "ENVIRONMENT_MOBILE",
    "desktop": "ENVIRONMENT_DESKTOP",
}
"""generateContent's spelling of each of Gemini's environments."""


def checked_environment(
    tool: ComputerUse, site: HostedSite, wire: str, entry: str, spelling: Mapping[str, str]
) -> str | None:
    """The wire's spelling (``spelling``: Gemini's environment -> the
    ``entry``'s value) of ``tool``'s environment, or None with the tool
    reported dropped (an environment Gemini has none for); a desktop of a
    named operating system goes as Gemini's desktop, the name reported
    adjusted (:class:`~elelem.shapes.hosted_tools.ComputerScreens`, the
    policy every wire's computer use follows); display options the
    ``entry`` has no room for reported (its coordinates are on a 0-999 grid
    whatever the screen)."""
    screens = ComputerScreens(
        f"{wire} computer use", "a browser, a mobile device or a desktop", ENVIRONMENTS
    )
    screen = screens.screen(tool, site, spelling)
    if screen is None:
        return None
    for option in ("display_number", "version"):
        if getattr(tool, option) is not None:
            site.drop("computer_use", f"{entry} has no such option", field=option)
    return spelling[screen]


def computer_row(tool: ComputerUse, site: HostedSite) -> None:
    """The ``computerUse`` tool (see :func:`checked_environment`)."""
    environment = checked_environment(tool, site, "Gemini", "computerUse", WIRE_ENVIRONMENTS)
    if environment is None:
        return
    spec: dict[str, Any] = {"environment": environment}
    if tool.excluded_actions:
        spec["excludedPredefinedFunctions"] = list(tool.excluded_actions)
    site.tools.append({"computerUse": spec})


@dataclass(frozen=True)
class ComputerActions:
    """The function names a response reads as computer calls: with
    ``asked`` (computer use was sent), every name but the ``others`` (the
    request's own functions and the excluded actions); without, none."""

    asked: bool = False
    others: frozenset[str] = frozenset()

    def __contains__(self, name: object) -> bool:
        return self.asked and isinstance(name, str) and name not in self.others


def computer_actions(request: object) -> ComputerActions:
    """The predefined function names a response to ``request`` reads as
    computer calls: none unless the request sent computer use (an
    environment Gemini has), and never a name the request declares as its
    own function (in ``tools``, or in ``options.extra``'s ``tools``) or
    excludes from the predefined ones."""
    hosted = getattr(request, "hosted_tools", ()) or ()
    sent = [t for t in hosted if isinstance(t, ComputerUse) and t.environment in ENVIRONMENTS]
    if not sent:
        return ComputerActions()
    others = {getattr(t, "name", None) for t in getattr(request, "tools", ()) or ()}
    options = getattr(request, "options", None)
    others.update(_declared_in_extra(getattr(options, "extra", None)))
    for tool in sent:
        others.update(tool.excluded_actions)
    return ComputerActions(True, frozenset(n for n in others if isinstance(n, str)))


def _declared_in_extra(extra: object) -> Iterable[object]:
    """The function names a caller's raw ``tools`` (merged over the body)
    declare: generateContent's ``functionDeclarations`` and the Interactions
    API's ``{"type": "function", "name": …}``."""
    tools = extra.get("tools") if isinstance(extra, dict) else None
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "function":
            yield tool.get("name")
        declarations = tool.get("functionDeclarations", tool.get("function_declarations"))
        for declaration in declarations if isinstance(declarations, list) else ():
            if isinstance(declaration, dict):
                yield declaration.get("name")


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
    "WIRE_ENVIRONMENTS",
    "ComputerActions",
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
