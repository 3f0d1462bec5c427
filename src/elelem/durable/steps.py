"""The durable steps, as a worker runs them: the I/O of the turn engine's actions.

Each is a plain function of its input (the structs of
:mod:`elelem.durable.wire`) and the worker's own store and client, so every
workflow engine wraps the same four: :meth:`Steps.open`,
:meth:`Steps.append`, :meth:`Steps.request` and :meth:`Steps.call`.

Each may run more than once (a worker dies and the engine runs the step
again elsewhere), so each is safe to repeat:

- an append carries event ids the workflow drew; a repeat finds them
  stored and returns them rather than committing twice;
- a request writes nothing: the stream is read to its end and returned, and
  the workflow commits what it flushed; a repeat sends the request again;
- a call is checked against the call ledger, a table in the log's own
  database keyed by conversation and call (the id of the log event holding
  the call, and the call's id): a call that finished returns
  its stored result; a call a dead worker had started and not finished runs
  again, as the same call, when its tool is marked ``idempotent`` (the
  engine retried the step: the log shows no interruption, the result is the
  tool's own), and is answered as interrupted otherwise (the in-process tool
  loop's rule for a killed run's calls: see :mod:`elelem.turns.toolloop`).
  Every attempt of one call runs under the same idempotency key
  (:func:`elelem.tools.call_key`: the conversation, the log event holding
  the call and the call's id), so a tool with an effect outside the log keeps
  it once by recording the key with the effect and is then idempotent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from elelem import codec
from elelem.conversation.blobs import resolve_messages
from elelem.conversation.errors import ConversationNotFound, StoreError
from elelem.conversation.events import Draft, Event
from elelem.conversation.sqlbase import SQLStore
from elelem.conversation.store import Store
from elelem.durable.wire import (
    IMPORT_PREFIX,
    CallInput,
    DurableError,
    Flushed,
    Opened,
    RequestInput,
    Streamed,
    ToolMeta,
    dump_events,
    failure_of,
    import_object,
)
from elelem.providers import Target
from elelem.providers.protocol import Model, resolved_address
from elelem.stream import ResponseStart
from elelem.turns.toolloop import ToolLoop, _Work
from elelem.vocabulary import Blob, ConversationId, ToolResultBlock

if TYPE_CHECKING:
    from elelem.client import Client

LEDGER = "elelem_durable_call_ledger"
"""The call ledger's table, beside the log's tables."""


class CallLedger:
    """Which tool calls of durable runs started and which finished, in the
    log's own database (SQLite or PostgreSQL): ``started`` is committed
    before a call runs, its result after."""

    def __init__(self, store: Store) -> None:
        if not isinstance(store, SQLStore):
            raise DurableError(
                f"a durable run's log must be a SQLite or PostgreSQL store, not {type(store).__name__}"
            )
        self.store = store
        self._ready = False
        self._lock = threading.Lock()

    def _table(self) -> None:
        with self._lock:
            if self._ready:
                return
            self.store._write(
                lambda: self.store._exec(
                    f"CREATE TABLE IF NOT EXISTS {LEDGER} ("
                    "conv TEXT NOT NULL, call_key TEXT NOT NULL, result TEXT, "
                    "PRIMARY KEY (conv, call_key))"
                ),
                "create the call ledger in",
            )
            self._ready = True

    def claim(self, conversation: str, key: str) -> tuple[bool, str | None]:
        """Claim a call: ``(False, None)`` when it never started (now it has),
        ``(True, None)`` when an earlier attempt started it and did not
        finish, ``(True, result)`` when it finished."""
        self._table()
        store = self.store
        select = store._sql(f"SELECT result FROM {LEDGER} WHERE conv = ? AND call_key = ?")
        insert = store._sql(f"INSERT INTO {LEDGER} (conv, call_key, result) VALUES (?, ?, NULL)")

        def work() -> tuple[bool, str | None]:
            row = store._exec(select, (conversation, key)).fetchone()
            if row is not None:
                return True, row[0]
            store._exec(insert, (conversation, key))
            return False, None

        claimed: tuple[bool, str | None] = store._write(work, "claim a tool call in")
        return claimed

    def finish(self, conversation: str, key: str, result: str) -> None:
        """Record a call's result."""
        store = self.store
        update = store._sql(f"UPDATE {LEDGER} SET result = ? WHERE conv = ? AND call_key = ?")
        store._write(
            lambda: store._exec(update, (result, conversation, key)),
            "record a tool call's result in",
        )


