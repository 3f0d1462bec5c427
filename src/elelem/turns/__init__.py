"""Turns: what runs a conversation forward (docs/architecture.md §4), above the log and the client.

- :mod:`elelem.turns.engine` — the turn engine, written once: a generator of
  actions (send, read, append, call, wait) that does no I/O;
- :mod:`elelem.turns.drive` — its two thin drivers, :func:`~elelem.turns.drive.send`
  (async, over :class:`elelem.Client`) and :func:`~elelem.turns.drive.send_sync`
  (over :class:`elelem.SyncClient`), and :func:`~elelem.turns.drive.drive` /
  :func:`~elelem.turns.drive.drive_sync` for any flow of those actions;
- :mod:`elelem.turns.toolloop` — the tool loop on the same engine;
- :mod:`elelem.providers.costs` — what the responses of a log cost.

The log (:mod:`elelem.conversation`) knows no turn, no provider and no
client; this package imports it, the providers and the client.
"""
