"""Every client the benchmark measures, each reduced to one call.

``prepare(shape, base_url)`` builds a client outside the measured region and
returns the measured call: a function (or coroutine function) that sends
one streaming request to ``base_url`` and returns the text of the final
assembled message, which the child checks against the stream's own text.

Imports of optional peers happen inside ``prepare`` so that this module
loads with nothing but the standard library; a peer that is not installed
raises :class:`NotAvailable` with the reason, and the driver reports it.
"""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.streams import MODELS

Runner = Callable[[], str] | Callable[[], Awaitable[str]]

PROMPT = "Tell me something."

# The API path each shape's client appends to its base URL (for the floor,
# which has no SDK to do it).
API_PATHS = {
    "anthropic_messages": "/v1/messages",
    "openai_responses": "/v1/responses",
    "openai_chat": "/v1/chat/completions",
    "gemini": f"/v1beta/models/{MODELS['gemini']}:streamGenerateContent?alt=sse",
}

REQUEST_BODIES: dict[str, dict[str, Any]] = {
    "anthropic_messages": {
        "model": MODELS["anthropic_messages"],
        "max_tokens": 64000,
        "stream": True,
        "messages": [{"role": "user", "content": PROMPT}],
    },
    "openai_responses": {"model": MODELS["openai_responses"], "input": PROMPT, "stream": True},
    "openai_chat": {
        "model": MODELS["openai_chat"],
        "stream": True,
        "messages": [{"role": "user", "content": PROMPT}],
    },
    "gemini": {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]},
}


class NotAvailable(RuntimeError):
    """The client cannot run here (not installed, not built yet); the message says why."""


