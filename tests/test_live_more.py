"""More of live sessions over the loopback servers (tests/live_servers.py):
a tool call mid-speech and a server-VAD interruption, Entra ID and Vertex AI
credentials on the handshake, max_steps, tools and approvals (functions, a
real MCP server), the viewer (in Chromium too), and a long session."""

from __future__ import annotations

import pytest

pytest.importorskip("websockets")
pytest.importorskip("openai")
pytest.importorskip("google.genai")

import elelem
from elelem import SyncClient
from elelem.conversation import Conversation, SQLiteStore
from elelem.conversation.events import MessageBody, ResponseRecord
from elelem.errors import TransportError
from elelem.shapes.live_items import wav_pcm
from elelem.stream import Finish
from elelem.turns.live_session import live_sync
from elelem.wire.live import AudioOut
from live_servers import (
    ScriptedServer,
    b64,
    gemini_client_message,
    kind_of_gemini,
    kind_of_openai,
    openai_client_event,
    pcm,
)
from test_live import (
    CHUNK,
    OPENAI_RATE,
    _kinds,
    _openai_server,
    _usage,
    get_weather,
)


def test_stored_session_in_the_viewer(tmp_path) -> None:
    """The viewer shows the session's transcript and notes, and its audio as
    a player of the stored bytes (allowed by the page's policy)."""
    import base64
    import re
    import urllib.request

    from elelem.testing.asgi import ASGIServer
    from elelem.web.app import create_app

    store = SQLiteStore(tmp_path / "log.db")
    conv = Conversation.create(store)
    _interrupted_session(conv)
    token = "live-token-0123456789abcdef0123"
    with ASGIServer(create_app(store, token=token)) as served:
        response = urllib.request.urlopen(f"{served.url}/c/{conv.id}?token={token}")
        page = response.read().decode()
        policy = response.headers["content-security-policy"]
        response.close()
    assert "media-src data:" in policy
    players = re.findall(
        r'<audio controls preload="none" src="data:audio/wav;base64,([^"]+)">', page
    )
    assert len(players) == 2  # the question and the answer
    samples, rate, _ = wav_pcm(base64.b64decode(players[1]))
    assert (samples, rate) == (CHUNK * 3, OPENAI_RATE)
    assert "session: interrupted at 300 ms, heard &quot;It is sunny &quot;" in page
    assert "sk-live-test" not in page


def _interrupted_session(conv: Conversation) -> None:
    """test_live's OpenAI session: a question, a tool call, an answer cut at 300 ms."""
    with _openai_server() as server:
        env = {"OPENAI_API_KEY": "sk-live-test", "OPENAI_BASE_URL": server.base_url + "/v1"}
        heard = 0
        with live_sync(SyncClient(env=env), "openai:gpt-realtime", conversation=conv,
                       tools=[get_weather]) as session:  # fmt: skip
            session.send_audio(pcm(200, OPENAI_RATE))
            for output in session:
                heard += isinstance(output, AudioOut)
                if heard == 5 and isinstance(output, AudioOut):
                    session.interrupt(audio_end_ms=300)


@pytest.mark.slow
def test_the_viewer_plays_the_session_in_chromium(tmp_path) -> None:
    """The page's players load their audio in a real browser under the page's
    policy: the question's 200 ms, and the answer for the 300 ms heard."""
    from web_helpers import chromium_paths

    chromium_paths()  # skips where Debian's chromium is absent (.ci/run installs it)
    store = SQLiteStore(tmp_path / "log.db")
    conv = Conversation.create(store)
    _interrupted_session(conv)
    _plays_in_chromium(store, conv.id, "live-token-0123456789abcdef0123")


