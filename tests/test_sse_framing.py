"""The SSE and NDJSON decoders: WHATWG event-stream rules under any chunking.

Run as a script (``.venv/bin/python tests/test_sse_framing.py [corpus-file]``)
it times elelem's decoder against httpx2's EventSource parser on the same
bytes; the differential test below checks they agree where the standard
lets them.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elelem.errors import MalformedStreamError
from elelem.stream.frames import DataRun
from elelem.transport.framing import NDJSONDecoder, SSEDecoder, SSEEvent


def fed(decoder: SSEDecoder, piece: bytes, runs: bool) -> list[SSEEvent]:
    """One piece's events: ``feed``'s, or ``feed_runs``' with each run made
    the events it stands for."""
    if not runs:
        return decoder.feed(piece)
    events: list[SSEEvent] = []
    for item in decoder.feed_runs(piece):
        if isinstance(item, DataRun):
            events += [SSEEvent(e, d, item.id, item.retry) for e, d in item.frames()]
        else:
            events.append(item)
    return events


def decode(*pieces: bytes) -> tuple[list[SSEEvent], SSEDecoder]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for piece in pieces:
        events.extend(decoder.feed(piece))
        if decoder.failure is not None:
            raise decoder.failure
    events.extend(decoder.close())
    return events, decoder


STREAM = (
    b": keep-alive\n"
    b"event: message_start\n"
    b'data: {"a":1}\n'
    b"\n"
    b"data: line one\n"
    b"data: line two\n"
    b"id: 7\n"
    b"retry: 1500\n"
    b"\n"
    b"event: delta\n"
    b"data:no-space\n"
    b"data:  two spaces\n"
    b"\n"
)
EXPECTED = [
    SSEEvent("message_start", '{"a":1}', "", None),
    SSEEvent("", "line one\nline two", "7", 1500),
    SSEEvent("delta", "no-space\n two spaces", "7", 1500),
]


def test_fields_comments_multiline_data_id_and_retry() -> None:
    events, decoder = decode(STREAM)
    assert events == EXPECTED
    assert decoder.comments == 1 and decoder.last_event_id == "7" and decoder.retry == 1500
    assert decoder.unterminated == 0


@pytest.mark.parametrize("ending", [b"\r\n", b"\r", b"\n"])
def test_every_line_ending_gives_the_same_events(ending: bytes) -> None:
    events, _ = decode(STREAM.replace(b"\n", ending))
    assert events == EXPECTED


def test_mixed_line_endings_and_crlf_split_across_chunks() -> None:
    body = b"data: a\r\n\r\ndata: b\r\rdata: c\n\r\n"
    events, _ = decode(body)
    assert [e.data for e in events] == ["a", "b", "c"]
    for cut in range(len(body) + 1):
        assert decode(body[:cut], body[cut:])[0] == events


def test_leading_bom_is_skipped_once_even_when_split() -> None:
    body = b"\xef\xbb\xbfdata: x\n\n"
    for cut in range(4):
        events, _ = decode(body[:cut], body[cut:])
        assert events == [SSEEvent("", "x")]
    byte_by_byte, _ = decode(*(body[i : i + 1] for i in range(len(body))))
    assert byte_by_byte == [SSEEvent("", "x")]
    # A second BOM is content: it makes the field name unknown, so it is ignored.
    events, _ = decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n")
    assert events == [SSEEvent("", "y")]


def test_a_short_body_that_only_looks_like_a_bom_start() -> None:
    assert decode(b"\xef", b"\xbb")[0] == []
    assert decode(b"\xef\xbb")[1].unterminated == 0


def test_utf8_split_inside_a_character_anywhere() -> None:
    body = "data: ünï ✓ 😀\n\n".encode()
    for cut in range(len(body) + 1):
        assert decode(body[:cut], body[cut:])[0] == [SSEEvent("", "ünï ✓ 😀")]


def test_invalid_utf8_is_a_typed_error_not_a_replacement() -> None:
    with pytest.raises(MalformedStreamError) as info:
        decode(b"data: ok\n\ndata: \xff\xfe\n\n")
    assert (
        info.value.message
        == "response body is not valid UTF-8 (byte 0xff within its first 20 bytes)"
    )


def test_a_framing_fault_returns_the_events_before_it_then_raises() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: ok\n\ndata: \xff\n\ndata: later\n\n") == [SSEEvent("", "ok")]
    assert decoder.failure is not None
    assert (
        decoder.failure.message
        == "response body is not valid UTF-8 (byte 0xff within its first 32 bytes)"
    )
    with pytest.raises(MalformedStreamError):
        decoder.feed(b"data: more\n\n")
    with pytest.raises(MalformedStreamError):
        decoder.close()
    ndjson = NDJSONDecoder()
    assert ndjson.feed(b'{"a":1}\n\xff\n{"b":2}\n') == ['{"a":1}']
    assert ndjson.failure is not None
    with pytest.raises(MalformedStreamError):
        ndjson.close()


def test_event_without_data_is_not_dispatched() -> None:
    events, _ = decode(b"event: ping\n\nid: 3\n\ndata: x\n\n")
    assert events == [SSEEvent("", "x", "3")]


def test_field_without_colon_and_empty_data() -> None:
    events, _ = decode(b"data\n\ndata:\ndata:\n\n")
    assert events == [SSEEvent("", ""), SSEEvent("", "\n")]


def test_unknown_fields_are_ignored_and_id_with_nul_is_ignored() -> None:
    events, decoder = decode(b"foo: bar\nid: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n")
    assert events == [SSEEvent("", "a", "1"), SSEEvent("", "b", "1")]
    assert decoder.last_event_id == "1"


def test_retry_must_be_ascii_digits() -> None:
    events, decoder = decode(
        b"retry: 10\ndata: a\n\nretry: 1x\ndata: b\n\nretry: \xd9\xa3\ndata: c\n\n"
    )
    assert [e.retry for e in events] == [10, 10, 10]
    assert decoder.retry == 10


def test_a_retry_of_thousands_of_digits_is_ignored_not_a_value_error() -> None:
    # int() refuses a string past 4,300 digits: every SSE stream broke on it.
    events, decoder = decode(b"retry: 10\ndata: a\n\nretry: " + b"9" * 5000 + b"\ndata: b\n\n")
    assert [(e.data, e.retry) for e in events] == [("a", 10), ("b", 10)]
    assert decoder.retry == 10


def test_event_cut_off_by_end_of_body_is_discarded_and_measured() -> None:
    events, decoder = decode(b"data: a\n\nevent: x\ndata: partial")
    assert events == [SSEEvent("", "a")]
    assert (
        decoder.unterminated == len(b"event: x\ndata: partial") + 1 - 1
    )  # two lines, one counted LF
    events, decoder = decode(b"data: a\n\ndata: whole line\n")
    assert events == [SSEEvent("", "a")] and decoder.unterminated == len(b"data: whole line\n")
    # A trailing lone CR ends a line, but the event still lacks its blank line.
    events, _ = decode(b"data: a\r")
    assert events == []


def test_oversized_event_is_rejected() -> None:
    decoder = SSEDecoder(max_event_bytes=32)
    assert decoder.feed(b"data: " + b"x" * 40 + b"\n") == []
    assert decoder.failure is not None
    assert decoder.failure.message == (
        "an event of the response exceeds 32 bytes (limit Limits.frame = 32)"
    )
    assert (decoder.failure.kind, decoder.failure.retryable) == ("limit-exceeded", False)
    unterminated = SSEDecoder(max_event_bytes=32)
    assert unterminated.feed(b"data: " + b"x" * 40) == []
    assert unterminated.failure is not None
    assert unterminated.failure.message == (
        "a line of the response body without its end exceeds 32 bytes (limit Limits.frame = 32)"
    )


frames = st.lists(
    st.tuples(
        st.one_of(
            st.none(),
            st.text(
                st.characters(codec="utf-8", exclude_characters="\r\n:"), min_size=1, max_size=8
            ),
        ),
        st.lists(
            st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=12),
            min_size=1,
            max_size=3,
        ),
    ),
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(
    frames=frames,
    ending=st.sampled_from(["\n", "\r", "\r\n"]),
    cuts=st.lists(st.integers(0, 400), max_size=8),
    bom=st.booleans(),
)
def test_any_chunking_of_any_stream_gives_the_same_events(
    frames: list[tuple[str | None, list[str]]], ending: str, cuts: list[int], bom: bool
) -> None:
    text = ""
    expected = []
    for event, lines in frames:
        if event is not None:
            text += f"event: {event.lstrip(' ')}{ending}" if event.strip(" ") else ""
        text += "".join(f"data: {line}{ending}" for line in lines)
        text += ending
        name = event.lstrip(" ") if event is not None and event.strip(" ") else ""
        expected.append(SSEEvent(name, "\n".join(lines)))
    body = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    points = sorted({c % (len(body) + 1) for c in cuts})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    assert decode(*pieces)[0] == expected


def reference(body: bytes) -> tuple[list[SSEEvent], str | None, tuple[str, int | None, int, int]]:
    """The event-stream rules applied in the plainest way to a whole body.

    Returns the events, the fault (its message with the byte offset removed,
    which depends on the chunking) or None, and at the end of a fault-free
    body (last id, retry, comments, unterminated bytes).
    """
    if body.startswith(b"\xef\xbb\xbf"):
        body = body[3:]
    elif len(body) < 3 and b"\xef\xbb\xbf".startswith(body):
        body = b""
    *lines, tail = re.split(rb"\r\n|\r|\n", body)
    events: list[SSEEvent] = []
    data: list[bytes] = []
    event, size, started, last_id, retry, comments = b"", 0, False, "", None, 0

    def text(raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"byte 0x{raw[exc.start]:02x}") from None

    try:
        for line in lines:
            if not line:
                if data:
                    name = text(event) if event else ""
                    events.append(SSEEvent(name, text(b"\n".join(data)), last_id, retry))
                data, event, size, started = [], b"", 0, False
                continue
            if line.startswith(b":"):
                comments += 1
                continue
            name_b, colon, value = line.partition(b":")
            if colon and value.startswith(b" "):
                value = value[1:]
            started, size = True, size + len(line) + 1
            if name_b == b"data":
                data.append(value)
            elif name_b == b"event":
                event = value
            elif name_b == b"id" and b"\0" not in value:
                last_id = text(value)
            elif name_b == b"retry" and value and all(48 <= c <= 57 for c in value):
                retry = int(value)
    except ValueError as exc:
        return events, str(exc), ("", None, 0, 0)
    return events, None, (last_id, retry, comments, len(tail) + (size if started else 0))


TOKENS = [
    b"data:", b"data: ", b"data:  ", b"event:", b"event: ", b"id: ", b"id:", b"retry: ",
    b"retry:", b"dat", b"a:", b"ping", b"7", b"42", b":", b": keep", b" ", b"x", b"\x00",
    b"\n", b"\n", b"\n\n", b"\r", b"\r\n", b"\xef\xbb\xbf", "é".encode(), "✓😀".encode(),
    b"\xd9\xa3", b"\xff", b"\xf0\x9f",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    tokens=st.lists(st.sampled_from(TOKENS), max_size=40),
    cuts=st.lists(st.integers(0, 300), max_size=10),
    runs=st.booleans(),
)
def test_fast_path_agrees_with_a_plain_reference_on_any_body_and_split(
    tokens: list[bytes], cuts: list[int], runs: bool
) -> None:
    body = b"".join(tokens)
    points = sorted({c % (len(body) + 1) for c in cuts})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    expected, fault, ending = reference(body)
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for piece in pieces:
        events.extend(fed(decoder, piece, runs))
        if decoder.failure is not None:
            break
    assert events == expected
    if fault is not None:
        assert decoder.failure is not None
        assert decoder.failure.message.startswith(
            f"response body is not valid UTF-8 ({fault} within its first "
        )
        return
    assert decoder.failure is None
    assert decoder.close() == []
    state = (decoder.last_event_id, decoder.retry, decoder.comments, decoder.unterminated)
    assert state == ending


def test_ndjson_lines_any_ending_blank_lines_and_last_line() -> None:
    body = b'{"a":1}\r\n\n{"b":2}\n  \n{"c":3}'
    decoder = NDJSONDecoder()
    out: list[str] = []
    for i in range(len(body)):
        out.extend(decoder.feed(body[i : i + 1]))
    out.extend(decoder.close())
    assert out == ['{"a":1}', '{"b":2}', '{"c":3}']
    bad = NDJSONDecoder()
    assert bad.feed(b"\xc3(\n") == [] and bad.failure is not None


def eventsource_events(pieces: list[bytes]) -> list[SSEEvent]:
    """What httpx2.EventSource yields for ``pieces`` (its parser fed as EventSource feeds it)."""
    import codecs

    from httpx2._sse import _SSEParser

    text = codecs.getincrementaldecoder("utf-8")()
    parser = _SSEParser(max_event_size=None)
    out = []
    for piece in pieces:
        for e in parser.decode(text.decode(piece)):
            out.append(SSEEvent("" if e.event == "message" else e.event, e.data, e.id, e.retry))
    for e in parser.flush():
        out.append(SSEEvent("" if e.event == "message" else e.event, e.data, e.id, e.retry))
    return out


@settings(max_examples=100, deadline=None)
@given(
    frames=frames,
    ending=st.sampled_from(["\n", "\r", "\r\n"]),
    cuts=st.lists(st.integers(0, 400), max_size=8),
)
def test_agrees_with_eventsource_where_the_standard_lets_them(
    frames: list[tuple[str | None, list[str]]], ending: str, cuts: list[int]
) -> None:
    text = ""
    for event, lines in frames:
        name = (event or "").strip(" ")
        if name and name != "message":
            text += f"event: {name}{ending}"
        text += "".join(f"data: {line}{ending}" for line in lines) + ending
    body = text.encode()
    points = sorted({c % (len(body) + 1) for c in cuts})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    assert decode(*pieces)[0] == eventsource_events(pieces)


def test_where_eventsource_departs_from_the_standard() -> None:
    """The reasons elelem has its own decoder (see the framing module)."""
    bom = [b"\xef\xbb\xbfdata: x\n\n"]
    assert decode(*bom)[0] == [SSEEvent("", "x")]
    assert eventsource_events(bom) == []  # the first event is lost
    no_data = [b"event: ping\n\n"]
    assert decode(*no_data)[0] == []
    assert eventsource_events(no_data) == [SSEEvent("ping", "")]
    cut = [b"data: a\r"]
    assert decode(*cut)[0] == []
    assert eventsource_events(cut) == [SSEEvent("", "a")]  # a cut-off event dispatched


def _bench() -> None:  # pragma: no cover - a measurement, run by hand
    import json
    import statistics
    import sys
    import time

    def deltas(n: int) -> bytes:
        out = [b'event: message_start\ndata: {"type":"message_start"}\n\n']
        for i in range(n):
            d = {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": f"w{i} ünï "},
            }
            out.append(b"event: content_block_delta\ndata: " + json.dumps(d).encode() + b"\n\n")
        return b"".join(out)

    bodies = {"synthetic 20k text deltas": deltas(20000)}
    if len(sys.argv) > 1:  # a corpus chunk file: one JSON payload per line
        with open(sys.argv[1], encoding="utf-8") as f:
            lines = [line for line in f.read().splitlines() if line.strip()]
        bodies[sys.argv[1].rsplit("/", 1)[-1]] = b"".join(
            b"event: " + json.loads(line)["type"].encode() + b"\ndata: " + line.encode() + b"\n\n"
            for line in lines
        )
    for name, body in bodies.items():
        for size in (64, 1024, 16384):
            pieces = [body[i : i + size] for i in range(0, len(body), size)]
            assert decode(*pieces)[0] == eventsource_events(pieces)
            times = {}
            for label, fn in (
                ("elelem", lambda p: decode(*p)),
                ("EventSource", eventsource_events),
            ):
                runs = []
                for _ in range(9):
                    t = time.perf_counter()
                    fn(pieces)
                    runs.append(time.perf_counter() - t)
                times[label] = statistics.median(runs)
            print(
                f"{name} ({len(body)} B, {size} B pieces): elelem {times['elelem'] * 1e3:.2f} ms, "
                f"EventSource {times['EventSource'] * 1e3:.2f} ms, "
                f"elelem {times['EventSource'] / times['elelem']:.2f}x faster"
            )


if __name__ == "__main__":
    _bench()


_VALUE = st.text(alphabet='ab :é✓{}"', max_size=12)
_BLOCK = st.one_of(
    st.builds(lambda v: f"data: {v}", _VALUE),
    st.builds(lambda n, v: f"event: {n}\ndata: {v}", _VALUE, _VALUE),
    st.builds(lambda n: f"event: {n}", _VALUE),  # no data: not dispatched
    st.sampled_from(
        ["data:x", "data: a\ndata: b", ": ping", "id: 7\ndata: x", "", "\r", "event: e\r\ndata: d"]
    ),
    st.sampled_from(["event: a\ndata: 1\ndata: 2", "event: a\nevent: b\ndata: 3"]),
)


@settings(max_examples=200, deadline=None)
@given(
    blocks=st.lists(_BLOCK, max_size=12),
    tail=st.sampled_from(["\n\n", "\n", "", "\n\ndata: cut"]),
    cuts=st.lists(st.integers(0, 400), max_size=6),
    runs=st.booleans(),
)
def test_reads_of_whole_blocks_agree_with_a_plain_reference(
    blocks: list[str], tail: str, cuts: list[int], runs: bool
) -> None:
    # Bodies of the blocks providers send, most reads whole regions of them:
    # the region paths (data lines only, event and data lines) and the block
    # path they fall back to must dispatch what the standard does.
    body = "\n\n".join(blocks).encode() + tail.encode()
    points = sorted({c % (len(body) + 1) for c in cuts})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    assert_agrees_with_reference(pieces, runs)


def assert_agrees_with_reference(pieces: list[bytes], runs: bool) -> None:
    """The pieces' events, decoder state and bytes consumed are the plain
    reference's for their body (one without faults)."""
    expected, fault, ending = reference(b"".join(pieces))
    assert fault is None
    decoder = SSEDecoder()
    events = [event for piece in pieces for event in fed(decoder, piece, runs)]
    assert events == expected
    assert decoder.close() == []
    state = (decoder.last_event_id, decoder.retry, decoder.comments, decoder.unterminated)
    assert state == ending
    assert decoder._lines.consumed == sum(map(len, pieces))


