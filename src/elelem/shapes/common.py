"""Logic every wire shape shares: error classification, frame decoding, encoding.

Each shape owns its wire format, but some rules are the same on every wire
and are kept here once, so that they cannot drift apart:

- errors: which typed error an HTTP status names (:data:`STATUS_ERRORS`,
  :func:`status_error_class`), header lookup and the quote of a body with
  no message (:func:`body_excerpt`); the pipeline that uses them is
  :mod:`elelem.shapes.classify`, and the server's retry hint is stamped by
  the driver;
- parsers: decoding one JSON frame (:func:`decode_frame`), the
  non-retryable :func:`malformed` error for a frame the server sent wrong,
  and the one rule for folding a delta's fields nobody modelled into its
  block's (:func:`fold_fields`); the one payload policy
  (:func:`checked_payload`: a known payload of the wrong form is recorded
  malformed on its block, the rest of the answer kept);
- encoders: the drop records of one encoding (:class:`Dropped`),
  finding a block's payload (:func:`find_payload`), the drops of the
  malformed payloads native replay leaves out (:func:`malformed_drops`),
  and the text line that
  stands for a hosted activity sent portably (:func:`hosted_activity_line`);
  the Chat Completions form of a function tool, which Ollama's native chat
  mirrors (:func:`function_tool`), and a function tool's definition as
  most wires spell it (:func:`tool_definition`).

Sans-IO like every shape: no clock, no globals that change.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Collection, Iterable, Mapping
from types import MappingProxyType
from typing import Any

import msgspec

from elelem.errors import (
    AuthenticationError,
    ElelemError,
    InvalidRequestError,
    MalformedStreamError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RegistryError,
    RequestTooLargeError,
    ServerError,
    StreamError,
    UnsupportedError,
)
from elelem.vocabulary import (
    Drop,
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    TextBlock,
    UnknownBlock,
    block_mapping,
    block_type,
)
from elelem.vocabulary.blocks import CORE_BLOCK_TYPES
from elelem.vocabulary.drop import INVALID, MALFORMED, UNREPLAYABLE, UNSUPPORTED, BlockSite
from elelem.vocabulary.json import JSONValue, decode_json
from elelem.vocabulary.malformed import block_faults, json_kind, malformed_payload
from elelem.vocabulary.request import GenerationOptions, ToolSpec
from elelem.wire import EncodedRequest

# --------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------

STATUS_ERRORS: Mapping[int, type[StreamError]] = MappingProxyType(
    {
        400: InvalidRequestError,
        401: AuthenticationError,
        403: PermissionDeniedError,
        404: NotFoundError,
        413: RequestTooLargeError,
        422: InvalidRequestError,
        429: RateLimitError,
    }
)
"""The typed error each HTTP status names on every provider's API.

