"""The one streaming driver (docs/architecture.md §5): framing, timeouts, error surfacing.

One core (:class:`~elelem.transport.stream_core.StreamCore`) under two
streams: :class:`ResponseStream` (async) and :class:`SyncResponseStream`
(blocking, in the calling thread).

The transport knows no shape: it takes any object implementing
:class:`elelem.wire.Shape`.  It retries only what its
:class:`RetryPolicy` allows (the client's: failures before any chunk
arrived), each retry told on the stream; retrying anything else is the
caller's, e.g. with the opt-in :func:`elelem.transport.retry.retry`.
"""

from elelem.transport.config import StartedRequest
from elelem.transport.driver import (
    Driver,
    RequestHook,
    RequestSpan,
    ResponseStream,
    SyncResponseStream,
    Timeouts,
    parse_retry_after,
)
from elelem.transport.endpoint import Endpoint, RequestSigner
from elelem.transport.framing import NDJSONDecoder, SSEDecoder, SSEEvent
from elelem.transport.limits import Limits
from elelem.transport.retry import (
    CLIENT_RETRY_POLICY,
    RetryAttempt,
    RetryPolicy,
    retries_before_content,
    retry,
    retry_reason,
)
from elelem.transport.sigv4 import SigV4Signer

__all__ = [
    "CLIENT_RETRY_POLICY",
    "Driver",
    "Endpoint",
    "Limits",
    "NDJSONDecoder",
    "RequestHook",
    "RequestSigner",
    "RequestSpan",
    "ResponseStream",
    "RetryAttempt",
    "RetryPolicy",
    "SSEDecoder",
    "SSEEvent",
    "SigV4Signer",
    "StartedRequest",
    "SyncResponseStream",
    "Timeouts",
    "parse_retry_after",
    "retries_before_content",
    "retry",
    "retry_reason",
]
