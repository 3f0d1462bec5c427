"""Typed errors shared by every layer of elelem.

This module imports nothing of elelem, so every layer may raise these.  A
stream error says whether retrying the same request can help (``retryable``);
the opt-in retry helper consults nothing else.

Every error elelem raises on purpose is an :class:`ElelemError`; the tree
(other bases in parentheses; a class defined elsewhere names its module in
brackets, below ``elelem``; ``tests/test_layers.py`` checks the tree against
the classes)::

    ElelemError (Exception)
    ├── ArgumentTypeError (TypeError)
    ├── AttachmentTooLargeError (ValueError)
    ├── AttributionRangeError (ValueError)
    ├── AwaitingError  [turns.pending]
    ├── BlobError
    │   ├── BlobCorruptError (ValueError)
    │   └── BlobMissingError (KeyError)
    ├── BodyError (ValueError)  [recordings.bodies]
    ├── ChatRefused (ValueError)  [web.chat]
    ├── ClientToolError (ValueError)
    │   ├── MemoryPathError
    │   ├── MemoryTooLargeError
    │   └── PatchError
    ├── ConfigError
    ├── DecodeError (ValueError)
    ├── DurableError  [durable.wire]
    ├── EventError (ValueError)  [conversation.errors]
    ├── Failure (ClickException)  [cli.exits]
    ├── FieldError  [cli.elicit]
    ├── HistoryError (ValueError)  [turns.history]
    ├── InspectError  [cli.inspect]
    ├── MCPServerError
    │   └── BodyTooLarge (StreamError)  [tools.mcp_http]
    ├── ObserverError  [turns.engine]
    ├── OutputError (ValueError)  [outputs]
    ├── PayloadError (ValueError)
    │   └── MalformedPayloadError
    ├── ProtocolViolation
    ├── ReadRefused (ValueError)  [reading]
    ├── RecordingError (ValueError)  [recordings.model]
    ├── RegistryError (ValueError)
    ├── RemoteFailure  [durable.wire]
    ├── ResumeError (ValueError)  [turns.pending]
    ├── SamplingRefused  [tools.mcp_sampling]
    ├── SchemaMismatch (ValueError)  [cli.options]
    ├── SchemaValueError (ValueError)  [testing.schema_values]
    ├── StoreError  [conversation.errors]
    │   ├── ConversationExists  [conversation.errors]
    │   ├── ConversationNotFound (KeyError)  [conversation.errors]
    │   │   ├── AmbiguousConversation  [cli.history]
    │   │   └── NoConversations  [cli.history]
    │   ├── CorruptEventError  [conversation.errors]
    │   ├── ImportRefused  [conversation.errors]
    │   ├── SchemaVersionError  [conversation.errors]
    │   └── WriterBusy  [conversation.errors]
    ├── StreamError
    │   ├── AuthenticationError
    │   ├── InvalidRequestError
    │   │   └── ContextWindowError
    │   ├── MalformedStreamError
    │   │   └── LimitExceededError
    │   ├── NotFoundError
    │   ├── OverloadedError
    │   ├── PermissionDeniedError
    │   ├── ProviderStreamError
    │   ├── RateLimitError
    │   ├── RecoverableError
    │   ├── RequestTooLargeError
    │   ├── ServerError
    │   └── TransportError
    │       ├── ConnectTimeoutError
    │       ├── DeadlineExceededError
    │       ├── IdleTimeoutError
    │       ├── IncompleteStreamError
    │       └── PoolTimeoutError
    ├── UnsupportedError
    └── UsageLimitExceeded  [turns.limits]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC


class ElelemError(Exception):
    """Base class of every error elelem raises on purpose."""


class DecodeError(ElelemError, ValueError):
    """A value of a registered type was malformed.

    ``path`` names the bad field in JSONPath form (``$.blocks[0].text``).
    """

    def __init__(self, message: str, path: str = "$") -> None:
        super().__init__(f"{message} (at {path})")
        self.path = path
        self.detail = message


class PayloadError(ElelemError, ValueError):
    """A provider payload was missing its identity or held a non-JSON value.

    ``path`` names the offending field relative to the payload (``$.value.a[2]``).
    """

    def __init__(self, message: str, path: str = "$") -> None:
        super().__init__(message)
        self.path = path


class MalformedPayloadError(PayloadError):
    """A provider sent a payload elelem knows in a form it cannot decode (a
    Gemini ``thoughtSignature`` that is no string, a Responses reasoning
    item whose ``encrypted_content`` is a number).

    It is not raised out of a stream: the parser records it on the block the
    payload belonged to (``elelem.vocabulary.malformed``), the rest of the
    answer is kept, and native replay leaves the payload out and reports it.
    ``provider`` and ``format`` name the payload, ``where`` its place on the
    wire (``parts[1].thoughtSignature``).
    """

    def __init__(self, provider: str, format: str, where: str, what: str) -> None:
        super().__init__(f"{provider} {format} payload at {where}: {what}", "$.value")
        self.provider = provider
        self.format = format
        self.where = where
        self.what = what


class AttributionRangeError(ElelemError, ValueError):
    """An attribution range does not lie inside the text that owns it.

    ``path`` names the bad range relative to the value that was being built
    (``$.attributions[1].range`` for a text block).
    """

    def __init__(self, message: str, path: str = "$") -> None:
        super().__init__(message)
        self.path = path


class ProtocolViolation(ElelemError):
    """A chunk stream broke the chunk protocol's grammar.

    ``position`` is the zero-based position of the offending chunk in the
    stream and ``rule`` a short name of the rule it broke.
    """

    def __init__(self, position: int, rule: str, detail: str) -> None:
        super().__init__(f"chunk {position}: {rule}: {detail}")
        self.position = position
        self.rule = rule
        self.detail = detail


class RegistryError(ElelemError, ValueError):
    """A registration conflicted with an existing member or was ill-formed."""


class UnsupportedError(ElelemError):
    """The request asks for something this shape or provider does not do yet."""


class ConfigError(ElelemError):
    """A provider configuration or model address is wrong."""


class ArgumentTypeError(ElelemError, TypeError):
    """An argument of a public function is not of a type it takes (a
    conversation that is None, say): said by name, not an AttributeError
    deep inside."""


class BlobError(ElelemError):
    """A blob (the bytes of an image or document) could not be had as asked.

    ``sha256`` names the blob.
    """

    def __init__(self, message: str, sha256: str) -> None:
        super().__init__(message)
        self.sha256 = sha256


class BlobMissingError(BlobError, KeyError):
    """A blob an event references is in no store at hand (or was never loaded)."""

    def __str__(self) -> str:
        return str(self.args[0])


class BlobCorruptError(BlobError, ValueError):
    """A blob's bytes do not hash to the SHA-256 that names them."""


