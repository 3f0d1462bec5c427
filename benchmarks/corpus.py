"""Real text deltas, read at run time from the recorded provider traffic.

The corpus ships with the project in ``tests/corpus`` and is read there unless
``$ELELEM_CORPUS`` points elsewhere, exactly as the test suite finds it.  Every recorded streaming response of a wire shape
is read in its own format (one JSON payload per line, VCR.py cassettes,
multi-document when/then YAML, raw SSE bodies) and the assistant text deltas
are kept in recording order.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent

# INDEX.tsv's api_shape column for each benchmark shape.
INDEX_SHAPES = {
    "anthropic_messages": "messages",
    "openai_responses": "responses",
    "openai_chat": "chat_completions",
    "gemini": "gemini",
}


class CorpusMissing(RuntimeError):
    """The conformance corpus is not where the benchmark looks for it."""


def corpus_root() -> Path:
    """The corpus folder: ``$ELELEM_CORPUS``, else ``tests/corpus`` in the repo."""
    env = os.environ.get("ELELEM_CORPUS")
    path = Path(env) if env else ROOT / "tests" / "corpus"
    if not (path / "INDEX.tsv").is_file():
        raise CorpusMissing(
            f"conformance corpus not found at {path}: it ships in tests/corpus; "
            "set ELELEM_CORPUS to another folder holding INDEX.tsv"
        )
    return path


def _sse_data(body: str) -> Iterator[str]:
    for line in body.splitlines():
        if line.startswith("data:"):
            yield line[5:].strip()


def _yaml_bodies(path: Path) -> Iterator[str]:
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with path.open(encoding="utf-8") as fh:
        for doc in yaml.load_all(fh, Loader=loader):
            if not isinstance(doc, dict):
                continue
            for interaction in doc.get("interactions") or ():
                body = (interaction.get("response") or {}).get("body")
                if isinstance(body, dict) and isinstance(body.get("string"), str):
                    yield body["string"]
            then = doc.get("then")
            if isinstance(then, dict) and isinstance(then.get("body"), str):
                yield then["body"]


def recorded_payloads(path: Path) -> Iterator[dict[str, Any]]:
    """Every JSON object a recorded streaming response carried in its ``data:`` fields."""
    if path.name.endswith(".chunks.txt"):
        texts: Iterator[str] = (line.strip() for line in path.open(encoding="utf-8"))
    elif path.suffix in (".yaml", ".yml"):
        texts = (data for body in _yaml_bodies(path) for data in _sse_data(body))
    else:
        texts = _sse_data(path.read_text(encoding="utf-8"))
    for text in texts:
        if not text.startswith("{"):
            continue  # "[DONE]" and blank lines
        value = json.loads(text)
        if isinstance(value, dict):
            yield value


def _anthropic_text(p: dict[str, Any]) -> list[str]:
    delta = p.get("delta")
    is_text = isinstance(delta, dict) and delta.get("type") == "text_delta"
    return [delta["text"]] if p.get("type") == "content_block_delta" and is_text else []


def _responses_text(p: dict[str, Any]) -> list[str]:
    return [p["delta"]] if p.get("type") == "response.output_text.delta" else []


def _chat_text(p: dict[str, Any]) -> list[str]:
    out = []
    for choice in p.get("choices") or ():
        content = (choice.get("delta") or {}).get("content")
        if isinstance(content, str) and content:
            out.append(content)
    return out


def _gemini_text(p: dict[str, Any]) -> list[str]:
    out = []
    for cand in p.get("candidates") or ():
        for part in (cand.get("content") or {}).get("parts") or ():
            if isinstance(part.get("text"), str) and part["text"] and not part.get("thought"):
                out.append(part["text"])
    return out


_EXTRACT: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "anthropic_messages": _anthropic_text,
    "openai_responses": _responses_text,
    "openai_chat": _chat_text,
    "gemini": _gemini_text,
}


def streaming_files(root: Path, shape: str) -> list[Path]:
    """The recorded streaming responses of ``shape``, in INDEX.tsv order."""
    wanted = INDEX_SHAPES[shape]
    with (root / "INDEX.tsv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    return [
        root / row["local_file"]
        for row in rows
        if row["api_shape"] == wanted and row["streaming"] == "yes"
    ]


def text_deltas(shape: str, root: Path | None = None) -> list[str]:
    """The assistant text deltas of every recorded ``shape`` stream, in order."""
    root = root if root is not None else corpus_root()
    extract = _EXTRACT[shape]
    deltas = [
        text
        for path in streaming_files(root, shape)
        for payload in recorded_payloads(path)
        for text in extract(payload)
    ]
    if not deltas:
        raise CorpusMissing(f"no recorded {shape} text deltas found under {root}")
    return deltas
