"""elelem: stream LLM provider responses into one provider-neutral model,
losing nothing the provider returned.

The layers, bottom up: :mod:`elelem.vocabulary` (pure data),
:mod:`elelem.codec` (canonical JSON), :mod:`elelem.stream` (chunk protocol and
the one assembler), :mod:`elelem.shapes` (sans-IO wire shapes),
:mod:`elelem.transport` (the one driver), :mod:`elelem.providers`,
:mod:`elelem.conversation`, :mod:`elelem.render` and :mod:`elelem.cli`.
"""

from elelem.vocabulary import (
    register_block_type,
    register_finish_reason,
    register_message_source,
    register_turn_end_reason,
    register_turn_trigger,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "register_block_type",
    "register_finish_reason",
    "register_message_source",
    "register_turn_end_reason",
    "register_turn_trigger",
]
