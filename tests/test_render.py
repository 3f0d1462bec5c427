"""elelem.render: footnotes, status lines, reasoning modes, usage, exact output."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

from rich.console import Console

from elelem.render import (
    Footnotes,
    Renderer,
    RenderOptions,
    activity_label,
    activity_line,
    cited_text,
    reasoning_summary,
    usage_line,
)
from elelem.stream import (
    Assembler,
    BlockEnd,
    BlockStart,
    Chunk,
    Citation,
    Finish,
    Hosted,
    ReasoningDelta,
    ResponseStart,
    TextDelta,
    UsageUpdate,
)
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    CallId,
    HostedActivity,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    Source,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
    Usage,
)
from render_streams import drive_renderer

WIKI = Source("https://en.wikipedia.org/wiki/Eiffel_Tower", "Eiffel Tower - Wikipedia")
TOUR = Source("https://www.toureiffel.paris/en/the-monument/key-figures", "Key figures")


def search_answer() -> Iterator[Chunk]:
    search = HostedActivity(
        ActivityId("srvtoolu_1"), "web_search", "started", {"query": "eiffel tower height"}
    )
    yield ResponseStart("msg_1", "claude-test")
    yield BlockStart(0, "reasoning")
    yield ReasoningDelta(0, "The user wants the height.\nI will search for it.")
    yield BlockEnd(0)
    yield Hosted(search)
    yield Hosted(search.transition("completed", summary="10 results"))
    yield BlockStart(1, "text")
    yield TextDelta(1, "The tower is ")
    yield BlockEnd(1)
    yield BlockStart(2, "text")
    yield Citation(2, Attribution(WIKI, excerpt="330 metres (1,083&nbsp;ft) tall"))
    yield Citation(2, Attribution(TOUR, excerpt="330 m"))
    yield TextDelta(2, "330 metres tall")
    yield TextDelta(2, " including antennas")
    yield BlockEnd(2)
    yield BlockStart(3, "text")
    yield TextDelta(3, ", and it opened in ")
    yield BlockEnd(3)
    yield BlockStart(4, "text")
    yield Citation(4, Attribution(WIKI, excerpt="opened on 31 March 1889"))
    yield TextDelta(4, "1889")
    yield BlockEnd(4)
    yield BlockStart(5, "text")
    yield TextDelta(5, ".")
    yield BlockEnd(5)
    yield UsageUpdate(Usage(input=2417, output=312, cache_read=1024, hosted={"web_search": 1}))
    yield Finish("stop", raw="end_turn")


def plain(options: RenderOptions | None = None) -> tuple[Renderer, io.StringIO]:
    out = io.StringIO()
    return Renderer(Console(file=out, width=80), options), out


def play(renderer: Renderer, chunks: Iterator[Chunk]) -> None:
    drive_renderer(renderer, chunks)
    renderer.end_answer()


EXPECTED_PLAIN = """\
thinking: The user wants the height. I will search for it. (10 words)
searched "eiffel tower height" → 10 results
The tower is 330 metres tall including antennas[1][2], and it opened in 1889[1].

[1] Eiffel Tower - Wikipedia — en.wikipedia.org
    https://en.wikipedia.org/wiki/Eiffel_Tower
[2] Key figures — toureiffel.paris
    https://www.toureiffel.paris/en/the-monument/key-figures

