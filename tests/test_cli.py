"""`elelem` commands run as subprocesses against loopback servers, exact output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_helpers import (
    CONVERSATION_LINE,
    EXPECTED_ANSWER,
    KEY,
    MODEL,
    QUESTION,
    base_env,
    demo_body,
    run,
    text_reply,
)
from elelem.providers import BUILTIN
from elelem.providers.models import DEFAULT_MODELS
from elelem.testing.servers import LoopbackServer, frame_ends, replay, status, truncate

LOG_LINE = re.compile(
    r"^(c_[0-9a-f]{16})  \d{4}-\d\d-\d\d \d\d:\d\d  +(\d+) turns?  anthropic:claude-sonnet-4-5  "
    r"(\$[0-9.]+|cost unknown)  (.*)$"
)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return base_env(tmp_path)


def with_server(env: dict[str, str], server: LoopbackServer) -> dict[str, str]:
    return {**env, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}


def test_ask_web_search_with_citations_exact(env: dict[str, str]) -> None:
    with LoopbackServer([replay(demo_body(), chunk_size=97)]) as server:
        result = run(with_server(env, server), "ask", "-m", MODEL, "--web-search", QUESTION)
    assert result.returncode == 0, result.stderr
    assert result.stdout == EXPECTED_ANSWER
    assert CONVERSATION_LINE.match(result.stderr)
    sent = server.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == KEY
    body = json.loads(sent.body)
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": QUESTION}]}]
    assert body["tools"] == [{"type": "web_search_20250305", "name": "web_search"}]
    assert body["stream"] is True


def test_log_show_and_native_continuation(env: dict[str, str]) -> None:
    follow = "It weighs about 10,100 tonnes."
    with LoopbackServer([replay(demo_body()), replay(text_reply(follow))]) as server:
        e = with_server(env, server)
        first = run(e, "ask", "-m", MODEL, "--web-search", QUESTION)
        assert first.returncode == 0, first.stderr
        cid = CONVERSATION_LINE.match(first.stderr).group(1)  # type: ignore[union-attr]

        listed = run(e, "log")
        assert listed.returncode == 0 and listed.stderr == ""
        line = LOG_LINE.match(listed.stdout.rstrip("\n"))
        assert line and line.groups() == (cid, "1", "$0.0459", QUESTION)

        shown = run(e, "show", cid[:6])
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout == listed.stdout + f"> {QUESTION}\n" + EXPECTED_ANSWER

        second = run(e, "ask", "-c", "And how much does it weigh?")
        assert second.returncode == 0, second.stderr
        assert second.stdout == f"{follow}\n\nusage: 120 in · 9 out · $0.0005\n"
        assert second.stderr == f"conversation {cid}\n"

    # The follow-up replays the first answer natively: thinking with its
    # signature, the server tool blocks with encrypted content, citations
    # with encrypted_index, in the order they arrived.
    replayed = json.loads(server.requests[1].body)
    assert [m["role"] for m in replayed["messages"]] == ["user", "assistant", "user"]
    blocks = replayed["messages"][1]["content"]
    assert [b["type"] for b in blocks] == [
        "thinking",
        "text",
        "server_tool_use",
        "web_search_tool_result",
        "text",
        "text",
        "text",
        "text",
        "text",
        "text",
        "text",
        "text",
        "text",
    ]
    recorded = demo_body().decode()
    signature = re.search(r'"signature_delta","signature":"([^"]+)"', recorded)
    assert signature and blocks[0]["signature"] == signature.group(1)
    assert blocks[2]["input"] == {"query": "Eiffel Tower height and completion date"}
    assert [r["encrypted_content"] for r in blocks[3]["content"]] == re.findall(
        r'"encrypted_content":"([^"]+)"', recorded
    )
    assert [c["url"] for c in blocks[5]["citations"]] == [
        "https://en.wikipedia.org/wiki/Eiffel_Tower",
        "https://www.toureiffel.paris/en/the-monument/key-figures",
    ]
    assert [c["encrypted_index"] for c in blocks[5]["citations"]] == re.findall(
        r'"encrypted_index":"([^"]+)"', recorded
    )[:2]
    assert replayed["messages"][2]["content"][-1]["text"] == "And how much does it weigh?"

    relisted = run(e, "log")
    assert LOG_LINE.match(relisted.stdout.rstrip("\n")).groups() == (cid, "2", "$0.0464", QUESTION)  # type: ignore[union-attr]


def test_export_import_round_trip(env: dict[str, str], tmp_path: Path) -> None:
    with LoopbackServer([replay(demo_body())]) as server:
        e = with_server(env, server)
        assert run(e, "ask", "-m", MODEL, QUESTION).returncode == 0
    out = tmp_path / "c.ndjson"
    exported = run(e, "export", "-o", str(out))
    assert exported.returncode == 0 and exported.stdout == "" and exported.stderr == ""
    data = out.read_bytes()
    header = json.loads(data.split(b"\n", 1)[0])
    assert header["format"] == "elelem.conversation" and header["version"] == 1

    other = base_env(tmp_path / "elsewhere")
    imported = run(other, "import", str(out))
    assert imported.returncode == 0, imported.stderr
    assert (
        imported.stdout == f"imported {header['conversation']['id']} ({header['events']} events)\n"
    )
    again = tmp_path / "again.ndjson"
    assert run(other, "export", header["conversation"]["id"], "-o", str(again)).returncode == 0
    assert again.read_bytes() == data  # byte-identical after export -> import -> export

    refused = run(other, "import", str(out))
    assert refused.returncode == 3
    assert refused.stdout == ""
    assert refused.stderr.startswith("elelem: ") and refused.stderr.count("\n") == 1

    piped = run(e, "export")  # stdout is a pipe here: the NDJSON itself
    assert piped.returncode == 0 and piped.stdout.encode() == data


def test_json_events(env: dict[str, str]) -> None:
    with LoopbackServer([replay(demo_body())]) as server:
        result = run(with_server(env, server), "ask", "-m", MODEL, "--json", QUESTION)
    assert result.returncode == 0, result.stderr
    assert result.stdout.isascii()
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["type"] == "response-start"
    assert lines[0]["response_id"] == "msg_01HnR4ZtV9wq8aXcE2bJmPkD"
    assert lines[0]["model"] == "claude-sonnet-4-5-20250929"
    kinds = [line["type"] for line in lines]
    assert kinds.count("citation") == 6
    assert kinds.count("hosted") == 2
    assert (lines[-2]["type"], lines[-2]["reason"], lines[-2]["raw"]) == (
        "finish",
        "stop",
        "end_turn",
    )
    assert (
        lines[-1]["type"] == "turn" and lines[-1]["turn"] == 1 and lines[-1]["end"] == "completed"
    )


def test_no_store_keeps_nothing(env: dict[str, str]) -> None:
    with LoopbackServer([replay(text_reply("Hi."))]) as server:
        result = run(with_server(env, server), "ask", "-m", MODEL, "--no-store", "hello")
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        "Hi.\n\nusage: 120 in · 9 out · $0.0005\n",
        "",
    )
    listed = run(env, "log")
    assert (listed.returncode, listed.stdout, listed.stderr) == (0, "", "no conversations yet\n")


def test_prompt_from_stdin(env: dict[str, str]) -> None:
    with LoopbackServer([replay(text_reply("Piped."))]) as server:
        result = run(with_server(env, server), "ask", "-m", MODEL, stdin="from a pipe\n")
    assert result.returncode == 0 and result.stdout.startswith("Piped.\n")
    assert json.loads(server.requests[0].body)["messages"][0]["content"][0]["text"] == "from a pipe"


def test_provider_error_is_one_line_exit_1(env: dict[str, str]) -> None:
    error = (
        b'{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}'
    )
    with LoopbackServer([status(401, error), status(401, error)]) as server:
        e = with_server(env, server)
        result = run(e, "ask", "-m", MODEL, "hi")
        debug = run(e, "ask", "-m", MODEL, "--debug", "hi")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        "elelem: authentication: anthropic 401 authentication_error: invalid x-api-key\n"
    )
    assert KEY not in result.stderr
    assert (
        debug.returncode == 1
        and "Traceback" in debug.stderr
        and "AuthenticationError" in debug.stderr
    )


def test_stream_cut_short_keeps_what_arrived(env: dict[str, str]) -> None:
    body = demo_body()
    # Cut right after the first cited block's last delta, before its block stop.
    cut = body.index(b'"its top"')
    at = next(end for end in frame_ends(body) if end > cut)
    with LoopbackServer([truncate(body, at)]) as server:
        e = with_server(env, server)
        result = run(e, "ask", "-m", MODEL, QUESTION)
    assert result.returncode == 1
    assert result.stdout == (
        "thinking: The user wants the current height of the Eiffel Tower and when it was finished."
        " The height has chan… (45 words)\n"
        "I'll look up the current figures.\n"
        'searched "Eiffel Tower height and completion date" → 5 results\n'
        "**Height.** The tower is 330 metres (1,083 ft) tall, including the antennas at its top[1][2]\n"
        "stopped by an error: kept what arrived\n"
        "\n"
        "[1] Eiffel Tower - Wikipedia — en.wikipedia.org\n"
        "    https://en.wikipedia.org/wiki/Eiffel_Tower\n"
        "[2] The Eiffel Tower in figures | Official website — toureiffel.paris\n"
        "    https://www.toureiffel.paris/en/the-monument/key-figures\n"
        "\n"
        "usage: 2,164 in · 4 out · $0.0066\n"  # as far as message_start counted
    )
    assert (
        result.stderr.startswith("elelem: incomplete-stream: ") and result.stderr.count("\n") == 1
    )
    shown = run(e, "show")
    assert shown.returncode == 0
    assert shown.stdout.endswith(
        "**Height.** The tower is 330 metres (1,083 ft) tall, including the antennas at its top[1][2]\n"
        "failed: incomplete-stream: the stream ended after 7869 bytes without a terminal event "
        "(kept what arrived)\n"
        "\n"
        "[1] Eiffel Tower - Wikipedia — en.wikipedia.org\n"
        "    https://en.wikipedia.org/wiki/Eiffel_Tower\n"
        "[2] The Eiffel Tower in figures | Official website — toureiffel.paris\n"
        "    https://www.toureiffel.paris/en/the-monument/key-figures\n"
        "\n"
        "usage: 2,164 in · 4 out · $0.0066\n"  # as far as message_start counted
    )


@pytest.mark.parametrize(
    ("args", "extra", "message"),
    [
        (("ask", "-m", "nosuch:model", "hi"), {}, "elelem: unknown provider 'nosuch' (known: "),
        (
            ("ask", "-m", "anthropic:claude", "hi"),
            {},
            "elelem: provider anthropic needs an API key: run 'elelem keys set anthropic' or set ANTHROPIC_API_KEY\n",
        ),
        (
            ("ask", "hi"),
            {},
            "elelem: no model given and no provider key set: pass -m provider:model or set a key such as ANTHROPIC_API_KEY (see `elelem providers`)\n",
        ),
        (("ask",), {}, "elelem: nothing to ask: give a PROMPT or pipe it on stdin\n"),
        (("show", "c_nope"), {}, "elelem: no conversation 'c_nope' in this store\n"),
        (
            ("import", "/nonexistent/file"),
            {},
            "elelem: /nonexistent/file: No such file or directory\n",
        ),
    ],
)
def test_usage_errors_exit_2(
    env: dict[str, str], args: tuple[str, ...], extra: dict[str, str], message: str
) -> None:
    result = run({**env, **extra}, *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert run(env, "log").stdout == ""  # nothing half-stored


def test_providers_lists_keys_without_values(env: dict[str, str]) -> None:
    result = run(
        {**env, "ANTHROPIC_API_KEY": KEY, "ELELEM_OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
        "providers",
    )
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert KEY not in result.stdout
    anthropic = next(line for line in lines if line.startswith("anthropic "))
    assert re.fullmatch(
        r"anthropic +anthropic_messages +key set \(ANTHROPIC_API_KEY\) +https://api\.anthropic\.com",
        anthropic,
    )
    openai = next(line for line in lines if line.startswith("openai "))
    assert re.fullmatch(
        r"openai +openai_responses +missing: elelem keys set openai, or OPENAI_API_KEY +http://127\.0\.0\.1:9/v1",
        openai,
    )
    ollama = next(line for line in lines if line.startswith("ollama "))
    assert "no key needed" in ollama
    assert lines[-1] == "default model: anthropic:claude-sonnet-4-5"


BEDROCK_DEFAULT = "bedrock:global.anthropic.claude-sonnet-4-5-20250929-v1:0"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"


def test_every_provider_that_needs_a_key_has_a_default_model() -> None:
    # Vertex AI serves models of fixed names; an Azure model is the user's
    # own deployment name, so Azure has no default.
    # (A provider with no model known offline has no default: name one.)
    needs = [s.name for s in BUILTIN if (s.key_required or s.cloud == "vertex") and s.models]
    assert sorted(DEFAULT_MODELS) == sorted(needs)
    assert DEFAULT_MODELS["bedrock"] == "global.anthropic.claude-sonnet-4-5-20250929-v1:0"


def test_bedrock_is_the_default_with_its_api_key_or_aws_credentials(env: dict[str, str]) -> None:
    keyed = run({**env, "AWS_BEARER_TOKEN_BEDROCK": KEY}, "providers")
    lines = keyed.stdout.splitlines()
    bedrock = next(line for line in lines if line.startswith("bedrock "))
    assert re.fullmatch(
        r"bedrock +bedrock_converse +key set \(AWS_BEARER_TOKEN_BEDROCK\) +"
        r"https://bedrock-runtime\.us-east-1\.amazonaws\.com",
        bedrock,
    )
    assert lines[-1] == f"default model: {BEDROCK_DEFAULT}"
    iam = {**env, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": AWS_SECRET}
    signed = run(iam, "providers")
    assert AWS_SECRET not in signed.stdout
    lines = signed.stdout.splitlines()
    bedrock = next(line for line in lines if line.startswith("bedrock "))
    assert re.fullmatch(
        r"bedrock +bedrock_converse +AWS credentials set \(AWS_ACCESS_KEY_ID\) +https://.*", bedrock
    )
    assert lines[-1] == f"default model: {BEDROCK_DEFAULT}"
    # Another provider's key comes first in the table of defaults.
    both = run({**iam, "ANTHROPIC_API_KEY": KEY}, "providers").stdout.splitlines()
    assert both[-1] == "default model: anthropic:claude-sonnet-4-5"
    missing = run(env, "providers").stdout.splitlines()
    bedrock = next(line for line in missing if line.startswith("bedrock "))
    assert re.fullmatch(
        r"bedrock +bedrock_converse +missing: elelem keys set bedrock, or "
        r"AWS_BEARER_TOKEN_BEDROCK or AWS credentials +https://.*",
        bedrock,
    )


def test_help_documents_exit_statuses(env: dict[str, str]) -> None:
    result = run(env, "--help")
    assert result.returncode == 0
    flat = " ".join(result.stdout.split())
    assert "Exit statuses: 0 success; 1 the provider or the stream failed" in flat
    assert "130 interrupted" in flat
    for command in (
        "ask",
        "chat",
        "log",
        "show",
        "export",
        "import",
        "inspect",
        "providers",
        "demo",
    ):
        assert re.search(rf"^  {command} ", result.stdout, re.M), command


HOSTILE = "Click \x1b]8;;javascript:alert(1)\x1b\\here\x1b]8;;\x1b\\ \x1b[2J\u202eevil\u202c \x1b]52;c;cGF5bG9hZA==\x07done"


def test_hostile_answer_shown_clean_and_stored_exact(env: dict[str, str]) -> None:
    with LoopbackServer([replay(text_reply(HOSTILE))]) as server:
        e = with_server(env, server)
        result = run(e, "ask", "-m", MODEL, "--system", "Be brief.", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Click here evil done\n\nusage: 120 in · 9 out · $0.0005\n"
    sent = json.loads(server.requests[0].body)
    assert sent["system"] in ("Be brief.", [{"type": "text", "text": "Be brief."}])
    exported = run(e, "export")
    texts = [
        block["text"]
        for line in exported.stdout.splitlines()[1:]
        for event in [json.loads(line)]
        if event["kind"] == "message" and event["body"]["role"] == "assistant"
        for block in event["body"]["content"]
    ]
    assert texts == [HOSTILE]  # the log keeps the bytes the provider sent


def test_default_model_from_config_then_env(env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('model = "openai:gpt-5-mini"\n', encoding="utf-8")
    e = {**env, "ELELEM_CONFIG": str(config), "ANTHROPIC_API_KEY": KEY}
    assert run(e, "providers").stdout.splitlines()[-1] == "default model: openai:gpt-5-mini"
    e["ELELEM_MODEL"] = "deepseek:deepseek-chat"
    assert run(e, "providers").stdout.splitlines()[-1] == "default model: deepseek:deepseek-chat"
    missing = run(e, "ask", "hi")  # the default's key is not set: said before anything is stored
    assert (missing.returncode, missing.stderr) == (
        2,
        "elelem: provider deepseek needs an API key: run 'elelem keys set deepseek' or set DEEPSEEK_API_KEY\n",
    )


def test_an_internal_error_is_one_line_exit_70() -> None:
    import click
    from click.testing import CliRunner

    from elelem.cli.exits import debug_option, guarded

    @click.command()
    @debug_option
    @guarded
    def boom() -> None:
        raise KeyError("gemini_interactions")

    quiet = CliRunner().invoke(boom, [])
    assert quiet.exit_code == 70
    assert quiet.output == (
        "elelem: internal error: KeyError: 'gemini_interactions' (--debug shows the traceback)\n"
    )
    loud = CliRunner().invoke(boom, ["--debug"])
    assert isinstance(loud.exception, KeyError)


OPENAI_FOOTNOTES = """
[1] Petco confirms security lapse exposed customers’ personal data | TechCrunch — techcrunch.com
    https://techcrunch.com/2025/12/05/petco-confirms-security-lapse-exposed-customers-personal-data/?utm_source=openai