def _plays_in_chromium(store: SQLiteStore, conversation: str, token: str) -> None:
    from elelem.testing.asgi import ASGIServer
    from elelem.web.app import create_app
    from web_helpers import chromium

    with ASGIServer(create_app(store, token=token)) as served, chromium() as browser:
        browser.get(f"{served.url}/c/{conversation}?token={token}")
        durations = browser.execute_async_script(
            """
            const done = arguments[arguments.length - 1];
            const players = [...document.querySelectorAll("audio")];
            Promise.all(players.map(p => new Promise(ok => {
                p.addEventListener("loadedmetadata", () => ok(p.duration), {once: true});
                p.addEventListener("error", () => ok(-1), {once: true});
                p.load();
            }))).then(done);
            """
        )
        violations = [
            e["message"] for e in browser.get_log("browser") if "Content Security" in e["message"]
        ]
    assert [round(d, 3) for d in durations] == [0.2, 0.3]
    assert violations == []


def _say(rid: str, item: str, words: list[str], first: int = 0) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for n, word in enumerate(words, first):
        base = {"response_id": rid, "item_id": item, "output_index": 0, "content_index": 0}
        out.append({"type": "response.output_audio.delta", "event_id": f"a{n}", **base,
                    "delta": b64(CHUNK)})  # fmt: skip
        out.append({"type": "response.output_audio_transcript.delta", "event_id": f"t{n}",
                    **base, "delta": word})  # fmt: skip
    return out


def test_tool_call_mid_speech_vad_interruption_and_an_error(tmp_path) -> None:
    """The model speaks, calls a tool in the same response, answers, and the
    user starts speaking 300 ms into the answer: server VAD's speech_started
    makes the session cancel and truncate at what it received; an error event
    echoing the key is a redacted note and the session goes on."""
    first = [
        {"type": "input_audio_buffer.committed", "event_id": "e1", "item_id": "item_u",
         "previous_item_id": None},
        {"type": "response.created", "event_id": "e2", "response": {"id": "r1"}},
        {"type": "response.output_item.added", "event_id": "e3", "response_id": "r1",
         "output_index": 0, "item": {"id": "item_a", "type": "message", "role": "assistant"}},
        *_say("r1", "item_a", ["Let me ", "check. "]),
        {"type": "response.output_item.added", "event_id": "e4", "response_id": "r1",
         "output_index": 1, "item": {"id": "item_fc", "type": "function_call",
                                     "call_id": "call_9", "name": "get_weather"}},
        {"type": "response.function_call_arguments.done", "event_id": "e5", "response_id": "r1",
         "item_id": "item_fc", "output_index": 1, "call_id": "call_9", "name": "get_weather",
         "arguments": '{"city": "Rome"}'},
        {"type": "error", "event_id": "e6",
         "error": {"type": "invalid_request_error", "code": "unknown_parameter",
                   "message": "Unknown parameter for key sk-live-test", "param": None,
                   "event_id": None}},
        {"type": "response.done", "event_id": "e7",
         "response": {"id": "r1", "status": "completed", "usage": _usage(100, 40, 10)}},
    ]  # fmt: skip
    second = [
        {"type": "response.created", "event_id": "e8", "response": {"id": "r2"}},
        *_say("r2", "item_b", ["Sunny ", "in ", "Rome."], 10),
        {"type": "input_audio_buffer.speech_started", "event_id": "e9", "audio_start_ms": 900,
         "item_id": "item_u2"},
    ]  # fmt: skip
    end = [
        {"type": "conversation.item.truncated", "event_id": "e10", "item_id": "item_b",
         "content_index": 0, "audio_end_ms": 300},
        {"type": "response.done", "event_id": "e11",
         "response": {"id": "r2", "status": "cancelled",
                      "status_details": {"type": "cancelled", "reason": "turn_detected"},
                      "usage": _usage(100, 30, 5)}},
    ]  # fmt: skip
    script = [
        ("send", [{"type": "session.created", "event_id": "e0", "session": {"id": "s2"}}]),
        ("expect", "session.update"),
        ("expect", "input_audio_buffer.append"),
        ("send", first),
        ("expect", "conversation.item.create"),
        ("expect", "response.create"),
        ("send", second),
        ("expect", "response.cancel"),
        ("expect", "conversation.item.truncate"),
        ("send", end),
        ("close", 1000),
    ]
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    with ScriptedServer([script], openai_client_event, kind_of_openai) as server:
        env = {"OPENAI_API_KEY": "sk-live-test", "OPENAI_BASE_URL": server.base_url + "/v1"}
        with live_sync(SyncClient(env=env), "openai:gpt-realtime", conversation=conv,
                       tools=[get_weather]) as session:  # fmt: skip
            session.send_audio(pcm(100, OPENAI_RATE))
            list(session)
        truncate = server.received[-1]
        assert (truncate["item_id"], truncate["audio_end_ms"]) == ("item_b", 300)
    assert _kinds(conv) == [
        "session:opened", "turn-start", "user:AudioBlock", "session:error",
        "assistant:AudioBlock", "assistant:ToolCallBlock", "response", "user:ToolResultBlock",
        "session:interrupted", "assistant:AudioBlock", "response", "session:closed",
    ]  # fmt: skip
    events = conv.events
    assert "sk-live-test" not in events[3].body.detail["message"]
    assert events[4].body.content[0].transcript == "Let me check. "
    assert events[7].body.content[0].content == "sunny in Rome"
    assert events[9].body.content[0].transcript == "Sunny in Rome."
    assert events[9].body.content[0].duration == 0.3
    assert (events[10].body.finish, events[10].body.finish_raw) == (
        "interrupted", "cancelled:turn_detected",
    )  # fmt: skip


