"""The registry: block types, open sets, and plugins from the `elelem.plugins` entry points."""

from __future__ import annotations

import sys
import textwrap
import uuid
from pathlib import Path

import msgspec
import pytest

import elelem
from elelem.codec import dumps, loads
from elelem.errors import DecodeError, RegistryError
from elelem.vocabulary import (
    FINISH_REASONS,
    MESSAGE_SOURCES,
    TURN_END_REASONS,
    TURN_TRIGGERS,
    Message,
    OpenSet,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
    block_tags,
    block_type,
    load_plugins,
    register_block_type,
    register_finish_reason,
    register_message_source,
    register_turn_end_reason,
    register_turn_trigger,
    registry,
)


class ImageBlock(msgspec.Struct, frozen=True, tag_field="type", tag="test-image"):
    """A plugin block type used by these tests."""

    url: str
    alt: str = ""


class OtherImage(msgspec.Struct, frozen=True, tag_field="type", tag="test-image"):
    url: str


class Loose(msgspec.Struct, tag_field="type", tag="test-loose"):
    x: int = 0


class WrongField(msgspec.Struct, frozen=True, tag_field="kind", tag="test-wrong"):
    x: int = 0


def test_core_block_types_are_registered() -> None:
    assert block_tags()[:4] == ("text", "reasoning", "tool-call", "tool-result")
    assert block_type("text") is TextBlock
    assert block_type("reasoning") is ReasoningBlock
    assert block_type("tool-call") is ToolCallBlock
    assert block_type("tool-result") is ToolResultBlock
    assert block_type("never-registered-tag") is None


def test_registered_block_type_decodes_to_its_class_and_round_trips() -> None:
    elelem.register_block_type("test-image", ImageBlock)
    register_block_type("test-image", ImageBlock)  # the same class again is a no-op
    assert block_type("test-image") is ImageBlock
    data = (
        b'{"role":"user","content":[{"type":"test-image","url":"https://x/i.png","alt":"cat"}],'
        b'"source":"user","provider":null,"model":null}'
    )
    message = loads(data, Message)
    assert message.content == (ImageBlock("https://x/i.png", "cat"),)
    assert dumps(message) == data


def test_malformed_value_of_a_registered_type_is_a_decode_error_with_its_path() -> None:
    register_block_type("test-image", ImageBlock)
    with pytest.raises(DecodeError) as info:
        loads(
            b'{"role":"user","content":[{"type":"text","text":"x"},{"type":"test-image","url":3}]}',
            Message,
        )
    assert (info.value.detail, info.value.path) == ("Expected `str`, got `int`", "$.content[1].url")


def test_a_registered_tag_cannot_be_an_unknown_block() -> None:
    register_block_type("test-image", ImageBlock)
    with pytest.raises(DecodeError):
        UnknownBlock({"type": "test-image", "url": "u"})


def test_conflicting_registration_is_a_registry_error() -> None:
    register_block_type("test-image", ImageBlock)
    with pytest.raises(RegistryError) as info:
        register_block_type("test-image", OtherImage)
    assert str(info.value) == "block tag 'test-image' is already registered to ImageBlock"
    assert block_type("test-image") is ImageBlock

    class MyText(msgspec.Struct, frozen=True, tag_field="type", tag="text"):
        text: str

    with pytest.raises(RegistryError) as info:
        register_block_type("text", MyText)
    assert str(info.value) == "block tag 'text' is already registered to TextBlock"


@pytest.mark.parametrize(
    ("tag", "cls", "message"),
    [
        ("", ImageBlock, "a block tag must be a non-empty string"),
        ("hosted", ImageBlock, "'hosted' is reserved for hosted-activity transitions"),
        ("test-dict", dict, "block type for 'test-dict' must be a msgspec.Struct subclass"),
        (
            "test-other",
            ImageBlock,
            "block type ImageBlock must be declared with tag_field='type', tag='test-other'",
        ),
        (
            "test-wrong",
            WrongField,
            "block type WrongField must be declared with tag_field='type', tag='test-wrong'",
        ),
        ("test-loose", Loose, "block type Loose must be frozen"),
    ],
)
def test_ill_formed_block_registration_is_a_registry_error(
    tag: str, cls: type, message: str
) -> None:
    with pytest.raises(RegistryError) as info:
        register_block_type(tag, cls)
    assert str(info.value) == message
    assert tag == "" or tag == "hosted" or block_type(tag) is None


# -- open sets ---------------------------------------------------------------------


def test_open_sets_start_with_the_documented_members() -> None:
    assert FINISH_REASONS.members()[:8] == (
        "stop",
        "tool-calls",
        "max-tokens",
        "paused",
        "refused",
        "content-filter",
        "error",
        "aborted",
    )
    assert MESSAGE_SOURCES.members()[:6] == (
        "user",
        "assistant",
        "tool",
        "system",
        "context",
        "steering",
    )
    assert TURN_TRIGGERS.members()[:4] == ("user", "tool-results", "continuation", "retry")
    assert TURN_END_REASONS.members()[:5] == (
        "completed",
        "paused",
        "interrupted",
        "error",
        "max-continuations",
    )


