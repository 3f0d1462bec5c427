"""Gemini File Search stores: ``FileSearch`` sent as the ``fileSearch`` tool
(validated by google-genai's types), and the answer's grounding metadata
kept as attributions naming the document, the store and the excerpt, on a
loopback server.

Wire example: Gemini's File Search page
(https://ai.google.dev/gemini-api/docs/file-search: the tool ``{"fileSearch":
{"fileSearchStoreNames": ["fileSearchStores/…"], "metadataFilter": …}}``;
the answer's ``groundingMetadata.groundingChunks`` hold
``retrievedContext`` entries with ``title``, ``text`` and
``fileSearchStore``, its ``groundingSupports`` the segments each backs).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from elelem import Client
from elelem.conversation import Conversation, MessageBody, SQLiteStore
from elelem.testing.servers import LoopbackServer, Reply, Send, sse_body
from elelem.turns.toolloop import run
from elelem.vocabulary import FileSearch, TextBlock
from toolloop_wires import WIRES

GEMINI = next(w for w in WIRES if w.shape == "gemini")
STORE = "fileSearchStores/handbook-7f3k2"
ANSWER = "Staff get 25 days of leave."
CHUNK = {"retrievedContext": {"title": "handbook.pdf", "text": "Annual leave is 25 days.",
                              "fileSearchStore": STORE}}  # fmt: skip
SUPPORT = {"segment": {"startIndex": 0, "endIndex": len(ANSWER), "text": ANSWER},
           "groundingChunkIndices": [0]}  # fmt: skip


def _answer() -> Reply:
    chunk = {"candidates": [{"content": {"role": "model", "parts": [{"text": ANSWER}]},
                             "finishReason": "STOP",
                             "groundingMetadata": {"groundingChunks": [CHUNK],
                                                   "groundingSupports": [SUPPORT]}}],
             "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 7,
                               "totalTokenCount": 17},
             "modelVersion": "gemini-test", "responseId": "gem_1"}  # fmt: skip
    return Reply(script=(Send(sse_body([(None, json.dumps(chunk))])),))


def test_file_search_asks_the_stores_and_keeps_the_citations(tmp_path: Path) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    search = FileSearch((STORE,), max_results=4, filters='department = "hr"')
    with LoopbackServer([_answer()]) as server:

        async def main() -> Any:
            async with Client(env=GEMINI.env(server)) as client:
                return await run(conv, client, GEMINI.model, "How much leave?",
                                 hosted_tools=[search])  # fmt: skip

        result = asyncio.run(main())
    (request,) = server.requests
    body = json.loads(request.body)
    assert body["tools"] == [{"fileSearch": {"fileSearchStoreNames": [STORE], "topK": 4,
                                             "metadataFilter": 'department = "hr"'}}]  # fmt: skip
    types = pytest.importorskip("google.genai.types")
    for tool in body["tools"]:
        types.Tool.model_validate(tool)  # google-genai's models forbid unknown fields
    assert result.text == ANSWER
    (text,) = [p for m in result.messages for p in m.content if isinstance(p, TextBlock)]
    ((title, excerpt, span),) = [(a.source.title, a.excerpt, a.range) for a in text.attributions]
    assert (title, excerpt, span) == ("handbook.pdf", "Annual leave is 25 days.", (0, len(ANSWER)))
    # The raw chunk (with its store) is kept for replay and for the log.
    (attribution,) = text.attributions
    assert attribution.replay is not None and attribution.replay.value["chunk"] == CHUNK
    stored = [p for e in conv.events if isinstance(e.body, MessageBody)
              and e.body.role == "assistant" for p in e.body.content]  # fmt: skip
    assert stored == [text]
