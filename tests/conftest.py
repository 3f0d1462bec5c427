"""Shared fixtures: where the conformance corpus is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# CI runs (CI=true) draw the same examples every time, so a red run can be
# reproduced and a green one is not luck; local runs keep exploring.
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent


def corpus_root() -> Path | None:
    """The corpus folder: $ELELEM_CORPUS, else ../shared/corpus beside the repo."""
    env = os.environ.get("ELELEM_CORPUS")
    path = Path(env) if env else ROOT.parent / "shared" / "corpus"
    return path if (path / "INDEX.tsv").is_file() else None


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The corpus folder; the test skips, saying why, where it is absent."""
    path = corpus_root()
    if path is None:
        pytest.skip(
            "conformance corpus not found: set ELELEM_CORPUS or place it at ../shared/corpus"
        )
    return path