A shape whose provider gives a status its own meaning (Anthropic's 529,
Google's 503: overloaded) passes that as an override.
"""


def status_error_class(
    status: int, overrides: Mapping[int, type[StreamError]] | None = None
) -> type[StreamError] | None:
    """The typed error ``status`` names (``overrides`` first), or None if it names none."""
    if overrides is not None and status in overrides:
        return overrides[status]
    return STATUS_ERRORS.get(status)


def error_class_for_status(
    status: int, overrides: Mapping[int, type[StreamError]] | None = None
) -> type[StreamError]:
    """Like :func:`status_error_class`, else :class:`ServerError` for 5xx, else invalid request."""
    cls = status_error_class(status, overrides)
    if cls is not None:
        return cls
    return ServerError if status >= 500 else InvalidRequestError


BODY_EXCERPT = 200
"""Bytes of an error body an error message quotes when the body names no message."""


def body_excerpt(body: bytes) -> str:
    """The start of an error body as text, for a message when the body gives none.

    At most :data:`BODY_EXCERPT` bytes, undecodable bytes replaced, outer white
    space stripped; the whole (bounded) body stays on the error's ``body``.
    """
    return body[:BODY_EXCERPT].decode("utf-8", "replace").strip()


def header(headers: Mapping[str, str], name: str) -> str | None:
    """The value of header ``name`` (lower case) in any case, or None."""
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


# --------------------------------------------------------------------------
# parsers
# --------------------------------------------------------------------------


def wire_int(value: object, default: int = 0) -> int:
    """A count or an index as a wire writes it, by one policy for every shape:
    a JSON integer of at least 0 (not a boolean), or a string of at most 20
    ASCII digits (proto3 JSON writes int64 fields so); ``default`` for anything else
    (absent, null, negative, another type), the raw value being kept by the
    caller where it is usage (``Usage.raw``)."""
    if type(value) is int:
        return value if value >= 0 else default
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 20:
        # 20 digits hold any int64 (and int() refuses past 4,300 digits).
        return int(value)
    return default


def malformed(message: str, data: object = None) -> MalformedStreamError:
    """A non-retryable :class:`MalformedStreamError` carrying ``data`` (as JSON) as its body.

    A well-formed frame the server got wrong will come the same way again.
    """
    body = msgspec.json.encode(data) if data is not None else None
    return MalformedStreamError(message, body=body, retryable=False)


def decode_body(body: bytes, what: str) -> str:
    """A whole response ``body`` as UTF-8 text, ``what`` naming it in errors.

    Bytes that are not UTF-8 raise a retryable :class:`MalformedStreamError`
    naming the first bad byte and its offset (``"{what} is not valid UTF-8
    (byte 0xff at offset 12)"``), with the body attached; they are never
    replaced with U+FFFD, since altered text could not replay byte-exact.
    """
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedStreamError(
            f"{what} is not valid UTF-8 (byte 0x{body[exc.start]:02x} at offset {exc.start})",
            body=body,
        ) from None


def decode_frame(data: str, what: str) -> dict[str, Any]:
    """The JSON object in one frame's ``data``, ``what`` naming the frame in errors.

    Text that is not JSON (a frame cut or corrupted on the way, so retryable)
    or JSON that is not an object (not retryable) raises
    :class:`MalformedStreamError` with the frame as its body:
    ``"{what} data is not JSON: …"`` / ``"{what} data is not a JSON object"``.
    """
    try:
        payload = decode_json(data)
    except msgspec.DecodeError as exc:
        raise MalformedStreamError(f"{what} data is not JSON: {exc}", body=data.encode()) from None
    if not isinstance(payload, dict):
        raise malformed(f"{what} data is not a JSON object", payload)
    return payload


def at_frame(frames: int, where: str, unit: str = "frame") -> str:
    """A payload's place in a stream (``frame 3: part.thoughtSignature``),
    or in a whole body, which has no frames (``part.thoughtSignature``)."""
    return f"{unit} {frames}: {where}" if frames else where


def checked_payload(
    provider: str, fmt: str, value: Any, kind: type | tuple[type, ...], where: str
) -> ProviderPayload:
    """The payload ``fmt`` of ``provider`` when ``value`` is of ``kind``, else
    the record that it came malformed (``elelem.vocabulary.malformed``).

    The one payload policy of every parser: a present but undecodable
    payload is an error recorded on its block, never accepted as it came and
    never the end of the answer.  ``where`` is its place on the wire
    (``parts[1].thoughtSignature``)."""
    if isinstance(value, kind):
        return ProviderPayload(ProviderId(provider), fmt, None, value)
    names = kind if isinstance(kind, tuple) else (kind,)
    wanted = " or ".join(json_kind(k()) for k in names)
    what = f"a {json_kind(value)}, not a {wanted}"
    try:
        return malformed_payload(provider, fmt, where, what, value)
    except ElelemError:
        # A value that is not even JSON cannot reach a parser (it decoded
        # JSON); kept as its text all the same rather than lost.
        return malformed_payload(provider, fmt, where, what, repr(value))


# --------------------------------------------------------------------------
# encoders
# --------------------------------------------------------------------------


def malformed_drops(message: Message, dropped: Dropped, where: str = "") -> None:
    """Report each malformed payload recorded on ``message``'s parts, which
    native replay leaves out (the rest of each block is sent)."""
    prefix = f"{where}." if where and not where.endswith(".") else where
    for i, part in enumerate(message.content):
        for fault in block_faults(part):
            dropped.add(f"{prefix}content[{i}]", fault.format, MALFORMED, fault.description)


class Dropped:
    """Collects the :class:`~elelem.vocabulary.Drop` records of one encoding."""

    def __init__(self) -> None:
        self.items: list[Drop] = []

    def add(self, where: str, what: str, why: str, detail: str = "") -> None:
        """Record that ``what`` at ``where`` was left out, for reason ``why``."""
        self.items.append(Drop(where, what, why, detail))

    def extend(self, drops: Iterable[Drop], under: str | None = None) -> None:
        """Add ``drops``, each placed under ``under`` (``messages[3]``) if given."""
        if not under:
            self.items.extend(drops)
        elif not drops:
            return  # most messages drop nothing: no generator to make and run
        else:
            self.items.extend(d.under(under) for d in drops)


def fold_fields(target: dict[str, Any], fields: Mapping[str, Any]) -> None:
    """Fold the fields of one delta nobody modelled into ``target`` (the
    fields kept for its block): a string joins the same-named string (a field
    streamed in pieces, as text is), any other value replaces it."""
    for field, value in fields.items():
        if isinstance(value, str) and isinstance(target.get(field), str):
            target[field] += value
        else:
            target[field] = copy.deepcopy(value)


def stream_event(block: UnknownBlock) -> bool:
    """Whether ``block`` keeps a stream event nobody modelled (the parser
    skeleton's ``<shape>.event`` blocks): kept in the log, but no content a
    request can send back."""
    return block.type.endswith(".event")


def stream_event_drop(where: str, block: UnknownBlock) -> Drop:
    """The drop of a :func:`stream_event` block a native replay leaves out,
    naming the event (``'brand_new': a stream event, not content``)."""
    event = block.raw.get("event")
    detail = "a stream event, not content"
    return Drop(where, block.type, UNREPLAYABLE, f"{event!r}: {detail}" if event else detail)


def mapped_part(part: object, shape: str, provider: str) -> dict[str, Any] | None:
    """``part`` spelt by its block type's registered encoder for ``shape``
    (:func:`~elelem.vocabulary.register_block_mapping`): one content part of
    the wire, or None where no encoder is registered or it declines (the
    caller reports the drop).  An encoder that returns anything but a JSON
    object is a :class:`~elelem.errors.RegistryError` naming the block type."""
    tag = part_type(part)
    mapping = block_mapping(tag)
    encode = mapping.encoders.get(shape) if mapping is not None else None
    if encode is None:
        return None
    wire = encode(part, provider)
    if wire is None:
        return None
    if not isinstance(wire, Mapping):
        raise RegistryError(f"the {shape} encoder of block type {tag!r} returned no JSON object")
    return dict(wire)


def registered_part(
    part: object, shape: str, site: BlockSite, label: str, *, own: bool = False
) -> dict[str, Any] | None:
    """``part``, a block of a registered type (the built-in image, document
    and audio, or a plugin's), spelt through its mapping for ``shape``
    (:func:`mapped_part`) at ``site``; in native replay (``own``) a plugin
    type's block without a mapping goes back as it came (:func:`own_block`).
    When nothing spells it, it is reported once: by the mapping that
    declined it, else here (``label`` has no form for it)."""
    before = len(site.dropped)
    wire = mapped_part(part, shape, site)
    if wire is None and own and len(site.dropped) == before:
        wire = own_block(part, shape, str(site))
    if wire is None and len(site.dropped) == before:
        detail = f"{label} has no form for it"
        site.dropped.append(Drop(site.where, part_type(part), UNSUPPORTED, detail))
    return wire


def own_block(part: object, shape: str, provider: str) -> dict[str, Any] | None:
    """A registered (plugin) block type in a message ``provider`` produced,
    for native replay: its encoder's form for ``shape`` where it has one,
    else the block's own JSON object, which is the provider's block as it
    came (the assembler built the plugin type from it), replayed verbatim as
    an unknown block would be.  None for anything else (a core block, a
    block holding bytes)."""
    wire = mapped_part(part, shape, provider)
    if wire is not None:
        return wire
    if not isinstance(part, msgspec.Struct) or type(part) in CORE_BLOCK_TYPES:
        return None
    if block_type(part_type(part)) is not type(part):
        return None
    try:
        value = msgspec.to_builtins(part, enc_hook=_json_only)
    except _NotJSON:
        return None  # bytes have their own wire form, never guessed: the caller reports it
    return value if isinstance(value, dict) else None


class _NotJSON(ElelemError):
    """A block holding a value that is no JSON (a blob's bytes)."""


def _json_only(obj: object) -> object:
    raise _NotJSON(type(obj).__name__)


def part_type(part: object) -> str:
    """The ``type`` tag of a block or hosted transition (an unknown block's own tag)."""
    if isinstance(part, UnknownBlock):
        return part.type
    tag = getattr(getattr(part, "__struct_config__", None), "tag", None)
    return tag if isinstance(tag, str) else type(part).__name__


def system_text(message: Message, where: str, dropped: Dropped) -> list[TextBlock]:
    """The text blocks of a system ``message``, for a wire whose system prompt
    is text only; each other block is reported in ``dropped`` (at
    ``{where}content[i]``), never left out unsaid."""
    for i, part in enumerate(message.content):
        if not isinstance(part, TextBlock):
            dropped.add(
                f"{where}content[{i}]", part_type(part), UNSUPPORTED, "a system prompt is text only"
            )
    return [p for p in message.content if isinstance(p, TextBlock)]


def find_payload(
    payloads: Iterable[ProviderPayload], provider: str, fmt: str
) -> ProviderPayload | None:
    """The first payload of ``provider`` in format ``fmt``, or None."""
    for p in payloads:
        if p.provider == provider and p.format == fmt:
            return p
    return None


def arguments_object(arguments: str, call_id: str, where: str, dropped: Dropped) -> JSONValue:
    """A tool call's argument text as the JSON object wires that take objects
    (Ollama, Bedrock) need: ``{}`` for empty text; text that is not a JSON
    object is reported in ``dropped`` and sent as ``{}``."""
    try:
        value: Any = decode_json(arguments) if arguments.strip() else {}
    except msgspec.DecodeError:
        value = None
    if not isinstance(value, dict):
        dropped.add(
            where, "arguments", INVALID, f"tool call {call_id}: not a JSON object; sent {{}}"
        )
        return {}
    return value


def hosted_lines_and_text(parts: Iterable[object]) -> str:
    """One content string for wires whose assistant message is a single text
    (Chat Completions, Ollama): the hosted-activity lines of ``parts`` (see
    :func:`hosted_activity_line`), one per line, then the text blocks joined."""
    lines = [hosted_activity_line(p) for p in parts if isinstance(p, HostedActivity)]
    text = "".join(p.text for p in parts if isinstance(p, TextBlock))
    return "\n".join([*lines, text]) if lines else text


def context_text(source: str, text: str) -> str:
    """``text`` of a message from ``source``: injected context (``context:<tag>``,
    or ``context`` alone) as its tagged envelope, ``<tag>`` and ``</tag>`` on
    lines of their own around it (docs/architecture.md §4); anything else as it is."""
    if not source.startswith("context"):
        return text
    tag = source.partition(":")[2] or "context"
    return f"<{tag}>\n{text}\n</{tag}>"


def hosted_activity_line(activity: HostedActivity) -> str:
    """The text that stands for a hosted activity sent portably to another provider.

    ``[hosted web_search {"query": "q"}: completed, 5 results]``: name, input
    (JSON, if any), state and summary (if any); never its payload.
    """
    given = "" if activity.input is None else json.dumps(activity.input, ensure_ascii=False)
    line = f"[hosted {activity.name}{f' {given}' if given else ''}: {activity.state}"
    return line + (f", {activity.summary}]" if activity.summary else "]")


__all__ = [
    "BODY_EXCERPT",
    "FUNCTION_FIELDS",
    "STATUS_ERRORS",
    "Dropped",
    "arguments_object",
    "body_excerpt",
    "context_text",
    "decode_body",
    "decode_frame",
    "error_class_for_status",
    "find_payload",
    "finished_request",
    "fold_fields",
    "function_tool",
    "header",
    "hosted_activity_line",
    "hosted_lines_and_text",
    "malformed",
    "merge_extra",
    "own_block",
    "part_type",
    "registered_part",
    "status_error_class",
    "stream_event",
    "stream_event_drop",
    "tool_definition",
]


FUNCTION_FIELDS = frozenset({"name", "description", "parameters"})
"""The ``function``-object fields :func:`function_tool` writes; ``ToolSpec.native`` may not set them."""


def tool_definition(
    spec: ToolSpec,
    shape: str,
    reserved: Collection[str],
    *,
    schema: str = "parameters",
    kind: str | None = None,
) -> dict[str, Any]:
    """A function tool's definition as most wires spell it: ``type`` (when
    ``kind`` is given), ``name``, ``description`` (when there is one), the
    parameters' JSON Schema under ``schema``, then ``spec``'s native fields
    for ``shape`` merged last (``reserved`` the fields they may not set)."""
    definition: dict[str, Any] = {} if kind is None else {"type": kind}
    definition["name"] = spec.name
    if spec.description:
        definition["description"] = spec.description
    definition[schema] = spec.parameters
    spec.merge_native(shape, definition, reserved)
    return definition


def function_tool(spec: ToolSpec, shape: str) -> dict[str, JSONValue]:
    """``{"type": "function", "function": {...}}`` for ``spec``, its native
    fields for ``shape`` merged into the ``function`` object (Chat
    Completions' ``strict``; Ollama's native chat mirrors the form)."""
    return {"type": "function", "function": tool_definition(spec, shape, FUNCTION_FIELDS)}


def merge_extra(body: dict[str, Any], extra: Mapping[str, JSONValue]) -> None:
    """Merge :attr:`GenerationOptions.extra` into a built wire ``body``.

    A new field is added and a value elelem wrote is replaced, except a list
    elelem built (the tools, the messages): an ``extra`` list extends it, and
    any other value there is an :class:`~elelem.errors.UnsupportedError`
    naming the field, since replacing it would silently drop what elelem sent.
    """
    for key, value in extra.items():
        built = body.get(key)
        if isinstance(built, list):
            if not isinstance(value, list):
                raise UnsupportedError(
                    f"options.extra[{key!r}] is a {type(value).__name__}, but elelem built "
                    f"{key!r} as a list; an extra list extends it, nothing replaces it"
                )
            body[key] = [*built, *value]
        else:
            body[key] = value


def finished_request(
    path: str, body: dict[str, Any], options: GenerationOptions, dropped: Dropped, stream: bool
) -> EncodedRequest:
    """The request an encoder hands the driver, once ``body`` is built:
    ``options.extra`` merged over it last (:func:`merge_extra`, so a caller's
    field wins over what elelem wrote) and the encoding's drop records."""
    merge_extra(body, options.extra)
    return EncodedRequest(path=path, body=body, stream=stream, dropped=tuple(dropped.items))