[2] The New York Times is suing Perplexity for copyright infringement | TechCrunch — techcrunch.com
    https://techcrunch.com/2025/12/05/the-new-york-times-is-suing-perplexity-for-copyright-infringement/?utm_source=openai
[3] Meta signs commercial AI data agreements with publishers to offer real-time news on Meta AI | TechCrunch — techcrunch.com
    https://techcrunch.com/2025/12/05/meta-signs-commercial-ai-data-agreements-with-publishers-to-offer-real-time-news-on-meta-ai/?utm_source=openai
[4] Netflix to acquire Warner Bros. in a disruptive deal valued at $82.7B | TechCrunch — techcrunch.com
    https://techcrunch.com/2025/12/05/netflix-to-acquire-warner-bros-in-a-disruptive-deal-valued-at-82-7b/?utm_source=openai
[5] Check Out Highlights From WIRED's Big Interview Event — wired.com
    https://www.wired.com/story/the-big-interview-2025-recap?utm_source=openai
[6] Technology News Today – The Latest in Tech, AI & Startup News, December 5, 2025 - Tech Startups — techstartups.com
    https://techstartups.com/2025/12/05/technology-news-today-the-latest-in-tech-ai-startup-news-december-5-2025/?utm_source=openai
[7] AI coding startup Vercel raises $300 million, valued at $9.3 billion — finance.yahoo.com
    https://finance.yahoo.com/news/ai-coding-startup-vercel-raises-163055044.html?utm_source=openai

