"""``elelem inspect PATH``: print what a recording holds, as NDJSON.

The recording may be in any corpus format (see :mod:`elelem.recordings.cassettes`).
Each interaction's wire shape is detected from its request path, else from its
payloads, and its provider from the recorded URL, by the catalog's
:mod:`elelem.providers.recognize` (one home for provider knowledge); the
shape is the catalog's own (Gemini's Interactions API, whose request
encoder is not built, is recognized and reported, not inspected).  Output, one JSON object per line, per interaction ``N``
(0-based, in recorded order)::

    {"kind":"response","interaction":N,"provider":…,"response_id":…,"model":…}
    {"kind":"block","interaction":N,"block":<codec JSON>}
    {"kind":"hosted","interaction":N,"activity":<codec JSON>}
    {"kind":"usage","interaction":N,"usage":<codec JSON>}
    {"kind":"finish","interaction":N,"reason":…}
    {"kind":"error","interaction":N,"error":{"type":…,"message":…}}
    {"kind":"replay","interaction":N,"wire":…}        (with --wire-replay)
    {"kind":"choice","interaction":N,"choice":K,"blocks":[…],"finish":…}  (n>1: each choice past the first)
    {"kind":"exchange","interaction":N,"exchange":…}  (not chat: see inspect_kinds)

An exchange that is not chat (embeddings, speech, transcription, batches,
file uploads, model lists) is read by the library's own reader for its kind
(:mod:`elelem.cli.inspect_kinds`); one of a kind nothing reads is reported
with its method, path and status: a recording is never refused for holding
something unknown.

Output is ASCII (every other character is a JSON escape), so untrusted text
in a recording cannot drive the terminal.  Bad input prints nothing on stdout
and one line on stderr, exit status 2.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Iterable, Iterator
from types import ModuleType
from typing import Any
from urllib.parse import unquote

import click
import msgspec

from elelem.cli.exits import EXIT_USAGE, Failure, debug_option, guarded
from elelem.cli.flags import max_bytes_option
from elelem.cli.inspect_kinds import exchange_kind, kind_line, unknown_line
from elelem.cli.json_out import ndjson_line
from elelem.cli.safety import command_catalog
from elelem.codec import to_builtins
from elelem.errors import (
    ElelemError,
    StreamError,
    UnsupportedError,
)
from elelem.providers import Catalog
from elelem.providers import load_shape as catalog_shape
from elelem.providers.recognize import RAW_REQUEST_SHAPES, provider_of_url, shape_of_exchange
from elelem.recordings.bodies import SSE_START, head, is_eventstream
from elelem.recordings.cassettes import (
    MAX_RECORDING_BYTES,
    Interaction,
    RecordedResponse,
    RecordingError,
    load,
)
from elelem.recordings.loopback import Reply
from elelem.recordings.rawfile import open_raw_body
from elelem.recordings.replaying import RecordedRequestShape, Replayer
from elelem.stream import AssembledResponse
from elelem.transport.framing import EVENTSTREAM_TYPE, NDJSON_TYPES, NDJSONDecoder, decoder_for
from elelem.vocabulary import HostedActivity, ProviderId
from elelem.wire import Shape


class InspectError(ElelemError):
    """The recording cannot be inspected (the message says why)."""


_PIECE = 64 * 1024


def _decoder(response: RecordedResponse, framing: str) -> Any:
    """The transport decoder for a recorded streamed body: AWS's binary
    event stream where the bytes are one, NDJSON where the content type or
    the shape says so, SSE where the body is server-sent events (how
    recordings keep an event-stream shape's decoded events)."""
    body = response.body
    content_type = response.content_type
    if is_eventstream(body):
        content_type = EVENTSTREAM_TYPE
    elif content_type not in NDJSON_TYPES and head(body, 6).startswith(SSE_START):
        content_type, framing = "text/event-stream", "sse"
    return decoder_for(framing, content_type)


def _frame_pairs(decoder: Any, frames: list[Any]) -> list[tuple[str, str]]:
    if isinstance(decoder, NDJSONDecoder):
        return [("", line) for line in frames]
    return [(frame[0], frame[1]) for frame in frames]


def recorded_frames(response: RecordedResponse, framing: str) -> list[tuple[str, str]]:
    """The ``(event, data)`` frames of a recorded streamed body, split by the
    transport's own decoders (the ones the driver runs): AWS's binary event
    stream where the bytes are one, NDJSON where the content type or the
    shape says so, SSE where the body is server-sent events (how recordings
    keep an event-stream shape's decoded events).  A framing fault raises
    :class:`~elelem.errors.MalformedStreamError` after nothing is returned."""
    decoder = _decoder(response, framing)
    frames: list[Any] = [*decoder.feed(response.body), *decoder.close()]
    if decoder.failure is not None:
        raise decoder.failure
    return _frame_pairs(decoder, frames)


def _pieces(body: bytes) -> Iterator[bytes]:
    return (body[i : i + _PIECE] for i in range(0, len(body), _PIECE))


def _first_frame(response: RecordedResponse, pieces: Iterable[bytes]) -> tuple[str, str] | None:
    """The first frame of a streamed body given in ``pieces``: only as much
    is decoded as that takes (the whole body is the driver's to read)."""
    decoder = _decoder(response, "ndjson")
    for piece in pieces:
        frames = decoder.feed(piece)
        if decoder.failure is not None:
            raise decoder.failure
        if frames:
            return _frame_pairs(decoder, frames[:1])[0]
    frames = decoder.close()
    return _frame_pairs(decoder, frames[:1])[0] if frames else None


def _first_payload(
    interaction: Interaction, pieces: Iterable[bytes] | None = None
) -> dict[str, Any] | None:
    response = interaction.response
    try:
        if response.streamed:
            binary = is_eventstream(response.body)
            frame = _first_frame(response, pieces if pieces is not None else _pieces(response.body))
            if frame is None:
                return None
            event, data = frame
            value = json.loads(data)
            if binary and event and isinstance(value, dict) and event not in value:
                # An AWS event stream names each event in its headers.
                value = {event: value}
            return value if isinstance(value, dict) else None
        value = response.json()
    except (ValueError, ElelemError):
        # Not JSON, or nested past the parser's depth: no payload to know it by.
        return None
    except RecursionError:
        if interaction.request is not None:
            return None  # shown as an exchange of a kind nothing reads
        raise InspectError(
            f"interaction {interaction.index}: its body is nested too deeply to read"
        ) from None
    return value if isinstance(value, dict) else None


def detect_shape(interaction: Interaction, pieces: Iterable[bytes] | None = None) -> str | None:
    """The wire shape of ``interaction``: from its request path, else its
    first payload (:func:`elelem.providers.recognize.shape_of_exchange`);
    ``pieces`` are its streamed body when the response holds only its start
    (a stream read from its file)."""
    request = interaction.request
    path = request.path if request is not None else None
    if path is not None:
        named = shape_of_exchange(path, None)
        if named is not None:
            return named
    return shape_of_exchange(None, _first_payload(interaction, pieces))


def recorded_provider(
    interaction: Interaction, shape: str, catalog: Catalog | None = None
) -> ProviderId:
    """The provider that served ``interaction`` (see
    :func:`~elelem.providers.recognize.provider_of_url`), by ``catalog``
    (the command's by default)."""
    request = interaction.request
    uri = request.uri if request is not None else None
    return ProviderId(provider_of_url(catalog or command_catalog(), uri, shape))


def load_shape(name: str) -> ModuleType:
    """The module implementing catalog shape ``name`` (its ``SHAPE``, and
    ``assistant_wire`` for ``--wire-replay``); InspectError for a shape the
    catalog has not got (Gemini's Interactions API among them: parked, its
    request encoder is not built)."""
    try:
        catalog_shape(name)
    except UnsupportedError:
        raise InspectError(f"shape {name} not supported yet") from None
    return importlib.import_module(f"elelem.shapes.{name}")


def _error_line(n: int, exc: StreamError) -> dict[str, Any]:
    return {
        "kind": "error",
        "interaction": n,
        "error": {
            "type": exc.provider_type or exc.kind,
            "message": exc.provider_message if exc.provider_message is not None else exc.message,
        },
    }


def _response_lines(n: int, result: AssembledResponse) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [
        {
            "kind": "response",
            "interaction": n,
            "provider": result.provider,
            "response_id": result.response_id,
            "model": result.model,
        }
    ]
    for part in result.content:
        if isinstance(part, HostedActivity):
            lines.append({"kind": "hosted", "interaction": n, "activity": to_builtins(part)})
        else:
            lines.append({"kind": "block", "interaction": n, "block": to_builtins(part)})
    if result.usage is not None:
        lines.append({"kind": "usage", "interaction": n, "usage": to_builtins(result.usage)})
    if result.finish is not None:
        lines.append({"kind": "finish", "interaction": n, "reason": result.finish.reason})
    return lines


def inspect_interaction(
    interaction: Interaction,
    *,
    wire_replay: bool,
    shape_name: str | None = None,
    catalog: Catalog | None = None,
    module: ModuleType | None = None,
    replayer: Replayer | None = None,
    reply: Reply | None = None,
) -> list[dict[str, Any]]:
    """The NDJSON objects for one interaction (``shape_name`` if already
    detected; providers recognized by ``catalog``, the command's by default).
    ``module`` is the shape module to use instead of the catalog's (the
    library's tests read the parked Interactions parser this way; the
    command never does).  ``replayer`` serves the response (a recording's
    interactions share one), ``reply`` serves it another way than its
    recorded bytes (a stream read from its file)."""
    if replayer is None:
        with Replayer() as own:
            return inspect_interaction(
                interaction,
                wire_replay=wire_replay,
                shape_name=shape_name,
                catalog=catalog,
                module=module,
                replayer=own,
                reply=reply,
            )
    n = interaction.index
    name = shape_name or detect_shape(interaction)
    if name is None:
        raise InspectError("cannot tell its wire shape")
    if module is None:
        module = load_shape(name)
    shape: Shape = module.SHAPE
    provider = recorded_provider(interaction, name, catalog)
    raw = name in RAW_REQUEST_SHAPES
    wire = interaction.request.json if raw and interaction.request is not None else None
    replayed = replayer.replay(
        interaction, RecordedRequestShape(shape, wire, interaction), provider, reply
    )
    if isinstance(replayed, ElelemError):
        raise replayed
    result, error = replayed
    if interaction.response.status >= 400:
        return [_error_line(n, error)] if error is not None else []
    if result.model is None and name == "bedrock_converse":
        # Bedrock names the model in the request path, not in its answer.
        result = msgspec.structs.replace(result, model=bedrock_model(interaction))
    lines = _response_lines(n, result)
    if name == "openai_chat":
        lines += _choice_lines(n, result)
    if error is not None:
        lines.append(_error_line(n, error))
    elif wire_replay:
        replay = getattr(module, "assistant_wire", None)
        if replay is None:
            raise InspectError(f"shape {name} has no wire replay yet")
        wire, _dropped = replay(result.to_message(), provider)
        lines.append({"kind": "replay", "interaction": n, "wire": wire})
    return lines


_BEDROCK_MODEL = re.compile(r"/model/([^/]+)/converse(?:-stream)?$")


def bedrock_model(interaction: Interaction) -> str | None:
    """The model a Bedrock Converse request named in its path (unquoted:
    an ARN is sent percent-encoded), None where no request was recorded."""
    request = interaction.request
    found = _BEDROCK_MODEL.search(request.path) if request is not None else None
    return unquote(found.group(1)) if found else None


def _choice_lines(n: int, result: AssembledResponse) -> list[dict[str, Any]]:
    """Each choice past the first of an ``n>1`` answer, as the library reads
    it back (:func:`elelem.shapes.openai_chat.alternatives`)."""
    from elelem.shapes.openai_chat import alternatives

    return [
        {
            "kind": "choice",
            "interaction": n,
            "choice": k,
            "blocks": [to_builtins(part) for part in choice.content],
            "finish": choice.finish.reason if choice.finish is not None else None,
        }
        for k, choice in enumerate(alternatives(result), 1)
    ]


def inspect_recording(
    path: str, *, wire_replay: bool = False, max_bytes: int = MAX_RECORDING_BYTES
) -> list[dict[str, Any]]:
    """Every NDJSON object ``elelem inspect`` prints for the recording at ``path``
    (of which at most ``max_bytes`` are read).

    Raises :class:`RecordingError` or :class:`InspectError` (bad input) and
    :class:`ElelemError` subclasses for a recording that breaks its shape's rules.
    """
    return [
        line
        for lines in inspect_each(path, wire_replay=wire_replay, max_bytes=max_bytes)
        for line in lines
    ]


def inspect_each(
    path: str, *, wire_replay: bool = False, max_bytes: int = MAX_RECORDING_BYTES
) -> Iterator[list[dict[str, Any]]]:
    """:func:`inspect_recording`'s objects, one interaction's list at a time,
    each made as it is asked for: a caller that summarises as it goes holds
    one interaction's results, not the recording's.  A raw stream file
    (SSE, NDJSON, an AWS event stream) is read from its file in pieces
    (:mod:`elelem.recordings.rawfile`), never whole."""
    stream = open_raw_body(path, max_bytes)
    kinds: list[str | None]
    if stream is not None:
        # A raw stream file: one chat answer, read from its file in pieces.
        interactions: tuple[Interaction, ...] = (stream.interaction(),)
        kinds = [None]
        shapes = [detect_shape(interactions[0], stream.pieces())]
    else:
        # Each exchange told once: a kind that is not chat, else a chat
        # shape, else an exchange of a kind nothing reads.
        interactions = load(path, max_bytes=max_bytes).interactions
        kinds = [exchange_kind(i) for i in interactions]
        shapes = [None if k else detect_shape(i) for i, k in zip(interactions, kinds, strict=True)]
    known = [
        name is not None or kind is not None or i.request is not None
        for i, kind, name in zip(interactions, kinds, shapes, strict=True)
    ]
    if len(shapes) == 1 and not known[0]:
        raise InspectError(f"{path}: interaction 0: cannot tell its wire shape")
    if not any(known):
        raise InspectError(f"{path}: cannot tell the wire shape of any interaction")
    catalog = command_catalog()
    reply = stream.reply() if stream is not None else None
    with Replayer() as replayer:
        for interaction, kind, name in zip(interactions, kinds, shapes, strict=True):
            if kind is not None:
                yield [kind_line(interaction, kind, catalog, _stream_frames)]
                continue
            if name is None:
                # An exchange of a kind nothing here reads: said what it was,
                # and the rest of the recording is read.
                yield [unknown_line(interaction)]
                continue
            try:
                yield inspect_interaction(
                    interaction,
                    wire_replay=wire_replay,
                    shape_name=name,
                    catalog=catalog,
                    replayer=replayer,
                    reply=reply,
                )
            except RecordingError:
                raise
            except (ElelemError, ValueError) as exc:
                raise InspectError(f"{path}: interaction {interaction.index}: {exc}") from None
            except RecursionError:
                raise InspectError(
                    f"{path}: interaction {interaction.index}: nested too deeply to read"
                ) from None


def _stream_frames(interaction: Interaction) -> list[tuple[str, str]]:
    return recorded_frames(interaction.response, "sse")


def _one_line(text: str) -> str:
    # Error text can quote the recording; keep it printable and on one line.
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in " ".join(text.split()))


