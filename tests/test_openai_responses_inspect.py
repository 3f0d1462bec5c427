"""``elelem inspect --wire-replay`` over every OpenAI Responses recording."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from elelem.cli import main
from test_openai_responses_corpus import FILES

# Every file, including the file-search cassette whose setup calls (file
# upload, vector store) inspect reports as exchanges of their own.
PARAMS = FILES


@pytest.mark.parametrize("name", PARAMS)
def test_inspect_prints_every_responses_recording(name: str, corpus: Path) -> None:
    result = CliRunner().invoke(main, ["inspect", "--json", "--wire-replay", str(corpus / name)])
    assert result.exit_code == 0, result.output
    kinds = [line.split('"kind":"', 1)[1].split('"', 1)[0] for line in result.stdout.splitlines()]
    if name.endswith("test_openai_responses_model_file_search_tool_stream.yaml"):
        assert kinds[:3] == ["exchange"] * 3
    assert kinds.count("response") + kinds.count("error") >= 1
    assert kinds.count("finish") + kinds.count("error") >= kinds.count("response")