def test_runs_of_data_only_events_come_as_their_bytes() -> None:
    decoder = SSEDecoder()
    assert decoder.feed_runs(b"id: 4\nretry: 9\ndata: x\n\n") == [SSEEvent("", "x", "4", 9)]
    reads = ['data: {"a":1}\n\ndata: caf\u00e9\n\ndata: \n\n', "event: e\ndata: y\n\n"]
    reads += ["data: z\n\n", "data: cut ", "in two\n\ndata: w\n\ndata: v\n\n"]
    # A read of data-only events is a run of them (id and retry in force);
    # an event alone, any other event and one a read cut off come as events.
    got = [item for read in reads for item in decoder.feed_runs(read.encode())]
    assert got == [
        DataRun([b'{"a":1}', "caf\u00e9".encode(), b""], "4", 9),
        SSEEvent("e", "y", "4", 9),
        SSEEvent("", "z", "4", 9),
        SSEEvent("", "cut in two", "4", 9),
        DataRun([b"w", b"v"], "4", 9),
    ]
    assert got[0].frames() == [("", '{"a":1}'), ("", "caf\u00e9"), ("", "")]


def test_a_run_is_never_made_of_bytes_that_are_not_utf8() -> None:
    for body in (
        b"data: a\n\ndata: \xff\n\ndata: c\n\n",
        b"event: x\ndata: a\n\nevent: \xff\ndata: c\n\n",
    ):
        decoder = SSEDecoder()
        assert decoder.feed_runs(body) == [SSEEvent("x" if b"event" in body else "", "a")]
        assert decoder.failure is not None
        assert "byte 0xff" in decoder.failure.message
    # Each event's data must be UTF-8, not only the run's data joined: a
    # character cut between two events is named, as the event path names it.
    faults = []
    for runs in (False, True):
        decoder = SSEDecoder()
        assert fed(decoder, b"data: x\xc3\n\ndata: \xa9y\n\ndata: z\n\n", runs) == []
        assert decoder.failure is not None
        faults.append(decoder.failure.message)
    assert faults == ["response body is not valid UTF-8 (byte 0xc3 within its first 29 bytes)"] * 2


