"""A real MCP server for the tests that asks its client's user for input
(``elicitation/create`` carried, as the 2026-07-28 revision does, in the
``input_requests`` of an ``InputRequiredResult``; the client retries the
call with its ``input_responses``): ``book_table`` asks for a form of each
field type the spec allows (string, number, integer, boolean, single-select
enum in both spellings, multi-select), and ``sign_in`` for a URL to open.
Each answers with the action and content it got back, as JSON, so a test
can compare exact values."""

from __future__ import annotations

import json

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
)

server = MCPServer("booker")

FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "description": "As on the booking"},
        "guests": {"type": "integer", "minimum": 1, "maximum": 12, "default": 2},
        "budget": {"type": "number", "description": "Per person, EUR"},
        "terrace": {"type": "boolean", "default": False},
        "time": {"type": "string", "enum": ["19:00", "20:30"], "default": "19:00"},
        "menu": {
            "type": "string",
            "oneOf": [{"const": "veg", "title": "Vegetarian"}, {"const": "fish", "title": "Fish"}],
        },
        "extras": {
            "type": "array",
            "items": {"type": "string", "enum": ["cake", "wine", "\x1b[31mflowers"]},
        },
    },
    "required": ["name", "guests"],
}


def _answer(ctx: Context, key: str) -> ElicitResult | None:
    got = (ctx.input_responses or {}).get(key)
    return got if isinstance(got, ElicitResult) else None


@server.tool()
async def book_table(ctx: Context) -> InputRequiredResult | str:
    """Book a table (asks the user for the details)."""
    got = _answer(ctx, "details")
    if got is None:
        message = "Booking at \x1b[1mChez Nous\x1b[0m: details?"
        ask = ElicitRequestFormParams(message=message, requested_schema=FORM)
        return InputRequiredResult(input_requests={"details": ElicitRequest(params=ask)})
    return json.dumps({"action": got.action, "content": got.content}, sort_keys=True)


@server.tool()
async def sign_in(ctx: Context) -> InputRequiredResult | str:
    """Sign in at the booking site (asks the user to open a URL)."""
    got = _answer(ctx, "pay")
    if got is None:
        ask = ElicitRequestURLParams(
            message="Sign in to pay the deposit",
            url="https://booking.example/pay?session=1",
            elicitation_id="pay-1",
        )
        return InputRequiredResult(input_requests={"pay": ElicitRequest(params=ask)})
    return json.dumps({"action": got.action}, sort_keys=True)


if __name__ == "__main__":
    server.run()
