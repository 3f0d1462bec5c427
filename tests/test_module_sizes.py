"""No module of ``src/elelem`` grows past what a reader takes in whole.

A file over ~600 lines is split along a real seam (docs/architecture.md §1:
a base class for a per-read path, a module for a table, a module per
concern); the cap below leaves room for a change to land before its split,
never for a second house inside one file.
"""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "elelem"
MAX_LINES = 650


def line_counts(root: Path) -> dict[str, int]:
    """Each Python module under ``root`` (relative path) and its line count."""
    return {
        str(path.relative_to(root)): len(path.read_bytes().splitlines())
        for path in sorted(root.rglob("*.py"))
    }


def test_the_counter_counts_lines(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("", encoding="utf-8")
    (tmp_path / "notes.md").write_text("x\n" * 1000, encoding="utf-8")
    assert line_counts(tmp_path) == {"b.py": 0, "pkg/a.py": 3}


def test_no_module_is_over_the_cap() -> None:
    counts = line_counts(SRC)
    assert len(counts) > 300
    over = {name: n for name, n in counts.items() if n > MAX_LINES}
    assert over == {}
