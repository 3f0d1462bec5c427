"""Provider payloads are immutable, and every payload an encoder refuses is a
drop record (issue #31).

A payload's value is untrusted native data replayed byte-exact: a change to
it after the fact would change what is replayed and the payload's hash, so
it is held frozen.  An encoder that meets a payload it cannot spell (a
hand-built or damaged log) sends what it can and records what it left out,
never a malformed block to the wire and never a silent downgrade.  The wire
forms checked against are the providers' documented ones: Responses output
items (platform.openai.com/docs/api-reference/responses/object), Bedrock
Converse ``reasoningContent`` (``reasoningText.signature`` a string,
``redactedContent`` bytes) and server-tool ``toolResult`` content blocks
(docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ContentBlock.html).
"""

from __future__ import annotations

import copy
import pickle

import msgspec
import pytest

from elelem.codec import dumps, loads
from elelem.shapes.bedrock_converse import assistant_wire as bedrock_wire
from elelem.shapes.openai_responses.encoder import assistant_wire as responses_wire
from elelem.vocabulary import (
    ActivityId,
    HostedActivity,
    Message,
    ProviderId,
    ProviderPayload,
    ReasoningBlock,
    TextBlock,
)
from elelem.vocabulary.drop import UNREPLAYABLE, Drop

OPENAI, BEDROCK = ProviderId("openai"), ProviderId("bedrock")


def test_a_payload_value_cannot_be_changed_and_the_given_value_changes_nothing() -> None:
    given = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "a"}]}
    payload = ProviderPayload(OPENAI, "item", None, given)
    before = hash(payload)
    given["summary"][0]["text"] = "changed"  # the caller's own dict
    given["id"] = "rs_9"
    assert payload.value == {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "a"}],
    }
    assert hash(payload) == before
    with pytest.raises(TypeError, match="immutable"):
        payload.value["id"] = "rs_1"
    with pytest.raises(TypeError, match="immutable"):
        payload.value["summary"].append({})
    with pytest.raises(TypeError, match="immutable"):
        payload.value["summary"][0].update(text="b")
    assert hash(payload) == before


def test_a_frozen_value_reads_encodes_copies_and_pickles_as_json() -> None:
    payload = ProviderPayload(OPENAI, "item", None, {"a": [1, {"b": None}], "c": "d"})
    assert isinstance(payload.value, dict) and isinstance(payload.value["a"], list)
    assert msgspec.json.encode(payload.value) == b'{"a":[1,{"b":null}],"c":"d"}'
    thawed = copy.deepcopy(payload.value)
    thawed["a"].append(2)  # a deep copy is the caller's to change
    assert type(thawed) is dict and payload.value["a"] == [1, {"b": None}]
    assert pickle.loads(pickle.dumps(payload)) == payload
    again = ProviderPayload(OPENAI, "item", None, payload.value)
    assert again == payload and again.value is payload.value  # frozen once


def test_a_stored_payload_reads_back_frozen() -> None:
    block = TextBlock("t", payloads=(ProviderPayload(OPENAI, "x", None, {"k": ["v"]}),))
    message = Message("assistant", (block,), provider=OPENAI)
    back = loads(dumps(message), Message)
    (payload,) = back.content[0].payloads
    with pytest.raises(TypeError):
        payload.value["k"].append("w")


def test_responses_reports_a_hosted_payload_that_is_no_item() -> None:
    bad = ProviderPayload(OPENAI, "citation", None, {"url": "https://a.example"})
    done = HostedActivity(ActivityId("ws_1"), "web_search", "completed", payload=bad)
    items, dropped = responses_wire(Message("assistant", (done,), provider=OPENAI), OPENAI)
    assert items == []
    assert dropped == [
        Drop(
            "content[0]", "hosted", UNREPLAYABLE, "web_search ws_1: a citation payload, not an item"
        )
    ]


def test_responses_reports_a_text_payload_it_cannot_use() -> None:
    bad = ProviderPayload(OPENAI, "message-part", None, ["not", "a", "part"])
    message = Message("assistant", (TextBlock("Hello.", payloads=(bad,)),), provider=OPENAI)
    items, dropped = responses_wire(message, OPENAI)
    assert items == [{"type": "message", "role": "assistant", "content": "Hello."}]
    assert dropped == [
        Drop(
            "content[0]",
            "message-part",
            UNREPLAYABLE,
            "not a message item and part: the text is sent without them",
        )
    ]


def test_bedrock_sends_no_malformed_payload_to_the_wire() -> None:
    signed = ReasoningBlock("why", payloads=(ProviderPayload(BEDROCK, "signature", None, 5),))
    tool = ProviderPayload(
        BEDROCK, "toolResult", None, {"toolResult": {"toolUseId": "t", "content": ["nope"]}}
    )
    done = HostedActivity(
        ActivityId("t"), "web_search", "completed", summary="2 results", payload=tool
    )
    wire, dropped = bedrock_wire(Message("assistant", (signed, done), provider=BEDROCK), BEDROCK)
    content = wire["content"]
    assert content[0] == {"reasoningContent": {"reasoningText": {"text": "why"}}}
    assert "toolResult" not in content[1]
    assert [(d.where, d.what) for d in dropped] == [
        ("content[0]", "signature"),
        ("content[1]", "hosted"),
    ]
