"""Display obligations: Google's search suggestions are shown by the terminal,
the Markdown export and (by default) the UI message stream, read out of the
payload safely."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from cli_helpers import base_env, run
from elelem.conversation import Conversation, open_store
from elelem.render import Renderer
from elelem.render.markdown import conversation_markdown
from elelem.render.obligations import Suggestion, display_obligations, obligation_lines
from elelem.vocabulary import (
    ActivityId,
    HostedActivity,
    ProviderPayload,
    TextBlock,
)
from elelem.web import UIMessageEncoder
from web_helpers import assistant

CHIP = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC_123"
RENDERED = (
    "<style>.chip { color: red }</style><div class='container'>"
    f'<a class="chip" href="{CHIP}">weather in Paris &amp; Lyon</a>'
    '<a class="chip" href="javascript:alert(1)">evil\u202egnp\x1b]52;c;eA==\x07 [x](y)</a>'
    "</div>"
)


def grounded(rendered: str = RENDERED, queries: list[str] | None = None) -> HostedActivity:
    metadata: dict[str, object] = {"searchEntryPoint": {"renderedContent": rendered}}
    if queries is not None:
        metadata["webSearchQueries"] = queries
    payload = ProviderPayload("google", "grounding_metadata", None, metadata)
    return HostedActivity(
        ActivityId("r1:search"), "web_search", "completed", None, "2 sources", payload
    )


def test_the_suggestions_are_read_from_the_html_safely() -> None:
    (obligation,) = display_obligations(grounded())
    assert obligation.kind == "search-suggestions"
    assert obligation.html == RENDERED
    assert obligation.suggestions == (
        Suggestion("weather in Paris & Lyon", CHIP),
        Suggestion("evilgnp [x](y)", None),  # no javascript: link, no controls
    )
    assert obligation_lines(grounded()) == [
        f"Google Search suggestions: weather in Paris & Lyon {CHIP}",
        "Google Search suggestions: evilgnp [x](y)",
    ]


def test_without_links_the_queries_are_named() -> None:
    activity = grounded("<div>no chips</div>", ["weather\u202e today"])
    assert obligation_lines(activity) == ["Google Search suggestions: weather today"]


def test_other_payloads_carry_no_obligation() -> None:
    plain = HostedActivity(ActivityId("a"), "web_search", "completed", None, "5 results")
    assert display_obligations(plain) == ()
    other = ProviderPayload("anthropic", "server_tool_block", None, {"searchEntryPoint": {}})
    with_payload = HostedActivity(ActivityId("a"), "web_search", "completed", None, None, other)
    assert display_obligations(with_payload) == ()


def test_the_terminal_shows_a_line_per_suggestion() -> None:
    out = io.StringIO()
    renderer = Renderer(Console(file=out, width=80))
    started = HostedActivity(
        ActivityId("r1:search"), "web_search", "started", {"queries": ["weather in Paris"]}
    )
    renderer.part(started)
    renderer.part(grounded())
    renderer.end_answer()
    assert out.getvalue() == (
        'searched "weather in Paris" → 2 sources\n'
        f"Google Search suggestions: weather in Paris & Lyon {CHIP}\n"
        "Google Search suggestions: evilgnp [x](y)\n"
    )


def test_the_markdown_export_links_each_suggestion(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.db")
    conversation = Conversation.create(store)
    conversation.start_turn(model="google:gemini-2.5-pro")
    conversation.add_user("weather?")
    message = assistant("google", "gemini-2.5-pro", grounded(), TextBlock("Sunny."))
    conversation.add_message(message)
    document = conversation_markdown(store.info(conversation.id), store.load(conversation.id))
    assert (
        f"> Google Search suggestions: [weather in Paris & Lyon]({CHIP}) · evilgnp [x](y)\n"
    ) in document
    assert "javascript" not in document and "<style>" not in document


def test_the_ui_stream_carries_them_by_default_and_can_opt_out() -> None:
    (chunk,) = [c for c in UIMessageEncoder().feed(None, (grounded(),)) if c["type"] != "start"]
    data = chunk["data"]
    assert data["searchEntryPoint"] == RENDERED
    assert data["searchSuggestions"] == [
        {"terms": "weather in Paris & Lyon", "url": CHIP},
        {"terms": "evilgnp [x](y)", "url": None},
    ]
    encoder = UIMessageEncoder(search_entry_point=False)
    (chunk,) = [c for c in encoder.feed(None, (grounded(),)) if c["type"] != "start"]
    assert "searchEntryPoint" not in chunk["data"] and "searchSuggestions" not in chunk["data"]


def test_the_cli_shows_the_suggestions_of_a_recorded_gemini_answer(tmp_path: Path) -> None:
    from conftest import corpus_root

    corpus = corpus_root()
    if corpus is None:
        pytest.skip(
            "conformance corpus not found: set ELELEM_CORPUS or place it at ../shared/corpus"
        )
    cassette = corpus / (
        "pydantic__pydantic-ai/tests__models__cassettes__test_google__"
        "test_google_model_web_search_tool_stream.yaml"
    )
    env = base_env(tmp_path)
    played = run(env, "demo", "--pace", "0", "--keep", "--cassette", str(cassette))
    assert played.returncode == 0, played.stderr
    suggestions = [line for line in played.stdout.splitlines() if line.startswith("Google Search")]
    assert [line.split(" https://")[0] for line in suggestions] == [
        "Google Search suggestions: weather in San Francisco today",
        "Google Search suggestions: weather in Mexico City today",
    ]
    assert all(
        " https://vertexaisearch.cloud.google.com/grounding-api-redirect/" in line
        for line in suggestions
    )
    exported = run(env, "export", "--format", "md")
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.count("> Google Search suggestions: [weather in ") == 2
