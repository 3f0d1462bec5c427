"""Plugins (issue #25, docs/architecture.md §2.2.1): a block type with its mappings, and a shape.

A real plugin distribution is laid out in a temporary folder (a package and
its ``.dist-info`` with an ``elelem.plugins`` entry point), found by
:mod:`importlib.metadata` in a fresh interpreter whose path holds it (so
nothing it registers leaks into the other tests).  It registers a ``geo``
block type with an Anthropic encoder and a terminal renderer, and a shape
of its own.  The script then:

- loads the plugin through its entry point;
- stores a user message holding a ``geo`` block and reads it back;
- sends it natively to Anthropic (a loopback server records the exact body);
- encodes it for Chat Completions, which has no mapping: a drop record;
- renders it with the plugin's line, sanitized;
- streams a response through the plugin's shape, named by a config table.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from elelem.errors import RegistryError
from elelem.shapes.base import ShapeSpec
from elelem.shapes.registry import BUILTIN_SHAPES, register_shape, shape_named, shape_names
from elelem.vocabulary import register_block_mapping
from plugin_helpers import plugin_site

PLUGIN = '''
"""A test plugin: a geo block type and a shape."""
import msgspec

from elelem.shapes.anthropic_messages import SHAPE as ANTHROPIC
from elelem.shapes.base import ShapeSpec
from elelem.shapes.base import ShapeSpec
from elelem.shapes.registry import register_shape
from elelem.vocabulary import (
    ProviderRecord, register_block_mapping, register_block_type, register_provider,
)


class GeoBlock(msgspec.Struct, frozen=True, tag_field="type", tag="geo"):
    lat: float
    lon: float
    label: str


def anthropic_location(block, provider):
    return {"type": "location", "latitude": block.lat, "longitude": block.lon,
            "name": block.label}


def register():
    register_block_type("geo", GeoBlock)
    register_block_mapping("geo", encoders={"anthropic_messages": anthropic_location},
                           render=lambda b: f"location {b.label} ({b.lat}, {b.lon})")
    register_shape("anthropic_proxy", ShapeSpec(
        "anthropic_proxy", "sse", encode=ANTHROPIC.encode, parser=ANTHROPIC.parser,
        parse_body=ANTHROPIC.parse_body, classify=ANTHROPIC.classify))
    # A provider of its own, speaking the plugin's shape: one record.
    register_provider(ProviderRecord(
        "geo-host", "anthropic_proxy", "http://127.0.0.1:9", ("ANTHROPIC_API_KEY",),
        auth_header="x-api-key", auth_scheme="", default_model="claude-geo",
        models=("claude-geo",), aliases={"geo": "claude-geo"}))
'''

SCRIPT = """
import io, json, sys
from pathlib import Path

from rich.console import Console

import elelem
from elelem import Conversation, SyncClient
from elelem.conversation import SQLiteStore
from elelem.render import Renderer, render_parts
from elelem.shapes.openai_chat import SHAPE as CHAT
from elelem.testing.servers import LoopbackServer, anthropic_text_body, replay
from elelem.errors import UnsupportedError
from elelem.vocabulary import Message, TextBlock, ToolSpec, block_type, load_plugins
from elelem.wire import ModelRequest

tmp = Path(sys.argv[1])
print("ran", load_plugins())
GeoBlock = block_type("geo")
geo = GeoBlock(48.8584, 2.2945, "Eiffel Tower\\x1b[31m")
message = Message(role="user", content=(TextBlock("Where is this?"), geo), source="user")

with LoopbackServer([replay(anthropic_text_body("Paris.")),
                     replay(anthropic_text_body("Still Paris.")),
                     replay(anthropic_text_body("Geo."))]) as server:
    env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-plugin",
           "ELELEM_CONFIG": str(tmp / "config.toml"), "ELELEM_GEO_HOST_BASE_URL": server.url}
    (tmp / "config.toml").write_text(
        f'[providers.proxy]\\nshape = "anthropic_proxy"\\nbase_url = "{server.url}"\\n'
        'auth_header = "x-api-key"\\nauth_scheme = ""\\napi_key_env = "ANTHROPIC_API_KEY"\\n')
    store = SQLiteStore(tmp / "elelem.db")
    conv = Conversation.create(store)
    with SyncClient(env=env) as client:
        result = elelem.send_sync(conv, client, "anthropic:claude-sonnet-4-5", message)
        print("answer", result.text)
        streamed = client.stream("proxy:claude-proxy", "Again?").final()
        print("proxy", streamed.text, streamed.finish.reason)
        host = client.stream("geo", "Once more?").final()
        print("host", host.provider, json.loads(server.requests[2].body)["model"], host.text)
    sent = [json.loads(r.body) for r in server.requests]
    print("sent", json.dumps(sent[0]["messages"][0]["content"]))
    print("paths", [r.path for r in server.requests])

