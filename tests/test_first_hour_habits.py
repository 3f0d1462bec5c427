"""Habits from ``llm`` that carry over: ``elelem "prompt"`` asks, ``models
default`` says and saves the default model, ``config path`` says where the
config file is, ``-x``/``--xl`` print a fenced code block of the answer,
and ``export --format json`` is one JSON document.  Every run uses ``-m
test`` (no key) in its own tmp home, no inherited ELELEM_* variable."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import base_env, run
from elelem.cli.ask import extract_code

PROMPT = "Here:\n```python\nprint(1)\n```\nand\n~~~\nlast()\n~~~\n"


def test_a_bare_prompt_is_ask(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    for args in (["-m", "test", "Hello there"], ["Hello there", "-m", "test"]):
        done = run(env, *args)
        assert done.returncode == 0, done.stderr
        assert "Test answer to: Hello there[1]" in done.stdout
    typo = run(env, "sho")
    assert (typo.returncode, typo.stderr) == (
        2,
        "elelem: no such command 'sho' (did you mean show?); to ask it: elelem ask sho\n",
    )


def test_models_default_says_and_saves_the_default(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    before = run(env, "models", "default")
    assert before.returncode == 2  # no key, nothing saved: the usual error
    saved = run(env, "models", "default", "test")
    assert (saved.returncode, saved.stdout) == (0, "default model: test:test-model\n")
    home = Path(env["ELELEM_HOME"])
    assert (home / "default-model.txt").stat().st_mode & 0o777 == 0o600
    said = run(env, "models", "default")
    assert said.stdout == f"test:test-model\t(from {home / 'default-model.txt'})\n"
    asked = run(env, "Hello there")  # no -m: the saved default
    assert "Test answer to: Hello there[1]" in asked.stdout
    bad = run(env, "models", "default", "nosuch:model")
    assert bad.returncode == 2 and "unknown provider 'nosuch'" in bad.stderr


def test_config_path_says_where_the_config_is(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    done = run(env, "config", "path")
    where = tmp_path / "config" / "elelem" / "config.toml"  # XDG_CONFIG_HOME's
    assert (done.returncode, done.stdout) == (0, f"{where}\n")
    assert done.stderr == "elelem: (it does not exist yet)\n"


def test_a_missing_config_file_named_by_elelem_config_is_an_error(tmp_path: Path) -> None:
    named = tmp_path / "confg.toml"  # a typo
    for args in (("ask", "-m", "test", "hi"), ("config", "path")):
        done = run(base_env(tmp_path, ELELEM_CONFIG=str(named)), *args)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (
            f"elelem: ELELEM_CONFIG names {named}, which does not exist: create it, "
            "or unset ELELEM_CONFIG to use the default config file\n"
        )


def test_extract_prints_a_code_block_of_the_answer(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    first = run(env, "ask", "-m", "test", "-x", PROMPT)
    assert (first.returncode, first.stdout) == (0, "print(1)\n"), first.stderr
    last = run(env, "ask", "-m", "test", "--xl", PROMPT)
    assert last.stdout == "last()\n"
    assert extract_code("no code here") == "no code here"


def test_export_json_is_one_document(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    run(env, "ask", "-m", "test", "Hello there")
    ndjson = run(env, "export").stdout.splitlines()
    whole = json.loads(run(env, "export", "--format", "json").stdout)
    assert whole == [json.loads(line) for line in ndjson]
    assert whole[0]["format"].startswith("elelem")
