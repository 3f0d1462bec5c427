"""docs/architecture.md is linked from the README and names only what exists:
every ``elelem.…`` module or attribute and every ``dir/file.py`` path it
mentions is checked against the code, so the document cannot drift from it;
the counts of its "where a change goes" table are counted again."""

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


def _naming(word: str) -> int:
    """How many source files of ``src/elelem`` hold ``word``."""
    src = ROOT / "src" / "elelem"
    return sum(word in p.read_text(encoding="utf-8") for p in src.rglob("*.py"))


def test_where_a_change_goes_counts_what_the_code_holds() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### 1.1 Where a change goes") : text.index("## 2.")]
    rows = {
        cells[0]: cells[2]
        for row in section.splitlines()
        if len(cells := [c.strip() for c in row.strip().strip("|").split("|")]) == 3
    }
    groq = _naming('"groq"')
    command = "`grep -rl '\"groq\"' src/elelem`"
    assert f"{command}: {groq})" in rows["an OpenAI-compatible provider"]
    assert rows["a hosted tool"].startswith(f"{_naming('WebFetch')} (")
    assert rows["a built-in block type"].startswith(f"{_naming('AudioBlock')} (")
    shapes = ROOT / "src" / "elelem" / "shapes"
    modules = sorted(p.stem for p in (shapes / "ollama_native").glob("*.py"))
    kinds = {"counting", "listing", "speech", "transcription", "live", "embeddings", "batch"}
    assert [m for m in modules if m not in kinds] == sorted(
        ["__init__", "encoder", "parser", "errors", "mapping", "fast", "media"]
    )
    assert rows["a shape"] == "9"
    assert rows["a CLI command"] == "3"
