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
import subprocess
import sys
import tempfile
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
    "auth/scope-step-up": [("test-tool", {})],
    "http-standard-headers": [("test_headers", {}), ("my-hyphenated-tool", {})],
    "http-invalid-tool-headers": [
        ("valid_tool", {"region": "us-west1"}),
        ("invalid_empty_header", {"value": "x"}),
        ("invalid_object_header", {"data": {}}),
        ("invalid_array_header", {"items": []}),
    ],
}


CIMD = "https://conformance-test.local/client-metadata.json"
"""A client ID metadata document URL for the CIMD scenario (its server does not fetch it)."""


def main() -> None:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    calls = CALLS.get(scenario, [])
    calls += [(c["name"], c["arguments"]) for c in context.get("toolCalls", [])]
    command = [str(Path(sys.executable).parent / "elelem"), "mcp", "tools", "--elicit", "defaults"]
    if scenario.startswith("auth/") and os.environ.get("ELELEM_TEST_LOGIN_FIRST"):
        # `elelem mcp login URL` first (its home is the test's), then the
        # calls with the kept login, as a user would.
        os.environ["BROWSER"] = "curl -s -L -o /dev/null %s"
        subprocess.run([command[0], "mcp", "login", url], check=True)
    elif scenario.startswith("auth/"):
        # Sign in as a user would; the "browser" follows the authorization
        # server's redirect back to elelem's 127.0.0.1 callback. The login
        # is kept in a home of this run's own.
        command.append("--login")
        os.environ["BROWSER"] = "curl -s -L -o /dev/null %s"
        os.environ["ELELEM_HOME"] = tempfile.mkdtemp(prefix="elelem-conformance-")
        if scenario == "auth/basic-cimd":  # a client ID metadata document URL
            command += ["--client-metadata-url", CIMD]
        if "client_id" in context:  # a client registered beforehand
            command += ["--client-id", context["client_id"]]
            if context.get("client_secret"):
                os.environ["ELELEM_MCP_CLIENT_SECRET"] = context["client_secret"]
    for name, arguments in calls:
        command += ["--call", name, json.dumps(arguments)]
    os.execv(command[0], [*command, url])


if __name__ == "__main__":
    main()