def test_a_run_after_an_event_carried_over_is_cut_where_it_lies() -> None:
    decoder = SSEDecoder()
    assert decoder.feed_runs(b"data: cut ") == []
    got = decoder.feed_runs(b"in two\n\ndata: a\n\ndata: b\n\ndata: par")
    assert got == [SSEEvent("", "cut in two"), DataRun([b"a", b"b"])]
    assert decoder.feed_runs(b"t\n\n") == [SSEEvent("", "part")]
    assert decoder._lines.consumed == 48  # every byte of the three reads


def test_a_read_of_named_events_is_a_run_of_their_names_and_data() -> None:
    body = "event: a\ndata: 1\n\nevent: caf\u00e9\ndata: {}\n\nevent: \ndata: \n\n"
    (run,) = SSEDecoder().feed_runs(body.encode())
    assert run == DataRun([b"1", b"{}", b""], "", None, [b"a", "caf\u00e9".encode(), b""])
    assert run.frames() == [("a", "1"), ("caf\u00e9", "{}"), ("", "")]
    # Any other line in the read (a comment, a second data line, no space
    # after the colon) leaves its events to the block path.
    for other in (": ping\n", "data: 2\n", "event:b\n"):
        decoder = SSEDecoder()
        items = decoder.feed_runs(("event: a\n" + other + "data: 1\n\n" + body).encode())
        assert not any(isinstance(item, DataRun) for item in items), other


