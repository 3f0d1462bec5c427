"""``-m test``: a deterministic model that needs no key and no network, so
every command can be tried at once (``ask``, ``chat``, ``--functions``,
``--tool``, ``--mcp``, ``serve``'s chat).

It is the library's :class:`~elelem.testing.TestModel` answering in-process:
its first answer to a request that offers tools calls each of them once,
with arguments built from the tool's JSON Schema (an MCP server's every
listed tool, in the order listed: a conformance client); once the results
are back, or when no tool is offered, it streams a reasoning block and an
answer that repeats the prompt (with the tool results) and cites one
source.  The same prompt gets the same answer, always."""

from __future__ import annotations

import json
from dataclasses import dataclass

from elelem.testing.models import TEST_SOURCE, Reply, TestModel
from elelem.vocabulary import Attribution, Message, TextBlock, ToolResultBlock
from elelem.wire import ModelRequest

TEST_MODEL_NAMES = frozenset({"test", "test:test-model"})
"""What ``-m`` accepts for the test model."""

TEST_ADDRESS = "test:test-model"
"""The address the test model's turns are recorded under."""


def is_test_model(name: str | None) -> bool:
    """Whether ``-m name`` asks for the test model."""
    return name is not None and name.strip() in TEST_MODEL_NAMES


def _prompt(messages: tuple[Message, ...]) -> str:
    """The text of the last message the user wrote (not a tool result)."""
    for message in reversed(messages):
        if message.role != "user":
            continue
        texts = [p.text for p in message.content if isinstance(p, TextBlock)]
        if texts:
            return " ".join(texts)
    return ""


def _results(messages: tuple[Message, ...]) -> tuple[ToolResultBlock, ...]:
    if not messages:
        return ()
    return tuple(p for p in messages[-1].content if isinstance(p, ToolResultBlock))


@dataclass(kw_only=True)
class CommandTestModel(TestModel):
    """The model ``-m test`` stands for (see the module docs)."""

    __test__ = False

    def answer(self, request: ModelRequest) -> Reply:
        """Each offered tool called once; then the echoing, cited answer."""
        results = _results(request.messages)
        prompt = _prompt(request.messages)
        if not results and request.tools:
            names = ", ".join(spec.name for spec in request.tools)
            return Reply(
                reasoning=f"Tools are offered ({names}): I call each once.",
                calls=tuple(super().answer(request).calls),
            )
        text = f"Test answer to: {prompt}" if prompt else "Test answer."
        if results:
            answered = {r.name or r.call_id: r.content for r in results}
            text += f"\n\nThe tools answered: {json.dumps(answered, ensure_ascii=False)}"
        return Reply(
            text=text,
            reasoning="The test model answers without a key: it repeats the prompt.",
            citations=(Attribution(TEST_SOURCE, excerpt="test excerpt"),),
        )


def test_model() -> CommandTestModel:
    """A fresh ``-m test`` model (each counts its own responses)."""
    return CommandTestModel()


__all__ = [
    "TEST_ADDRESS",
    "TEST_MODEL_NAMES",
    "CommandTestModel",
    "is_test_model",
    "test_model",
]
