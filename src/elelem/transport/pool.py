"""elelem's own connection pool under the async driver: O(1) per request.

httpcore2's ``AsyncConnectionPool`` re-plans the whole pool on every request
and on every response close (``_assign_requests_to_connections``): it walks
every connection and every queued request and probes the socket of each
idle connection.  A burst of N streams costs O(N²): measured at N = 1,000
concurrent streams through one client, that walk was 68% of the client's
CPU (benchmarks/README.md, "Gateway").

:class:`BoundedPool` keeps the same connections (httpcore2's own
``AsyncHTTPConnection``, made by the inherited ``create_connection``) in
structures that make each step O(1):

- idle connections per origin, taken most recently used first (the one
  least likely to have been dropped by the server), and one global order
  of idleness for keep-alive expiry and for lending an idle connection's
  slot to another origin;
- a count of open connections against ``max_connections``, and a FIFO of
  waiting requests that a released connection (or its slot) is handed to
  directly, in order, so a waiter is never overtaken;
- expiry amortised: only the connection being taken is probed (is its
  socket still open?); idle ones past ``keepalive_expiry`` are closed from
  the oldest end of the idle order, each looked at once;
- a burst queues instead of failing on the connect timeout: at most
  :data:`MAX_CONNECTING` connections are being opened at once (the others
  wait their turn, outside the connect timeout, which counts from when an
  attempt starts), and an attempt that times out while other connections
  of its origin got through meanwhile (a server accepting, slowly: the
  kernel drops the SYNs past its backlog and the client resends them a
  second later) is the burst waiting its turn, so it is made again; one
  during which nothing got through fails as before.

HTTP/1.1 only (the driver's client does not ask for HTTP/2); a proxy
configured in the environment keeps httpx2's own pool for the URLs it
serves.
"""

from __future__ import annotations

import math
import ssl
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterable, AsyncIterator

import anyio
import httpcore2
import httpx2

from elelem.transport.bodies import read_async

__all__ = ["MAX_CONNECTING", "BoundedPool", "PooledTransport"]

MAX_CONNECTING = 100
"""The most connections one pool opens at once (a TCP connect and its TLS
handshake): a burst past it waits its turn in the pool."""


class _Waiter:
    """A request waiting for a connection: it is handed one of the origin it
    wants (``connection``), or a slot to open its own in (``granted`` with no
    connection; ``evict`` an idle connection of another origin to close
    first)."""

    __slots__ = ("connection", "event", "evict", "gone", "granted", "origin")

    def __init__(self, origin: Key) -> None:
        self.origin = origin
        self.event = anyio.Event()
        self.granted = False
        self.gone = False
        self.connection: httpcore2.AsyncHTTPConnection | None = None
        self.evict: httpcore2.AsyncHTTPConnection | None = None


Connection = httpcore2.AsyncHTTPConnection
Key = tuple[bytes, bytes, int]
"""An origin as a dict key (``httpcore2.Origin`` is not hashable)."""


def _key(origin: httpcore2.Origin) -> Key:
    return origin.scheme, origin.host, origin.port


