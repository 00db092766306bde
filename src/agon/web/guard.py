"""What shields the arena from a hostile client: security headers on every answer, request
bodies refused before they are read when too large, rates of costly requests limited per
client; connections capped per client address, and closed where a request's head does not
come (limits: :class:`agon.web.config.ArenaLimits`; docs/web.md, *Limits and security*)."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import math
import select
import socket
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from agon.web.errors import ArenaError

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Message], Any]
App = Callable[[Scope, Receive, Send], Any]

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; "
    # the boards' SVGs carry their own <style>: styles may be inline, scripts never
    "style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
DOCS_POLICY = "frame-ancestors 'none'"
"""The API's documentation page loads Swagger UI from its CDN: it gets only the framing rule."""
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
)


class TooManyRequests(ArenaError):
    """Over a rate limit; ``retry_after`` is how many seconds until one more is allowed."""

    status = 429

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = max(1, math.ceil(retry_after))


class SecurityHeaders:
    """Adds the security headers to every HTTP answer (pages, API, static files, errors)."""

    def __init__(self, app: App, docs_path: str = "/api/docs") -> None:
        self.app = app
        self.docs_path = docs_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = DOCS_POLICY if scope["path"] == self.docs_path else CONTENT_SECURITY_POLICY

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                added = [
                    (name, value)
                    for name, value in (
                        (b"content-security-policy", policy.encode()), *SECURITY_HEADERS
                    )
                    if name not in present
                ]
                message = {**message, "headers": [*message.get("headers", []), *added]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyLimit:
    """Refuses a request whose body is over ``max_bytes`` (413) before reading it where it
    says its length, and as soon as the count passes the limit where it does not (chunked):
    a client cannot make the server hold more than ``max_bytes`` of its body."""

    def __init__(self, app: App, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await self._refuse(send, 400, "the Content-Length header is not a number")
                    return
                if declared > self.max_bytes:
                    await self._refuse(send, 413, self._message())
                    return
        received = 0
        started = refused = False

        async def counted_receive() -> Message:
            nonlocal received, refused
            message: Message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    # answer now, and tell the application the client has gone
                    if not started:
                        await self._refuse(send, 413, self._message())
                    refused = True
                    return {"type": "http.disconnect"}
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            if refused:
                return  # (the refusal was the answer)
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, counted_receive, watched_send)

    def _message(self) -> str:
        return f"the request body is over the limit of {self.max_bytes:,} bytes"

    @staticmethod
    async def _refuse(send: Send, status: int, detail: str) -> None:
        await refuse(send, status, detail, [(b"connection", b"close")])


async def refuse(
    send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    """Answer an HTTP request with ``{"detail": detail}`` and ``status``."""
    body = json.dumps({"detail": detail}).encode()
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *(headers or []),
        ],
    })
    await send({"type": "http.response.body", "body": body})


def client_address(scope: Mapping[str, Any]) -> str:
    """The address of the client of a request or WebSocket (as the server took it: a
    forwarded header counts only from a trusted proxy, ``agon serve --trusted-proxies``)."""
    client = scope.get("client")
    return str(client[0]) if client else ""


class ReadLimit:
    """At most ``reads``' rate of reads of the API (GET and HEAD of ``/api/…``, and the
    questions asked on a game's socket, which take from the same limit) for each client
    address, so that a few busy readers cannot slow every game: 429 with ``Retry-After``
    beyond."""

    def __init__(self, app: App, reads: RateLimit) -> None:
        self.app = app
        self.reads = reads

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] in ("GET", "HEAD")
            and scope["path"].startswith("/api/")
        ):
            try:
                self.reads.take(client_address(scope), "reads of the API")
            except TooManyRequests as error:
                retry = [(b"retry-after", str(error.retry_after).encode())]
                await refuse(send, 429, str(error), retry)
                return
        await self.app(scope, receive, send)