@click.command("inspect")
@click.argument("path", type=click.Path(dir_okay=False, path_type=str))
@click.option(
    "--wire-replay",
    is_flag=True,
    help="After each response, print the assistant message native replay would send back.",
)
@max_bytes_option(MAX_RECORDING_BYTES, "a recording")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="One JSON object per line (every block, hosted call, usage, finish) "
    "instead of the summary.",
)
@debug_option
@guarded
def inspect_command(path: str, wire_replay: bool, max_bytes: int, as_json: bool) -> None:
    """Summarize what the recording at PATH holds, interaction by interaction:
    blocks by kind, hosted calls, citations, payloads, usage and finish
    (--json: every line as JSON)."""
    from elelem.cli.inspect_summary import summary

    # Each interaction's results are turned into its output text as they
    # come and then let go; only the text is held, so that bad input still
    # prints nothing on stdout.
    out: list[str] = []
    try:
        for lines in inspect_each(path, wire_replay=wire_replay, max_bytes=max_bytes):
            if as_json:
                out.extend(ndjson_line(obj) for obj in lines)
            else:
                out.extend(summary(lines))
    except InspectError as exc:
        message = str(exc)
        if not message.startswith(f"{path}:"):
            message = f"{path}: {message}"
        raise Failure(_one_line(message), EXIT_USAGE) from None
    except ElelemError as exc:
        raise Failure(_one_line(str(exc)), EXIT_USAGE) from None
    if out:
        click.echo("\n".join(out))


__all__ = [
    "InspectError",
    "detect_shape",
    "inspect_command",
    "inspect_each",
    "inspect_interaction",
    "inspect_recording",
    "load_shape",
    "recorded_frames",
    "recorded_provider",
]
