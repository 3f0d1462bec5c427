"""What an MCP server asks of its client, answered for the caller: its
roots listed, its log lines kept as notes, its sampling requests served by
the caller's ``sample`` callback and its elicitations by ``elicit``; every
request reported to ``on_request`` (the conversation log's
``server-request`` events).  A base of :class:`~elelem.tools.mcp.MCPServer`,
which holds the connection and registers these as the SDK's callbacks.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from elelem.tools.mcp_asks import (
    Elicit,
    ServerAsked,
    elicitation_note,
    elicitation_of,
    sdk_answer,
)
from elelem.tools.mcp_notes import MCPNotes
from elelem.tools.mcp_sampling import Sample, SamplingRefused, sampling_of, sdk_refusal, sdk_sample
from elelem.vocabulary import JSONValue


class ServerRequests(MCPNotes):
    """The SDK's callbacks for what the server asks (a base of
    :class:`~elelem.tools.mcp.MCPServer`, holding no state of its own: the
    attributes below are the server's, set in its ``__init__``)."""

    roots: list[Path] | None
    sample: Sample | None
    elicit: Elicit | None
    on_request: Callable[[ServerAsked], None] | None

    async def _list_roots(self, context: Any) -> Any:
        from mcp.types import ListRootsResult, Root

        folders = self.roots if self.roots is not None else [Path.cwd()]
        roots = [Root(uri=f.resolve().as_uri(), name=f.resolve().name) for f in folders]  # type: ignore[arg-type]
        listed: list[JSONValue] = [str(r.uri) for r in roots]
        self._asked(ServerAsked(self.name, "roots/list", "listed", {"roots": listed}))
        return ListRootsResult(roots=roots)

    def _asked(self, note: ServerAsked) -> None:
        if self.on_request is not None:
            self.on_request(note)

    async def _logged(self, params: Any) -> None:
        data = params.data if isinstance(params.data, str) else msgspec.json.encode(params.data)
        text = data if isinstance(data, str) else data.decode()
        self.note(f"server {params.level}: {text}")

    async def _sampled(self, context: Any, params: Any) -> Any:
        assert self.sample is not None  # the capability is declared only with a callback
        method = "sampling/createMessage"
        try:
            request = sampling_of(self.name, params)
            answer = await self.sample(request)
        except SamplingRefused as exc:
            asked = {"max_tokens": params.max_tokens, "reason": str(exc)}
            spent = exc.answer  # asked, then withheld: what it used is still recorded
            if spent is None:
                self._asked(ServerAsked(self.name, method, "refused", asked))
            else:
                refused = ServerAsked(
                    self.name, method, "refused", asked, spent.provider, spent.model, spent.usage
                )
                self._asked(refused)
            return sdk_refusal(str(exc))
        detail: dict[str, JSONValue] = {
            "messages": [[role, text] for role, text in request.messages],
            "system": request.system,
            "max_tokens": request.max_tokens,
            "text": answer.text,
        }
        served = ServerAsked(
            self.name, method, "served", detail, answer.provider, answer.model, answer.usage
        )
        self._asked(served)
        return sdk_sample(answer)

    async def _elicited(self, context: Any, params: Any) -> Any:
        assert self.elicit is not None
        request = elicitation_of(self.name, params)
        answer = await self.elicit(request)
        self._asked(elicitation_note(request, answer))
        return sdk_answer(answer)


__all__ = ["ServerRequests"]
