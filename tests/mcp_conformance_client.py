"""The MCP conformance suite's client under test: elelem's own CLI.

The suite (npm ``@modelcontextprotocol/conformance``) starts a scenario's
server, runs this script with the server's URL as the last argument and the
scenario's name in ``MCP_CONFORMANCE_SCENARIO`` (its inputs, when it has
some, in ``MCP_CONFORMANCE_CONTEXT``).  The script only says which tools
each scenario expects a client to call, with which arguments, and runs
``elelem mcp tools`` with them: every bit of protocol is elelem's.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# The tools a scenario's server offers for a client to call, with arguments.
CALLS: dict[str, list[tuple[str, object]]] = {
    "tools_call": [("add_numbers", {"a": 5, "b": 3})],
    "sse-retry": [("test_reconnection", {})],
    "elicitation-sep1034-client-defaults": [("test_client_elicitation_defaults", {})],
    "sep-2322-client-request-state": [
        ("test_mrtr_echo_state", {}),
        ("test_mrtr_no_state", {}),
        ("test_mrtr_unrelated", {}),
        ("test_mrtr_no_result_type", {}),
    ],
    "http-standard-headers": [("test_headers", {}), ("my-hyphenated-tool", {})],
    "http-invalid-tool-headers": [
        ("valid_tool", {"region": "us-west1"}),
        ("invalid_empty_header", {"value": "x"}),
        ("invalid_object_header", {"data": {}}),
        ("invalid_array_header", {"items": []}),
    ],
}


def main() -> None:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    calls = CALLS.get(scenario, [])
    calls += [(c["name"], c["arguments"]) for c in context.get("toolCalls", [])]
    command = [str(Path(sys.executable).parent / "elelem"), "mcp", "tools", "--elicit", "defaults"]
    for name, arguments in calls:
        command += ["--call", name, json.dumps(arguments)]
    os.execv(command[0], [*command, url])


if __name__ == "__main__":
    main()
