"""Embeddings: vectors for texts, from every provider that makes them.

``Client.embed(model, inputs, dimensions=…, task=…)`` (and the blocking
``SyncClient.embed``) returns :class:`Embeddings`: one float32
``array('f')`` per input, in order (``.numpy()`` when numpy is installed),
with the usage the provider reported and its cost.  The inputs are cut into
as many requests as the provider's limits need (each wire is its shape
package's ``embeddings.py``, the contract :mod:`elelem.wire.embeddings`); each goes
through the one driver, so keys, signing, typed errors and visible retries
are those of every other request.  Collections of stored vectors and
similarity search are in :mod:`.collections`.
"""

from elelem.embeddings.core import (
    EMBEDDING_PROVIDERS,
    EmbedCall,
    Embeddings,
    EmbedPlan,
    batches,
    embedding_wires,
    plan,
    wire_for,
    wire_of,
)
from elelem.wire.embeddings import TASKS, EmbeddingWire, Vector

__all__ = [
    "EMBEDDING_PROVIDERS",
    "TASKS",
    "EmbedCall",
    "EmbedPlan",
    "EmbeddingWire",
    "Embeddings",
    "Vector",
    "batches",
    "embedding_wires",
    "plan",
    "wire_for",
    "wire_of",
]
