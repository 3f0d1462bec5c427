"""Gemini Interactions requests (``POST /v1beta/interactions``,
ai.google.dev/api/interactions-api): ``input`` is a list of steps, the
provider's own assistant messages as the steps it returned (native replay,
:func:`interaction_steps`), every other message portably (``user_input``
steps of text and media, ``function_result`` steps; a foreign assistant's
text and calls as ``model_output`` and ``function_call`` steps); system
messages join ``system_instruction``; options in ``generation_config``.
An interaction is stored unless ``store: false``, so a turn that follows
the provider's own answer sends only its new input with
``previous_interaction_id`` (:mod:`elelem.shapes.provider_state`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elelem.errors import PayloadError
from elelem.shapes.common import (
    Dropped,
    arguments_object,
    context_text,
    hosted_activity_line,
    malformed_drops,
    merge_extra,
    part_type,
    registered_part,
    stream_event,
    stream_event_drop,
    system_text,
    tool_definition,
)
from elelem.shapes.context_editing import not_taken
from elelem.shapes.gemini.computer import computer_calls, wire_args, wire_call
from elelem.shapes.gemini_interactions.computer import computer_result, computer_row
from elelem.shapes.gemini_interactions.media import LIMITS, encode_media
from elelem.shapes.hosted_tools import HostedSite, HostedSpeller, HostedTools, no_skills
from elelem.shapes.media import check_request, register_media
from elelem.shapes.options import ToolChoiceSpelling, check_table, sampling_options, tool_choice
from elelem.shapes.provider_state import continues
from elelem.vocabulary import (
    Drop,
    HostedActivity,
    ImageBlock,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
)
from elelem.vocabulary.drop import UNREPLAYABLE, UNSUPPORTED, BlockSite
from elelem.vocabulary.portable import Accepts, portable_message
from elelem.wire import EncodedRequest, ModelRequest

SHAPE_NAME = "gemini_interactions"


def interaction_steps(
    message: Message, provider: ProviderId
) -> tuple[dict[str, Any], tuple[Drop, ...]]:
    """The steps of one assistant message as the Interactions API returned them.

    Only ``provider``'s own blocks rebuild; anything else is reported dropped.
    """
    steps: list[dict[str, Any]] = []
    dropped: list[Drop] = []

    def find(payloads: tuple[ProviderPayload, ...], fmt: str) -> Any:
        for p in payloads:
            if p.provider == provider and p.format == fmt:
                return p.value
        return None

    faults = Dropped()
    malformed_drops(message, faults)
    dropped.extend(faults.items)
    for i, part in enumerate(message.content):
        if isinstance(part, ReasoningBlock):
            step: dict[str, Any] = {"type": "thought"}
            signature = find(part.payloads, "signature")
            if isinstance(signature, str):
                step["signature"] = signature
            elif signature is not None:
                detail = "not a string: the thought goes unsigned"
                dropped.append(Drop(f"content[{i}]", "signature", UNREPLAYABLE, detail))
            if part.text:
                step["summary"] = [{"type": "text", "text": part.text}]
        elif isinstance(part, TextBlock):
            item = dict(find(part.payloads, "content_fields") or {"type": "text"})
            item["text"] = part.text
            notes = [
                a.replay.value
                for a in part.attributions
                if a.replay and a.replay.provider == provider
            ]
            if notes:
                item["annotations"] = notes
            step = {"type": "model_output", "content": [item]}
        elif isinstance(part, ToolCallBlock):
            bad = Dropped()
            given = arguments_object(part.arguments, part.id, f"content[{i}]", bad)
            dropped.extend(bad.items)
            name, computer = part.name, wire_call(part, provider)
            if computer is not None:
                # A computer-use action goes back under its predefined name, its arguments as they came.
                name, given = computer[0], wire_args(given)
            step = {"type": "function_call", "id": part.id, "name": name, "arguments": given}
        elif isinstance(part, HostedActivity):
            if part.payload is None or part.payload.provider != provider:
                dropped.append(
                    Drop(
                        f"content[{i}]", "hosted", UNREPLAYABLE, f"{part.name}: no {provider} step"
                    )
                )
                continue
            if not isinstance(part.payload.value, dict):
                raise PayloadError(f"part {i}: {provider} step payload is not an object", "$.value")
            steps.append(dict(part.payload.value))
            continue
        elif isinstance(part, UnknownBlock) and stream_event(part):
            dropped.append(stream_event_drop(f"content[{i}]", part))
            continue
        elif isinstance(part, UnknownBlock):
            steps.append(dict(part.raw))
            continue
        else:
            dropped.append(
                Drop(f"content[{i}]", part_type(part), UNSUPPORTED, "no interactions step")
            )
            continue
        step.update(find(part.payloads, "step_fields") or {})
        steps.append(step)
    return {"steps": steps}, tuple(dropped)


assistant_wire = interaction_steps
"""The ``assistant_wire`` hook ``elelem inspect --wire-replay`` calls."""


PATH = "/v1beta/interactions"
"""``POST`` here creates an interaction (ai.google.dev/api/interactions-api)."""

ACCEPTS = Accepts("Gemini Interactions", shape="gemini_interactions").with_blocks(
    "image", "document", "audio"
)
"""What the Interactions API carries of a message it did not produce: no
citations (they are response annotations, never input)."""

OPTION_KEYS = check_table(
    "Gemini Interactions",
    {
        "max_tokens": ("generation_config", "max_output_tokens"),
        "temperature": ("generation_config", "temperature"),
        "top_p": ("generation_config", "top_p"),
        "stop": ("generation_config", "stop_sequences"),
        "seed": ("generation_config", "seed"),
    },
)
"""Where an interaction takes each sampling option (``generation_config``)."""

TOOL_CHOICE = ToolChoiceSpelling(
    ("generation_config", "tool_choice"),
    {"auto": "auto", "none": "none", "any": "any", "required": "any"},
    lambda name: {"allowed_tools": {"mode": "any", "tools": [name]}},
)
"""How an interaction spells ``tool_choice``."""

INTERACTION_FORMAT = "interaction"
"""The finish payload holding an interaction's envelope (its steps and usage
left out)."""


def _held(envelope: Mapping[str, Any]) -> tuple[str, str] | None:
    """The interaction the provider keeps: every one unless it was made with
    ``store: false`` (the Interactions API stores by default)."""
    iid = envelope.get("id")
    if envelope.get("store") is False or not isinstance(iid, str) or not iid:
        return None
    return "previous_interaction_id", iid


def _hosted_row(kind: str) -> HostedSpeller:
    def spell(tool: object, site: HostedSite) -> None:
        no_skills(tool, site, "Gemini")  # the wire takes no other option here
        site.tools.append({"type": kind})

    return spell


HOSTED_TOOLS = HostedTools(
    "Gemini Interactions",
    {
        "web_search": _hosted_row("google_search"),
        "web_fetch": _hosted_row("url_context"),
        "code_execution": _hosted_row("code_execution"),
        "computer_use": computer_row,
    },
)
"""The Interactions API's built-in tools (its ``tools`` entries by type)."""


