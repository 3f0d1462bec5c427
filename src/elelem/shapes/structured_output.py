"""How each wire spells the neutral structured-output option
(:attr:`~elelem.vocabulary.GenerationOptions.output`).

The encoders share these rules so that the same request reports the same
shortfall in the same words on every wire:

- OpenAI's two wires carry everything (name, schema, strict, description);
- wires that take a bare schema (Anthropic, Gemini, Ollama) report a ``name``
  other than the default and a non-empty ``description``, which they have no
  room for (both always enforce the schema, so ``strict`` is never a loss);
- a wire with no schema-less JSON mode reports :class:`JsonObjectOutput`
  rather than invent a schema; a wire with JSON mode only sends that and
  reports the schema as not enforced.

Sans-IO, pure functions of the option.
"""

from __future__ import annotations

import json

from elelem.vocabulary import Drop, JsonObjectOutput, JsonSchemaOutput, OutputFormat
from elelem.vocabulary.drop import ADJUSTED, UNSUPPORTED
from elelem.vocabulary.json import JSONValue

WHERE = "options.output"
"""The ``where`` of every drop about :attr:`GenerationOptions.output`."""

DEFAULT_NAME = "output"


def openai_json_schema(output: JsonSchemaOutput) -> dict[str, JSONValue]:
    """OpenAI's json_schema fields: ``name``, ``schema``, ``strict`` and a
    ``description`` when there is one (Responses' ``text.format`` holds them
    beside ``type``; Chat Completions nests them under ``json_schema``)."""
    fields: dict[str, JSONValue] = {
        "name": output.name,
        "schema": output.schema,
        "strict": output.strict,
    }
    if output.description:
        fields["description"] = output.description
    return fields


def responses_format(output: OutputFormat) -> dict[str, JSONValue]:
    """The Responses API ``text.format`` object for ``output``."""
    if isinstance(output, JsonObjectOutput):
        return {"type": "json_object"}
    return {"type": "json_schema", **openai_json_schema(output)}


def chat_response_format(output: OutputFormat) -> dict[str, JSONValue]:
    """The Chat Completions ``response_format`` object for ``output``."""
    if isinstance(output, JsonObjectOutput):
        return {"type": "json_object"}
    return {"type": "json_schema", "json_schema": openai_json_schema(output)}


def unlabelled(output: JsonSchemaOutput, label: str, dropped: list[Drop]) -> None:
    """Report the labels of ``output`` a wire that takes a bare schema cannot carry."""
    if output.name != DEFAULT_NAME:
        dropped.append(
            Drop(
                f"{WHERE}.name",
                "name",
                UNSUPPORTED,
                f"{output.name!r}: {label} takes no schema name",
            )
        )
    if output.description:
        dropped.append(
            Drop(
                f"{WHERE}.description",
                "description",
                UNSUPPORTED,
                f"{label} takes no schema description",
            )
        )


def no_json_mode(label: str, dropped: list[Drop]) -> None:
    """Report :class:`JsonObjectOutput` on a wire that takes a schema or nothing."""
    dropped.append(
        Drop(
            WHERE,
            "json_object",
            UNSUPPORTED,
            f"{label} has no schema-less JSON mode; give a JsonSchemaOutput",
        )
    )


def json_mode_only(output: JsonSchemaOutput, label: str, dropped: list[Drop]) -> None:
    """Report a schema downgraded to plain JSON mode on a wire without schemas."""
    dropped.append(
        Drop(
            WHERE,
            "schema",
            ADJUSTED,
            f"{label} takes json_object only; json_object sent, schema {output.name!r} "
            "not enforced",
        )
    )


def schema_string(output: JsonSchemaOutput) -> str:
    """The schema as compact JSON text, for wires that take it as a string
    (Bedrock).  Key order is the caller's: it can steer the model's field order."""
    return json.dumps(output.schema, ensure_ascii=False, separators=(",", ":"))


__all__ = [
    "DEFAULT_NAME",
    "WHERE",
    "chat_response_format",
    "json_mode_only",
    "no_json_mode",
    "openai_json_schema",
    "responses_format",
    "schema_string",
    "unlabelled",
]