usage: 2,417 in · 312 out · cache 1,024 read · 1 web search
"""


def test_plain_stream_exact() -> None:
    renderer, out = plain()
    play(renderer, search_answer())
    assert out.getvalue() == EXPECTED_PLAIN


def test_stored_parts_render_like_the_stream() -> None:
    result = Assembler().feed_all(list(search_answer()))
    renderer, out = plain()
    for part in result:
        renderer.part(part)
    renderer.add_usage(Usage(input=2417, output=312, cache_read=1024, hosted={"web_search": 1}))
    renderer.end_answer()
    assert out.getvalue() == EXPECTED_PLAIN


def test_full_citations_show_decoded_excerpts() -> None:
    renderer, out = plain(RenderOptions(citations="full", reasoning="hidden", usage=False))
    play(renderer, search_answer())
    assert out.getvalue() == (
        'searched "eiffel tower height" → 10 results\n'
        "The tower is 330 metres tall including antennas[1][2], and it opened in 1889[1].\n"
        "\n"
        "[1] Eiffel Tower - Wikipedia — en.wikipedia.org\n"
        "    https://en.wikipedia.org/wiki/Eiffel_Tower\n"
        "    “330 metres (1,083\xa0ft) tall”\n"
        "    “opened on 31 March 1889”\n"
        "[2] Key figures — toureiffel.paris\n"
        "    https://www.toureiffel.paris/en/the-monument/key-figures\n"
        "    “330 m”\n"
    )


def test_reasoning_full_mode() -> None:
    renderer, out = plain(RenderOptions(reasoning="full", usage=False))
    renderer.part(ReasoningBlock("Step one.\nStep two."))
    renderer.part(
        ReasoningBlock(
            "", (ProviderPayload(ProviderId("anthropic"), "redacted", None, "SECRETDATA"),)
        )
    )
    renderer.end_answer()
    assert out.getvalue() == "thinking:\n  Step one.\n  Step two.\nthinking (redacted)\n"
    assert "SECRETDATA" not in out.getvalue()


def test_ranged_citations_marked_at_range_end() -> None:
    notes = Footnotes()
    block = TextBlock(
        "Paris is in France. Berlin is in Germany.",
        (
            Attribution(Source("https://a.example/p", "A"), range=(0, 19)),
            Attribution(Source("https://b.example/q", "B"), range=(20, 41)),
            Attribution(Source("https://a.example/p", "A again"), range=(20, 41)),
        ),
    )
    assert cited_text(block, notes) == "Paris is in France.[1] Berlin is in Germany.[2][1]"
    assert cited_text(block, notes, escape=True) == (
        "Paris is in France.\\[1\\] Berlin is in Germany.\\[2\\]\\[1\\]"
    )
    assert notes.lines() == [
        "[1] A — a.example",
        "    https://a.example/p",
        "[2] B — b.example",
        "    https://b.example/q",
    ]


def test_footnote_without_url_and_with_unsafe_url() -> None:
    notes = Footnotes()
    notes.cite(Attribution(Source(None, "Annual report.pdf")))
    notes.cite(Attribution(Source("javascript:alert(1)", "Click me")))
    notes.cite(Attribution(Source("https://no-title.example/x")))
    assert notes.lines() == [
        "[1] Annual report.pdf",
        "[2] Click me — (javascript: link removed)",
        "[3] no-title.example",
        "    https://no-title.example/x",
    ]


def _act(name: str, state: str, data: object = None, summary: str = "") -> HostedActivity:
    return HostedActivity(ActivityId("a"), name, state, data, summary)  # type: ignore[arg-type]


def test_activity_lines() -> None:
    q = {"query": "best pizza"}
    assert activity_line(_act("web_search", "started", q)) == 'searching "best pizza"'
    assert (
        activity_line(_act("web_search", "completed", q, "10 results"))
        == 'searched "best pizza" → 10 results'
    )
    assert (
        activity_line(_act("web_search", "failed", q, "max_uses_exceeded"))
        == "search failed: max_uses_exceeded"
    )
    said = 'searched "best pizza" → 10 sources'
    assert activity_line(_act("web_search", "completed", q, said)) == said
    opened = "opened https://example.com/x"
    assert activity_line(_act("web_search", "completed", None, opened)) == opened
    started = _act("web_search", "started", q)
    assert (
        activity_line(_act("web_search", "completed", None, "3 results"), started)
        == 'searched "best pizza" → 3 results'
    )
    u = {"url": "https://www.example.com/page"}
    assert activity_line(_act("web_fetch", "started", u)) == "fetching example.com"
    assert activity_line(_act("web_fetch", "completed", u)) == "fetched example.com"
    assert (
        activity_line(_act("web_fetch", "completed", u, "fetched example.com"))
        == "fetched example.com"
    )
    assert (
        activity_line(_act("web_fetch", "failed", u, "url_not_accessible"))
        == "fetch failed: url_not_accessible"
    )
    code = {"code": "print(1)"}
    assert activity_line(_act("code_execution", "started", code)) == "code execution: print(1)"
    assert activity_line(_act("code_execution", "started")) == "running code"
    assert (
        activity_line(_act("code_execution", "completed", None, "exit 0"), _act("x", "started"))
        == "ran code → exit 0"
    )
    assert (
        activity_line(_act("code_execution", "failed", None, "unavailable"))
        == "code execution failed: unavailable"
    )
    assert activity_line(_act("mcp", "started")) == "MCP running"


def test_code_activity_lines_say_what_ran() -> None:
    """Anthropic's bash and text-editor helpers, OpenAI's and Gemini's code,
    under the one neutral name: the command, the editor command and file, or
    the code's first line."""
    bash = _act("code_execution", "started", {"command": "ls -la"})
    assert activity_line(bash) == "code execution: ls -la"
    assert (
        activity_line(_act("code_execution", "completed", None, "exit 0"), bash)
        == "code execution: ls -la → exit 0"
    )
    edit = {"command": "create", "path": "/tmp/fib.py", "file_text": "def fib(n): ..."}
    assert (
        activity_line(_act("code_execution", "completed", edit, "created file"))
        == "code execution: create /tmp/fib.py → created file"
    )
    program = {"code": "\nimport math\nprint(math.pi)\n", "container_id": "cntr_1"}
    assert (
        activity_line(_act("code_execution", "completed", program, "1 output"))
        == "code execution: import math … → 1 output"
    )
    gemini = {"language": "PYTHON", "code": "x = 2 ** 10"}
    assert activity_line(_act("code_execution", "started", gemini)) == "code execution: x = 2 ** 10"
    long = {"command": "echo " + "a" * 100}
    assert activity_line(_act("code_execution", "started", long)) == (
        "code execution: echo " + "a" * 74 + "…"
    )