_EFFORTS = {"minimal": "minimal", "low": "low", "medium": "medium", "high": "high"}


def _user_input(
    message: Message,
    provider: ProviderId,
    dropped: Dropped,
    where: str,
    computer: Mapping[str, tuple[str, bool]],
) -> list[dict[str, Any]]:
    """A user, system, tool or foreign assistant message as steps: text and
    media in ``user_input`` steps, each tool result a ``function_result``
    step (a foreign assistant's text and calls as ``model_output`` and
    ``function_call`` steps).
    ``computer``: each computer-use call's id -> (its predefined function
    name, whether it carried a safety decision)."""
    portable = portable_message(message, ACCEPTS, provider)
    dropped.extend(portable.dropped, under=where)
    assistant = message.role == "assistant"
    steps: list[dict[str, Any]] = []
    content: list[dict[str, Any]] = []
    for i, part in portable.parts():
        at = f"{where}.content[{i}]"
        if isinstance(part, HostedActivity):
            content.append({"type": "text", "text": hosted_activity_line(part)})
        elif isinstance(part, TextBlock):
            content.append({"type": "text", "text": context_text(message.source, part.text)})
        elif isinstance(part, ToolCallBlock):
            given = arguments_object(part.arguments, part.id, at, dropped)
            steps.extend(_content_step(content, assistant))
            content = []
            steps.append(
                {"type": "function_call", "id": part.id, "name": part.name, "arguments": given}
            )
        elif isinstance(part, ToolResultBlock):
            attachments = list(enumerate(part.attachments or ()))
            action = computer.get(part.call_id)
            if action is not None:
                # A computer action's answer: the screenshot inside the function_result.
                shot = next(((k, a) for k, a in attachments if isinstance(a, ImageBlock)), None)
                image: list[dict[str, Any]] = []
                if shot is not None:
                    attachments.remove(shot)
                    image = _registered(shot[1], provider, dropped, f"{at}.attachments[{shot[0]}]")
                result = computer_result(part, *action, image[0] if image else None)
            else:
                result = _function_result(part)
            # A function_result is a step of its own (the API's Step union),
            # not a content of user_input; what the tool attached follows it.
            steps.extend(_content_step(content, assistant))
            content = []
            steps.append(result)
            for k, attachment in attachments:
                content.extend(_registered(attachment, provider, dropped, f"{at}.attachments[{k}]"))
        else:  # an image, document, audio or plugin block: through its mapping
            content.extend(_registered(part, provider, dropped, at))
    steps.extend(_content_step(content, assistant))
    return steps


