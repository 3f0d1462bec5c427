"""Agent Skills in the code-execution container
(https://docs.claude.com/en/docs/build-with-claude/skills-guide): the
request's ``container`` is ``{"skills": [{"type": "anthropic" | "custom",
"skill_id": …, "version": …}]}`` (with the container's ``id`` when one is
continued), beside the ``code_execution_20250825`` tool, under the
``skills-2025-10-02`` beta.  The older code execution tool takes no skills."""

from __future__ import annotations

from typing import Any

from elelem.vocabulary import Skill

SKILLS_BETA = "skills-2025-10-02"
"""The ``anthropic-beta`` flag of skills in a container."""

NO_SKILLS = frozenset({"code_execution_20250522"})
"""Code execution versions whose container loads no skills."""


def skill_entry(skill: Skill) -> dict[str, Any]:
    """One entry of ``container.skills``."""
    entry: dict[str, Any] = {
        "type": "anthropic" if skill.builtin else "custom",
        "skill_id": skill.skill_id,
    }
    if skill.version is not None:
        entry["version"] = skill.version
    return entry


def container_value(container_id: str | None, skills: list[dict[str, Any]]) -> Any:
    """The request's ``container``: the id alone (a continued container with
    no skills), or an object with the skills (and the id, when continued)."""
    if not skills:
        return container_id
    out: dict[str, Any] = {}
    if container_id is not None:
        out["id"] = container_id
    out["skills"] = skills
    return out


__all__ = ["NO_SKILLS", "SKILLS_BETA", "container_value", "skill_entry"]
