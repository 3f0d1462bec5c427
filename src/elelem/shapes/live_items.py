"""What the live protocols share: the assistant's speech of one item, held
until its response ends, and cut where the user interrupted.

Audio arrives as base64 PCM16 pieces and its transcript as text pieces on
separate events, interleaved.  :class:`SpokenItem` keeps both as they came
(the base64 is decoded once, at the end) and notes, for each transcript
piece, how many bytes of audio had arrived before it.  A cut at
``audio_end_ms`` keeps the audio's first ``audio_end_ms`` milliseconds and
the transcript pieces that arrived before any audio past that point: the
stored transcript and audio end at the same place, by the order the wire
interleaved them (neither wire times its transcript words).

Both protocols also open their WebSocket on the API's own host, its HTTP
base on the WebSocket scheme (:func:`websocket_base`).
"""

from __future__ import annotations

import base64
import struct
from typing import Any

import msgspec

from elelem.stream import BlockEnd, BlockStart, Chunk
from elelem.vocabulary import ProviderId, ProviderPayload
from elelem.vocabulary.audio import base64_size, wav_bytes, wav_header

LIVE_ITEM_FORMAT = "live-item"
"""Payload format of a live item's identity on its wire (OpenAI's item id)."""


pcm_size = base64_size
"""How many bytes a base64 piece of audio decodes to."""


def wav_pcm(data: bytes) -> tuple[bytes, int, int]:
    """The samples, rate and channel count of a PCM16 WAV file (``ValueError``
    for anything else)."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError("not a WAV file")
    at, rate, channels, bits = 12, 0, 0, 0
    while at + 8 <= len(data):
        chunk, size = data[at : at + 4], int(struct.unpack("<I", data[at + 4 : at + 8])[0])
        if chunk == b"fmt " and size >= 16:
            fmt, channels, rate = struct.unpack("<HHI", data[at + 8 : at + 16])
            bits = struct.unpack("<H", data[at + 22 : at + 24])[0]
            if fmt != 1 or bits != 16:
                raise ValueError(f"a WAV of format {fmt} at {bits} bits, not 16-bit PCM")
        elif chunk == b"data":
            if not rate:
                raise ValueError("a WAV whose data comes before its format")
            return data[at + 8 : at + 8 + size], int(rate), int(channels)
        at += 8 + size + (size & 1)
    raise ValueError("a WAV file with no data")


class SpokenItem:
    """One assistant item's speech and transcript, as they arrive."""

    __slots__ = ("audio", "cut", "item_id", "padded", "received", "transcript")

    def __init__(self, item_id: str) -> None:
        self.item_id = item_id
        self.audio: list[str] = []
        self.received = 0  # audio bytes so far
        self.transcript: list[tuple[int, str]] = []  # (audio bytes before it, piece)
        self.cut: int | None = None  # bytes kept, once the user interrupted
        self.padded = 0  # pieces that end in base64 padding

    def add_audio(self, encoded: str) -> None:
        """A base64 piece of the item's audio."""
        self.audio.append(encoded)
        size = pcm_size(encoded)
        self.received += size
        self.padded += size % 3 != 0

    def add_transcript(self, text: str) -> None:
        """A piece of the item's transcript."""
        self.transcript.append((self.received, text))

    def truncate(self, audio_end_ms: int, rate: int) -> str:
        """Keep the first ``audio_end_ms`` ms; the transcript heard so far."""
        self.cut = min(self.received, audio_end_ms * rate // 1000 * 2)
        return self.heard()

    def heard(self) -> str:
        """The transcript of the audio kept."""
        cut = self.received if self.cut is None else self.cut
        return "".join(text for before, text in self.transcript if before <= cut)

    def pcm(self) -> bytes:
        """The audio kept, decoded."""
        # Each piece is its own base64 text (padded at its own end).
        data = b"".join(base64.b64decode(piece) for piece in self.audio)
        return data if self.cut is None else data[: self.cut]

    def wav_base64(self, rate: int) -> str:
        """The base64 text of a WAV of the audio kept: the pieces as they
        came behind the header's base64 when every piece but the last is
        whole (no padding) and the cut falls on a 3-byte boundary; else
        decoded, cut and encoded again."""
        pieces, cut, padded = self.audio, self.cut, self.padded
        size = self.received if cut is None else cut
        whole = padded == 0 or (padded == 1 and pieces[-1].endswith("="))
        if whole and (cut is None or cut % 3 == 0):
            header = base64.b64encode(wav_header(size, rate)).decode()
            if cut is None:
                return "".join([header, *pieces])
            return header + "".join(pieces)[: cut // 3 * 4]
        return base64.b64encode(wav_bytes(self.pcm(), rate)).decode()

    def block(self, key: str, provider: ProviderId, rate: int) -> list[Chunk]:
        """The chunks of the item's audio block: a WAV of the audio kept with
        the transcript heard (none when the item held no audio)."""
        if not self.audio and not self.transcript:
            return []
        kept = self.received if self.cut is None else self.cut
        payload = ProviderPayload(provider, LIVE_ITEM_FORMAT, None, {"item_id": self.item_id})
        raw: dict[str, Any] = {
            "type": "audio",
            "source": {"kind": "bytes", "blob": {"base64": self.wav_base64(rate)}},
            "media_type": "audio/wav",
            "duration": round(kept / (2 * rate), 3),
            "transcript": self.heard() or None,
            "payloads": [msgspec.to_builtins(payload)],
        }
        return [BlockStart(key, "audio", raw=raw), BlockEnd(key)]


def pcm16_at(pcm: bytes, rate: int, channels: int, to_rate: int) -> bytes:
    """PCM16 of ``channels`` channels at ``rate`` as mono at ``to_rate``: the
    channels averaged, the samples linearly interpolated (what a file given
    to a live session is turned into before it is sent)."""
    from array import array

    samples = array("h")
    samples.frombytes(pcm[: len(pcm) - len(pcm) % (2 * channels)])
    if channels > 1:
        mono = array("h", (sum(samples[i : i + channels]) // channels
                           for i in range(0, len(samples), channels)))  # fmt: skip
    else:
        mono = samples
    if rate == to_rate or not mono:
        return mono.tobytes()
    count = len(mono) * to_rate // rate
    out = array("h", bytes(2 * count))
    last = len(mono) - 1
    for i in range(count):
        at = i * rate / to_rate
        left = int(at)
        right = min(left + 1, last)
        out[i] = int(mono[left] + (mono[right] - mono[left]) * (at - left))
    return out.tobytes()


def websocket_base(base_url: str) -> str:
    """``base_url`` (an API's HTTP base) on its WebSocket scheme: ``wss``
    for ``https``, ``ws`` for plain ``http``; any other scheme as given."""
    base = base_url.rstrip("/")
    if base.startswith("https://"):
        return "wss://" + base[len("https://") :]
    if base.startswith("http://"):
        return "ws://" + base[len("http://") :]
    return base


__all__ = [
    "LIVE_ITEM_FORMAT",
    "SpokenItem",
    "pcm16_at",
    "pcm_size",
    "wav_bytes",
    "wav_header",
    "wav_pcm",
    "websocket_base",
]