class OpenSockets:
    """The WebSockets held open by each client address and on each game, within caps: a client
    cannot hold the server's connections, nor a crowd slow one game's updates for others."""

    def __init__(self, per_address: int, per_game: int) -> None:
        self.per_address = per_address
        self.per_game = per_game
        self._by_address: dict[str, int] = {}
        self._by_game: dict[str, int] = {}

    @contextmanager
    def held(self, address: str, game_id: str | None = None) -> Iterator[str | None]:
        """Hold one socket of ``address`` (on ``game_id``, if it watches one) while the block
        runs: yields None, or why it is refused (nothing is then held)."""
        if self._by_address.get(address, 0) >= self.per_address:
            yield (
                f"too many live connections from your address: at most {self.per_address}"
            )
            return
        if game_id is not None and self._by_game.get(game_id, 0) >= self.per_game:
            yield f"too many watchers of this game: at most {self.per_game}"
            return
        counts = [(self._by_address, address)]
        if game_id is not None:
            counts.append((self._by_game, game_id))
        for table, key in counts:
            table[key] = table.get(key, 0) + 1
        try:
            yield None
        finally:
            for table, key in counts:
                table[key] -= 1
                if not table[key]:
                    del table[key]


class RateLimit:
    """At most ``count`` events per ``period`` seconds for each key (a client's address, a
    game), over a sliding window. Only the ``max_keys`` most recent keys are remembered, so a
    crowd of addresses cannot grow it without bound."""

    def __init__(
        self,
        count: int,
        period: float = 60.0,
        *,
        max_keys: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.count = count
        self.period = period
        self.max_keys = max_keys
        self._clock = clock
        self._events: OrderedDict[str, deque[float]] = OrderedDict()

    def take(self, key: str, what: str) -> None:
        """Count one event for ``key``, or raise :class:`TooManyRequests` saying ``what`` is
        limited and when one more is allowed."""
        now = self._clock()
        events = self._events.pop(key, None) or deque()
        while events and events[0] <= now - self.period:
            events.popleft()
        if len(events) >= self.count:
            self._events[key] = events
            wait = events[0] + self.period - now
            raise TooManyRequests(
                f"too many {what}: at most {self.count} in {self.period:g} seconds", wait
            )
        events.append(now)
        self._events[key] = events
        while len(self._events) > self.max_keys:
            self._events.popitem(last=False)


class GuardedHttp(HttpToolsProtocol):
    """Uvicorn's HTTP protocol with two guards Uvicorn lacks, made for the arena's limits by
    :func:`guarded_http`:

    - **a timeout on each request's head** (its request line and headers): the head must be
      whole within :attr:`head_seconds` of the connection's opening, or of its first byte after
      the previous answer (before that byte, Uvicorn's idle timeout runs); else the connection
      is answered 408 and closed. A client that opens connections and sends nothing, or a head
      a byte at a time, holds none for long;
    - **a cap on the connections of one client address** (:attr:`per_address`; a proxy the
      arena trusts is not capped, its clients' addresses being known only from their requests):
      beyond it a new connection is answered 503 and closed. A WebSocket leaves the count once
      upgraded: :class:`OpenSockets` counts those.

    And one fix: **an idle connection is not closed with a request already waiting on it.**
    Uvicorn's idle timeout closes a kept-alive connection from a timer; where the event loop
    was busy (a slice of a crowd's updates) when the timer came due, a request that arrived
    meanwhile is still unread when the timer runs, and closing then resets the connection: the
    client's move got no answer (``ReadError``, docs/web.md, *The moves that got no answer*).
    The timer now looks first, and leaves a waiting request to be read; and where it closes,
    the client is told at once, not once the loop has run its next work, during which the
    client could still send a request there.
    """

    head_seconds: ClassVar[float]
    per_address: ClassVar[int]
    trusted: ClassVar[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] | None]
    """The trusted proxies' networks; None: every address (``*``)."""
    open_by_address: ClassVar[Counter[str]]

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_timer: asyncio.TimerHandle | None = None
        self._awaiting_head = False
        self._counted: str | None = None
        self._closing = False
        """Answered and closing: what the client still sends is read and dropped."""
        address = self.client[0] if self.client else None
        if address is not None and not self._is_trusted(address):
            if self.open_by_address[address] >= self.per_address:
                refusal = f"too many connections from your address: at most {self.per_address}"
                self._answer_and_close(_closing_answer(503, "Service Unavailable", refusal))
                return
            self.open_by_address[address] += 1
            self._counted = address
        self._awaiting_head = True
        self._start_head_timer()

    def data_received(self, data: bytes) -> None:
        if self._closing:
            return
        if self._awaiting_head and self._head_timer is None:
            self._start_head_timer()
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self._awaiting_head = False
        self._stop_head_timer()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._awaiting_head = True  # (the next request's: timed from its first byte)

    def timeout_keep_alive_handler(self) -> None:
        if not self.transport.is_closing() and not self.flow.read_paused and _bytes_waiting(
            self.transport
        ):  # (read on the loop's next look at the network, which cancels this timer)
            self.timeout_keep_alive_task = self.loop.call_later(
                WAITING_REQUEST_RECHECK_SECONDS, self.timeout_keep_alive_handler
            )
            return
        _end_sending_now(self.transport)
        super().timeout_keep_alive_handler()

    def handle_websocket_upgrade(self) -> None:
        self._uncount()
        super().handle_websocket_upgrade()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        self._uncount()
        super().connection_lost(exc)

    def _is_trusted(self, address: str) -> bool:
        if self.trusted is None:
            return True
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.trusted)

    def _uncount(self) -> None:
        if self._counted is not None:
            self.open_by_address[self._counted] -= 1
            if not self.open_by_address[self._counted]:
                del self.open_by_address[self._counted]
            self._counted = None

    def _start_head_timer(self) -> None:
        self._head_timer = self.loop.call_later(self.head_seconds, self._head_too_slow)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        busy = self.cycle is not None and not self.cycle.response_complete
        if self.transport.is_closing() or busy:
            return
        refusal = "the request's head took too long to come"
        self._answer_and_close(_closing_answer(408, "Request Timeout", refusal))

    def _answer_and_close(self, answer: bytes) -> None:
        """Send ``answer``, end the sending side, and close a moment later, reading and
        dropping what the client still sends meanwhile: a connection closed with unread data
        is reset by the system, and the client may then lose the answer."""
        self._closing = True
        self._awaiting_head = False
        self._stop_head_timer()
        self.transport.write(answer)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)


