"""A plugin distribution laid out as pip installs one: a package and its
``.dist-info`` with ``entry_points.txt``, found by :mod:`importlib.metadata`
in an interpreter whose path holds the folder."""

from __future__ import annotations

from pathlib import Path


def plugin_site(root: Path, package: str, source: str, entry_points: str) -> Path:
    """Write package ``package`` (its ``__init__.py`` is ``source``) and
    its distribution's metadata with ``entry_points`` (the text of
    ``entry_points.txt``) under ``root/site``; return that folder."""
    site = root / "site"
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text(source, encoding="utf-8")
    info = site / f"{package}-0.1.dist-info"
    info.mkdir()
    name = package.replace("_", "-")
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    return site
