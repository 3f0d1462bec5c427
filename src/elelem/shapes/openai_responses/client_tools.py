"""Responses items of the provider tools the client executes: the
``computer`` tool's definition and the ``computer_call_output`` answering a
call (https://platform.openai.com/docs/guides/tools-computer-use).  The
shell and apply_patch outputs are :func:`._items.shell_output` and the
encoder's tool-result item."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from elelem.shapes.common import Dropped
from elelem.shapes.hosted_tools import (
    OPERATING_SYSTEMS,
    ComputerScreens,
    HostedSite,
    no_excluded_actions,
)
from elelem.vocabulary import ComputerUse, DocumentBlock, ImageBlock, Shell, ToolResultBlock
from elelem.vocabulary.drop import UNSUPPORTED
from elelem.vocabulary.json import JSONValue


def computer_tool(tool: ComputerUse) -> dict[str, JSONValue]:
    """The ``computer`` tool (generally available: no fields), or the
    ``computer_use_preview`` one with the display when pinned."""
    if tool.version != "computer_use_preview":
        return {"type": "computer"}
    return {
        "type": "computer_use_preview",
        "display_width": tool.display_width,
        "display_height": tool.display_height,
        "environment": tool.environment,
    }


PREVIEW_SCREENS = ComputerScreens(
    "OpenAI computer_use_preview",
    "a browser, mac, windows, linux or ubuntu",
    {"browser": "browser", **{name: name for name in sorted(OPERATING_SYSTEMS)}},
)
"""The environments ``computer_use_preview`` takes, each as itself; a
mobile device or an unnamed desktop has no value there: left out, reported."""

COMPUTER_SCREENS = ComputerScreens(
    "OpenAI computer use",
    "a browser or a desktop",
    {"browser": "browser", "desktop": "desktop", **dict.fromkeys(OPERATING_SYSTEMS, "desktop")},
)
"""The generally available ``computer`` tool has no fields: the computer use
guide runs it in a browser (Playwright) or a desktop VM, whichever its
screenshots show, so ``browser`` and ``desktop`` go as they are; a named
system goes as its desktop, the name reported adjusted (the preview's
``environment`` had room for it); a mobile device is neither, and is left
out, reported (:class:`ComputerScreens`)."""


def computer_row(tool: ComputerUse, site: HostedSite) -> None:
    """The ``computer_use`` row: the tool, and no excluded actions (Responses
    offers all); an environment the tool has no screen for is left out,
    one it cannot name reported adjusted (:data:`COMPUTER_SCREENS`,
    :data:`PREVIEW_SCREENS`)."""
    preview = tool.version == "computer_use_preview"
    screens = PREVIEW_SCREENS if preview else COMPUTER_SCREENS
    sent = dict.fromkeys(("browser", "desktop"), "computer")
    if screens.screen(tool, site, sent) is None:
        return
    no_excluded_actions(tool, site, "OpenAI")
    site.tools.append(computer_tool(tool))


def shell_tool(tool: Shell) -> dict[str, JSONValue]:
    """The ``shell`` tool the client runs (``local_shell`` when local), or
    the hosted shell in a ``container_auto`` container with its skills
    (https://platform.openai.com/docs/guides/tools-skills: ``{"type":
    "skill_reference", "skill_id": …, "version": …}``)."""
    if tool.local:
        return {"type": "local_shell"}
    if not tool.hosted:
        return {"type": "shell"}
    environment: dict[str, JSONValue] = {"type": "container_auto"}
    if tool.skills:
        skills: list[JSONValue] = []
        for skill in tool.skills:
            entry: dict[str, JSONValue] = {"type": "skill_reference", "skill_id": skill.skill_id}
            if skill.version is not None:
                entry["version"] = skill.version
            skills.append(entry)
        environment["skills"] = skills
    return {"type": "shell", "environment": environment}


def computer_output(
    block: ToolResultBlock,
    item: dict[str, Any],
    media: Callable[[ImageBlock | DocumentBlock, str], dict[str, Any] | None],
    checks: list[Any] | None,
    dropped: Dropped,
    where: str,
) -> dict[str, Any]:
    """A ``computer_call_output``: the result's first image as the
    screenshot, and the call's safety ``checks`` acknowledged when the tool
    ran (the approval callback allowed it with the checks in view), never
    for a refused or failed call."""
    shot: dict[str, Any] = {"type": "computer_screenshot"}
    for k, attachment in enumerate(block.attachments or ()):
        wire = media(attachment, f"{where}.attachments[{k}]")
        if wire is not None and wire.get("type") == "input_image":
            shot["image_url"] = wire.get("image_url")
            break
    item["output"] = shot
    if checks and not block.is_error:
        item["acknowledged_safety_checks"] = checks
    if block.content:
        detail = (
            f"the text of tool result {block.call_id}: computer_call_output takes a screenshot only"
        )
        dropped.add(f"{where}.content", "content", UNSUPPORTED, detail)
    return item


__all__ = ["computer_output", "computer_row", "computer_tool", "shell_tool"]
