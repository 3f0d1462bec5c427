"""Gemini Interactions requests: the steps of an assistant message, as the
API returned them (native replay); request encoding is not built yet.
"""

from __future__ import annotations

from typing import Any

from elelem.errors import (
    PayloadError,
    UnsupportedError,
)
from elelem.shapes.common import (
    Dropped,
    arguments_object,
    malformed_drops,
    part_type,
    stream_event,
    stream_event_drop,
)
from elelem.vocabulary import (
    Drop,
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    UnknownBlock,
)
from elelem.vocabulary.drop import UNREPLAYABLE, UNSUPPORTED
from elelem.wire import EncodedRequest, ModelRequest


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
            step = {"type": "function_call", "id": part.id, "name": part.name, "arguments": given}
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


def encode_request(
    request: ModelRequest, *, provider: ProviderId, stream: bool = True
) -> EncodedRequest:
    """Not built yet: raises :class:`~elelem.errors.UnsupportedError`."""
    raise UnsupportedError("requests to the Gemini Interactions API are not supported yet")