class AttachmentTooLargeError(ElelemError, ValueError):
    """An image or document exceeds a provider's documented limit; nothing was sent.

    ``limit`` is the limit in bytes (or pixels, per ``what``), ``size`` the
    attachment's.
    """

    def __init__(self, message: str, *, limit: int, size: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.size = size


class ClientToolError(ElelemError, ValueError):
    """A provider tool the client executes (memory, shell, apply_patch) was
    asked for something it refuses: the message names the command and why.
    The tool loop sends the model this message as an error result."""


class MemoryPathError(ClientToolError):
    """A memory command named a path outside the memory directory: ``../``,
    an absolute path not under ``/memories``, a symlink pointing outside, a
    NUL in the path."""


class MemoryTooLargeError(ClientToolError):
    """A memory command would write more than the memory tool's bound."""


class PatchError(ClientToolError):
    """An ``apply_patch`` operation could not be applied as written (a hunk
    whose context is not in the file, a path outside the directory)."""


# --------------------------------------------------------------------------
# Stream errors: what a request or a stream can end in, other than finish.
# --------------------------------------------------------------------------

MAX_ERROR_BODY = 64 * 1024
"""Bytes of an HTTP error body kept on the error (bounded, the rest is cut)."""


class MCPServerError(ElelemError):
    """An MCP server could not be reached, or stopped: the message names the
    server and what happened (raised by :mod:`elelem.tools.mcp`, defined
    here so a caller catches it without the ``mcp`` extra)."""


class StreamError(ElelemError):
    """A request or stream did not reach its ``finish``.

    ``kind`` is a stable machine-readable name; ``retryable`` says whether the
    same request may succeed if sent again.  ``status`` and ``body`` hold the
    HTTP status and (size-bounded) body where there was one; ``provider_type``
    and ``provider_message`` hold the provider's own error type and message.
    """

    kind: str = "stream"
    default_retryable: bool = False
    named: str | None = None
    """Who the message names first (``"chat 400 …"``: the shape's error
    table); the driver renames it to the provider the caller called."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        body: bytes | None = None,
        provider_type: str | None = None,
        provider_message: str | None = None,
        request_id: str | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.body = body[:MAX_ERROR_BODY] if body is not None else None
        self.provider_type = provider_type
        self.provider_message = provider_message
        self.request_id = request_id
        self.retryable = self.default_retryable if retryable is None else retryable
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(kind={self.kind!r}, status={self.status!r}, "
            f"retryable={self.retryable!r}, message={self.message!r})"
        )


class AuthenticationError(StreamError):
    """The API key was missing, wrong or revoked (401)."""

    kind = "authentication"


class PermissionDeniedError(StreamError):
    """The key may not use this resource (403)."""

    kind = "permission"


class NotFoundError(StreamError):
    """The model or endpoint does not exist (404)."""

    kind = "not-found"


class RateLimitError(StreamError):
    """Too many requests (429); ``retry_after`` carries the server's hint."""

    kind = "rate-limit"
    default_retryable = True


class OverloadedError(StreamError):
    """The provider is overloaded (Anthropic 529, or an overloaded error event)."""

    kind = "overloaded"
    default_retryable = True


class InvalidRequestError(StreamError):
    """The provider rejected the request as malformed (400, 422)."""

    kind = "invalid-request"


class RequestTooLargeError(StreamError):
    """The request body was too large (413)."""

    kind = "request-too-large"


class ContextWindowError(InvalidRequestError):
    """The prompt does not fit the model's context window."""

    kind = "context-window"


class ServerError(StreamError):
    """The provider failed (5xx other than overload)."""

    kind = "server"
    default_retryable = True


class ProviderStreamError(StreamError):
    """The provider sent an error event in the middle of a stream."""

    kind = "provider-error"


class TransportError(StreamError):
    """The connection failed or broke before ``finish`` arrived."""

    kind = "transport"
    default_retryable = True


class ConnectTimeoutError(TransportError):
    """No connection could be made within the connect timeout."""

    kind = "connect-timeout"


class PoolTimeoutError(TransportError):
    """No connection of the pool came free within the pool timeout
    (``Timeouts.pool``): every one the pool may hold was busy.

    ``limit`` names the limit that was hit as it is configured
    (``Limits.connections``; ``the HTTP client's pool`` for a client passed
    in) and ``value`` is its setting (None when it is not elelem's).
    Retryable: the connections come free as their responses end.
    """

    kind = "pool-timeout"

    def __init__(self, message: str, *, limit: str, value: int | None, **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.limit = limit
        self.value = value


class IdleTimeoutError(TransportError):
    """The stream sent nothing for longer than the idle timeout."""

    kind = "idle-timeout"


class IncompleteStreamError(TransportError):
    """The stream ended without a terminal ``finish``."""

    kind = "incomplete-stream"


class MalformedStreamError(StreamError):
    """The provider sent a frame that could not be parsed.

    One rule for every shape: bytes that are not UTF-8 or a frame that is not
    JSON were cut or corrupted on the way, so a retry may succeed (retryable);
    well-formed JSON that breaks the shape's protocol will come the same way
    again (shapes raise it with ``retryable=False``).
    """

    kind = "malformed-stream"
    default_retryable = True


class LimitExceededError(MalformedStreamError):
    """A response passed one of the client's resource limits.

    ``limit`` names it as it is configured (``Limits.body``, ``Limits.frame``,
    ``Limits.decompression_ratio``, ``inspect --max-bytes``) and ``value`` is
    its setting.  The same response would pass it again: not retryable.
    """

    kind = "limit-exceeded"
    default_retryable = False

    def __init__(self, message: str, *, limit: str, value: float, **kwargs: object) -> None:
        shown = str(int(value)) if float(value).is_integer() else f"{value:g}"
        super().__init__(f"{message} (limit {limit} = {shown})", **kwargs)  # type: ignore[arg-type]
        self.limit = limit
        self.value = value


class DeadlineExceededError(TransportError):
    """The request did not finish within its overall deadline (``Timeouts.total``).

    Not retryable by default: the caller's time is spent.
    """

    kind = "deadline"
    default_retryable = False


def error_line(exc: BaseException) -> str:
    """The one-line message for an error, as the CLI prints it after
    ``elelem:`` and the web chat shows it (never a key: errors carry none;
    no Python class name unless the error has no message)."""
    if isinstance(exc, StreamError):
        return f"{exc.kind}: {exc.message}"
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    return str(exc) or type(exc).__name__


def _delay_seconds(value: str, scale: float = 1.0) -> float | None:
    # A negative or non-finite number is not a delay: the header is unreadable.
    try:
        seconds = float(value.strip()) * scale
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait before retrying, from a response's headers, or None.

    ``retry-after-ms`` (milliseconds, sent by OpenAI and Anthropic) wins over
    ``retry-after``, which holds seconds or an HTTP date.  Header names match
    in any case.  An unreadable value (not a number, negative, not finite) is
    passed over, so an unreadable ``retry-after-ms`` falls back to
    ``retry-after``.  This module keeps no clock: an HTTP date gives a delay
    only relative to ``now`` (POSIX seconds) passed in, else None; a date
    already past gives 0.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        seconds = _delay_seconds(raw_ms, 1 / 1000)
        if seconds is not None:
            return seconds
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _delay_seconds(raw)
    if seconds is not None or now is None:
        return seconds
    when = http_date(raw)
    return None if when is None else max(0.0, when - now)


def http_date(value: str) -> float | None:
    """POSIX seconds of an HTTP date (``Wed, 21 Oct 2015 07:28:00 GMT``), or None.

    A date without a zone (``-0000``) is read as UTC, the only zone HTTP uses.
    """
    import email.utils  # deferred: socket, random, calendar, for a Retry-After date

    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


@dataclass(frozen=True)
class Patch:
    """One repair a recoverable error asks the caller to apply before retrying.

    ``action`` names the repair (``strip-signature``, ``strip-reasoning``);
    ``target`` locates what to repair (for a signature: the message and block
    positions in the request, as ``{"message": i, "block": j}``).
    """

    action: str
    target: Mapping[str, object] = field(default_factory=dict)
    reason: str = ""


FULL_REPLAY = "full-replay"
"""The patch action of an error saying the provider no longer holds the
state a request continued (a Responses ``previous_response_not_found``):
``target`` is ``{"id": the state's id, or "*"}``.  The turn engine answers
it by sending the whole history again, with a :data:`STATE_LOST` response
payload naming the id so the encoder does not continue that state."""

STATE_LOST = "state-lost"
"""The response payload format of a state the provider no longer holds
(``{"id": …}``; see :data:`FULL_REPLAY`)."""


class RecoverableError(StreamError):
    """The request can succeed once ``patches`` are applied (each at most once)."""

    kind = "recoverable"
    default_retryable = True

    def __init__(self, message: str, *, patches: Sequence[Patch], **kwargs: object) -> None:
        super().__init__(message, **kwargs)  # type: ignore[arg-type]
        self.patches = tuple(patches)


EXTRA_MODULES: Mapping[str, str] = {
    "click": "cli",
    "rich": "cli",
    "prompt_toolkit": "cli",
    "jsonschema": "cli",
    "starlette": "web",
    "uvicorn": "web",
    "mcp": "mcp",
    "psycopg": "postgres",
    "opentelemetry": "otel",
    "google": "google",
    "azure": "azure",
    "websockets": "live",
    "temporalio": "temporal",
    "dbos": "dbos",
}
"""The top-level modules only an extra brings, and that extra (``tests/
test_first_hour_extras.py`` checks the table against pyproject.toml)."""


def install_line(extra: str) -> str:
    """The command that installs elelem's ``extra`` the way this elelem was
    installed (its PEP 610 ``direct_url.json``): from a checkout
    (``pip install -e 'PATH[web]'``), from git (``pip install 'elelem[web]
    @ git+URL'``), into a pipx venv (``pipx runpip elelem install …``), or
    from an index.  elelem is not on PyPI: a bare ``pip install
    'elelem[web]'`` would find nothing there."""
    import importlib.metadata
    import json
    import shutil
    import sys
    from pathlib import Path
    from urllib.parse import unquote, urlparse

    requirement = f"'elelem[{extra}]'"
    try:
        raw = importlib.metadata.distribution("elelem").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        raw = None
    origin = json.loads(raw) if raw else {}
    url = str(origin.get("url", ""))
    if "vcs_info" in origin:
        vcs = origin["vcs_info"]
        revision = f"@{vcs['requested_revision']}" if vcs.get("requested_revision") else ""
        requirement = f"'elelem[{extra}] @ {vcs.get('vcs', 'git')}+{url}{revision}'"
    elif url.startswith("file://"):
        editable = bool(origin.get("dir_info", {}).get("editable"))
        path = unquote(urlparse(url).path)
        requirement = f"{'-e ' if editable else ''}'{path}[{extra}]'"
    if "pipx" in sys.prefix.split("/"):
        return f"pipx runpip elelem install {requirement}"
    # The pip of this interpreter's environment: `pip` when that is the one
    # the PATH finds, else spelled out (a venv not activated).
    own = str(Path(sys.executable).with_name("pip"))
    pip = "pip" if shutil.which("pip") == own else f"{sys.executable} -m pip"
    return f"{pip} install {requirement}"