stored = SQLiteStore(tmp / "elelem.db")
again = Conversation.open(stored, conv.id)
user = [e.body for e in again.events if getattr(e.body, "role", None) == "user"][0]
print("stored", type(user.content[1]).__name__, user.content[1] == geo)

encoded = CHAT.encode_request(ModelRequest(model="m", messages=(message,)), provider="openai")
print("chat", [(d.where, d.what, d.why, d.detail) for d in encoded.dropped])
tool = ToolSpec("f", native={"anthropic_proxy": {"x": 1}})
encoded = CHAT.encode_request(ModelRequest(model="m", messages=(message,), tools=(tool,)),
                              provider="openai")
print("native", json.dumps(encoded.body["tools"]))
typo = ToolSpec("f", native={"anthropic_proxy": {"x": 1}, "anthropic_proxie": {"x": 1}})
try:
    CHAT.encode_request(ModelRequest(model="m", messages=(message,), tools=(typo,)),
                        provider="openai")
except UnsupportedError as exc:
    print("typo", json.dumps(str(exc)))

out = io.StringIO()
render_parts(Renderer(Console(file=out, width=100)), message.content)
print("render", json.dumps(out.getvalue()))
"""


def _plugin(root: Path) -> Path:
    return plugin_site(root, "elelem_geo", PLUGIN, "[elelem.plugins]\ngeo = elelem_geo:register\n")


def test_a_plugin_block_type_and_shape_go_through_every_path(tmp_path: Path) -> None:
    site = _plugin(tmp_path)
    script = tmp_path / "run.py"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert lines["ran"] == "['geo']"
    assert lines["answer"] == "Paris."
    assert lines["proxy"] == "Still Paris. stop"
    assert json.loads(lines["sent"]) == [
        {"type": "text", "text": "Where is this?"},
        {"type": "location", "latitude": 48.8584, "longitude": 2.2945,
         "name": "Eiffel Tower\x1b[31m"},
    ]  # fmt: skip
    assert lines["host"] == "geo-host claude-geo Geo."
    assert lines["paths"] == "['/v1/messages', '/v1/messages', '/v1/messages']"
    # The plugin shape's name is a shape name (its fields stay off another
    # wire); a misspelt one is a typed error naming it and the known shapes.
    assert json.loads(lines["native"]) == [
        {
            "type": "function",
            "function": {"name": "f", "parameters": {"type": "object", "properties": {}}},
        }
    ]
    assert json.loads(lines["typo"]) == (
        "tool 'f': native fields keyed by 'anthropic_proxie', which is no registered shape "
        "(known shapes: anthropic_messages, anthropic_proxy, bedrock_converse, gemini, "
        "gemini_interactions, ollama_native, openai_chat, openai_responses)"
    )
    assert lines["stored"] == "GeoBlock True"
    assert lines["chat"] == (
        "[('messages[0].content[1]', 'geo', 'unsupported', 'Chat Completions has no form for it')]"
    )
    # The plugin's line, with the escape it carried stripped.
    assert json.loads(lines["render"]) == (
        "Where is this?\nlocation Eiffel Tower (48.8584, 2.2945)\n"
    )


def test_the_built_in_shapes_are_registered_as_plugins_are() -> None:
    assert shape_names()[: len(BUILTIN_SHAPES)] == BUILTIN_SHAPES
    shape = shape_named("anthropic_messages")
    assert shape.name == "anthropic_messages"
    # Registering it again as it is changes nothing; another value is refused.
    register_shape("anthropic_messages", shape)
    g = shape_named("gemini")
    other = ShapeSpec("openai_chat", "sse", g.encode, g.parser, g.parse_body, g.classify)  # type: ignore[attr-defined]
    with pytest.raises(RegistryError, match="'openai_chat' is already registered"):
        register_shape("openai_chat", other)
    with pytest.raises(RegistryError, match="the value's name is 'gemini'"):
        register_shape("not_gemini", shape_named("gemini"))


def test_a_mapping_needs_its_block_type_and_one_encoder_per_shape() -> None:
    with pytest.raises(RegistryError, match="no block type 'nosuch' is registered"):
        register_block_mapping("nosuch", render=str)

    def spell(block: object, provider: str) -> dict[str, object]:
        return {"type": "image"}

    register_block_mapping("image", encoders={"plugin_test_wire": spell})
    register_block_mapping("image", encoders={"plugin_test_wire": spell})  # the same: no-op
    with pytest.raises(RegistryError, match="already has a plugin_test_wire encoder"):
        register_block_mapping("image", encoders={"plugin_test_wire": lambda b, p: None})
