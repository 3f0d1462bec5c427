"""elelem: stream LLM provider responses into one provider-neutral model,
losing nothing the provider returned.

The layers, bottom up: :mod:`elelem.vocabulary` (pure data),
:mod:`elelem.codec` (canonical JSON), :mod:`elelem.stream` (chunk protocol and
the one assembler), :mod:`elelem.shapes` (sans-IO wire shapes),
:mod:`elelem.transport` (the one driver), :mod:`elelem.providers`,
:mod:`elelem.conversation`, :mod:`elelem.render` and :mod:`elelem.cli`.
"""

from typing import TYPE_CHECKING

from elelem.vocabulary import (
    register_block_type,
    register_finish_reason,
    register_message_source,
    register_turn_end_reason,
    register_turn_trigger,
)

if TYPE_CHECKING:
    from elelem.client import Client, SyncClient
    from elelem.conversation import Conversation, open_store
    from elelem.providers.fallback import Fallback
    from elelem.providers.middleware import wrap
    from elelem.tools import FunctionTool, tool
    from elelem.turns.deferred import resume, resume_sync
    from elelem.turns.drive import send, send_sync
    from elelem.turns.limits import UsageLimitExceeded, UsageLimits
    from elelem.turns.live_session import live, live_sync
    from elelem.turns.toolloop import run, run_sync

__version__ = "0.1.0"


def __dir__() -> list[str]:
    # The lazily loaded names are listed too (dir() would miss them).
    return sorted({*globals(), *__all__})


def __getattr__(name: str) -> object:
    # Client and SyncClient load lazily: ``import elelem`` stays free of httpx2.
    if name in ("Client", "SyncClient"):
        from elelem import client

        return getattr(client, name)
    if name in ("Conversation", "open_store"):
        from elelem import conversation

        return getattr(conversation, name)
    if name in ("send", "send_sync"):
        from elelem.turns import drive

        return getattr(drive, name)
    if name in ("run", "run_sync"):
        from elelem.turns import toolloop

        return getattr(toolloop, name)
    if name in ("live", "live_sync"):
        from elelem.turns import live_session

        return getattr(live_session, name)
    if name in ("resume", "resume_sync"):
        from elelem.turns import deferred

        return getattr(deferred, name)
    if name == "wrap":
        from elelem.providers.middleware import wrap

        return wrap
    if name == "Fallback":
        from elelem.providers.fallback import Fallback

        return Fallback
    if name in ("UsageLimits", "UsageLimitExceeded"):
        from elelem.turns import limits

        return getattr(limits, name)
    if name in ("FunctionTool", "tool"):
        from elelem import tools

        return getattr(tools, name)
    raise AttributeError(f"module 'elelem' has no attribute {name!r}")


__all__ = [
    "Client",
    "Conversation",
    "Fallback",
    "FunctionTool",
    "SyncClient",
    "UsageLimitExceeded",
    "UsageLimits",
    "__version__",
    "live",
    "live_sync",
    "open_store",
    "register_block_type",
    "register_finish_reason",
    "register_message_source",
    "register_turn_end_reason",
    "register_turn_trigger",
    "resume",
    "resume_sync",
    "run",
    "run_sync",
    "send",
    "send_sync",
    "tool",
    "wrap",
]