def test_azure_entra_token_on_the_handshake(tmp_path) -> None:
    from datetime import timedelta

    from cloud_helpers import Clock, FakeAzureCredential

    token = "eyJ0eXAi.entra-live-token.0123456789"
    credential = FakeAzureCredential([token], lambda n: Clock().now + timedelta(hours=1))
    script = [
        ("send", [{"type": "session.created", "event_id": "e0", "session": {"id": "s"}}]),
        ("expect", "session.update"),
        ("close", 1011),
    ]
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    with ScriptedServer([script], openai_client_event, kind_of_openai) as server:
        env = {"AZURE_OPENAI_ENDPOINT": server.base_url, "ELELEM_CONFIG": str(tmp_path / "no")}
        client = SyncClient(env=env, credentials={"azure": credential})
        session = live_sync(client, "azure:realtime-prod", conversation=conv)
        with pytest.raises(TransportError, match="closed 1011"), session:
            list(session)
        headers = server.headers[0]
    assert headers["authorization"] == f"Bearer {token}" and "api-key" not in headers
    assert token not in repr([e.body for e in conv.events])


def test_max_steps_bounds_the_tool_steps_of_a_turn(tmp_path) -> None:
    calls = [{"toolCall": {"functionCalls": [{"id": f"fc{n}", "name": "get_weather",
                                              "args": {"city": "Oslo"}}]}} for n in (1, 2)]  # fmt: skip
    script = [
        ("expect", "setup"),
        ("send", [{"setupComplete": {}}]),
        ("expect", "clientContent"),
        ("send", [calls[0]]),
        ("expect", "toolResponse"),
        ("send", [calls[1]]),
        ("expect", "toolResponse"),
        ("send", [{"serverContent": {"modelTurn": {"parts": [{"text": "Done."}]}}},
                  {"serverContent": {"turnComplete": True}}]),
        ("close", 1000),
    ]  # fmt: skip
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    server = ScriptedServer([script], gemini_client_message, kind_of_gemini, binary=True)
    with server:
        env = {"GEMINI_API_KEY": "g-key-1", "GOOGLE_GEMINI_BASE_URL": server.base_url}
        with live_sync(SyncClient(env=env), "google:gemini-live-2.5-flash", conversation=conv,
                       tools=[get_weather], output="text", max_steps=1) as session:  # fmt: skip
            session.send_text("Weather twice?")
            list(session)
        answers = [m["toolResponse"]["functionResponses"][0] for m in server.received
                   if "toolResponse" in m]  # fmt: skip
    assert answers == [
        {"id": "fc1", "name": "get_weather", "response": {"output": "sunny in Oslo"}},
        {"id": "fc2", "name": "get_weather",
         "response": {"error": "not run: this turn already ran max_steps (1) tool steps"}},
    ]  # fmt: skip
    assert conv.turn == 1 and conv.text.endswith("Done.")