def _need(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        reason = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else module
        raise NotAvailable(f"{module} not importable: {reason}") from exc


# -- the floor: httpx2 + SSE line split + orjson per data line -------------------------


def _floor_extractor(shape: str) -> Callable[[Any, list[str]], None]:
    if shape == "anthropic_messages":

        def anthropic(d: Any, out: list[str]) -> None:
            if d["type"] == "content_block_delta":
                out.append(d["delta"]["text"])

        return anthropic
    if shape == "openai_responses":

        def responses(d: Any, out: list[str]) -> None:
            if d["type"] == "response.output_text.delta":
                out.append(d["delta"])

        return responses
    if shape == "openai_chat":

        def chat(d: Any, out: list[str]) -> None:
            for choice in d["choices"]:
                content = choice["delta"].get("content")
                if content:
                    if type(content) is list:  # Mistral's content parts
                        out.extend(p["text"] for p in content if p["type"] == "text")
                    else:
                        out.append(content)

        return chat

    def gemini(d: Any, out: list[str]) -> None:
        for cand in d["candidates"]:
            for part in cand["content"]["parts"]:
                out.append(part["text"])

    return gemini


def _floor_lines(pending: bytes, chunk: bytes, loads: Any, take: Any, out: list[str]) -> bytes:
    lines = (pending + chunk).split(b"\n")
    for line in lines[:-1]:
        if line[:5] == b"data:" and line[5:].strip() != b"[DONE]":
            take(loads(line[5:]), out)
    return lines[-1]


def floor(shape: str, base_url: str) -> Runner:
    """The parsing floor: what any client must at least do to read the stream."""
    httpx2 = _need("httpx2")
    orjson = _need("orjson")
    client = httpx2.Client(timeout=None)
    url = base_url + API_PATHS[shape]
    body, take, loads = REQUEST_BODIES[shape], _floor_extractor(shape), orjson.loads

    def run() -> str:
        out: list[str] = []
        pending = b""
        with client.stream("POST", url, json=body, headers={"x-api-key": "bench"}) as resp:
            resp.raise_for_status()
            for chunk in resp.iter_bytes():
                pending = _floor_lines(pending, chunk, loads, take, out)
        return "".join(out)

    return run


def floor_async(shape: str, base_url: str) -> Runner:
    """The same floor over httpx2's async client, for the cost of asyncio itself."""
    httpx2 = _need("httpx2")
    orjson = _need("orjson")
    client = httpx2.AsyncClient(timeout=None)
    url = base_url + API_PATHS[shape]
    body, take, loads = REQUEST_BODIES[shape], _floor_extractor(shape), orjson.loads

    async def run() -> str:
        out: list[str] = []
        pending = b""
        async with client.stream("POST", url, json=body, headers={"x-api-key": "bench"}) as resp:
            resp.raise_for_status()
            async for chunk in resp.aiter_bytes():
                pending = _floor_lines(pending, chunk, loads, take, out)
        return "".join(out)

    return run


# -- elelem ---------------------------------------------------------------------------


def _elelem_text(result: Any) -> str:
    text_block = importlib.import_module("elelem.vocabulary").TextBlock
    return "".join(b.text for b in result.blocks if isinstance(b, text_block))


def _elelem_setup(shape: str, base_url: str, client_name: str) -> tuple[Any, str]:
    """An elelem client whose provider for ``shape`` points at ``base_url``.

    Built-in providers are redirected the way a user would do it, through
    ``ELELEM_<PROVIDER>_BASE_URL`` in the client's environment; Chat
    Completions goes to an OpenAI-compatible endpoint added to the catalog.
    """
    elelem_mod = _need("elelem")
    cls = getattr(elelem_mod, client_name, None)
    if cls is None:
        raise NotAvailable(f"elelem.{client_name} is not built yet")
    providers = _need("elelem.providers")
    errors = _need("elelem.errors")
    env = {"ANTHROPIC_API_KEY": "bench", "OPENAI_API_KEY": "bench", "GEMINI_API_KEY": "bench"}
    catalog = providers.load_catalog(None, env)
    if shape == "openai_chat":
        catalog.add_compatible("bench-chat", base_url + "/v1", compatible="openai")
        provider = "bench-chat"
    else:
        provider = {"anthropic_messages": "anthropic", "openai_responses": "openai"}.get(
            shape, "google"
        )
        env[f"ELELEM_{provider.upper()}_BASE_URL"] = base_url + (
            "/v1" if shape == "openai_responses" else ""
        )
    try:
        providers.load_shape(catalog.get(provider).shape)
    except errors.UnsupportedError as exc:
        raise NotAvailable(str(exc)) from exc
    return cls(catalog=catalog, env=env), f"{provider}:{MODELS[shape]}"


def elelem(shape: str, base_url: str) -> Runner:
    """elelem's async ``Client.stream(...).final()`` through driver, parser and assembler."""
    client, model = _elelem_setup(shape, base_url, "Client")

    async def run() -> str:
        return _elelem_text(await client.stream(model, PROMPT).final())

    return run


def elelem_sync(shape: str, base_url: str) -> Runner:
    """elelem's blocking ``SyncClient.stream(...).final()``, read in the calling thread."""
    client, model = _elelem_setup(shape, base_url, "SyncClient")

    def run() -> str:
        return _elelem_text(client.stream(model, PROMPT).final())

    return run


# -- official SDKs ----------------------------------------------------------------------


def _anthropic_sdk(base_url: str) -> Any:
    anthropic = _need("anthropic")
    return anthropic.Anthropic(api_key="bench", base_url=base_url, max_retries=0)


def _openai_sdk(base_url: str) -> Any:
    openai = _need("openai")
    return openai.OpenAI(api_key="bench", base_url=base_url + "/v1", max_retries=0)


def _unsupported(client: str, shape: str) -> NotAvailable:
    return NotAvailable(f"{client} does not speak {shape}")


def sdk_raw(shape: str, base_url: str) -> Runner:
    """The provider's official SDK, iterating the raw typed events."""
    if shape == "anthropic_messages":
        ac = _anthropic_sdk(base_url)

        def anthropic_raw() -> str:
            out = []
            stream = ac.messages.create(
                model=MODELS[shape],
                max_tokens=64000,
                messages=[{"role": "user", "content": PROMPT}],
                stream=True,
            )
            for ev in stream:
                if ev.type == "content_block_delta":
                    out.append(ev.delta.text)
            return "".join(out)

        return anthropic_raw
    if shape == "openai_responses":
        oc = _openai_sdk(base_url)

        def responses_raw() -> str:
            out = []
            for ev in oc.responses.create(model=MODELS[shape], input=PROMPT, stream=True):
                if ev.type == "response.output_text.delta":
                    out.append(ev.delta)
            return "".join(out)

        return responses_raw
    if shape == "openai_chat":
        oc = _openai_sdk(base_url)

        def chat_raw() -> str:
            out = []
            stream = oc.chat.completions.create(
                model=MODELS[shape], messages=[{"role": "user", "content": PROMPT}], stream=True
            )
            for chunk in stream:
                for choice in chunk.choices:
                    if choice.delta.content:
                        out.append(choice.delta.content)
            return "".join(out)

        return chat_raw
    if shape == "gemini":
        genai = _need("google.genai")
        gc = genai.Client(api_key="bench", http_options=genai.types.HttpOptions(base_url=base_url))

        def gemini_raw() -> str:
            out = []
            for chunk in gc.models.generate_content_stream(model=MODELS[shape], contents=PROMPT):
                if chunk.text:
                    out.append(chunk.text)
            return "".join(out)

        return gemini_raw
    raise _unsupported("official SDK (anthropic/openai/google-genai)", shape)


def sdk_final(shape: str, base_url: str) -> Runner:
    """The provider's official SDK streaming helper, to its final message."""
    if shape == "anthropic_messages":
        ac = _anthropic_sdk(base_url)

        def anthropic_final() -> str:
            with ac.messages.stream(
                model=MODELS[shape],
                max_tokens=64000,
                messages=[{"role": "user", "content": PROMPT}],
            ) as stream:
                message = stream.get_final_message()
            return "".join(b.text for b in message.content if b.type == "text")

        return anthropic_final
    if shape == "openai_responses":
        oc = _openai_sdk(base_url)

        def responses_final() -> str:
            with oc.responses.stream(model=MODELS[shape], input=PROMPT) as stream:
                response = stream.get_final_response()
            return str(response.output_text)

        return responses_final
    if shape == "openai_chat":
        oc = _openai_sdk(base_url)

        def chat_final() -> str:
            with oc.chat.completions.stream(
                model=MODELS[shape], messages=[{"role": "user", "content": PROMPT}]
            ) as stream:
                completion = stream.get_final_completion()
            return str(completion.choices[0].message.content)

        return chat_final
    raise _unsupported("official SDK (anthropic/openai)", shape)


# -- pydantic-ai ----------------------------------------------------------------------------


def _pydantic_model(shape: str, base_url: str) -> Any:
    if shape == "anthropic_messages":
        models = _need("pydantic_ai.models.anthropic")
        providers = _need("pydantic_ai.providers.anthropic")
        provider = providers.AnthropicProvider(api_key="bench", base_url=base_url)
        return models.AnthropicModel(MODELS[shape], provider=provider)
    if shape in ("openai_responses", "openai_chat"):
        models = _need("pydantic_ai.models.openai")
        providers = _need("pydantic_ai.providers.openai")
        provider = providers.OpenAIProvider(api_key="bench", base_url=base_url + "/v1")
        cls = models.OpenAIResponsesModel if shape == "openai_responses" else models.OpenAIChatModel
        return cls(MODELS[shape], provider=provider)
    if shape == "gemini":
        models = _need("pydantic_ai.models.google")
        providers = _need("pydantic_ai.providers.google")
        provider = providers.GoogleProvider(api_key="bench", base_url=base_url)
        return models.GoogleModel(MODELS[shape], provider=provider)
    raise _unsupported("pydantic-ai", shape)


def pydantic_ai_model(shape: str, base_url: str) -> Runner:
    """pydantic-ai's model-level stream, every event iterated, then the response."""
    model = _pydantic_model(shape, base_url)
    messages_mod = _need("pydantic_ai.messages")
    models_mod = _need("pydantic_ai.models")
    messages = [messages_mod.ModelRequest(parts=[messages_mod.UserPromptPart(PROMPT)])]
    text_part = messages_mod.TextPart

    async def run() -> str:
        params = models_mod.ModelRequestParameters()
        async with model.request_stream(messages, None, params) as stream:
            async for _event in stream:
                pass
        response = stream.get()
        return "".join(p.content for p in response.parts if isinstance(p, text_part))

    return run


def pydantic_ai_agent(shape: str, base_url: str) -> Runner:
    """pydantic-ai's ``Agent.run_stream`` to its final output."""
    agent_cls = _need("pydantic_ai").Agent
    agent = agent_cls(_pydantic_model(shape, base_url))

    async def run() -> str:
        async with agent.run_stream(PROMPT) as result:
            output = await result.get_output()
        return str(output)

    return run


# -- LiteLLM -----------------------------------------------------------------------------


def litellm(shape: str, base_url: str) -> Runner:
    """LiteLLM ``completion(stream=True)``, every chunk kept, then ``stream_chunk_builder``."""
    model = {
        "anthropic_messages": f"anthropic/{MODELS[shape]}",
        "openai_chat": f"openai/{MODELS[shape]}",
        "gemini": f"gemini/{MODELS[shape]}",
    }.get(shape)
    if model is None:
        raise _unsupported("LiteLLM completion()", shape)
    # LiteLLM fetches a price list from the network at import unless told not to.
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    lm = _need("litellm")
    api_base = base_url + ("/v1" if shape == "openai_chat" else "")
    messages = [{"role": "user", "content": PROMPT}]

    def run() -> str:
        chunks = list(
            lm.completion(
                model=model, messages=messages, stream=True, api_base=api_base, api_key="bench"
            )
        )
        response = lm.stream_chunk_builder(chunks, messages=messages)
        return str(response.choices[0].message.content)

    return run


ALL_SHAPES = frozenset(API_PATHS)
ANTHROPIC = frozenset({"anthropic_messages"})
OPENAI = frozenset({"openai_responses", "openai_chat"})
GEMINI = frozenset({"gemini"})


@dataclass(frozen=True)
class ClientSpec:
    """A measured client: its factory, the shapes it speaks, and the process
    group (``family``) that shares one child process in quick mode."""

    name: str
    prepare: Callable[[str, str], Runner]
    family: str
    shapes: frozenset[str] = ALL_SHAPES
    slow: bool = False  # measured over fewer runs in the full benchmark


CLIENTS: dict[str, ClientSpec] = {
    spec.name: spec
    for spec in (
        ClientSpec("floor", floor, "floor"),
        ClientSpec("floor_async", floor_async, "floor"),
        ClientSpec("elelem", elelem, "elelem"),
        ClientSpec("elelem_sync", elelem_sync, "elelem"),
        ClientSpec("anthropic_sdk_raw", sdk_raw, "anthropic_sdk", ANTHROPIC),
        ClientSpec("anthropic_sdk_final", sdk_final, "anthropic_sdk", ANTHROPIC),
        ClientSpec("openai_sdk_raw", sdk_raw, "openai_sdk", OPENAI),
        ClientSpec("openai_sdk_final", sdk_final, "openai_sdk", OPENAI),
        ClientSpec("google_genai_sdk_raw", sdk_raw, "google_genai_sdk", GEMINI),
        ClientSpec("pydantic_ai_model", pydantic_ai_model, "pydantic_ai", slow=True),
        ClientSpec("pydantic_ai_agent", pydantic_ai_agent, "pydantic_ai", slow=True),
        ClientSpec("litellm", litellm, "litellm", ANTHROPIC | {"openai_chat", "gemini"}, slow=True),
    )
}


def call(runner: Runner, loop: asyncio.AbstractEventLoop) -> str:
    """Run one prepared request to completion on ``loop`` if it is a coroutine function."""
    result = runner()
    if asyncio.iscoroutine(result):
        return str(loop.run_until_complete(result))
    return str(result)
