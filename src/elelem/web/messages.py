"""The messages a ``useChat`` page sends, as elelem messages.

``useChat`` posts the whole conversation as AI SDK ``UIMessage``\\ s (``{id,
role, parts}``).  :func:`messages_from_ui` turns them into the portable
history a request carries: text parts become text blocks; a tool part
(``tool-<name>`` or ``dynamic-tool``) becomes the assistant's tool call and,
once it has an output or an error, the tool result that answers it.

Parts that only display something (``reasoning`` and ``reasoning-file`` — a
page's copy of reasoning is unsigned and is never resent as the model's own
—, ``custom``, a provider item the page holds no payload of, ``source-url``,
``source-document``, ``step-start``, ``data-*``) are not part of the history.
A ``file`` part becomes an image or a document block (the bytes of a
``data:`` URL, or an http(s) URL the provider fetches); with ``provider``
given, a part whose ``providerReference`` (AI SDK 7: provider name -> file
id, for a file uploaded to the provider) names that provider is sent by
that id instead, as the AI SDK does (:class:`~elelem.vocabulary.FileSource`);
a part of a type this module does not know is kept as an
:class:`~elelem.vocabulary.UnknownBlock`.  A malformed message is a
:class:`~elelem.errors.DecodeError` naming where.

:func:`approvals_from_ui` reads the answers ``useChat``'s
``addToolApprovalResponse`` wrote into the assistant's last message (tool
parts in the ``approval-responded`` state) as the ``approvals`` mapping
:func:`elelem.resume` takes.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

import msgspec

from elelem.conversation.files import file_source
from elelem.errors import DecodeError
from elelem.render.sanitize import safe_url
from elelem.vocabulary import (
    AudioBlock,
    CallId,
    DocumentBlock,
    ImageBlock,
    Message,
    Part,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
    URLSource,
)

_ROLES = ("system", "user", "assistant")
_DISPLAY_ONLY = (
    "reasoning",
    "reasoning-file",
    "custom",
    "source-url",
    "source-document",
    "step-start",
)


def messages_from_ui(messages: object, *, provider: str | None = None) -> tuple[Message, ...]:
    """The elelem history of a ``useChat`` request's ``messages`` (files
    ``provider`` holds sent by their id: see the module docs)."""
    if not isinstance(messages, list):
        raise DecodeError("messages must be a list of UI messages", "$.messages")
    out: list[Message] = []
    for i, message in enumerate(messages):
        where = f"$.messages[{i}]"
        if not isinstance(message, dict):
            raise DecodeError("a UI message must be an object", where)
        role = message.get("role")
        if role not in _ROLES:
            raise DecodeError(f"unknown UI message role {role!r}", f"{where}.role")
        parts = message.get("parts")
        if not isinstance(parts, list):
            raise DecodeError("a UI message needs a parts list", f"{where}.parts")
        out.extend(_message(role, parts, where, provider))
    return tuple(out)


def approvals_from_ui(message: object, where: str = "$.messages[-1]") -> dict[str, bool]:
    """The approvals a ``useChat`` page answered in ``message`` (the
    assistant's last message): each tool part in the ``approval-responded``
    state, by call id, True or False.  The approval id must be the call id
    (what :func:`elelem.web.parts.approval_requests` sent); a malformed
    answer is a :class:`~elelem.errors.DecodeError` naming where."""
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(parts, list):
        raise DecodeError("a UI message needs a parts list", f"{where}.parts")
    out: dict[str, bool] = {}
    for j, part in enumerate(parts):
        at = f"{where}.parts[{j}]"
        if not isinstance(part, dict) or part.get("state") != "approval-responded":
            continue
        call_id = part.get("toolCallId")
        approval = part.get("approval")
        if not isinstance(call_id, str) or not isinstance(approval, dict):
            raise DecodeError("an answered approval needs a toolCallId and an approval", at)
        if approval.get("id") != call_id:
            raise DecodeError(
                f"approval id {approval.get('id')!r} is not the call's id {call_id!r}",
                f"{at}.approval.id",
            )
        approved = approval.get("approved")
        if not isinstance(approved, bool):
            raise DecodeError("an answered approval needs approved: true or false", at)
        out[call_id] = approved
    return out


def _message(role: str, parts: Sequence[Any], where: str, provider: str | None) -> list[Message]:
    content: list[Part] = []
    results: list[ToolResultBlock] = []
    for j, part in enumerate(parts):
        at = f"{where}.parts[{j}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if not isinstance(kind, str):
            raise DecodeError("a UI message part needs a string type", f"{at}.type")
        if kind == "text":
            text = part.get("text")
            if not isinstance(text, str):
                raise DecodeError("a text part needs a string text", f"{at}.text")
            content.append(TextBlock(text))
        elif kind == "file":
            content.append(_file(part, at, provider))
        elif role == "assistant" and (kind == "dynamic-tool" or kind.startswith("tool-")):
            call, result = _tool(part, kind, at)
            content.append(call)
            if result is not None:
                results.append(result)
        elif kind in _DISPLAY_ONLY or kind.startswith("data-"):
            continue
        else:
            # Well-formed but unknown: kept as an unknown block, which the
            # portable projection reports as dropped rather than guessing.
            content.append(UnknownBlock(part))
    out: list[Message] = []
    if content:
        source = {"system": "system", "user": "user", "assistant": "assistant"}[role]
        out.append(Message(role=role, content=tuple(content), source=source))  # type: ignore[arg-type]
    if results:
        out.append(Message(role="user", content=tuple(results), source="tool"))
    return out


def _reference(part: dict[str, Any], at: str, provider: str | None) -> tuple[str, str] | None:
    """(provider, file id) of the part's ``providerReference`` to send: the
    entry of ``provider``; else, when the part has no URL elelem can send,
    its first entry (kept: a wire of another provider reports it dropped);
    else None."""
    refs = part.get("providerReference")
    if refs is None:
        return None
    if not isinstance(refs, dict) or not all(isinstance(v, str) and v for v in refs.values()):
        raise DecodeError(
            "a file part's providerReference maps provider names to file ids",
            f"{at}.providerReference",
        )
    found = refs.get(provider) if provider is not None else None
    if isinstance(found, str) and provider is not None:
        return provider, found
    url = part.get("url")
    sendable = isinstance(url, str) and (url.startswith("data:") or safe_url(url) is not None)
    if not sendable and refs:
        first = next(iter(refs))
        return str(first), str(refs[first])
    return None


def _file(
    part: dict[str, Any], at: str, provider: str | None = None
) -> ImageBlock | DocumentBlock | AudioBlock:
    """A ``file`` part: an image, audio or a document, by the id ``provider``
    holds it under, from a ``data:`` URL's bytes, or an http(s) URL the
    provider fetches."""
    url = part.get("url")
    media = part.get("mediaType")
    filename = part.get("filename") if isinstance(part.get("filename"), str) else None
    if not isinstance(url, str) or not isinstance(media, str) or not media:
        raise DecodeError("a file part needs a url and a mediaType", at)
    image = media.startswith("image/")
    reference = _reference(part, at, provider)
    if reference is not None:
        held = file_source(*reference)
        if image:
            return ImageBlock(held, media, filename=filename)
        if media.startswith("audio/"):
            return AudioBlock(held, media, filename=filename)
        return DocumentBlock(held, media, filename=filename)
    if url.startswith("data:"):
        head, comma, body = url.partition(",")
        if not comma or not head.endswith(";base64"):
            raise DecodeError("a file part's data: URL must be base64", f"{at}.url")
        try:
            data = base64.b64decode(body, validate=True)
        except binascii.Error as exc:
            raise DecodeError(
                f"a file part's data: URL is not base64: {exc}", f"{at}.url"
            ) from None
        if image:
            return ImageBlock.from_bytes(data, media, filename=filename)
        if media.startswith("audio/"):
            return AudioBlock.from_bytes(data, media, filename=filename)
        return DocumentBlock.from_bytes(data, media, filename=filename)
    if safe_url(url) is None:
        raise DecodeError("a file part's URL must be data: or http(s)", f"{at}.url")
    if image:
        return ImageBlock.from_url(url, media, filename=filename)
    if media.startswith("audio/"):
        return AudioBlock.from_url(url, media, filename=filename)
    return DocumentBlock(URLSource(url), media, filename=filename)


def _tool(part: dict[str, Any], kind: str, at: str) -> tuple[ToolCallBlock, ToolResultBlock | None]:
    name = part.get("toolName") if kind == "dynamic-tool" else kind.removeprefix("tool-")
    call_id = part.get("toolCallId")
    if not isinstance(name, str) or not name or not isinstance(call_id, str) or not call_id:
        raise DecodeError("a tool part needs a toolCallId and a tool name", at)
    arguments = msgspec.json.encode(part.get("input") if part.get("input") is not None else {})
    call = ToolCallBlock(CallId(call_id), name, arguments.decode())
    state = part.get("state")
    result: ToolResultBlock | None = None
    if state == "output-available":
        output = part.get("output")
        text = output if isinstance(output, str) else msgspec.json.encode(output).decode()
        result = ToolResultBlock(CallId(call_id), text, name=name)
    elif state in ("output-error", "output-denied"):
        error = part.get("errorText")
        text = error if isinstance(error, str) else "the tool call was denied"
        result = ToolResultBlock(CallId(call_id), text, is_error=True, name=name)
    return call, result


__all__ = ["approvals_from_ui", "messages_from_ui"]