usage: 27,361 in · 704 out · 3,712 reasoning · cache 3,712 read · 6 web searches · $0.0758
"""


def test_ask_openai_responses_web_search_ranged_citations(
    env: dict[str, str], corpus: Path
) -> None:
    from elelem.recordings.cassettes import load

    name = "vercel__ai/packages__openai__src__responses____fixtures____openai-web-search-tool.1.chunks.txt"
    if not (corpus / name).is_file():
        pytest.skip(f"{name} is not in this corpus")
    body = load(corpus / name).interactions[0].response.body
    with LoopbackServer([replay(body)]) as server:
        e = {**env, "OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": KEY}
        result = run(e, "ask", "-m", "openai:gpt-5-mini", "--web-search", "What is new in tech?")
    assert result.returncode == 0, result.stderr
    assert server.requests[0].path == "/v1/responses"
    assert result.stdout.startswith(
        'thinking (redacted)\nsearched "tech news today December 5 2025" → 10 sources\n'
    )
    # OpenAI anchors each citation to a range: the marker follows its end.
    assert (
        "- Petco disclosed a customer-data exposure / security lapse. ([techcrunch.com]"
        "(https://techcrunch.com/2025/12/05/petco-confirms-security-lapse-exposed-customers"
        "-personal-data/?utm_source=openai))[1]  \n"
    ) in result.stdout
    assert result.stdout.endswith(OPENAI_FOOTNOTES)
