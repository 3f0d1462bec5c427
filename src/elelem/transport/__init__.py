"""The one streaming driver (DESIGN.md §6): framing, timeouts, error surfacing.

The transport knows no shape: it takes any object implementing
:class:`elelem.shapes.base.Shape`.  It never retries on its own; retrying is
the opt-in :func:`elelem.transport.retry.retry`.
"""

from elelem.transport.driver import Driver, ResponseStream, Timeouts, parse_retry_after
from elelem.transport.endpoint import Endpoint, RequestSigner
from elelem.transport.framing import NDJSONDecoder, SSEDecoder, SSEEvent
from elelem.transport.retry import RetryAttempt, RetryPolicy, retry
from elelem.transport.sigv4 import SigV4Signer

__all__ = [
    "Driver",
    "Endpoint",
    "NDJSONDecoder",
    "RequestSigner",
    "ResponseStream",
    "RetryAttempt",
    "RetryPolicy",
    "SSEDecoder",
    "SSEEvent",
    "SigV4Signer",
    "Timeouts",
    "parse_retry_after",
    "retry",
]