def _long_script(turns: int, pieces: int) -> list[tuple[str, object]]:
    script: list[tuple[str, object]] = [
        ("send", [{"type": "session.created", "event_id": "e0", "session": {"id": "long"}}]),
        ("expect", "session.update"),
    ]
    for t in range(turns):
        rid, item, user = f"r{t}", f"item_a{t}", f"item_u{t}"
        words = [f"w{t}.{n} " for n in range(pieces)]
        script += [
            ("expect", "input_audio_buffer.append"),
            ("send", [
                {"type": "input_audio_buffer.committed", "event_id": "c", "item_id": user,
                 "previous_item_id": None},
                {"type": "conversation.item.input_audio_transcription.completed", "event_id": "t",
                 "item_id": user, "content_index": 0, "transcript": f"question {t}",
                 "usage": {"type": "duration", "seconds": 0.1}},
                {"type": "response.created", "event_id": "r", "response": {"id": rid}},
                *_say(rid, item, words),
            ]),
        ]  # fmt: skip
        done = {"type": "response.done", "event_id": "d",
                "response": {"id": rid, "status": "completed", "usage": _usage(10, 20, 5)}}  # fmt: skip
        if t % 3 == 2:  # every third answer is cut 200 ms in
            script += [
                ("expect", "response.cancel"),
                ("expect", "conversation.item.truncate"),
                ("send", [
                    {"type": "conversation.item.truncated", "event_id": "x", "item_id": item,
                     "content_index": 0, "audio_end_ms": 200},
                    {**done, "response": {**done["response"], "status": "cancelled"}},
                ]),
            ]  # fmt: skip
        else:
            script.append(("send", [done]))
    return [*script, ("close", 1000)]


@pytest.mark.parametrize(
    ("turns", "pieces"), [(3, 5), pytest.param(60, 200, marks=pytest.mark.slow)]
)
def test_a_long_session(tmp_path, turns: int, pieces: int) -> None:
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    with ScriptedServer(
        [_long_script(turns, pieces)], openai_client_event, kind_of_openai
    ) as server:
        env = {"OPENAI_API_KEY": "sk-long", "OPENAI_BASE_URL": server.base_url + "/v1"}
        with live_sync(SyncClient(env=env), "openai:gpt-realtime", conversation=conv) as session:
            session.send_audio(pcm(100, OPENAI_RATE))
            turn, heard = 0, 0
            for output in session:
                if isinstance(output, AudioOut):
                    heard += 100
                    if turn % 3 == 2 and heard == 300:
                        session.interrupt(audio_end_ms=200)
                elif isinstance(output, Finish):
                    turn, heard = turn + 1, 0
                    if turn < turns:
                        session.send_audio(pcm(100, OPENAI_RATE))
    assert conv.turn == turns
    said = [b for e in conv.events if isinstance(e.body, MessageBody) and e.body.role == "assistant"
            for b in e.body.content]  # fmt: skip
    assert len(said) == turns
    for t, block in enumerate(said):
        whole = "".join(f"w{t}.{n} " for n in range(pieces))
        if t % 3 == 2:
            assert (block.duration, block.transcript) == (0.2, f"w{t}.0 w{t}.1 ")
        else:
            assert (block.duration, block.transcript) == (pieces / 10, whole)
    records = [e.body for e in conv.events if isinstance(e.body, ResponseRecord)]
    assert [r.finish for r in records] == [
        "interrupted" if t % 3 == 2 else "stop" for t in range(turns)
    ]