def test_provider_names_stored_earlier_read_as_neutral() -> None:
    """Logs written before names were neutral hold provider names; they read the same."""
    ls = {"command": "ls"}
    assert activity_line(_act("bash_code_execution", "started", ls)) == "code execution: ls"
    assert (
        activity_line(_act("text_editor_code_execution", "completed", None, "exit 0"))
        == "ran code → exit 0"
    )
    assert (
        activity_line(_act("tool_search_tool_regex", "completed", None, "2 tools found"))
        == "tool search → 2 tools found"
    )
    assert activity_line(_act("google_search", "started", {"queries": ["a", "b"]})) == (
        'searching "a | b"'
    )
    assert activity_line(_act("url_context", "started", {"urls": ["https://x.example/a"]})) == (
        "fetching x.example"
    )


def test_other_activity_lines_use_words_and_the_gist_of_the_input() -> None:
    assert (
        activity_line(_act("tool_search", "completed", {"query": "weather"}, "2 tools found"))
        == "tool search: weather → 2 tools found"
    )
    assert (
        activity_line(_act("tool_search", "completed", {"pattern": "get_.*"}, "1 tool found"))
        == "tool search: get_.* → 1 tool found"
    )
    shell = {"commands": ["ls", "pwd"]}
    assert activity_line(_act("shell", "started", shell)) == "shell: ls | pwd"
    mcp = {"server_label": "deepwiki", "name": "ask_question", "arguments": "{}"}
    assert activity_line(_act("mcp", "completed", mcp, "called ask_question")) == (
        "MCP: ask_question → called ask_question"
    )
    assert activity_line(_act("mcp", "completed", {"server_label": "d"}, "3 tools")) == (
        "MCP → 3 tools"
    )
    assert activity_line(_act("image_generation", "started")) == "image generation running"
    assert activity_line(_act("image_generation", "completed", None, "generated png image")) == (
        "image generation → generated png image"
    )
    assert activity_line(_act("x_search", "started", {"query": "from:xai"})) == (
        "X search: from:xai"
    )
    # A name nobody mapped is shown as the provider spelled it.
    assert activity_line(_act("advisor", "completed", {}, "advice given")) == (
        "advisor → advice given"
    )
    assert activity_line(_act("advisor", "failed", None, "overloaded")) == (
        "advisor failed: overloaded"
    )
    assert activity_label("document_search") == "document search"


def test_unfinished_activity_reported_at_the_end() -> None:
    renderer, out = plain(RenderOptions(usage=False))
    drive_renderer(
        renderer, [ResponseStart("r", "m"), Hosted(_act("web_search", "started", {"query": "q"}))]
    )
    renderer.end_answer()
    assert out.getvalue() == 'searching "q" — did not finish\n'


def test_usage_line() -> None:
    usage = Usage(
        input=1_234_567,
        output=89,
        cache_read=10,
        cache_write=20,
        reasoning=30,
        hosted={"web_search": 2, "web_fetch": 1, "code_execution": 0, "custom": 4},
    )
    assert usage_line(usage) == (
        "usage: 1,234,567 in · 89 out · 30 reasoning · cache 10 read, 20 written"
        " · 2 web searches · 1 web fetch · 4 custom"
    )
    # Neutral names in words; a counter stored under a provider name adds up with its own.
    neutral = Usage(
        hosted={"tool_search": 1, "mcp": 3, "x_search": 2, "code_execution": 1},
    )
    assert usage_line(neutral) == (
        "usage: 0 in · 0 out · 1 tool search · 3 MCP calls · 2 X searches · 1 code execution"
    )
    legacy = Usage(hosted={"code_execution": 1, "code_interpreter": 2, "document_search": 1})
    assert usage_line(legacy) == ("usage: 0 in · 0 out · 3 code executions · 1 document_search")
    assert usage_line(Usage()) == "usage: 0 in · 0 out"


