"""Batches: many requests at half the price, for work that can wait.

``Client.batch(model, requests)`` submits them to the provider's batch API
(Anthropic Message Batches, OpenAI Batch, Gemini batch mode) and returns a
:class:`BatchRecord`; ``Client.batch_status(record)`` asks how far it got and
``Client.batch_results(record)`` reads each request's response, parsed by the
shape's own whole-body parser and priced at the batch price.  The record is
all a later process needs to carry on; :mod:`elelem.turns.batchlog` keeps it in
the conversation log (``elelem batch submit|status|results``).
"""

from elelem.batches.core import (
    BATCH_DISCOUNT,
    BATCH_PROVIDERS,
    BatchAPI,
    BatchRequest,
    BatchResult,
    batch_price,
    wire_of,
)
from elelem.wire.batch import STATES, BatchRecord, Item

__all__ = [
    "BATCH_DISCOUNT",
    "BATCH_PROVIDERS",
    "STATES",
    "BatchAPI",
    "BatchRecord",
    "BatchRequest",
    "BatchResult",
    "Item",
    "batch_price",
    "wire_of",
]