def test_a_run_is_made_only_of_blocks_of_one_name_and_one_data_line() -> None:
    # The counts of names, data lines and line ends balance here (two data
    # lines in one block, none in another), but the blocks are not a run.
    body = b"event: A\ndata: 1\ndata: 2\n\nevent: B\n\nevent: C\ndata: 3\n\n"
    want = [SSEEvent("A", "1\n2"), SSEEvent("C", "3")]
    assert SSEDecoder().feed_runs(body) == want
    assert SSEDecoder().feed(body) == want


def test_a_name_seen_before_alone_beside_two_data_lines_is_no_named_run() -> None:
    # Found by the whole-blocks property test: a read of "event: :" (a name
    # already cached, no data: nothing to dispatch) and a block of two data
    # lines balances the named path's count of line ends; each block must be
    # split at its data line, a cached name's too.
    decoder = SSEDecoder()
    first = b"event: :\ndata: ::::\n\n"
    second = b"event: :\n\nevent: a\ndata: 1\ndata: 2\n\n"
    events = decoder.feed(first) + decoder.feed(second)
    assert [(e.event, e.data) for e in events] == [(":", "::::"), ("a", "1\n2")]


@settings(max_examples=200, deadline=None)
@given(blocks=st.lists(_BLOCK, max_size=12), runs=st.booleans())
def test_reads_of_one_block_each_agree_with_a_plain_reference(
    blocks: list[str], runs: bool
) -> None:
    # A paced stream: every read one block and its blank line (the one-event
    # paths of feed), the odd block carried over or not a whole event.
    assert_agrees_with_reference([(block + "\n\n").encode() for block in blocks], runs)


def test_a_read_of_one_named_event_is_that_event() -> None:
    decoder = SSEDecoder()
    reads = [b"event: a\ndata: 1\n\n", "event: caf\u00e9\ndata: {}\n\n".encode()]
    reads += [b"event: b\ndata: 2\ndata: 3\n\n", b"event: c\r\ndata: 4\n\n", b"event: d\ndata: 5\n"]
    events = [event for read in reads for event in decoder.feed(read)]
    assert events == [
        SSEEvent("a", "1"),
        SSEEvent("caf\u00e9", "{}"),
        SSEEvent("b", "2\n3"),
        SSEEvent("c", "4"),
    ]
    assert decoder.close() == []
    assert decoder.unterminated == len(b"event: d\ndata: 5\n")