def test_reasoning_summary() -> None:
    assert reasoning_summary("one") == "thinking: one (1 word)"
    long = "word " * 50
    assert reasoning_summary(long) == "thinking: " + ("word " * 20).strip() + "… (50 words)"


def test_tools_unknown_and_payloads_never_shown() -> None:
    renderer, out = plain(RenderOptions(usage=False))
    secret = ProviderPayload(ProviderId("anthropic"), "signature", None, {"sig": "TOPSECRET"})
    renderer.part(ReasoningBlock("plan", (secret,)))
    renderer.part(ToolCallBlock(CallId("toolu_1"), "get_weather", '{"city": "Paris"}', (secret,)))
    renderer.part(ToolResultBlock(CallId("toolu_1"), "sunny, 21°C", name="get_weather"))
    renderer.part(ToolResultBlock(CallId("toolu_2"), "boom", is_error=True))
    renderer.part(UnknownBlock({"type": "mcp_tool_use", "secret": "TOPSECRET"}))
    renderer.part(TextBlock("done", payloads=(secret,)))
    renderer.end_answer()
    assert out.getvalue() == (
        "thinking: plan (1 word)\n"
        '→ get_weather({"city": "Paris"})\n'
        "← get_weather result: sunny, 21°C\n"
        "← toolu_2 error: boom\n"
        "[mcp_tool_use block kept, not shown]\n"
        "done\n"
    )


def test_interrupt_keeps_what_arrived() -> None:
    renderer, out = plain()
    chunks = list(search_answer())
    drive_renderer(renderer, chunks[:13])  # cut inside text block 2, after its first delta
    renderer.interrupt()
    assert out.getvalue() == (
        "thinking: The user wants the height. I will search for it. (10 words)\n"
        'searched "eiffel tower height" → 10 results\n'
        "The tower is 330 metres tall[1][2]\n"
        "interrupted: kept what arrived\n"
        "\n"
        "[1] Eiffel Tower - Wikipedia — en.wikipedia.org\n"
        "    https://en.wikipedia.org/wiki/Eiffel_Tower\n"
        "[2] Key figures — toureiffel.paris\n"
        "    https://www.toureiffel.paris/en/the-monument/key-figures\n"
    )


def test_finish_other_than_stop_is_said() -> None:
    renderer, out = plain(RenderOptions(usage=False))
    chunks = [
        ResponseStart("r", "m"),
        BlockStart(0, "text"),
        TextDelta(0, "Half"),
        BlockEnd(0),
        Finish("max-tokens", raw="max_tokens"),
    ]
    drive_renderer(renderer, chunks)
    renderer.end_answer()
    assert out.getvalue() == "Half\nstopped: max-tokens\n"


def test_user_line_and_static_terminal_styles() -> None:
    out = io.StringIO()
    console = Console(
        file=out, force_terminal=True, force_interactive=False, width=60, color_system="standard"
    )
    renderer = Renderer(console, RenderOptions(usage=False))
    renderer.user("What is **it**?")
    renderer.part(TextBlock("It is **bold**", (Attribution(WIKI),)))
    renderer.end_answer()
    assert out.getvalue() == (
        "\x1b[1m> What is **it**?\x1b[0m\n"
        "It is \x1b[1mbold\x1b[0m[1]" + " " * 47 + "\n"
        "\n"
        "\x1b[36m[1] Eiffel Tower - Wikipedia — en.wikipedia.org\x1b[0m\n"
        "\x1b[2m    https://en.wikipedia.org/wiki/Eiffel_Tower\x1b[0m\n"
    )


_LIVE_CONTROLS = re.compile(r"\x1b\[(?:[0-9;]*m|\?25[lh]|2K|[0-9]*A|[0-9]*G)")


def test_live_terminal_output_only_uses_our_own_sequences() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, force_interactive=True, width=80, height=24)
    renderer = Renderer(console, RenderOptions(reasoning="full"))
    assert renderer.live
    play(renderer, search_answer())
    text = out.getvalue()
    assert "\x1b" in text
    assert "\x1b" not in _LIVE_CONTROLS.sub("", text)
    visible = _LIVE_CONTROLS.sub("", text)
    assert (
        "The tower is 330 metres tall including antennas[1][2], and it opened in 1889[1]."
        in visible
    )
    assert 'searched "eiffel tower height" → 10 results' in visible
    assert "usage: 2,417 in · 312 out · cache 1,024 read · 1 web search" in visible
