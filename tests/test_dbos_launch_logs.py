"""``elelem worker dbos`` whose system database cannot be reached says so in
one line: DBOS's own traceback of the failed launch (and its warning
before it) is not printed before elelem's line, which already says it.
What DBOS logs while a launch succeeds is still logged."""

from __future__ import annotations

import logging
import socket
import subprocess
from pathlib import Path

import pytest

from cli_helpers import ELELEM, base_env

dbos = pytest.importorskip("elelem.durable.dbos")


@pytest.mark.slow  # DBOS retries the connection for about 5 s; the hold is tested below
def test_an_unreachable_database_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on: refused at once
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://elelem:pw-0123456789@127.0.0.1:{port}/db"
    argv = [ELELEM, "worker", "dbos", "--system-database", url, "--executor-id", "w1"]
    done = subprocess.run(argv, env=base_env(tmp_path), capture_output=True, timeout=120)
    err = done.stderr.decode()
    assert done.returncode == 1 and done.stdout == b""
    assert err.count("\n") == 1, err
    assert err.startswith(
        "elelem: the DBOS system database could not be opened: OperationalError: "
    )
    assert "Connection refused" in err and "pw-0123456789" not in err


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def logger() -> logging.Logger:
    found = logging.getLogger(f"elelem-test-held-{id(object())}")
    found.propagate = False
    found.setLevel(logging.DEBUG)
    return found


def test_what_a_successful_launch_logs_is_logged_after_it(logger: logging.Logger) -> None:
    kept = _Kept()
    logger.addHandler(kept)
    with dbos._held_logs(logger):
        logger.warning("one")
        logger.error("two")
        assert kept.messages == []
    assert kept.messages == ["one", "two"]
    logger.info("after")  # the hold ends with the block
    assert kept.messages == ["one", "two", "after"]


def test_what_a_failed_launch_logs_is_left_to_its_error(logger: logging.Logger) -> None:
    kept = _Kept()
    logger.addHandler(kept)
    with pytest.raises(RuntimeError, match="no database"), dbos._held_logs(logger):
        logger.error("DBOS failed to launch:")
        raise RuntimeError("no database")
    assert kept.messages == []
    logger.error("later")
    assert kept.messages == ["later"]
