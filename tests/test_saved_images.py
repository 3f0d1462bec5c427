"""Generated images are written exclusively: never over an existing file,
never through a planted symlink, and no more than a limit (issue #33)."""

from __future__ import annotations

from pathlib import Path

from elelem.cli.attachments import MAX_IMAGES, save_images
from elelem.vocabulary import ImageBlock, TextBlock
from media_fixtures import png

PNG = png()


def _images(n: int) -> list[object]:
    return [ImageBlock.from_bytes(PNG + bytes([i % 256]), "image/png") for i in range(n)]


def test_a_planted_symlink_is_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "images"
    out.mkdir()
    (out / "c_1-1-1.png").symlink_to(victim)
    saved, skipped = save_images(_images(1), out, "c_1-1")
    assert victim.read_text() == "keep me"
    assert (out / "c_1-1-1.png").is_symlink()
    assert (saved, skipped) == ([out / "c_1-1-1-2.png"], 0)
    assert saved[0].read_bytes() == PNG + b"\x00"


def test_an_existing_file_is_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "s-1.png").write_bytes(b"mine")
    (tmp_path / "s-1-2.png").write_bytes(b"mine too")
    saved, _ = save_images([TextBlock("x"), *_images(2)], tmp_path, "s")
    assert saved == [tmp_path / "s-1-3.png", tmp_path / "s-2.png"]
    assert (tmp_path / "s-1.png").read_bytes() == b"mine"
    assert (tmp_path / "s-1-2.png").read_bytes() == b"mine too"


def test_no_more_than_the_limit_are_written(tmp_path: Path) -> None:
    saved, skipped = save_images(_images(MAX_IMAGES + 30), tmp_path, "s")
    assert (len(saved), skipped) == (MAX_IMAGES, 30)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"s-{n}.png" for n in range(1, MAX_IMAGES + 1)
    )
