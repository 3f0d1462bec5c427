"""Shared fixtures: where the conformance corpus is; a headless Chromium."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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

# The suite is isolated from the settings of whoever runs it: an ELELEM_STORE,
# ELELEM_HOME, ELELEM_CONFIG or ELELEM_MODEL of the user's shell would point
# tests (and the processes they start, which inherit this environment) at the
# user's own store and config. Only ELELEM_CORPUS, which says where the
# corpus is, is read from outside.
for _name in [n for n in os.environ if n.startswith("ELELEM_") and n != "ELELEM_CORPUS"]:
    del os.environ[_name]

# A shell with PYTHONDONTWRITEBYTECODE set would make every elelem process a
# test starts compile elelem from source again (twice the instructions of
# its start): the processes the tests start keep their bytecode.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# The processes the tests start see the packages a user's install has, not
# the browser tests' trio (tests/user_site/trio.py says why).
USER_SITE = str(Path(__file__).resolve().parent / "user_site")
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (USER_SITE, os.environ.get("PYTHONPATH", "")) if p
)

# A run started in the background of a shell without job control (`make test &`)
# inherits Ctrl-C ignored, and so would every process a test starts: the
# terminal tests' Ctrl-C would then never arrive. Python's own handler is
# reset to the default on exec, so the processes the tests start get Ctrl-C.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent


CORPUS = ROOT / "tests" / "corpus"


class CorpusMissing(FileNotFoundError):
    """The conformance corpus is not where the tests were told to find it."""


def corpus_root() -> Path:
    """The corpus folder: $ELELEM_CORPUS, else tests/corpus, which ships with the project.

    The corpus is part of every checkout, so its absence is a broken checkout or
    a wrong ELELEM_CORPUS: an error that stops the run, never a quiet skip.
    """
    env = os.environ.get("ELELEM_CORPUS")
    path = Path(env) if env else CORPUS
    if not (path / "INDEX.tsv").is_file():
        where = f"ELELEM_CORPUS={env}" if env else str(path)
        raise CorpusMissing(
            f"conformance corpus not found at {where}: tests/corpus ships with the "
            "project (restore it with git checkout -- tests/corpus), or point "
            "ELELEM_CORPUS at a folder holding INDEX.tsv"
        )
    return path


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The corpus folder."""
    return corpus_root()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for a test module (skips where it is absent)."""
    from web_helpers import chromium, chromium_paths

    chromium_paths()
    with chromium() as driver:
        yield driver


@pytest.fixture(scope="session")
def temporal_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One Temporal development server per test process (so one per xdist
    worker), started on first use (see tests/durable_helpers.py)."""
    from durable_helpers import temporal_server

    yield from temporal_server(tmp_path_factory.mktemp("temporal"))


@pytest.fixture
def lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the durable tests' non-idempotent tool appends to."""
    from durable_script import LINES

    path = tmp_path / "lines.txt"
    monkeypatch.setenv(LINES, str(path))
    return path
