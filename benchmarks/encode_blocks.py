"""Encoding the corpus conversations, for an instruction counter:
``python -m benchmarks.encode_blocks ROUNDS``.

Every recorded response of the corpus (Anthropic Messages, Responses, Chat
Completions, Gemini) is parsed by its shape and assembled into the
assistant message it was; each round then encodes, for every such message,
a request of a user question, that answer and a follow-up through every
built-in shape: natively to the provider that produced it (the shape's
replay), portably to each other shape.  What the shapes' block spelling
costs is what the rounds repeat.

Run it under ``valgrind --tool=callgrind`` with ROUNDS 1 and 3: the
difference divided by 2 is the instructions of one round, the imports and
the corpus parsing cancelled (robust to the machine's load).  Without
valgrind it prints the messages, encodings and drops of one round and the
best of five rounds' CPU time.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import time
from typing import Any

from benchmarks.corpus import INDEX_SHAPES, corpus_root
from elelem.cli.inspect import recorded_frames, recorded_provider
from elelem.errors import ElelemError
from elelem.recordings.cassettes import Interaction, load
from elelem.stream import Assembler
from elelem.vocabulary import Message, ProviderId
from elelem.wire import ModelRequest

TARGETS = {
    "anthropic_messages": "anthropic",
    "openai_responses": "openai",
    "openai_chat": "openai",
    "gemini": "google",
    "bedrock_converse": "bedrock",
    "ollama_native": "ollama-native",
    "gemini_interactions": "google-interactions",
}
"""Every built-in shape the messages are encoded through, with a provider of it."""


def _message(shape: str, interaction: Interaction) -> Message | None:
    response = interaction.response
    if response.status != 200:
        return None
    module = importlib.import_module(f"elelem.shapes.{shape}")
    provider = recorded_provider(interaction, shape)
    request = interaction.request.json if interaction.request is not None else None
    assembler = Assembler(provider)
    if response.streamed:
        parser = module.SHAPE.new_parser(provider, request)
        chunks = list(parser.open(response.status, response.headers))
        for event, data in recorded_frames(response, module.SHAPE.framing):
            chunks.extend(parser.message(event, data))
        chunks.extend(parser.eof())
    else:
        chunks = module.SHAPE.parse_response(response.body, provider, request)
    assembler.feed_all(chunks)
    return assembler.result().to_message()


def conversations() -> tuple[list[Message], int]:
    """The assistant message of every corpus response that parses, and how
    many did not (an error response, a recording of a fault)."""
    root = corpus_root()
    by_index = {v: k for k, v in INDEX_SHAPES.items()}
    messages: list[Message] = []
    faults = 0
    with (root / "INDEX.tsv").open(newline="") as index:
        for row in csv.DictReader(index, delimiter="\t"):
            shape = by_index.get(row["api_shape"])
            if shape is None:
                continue
            try:
                interactions = load(root / row["local_file"]).interactions
                for interaction in interactions:
                    message = _message(shape, interaction)
                    if message is not None and message.content:
                        messages.append(message)
            except ElelemError:
                faults += 1  # a recording of a fault: counted, not encoded
    return messages, faults


def requests(messages: list[Message]) -> list[tuple[Any, ModelRequest, ProviderId]]:
    """Each message in a three-message request, for every shape."""
    encoders = {s: importlib.import_module(f"elelem.shapes.{s}.encoder") for s in TARGETS}
    out = []
    for message in messages:
        history = (Message.user("What did you find?"), message, Message.user("Go on."))
        for shape, provider in TARGETS.items():
            out.append((encoders[shape].encode_request, ModelRequest("m", history), provider))
    return out


def round_of(work: list[tuple[Any, ModelRequest, ProviderId]]) -> int:
    """Encode every request once; the number of drop records."""
    drops = 0
    for encode, request, provider in work:
        drops += len(encode(request, provider=ProviderId(provider)).dropped)
    return drops


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("rounds", type=int, nargs="?", default=0)
    rounds = args.parse_args().rounds
    messages, faults = conversations()
    work = requests(messages)
    if rounds:
        for _ in range(rounds):
            round_of(work)
        return
    drops = round_of(work)
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        round_of(work)
        best = min(best, time.process_time() - start)
    print(
        f"{len(messages)} messages ({faults} recordings not parsed), {len(work)} encodings, "
        f"{drops} drops; best round {best * 1000:.1f} ms CPU"
    )


if __name__ == "__main__":
    main()
