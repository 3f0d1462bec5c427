"""A malformed payload, recorded on its block.

One policy for every shape: a payload elelem knows (a signature, an
encrypted reasoning item, a reasoning detail) that arrives in a form it
cannot decode is an error, never a silent accept (replayed as it came) and
never a lost answer (the whole stream refused).  The parser keeps the rest
of the answer and puts, on the block the payload belonged to, a payload of
format ``malformed:<format>`` whose value is a :class:`PayloadFault`: which
payload, where on the wire, what was wrong, and the value as it came (kept,
since nothing is lost).  It is stored and exported as every payload is; the
renderer shows it (sanitized); native replay sends no malformed payload and
reports each as a drop (reason ``malformed``); the portable projection sends
no payload at all.  :meth:`PayloadFault.error` is the typed error
(:class:`~elelem.errors.MalformedPayloadError`) it stands for.

Being a payload, the record needs no new field on any block: every block
that carries payloads carries it, and a reader that knows nothing of it
keeps it as any other payload it does not interpret.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from elelem.errors import MalformedPayloadError
from elelem.vocabulary.ids import ProviderId
from elelem.vocabulary.json import JSONValue
from elelem.vocabulary.payload import ProviderPayload

MALFORMED_PREFIX = "malformed:"
"""The format of a malformed record is this prefix and the payload's own
format (``malformed:thought_signature``), so a block keeps one record per
payload format, the latest, as it keeps one payload per format."""


class PayloadFault(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """What a malformed-payload record says.

    ``format`` is the payload's own format (``thought_signature``), ``where``
    its place on the wire (``parts[1].thoughtSignature``), ``what`` what was
    wrong (``a int, not a string``), ``value`` the value as it came.  Every
    string of it is untrusted: show it sanitized.
    """

    provider: str
    format: str
    where: str
    what: str
    value: JSONValue = None

    def error(self) -> MalformedPayloadError:
        """The typed error this record stands for."""
        return MalformedPayloadError(self.provider, self.format, self.where, self.what)

    def payload(self) -> ProviderPayload:
        """The record as the payload a block carries."""
        value = {"where": self.where, "what": self.what, "value": self.value}
        return ProviderPayload(
            ProviderId(self.provider), MALFORMED_PREFIX + self.format, None, value
        )

    @property
    def description(self) -> str:
        """One line: ``google thought_signature at parts[0].thoughtSignature: …``."""
        return f"{self.provider} {self.format} at {self.where}: {self.what}"


def json_kind(value: object) -> str:
    """The JSON name of ``value``'s type, for a ``what`` line."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def malformed_payload(
    provider: str, fmt: str, where: str, what: str, value: JSONValue
) -> ProviderPayload:
    """The record of payload ``fmt`` of ``provider`` found malformed at ``where``."""
    return PayloadFault(provider, fmt, where, what, value).payload()


def payload_fault(payload: ProviderPayload) -> PayloadFault | None:
    """The fault ``payload`` records, or None when it is no malformed record.

    A record whose value is not the shape this module writes (a hand-edited
    log) is still a fault: what it holds is kept as its value."""
    fmt = payload.format
    if not fmt.startswith(MALFORMED_PREFIX):
        return None
    value = payload.value
    own = fmt[len(MALFORMED_PREFIX) :]
    if isinstance(value, dict):
        where, what = value.get("where"), value.get("what")
        if isinstance(where, str) and isinstance(what, str):
            return PayloadFault(payload.provider, own, where, what, value.get("value"))
    return PayloadFault(payload.provider, own, "?", "an unreadable malformed record", value)


def payload_faults(payloads: Iterable[ProviderPayload]) -> tuple[PayloadFault, ...]:
    """Every fault among ``payloads``, in order."""
    found = []
    for payload in payloads:
        if payload.format.startswith(MALFORMED_PREFIX):
            fault = payload_fault(payload)
            if fault is not None:
                found.append(fault)
    return tuple(found)


def block_faults(part: object) -> tuple[PayloadFault, ...]:
    """Every fault recorded on a block or hosted activity (none for a part
    that carries no payloads)."""
    payloads = getattr(part, "payloads", None)
    if payloads:
        return payload_faults(payloads)
    single = getattr(part, "payload", None)
    if isinstance(single, ProviderPayload):
        return payload_faults((single,))
    return ()


__all__ = [
    "MALFORMED_PREFIX",
    "PayloadFault",
    "block_faults",
    "json_kind",
    "malformed_payload",
    "payload_fault",
    "payload_faults",
]
