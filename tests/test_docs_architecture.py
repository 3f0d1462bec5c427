"""docs/architecture.md is linked from the README and names only what exists:
every ``elelem.…`` module or attribute and every ``dir/file.py`` path it
mentions is checked against the code, so the document cannot drift from it."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"


def test_the_readme_links_the_architecture_document() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "[docs/architecture.md](docs/architecture.md)" in readme
    assert "shared folder" not in readme


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_module_and_file_the_document_names_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    names = set(re.findall(r"`(elelem(?:\.\w+)+)", text))
    assert len(names) > 15
    assert sorted(n for n in names if not _resolves(n)) == []
    paths = set(re.findall(r"`((?:\w+/)+\w+\.py)`", text))
    assert len(paths) > 5
    src = ROOT / "src" / "elelem"
    missing = [p for p in paths if not (src / p).is_file() and not (ROOT / p).is_file()]
    assert missing == []
