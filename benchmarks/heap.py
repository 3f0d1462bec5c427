"""The collector around a region an instruction counter measures.

What a cyclic collection costs depends on how many objects are tracked when
it runs, and when it runs depends on what was allocated before the region
(imports, the catalog, the server's set-up, the previous request): between
two runs of the same command the collections inside the region, and so the
count, move.  :func:`frozen_heap` collects, then freezes what is alive, so a
collection inside the region walks only what the region allocated; the
thresholds stay as they are, so the region still pays for its own garbage.
The measured client and its floor are treated alike, so their ratio stays
fair.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Around the measured region: collect the garbage so far, move every
    live object to the permanent generation (:func:`gc.freeze`), out of the
    region's collections, and back afterwards (the process runs on)."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
