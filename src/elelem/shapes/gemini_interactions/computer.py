"""Computer use on the Interactions API
(https://ai.google.dev/gemini-api/docs/interactions/computer-use).

The tool is the ``tools`` entry ``{"type": "computer_use", "environment":
"browser"}`` (or ``"mobile"``, ``"desktop"``; ``excluded_predefined_functions``
leaves actions out).  The model calls its predefined functions (``click``,
``type``, ``navigate``…, and the mobile and desktop environments' own) as
``function_call`` steps whose ``arguments`` may hold a ``safety_decision``
(``decision: "require_confirmation"``); the client performs the action and
answers, in the next interaction's input (after
``previous_interaction_id``), with a ``function_result`` whose ``result``
is a text content holding the JSON of the page's ``url`` (and
``safety_acknowledgement: true`` for an action it confirmed) and an image
content holding the screenshot.

What this wire shares with generateContent's (the predefined functions read
as the ``computer`` tool's calls, the fields of the answer) is
:mod:`elelem.shapes.gemini.computer`; only the spelling is here.
"""

from __future__ import annotations

from typing import Any

import msgspec

from elelem.shapes.gemini.computer import checked_environment, computer_answer
from elelem.shapes.hosted_tools import HostedSite
from elelem.vocabulary import ComputerUse, ToolResultBlock

ENVIRONMENTS = {"browser": "browser", "mobile": "mobile", "desktop": "desktop"}
"""The Interactions API's spelling of each of Gemini's environments
(:data:`elelem.shapes.gemini.computer.ENVIRONMENTS` maps the neutral ones
to them)."""


def computer_row(tool: ComputerUse, site: HostedSite) -> None:
    """The ``computer_use`` tool (see
    :func:`~elelem.shapes.gemini.computer.checked_environment`)."""
    environment = checked_environment(
        tool, site, "Gemini Interactions", "computer_use", ENVIRONMENTS
    )
    if environment is None:
        return
    spec: dict[str, Any] = {"type": "computer_use", "environment": environment}
    if tool.excluded_actions:
        spec["excluded_predefined_functions"] = list(tool.excluded_actions)
    site.tools.append(spec)


def computer_result(
    part: ToolResultBlock,
    action: str,
    confirmed: bool,
    screenshot: dict[str, Any] | None,
) -> dict[str, Any]:
    """The ``function_result`` content answering a computer call: the answer's
    JSON as a text content (``safety_acknowledgement: true``), then the
    ``screenshot`` (an image content) when there is one; a refused or
    failed action is an error."""
    answer = computer_answer(part, confirmed, True)
    result: list[dict[str, Any]] = [{"type": "text", "text": msgspec.json.encode(answer).decode()}]
    if screenshot is not None:
        result.append(screenshot)
    out: dict[str, Any] = {
        "type": "function_result",
        "call_id": part.call_id,
        "name": action,
        "result": result,
    }
    if part.is_error:
        out["is_error"] = True
    return out


__all__ = ["ENVIRONMENTS", "computer_result", "computer_row"]
