"""A hostile MCP server for the tests, speaking raw JSON-RPC on stdio.

``python mcp_hostile_server.py MODE``:

``silent``      never answers ``initialize``;
``no-list``     answers ``initialize``, never ``tools/list``;
``long-line``   answers ``initialize`` with a 4 MiB line and no newline after it;
``noise``       writes 2,000 lines that are not JSON-RPC, then serves;
``big-result``  serves one tool ``dump`` whose result is 3,000,000 characters;
``many-tools``  lists tools 600 a page, with a next page always.
"""

from __future__ import annotations

import json
import sys
import time

MODE = sys.argv[1]


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request: dict[str, object]) -> None:
    method, ident = request.get("method"), request.get("id")
    if method == "initialize":
        if MODE == "silent":
            time.sleep(60)
        if MODE == "long-line":
            sys.stdout.write('{"jsonrpc":"2.0","id":0,"result":"' + "x" * (4 * 1024 * 1024))
            sys.stdout.flush()
            time.sleep(60)
        send(
            {
                "jsonrpc": "2.0",
                "id": ident,
                "result": {
                    "protocolVersion": request["params"]["protocolVersion"],  # type: ignore[index]
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "hostile", "version": "1"},
                },
            }
        )
    elif method == "tools/list":
        if MODE == "no-list":
            time.sleep(60)
        tool = {"name": "dump", "inputSchema": {"type": "object", "properties": {}}}
        if MODE == "many-tools":
            page = [dict(tool, name=f"t{ident}_{n}") for n in range(600)]
            send({"jsonrpc": "2.0", "id": ident, "result": {"tools": page, "nextCursor": "more"}})
            return
        send({"jsonrpc": "2.0", "id": ident, "result": {"tools": [tool]}})
    elif method == "tools/call":
        text = "y" * 3_000_000
        result = {"content": [{"type": "text", "text": text}], "isError": False}
        send({"jsonrpc": "2.0", "id": ident, "result": result})
    elif ident is not None:
        send({"jsonrpc": "2.0", "id": ident, "result": {}})


if MODE == "noise":
    for n in range(2000):
        sys.stdout.write(f"starting up, step {n}\n")
    sys.stdout.flush()
for line in sys.stdin:
    if line.strip():
        answer(json.loads(line))