def test_vertex_gemini_live_with_google_credentials(tmp_path) -> None:
    class Credentials:  # what google.auth credentials give: a token, refreshed
        token: str | None = None
        expiry = None

        def refresh(self, request: object) -> None:
            self.token = "ya29.vertex-live-token-0123456789"

    script = [
        ("expect", "setup"),
        ("send", [{"setupComplete": {}}]),
        ("expect", "clientContent"),
        ("send", [{"serverContent": {"modelTurn": {"parts": [{"text": "Hi."}]}}},
                  {"serverContent": {"turnComplete": True}}]),
        ("close", 1000),
    ]  # fmt: skip
    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))
    server = ScriptedServer([script], gemini_client_message, kind_of_gemini, binary=True)
    with server:
        env = {"ELELEM_CONFIG": str(tmp_path / "no"), "ELELEM_VERTEX_BASE_URL": server.base_url,
               "GOOGLE_CLOUD_PROJECT": "proj-live"}  # fmt: skip
        client = SyncClient(env=env, credentials={"vertex": Credentials()})
        with live_sync(client, "vertex:gemini-live-2.5-flash", conversation=conv,
                       output="text") as session:  # fmt: skip
            session.send_text("Hello")
            list(session)
        assert server.paths == [
            "/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent"
        ]
        assert server.headers[0]["authorization"] == "Bearer ya29.vertex-live-token-0123456789"
        setup = server.received[0]["setup"]
        assert setup["model"] == (
            "projects/proj-live/locations/global/publishers/google/models/gemini-live-2.5-flash"
        )
    assert conv.text.endswith("Hi.")


@elelem.tool
def weather_in(city: str) -> str:
    """The weather in a city."""
    return {"Oslo": "4°C"}.get(city, "unknown city")


@elelem.tool
def radar(city: str) -> str:
    """A radar picture of a city."""
    return f"radar for {city}"


@pytest.mark.parametrize("where", ["functions", pytest.param("mcp", marks=pytest.mark.slow)])
def test_tools_and_approvals_in_a_session(tmp_path, where: str) -> None:
    """Python functions, or a real MCP server's tools, asked about by the
    approval callback: the allowed call runs, the refused one is answered as
    refused."""
    import asyncio
    import contextlib
    import sys
    from pathlib import Path

    from elelem.tools import MCPServer
    from elelem.turns.pending import REFUSED

    server_script = str(Path(__file__).parent / "mcp_weather_server.py")
    name = "get_weather" if where == "mcp" else "weather_in"
    calls = {"functionCalls": [{"id": "a", "name": name, "args": {"city": "Oslo"}},
                               {"id": "b", "name": "radar", "args": {"city": "Oslo"}}]}  # fmt: skip
    script = [
        ("expect", "setup"),
        ("send", [{"setupComplete": {}}]),
        ("expect", "clientContent"),
        ("send", [{"toolCall": calls}]),
        ("expect", "toolResponse"),
        ("send", [{"serverContent": {"modelTurn": {"parts": [{"text": "4°C."}]}}},
                  {"serverContent": {"turnComplete": True}}]),
        ("close", 1000),
    ]  # fmt: skip
    asked: list[str] = []

    def approve(request: object) -> bool:
        asked.append(request.name)  # type: ignore[attr-defined]
        return request.name == name  # type: ignore[attr-defined]

    conv = Conversation.create(SQLiteStore(tmp_path / "log.db"))

    async def main(server: ScriptedServer) -> None:
        env = {"GEMINI_API_KEY": "g-mcp", "GOOGLE_GEMINI_BASE_URL": server.base_url}
        async with contextlib.AsyncExitStack() as stack:
            tools: list[object] = [weather_in, radar]
            if where == "mcp":
                mcp = MCPServer.stdio(sys.executable, [server_script], name="weather")
                tools = [await stack.enter_async_context(mcp)]
            client = await stack.enter_async_context(elelem.Client(env=env))
            session = elelem.live(client, "google:gemini-live-2.5-flash", conversation=conv,
                                  tools=tools, approve=approve, output="text")  # fmt: skip
            async with session:
                await session.send_text("Weather in Oslo, and the radar?")
                async for _ in session:
                    pass

    server = ScriptedServer([script], gemini_client_message, kind_of_gemini, binary=True)
    with server:
        asyncio.run(main(server))
        declared = server.received[0]["setup"]["tools"][0]["functionDeclarations"]
        answers = next(m for m in server.received if "toolResponse" in m)
    # The weather server's tools, and the read_resource tool elelem offers for
    # a server with resources.
    mcp_names = ["get_weather", "radar", "snapshot", "die", "read_resource"]
    names = mcp_names if where == "mcp" else ["weather_in", "radar"]
    assert [d["name"] for d in declared] == names
    assert asked == [name, "radar"]
    assert answers["toolResponse"]["functionResponses"] == [
        {"id": "a", "name": name, "response": {"output": "4°C"}},
        {"id": "b", "name": "radar", "response": {"error": REFUSED}},
    ]
    assert conv.text.endswith("4°C.")


