"""Embeddings: vectors for texts, from every provider that makes them.

``Client.embed(model, inputs, dimensions=…, task=…)`` (and the blocking
``SyncClient.embed``) returns :class:`Embeddings`: one float32
``array('f')`` per input, in order (``.numpy()`` when numpy is installed),
with the usage the provider reported and its cost.  The inputs are cut into
as many requests as the provider's limits need (:mod:`.wires`); each goes
through the one driver, so keys, signing, typed errors and visible retries
are those of every other request.  Collections of stored vectors and
similarity search are in :mod:`.collections`.
"""

from elelem.embeddings.core import EmbedCall, Embeddings, EmbedPlan, plan, wire_of
from elelem.embeddings.wires import TASKS, WIRES, EmbeddingWire, Vector

__all__ = [
    "TASKS",
    "WIRES",
    "EmbedCall",
    "EmbedPlan",
    "EmbeddingWire",
    "Embeddings",
    "Vector",
    "plan",
    "wire_of",
]
