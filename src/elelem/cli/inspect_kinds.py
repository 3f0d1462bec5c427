"""The exchanges of a recording that are not chat: embeddings, speech,
transcription, batches (create, poll, results), token counts, file uploads
and model lists, each read by the library's own reader for that kind, and any other
exchange reported as unknown with its method, path and status.

Each exchange is one line of ``elelem inspect --json``::

    {"kind":"exchange","interaction":N,"exchange":KIND,"method":…,"path":…,
     "status":…,"provider":…, …what the reader returned…}

The values are what the reader the client itself runs returns for the same
body, never a second reading of it: an embeddings answer through its
wire's ``decode`` (:func:`elelem.embeddings.embedding_wires`), speech and a
whole transcription through the ``speak`` and ``transcribe`` flows' own
calls (:mod:`elelem.speech.endpoints`), a streamed transcription or speech
through the wire's own parsers (the shape's ``speech`` and ``transcription``,
:mod:`elelem.wire.speech`), a batch object, its results and their
answers through the batch wire's flows and
:func:`elelem.batches.core.read_results`, a token count through its
wire's counting flow (:mod:`elelem.client.counting`), a model list through
its wire's page reader (the shape's ``listing``, :mod:`elelem.wire.listing`).  A reader's typed error is the
exchange's ``error``, and the rest of the recording is still read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from elelem.batches import BATCH_PROVIDERS
from elelem.batches import wire_of as batch_api
from elelem.batches.core import read_results
from elelem.client.counting import TokenCount, counter_of, counting
from elelem.codec import to_builtins
from elelem.embeddings import EMBEDDING_PROVIDERS, embedding_wires
from elelem.errors import (
    ElelemError,
    IncompleteStreamError,
    MalformedStreamError,
    StreamError,
    UnsupportedError,
)
from elelem.providers import Catalog, Target
from elelem.providers import load_shape as catalog_shape
from elelem.providers.recognize import SHAPE_PROVIDERS, provider_of_url
from elelem.recordings.bodies import head
from elelem.recordings.cassettes import Interaction
from elelem.speech.endpoints import speak, speech_wire, transcribe, transcription_wire
from elelem.stream import AssembledResponse, Assembler, Chunk, TextDelta
from elelem.transport.one_shot import Call, Exchange
from elelem.vocabulary import AudioBlock, BytesSource, Message, ProviderId, TextBlock
from elelem.vocabulary.audio import MEDIA_TYPES_BY_FORMAT
from elelem.wire import ModelRequest
from elelem.wire.batch import BatchRecord, Item
from elelem.wire.embeddings import EmbeddingWire
from elelem.wire.listing import ModelListing
from elelem.wire.speech import SpeechRequest

Frames = Callable[[Interaction], list[tuple[str, str]]]
"""The recorded frames of a streamed body (the transport's own decoders)."""

KINDS: list[tuple[str | None, re.Pattern[str], str]] = [
    (None, re.compile(r"(/embeddings|/api/embed|:batchEmbedContents|:embedContent|:predict)$"),
     "embeddings"),
    (None, re.compile(r"/model/[^/]*(titan-embed|cohere\.embed)[^/]*/invoke$"), "embeddings"),
    ("POST", re.compile(r"(/messages/count_tokens|/responses/input_tokens|:countTokens)$"),
     "token-count"),
    (None, re.compile(r"/audio/speech$"), "speech"),
    (None, re.compile(r"/audio/transcriptions$"), "transcription"),
    ("POST", re.compile(r"(/batches|:batchGenerateContent)$"), "batch-create"),
    ("GET", re.compile(r"(/batches/[^/]+/results|/files/[^/]+/content)$"), "batch-results"),
    (None, re.compile(r"/batches/[^/]+(/cancel)?$"), "batch-poll"),
    # A file upload; a vector store's /files attaches one (not an upload).
    ("POST", re.compile(r"^(?!.*/vector_stores/).*/files$"), "file-upload"),  # Gemini: /upload/v1beta/files
    ("GET", re.compile(r"(/models|/api/tags)$"), "model-list"),
]  # fmt: skip
"""(method or any, request path pattern, exchange kind), tried in order."""


def exchange_kind(interaction: Interaction) -> str | None:
    """The kind of a recorded exchange that is not chat, from its request,
    else (a body recorded alone) from its answer: a list of ``embedding``
    objects is an embeddings answer (``None``: no kind here names it)."""
    request = interaction.request
    if request is None:
        return _answer_kind(interaction)
    for method, pattern, kind in KINDS:
        if (method is None or request.method == method) and pattern.search(request.path):
            return kind
    return None


def _answer_kind(interaction: Interaction) -> str | None:
    response = interaction.response
    if response.streamed or head(response.body, 1) != b"{":
        return None
    try:
        data = response.json()
    except (ValueError, RecursionError):
        return None  # not JSON: the chat shapes' detection says what it is
    items = data.get("data") if isinstance(data, dict) else None
    embeddings = (
        isinstance(items, list)
        and bool(items)
        and all(isinstance(i, dict) and i.get("object") == "embedding" for i in items)
    )
    return "embeddings" if embeddings else None


def unknown_line(interaction: Interaction) -> dict[str, Any]:
    """The line of an exchange no reader knows: what it was, never refused."""
    return {**_head(interaction, "unknown"), "provider": None}


def _head(interaction: Interaction, kind: str) -> dict[str, Any]:
    request = interaction.request
    return {
        "kind": "exchange",
        "interaction": interaction.index,
        "exchange": kind,
        "method": request.method if request is not None else None,
        "path": request.path if request is not None else None,
        "status": interaction.response.status,
    }


def _request_json(interaction: Interaction) -> dict[str, Any]:
    request = interaction.request
    found = request.json if request is not None else None
    return found if isinstance(found, dict) else {}


def _provider(interaction: Interaction, catalog: Catalog, shape: str) -> str:
    request = interaction.request
    return provider_of_url(catalog, request.uri if request is not None else None, shape)


class _Having:
    """The names of the shapes whose wire has the exchange ``kind`` (a
    shape's field of that name), as a container."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __contains__(self, name: object) -> bool:
        try:
            return getattr(catalog_shape(str(name)), self.kind, None) is not None
        except ElelemError:
            return False


SPEECH_SHAPES = _Having("speech")
"""The shapes whose wire has the audio endpoints."""


def _speech_home() -> str:
    # The provider a recording of the audio endpoints is taken from when its
    # own is unknown or has none: the one of the wire that defines them.
    return SHAPE_PROVIDERS["openai_responses"]


def _target(catalog: Catalog, provider: str, model: str, fallback: str, shapes: Any) -> Target:
    """A target of ``provider`` (``fallback`` when it is not one whose
    shape is in ``shapes``) for ``model``: what the library's readers take.
    Nothing is sent: its key is a placeholder."""
    names = set(catalog.names())
    name = provider if provider in names and catalog.get(provider).shape in shapes else fallback
    try:
        return catalog.target(f"{name}:{model or 'recorded'}", {}, {name: "recorded"})
    except ElelemError:
        return catalog.target(f"{fallback}:{model or 'recorded'}", {}, {fallback: "recorded"})


def _answered(flow: Exchange[Any], body: bytes, provider: str) -> Any:
    """What ``flow`` returns when its one call is answered ``body``: the
    call's own parse (the reader the client runs), then the flow's own
    making of its result from it.  A flow that asks for a second request
    is a recording that holds only one of them (an error)."""
    call: Call = next(flow)
    call.parse_response(body, ProviderId(provider))
    try:
        flow.send(call.value)
    except StopIteration as stop:
        return stop.value
    flow.close()
    raise MalformedStreamError(f"{call.what}: the recorded exchange is one of several requests")


def _error(exc: ElelemError) -> dict[str, Any]:
    if isinstance(exc, StreamError):
        return {
            "type": exc.provider_type or exc.kind,
            "message": exc.provider_message if exc.provider_message is not None else exc.message,
        }
    return {"type": type(exc).__name__, "message": str(exc)}


def _status_error(interaction: Interaction, catalog: Catalog, provider: str) -> dict[str, Any]:
    """A recorded error answer, classified by the provider's own chat shape."""
    name = provider if provider in set(catalog.names()) else SHAPE_PROVIDERS["openai_chat"]
    shape = catalog_shape(catalog.get(name).shape)
    response = interaction.response
    return _error(shape.classify_error(response.status, response.headers, response.body))


# -- the kinds ----------------------------------------------------------------------


def embedding_wire(interaction: Interaction, provider: str) -> EmbeddingWire:
    """The embedding wire a recorded request went to, told by its path (and
    its provider, for the OpenAI wire's kin)."""
    path = interaction.request.path if interaction.request is not None else ""
    wires = embedding_wires()
    if path.endswith(("/api/embed", "/api/embeddings")):
        return wires["ollama"]
    if path.endswith((":batchEmbedContents", ":embedContent")):
        return wires["gemini"]
    if path.endswith(":predict"):
        return wires["vertex"]
    if "titan-embed" in path:
        return wires["titan"]
    if "cohere.embed" in path:
        return wires["cohere"]
    request = interaction.request
    host = urlsplit(request.uri or "").hostname if request is not None else None
    for name, spec in EMBEDDING_PROVIDERS.items():
        if host is not None and urlsplit(spec.base_url).hostname == host:
            return wires[name]  # a provider that only embeds (Voyage)
    return wires.get(provider, wires["compatible"])


_INPUT_KEYS = ("input", "texts", "requests", "instances", "inputText", "prompt")
_ANSWER_KEYS = ("data", "embeddings", "predictions")


def embedding_inputs(interaction: Interaction) -> int:
    """How many texts the recorded request sent (else how many vectors the
    answer holds: a recording may keep no request body)."""
    sent = _request_json(interaction)
    for key in _INPUT_KEYS:
        if key in sent:
            value = sent[key]
            return len(value) if isinstance(value, list) else 1
    try:
        answer = json.loads(interaction.response.body)
    except ValueError:
        return 0
    answer = answer if isinstance(answer, dict) else {}
    if "embedding" in answer:
        return 1  # Titan's and Ollama's legacy answer: one vector
    for key in _ANSWER_KEYS:
        value = answer.get(key)
        if isinstance(value, dict):  # Cohere's embeddings_by_type
            value = value.get("float")
        if isinstance(value, list):
            return len(value)
    return 0


def _embeddings(interaction: Interaction, catalog: Catalog) -> dict[str, Any]:
    provider = _provider(interaction, catalog, "openai_chat")
    wire = embedding_wire(interaction, provider)
    decoded = wire.decode(interaction.response.body, embedding_inputs(interaction))
    sizes = sorted({len(v) for v in decoded.vectors})
    base64 = _request_json(interaction).get("encoding_format") == "base64"
    return {
        "provider": provider,
        "model": _model(interaction),
        "wire": wire.name,
        "count": len(decoded.vectors),
        "dimensions": sizes[0] if len(sizes) == 1 else sizes,
        "encoding": "base64" if base64 else "float",
        "usage": to_builtins(decoded.usage),
        "truncated": list(decoded.truncated),
    }


def _model(interaction: Interaction) -> str | None:
    model = _request_json(interaction).get("model")
    if isinstance(model, str):
        return model
    path = interaction.request.path if interaction.request is not None else ""
    found = re.search(r"/(?:models|model|deployments)/([^/:]+)", path)
    return found.group(1) if found else None


def _speech(interaction: Interaction, catalog: Catalog, frames: Frames) -> dict[str, Any]:
    provider = _provider(interaction, catalog, "openai_chat")
    sent = _request_json(interaction)
    model = _model(interaction) or ""
    target = _target(catalog, provider, model, _speech_home(), SPEECH_SHAPES)
    format = str(sent.get("response_format") or "mp3")
    response = interaction.response
    streamed = response.content_type == "text/event-stream"
    if streamed:
        media_type = MEDIA_TYPES_BY_FORMAT.get(format, "application/octet-stream")
        known = format if format in MEDIA_TYPES_BY_FORMAT else "mp3"
        asked = SpeechRequest(target.model, "", format=known, stream_format="sse")
        parser = speech_wire(target).parser(target.provider, asked)
        chunks = [*parser.open(200, {})]
        for event, data in frames(interaction):
            chunks += parser.message(event, data)
        assembled = _finished(target.provider, chunks, "speech")
        size = sum(
            len(p.source.blob.data)
            for p in assembled.content
            if isinstance(p, AudioBlock) and isinstance(p.source, BytesSource)
        )
        usage = to_builtins(assembled.usage)
    else:
        said = SpeechRequest(target.model, str(sent.get("input") or ""), str(sent.get("voice") or "alloy"),
                             format if format in MEDIA_TYPES_BY_FORMAT else "mp3")  # fmt: skip
        flow = speak(target, said)
        block: AudioBlock = _answered(flow, response.body, target.provider)
        assert isinstance(block.source, BytesSource)
        media_type, size, usage = block.media_type or "", len(block.source.blob.data), None
    return {"provider": provider, "model": model or None, "format": format,
            "media_type": media_type, "bytes": size, "streamed": streamed, "usage": usage}  # fmt: skip


def _finished(provider: ProviderId, chunks: Sequence[Chunk], what: str) -> AssembledResponse:
    """The chunks of a recorded stream assembled; one that ended without its
    last event is incomplete, as the client's own stream says."""
    assembler = Assembler(provider)
    assembler.feed_all(chunks)
    if not assembler.finished:
        raise IncompleteStreamError(f"the recorded {what} stream ended without its last event")
    return assembler.result()


def _transcription(interaction: Interaction, catalog: Catalog, frames: Frames) -> dict[str, Any]:
    provider = _provider(interaction, catalog, "openai_chat")
    model = multipart_field(interaction, "model") or ""
    target = _target(catalog, provider, model, _speech_home(), SPEECH_SHAPES)
    response = interaction.response
    if response.content_type == "text/event-stream":
        parser = transcription_wire(target).parser(target.provider, target.model)
        chunks = [*parser.open(200, {})]
        for event, data in frames(interaction):
            chunks += parser.message(event, data)
        _finished(target.provider, chunks, "transcription")
        deltas = sum(isinstance(c, TextDelta) for c in chunks)
        done = parser.done or {}
        text, usage, streamed = done.get("text"), done.get("usage"), True
    else:
        audio = AudioBlock.from_bytes(b"recorded", "audio/wav")
        transcript = _answered(transcribe(target, audio), response.body, target.provider)
        text, usage, deltas, streamed = transcript.text, transcript.usage, 0, False
    return {"provider": provider, "model": model or None, "text": text, "deltas": deltas,
            "streamed": streamed, "usage": usage}  # fmt: skip


def multipart_field(interaction: Interaction, name: str) -> str | None:
    """A text field of a recorded ``multipart/form-data`` request (a
    transcription upload's ``model``), None where it is not there."""
    request = interaction.request
    body = request.body if request is not None else None
    if not body:
        return None
    found = re.search(rf'name="{re.escape(name)}"\r?\n\r?\n([^\r\n]*)', body)
    return found.group(1) if found else None


# -- batches ----------------------------------------------------------------------------


def batch_provider(wire: str) -> str:
    """The provider a recording of batch API ``wire`` is taken to come from:
    the first record whose batch API it is (``BATCH_PROVIDERS``, derived
    from the records)."""
    found = [provider for provider, name in BATCH_PROVIDERS.items() if name == wire]
    if not found:
        raise UnsupportedError(f"no provider's batch API is {wire!r}")
    return found[0]


def batch_wire_name(interaction: Interaction) -> str:
    """Which batch API a recorded request went to, by its path."""
    path = interaction.request.path if interaction.request is not None else ""
    if "/messages/batches" in path:
        return "anthropic"
    if path.startswith("/v1beta/") or ":batchGenerateContent" in path:
        return "gemini"
    return "openai"


def _batch_target(catalog: Catalog, name: str) -> Target:
    provider = batch_provider(name)
    return _target(catalog, provider, "recorded", provider, {catalog.get(provider).shape})


_EMPTY = BatchRecord(ProviderId("recorded"), "", "", "recorded", "running", "", ())


def _batch_object(interaction: Interaction, catalog: Catalog) -> dict[str, Any]:
    """A batch create or poll answer: the batch object, as the status flow reads it."""
    name = batch_wire_name(interaction)
    target = _batch_target(catalog, name)
    wire = batch_api(target)
    record: BatchRecord = _answered(
        wire.status(target, _EMPTY), interaction.response.body, target.provider
    )
    out: dict[str, Any] = {
        "provider": str(target.provider),
        "batch_id": record.batch_id,
        "state": record.state,
        "raw_state": record.raw_state,
        "counts": dict(record.counts),
    }
    if name == "gemini" and record.done:
        # Gemini's finished batch holds its results inline.
        items = _answered(wire.results(target, record), interaction.response.body,
                          target.provider)  # fmt: skip
        out["results"] = _results(target, record, items)
    return out


def _batch_results(interaction: Interaction, catalog: Catalog) -> dict[str, Any]:
    name = batch_wire_name(interaction)
    target = _batch_target(catalog, name)
    wire = batch_api(target)
    path = interaction.request.path if interaction.request is not None else ""
    # Where the results are is the request's own path (Anthropic), or any
    # file id (OpenAI): the flow's first call reads the body either way.
    record = BatchRecord(_EMPTY.provider, "", name, "recorded", "ended", "ended", (),
                         output=path if name == "anthropic" else "recorded")  # fmt: skip
    items: list[Item] = _answered(
        wire.results(target, record), interaction.response.body, target.provider
    )
    return {"provider": str(target.provider), "results": _results(target, record, items)}


def _results(target: Target, record: BatchRecord, items: list[Item]) -> list[dict[str, Any]]:
    """Each result read as the answer it holds, by the shape its body speaks
    (the batch wire names it on each item, as for the client)."""
    return [result_line(r) for r in read_results(target, record, items)]


def result_line(result: Any) -> dict[str, Any]:
    """One batch result as ``inspect`` shows it (a ``BatchResult``)."""
    response = result.response
    return {
        "custom_id": result.custom_id,
        "error": result.error,
        "response": None if response is None else answer_summary(response),
    }


def _block_type(part: object) -> str:
    value = to_builtins(part)
    found = value.get("type") if isinstance(value, dict) else None
    return str(found) if found is not None else type(part).__name__


def answer_summary(response: AssembledResponse) -> dict[str, Any]:
    """An assembled answer in a line: model, block types, text, usage, finish."""
    return {
        "model": response.model,
        "blocks": [_block_type(p) for p in response.content],
        "text": "".join(p.text for p in response.content if isinstance(p, TextBlock)),
        "usage": to_builtins(response.usage),
        "finish": response.finish.reason if response.finish is not None else None,
    }


_COUNTING_SHAPES = {
    "count_tokens": "anthropic_messages",
    "input_tokens": "openai_responses",
    "countTokens": "gemini",
}


def _token_count(interaction: Interaction, catalog: Catalog) -> dict[str, Any]:
    """A token-counting answer, as the counting flow of its wire reads it."""
    path = interaction.request.path if interaction.request is not None else ""
    shape_name = _COUNTING_SHAPES[re.split(r"[/:]", path)[-1]]
    shape = catalog_shape(shape_name)
    counter = counter_of(shape)
    if counter is None:
        raise UnsupportedError(f"the {shape_name} wire counts no tokens")
    provider = _provider(interaction, catalog, shape_name)
    request = ModelRequest(model=_model(interaction) or "recorded", messages=(Message.user("."),))
    flow = counting(shape, counter, request, ProviderId(provider))
    count: TokenCount = _answered(flow, interaction.response.body, provider)
    return {"provider": provider, "model": _model(interaction), "input": count.input,
            "source": count.source, "endpoint": count.note}  # fmt: skip


def _model_list(interaction: Interaction, catalog: Catalog) -> dict[str, Any]:
    path = interaction.request.path if interaction.request is not None else ""
    shape = (
        "ollama_native" if path.endswith("/api/tags")
        else "gemini" if path.startswith("/v1beta/")
        else "anthropic_messages" if "anthropic" in _provider(interaction, catalog, "openai_chat")
        else "openai_chat"
    )  # fmt: skip
    listing = getattr(catalog_shape(shape), "listing", None)
    assert isinstance(listing, ModelListing)  # every shape named above lists models
    models, more = listing.read(json.loads(interaction.response.body))
    return {"provider": _provider(interaction, catalog, shape),
            "models": [m.id for m in models], "more": more is not None}  # fmt: skip


def _file_upload(interaction: Interaction, catalog: Catalog) -> dict[str, Any]:
    """A file upload's answer: OpenAI's and Anthropic's file object, or
    Gemini's ``{"file": {...}}``; its id (or name), purpose and size."""
    answer = json.loads(interaction.response.body)
    answer = answer if isinstance(answer, dict) else {}
    if isinstance(answer.get("file"), dict):
        answer = answer["file"]
    size = next((answer[k] for k in ("bytes", "size_bytes", "sizeBytes") if k in answer), None)
    return {"provider": _provider(interaction, catalog, "openai_chat"),
            "file_id": answer.get("id", answer.get("name")), "purpose": answer.get("purpose"),
            "bytes": size}  # fmt: skip


def kind_line(
    interaction: Interaction, kind: str, catalog: Catalog, frames: Frames
) -> dict[str, Any]:
    """The line of one exchange of ``kind`` (see the module docs)."""
    line = _head(interaction, kind)
    provider = _provider(interaction, catalog, "openai_chat")
    if kind.startswith("batch"):
        provider = batch_provider(batch_wire_name(interaction))
    if interaction.response.status >= 400:
        return {**line, "provider": provider,
                "error": _status_error(interaction, catalog, provider)}  # fmt: skip
    readers: dict[str, Callable[[], dict[str, Any]]] = {
        "embeddings": lambda: _embeddings(interaction, catalog),
        "speech": lambda: _speech(interaction, catalog, frames),
        "transcription": lambda: _transcription(interaction, catalog, frames),
        "batch-create": lambda: _batch_object(interaction, catalog),
        "batch-poll": lambda: _batch_object(interaction, catalog),
        "batch-results": lambda: _batch_results(interaction, catalog),
        "model-list": lambda: _model_list(interaction, catalog),
        "token-count": lambda: _token_count(interaction, catalog),
        "file-upload": lambda: _file_upload(interaction, catalog),
    }
    try:
        return {**line, **readers[kind]()}
    except ElelemError as exc:
        return {**line, "provider": provider, "error": _error(exc)}
    except RecursionError:
        return {**line, "provider": provider,
                "error": {"type": "malformed", "message": "the body is nested too deeply to read"}}  # fmt: skip
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return {**line, "provider": provider,
                "error": {"type": "malformed", "message": f"{type(exc).__name__}: {exc}"}}  # fmt: skip


__all__ = [
    "KINDS",
    "answer_summary",
    "batch_provider",
    "batch_wire_name",
    "embedding_inputs",
    "embedding_wire",
    "exchange_kind",
    "kind_line",
    "multipart_field",
    "result_line",
    "unknown_line",
]
