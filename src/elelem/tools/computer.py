"""The client side of computer use (Anthropic ``computer_2025…``, OpenAI
Responses ``computer``, Gemini ``computerUse``, Gemini Interactions
``computer_use``): the model asks for an action on a screen, the client
performs it and answers with a screenshot.

:class:`ComputerTool` wraps the application's :class:`Computer` (which
knows the screen: a browser, a VM) for the tool loop.  Each action needs
approval: the approval callback sees the action and any safety checks the
provider attached (OpenAI's ``pending_safety_checks``, Gemini's
``safety_decision``, in the call's arguments); a run with no callback refuses the action, and with
``approve="defer"`` the run stops before the next request until the
application decides (:func:`elelem.resume`).  A call that ran answers with
its screenshot as an image block; the OpenAI and Gemini encoders then
acknowledge the call's safety checks, never before.

Wire forms: https://docs.claude.com/en/docs/agents-and-tools/tool-use/computer-use-tool
, https://platform.openai.com/docs/guides/tools-computer-use
, https://ai.google.dev/gemini-api/docs/computer-use
and https://ai.google.dev/gemini-api/docs/interactions/computer-use
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import Any, Protocol

from elelem.errors import ClientToolError
from elelem.tools.base import HostedToolRunner, ToolOutcome, arguments_object
from elelem.vocabulary import ComputerUse, ImageBlock, ProviderPayload
from elelem.vocabulary.payload import CURRENT_URL, NEUTRAL


class Computer(Protocol):
    """A screen the application controls.

    ``act`` performs one call's action (the wire's arguments as given:
    Anthropic's ``{"action": "left_click", "coordinate": [x, y]}``, OpenAI's
    ``{"action": {"type": "click", "x": …, "y": …}}`` or ``{"actions":
    [...]}``, Gemini's ``{"action": "click_at", "x": …, "y": …}`` on its
    0-999 grid; a ``screenshot`` action does nothing) and returns a PNG
    screenshot of the screen after it.  May be async.  A computer that
    also has ``current_url()`` (a browser) tells the page's address, which
    Gemini wants back with each screenshot.
    """

    def act(self, arguments: dict[str, Any]) -> bytes | Awaitable[bytes]: ...


class ComputerTool(HostedToolRunner):
    """Runs computer-use calls on ``computer``; ``hosted`` asks for the
    provider's tool with ``computer``'s display (``display``); ``timeout``
    bounds one action and its screenshot, in seconds."""

    name = "computer"
    described = "computer-use"

    def __init__(
        self,
        computer: Computer,
        *,
        display: ComputerUse | None = None,
        timeout: float | None = 60.0,
    ) -> None:
        self.computer = computer
        self.hosted = display if display is not None else ComputerUse()
        self._timeout = timeout

    async def call(self, arguments: str) -> ToolOutcome:
        """Perform the action and answer with the screenshot."""
        args = arguments_object(arguments, "computer")
        shot = self.computer.act(args)
        if inspect.isawaitable(shot):
            shot = await shot
        if not isinstance(shot, bytes) or not shot:
            raise ClientToolError("computer: act() returned no screenshot bytes")
        image = ImageBlock.from_bytes(shot, "image/png", filename="screenshot.png")
        return ToolOutcome("", payloads=await self._url(), attachments=(image,))

    async def _url(self) -> tuple[ProviderPayload, ...]:
        """The page's URL as a payload, when the computer tells it."""
        current_url = getattr(self.computer, "current_url", None)
        if not callable(current_url):
            return ()
        url = current_url()
        if inspect.isawaitable(url):
            url = await url
        if not isinstance(url, str):
            raise ClientToolError("computer: current_url() returned no text")
        return (ProviderPayload(provider=NEUTRAL, format=CURRENT_URL, value=url),)


__all__ = ["Computer", "ComputerTool"]