class BoundedPool(httpcore2.AsyncConnectionPool):
    """An HTTP/1.1 connection pool whose every step costs O(1) (see the
    module docs); the arguments are ``httpcore2.AsyncConnectionPool``'s."""

    def __init__(
        self,
        ssl_context: ssl.SSLContext | None,
        *,
        max_connections: int | None,
        max_keepalive_connections: int | None,
        keepalive_expiry: float | None,
    ) -> None:
        super().__init__(
            ssl_context=ssl_context,
            max_connections=max_connections,
            max_keepalive_connections=max_keepalive_connections,
            keepalive_expiry=keepalive_expiry,
        )
        self._idle: dict[Key, OrderedDict[Connection, None]] = {}
        # Every idle connection, oldest first, with the time it became idle.
        self._since: OrderedDict[Connection, float] = OrderedDict()
        self._live: dict[Connection, Key] = {}  # every open connection
        self._open = 0  # connections open or opening, with slots granted to waiters
        self._waiters: deque[_Waiter] = deque()
        self._connecting = anyio.Semaphore(MAX_CONNECTING)
        self._connected: dict[Key, int] = {}  # connections opened, per origin

    @property
    def connections(self) -> list[httpcore2.AsyncConnectionInterface]:
        """The connections open now (idle or busy)."""
        return list(self._live)

    def __repr__(self) -> str:
        return (
            f"<BoundedPool [{self._open} of {self._max_connections} connections, "
            f"{len(self._since)} idle, {len(self._waiters)} waiting]>"
        )

    # -- a request -----------------------------------------------------------------

    async def handle_async_request(self, request: httpcore2.Request) -> httpcore2.Response:
        """Send ``request`` on a pooled connection; the response's body hands
        the connection back when it is closed."""
        origin = request.url.origin
        timeout = request.extensions.get("timeout", {}).get("pool")
        while True:
            connection = await self._acquire(origin, timeout)
            try:
                if connection._connection is None:  # a new one: opened in turn
                    await self._connect(connection, request)
                response = await connection.handle_async_request(request)
            except httpcore2.ConnectionNotAvailable:
                await self._close_all(self._release(connection))
                continue  # the connection went away before the request: take another
            except BaseException:
                await self._close_all(self._release(connection))
                raise
            assert isinstance(response.stream, AsyncIterable)
            return httpcore2.Response(
                status=response.status,
                headers=response.headers,
                content=_Body(response.stream, self, connection),
                extensions=response.extensions,
            )

    async def _acquire(self, origin: httpcore2.Origin, timeout: float | None) -> Connection:
        closing = self._expired()
        if closing:
            await self._close_all(closing)
        idle = self._idle.get(_key(origin))
        while idle:
            connection, _ = idle.popitem()
            del self._since[connection]
            # The one probe of a connection's socket: the one about to be used.
            if connection.has_expired() or connection.is_closed():
                del self._live[connection]
                self._open -= 1
                await self._close_all([connection])
                continue
            return connection
        if self._open < self._max_connections:
            self._open += 1
            return self._opened(origin)
        if self._since:
            # Full, but an idle connection of another origin holds a slot.
            victim, _ = self._since.popitem(last=False)
            self._forget_idle(victim)
            del self._live[victim]
            connection = self._opened(origin)  # the slot is taken before the close awaits
            await self._close_all([victim])
            return connection
        return await self._wait(origin, timeout)

    async def _wait(self, origin: httpcore2.Origin, timeout: float | None) -> Connection:
        waiter = _Waiter(_key(origin))
        self._waiters.append(waiter)
        try:
            with anyio.move_on_after(math.inf if timeout is None else timeout):
                await waiter.event.wait()
        except BaseException:
            waiter.gone = True
            if waiter.granted:  # cancelled just as it was served: pass it on
                self._pass_on(waiter)
            raise
        if not waiter.granted:
            waiter.gone = True
            raise httpcore2.PoolTimeout(
                f"no connection came free within {timeout:g}s of {self._max_connections}"
            )
        if waiter.connection is not None:
            return waiter.connection
        connection = self._opened(origin)
        if waiter.evict is not None:
            self._live.pop(waiter.evict, None)
            await self._close_all([waiter.evict])
        return connection

    async def _connect(self, connection: Connection, request: httpcore2.Request) -> None:
        """Open ``connection`` (see the module docs: in turn, and again while
        its origin's other connections get through)."""
        key = _key(request.url.origin)
        try:
            while True:
                async with self._connecting:
                    before = self._connected.get(key, 0)
                    try:
                        stream = await connection._connect(request)
                    except httpcore2.ConnectTimeout:
                        if self._connected.get(key, 0) == before:
                            raise  # nothing got through: no queue, a failure
                        continue
                self._connected[key] = self._connected.get(key, 0) + 1
                break
        except BaseException:
            connection._connect_failed = True
            raise
        connection._connection = httpcore2.AsyncHTTP11Connection(
            origin=request.url.origin,
            stream=stream,
            keepalive_expiry=connection._keepalive_expiry,
        )

    def _opened(self, origin: httpcore2.Origin) -> Connection:
        connection = self.create_connection(origin)
        assert isinstance(connection, Connection)
        self._live[connection] = _key(origin)
        return connection

    # -- a release -----------------------------------------------------------------

    def _release(self, connection: Connection, trim: bool = True) -> list[Connection]:
        """``connection`` is done with its response: hand it (or its slot) to
        the first waiter, else keep it idle (the oldest idle one closed when
        that passes the keep-alive count, with ``trim``).  Returns what to
        close."""
        origin = self._live.get(connection)
        if origin is None:  # the pool was closed meanwhile
            return [connection]
        if connection.is_closed() or not connection.is_idle():
            del self._live[connection]
            self._slot_freed()
            return [] if connection.is_closed() else [connection]
        while self._waiters:
            waiter = self._waiters.popleft()
            if waiter.gone:
                continue
            waiter.granted = True
            if waiter.origin == origin:
                waiter.connection = connection
            else:
                waiter.evict = connection
            waiter.event.set()
            return []
        closing = []
        if trim and len(self._since) >= self._max_keepalive_connections:
            oldest, _ = self._since.popitem(last=False)
            self._forget_idle(oldest)
            del self._live[oldest]
            self._open -= 1
            closing.append(oldest)
        self._idle.setdefault(origin, OrderedDict())[connection] = None
        self._since[connection] = time.monotonic()
        return closing

    def _slot_freed(self) -> None:
        """A connection is gone: its slot goes to the first waiter, if any."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.gone:
                waiter.granted = True
                waiter.event.set()
                return
        self._open -= 1

    def _pass_on(self, waiter: _Waiter) -> None:
        """A served waiter went away (cancelled): what it was given goes on,
        with no await (its task is being cancelled)."""
        given = waiter.connection or waiter.evict
        if given is None:
            self._slot_freed()
            return
        # Kept idle past the keep-alive count if need be (nothing can be
        # closed without an await): the next release trims it.
        self._release(given, trim=False)

    def _forget_idle(self, connection: Connection) -> None:
        idle = self._idle.get(self._live[connection])
        if idle is not None:
            idle.pop(connection, None)

    def _expired(self) -> list[Connection]:
        """Idle connections past ``keepalive_expiry``, from the oldest end."""
        expiry = self._keepalive_expiry
        if expiry is None or not self._since:
            return []
        closing = []
        cutoff = time.monotonic() - expiry
        while self._since:
            connection, since = next(iter(self._since.items()))
            if since > cutoff:
                break
            self._since.popitem(last=False)
            self._forget_idle(connection)
            del self._live[connection]
            self._open -= 1
            closing.append(connection)
        return closing

    async def _close_all(self, connections: list[Connection]) -> None:
        # Shielded: the pool's counts already let these go; a cancellation
        # must not leave their sockets open.
        with anyio.CancelScope(shield=True):
            for connection in connections:
                await connection.aclose()

    async def aclose(self) -> None:
        """Close every connection, idle or busy."""
        live, self._live = list(self._live), {}
        self._idle.clear()
        self._since.clear()
        self._open = 0
        await self._close_all(live)


class _Body:
    """A response body that hands its connection back to the pool on close."""

    __slots__ = ("_closed", "_connection", "_pool", "_stream")

    def __init__(
        self, stream: AsyncIterable[bytes], pool: BoundedPool, connection: Connection
    ) -> None:
        self._stream, self._pool, self._connection = stream, pool, connection
        self._closed = False

    def __aiter__(self) -> AsyncIterator[bytes]:
        # What the connection already holds, a piece per network read.
        return read_async(self._stream)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            close = getattr(self._stream, "aclose", None)
            if close is not None:
                await close()
            await self._pool._close_all(self._pool._release(self._connection))


class PooledTransport(httpx2.AsyncHTTPTransport):
    """httpx2's async transport over a :class:`BoundedPool`."""

    def __init__(self, verify: ssl.SSLContext, limits: httpx2.Limits) -> None:
        super().__init__(verify=verify, limits=limits)
        self._pool = BoundedPool(
            verify,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
        )
