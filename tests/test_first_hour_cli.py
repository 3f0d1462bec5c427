"""The first hour's command-line edges: bare groups print their help; a
missing extra is one line naming the command that installs it (the way this
elelem was installed: elelem is not on PyPI), exit status 2."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from cli_helpers import ELELEM, base_env
from elelem import errors
from elelem.errors import EXTRA_MODULES, install_line
from test_layers import BLOCKER

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("args", "usage"),
    [
        ([], "Usage: elelem [OPTIONS] COMMAND [ARGS]..."),
        (["keys"], "Usage: elelem keys [OPTIONS] COMMAND [ARGS]..."),
        (["batch"], "Usage: elelem batch [OPTIONS] COMMAND [ARGS]..."),
    ],
)
def test_a_bare_group_prints_its_help(tmp_path: Path, args: list[str], usage: str) -> None:
    done = subprocess.run(
        [ELELEM, *args], env=base_env(tmp_path), capture_output=True, text=True, timeout=60
    )
    # As click shows a bare group: the help, on its lines, exit status 2.
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert lines[0] == usage
    assert "Commands:" in lines
    assert all(len(line) <= 100 for line in lines), max(lines, key=len)
    assert "see: elelem" not in done.stderr


def _run_blocked(
    blocked: list[str], args: list[str], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    code = BLOCKER.format(blocked=blocked) + (
        f"sys.argv = {['elelem', *args]!r}\nfrom elelem.command import main\nmain()"
    )
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )


def test_serve_without_the_web_extra_names_the_install_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))  # as the child's
    env = {**base_env(tmp_path), "PATH": str(Path(sys.executable).parent)}
    done = _run_blocked(["starlette", "uvicorn"], ["serve", "--port", "0"], env)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "elelem: elelem serve needs the web extra (uvicorn is not installed): "
        f"{install_line('web')}\n"
    )


def test_mcp_without_the_mcp_extra_names_the_install_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))  # as the child's
    env = {
        **base_env(tmp_path),
        "PATH": str(Path(sys.executable).parent),
        "ANTHROPIC_API_KEY": "sk-ant-test-0123456789",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
    }
    args = ["ask", "-m", "anthropic:claude-sonnet-4-5", "--mcp", "http://127.0.0.1:9/mcp", "hi"]
    done = _run_blocked(["mcp"], args, env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("elelem: elelem ask needs the mcp extra (mcp")
    assert done.stderr.endswith(f"is not installed): {install_line('mcp')}\n")


def test_the_extra_module_table_matches_the_extras() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    providers = importlib.metadata.packages_distributions()
    for module, extra in EXTRA_MODULES.items():
        wanted = {Requirement(r).name.lower() for r in extras[extra]}
        given = {d.lower().replace("_", "-") for d in providers[module]}
        assert wanted & given, (module, extra, given)


def _origin(monkeypatch: pytest.MonkeyPatch, origin: dict[str, object] | None, prefix: str) -> None:
    class Distribution:
        def read_text(self, name: str) -> str | None:
            assert name == "direct_url.json"
            return None if origin is None else json.dumps(origin)

    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: Distribution())
    monkeypatch.setattr(sys, "prefix", prefix)
    monkeypatch.setattr(sys, "executable", f"{prefix}/bin/python")
    monkeypatch.setattr("shutil.which", lambda name: f"{prefix}/bin/{name}")


def test_the_install_line_follows_how_elelem_was_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    assert errors.install_line is install_line
    _origin(monkeypatch, {"url": "file:///src/elelem", "dir_info": {"editable": True}}, "/v")
    assert install_line("web") == "pip install -e '/src/elelem[web]'"
    _origin(monkeypatch, {"url": "file:///src/elelem", "dir_info": {}}, "/v")
    assert install_line("mcp") == "pip install '/src/elelem[mcp]'"
    git = {
        "url": "https://example.org/elelem.git",
        "vcs_info": {"vcs": "git", "commit_id": "ab" * 20, "requested_revision": "v1"},
    }
    _origin(monkeypatch, git, "/home/u/.local/share/pipx/venvs/elelem")
    assert install_line("web") == (
        "pipx runpip elelem install 'elelem[web] @ git+https://example.org/elelem.git@v1'"
    )
    _origin(monkeypatch, None, "/v")
    assert install_line("otel") == "pip install 'elelem[otel]'"
