"""Agent Skills in the code-execution container: ``CodeExecution(skills=…)``
sent as Anthropic's ``container.skills`` (validated by the ``anthropic``
SDK's typed params), through the library and ``elelem ask --skill``, and
reported dropped where a wire's code execution loads none.

Wire example: Anthropic's skills guide
(https://docs.claude.com/en/docs/build-with-claude/skills-guide: ``"container":
{"skills": [{"type": "anthropic", "skill_id": "pptx", "version": "latest"},
{"type": "custom", "skill_id": "skill_01AbCdEfGhIjKlMnOpQrStUv", "version":
"latest"}]}`` beside the ``code_execution_20250825`` tool, betas
``code-execution-2025-08-25`` and ``skills-2025-10-02``; a continued
container is named by its ``id`` in the same object).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from elelem.cli.exits import Failure
from elelem.cli.tools import skill_named
from elelem.errors import DecodeError
from elelem.shapes.registry import shape_named
from elelem.testing.servers import LoopbackServer
from elelem.vocabulary import CodeExecution, Message, ProviderId, ProviderPayload, Skill
from elelem.wire import ModelRequest
from test_provider_tools import _validate_anthropic
from toolloop_wires import anthropic_text

PPTX = Skill("pptx", "latest", builtin=True)
CUSTOM = Skill("skill_01AbCdEfGhIjKlMnOpQrStUv")
TOOL = {"type": "code_execution_20250825", "name": "code_execution"}


def _encode(shape: str, provider: str, tool: CodeExecution, **more: object) -> object:
    request = ModelRequest("m", (Message.user("make slides"),), hosted_tools=(tool,), **more)  # type: ignore[arg-type]
    return shape_named(shape).encode_request(request, provider=ProviderId(provider))


def test_skills_load_into_anthropics_container() -> None:
    encoded = _encode("anthropic_messages", "anthropic", CodeExecution(skills=(PPTX, CUSTOM)))
    body = encoded.body  # type: ignore[attr-defined]
    assert body["tools"] == [TOOL]
    assert body["container"] == {"skills": [
        {"type": "anthropic", "skill_id": "pptx", "version": "latest"},
        {"type": "custom", "skill_id": "skill_01AbCdEfGhIjKlMnOpQrStUv"},
    ]}  # fmt: skip
    betas = encoded.headers["anthropic-beta"].split(",")  # type: ignore[attr-defined]
    assert betas == ["code-execution-2025-08-25", "skills-2025-10-02"]
    assert encoded.dropped == ()  # type: ignore[attr-defined]
    _validate_anthropic(body)


def test_a_continued_container_keeps_its_id_beside_the_skills() -> None:
    envelope = {"container": {"id": "container_011", "expires_at": "2026-12-05T06:00:00Z"}}
    encoded = _encode(
        "anthropic_messages", "anthropic", CodeExecution(skills=(PPTX,)),
        response_payloads=(ProviderPayload(ProviderId("anthropic"), "message", None, envelope),),
        now=datetime(2026, 12, 5, 1, 0, tzinfo=UTC),
    )  # fmt: skip
    body = encoded.body  # type: ignore[attr-defined]
    assert body["container"] == {
        "id": "container_011",
        "skills": [{"type": "anthropic", "skill_id": "pptx", "version": "latest"}],
    }
    _validate_anthropic(body)


def test_where_code_execution_loads_no_skills_they_are_reported() -> None:
    old = _encode("anthropic_messages", "anthropic",
                  CodeExecution("code_execution_20250522", skills=(PPTX,)))  # fmt: skip
    assert "container" not in old.body  # type: ignore[attr-defined]
    assert [(d.where, d.detail) for d in old.dropped] == [  # type: ignore[attr-defined]
        ("hosted_tools[0].skills", "code_execution_20250522 loads no skills")
    ]
    for shape, provider, wire in (
        ("openai_responses", "openai", "OpenAI's code interpreter"),
        ("gemini", "google", "Gemini"),
        ("gemini_interactions", "google-interactions", "Gemini"),
    ):
        encoded = _encode(shape, provider, CodeExecution(skills=(PPTX,)))
        assert encoded.body["tools"]  # type: ignore[attr-defined]  # the tool itself is sent
        assert [(d.where, d.what, d.detail) for d in encoded.dropped] == [  # type: ignore[attr-defined]
            ("hosted_tools[0].skills", "skills", f"{wire} code execution loads no skills")
        ]


def test_a_skill_needs_an_id() -> None:
    with pytest.raises(DecodeError, match="a skill needs a skill_id"):
        Skill(" ")
    with pytest.raises(DecodeError, match="skill 'pptx': an empty version"):
        Skill("pptx", "")


def test_ask_skill_sends_the_container(tmp_path: Path) -> None:
    from cli_helpers import base_env
    from cli_helpers import run as run_cli

    with LoopbackServer([anthropic_text("Slides made.")]) as server:
        env = {**base_env(tmp_path), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "k"}
        out = run_cli(env, "ask", "-m", "anthropic:claude-test", "--skill", "anthropic:pptx@latest",
                      "--skill", "skill_01Ab", "slides")  # fmt: skip
    assert out.returncode == 0, out.stderr
    (request,) = server.requests
    body = json.loads(request.body)
    assert body["tools"] == [TOOL]
    assert body["container"] == {"skills": [
        {"type": "anthropic", "skill_id": "pptx", "version": "latest"},
        {"type": "custom", "skill_id": "skill_01Ab"},
    ]}  # fmt: skip
    assert "skills-2025-10-02" in request.headers["anthropic-beta"]

    # A bad --skill (the bad-value walk gives every command more): refused by name.
    with pytest.raises(Failure, match=r"--skill 'a/b': not anthropic:NAME or a skill id"):
        skill_named("a/b")


def test_skills_mount_in_openais_hosted_shell() -> None:
    # https://platform.openai.com/docs/guides/tools-skills: skills ride the
    # hosted shell's container_auto environment as skill references.
    from elelem.vocabulary import Shell
    from test_provider_tools import _validate_responses

    tool = Shell(hosted=True, skills=(Skill("skill_69a1", "2"), Skill("skill_69b2")))
    request = ModelRequest("gpt-5.4", (Message.user("report"),), hosted_tools=(tool,))
    encoded = shape_named("openai_responses").encode_request(request, provider=ProviderId("openai"))
    assert encoded.body["tools"] == [{"type": "shell", "environment": {
        "type": "container_auto",
        "skills": [{"type": "skill_reference", "skill_id": "skill_69a1", "version": "2"},
                   {"type": "skill_reference", "skill_id": "skill_69b2"}],
    }}]  # fmt: skip
    assert encoded.dropped == ()
    _validate_responses(encoded.body)
    with pytest.raises(DecodeError, match="skills are mounted in a hosted shell's container only"):
        Shell(skills=(PPTX,))
    with pytest.raises(DecodeError, match="a shell is local or hosted, not both"):
        Shell(local=True, hosted=True)