WAITING_REQUEST_RECHECK_SECONDS = 0.05
"""When an idle connection with a request waiting unread is looked at again, should the loop
not have read it by then."""


def _bytes_waiting(transport: asyncio.BaseTransport) -> bool:
    """Whether the connection's socket has bytes the server has not read yet (or the client's
    end of the connection, which the loop reads as such too)."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return False
    try:
        if hasattr(select, "poll"):  # (select.select refuses descriptors past FD_SETSIZE)
            poller = select.poll()
            poller.register(sock.fileno(), select.POLLIN)
            return bool(poller.poll(0))
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return False  # (closed already)
    return bool(readable)


def _end_sending_now(transport: asyncio.BaseTransport) -> None:
    """Tell the client at once that the connection is closing (a FIN), where the loop would
    close it only after the work it runs next: a client sees it before it sends another
    request there, and opens a new connection instead."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return
    try:
        own = socket.socket(fileno=sock.fileno())  # (the loop's descriptor, borrowed)
    except OSError:
        return  # (closed already)
    try:
        own.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # (the client has gone already)
    finally:
        own.detach()


LINGER_SECONDS = 2.0
"""How long a connection answered with a refusal is kept, its input dropped, before it closes."""


def _closing_answer(status: int, phrase: str, detail: str) -> bytes:
    """An HTTP answer whose body is the arena's error JSON, closing the connection."""
    body = json.dumps({"detail": detail}).encode()
    head = (
        f"HTTP/1.1 {status} {phrase}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


def guarded_http(head_seconds: float, per_address: int, trusted: str) -> type[GuardedHttp]:
    """The HTTP protocol class Uvicorn serves the arena with (:class:`GuardedHttp`), for these
    limits and the ``trusted`` proxies (as :func:`agon.web.config.trusted_proxies` gives
    them: comma-separated addresses and networks, or ``*``)."""
    networks = None if "*" in trusted.split(",") else tuple(
        ipaddress.ip_network(entry, strict=False) for entry in trusted.split(",") if entry
    )
    settings: dict[str, object] = {
        "head_seconds": head_seconds,
        "per_address": per_address,
        "trusted": networks,
        "open_by_address": Counter[str](),
    }
    return type("GuardedHttp", (GuardedHttp,), settings)