def _function_result(part: ToolResultBlock) -> dict[str, Any]:
    result: dict[str, Any] = {
        "type": "function_result",
        "call_id": part.call_id,
        "result": part.content,
    }
    if part.name:
        result["name"] = part.name
    if part.is_error:
        result["is_error"] = True
    return result


# The built-in media blocks arrive through the registry, as a plugin's do.
register_media(SHAPE_NAME, image=encode_media, document=encode_media, audio=encode_media)


def _registered(part: object, provider: str, dropped: Dropped, at: str) -> list[dict[str, Any]]:
    site = BlockSite(provider, at, dropped.items)
    wire = registered_part(part, SHAPE_NAME, site, "Gemini Interactions")
    return [] if wire is None else [wire]


def _content_step(content: list[dict[str, Any]], assistant: bool) -> list[dict[str, Any]]:
    if not content:
        return []
    return [{"type": "model_output" if assistant else "user_input", "content": content}]


def encode_request(
    request: ModelRequest, *, provider: ProviderId, stream: bool = True
) -> EncodedRequest:
    """The interaction that continues ``request``: the provider's own
    assistant messages as the steps it returned (native replay), every other
    message portably; only the new input with ``previous_interaction_id``
    when the provider holds the conversation (:mod:`.state`)."""
    check_request(request.messages, LIMITS)
    dropped = Dropped()
    state, lost = continues(
        request.messages,
        request.response_payloads,
        provider,
        request.options.extra,
        INTERACTION_FORMAT,
        _held,
    )
    dropped.extend(lost)
    steps: list[dict[str, Any]] = []
    computer = computer_calls(request.messages, provider)
    system = [request.system] if request.system else []
    for index, message in enumerate(request.messages):
        where = f"messages[{index}]"
        if message.role == "system":
            # The system instruction is not part of the provider's state:
            # sent on every request.
            system += [b.text for b in system_text(message, f"{where}.", dropped)]
            continue
        if state is not None and index < state.start:
            continue  # the provider holds it
        if message.role == "assistant" and message.provider == provider:
            wire, lost_parts = interaction_steps(message, provider)
            dropped.extend(lost_parts, under=where)
            steps.extend(wire["steps"])
        else:
            steps.extend(_user_input(message, provider, dropped, where, computer))
    body: dict[str, Any] = {"model": request.model, "input": steps}
    if system:
        body["system_instruction"] = "\n\n".join(system)
    tools = [tool_definition(spec, SHAPE_NAME, (), kind="function") for spec in request.tools]
    HOSTED_TOOLS.spell_tools(request.hosted_tools, HostedSite(str(provider), body, tools, dropped))
    options = request.options
    sampling_options(options, OPTION_KEYS, body, dropped)
    not_taken(options.context_editing, "Gemini Interactions", dropped)
    if options.reasoning is not None:
        config = body.setdefault("generation_config", {})
        config["thinking_summaries"] = "auto"
        effort = options.reasoning.effort
        if effort in _EFFORTS:
            config["thinking_level"] = _EFFORTS[effort]
        elif effort is not None:
            dropped.add("options.reasoning.effort", "effort", UNSUPPORTED, f"no level {effort}")
        if options.reasoning.budget_tokens is not None:
            dropped.add(
                "options.reasoning.budget_tokens",
                "budget_tokens",
                UNSUPPORTED,
                "Interactions take a thinking level, not a budget",
            )
    tool_choice(options, TOOL_CHOICE, body, dropped)
    if options.output is not None:
        schema = getattr(options.output, "schema", None)
        entry: dict[str, Any] = {"type": "text", "mime_type": "application/json"}
        if schema is not None:
            entry["schema"] = schema
        body["response_format"] = [entry]
    if state is not None:
        body.update(state.fields)
    body["stream"] = stream
    merge_extra(body, options.extra)
    return EncodedRequest(path=PATH, body=body, stream=stream, dropped=tuple(dropped.items))
