"""elelem: stream LLM provider responses into one provider-neutral model,
losing nothing the provider returned.

The layers, bottom up: :mod:`elelem.vocabulary` (pure data),
:mod:`elelem.codec` (canonical JSON), :mod:`elelem.stream` (chunk protocol and
the one assembler), :mod:`elelem.shapes` (sans-IO wire shapes),
:mod:`elelem.transport` (the one driver), :mod:`elelem.providers`,
:mod:`elelem.conversation`, :mod:`elelem.render` and :mod:`elelem.cli`.
"""

import importlib
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


_LAZY = {
    "Client": "elelem.client",
    "SyncClient": "elelem.client",
    "Conversation": "elelem.conversation",
    "open_store": "elelem.conversation",
    "send": "elelem.turns.drive",
    "send_sync": "elelem.turns.drive",
    "run": "elelem.turns.toolloop",
    "run_sync": "elelem.turns.toolloop",
    "live": "elelem.turns.live_session",
    "live_sync": "elelem.turns.live_session",
    "resume": "elelem.turns.deferred",
    "resume_sync": "elelem.turns.deferred",
    "wrap": "elelem.providers.middleware",
    "Fallback": "elelem.providers.fallback",
    "UsageLimits": "elelem.turns.limits",
    "UsageLimitExceeded": "elelem.turns.limits",
    "FunctionTool": "elelem.tools",
    "tool": "elelem.tools",
}
"""Each name loaded on first use, and its module (the ones imported for the
type checker above): ``import elelem`` stays free of httpx2 and of the
layers above the vocabulary."""


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'elelem' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


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
