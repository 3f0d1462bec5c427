"""Each shape's typed fast path against its own dict path, in process.

``python -m benchmarks.fast_paths [ollama] [bedrock] [gemini]``: for a shape
whose hot frame has a typed decoder (``fast.hot_decoder()``) the same
parser is timed twice on one stream of 20,000 hot frames built from a corpus
recording's own frames — as it is, and with its ``fast`` hook switched off,
so every frame takes the dict path (the baseline, measured in the same run).
Bedrock is measured as recorded (one-key unions), as live event-stream
messages (the event named, its body as the data) and as those with one field
nobody knows on every event.  Prints the best of 7 runs, milliseconds per
stream, and fast/dict.  Chat Completions and Anthropic are measured against
the floor by :mod:`benchmarks.providers`.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks.corpus import corpus_root
from elelem.recordings import cassettes
from elelem.vocabulary import ProviderId

EVENTS = 20_000
RUNS = 7
Frames = Sequence[tuple[str, str]]


def best(run: Callable[[], None]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(label: str, parser: type[Any], provider: str, frames: Frames) -> str:
    class DictOnly(parser):  # type: ignore[misc,valid-type]
        def fast(self, event: str, data: str) -> None:
            return None

    def feed(cls: type[Any]) -> Callable[[], None]:
        def run() -> None:
            p = cls(ProviderId(provider))
            for event, data in frames:
                p.message(event, data)
            p.eof()

        return run

    fast, slow = best(feed(parser)), best(feed(DictOnly))
    return f"| {label} | {len(frames)} | {fast * 1e3:.1f} | {slow * 1e3:.1f} | {fast / slow:.2f}x |"


def ollama() -> list[str]:
    from elelem.shapes.ollama_native import OllamaParser

    path = corpus_root() / (
        "dcdpr__jp/crates__jp_llm__tests__fixtures__ollama__test_chat_completion_stream.yml"
    )
    (interaction, *_) = [
        i for i in cassettes.load(path).interactions if i.request and i.request.path == "/api/chat"
    ]
    lines = [x for x in interaction.response.body.decode().splitlines() if x.strip()]
    hot = lines[1:-1]
    body = [lines[0], *(hot[k % len(hot)] for k in range(EVENTS)), lines[-1]]
    return [measure("ollama", OllamaParser, "ollama-native", [("", x) for x in body])]


def bedrock() -> list[str]:
    from elelem.shapes.bedrock_converse import BedrockParser

    path = corpus_root() / (
        "vercel__ai/packages__amazon-bedrock__src____fixtures____amazon-bedrock-reasoning.chunks.txt"
    )
    frames = [("", x) for x in path.read_text().splitlines() if x.strip()]
    texts = [
        k
        for k, (_, data) in enumerate(frames)
        if set(json.loads(data).get("contentBlockDelta", {}).get("delta", {})) == {"text"}
    ]
    # up to the first text delta (which opens the block), then the text deltas repeated
    repeated = [frames[k] for k in texts[1:]]
    rest = [f for k, f in enumerate(frames) if k > texts[0] and k not in texts]
    union = [*frames[: texts[0] + 1], *(repeated[j % len(repeated)] for j in range(EVENTS)), *rest]
    named, probed = [], []
    for _, data in union:
        ((name, body),) = json.loads(data).items()
        named.append((name, json.dumps(body, separators=(",", ":"))))
        probed.append((name, json.dumps({**body, "x_bench_probe": 1}, separators=(",", ":"))))
    return [
        measure("bedrock (recorded unions)", BedrockParser, "bedrock", union),
        measure("bedrock (named events)", BedrockParser, "bedrock", named),
        measure("bedrock (named, +unknown)", BedrockParser, "bedrock", probed),
    ]


def gemini() -> list[str]:
    from elelem.shapes.gemini import GeminiParser

    path = corpus_root() / (
        "vercel__ai/packages__google__src____fixtures____google-reasoning-gemini3.chunks.txt"
    )
    first, hot = path.read_text().splitlines()[:2]
    last = json.loads(hot)
    last["candidates"][0]["finishReason"] = "STOP"
    body = [("", first), *([("", hot)] * EVENTS), ("", json.dumps(last))]
    return [measure("gemini", GeminiParser, "google", body)]


SHAPES = {"ollama": ollama, "bedrock": bedrock, "gemini": gemini}


def main(names: Sequence[str]) -> int:
    print("| stream | frames | fast ms | dict-only ms | fast/dict |\n|---|---:|---:|---:|---:|")
    for name in names or SHAPES:
        for row in SHAPES[name]():
            print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
