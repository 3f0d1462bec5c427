"""What a newcomer does, as the README's "Try it in a minute" says it: a
fresh ``git clone`` of the repository, ``make demo`` in it, then the
README's next commands with ``-m test`` in place of a key; each checked by
exact fragments of what it prints.

The default run clones and runs ``make demo`` with the suite's own
virtualenv counting as the demo's (no install; the clone's ``src`` put
first on the path, so the clone's code is what runs); the slow variant lets
``make demo`` make its own ``.venv-demo`` in the clone, installing the
``cli`` extra as a newcomer's would.  (``tests/test_docs_examples.py`` runs
every documented command in this checkout; this is the path from a clone.)
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import base_env

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "How tall is the Eiffel Tower, and when was it finished?"


def first_commands() -> list[str]:
    """The shell lines of the README's "Try it in a minute", comments cut."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Try it in a minute", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    return [re.split(r"\s{2,}#", line)[0].strip() for line in block.group(1).splitlines()]


def test_the_readme_starts_with_clone_demo_and_the_key_free_commands() -> None:
    assert first_commands() == [
        "git clone URL elelem && cd elelem",
        "make demo",
        'elelem -m test "Hello"',
        f'ANTHROPIC_API_KEY=… elelem "{QUESTION}"',
        "elelem log",
    ]


def keyless(line: str) -> list[str]:
    """A README command line as a newcomer without a key runs it: the key's
    assignment dropped, ``-m test`` given."""
    words = shlex.split(line)
    if words[0].startswith("ANTHROPIC_API_KEY="):
        words = words[1:]
    assert words[0] == "elelem"
    if "-m" not in words and words[1:2] != ["log"]:
        words = [words[0], "-m", "test", *words[1:]]
    return words[1:]


def newcomer(tmp_path: Path, *, own_venv: bool) -> None:
    if shutil.which("git") is None or shutil.which("make") is None:
        pytest.skip("git and make are needed (apt-get install git make)")
    clone = tmp_path / "elelem"
    subprocess.run(
        ["git", "clone", "--quiet", str(ROOT), str(clone)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    env = base_env(tmp_path)  # a home of its own, no key, no config
    # pip's settings of this machine (its index, its certificates), as a
    # newcomer's pip has its own.
    env.update({k: v for k, v in os.environ.items() if k.startswith("PIP_")})
    make = ["make", "demo"]
    if own_venv:
        venv = clone / ".venv-demo"
        env["PY"] = sys.executable
        make.append(f"PY={sys.executable}")
    else:
        # The suite's virtualenv counts as installed; the clone's code runs.
        venv = Path(sys.prefix)
        make += ["-o", f"{venv}/.installed-demo", f"DEMO_VENV={venv}"]
        env["PYTHONPATH"] = str(clone / "src")
    demo = subprocess.run(make, cwd=clone, env=env, capture_output=True, text=True, timeout=900)
    assert demo.returncode == 0, demo.stderr
    shown = demo.stdout
    assert "The tower is 330 metres" in shown  # the recorded answer, played
    assert "[1] Eiffel Tower - Wikipedia" in shown
    assert f"Next steps (elelem is {venv.resolve()}/bin/elelem; to type just elelem:" in shown
    elelem = str(venv / "bin" / "elelem")
    outputs = []
    for line in first_commands()[2:]:
        done = subprocess.run(
            [elelem, *keyless(line)], cwd=clone, env=env, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, (line, done.stderr)
        outputs.append(done.stdout)
    hello, tower, log = outputs
    assert "Test answer to: Hello[1]" in hello.splitlines()
    assert "[1] Test source — example.com" in hello.splitlines()
    assert f"Test answer to: {QUESTION}[1]" in tower.splitlines()
    listed = log.splitlines()
    assert len(listed) == 2, log
    assert [row.split("  ")[-1] for row in listed] == [QUESTION, "Hello"]
    assert all("test:test-model" in row and "$0.00" in row for row in listed)


def test_a_newcomer_clones_runs_the_demo_and_the_first_commands(tmp_path: Path) -> None:
    newcomer(tmp_path, own_venv=False)


@pytest.mark.slow
def test_a_newcomer_with_make_demo_installing_its_own_venv(tmp_path: Path) -> None:
    newcomer(tmp_path, own_venv=True)
