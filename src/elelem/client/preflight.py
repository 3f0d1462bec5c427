"""Warnings before sending: what the model catalog says a request will hit.

:func:`preflight` checks a neutral request against what
:mod:`elelem.providers.capabilities` knows of its model and returns one
:class:`ModelWarning` per problem, each a structured record (``kind``, the
message, and the figures behind it), never an error: the catalog can be
behind the provider, so the request is still the caller's to send.

- ``unknown-model``: the id is none the catalog knows for the provider, and
  one it knows is close (a typo): "did you mean …";
- ``deprecated``: the catalog marks the model deprecated;
- ``context-window``: the local token estimate (:mod:`elelem.tokens`)
  exceeds the model's context window;
- ``modality``: an attachment is of a kind (image, PDF, audio, video) the
  model does not take as input;
- ``tools`` / ``structured-output``: tools or a JSON schema are asked of a
  model that cannot take them.

A model the catalog does not know gets no warning but the first: unknown
is not "cannot".
"""

from __future__ import annotations

import difflib

import msgspec

from elelem.providers.capabilities import ModelInfo, model_info
from elelem.providers.models import KNOWN_MODELS
from elelem.tokens import estimate_request
from elelem.vocabulary import AudioBlock, DocumentBlock, ImageBlock, JsonSchemaOutput
from elelem.vocabulary.model_profiles import model_profiles
from elelem.wire import ModelRequest


class ModelWarning(msgspec.Struct, frozen=True, omit_defaults=True):
    """One thing the catalog expects a request to hit (see the module).

    ``limit`` and ``value`` are the figures compared where there are some
    (the context window and the estimate); ``suggestion`` the known model
    an unknown id is close to."""

    kind: str
    message: str
    limit: int | None = None
    value: int | None = None
    suggestion: str | None = None


_PDF = "application/pdf"


def _modality(part: object) -> str | None:
    if isinstance(part, ImageBlock):
        return "image"
    if isinstance(part, AudioBlock):
        return "audio"
    if isinstance(part, DocumentBlock):
        media = part.media_type or ""
        if media == _PDF:
            return "pdf"
        for kind in ("audio", "video", "image"):
            if media.startswith(kind + "/"):
                return kind
    return None


def suggest(provider: str, model: str) -> str | None:
    """The known model of ``provider`` closest to ``model``, if one is close."""
    known = [*KNOWN_MODELS.get(provider, ()), *(p.prefix for p in model_profiles())]
    close = difflib.get_close_matches(model, known, n=1, cutoff=0.85)
    return close[0] if close and close[0] != model else None


def preflight(
    provider: str,
    model: str,
    request: ModelRequest,
    *,
    tools_asked: bool = False,
    info: ModelInfo | None = None,
) -> tuple[ModelWarning, ...]:
    """The warnings for sending ``request`` to ``model`` at ``provider``;
    ``tools_asked`` counts tools the request does not list yet (MCP servers
    started later); ``info`` replaces the catalog's (e.g. merged with what
    the provider reported)."""
    info = info if info is not None else model_info(provider, model)
    where = f"{provider}:{model}"
    if not info.known:
        near = suggest(provider, model)
        if near is None:
            return ()
        return (
            ModelWarning(
                "unknown-model",
                f"{where} is not a model elelem knows; did you mean {provider}:{near}?",
                suggestion=near,
            ),
        )
    out: list[ModelWarning] = []
    if info.deprecated:
        out.append(ModelWarning("deprecated", f"{where} is deprecated"))
    if info.context_window is not None:
        estimate = estimate_request(request, provider).total
        if estimate > info.context_window:
            out.append(
                ModelWarning(
                    "context-window",
                    f"the request is about {estimate:,} tokens (estimated), more than "
                    f"{where}'s context window of {info.context_window:,}",
                    limit=info.context_window,
                    value=estimate,
                )
            )
    if info.input_modalities is not None:
        accepted = set(info.input_modalities)
        missing = sorted(
            {
                kind
                for message in request.messages
                for part in message.content
                if (kind := _modality(part)) is not None and kind not in accepted
            }
        )
        for kind in missing:
            text = (
                f"{where} does not take {kind} input (it takes {', '.join(info.input_modalities)})"
            )
            out.append(ModelWarning("modality", text))
    if info.tools is False and (request.tools or tools_asked):
        out.append(ModelWarning("tools", f"{where} does not take tools"))
    if info.structured_output is False and isinstance(request.options.output, JsonSchemaOutput):
        out.append(
            ModelWarning("structured-output", f"{where} does not follow a JSON schema (--schema)")
        )
    return tuple(out)


__all__ = ["ModelWarning", "preflight", "suggest"]
