"""The injection corpus: hostile text in every displayed field, rendered to a
terminal-width buffer.  Nothing but the renderer's own SGR styling may come out."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from elelem.render import Renderer, RenderOptions
from elelem.stream import (
    BlockEnd,
    BlockStart,
    Chunk,
    Citation,
    Finish,
    Hosted,
    ReasoningDelta,
    ResponseStart,
    TextDelta,
)
from elelem.vocabulary import (
    ActivityId,
    Attribution,
    CallId,
    HostedActivity,
    ReasoningBlock,
    Source,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
)
from render_streams import drive_renderer

# Each entry: a hostile payload and the markers that would prove it survived.
INJECTIONS = [
    "\x1b[2J\x1b[H",  # clear screen, cursor home
    "\x1b[10A\x1b[5C\x1b[K",  # cursor moves, erase
    "\x1b]8;;javascript:alert(1)\x1b\\OSC8LINK\x1b]8;;\x1b\\",  # hyperlink hiding its target
    "\x1b]8;;https://evil.example\x07OSC8B\x1b]8;;\x07",
    "\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07",  # clipboard write
    "\x1b]0;TITLEHIJACK\x1b\\",
    "\x1bP+q544e\x1b\\",  # DCS
    "\x1b_APCDATA\x1b\\\x1b^PMDATA\x1b\\\x1bXSOSDATA\x1b\\",
    "\x9b2J\x9d52;c;C1OSC\x9c\x85\x8d\x8e",  # 8-bit C1 forms
    "\x07\x08\x7f\x00\x0b\x0c",
    "SAFE\rFAKE",
    "\u202eRLO\u202c\u202dLRO\u2066LRI\u2069\u200f\u061c",
    "[clickme](javascript:alert(document.cookie))",
    "<javascript:alert(2)>",
    "[data](data:text/html;base64,PHNjcmlwdD4=)",
    "&#x1b;[31mENTITYESC &#x202E;ENTITYBIDI &#13;",
]
HOSTILE = "<<" + "|".join(INJECTIONS) + ">>"

# What must never be seen: raw escapes, payload parameters, clickable bad schemes.
NEVER = [
    "TITLEHIJACK",
    "Y3VybCBldmlsLnNofHNo",
    "C1OSC",
    "APCDATA",
    "PMDATA",
    "SOSDATA",
    "544e",
    "evil.example",
]

_SGR = re.compile(r"\x1b\[[0-9;]*m")
_FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def hostile_parts() -> list[object]:
    source = Source(url=f"javascript:alert(1)//{HOSTILE}", title=f"Title {HOSTILE}")
    good = Source(url=f"https://ok.example/{HOSTILE}", title=f"Good {HOSTILE}")
    search = HostedActivity(ActivityId("s1"), "web_search", "started", {"query": f"q {HOSTILE}"})
    fetch = HostedActivity(
        ActivityId("f1"), "web_fetch", "started", {"url": f"https://x.example/{HOSTILE}"}
    )
    code = HostedActivity(ActivityId("c1"), "code_execution", "started", {"code": HOSTILE})
    other = HostedActivity(ActivityId("o1"), f"tool{HOSTILE}", "started", {"x": HOSTILE})
    return [
        ReasoningBlock(f"thinking {HOSTILE}"),
        search,
        search.transition("completed", summary=f"results {HOSTILE}"),
        fetch,
        fetch.transition("failed", summary=f"error {HOSTILE}"),
        code,
        code.transition("completed", summary=f"exit {HOSTILE}"),
        other,
        other.transition("completed", summary=HOSTILE),
        TextBlock(
            f"Answer {HOSTILE} end",
            (
                Attribution(source, excerpt=f"excerpt {HOSTILE}"),
                Attribution(good, excerpt=f"good excerpt {HOSTILE}"),
            ),
        ),
        ToolCallBlock(
            CallId("t1"), f"tool{HOSTILE}", f'{{"a": "{HOSTILE}"}}'.replace("\\", "\\\\")
        ),
        ToolResultBlock(CallId("t1"), f"output {HOSTILE}", name=f"n{HOSTILE}"),
        UnknownBlock({"type": f"weird{HOSTILE}"}),
    ]


def render(console: Console, reasoning: str = "full") -> str:
    renderer = Renderer(console, RenderOptions(reasoning=reasoning, citations="full"))  # type: ignore[arg-type]
    for part in hostile_parts():
        renderer.part(part)  # type: ignore[arg-type]
    renderer.user(f"user says {HOSTILE}")
    renderer.notice(f"notice {HOSTILE}")
    renderer.end_answer()
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


def check_clean(out: str) -> str:
    visible = _SGR.sub("", out)
    assert "\x1b" not in visible, [m.start() for m in re.finditer("\x1b", visible)]
    bad = _FORBIDDEN.findall(visible.replace("\n", ""))
    assert bad == [], bad
    for marker in NEVER:
        assert marker not in visible, marker
    return visible


@pytest.mark.parametrize("width", [80, 40])
def test_terminal_buffer_keeps_only_our_sgr(width: int) -> None:
    console = Console(file=io.StringIO(), force_terminal=True, force_interactive=False, width=width)
    out = render(console)
    visible = check_clean(out)
    # What the hostile payloads leave visible: harmless text only.
    assert "OSC8LINK" in visible
    assert "RLOLROLRI" in visible
    assert "SAFE" in visible and "FAKE" in visible
    if width == 80:
        assert "unsafe-javascript-alert(document.cookie)" in visible


# The payload as it is left in one-line fields: escapes gone, text inert.
V = "<<||OSC8LINK|OSC8B|||||||SAFE FAKE|RLOLROLRI|[clickme](javascript:alert(document.cookie))|<javascript:alert(2)>|[data](data:text/html;base64,PHNjcmlwdD4=)|&#x1b;[31mENTITYESC &#x202E;ENTITYBIDI &#13;>>"


EXPECTED_PLAIN = (
    "thinking: thinking <<||OSC8LINK|OSC8B|||||||SAFE FAKE|RLOLROLRI|[clickme](javascript:alert(document.cookie))|… (5 words)\n"
    'searched "q <<||OSC8LINK|OSC8B|||||||SAFE FAKE|RLOLROLRI|[clickme](javascript:alert(document.cookie))|<javasc…" → results <<||OSC8LINK|OSC8B|||||||SAFE FAKE|RLOLROLRI|[clickme](javascript:alert(document.cookie))|<javascript:alert(2)>…\n'
    "fetch failed: error <<||OSC8LINK|OSC8B|||||||SAFE FAKE|RLOLROLRI|[clickme](javascript:alert(document.cookie))|<javascript:alert(2)>|[…\n"
    # The code's first line (the payload breaks its line at \x0b), then the summary.
    "code execution: <<||OSC8LINK|OSC8B||||| … → exit <<||OSC8LINK|OSC8B|||||||SAFE FAKE|RLOLROLRI|[clickme](javascript:alert(document.cookie))|<javascript:alert(2)>|[d…\n"
    "tool<<||OSC8LINK|OSC8B|||||||SAFE FAKE|RLOLROLRI|[clickme](… → <<||OSC8LINK|OSC8B|||||||SAFE FAKE|RLOLROLRI|[clickme](javascript:alert(document.cookie))|<javascript:alert(2)>|[data](…\n"
    "Answer <<||OSC8LINK|OSC8B|||||||SAFE\n"
    "FAKE|RLOLROLRI|[clickme](unsafe-javascript-alert(document.cookie))|\\<unsafe-javascript-alert(2)\\>|[data](unsafe-data-text/html;base64,PHNjcmlwdD4=)|&#x1b;[31mENTITYESC &#x202E;ENTITYBIDI &#13;>> end[1][2]\n"
    "→ tool"
    + V
    + '({"a": "<<||\\OSC8LINK\\|OSC8B||\\|\\|\\\\\\|||SAFE FAKE|RLOLROLRI|[clickme](javascript:alert(document.cookie))|<javascript:alert(2)>|[data](data:text/html;base64,PHNjcmlwdD4=)|&#x1b;[31mENTITYESC &#x202E;EN…)\n'
    "← n"
    + V
    + " result: output <<||OSC8LINK|OSC8B|||||||SAFE FAKE|RLOLROLRI|[clickme](javascript:alert(document.cookie))|<javascript:alert(2)>|[data](data:text/html;base64,PHNjcmlwdD4=)|&#x1b;[31mENTITYESC &#x202E;ENTITYBID…\n"
    "[weird<<||OSC8LINK|OSC8B|||||||SAFE FAKE|RLOLROLRI|[clickme]… block kept, not shown]\n"
    "> user says <<||OSC8LINK|OSC8B|||||||SAFE\n"
    "> FAKE|RLOLROLRI|[clickme](javascript:alert(document.cookie))|<javascript:alert(2)>|[data](data:text/html;base64,PHNjcmlwdD4=)|&#x1b;[31mENTITYESC &#x202E;ENTITYBIDI &#13;>>\n"
    "notice " + V + "\n"
    "\n"
    "[1] Title " + V + " — (javascript: link removed)\n"
    "    “excerpt <<||OSC8LINK|OSC8B|||||||SAFE\n"
    "      FAKE|RLOLROLRI|[clickme](javascript:alert(document.cookie))|<javascript:alert(2)>|[data](data:text/html;base64,PHNjcmlwdD4=)|[31mENTITYESC ENTITYBIDI \n"
    "      >>”\n"
    "[2] Good " + V + " — ok.example\n"
    "    https://ok.example/" + V + "\n"
    "    “good excerpt <<||OSC8LINK|OSC8B|||||||SAFE\n"
    "      FAKE|RLOLROLRI|[clickme](javascript:alert(document.cookie))|<javascript:alert(2)>|[data](data:text/html;base64,PHNjcmlwdD4=)|[31mENTITYESC ENTITYBIDI \n"
    "      >>”\n"
)


def test_plain_output_exact_bytes() -> None:
    out = render(Console(file=io.StringIO(), width=80), reasoning="summary")
    check_clean(out)
    assert out == EXPECTED_PLAIN
    # Markdown links with other schemes are disarmed in the answer text.
    answer = next(line for line in out.splitlines() if line.startswith("FAKE|"))
    assert "](javascript:" not in answer and "<javascript:" not in answer


_LIVE_OWN = re.compile(r"\x1b\[(?:[0-9;]*m|\?25[lh]|2K|[0-9]*A|[0-9]*G)")


def hostile_stream() -> list[Chunk]:
    search = HostedActivity(ActivityId("s1"), "web_search", "started", {"query": HOSTILE})
    chunks: list[Chunk] = [ResponseStart("msg_x", "m"), BlockStart(0, "reasoning")]
    # Deltas cut every 3 code points: escape sequences arrive split.
    chunks += [ReasoningDelta(0, HOSTILE[i : i + 3]) for i in range(0, len(HOSTILE), 3)]
    chunks += [BlockEnd(0), Hosted(search), Hosted(search.transition("failed", summary=HOSTILE))]
    chunks += [
        BlockStart(1, "text"),
        Citation(1, Attribution(Source(HOSTILE, HOSTILE), excerpt=HOSTILE)),
    ]
    chunks += [TextDelta(1, HOSTILE[i : i + 3]) for i in range(0, len(HOSTILE), 3)]
    chunks += [BlockEnd(1), Finish("error", failure=HOSTILE)]
    return chunks


@pytest.mark.parametrize("mode", ["live", "static", "plain"])
def test_streamed_hostile_content(mode: str) -> None:
    out = io.StringIO()
    console = Console(
        file=out,
        force_terminal=mode != "plain",
        force_interactive=mode == "live",
        width=80,
        height=30,
    )
    renderer = Renderer(console, RenderOptions(reasoning="full", citations="full"))
    assert renderer.live == (mode == "live")
    drive_renderer(renderer, hostile_stream())
    renderer.end_answer()
    text = out.getvalue()
    visible = _LIVE_OWN.sub("", text) if mode == "live" else text
    # Live redraws use CR to return to the line start; nothing else of ours does.
    check_clean(visible.replace("\r", "") if mode == "live" else visible)
    if mode == "plain":
        assert "\x1b" not in text
        assert text.endswith(
            "\n[1] " + V + " — (unsupported: link removed)\n"
            "    “<<||OSC8LINK|OSC8B|||||||SAFE\n"
            "      FAKE|RLOLROLRI|[clickme](javascript:alert(document.cookie))|<javascript:alert(2)>|[data](data:text/html;base64,PHNjcmlwdD4=)|[31mENTITYESC ENTITYBIDI \n"
            "      >>”\n"
        )
