"""A plugin block type for a block a provider sends replays natively as the
block came, where the plugin registered no encoder for that wire (issue #31).

Without the plugin, Anthropic's ``compaction`` block (the context-management
summary block, ``{"type": "compaction", "content": …}``:
docs.anthropic.com/en/docs/build-with-claude/context-management) is an
unknown block replayed verbatim; registering a type for it must not make its
native replay a drop.  Run in a fresh interpreter so the registration does
not leak into other tests.
"""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r"""
import json
import msgspec
from elelem.shapes.anthropic_messages import SHAPE
from elelem.stream import assemble
from elelem.vocabulary import Message, ProviderId, register_block_type
from elelem.wire import ModelRequest


class Compaction(msgspec.Struct, frozen=True, tag_field="type", tag="compaction"):
    content: str


register_block_type("compaction", Compaction)
A = ProviderId("anthropic")
block = {"type": "compaction", "content": "We talked about towers."}
events = [
    {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
     "model": "claude-sonnet-4-5", "content": [], "usage": {"input_tokens": 5, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": block},
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Yes."}},
    {"type": "content_block_stop", "index": 1},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
    {"type": "message_stop"},
]
parser = SHAPE.new_parser(A)
chunks = [c for e in events for c in parser.message(e["type"], json.dumps(e))]
response = assemble(chunks, A)
print(json.dumps({"built": type(response.content[0]).__name__}))
message = Message("assistant", response.content, provider=A, model="claude-sonnet-4-5")
encoded = SHAPE.encode_request(ModelRequest("claude-sonnet-4-5", (Message.user("hi"), message)), provider=A)
print(json.dumps({"sent": encoded.body["messages"][1]["content"],
                  "dropped": [d.what for d in encoded.dropped]}))
"""


def test_a_plugin_type_for_a_provider_block_replays_it_natively() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    built, sent = (json.loads(line) for line in done.stdout.splitlines())
    assert built == {"built": "Compaction"}
    assert sent == {
        "sent": [
            {"type": "compaction", "content": "We talked about towers."},
            {"type": "text", "text": "Yes."},
        ],
        "dropped": [],
    }
