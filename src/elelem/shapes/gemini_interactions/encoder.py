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
from elelem.shapes.block_tables import (
    BlockTable,
    Spelt,
    left_out,
    spell_kept,
    spell_native,
)
from elelem.shapes.common import (
    Dropped,
    arguments_object,
    context_text,
    finished_request,
    hosted_activity_line,
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
    spelt = spell_native(NATIVE_BLOCKS, message, Spelt(provider, Dropped()))
    return {"steps": spelt.out}, tuple(spelt.dropped.items)


def _find(payloads: tuple[ProviderPayload, ...], provider: str, fmt: str) -> Any:
    for p in payloads:
        if p.provider == provider and p.format == fmt:
            return p.value
    return None


def _step(step: dict[str, Any], part: Any, spelt: Spelt) -> None:
    step.update(_find(part.payloads, spelt.provider, "step_fields") or {})
    spelt.out.append(step)


def _thought_row(part: ReasoningBlock, spelt: Spelt) -> None:
    step: dict[str, Any] = {"type": "thought"}
    signature = _find(part.payloads, spelt.provider, "signature")
    if isinstance(signature, str):
        step["signature"] = signature
    elif signature is not None:
        detail = "not a string: the thought goes unsigned"
        spelt.dropped.add(spelt.at, "signature", UNREPLAYABLE, detail)
    if part.text:
        step["summary"] = [{"type": "text", "text": part.text}]
    _step(step, part, spelt)


def _output_row(part: TextBlock, spelt: Spelt) -> None:
    item = dict(_find(part.payloads, spelt.provider, "content_fields") or {"type": "text"})
    item["text"] = part.text
    notes = [
        a.replay.value
        for a in part.attributions
        if a.replay and a.replay.provider == spelt.provider
    ]
    if notes:
        item["annotations"] = notes
    _step({"type": "model_output", "content": [item]}, part, spelt)


def _call_row(part: ToolCallBlock, spelt: Spelt) -> None:
    given = arguments_object(part.arguments, part.id, spelt.at, spelt.dropped)
    name, computer = part.name, wire_call(part, spelt.provider)
    if computer is not None:
        # A computer-use action goes back under its predefined name, its arguments as they came.
        name, given = computer[0], wire_args(given)
    step = {"type": "function_call", "id": part.id, "name": name, "arguments": given}
    _step(step, part, spelt)


def _native_hosted_row(part: HostedActivity, spelt: Spelt) -> None:
    payload = part.payload
    if payload is None or payload.provider != spelt.provider:
        detail = f"{part.name}: no {spelt.provider} step"
        spelt.dropped.add(spelt.at, "hosted", UNREPLAYABLE, detail)
    elif not isinstance(payload.value, dict):
        at = f"part {spelt.index}"
        raise PayloadError(f"{at}: {spelt.provider} step payload is not an object", "$.value")
    else:
        spelt.out.append(dict(payload.value))


def _unknown_row(part: UnknownBlock, spelt: Spelt) -> None:
    if stream_event(part):
        spelt.dropped.items.append(stream_event_drop(spelt.at, part))
    else:
        spelt.out.append(dict(part.raw))


_no_step = left_out("no interactions step")


NATIVE_BLOCKS: BlockTable[Spelt] = BlockTable(
    "Gemini Interactions (its own steps)",
    {
        ReasoningBlock: _thought_row,
        TextBlock: _output_row,
        ToolCallBlock: _call_row,
        HostedActivity: _native_hosted_row,
        UnknownBlock: _unknown_row,
    },
    _no_step,
)
"""How a block of an assistant message the Interactions API produced goes
back as its step."""


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
    spelt = _Input(provider, dropped)
    spelt.source, spelt.extra = message.source, computer
    spelt.assistant = message.role == "assistant"
    spell_kept(INPUT_BLOCKS, portable_message(message, ACCEPTS, provider), spelt, where)
    spelt.steps.extend(_content_step(spelt.out, spelt.assistant))
    return spelt.steps


class _Input(Spelt):
    # ``out`` is the content of the step being built; ``steps`` the steps
    # before it (a foreign assistant's call, a tool result close it);
    # ``extra`` each computer-use call's id -> (its function, its safety decision).
    assistant = False

    def __init__(self, provider: str, dropped: Dropped) -> None:
        super().__init__(provider, dropped)
        self.steps: list[dict[str, Any]] = []


def _input_hosted_row(part: HostedActivity, spelt: _Input) -> None:
    spelt.out.append({"type": "text", "text": hosted_activity_line(part)})


def _input_text_row(part: TextBlock, spelt: _Input) -> None:
    spelt.out.append({"type": "text", "text": context_text(spelt.source, part.text)})


def _input_call_row(part: ToolCallBlock, spelt: _Input) -> None:
    given = arguments_object(part.arguments, part.id, spelt.at, spelt.dropped)
    spelt.steps.extend(_content_step(spelt.out, spelt.assistant))
    spelt.out = []
    spelt.steps.append(
        {"type": "function_call", "id": part.id, "name": part.name, "arguments": given}
    )


def _input_result_row(part: ToolResultBlock, spelt: _Input) -> None:
    attachments = list(enumerate(part.attachments or ()))
    action: tuple[str, bool] | None = spelt.extra.get(part.call_id)
    if action is not None:
        # A computer action's answer: the screenshot inside the function_result.
        shot = next(((k, a) for k, a in attachments if isinstance(a, ImageBlock)), None)
        image: list[dict[str, Any]] = []
        if shot is not None:
            attachments.remove(shot)
            at = f"{spelt.at}.attachments[{shot[0]}]"
            image = _registered(shot[1], spelt.provider, spelt.dropped, at)
        result = computer_result(part, *action, image[0] if image else None)
    else:
        result = _function_result(part)
    # A function_result is a step of its own (the API's Step union), not a
    # content of user_input; what the tool attached follows it.
    spelt.steps.extend(_content_step(spelt.out, spelt.assistant))
    spelt.out = []
    spelt.steps.append(result)
    for k, attachment in attachments:
        at = f"{spelt.at}.attachments[{k}]"
        spelt.out.extend(_registered(attachment, spelt.provider, spelt.dropped, at))


def _input_registered_row(part: object, spelt: _Input) -> None:
    # An image, document, audio or plugin block: through its mapping.
    spelt.out.extend(_registered(part, spelt.provider, spelt.dropped, spelt.at))


INPUT_BLOCKS: BlockTable[_Input] = BlockTable(
    "Gemini Interactions",
    {
        HostedActivity: _input_hosted_row,
        TextBlock: _input_text_row,
        ToolCallBlock: _input_call_row,
        ToolResultBlock: _input_result_row,
    },
    _input_registered_row,
)
"""How a block of a user, system, tool or foreign assistant message is spelt
(what the portable projection kept)."""

BLOCK_TABLES = {"native": NATIVE_BLOCKS, "portable": INPUT_BLOCKS}
"""This shape's block tables by place (:mod:`elelem.shapes.block_tables`)."""


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
    return finished_request(PATH, body, options, dropped, stream)