@pytest.mark.parametrize(
    ("register", "open_set"),
    [
        (register_finish_reason, FINISH_REASONS),
        (register_message_source, MESSAGE_SOURCES),
        (register_turn_trigger, TURN_TRIGGERS),
        (register_turn_end_reason, TURN_END_REASONS),
        (elelem.register_finish_reason, FINISH_REASONS),
    ],
)
def test_open_sets_take_new_members_idempotently(register: object, open_set: OpenSet) -> None:
    name = f"test-{uuid.uuid4().hex[:8]}"
    assert name not in open_set
    assert register(name, "a test member") == name  # type: ignore[operator]
    assert register(name) == name  # type: ignore[operator]
    assert name in open_set
    assert open_set.members().count(name) == 1
    assert open_set.members()[-1] == name
    with pytest.raises(RegistryError) as info:
        register("")  # type: ignore[operator]
    assert str(info.value) == f"a {open_set.what} must be a non-empty string"


# -- plugins through real entry points -------------------------------------------------


def _install_plugin(site: Path, body: str, *, name: str | None = None) -> str:
    """Write a real module and a real .dist-info declaring it in `elelem.plugins`."""
    name = name or f"elelem_testplugin_{uuid.uuid4().hex[:10]}"
    (site / f"{name}.py").write_text(textwrap.dedent(body))
    dist = site / f"{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[elelem.plugins]\n{name} = {name}:setup\n")
    return name


PLUGIN = """
    import msgspec
    import elelem

    CALLS = []

    class Diagram(msgspec.Struct, frozen=True, tag_field="type", tag="{tag}"):
        source: str

    def setup():
        CALLS.append(1)
        elelem.register_block_type("{tag}", Diagram)
        elelem.register_finish_reason("{tag}-finish")
"""


def test_load_plugins_runs_entry_points_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tag = f"test-diagram-{uuid.uuid4().hex[:8]}"
    name = _install_plugin(tmp_path, PLUGIN.replace("{tag}", tag))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert name not in sys.modules

    ran = load_plugins()
    assert name in ran
    module = sys.modules[name]
    assert module.CALLS == [1]
    assert block_type(tag) is module.Diagram
    assert f"{tag}-finish" in FINISH_REASONS
    # A second call does not run it again.
    assert name not in load_plugins()
    assert module.CALLS == [1]

    data = f'{{"role":"user","content":[{{"type":"{tag}","source":"a->b"}}]}}'.encode()
    assert loads(data, Message).content == (module.Diagram("a->b"),)


def test_decoding_an_unknown_tag_loads_plugins_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tag = f"test-lazy-{uuid.uuid4().hex[:8]}"
    name = _install_plugin(tmp_path, PLUGIN.replace("{tag}", tag))
    monkeypatch.syspath_prepend(str(tmp_path))
    # As in a fresh process: nothing has loaded plugins yet.
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    message = loads(
        f'{{"role":"assistant","content":[{{"type":"{tag}","source":"x"}}]}}'.encode(), Message
    )
    module = sys.modules[name]
    assert message.content == (module.Diagram("x"),)
    assert module.CALLS == [1]


def test_a_failing_plugin_is_a_registry_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = _install_plugin(tmp_path, "def setup():\n    raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RegistryError) as info:
        load_plugins()
    assert str(info.value) == f"elelem plugin {name!r} ({name}:setup) failed: boom"
    assert type(info.value.__cause__) is RuntimeError
    # Not marked as run: the next call tries (and fails) again rather than skipping it.
    with pytest.raises(RegistryError):
        load_plugins()


def test_a_plugin_that_does_not_import_is_a_registry_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"elelem_testplugin_{uuid.uuid4().hex[:10]}"
    dist = tmp_path / f"{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[elelem.plugins]\n{name} = {name}:setup\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RegistryError) as info:
        load_plugins()
    assert str(info.value).startswith(f"elelem plugin {name!r} ({name}:setup) failed: ")
    assert isinstance(info.value.__cause__, ModuleNotFoundError)


def test_load_plugins_of_another_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"elelem_testplugin_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{name}.py").write_text("RAN = []\ndef go():\n    RAN.append(True)\n")
    dist = tmp_path / f"{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[{name}.group]\nhook = {name}:go\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_plugins(f"{name}.group") == ["hook"]
    assert sys.modules[name].RAN == [True]


def test_blocks_and_the_registry_share_the_tag_table_without_importing_each_other() -> None:
    import ast

    import elelem.vocabulary.blocks as blocks_module
    from elelem.vocabulary import UnknownBlock
    from elelem.vocabulary.tags import BLOCK_TYPES

    # The circle blocks -> registry -> blocks is gone, not hidden in a function.
    tree = ast.parse(Path(blocks_module.__file__ or "").read_text())
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert "elelem.vocabulary.registry" not in imported
    assert BLOCK_TYPES["text"].__name__ == "TextBlock"
    with pytest.raises(DecodeError, match="block tag 'text' is registered"):
        UnknownBlock({"type": "text", "text": "x"})
