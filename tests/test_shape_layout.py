"""Every shape package has the same modules with the same names (issue #11:
the table of :mod:`elelem.shapes`'s docstring), and its ``SHAPE`` is a spec
value built from them, with no shape class beside it."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Mapping

import msgspec
import pytest

import elelem.shapes
from elelem.errors import MalformedStreamError
from elelem.shapes.base import ShapeSpec
from elelem.shapes.classify import ErrorTable
from elelem.shapes.skeleton import ParserSkeleton
from elelem.stream import Finish
from elelem.vocabulary import ProviderId, Usage
from elelem.wire.batch import BatchWire
from elelem.wire.counting import TokenCounter
from elelem.wire.embeddings import EmbeddingWires
from elelem.wire.files import FilesWire
from elelem.wire.listing import ModelListing
from elelem.wire.live import LiveWire
from elelem.wire.speech import SpeechRequest, SpeechWire, TranscriptionWire

PACKAGES = (
    "anthropic_messages",
    "openai_responses",
    "openai_chat",
    "gemini",
    "bedrock_converse",
    "ollama_native",
    "gemini_interactions",
)

# The parked Interactions shape builds no request yet (its ``encode_request``
# refuses), so it has no portable acceptance table and no media spelling.
PARKED = {"gemini_interactions": {"encoder.ACCEPTS", "media.LIMITS", "media.encode_media"}}

NAMES = {
    "encoder": ("encode_request", "assistant_wire", "ACCEPTS"),
    "parser": ("parse_body",),
    "errors": ("ERRORS", "classify_error", "error_from_event"),
    "mapping": ("FINISH_REASONS", "finish_reason", "map_usage"),
    "fast": ("hot_decoder",),
    "media": ("LIMITS", "encode_media"),
}


KINDS = {
    "counting": ("COUNTER", TokenCounter),
    "listing": ("LISTING", ModelListing),
    "speech": ("SPEECH", SpeechWire),
    "transcription": ("TRANSCRIPTION", TranscriptionWire),
    "live": ("LIVE", LiveWire),
    "files": ("FILES", FilesWire),
    "embeddings": ("EMBEDDINGS", EmbeddingWires),
    "batch": ("BATCH", BatchWire),
}
"""The other kinds of exchange: a wire that has one holds a module of its
name with the same names, and its ``SHAPE`` field of that name is the value
(None where the wire has not the kind)."""

HAS = {
    "counting": {"anthropic_messages", "openai_responses", "gemini"},
    "listing": {"anthropic_messages", "openai_responses", "openai_chat", "gemini", "ollama_native"},
    "speech": {"openai_responses", "openai_chat"},
    "transcription": {"openai_responses", "openai_chat"},
    "live": {"openai_responses", "gemini"},
    "files": {"anthropic_messages", "openai_responses", "openai_chat", "gemini"},
    "embeddings": {
        "openai_responses",
        "openai_chat",
        "gemini",
        "bedrock_converse",
        "ollama_native",
    },
    "batch": {"anthropic_messages", "openai_responses", "openai_chat", "gemini"},
}
"""Which wires have each kind."""


def module(package: str, name: str) -> object:
    return importlib.import_module(f"elelem.shapes.{package}.{name}")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_has_the_same_modules_and_names(package: str) -> None:
    missing = [
        f"{name}.{attr}"
        for name, attrs in NAMES.items()
        for attr in attrs
        if f"{name}.{attr}" not in PARKED.get(package, set())
        and not hasattr(module(package, name), attr)
    ]
    assert missing == []
    errors = module(package, "errors")
    assert isinstance(errors.ERRORS, ErrorTable)  # type: ignore[attr-defined]
    mapping = module(package, "mapping")
    table = mapping.FINISH_REASONS  # type: ignore[attr-defined]
    assert isinstance(table, Mapping) and table
    # every wire value of the table maps to a neutral finish reason
    assert set(table.values()) <= {"stop", "tool-calls", "max-tokens", "paused", "refused",
                                   "content-filter", "aborted", "error"}  # fmt: skip
    assert inspect.signature(mapping.map_usage).return_annotation in ("Usage", Usage)  # type: ignore[attr-defined]
    fast = module(package, "fast")
    hot = [n for n, v in vars(fast).items() if n.startswith("Hot") and isinstance(v, type)]
    assert any(issubclass(vars(fast)[n], msgspec.Struct) for n in hot)


@pytest.mark.parametrize("package", PACKAGES)
def test_the_shape_is_a_spec_of_its_package_parts_and_no_class_beside_it(package: str) -> None:
    pkg = importlib.import_module(f"elelem.shapes.{package}")
    shape = pkg.SHAPE
    assert type(shape) is ShapeSpec and shape.name == package
    assert shape.encode is module(package, "encoder").encode_request  # type: ignore[attr-defined]
    assert shape.parse_body is module(package, "parser").parse_body  # type: ignore[attr-defined]
    assert shape.classify is module(package, "errors").classify_error  # type: ignore[attr-defined]
    assert issubclass(shape.parser, ParserSkeleton)  # type: ignore[arg-type]
    classes = [
        n
        for n, v in vars(pkg).items()
        if isinstance(v, type) and n.endswith("Shape") and v.__module__.startswith(pkg.__name__)
    ]
    assert classes == []


def test_the_package_docstring_holds_the_table_and_no_gaps() -> None:
    doc = elelem.shapes.__doc__ or ""
    for name, attrs in NAMES.items():
        assert f"``{name}``" in doc
        for attr in attrs:
            assert attr in doc
    assert "has not moved" not in doc and "(none)" not in doc


@pytest.mark.parametrize("package", PACKAGES)
def test_each_kind_a_wire_has_is_the_module_of_its_name(package: str) -> None:
    shape = importlib.import_module(f"elelem.shapes.{package}").SHAPE
    for kind, (name, kind_type) in KINDS.items():
        found = importlib.util.find_spec(f"elelem.shapes.{package}.{kind}") is not None
        assert found == (package in HAS[kind]), kind
        value = getattr(module(package, kind), name) if found else None
        assert value is None or isinstance(value, kind_type)
        assert getattr(shape, kind) is value


def test_the_audio_parsers_stand_on_the_skeleton() -> None:
    shape = importlib.import_module("elelem.shapes.openai_responses").SHAPE
    openai = ProviderId("openai")
    speech = shape.speech.parser(openai, SpeechRequest("tts", "Hi", stream_format="sse"))
    heard = shape.transcription.parser(openai, "gpt-4o-transcribe")
    for parser, done in (
        (speech, '{"type": "speech.audio.done"}'),
        (heard, '{"type": "transcript.text.done", "text": "Hi"}'),
    ):
        assert isinstance(parser, ParserSkeleton)
        parser.open(200, {})
        assert parser.message("", done)[-1] == Finish("stop")
        # The skeleton's guard: nothing is read after the response finished.
        with pytest.raises(MalformedStreamError) as late:
            parser.message("", done)
        assert str(late.value) == f"{parser.what}: frame 2 arrived after the response finished"
