"""`-o KEY VALUE`, `--effort`, `--reasoning` asking for reasoning, and `--schema`:
what each puts on the wire and what the command prints, exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import KEY, base_env, run, text_reply
from elelem.cli.options import SchemaMismatch, check_answer, concise_schema, generation_options
from elelem.errors import ConfigError
from elelem.testing.servers import LoopbackServer, replay, sse_body
from elelem.vocabulary import GenerationOptions, ReasoningOptions


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return base_env(tmp_path)


def ask(env: dict[str, str], reply: bytes, *args: str) -> tuple[object, dict[str, object]]:
    with LoopbackServer([replay(reply)]) as server:
        e = {**env, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}
        result = run(e, "ask", "--no-store", "-m", "sonnet", *args, "question")
    body = json.loads(server.requests[0].body) if server.requests else {}
    return result, body


def test_dash_o_sets_each_option_on_the_wire(env: dict[str, str]) -> None:
    result, body = ask(
        env,
        text_reply("Hi."),
        "-o", "temperature", "0.2",
        "-o", "top-p", "0.9",
        "-o", "max_tokens", "77",
        "-o", "stop", "END",
        "-o", "stop", "STOP",
        "-o", "reasoning-budget", "2048",
        "-o", "extra.metadata", '{"user_id": "u-1"}',
    )  # fmt: skip
    assert result.returncode == 0, result.stderr  # type: ignore[attr-defined]
    assert body["temperature"] == 0.2
    assert body["top_p"] == 0.9
    assert body["max_tokens"] == 77
    assert body["stop_sequences"] == ["END", "STOP"]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["metadata"] == {"user_id": "u-1"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-o", "temprature", "1"), "elelem: unknown option -o 'temprature' (known: "),
        (("-o", "temperature", "hot"), "elelem: -o temperature takes a number, not 'hot'\n"),
        (("-o", "temperature", "3"), "elelem: -o temperature must be between 0 and 2, not 3\n"),
        (("-o", "max-tokens", "0"), "elelem: -o max_tokens must be at least 1, not 0\n"),
        (
            ("-o", "reasoning-effort", "max"),
            "elelem: -o reasoning_effort takes one of minimal, low, medium, high, not 'max'\n",
        ),
        (("--schema", "name, age integer"), "elelem: --schema: field 'age' has type 'integer'"),
    ],
)
def test_bad_options_are_one_line_exit_2_before_any_request(
    env: dict[str, str], args: tuple[str, ...], message: str
) -> None:
    result, body = ask(env, text_reply("never sent"), *args)
    assert result.returncode == 2  # type: ignore[attr-defined]
    assert result.stderr.startswith(message)  # type: ignore[attr-defined]
    assert body == {}


def test_effort_and_reasoning_reach_an_openai_request(env: dict[str, str]) -> None:
    frames = [
        ("response.created", '{"type":"response.created","response":{"id":"resp_1","model":"m","status":"in_progress","output":[]}}'),
        ("response.completed", '{"type":"response.completed","response":{"id":"resp_1","model":"m","status":"completed","output":[]}}'),
    ]  # fmt: skip
    bodies = []
    for args in (("--effort", "high"), ("--reasoning", "full"), ()):
        with LoopbackServer([replay(sse_body(frames))]) as server:
            e = {**env, "OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": KEY}
            result = run(e, "ask", "--no-store", "-m", "openai:gpt-5", *args, "q")
        assert result.returncode == 0, result.stderr
        bodies.append(json.loads(server.requests[0].body))
    with_effort, shown, default = bodies
    assert with_effort["reasoning"] == {"effort": "high", "summary": "auto"}
    assert shown["reasoning"] == {"summary": "auto"}
    assert "reasoning" not in default


def test_generation_options_reads_every_key() -> None:
    options = generation_options(
        [("temperature", "1"), ("stop", "a"), ("tool-choice", "auto"), ("reasoning_effort", "low")],
        max_tokens=5,
        effort="high",
    )
    assert options == GenerationOptions(
        max_tokens=5,
        temperature=1.0,
        stop=("a",),
        tool_choice="auto",
        reasoning=ReasoningOptions(effort="high"),
    )
    assert generation_options([], show_reasoning=True).reasoning == ReasoningOptions()


def test_concise_schema_syntax() -> None:
    assert concise_schema("name, age int, height float: in metres, alive bool") == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer"},
            "height": {"type": "number", "description": "in metres"},
            "alive": {"type": "boolean"},
        },
        "required": ["name", "age", "height", "alive"],
        "additionalProperties": False,
    }
    # New lines separate fields when there are any, so descriptions may hold commas.
    assert concise_schema("bio: short, punchy\nname")["properties"] == {
        "bio": {"type": "string", "description": "short, punchy"},
        "name": {"type": "string"},
    }
    with pytest.raises(ConfigError, match="names no field"):
        concise_schema(" , ")


def test_check_answer_says_where() -> None:
    schema = concise_schema("name, age int")
    assert check_answer('{"name": "Ada", "age": 36}', schema) == {"name": "Ada", "age": 36}
    with pytest.raises(SchemaMismatch) as info:
        check_answer('{"name": "Ada", "age": "old"}', schema)
    assert (
        str(info.value)
        == "the answer does not match the schema at $.age: 'old' is not of type 'integer'"
    )
    with pytest.raises(SchemaMismatch, match="the answer is not JSON"):
        check_answer("Sure! Here it is", schema)


def test_schema_goes_out_and_the_answer_is_checked(env: dict[str, str], tmp_path: Path) -> None:
    answer = '{"name": "Ada Lovelace", "age": 36}'
    result, body = ask(env, text_reply(answer), "--schema", "name, age int")
    assert result.returncode == 0, result.stderr  # type: ignore[attr-defined]
    assert result.stdout.startswith(answer + "\n")  # type: ignore[attr-defined]
    assert body["output_config"]["format"]["schema"] == concise_schema("name, age int")  # type: ignore[index]
    # --json: the object alone, one line.
    result, _ = ask(env, text_reply(answer), "--schema", "name, age int", "--json")
    assert result.stdout == '{"name":"Ada Lovelace","age":36}\n'  # type: ignore[attr-defined]
    # A schema file; an answer that does not match fails with exit 1.
    file = tmp_path / "person.json"
    file.write_text(
        json.dumps(
            {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
        )
    )
    result, body = ask(env, text_reply('{"nom": "Ada"}'), "--schema", str(file))
    assert result.returncode == 1  # type: ignore[attr-defined]
    assert result.stderr == (  # type: ignore[attr-defined]
        "elelem: the answer does not match the schema at $: 'name' is a required property"
        " (the answer is kept in the conversation)\n"
    )
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "objekt"}')
    result, body = ask(env, text_reply("x"), "--schema", str(bad))
    assert result.returncode == 2  # type: ignore[attr-defined]
    assert result.stderr.startswith(f"elelem: {bad}: not a valid JSON Schema: ")  # type: ignore[attr-defined]
    assert body == {}


def test_what_was_not_sent_is_one_line_under_the_answer_and_a_json_event(
    env: dict[str, str],
) -> None:
    result, body = ask(env, text_reply("Hi."), "-o", "seed", "3")
    assert result.returncode == 0, result.stderr  # type: ignore[attr-defined]
    assert "seed" not in body
    lines = result.stdout.splitlines()  # type: ignore[attr-defined]
    assert lines[-1].startswith("not sent: ")
    assert "seed" in lines[-1] and "Anthropic Messages takes no sampling seed" in lines[-1]
    result, _ = ask(env, text_reply("Hi."), "-o", "seed", "3", "--json")
    events = [json.loads(line) for line in result.stdout.splitlines()]  # type: ignore[attr-defined]
    assert [e["type"] for e in events[-2:]] == ["dropped", "turn"]
    assert events[-2]["turn"] == 1
    assert len(events[-2]["dropped"]) == 1
    assert "seed" in json.dumps(events[-2]["dropped"][0])
    # Nothing dropped, no line.
    result, _ = ask(env, text_reply("Hi."))
    assert "not sent" not in result.stdout  # type: ignore[attr-defined]
