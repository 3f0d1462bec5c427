"""The public face of ``src/elelem`` is documented, and its docstrings cite
only documents the repository holds.

- at least 98% of the public names carry a docstring: every module, and
  every class, function and method whose name and whose enclosing names
  have no leading underscore (an ``@overload`` stub or a property's setter
  is the documented name's own);
- every ``….md`` a source file names is a file of the repository, and every
  section it cites of docs/architecture.md (``§2.3``) is a heading there.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "elelem"
SHARE = 0.98


def _stub(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    names = {
        d.id if isinstance(d, ast.Name) else getattr(d, "attr", "") for d in node.decorator_list
    }
    return bool(names & {"overload", "setter", "deleter"})


def public_names(source: str, where: str) -> list[tuple[str, bool]]:
    """``(name, documented)`` for the module ``where`` and each public
    class, function and method of ``source``."""
    tree = ast.parse(source)
    found = [(where, ast.get_docstring(tree) is not None)]

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if node.name.startswith("_"):
                continue
            if not isinstance(node, ast.ClassDef) and _stub(node):
                continue
            found.append((f"{where}:{prefix}{node.name}", ast.get_docstring(node) is not None))
            if isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")

    walk(tree.body, "")
    return found


def sources() -> dict[str, str]:
    """Each public module's path (relative to ``src``) and its text."""
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if any(p.startswith("_") and p != "__init__" for p in parts):
            continue
        out[str(path.relative_to(SRC.parent))] = path.read_text(encoding="utf-8")
    return out


def test_the_counter_counts_public_names_only() -> None:
    code = '''"""A module."""
class Shown:
    """Shown."""
    def told(self) -> None:
        """Told."""
    def untold(self) -> None: ...
    def _hidden(self) -> None: ...
class _Private:
    def inner(self) -> None: ...
def bare() -> None: ...
'''
    assert public_names(code, "m") == [
        ("m", True),
        ("m:Shown", True),
        ("m:Shown.told", True),
        ("m:Shown.untold", False),
        ("m:bare", False),
    ]


def test_public_names_are_documented() -> None:
    names = [n for where, text in sources().items() for n in public_names(text, where)]
    assert len(names) > 1500
    missing = [name for name, documented in names if not documented]
    share = 1 - len(missing) / len(names)
    assert share >= SHARE, (round(share, 4), missing)


def test_docstrings_cite_only_documents_of_the_repository() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^#+ (\d+(?:\.\d+)*)\.? ", text, re.MULTILINE))
    assert {"1", "2.3", "7"} <= sections
    wrong = []
    for where, source in sources().items():
        if re.search(r"\bDESIGN\b", source):
            wrong.append(f"{where}: DESIGN (not a document of the repository)")
        for name in re.findall(r"([\w./-]+\.md)\b", source):
            if not (ROOT / name).is_file():
                wrong.append(f"{where}: {name}")
        for cited in re.findall(r"docs/architecture\.md ((?:§[\d.]+(?:, )?)+)", source):
            for section in re.findall(r"§([\d.]*\d)", cited):
                if section not in sections:
                    wrong.append(f"{where}: docs/architecture.md §{section}")
    assert wrong == []
