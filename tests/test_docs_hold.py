"""What docs/cli.md says holds: unknown config keys and tables are errors
naming the file and the key; sqlite:// URLs follow SQLAlchemy's convention
(three slashes relative, four absolute) and `elelem log path` says which
file that is."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cli_helpers import base_env
from elelem.cli import main


@pytest.mark.parametrize(
    ("toml", "error"),
    [
        (
            'modle = "sonnet"\n',
            "unknown key 'modle' (did you mean 'model'? known: aliases, model, providers)",
        ),
        (
            '[alises]\nfast = "groq:llama-3.1-8b-instant"\n',
            "unknown table [alises] (did you mean 'aliases'? known: aliases, model, providers)",
        ),
        (
            'model = "sonnet"\n[theme]\ncolour = "blue"\n',
            "unknown table [theme] (known: aliases, model, providers)",
        ),
    ],
)
def test_an_unknown_config_key_or_table_is_an_error(tmp_path: Path, toml: str, error: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(toml)
    env = base_env(tmp_path, ELELEM_CONFIG=str(config))
    for argv in (["providers"], ["ask", "-m", "anthropic:claude-sonnet-4-5", "hi"]):
        result = CliRunner().invoke(main, argv, env=env)
        assert (result.exit_code, result.stderr) == (2, f"elelem: {config}: {error}\n")


def test_the_documented_config_loads(tmp_path: Path) -> None:
    """The known keys and tables are all taken (the docs' own example)."""
    config = tmp_path / "config.toml"
    config.write_text(
        'model = "sonnet"\n[aliases]\nfast = "groq:llama-3.1-8b-instant"\n'
        '[providers.local]\ncompatible = "openai"\nbase_url = "http://127.0.0.1:8000/v1"\n'
    )
    result = CliRunner().invoke(
        main, ["aliases"], env=base_env(tmp_path, ELELEM_CONFIG=str(config))
    )
    assert result.exit_code == 0, result.stderr
    assert "fast" in result.stdout


@pytest.mark.parametrize(
    ("url", "relative"),
    [
        ("sqlite:///chats.db", "chats.db"),
        ("sqlite:///tmp/x.db", "tmp/x.db"),
        ("sqlite:///%s/abs.db", None),
    ],
)
def test_sqlite_urls_follow_sqlalchemy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, relative: str | None
) -> None:
    work = tmp_path / "work"
    (work / "tmp").mkdir(parents=True)
    monkeypatch.chdir(work)
    if relative is None:
        url = url % (tmp_path / "elsewhere")  # sqlite:/// + /abs/path: four slashes
        (tmp_path / "elsewhere").mkdir()
        expected = tmp_path / "elsewhere" / "abs.db"
        assert url.startswith("sqlite:////")
    else:
        expected = work / relative
    env = base_env(tmp_path, ELELEM_STORE=url)
    result = CliRunner().invoke(main, ["log", "path"], env=env)
    assert (result.exit_code, result.stdout) == (0, f"{expected}\n")
    assert CliRunner().invoke(main, ["log"], env=env).exit_code == 0
    assert expected.is_file()
