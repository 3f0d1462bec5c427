"""The Markdown renderer of the viewer, the chat and the HTML export: what it
renders, and that nothing of the content becomes live markup."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from elelem.conversation import Conversation, open_store
from elelem.vocabulary import Attribution, ReasoningBlock, Source, TextBlock
from elelem.web.html import Page, conversation, export_html
from elelem.web.markup import markdown_html
from web_helpers import assistant

REL = 'rel="noopener noreferrer nofollow" target="_blank"'


class Elements(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Elements()
    parser.feed(html)
    return parser.tags


def test_headings_lists_emphasis_and_links() -> None:
    source = "### Summary\n\n- **one** and `two`\n- [three](https://example.com/a?b=1&c=2)\n"
    assert markdown_html(source) == (
        "<h3>Summary</h3>\n<ul>\n<li><strong>one</strong> and <code>two</code></li>\n"
        f'<li><a href="https://example.com/a?b=1&amp;c=2" {REL}>three</a></li>\n</ul>\n'
    )


def test_a_table() -> None:
    source = "| a | b |\n|---|---|\n| 1 | <i>2</i> |\n"
    assert markdown_html(source) == (
        '<div class="table"><table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n'
        "<tbody>\n<tr>\n<td>1</td>\n<td>&lt;i&gt;2&lt;/i&gt;</td>\n</tr>\n</tbody>\n"
        "</table>\n</div>"
    )


def test_code_is_highlighted_on_the_server() -> None:
    source = "```python\ndef f(): return '<b>'\n```\n"
    assert markdown_html(source) == (
        '<pre class="hl"><code data-language="python"><span class="k">def</span>'
        '<span class="w"> </span><span class="nf">f</span><span class="p">():</span> '
        '<span class="k">return</span> <span class="s1">\'&lt;b&gt;\'</span>\n'
        "</code></pre>\n"
    )
    # An unknown language is escaped by markdown-it, not highlighted.
    assert markdown_html('```"><script>\n<b>x</b>\n```\n') == (
        '<pre><code class="language-&quot;&gt;&lt;script&gt;">&lt;b&gt;x&lt;/b&gt;\n</code></pre>\n'
    )


@pytest.mark.parametrize(
    "source",
    [
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "[x](data:text/html,<script>alert(1)</script>)",
        "[x](vbscript:msgbox)",
        "[x](file:///etc/passwd)",
        "[x](/relative/path)",
        "<javascript:alert(1)>",
        "![x](javascript:alert(1))",
    ],
)
def test_links_other_than_http_https_mailto_stay_text(source: str) -> None:
    html = markdown_html(source)
    assert [tag for tag, _ in elements(html)] == ["p"], html


def test_mailto_and_autolinks() -> None:
    assert markdown_html("<mailto:a@b.example> <https://b.example>") == (
        f'<p><a href="mailto:a@b.example" {REL}>mailto:a@b.example</a> '
        f'<a href="https://b.example" {REL}>https://b.example</a></p>\n'
    )


def test_images_are_links_never_loaded() -> None:
    assert markdown_html('![a "chart"](https://track.example/p.png)') == (
        '<p><a class="image-link" href="https://track.example/p.png" '
        f"{REL}>image: a &quot;chart&quot;</a></p>\n"
    )


def test_raw_html_and_controls_are_text() -> None:
    source = '<img src=x onerror="alert(1)">\n\n<script>x</script> \x1b]8;;https://e/\x07a\u202eb'
    assert markdown_html(source) == (
        "<p>&lt;img src=x onerror=&quot;alert(1)&quot;&gt;</p>\n"
        "<p>&lt;script&gt;x&lt;/script&gt; ab</p>\n"
    )


def test_markers_go_at_code_point_positions() -> None:
    source = "**Height.** 330 m tall.\n\n## Next\n\nDone."
    html = markdown_html(source, {22: "<sup>1</sup>", 23: "<sup>2</sup>", 39: "<sup>3</sup>"})
    assert html == (
        "<p><strong>Height.</strong> 330 m tall<sup>1</sup>.<sup>2</sup></p>\n"
        "<h2>Next</h2>\n<p>Done.<sup>3</sup></p>\n"
    )


def test_a_marker_in_code_or_a_url_is_shown_after_the_text() -> None:
    html = markdown_html("see [x](https://a.example/p) and `code`", {18: "<M1>", 36: "<M2>"})
    assert html == (
        f'<p>see <a href="https://a.example/p" {REL}>x</a> and <code>code</code></p>\n'
        '<p class="cites"><M1><M2></p>\n'
    )


def test_content_cannot_forge_a_marker() -> None:
    forged = "\u27e6abcdefghijkl0\u27e7 and \u27e60\u27e7"
    assert markdown_html(forged, {3: "<M>"}) == (
        "<p>\u27e6ab<M>cdefghijkl0\u27e7 and \u27e60\u27e7</p>\n"
    )


def test_one_answer_split_in_cited_blocks_renders_as_one_document(tmp_path: object) -> None:
    """Anthropic splits an answer in a block per citation: a list or a bold
    span crossing blocks still renders, each marker where its block ends."""
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    store = open_store(tmp_path / "s.db")
    conv = Conversation.create(store)
    conv.start_turn(model="anthropic:x")
    conv.add_user("q")
    cite = Attribution(Source("https://a.example/", "A"), "quoted")
    conv.add_message(
        assistant(
            "anthropic",
            "x",
            TextBlock("## Facts\n\n- **Height:** "),
            TextBlock("330 m", (cite,)),
            TextBlock("\n- Built in 1889"),
        )
    )
    info = store.info(conv.id)
    body = conversation(info, store.load(conv.id), link=None, page=Page())
    (answer,) = re.findall(r'<div class="text">(.*?)</div>', body, re.DOTALL)
    assert answer == (
        "<h2>Facts</h2>\n<ul>\n<li><strong>Height:</strong> 330 m"
        '<sup class="cite"><a href="#fn-1-1" id="ref-1-1">[1]</a></sup></li>\n'
        "<li>Built in 1889</li>\n</ul>\n"
    )
    exported = export_html(info, store.load(conv.id)).decode()
    assert answer in exported


def test_redacted_reasoning_is_a_line_not_an_empty_fold(tmp_path: Path) -> None:
    store = open_store(tmp_path / "s.db")
    conv = Conversation.create(store)
    conv.start_turn(model="openai:gpt-5")
    conv.add_user("q")
    conv.add_message(assistant("openai", "gpt-5", ReasoningBlock(""), TextBlock("Sunny.")))
    body = conversation(store.info(conv.id), store.load(conv.id), link=None, page=Page())
    assert '<p class="reasoning-redacted">reasoning (redacted)</p>' in body
    assert "<details" not in body


def test_a_huge_code_block_is_shown_plain() -> None:
    from elelem.web.markup import HIGHLIGHT_LIMIT

    code = "x = 1\n" * (HIGHLIGHT_LIMIT // 6 + 1)
    html = markdown_html(f"```python\n{code}```\n")
    assert html == f'<pre><code class="language-python">{code}</code></pre>\n'
