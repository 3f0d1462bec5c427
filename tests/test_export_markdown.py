"""`elelem export --format md`: the exact document for a constructed
conversation, hostile text made inert, and the demo answer's footnotes."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import KEY, MODEL, QUESTION, base_env, demo_body, run
from elelem.conversation import Conversation, open_store
from elelem.render.lines import attachment_line
from elelem.render.markdown import conversation_markdown, inert
from elelem.testing.servers import LoopbackServer, replay
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    CallId,
    ConversationId,
    HostedActivity,
    ImageBlock,
    Message,
    ProviderId,
    ReasoningBlock,
    Source,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from media_fixtures import png


def test_markdown_of_a_constructed_conversation_exactly(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.db")
    store.create(title="Heights", id=ConversationId("c_0123456789abcdef"))
    conversation = Conversation.open(store, "c_0123456789abcdef")
    conversation.start_turn(model="anthropic:claude-sonnet-4-5")
    conversation.add_user("How tall is it?")
    cite = Attribution(
        Source(url="https://example.com/tower", title="Tower facts"), excerpt="330 m tall"
    )
    bad = Attribution(Source(url="javascript:alert(1)", title="Evil <b>"))
    conversation.add_message(
        Message(
            role="assistant",
            content=(
                ReasoningBlock("Look it up."),
                HostedActivity(ActivityId("a1"), "web_search", "started", {"query": "tower"}),
                HostedActivity(ActivityId("a1"), "web_search", "completed", None, "3 results"),
                TextBlock("It is 330 m.", attributions=(cite, bad)),
                ToolCallBlock(CallId("t1"), "lookup", '{"q":"tower"}'),
            ),
            provider=ProviderId("anthropic"),
            model="claude-sonnet-4-5",
        )
    )
    conversation.add_tool_results([ToolResultBlock(CallId("t1"), "``` 42", name="lookup")])
    document = conversation_markdown(store.info(conversation.id), conversation.events)
    created = store.info(conversation.id).created_at[:16]
    assert document == (
        "# Heights\n"
        "\n"
        f"*c_0123456789abcdef · anthropic:claude-sonnet-4-5 · 1 turn · {created}*\n"
        "\n"
        "## Turn 1\n"
        "\n"
        "**User:** How tall is it?\n"
        "\n"
        "<details><summary>Reasoning</summary>\n"
        "\n"
        "Look it up.\n"
        "\n"
        "</details>\n"
        "\n"
        '> searched "tower" → 3 results\n'
        "\n"
        "It is 330 m.[^1][^2]\n"
        "\n"
        '> called `lookup` with {"q": "tower"}\n'
        "\n"
        "> tool result of `lookup`:\n"
        "\n"
        "````\n"
        "``` 42\n"
        "````\n"
        "\n"
        "[^1]: [Tower facts](https://example.com/tower) — “330 m tall”\n"
        "[^2]: Evil &lt;b&gt;\n"
    )
    store.close()


def test_inert_disarms_markup_links_controls_and_footnote_lookalikes() -> None:
    hostile = (
        "<script>alert(1)</script> <img src=x onerror=alert(2)> "
        "[x](javascript:alert(3)) \x1b]52;c;ZXZpbA==\x07 \u202eevil [^1]: fake"
    )
    assert inert(hostile) == (
        "&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt; "
        "[x](unsafe-javascript-alert(3))  evil \\[^1]: fake"
    )


def test_export_md_of_the_demo_answer(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    with LoopbackServer([replay(demo_body())]) as server:
        e = {**env, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        assert run(e, "ask", "-m", MODEL, "--web-search", QUESTION).returncode == 0
    result = run(env, "export", "--format", "md")
    assert result.returncode == 0, result.stderr
    document = result.stdout
    assert document.startswith(f"# {QUESTION}\n")
    assert f"**User:** {QUESTION}\n" in document
    assert '> searched "Eiffel Tower height and completion date" → 5 results\n' in document
    assert (
        "[^1]: [Eiffel Tower - Wikipedia](https://en.wikipedia.org/wiki/Eiffel_Tower)" in document
    )
    assert "[^4]: [Eiffel Tower | History, Height, & Facts | Britannica]" in document
    assert document.count("<details><summary>Reasoning</summary>") == 1
    # A sentence cut into blocks at its citations is one paragraph.
    assert (
        "\n**Height.** The tower is 330 metres (1,083 ft) tall, including the antennas at its "
        "top[^1][^2]; it grew from its original 312 metres as broadcasting antennas were added "
        "over the decades.\n"
    ) in document
    assert document.endswith("*usage: 9,873 in · 418 out · 1 web search · $0.0459*\n")


def test_a_footnote_url_cannot_end_its_link_and_carry_markup(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.db")
    conversation = Conversation.open(store, store.create(title="t").id)
    conversation.start_turn(model="m")
    conversation.add_user("q")
    url = "https://evil.example/a)<img src=x onerror=alert(1)> b`c"
    cite = Attribution(Source(url=url, title="T"))
    conversation.add_message(
        Message(role="assistant", content=(TextBlock("A.", attributions=(cite,)),))
    )
    document = conversation_markdown(store.info(conversation.id), conversation.events)
    assert (
        "[^1]: [T](https://evil.example/a%29%3Cimg%20src=x%20onerror=alert%281%29%3E%20b%60c)\n"
        in document
    )
    assert "<img" not in document
    store.close()


def test_a_user_image_beside_text_is_named_not_left_out(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.db")
    conversation = Conversation.open(store, store.create(title="t").id)
    conversation.start_turn(model="m")
    image = ImageBlock.from_bytes(png(1280, 800), filename="shot.png")
    conversation.add_message(Message(role="user", content=(TextBlock("What is this?"), image)))
    document = conversation_markdown(store.info(conversation.id), conversation.events)
    line = attachment_line(image)
    assert line.startswith("[image shot.png 1280×800, ")
    assert "**User:** What is this?\n\n*" + line + "*\n" in document
    store.close()