def test_a_refused_upgrade_and_a_frame_over_the_limit_are_typed(tmp_path) -> None:
    """A 401 on the handshake is an AuthenticationError whose echoed key is
    redacted; a frame past Limits.frame a LimitExceededError."""
    import threading

    from websockets.datastructures import Headers
    from websockets.http11 import Response
    from websockets.sync.server import serve

    from elelem.errors import AuthenticationError, LimitExceededError
    from elelem.shapes.openai_responses.live import RealtimeProtocol
    from elelem.transport import Endpoint, Limits
    from elelem.transport.faces import blocking
    from elelem.transport.live import LiveConnection
    from elelem.vocabulary import ProviderId
    from elelem.wire.live import LiveSettings

    key = "sk-refused-0123456789abcdef"

    def refuse(connection: object, request: object) -> Response | None:
        if request.path.startswith("/refuse"):  # type: ignore[attr-defined]
            body = f'{{"error": {{"message": "Incorrect API key provided: {key}"}}}}'.encode()
            return Response(401, "Unauthorized", Headers({"content-type": "application/json"}),
                            body)  # fmt: skip
        return None

    def big(socket: object) -> None:
        socket.recv(5)  # type: ignore[attr-defined]  # the session.update
        socket.send('{"type": "x", "pad": "' + "a" * 5000 + '"}')  # type: ignore[attr-defined]
        socket.recv(5)  # type: ignore[attr-defined]

    with serve(big, "127.0.0.1", 0, process_request=refuse) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.socket.getsockname()[1]
        provider = ProviderId("openai")
        refused = Endpoint(provider, f"http://127.0.0.1:{port}/refuse", key)
        connection = LiveConnection(
            RealtimeProtocol(provider), refused, "gpt-realtime", blocking=True
        )
        with pytest.raises(AuthenticationError) as caught:
            blocking(connection.connecting(LiveSettings("gpt-realtime")))
        assert caught.value.status == 401 and key not in str(caught.value)
        assert "Incorrect API key provided" in str(caught.value)
        endpoint = Endpoint(provider, f"http://127.0.0.1:{port}", key)
        connection = LiveConnection(
            RealtimeProtocol(provider),
            endpoint,
            "gpt-realtime",
            blocking=True,
            limits=Limits(frame=1000),
        )
        blocking(connection.connecting(LiveSettings("gpt-realtime")))
        with pytest.raises(LimitExceededError, match=r"Limits\.frame = 1000\)"):
            blocking(connection.receiving())
        blocking(connection.closing())
        server.shutdown()