class Steps:
    """The durable steps of one worker: its store (the log) and its client
    (providers, keys and retry policy, all the worker's own)."""

    def __init__(self, store: Store, client: Client) -> None:
        self.store = store
        self.client = client
        self.ledger = CallLedger(store)
        self._tools: dict[tuple[str, ...], ToolLoop] = {}
        self._blobs: dict[str, Blob] = {}

    # -- resolving names ------------------------------------------------------------

    def model(self, reference: str) -> Target | Model:
        """The model a reference names: an import path, else an address."""
        if reference.startswith(IMPORT_PREFIX):
            found = import_object(reference.removeprefix(IMPORT_PREFIX))
            if not isinstance(found, Model):
                raise DurableError(f"{reference!r} is a {type(found).__name__}, not a model")
            return found
        return self.client.target(reference)

    def tools(self, paths: Sequence[str], timeout: float | None = None) -> ToolLoop:
        """The tool loop of a run's tools, imported once per worker."""
        key = (*paths, repr(timeout))
        loop = self._tools.get(key)
        if loop is None:
            loop = ToolLoop([import_object(p) for p in paths], timeout=timeout)
            self._tools[key] = loop
        return loop

    # -- the steps --------------------------------------------------------------------

    def open(self, conversation: str, model: str, tools: Sequence[str]) -> Opened:
        """The conversation as it is (created, empty, when it does not exist
        yet), and what the run's model and tools are."""
        cid = ConversationId(conversation)
        try:
            events = self.store.load(cid)
        except ConversationNotFound:
            self.store.create(id=cid)
            events = ()
        target = self.model(model)
        metas = tuple(
            ToolMeta(
                t.name,
                t.spec,
                bool(getattr(t, "external", False)),
                bool(t.idempotent),
                t.timeout,
            )
            for t in self.tools(tools).tools.values()
        )
        return Opened(
            dump_events(events),
            resolved_address(target),
            str(target.provider),
            target.model,
            target.provider if isinstance(target, Target) else None,
            metas,
        )

    def append(self, conversation: str, drafts: Sequence[Draft], known: int) -> bytes:
        """Commit ``drafts`` after event ``known``, or return them as an
        earlier attempt committed them (found by their ids)."""
        cid = ConversationId(conversation)
        ids = {d.id for d in drafts}
        if None in ids:
            raise DurableError("a durable append needs an id on every draft")
        earlier = [e for e in self.store.load(cid, after=known) if e.id in ids]
        if earlier:
            if len(earlier) != len(drafts):
                raise StoreError(
                    f"{len(earlier)} of {len(drafts)} events of one commit are in {conversation!r}"
                )
            return dump_events(earlier)
        stored: tuple[Event, ...] = self.store.append(cid, drafts)
        return dump_events(stored)

    async def request(self, request: RequestInput, beat: Callable[[], None]) -> Streamed:
        """Stream one request to its end (``beat`` after each chunk); what
        the engine acts on, and the error that ended it, if one did."""
        arguments = request.arguments
        messages = resolve_messages(arguments.messages, self.store.get_blob, self._blobs)
        stream: Any = self.client.stream(
            self.model(request.model),
            streamed=request.streamed,
            messages=messages,
            response_payloads=arguments.response_payloads,
            system=arguments.system,
            tools=arguments.tools,
            hosted_tools=arguments.hosted_tools,
            options=arguments.options,
        )
        flushed: list[Flushed] = []
        try:
            while True:
                try:
                    pair = await stream.step()
                except Exception as exc:  # noqa: BLE001 - the engine decides, in the workflow
                    return Streamed(
                        tuple(flushed),
                        stream.partial(),
                        stream.request_id,
                        tuple(stream.dropped),
                        failure_of(exc),
                    )
                beat()
                if pair is None:
                    break
                chunk, committed = pair
                start = chunk if type(chunk) is ResponseStart else None
                if start is not None or committed:
                    flushed.append(Flushed(start, tuple(committed)))
            return Streamed(
                tuple(flushed), stream.result(), stream.request_id, tuple(stream.dropped)
            )
        finally:
            await stream.aclose()

    async def call(self, call: CallInput) -> ToolResultBlock:
        """Run one tool call at most once (see the module docs)."""
        key = call.key or call.call.id
        started, stored = self.ledger.claim(call.conversation, key)
        if stored is not None:
            result: ToolResultBlock = codec.loads(stored, ToolResultBlock)
            return result
        loop = self.tools(call.tools, call.tool_timeout)
        tool = loop.tools.get(call.call.name)
        # A started call of an idempotent tool is the engine's retry of this
        # step after a worker died: run it again as the same call, same key.
        unsafe = started and (tool is None or not tool.idempotent)
        work = _Work(
            (call.call,), settle=call.settle or unsafe, keys=(f"{call.conversation}/{key}",)
        )
        results, _ = await loop.step(work)
        self.ledger.finish(call.conversation, key, codec.dumps(results[0]).decode())
        return results[0]


__all__ = ["LEDGER", "CallLedger", "Steps"]
