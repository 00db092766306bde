"""Live updates: every browser watching a game holds a WebSocket, and each change reaches all.

A change made by this server process is broadcast at once; one made by another process on the
same database is noticed by one poll per game (``Arena.following``) and broadcast then.

A broadcast never waits for a watcher: each socket has its own sender, and only the newest
update waits for it (every update is the whole view of the game, so one left unsent is never
needed). A watcher that keeps one update unsent for :data:`SEND_SECONDS` is dropped: its socket
is closed, and its page reconnects and is sent the game afresh. So a slow or stuck watcher
never slows a move, nor the other watchers.

A watcher may ask for its updates packed (:data:`PACKED`): each is then sent as binary, its
JSON text compressed once a revision for all such watchers (:class:`Update`), rather than by
permessage-deflate, once for each socket (docs/web.md, *Packed updates*).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import zlib
from collections import defaultdict
from typing import Any
from urllib.parse import parse_qs

import orjson
from fastapi import WebSocket
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.http11 import Request

SEND_SECONDS = 5.0
"""How long one update may take to reach a watcher before the watcher is dropped."""
CLOSE_SECONDS = 1.0
"""How long closing a dropped watcher's socket may take (a stuck one may never answer)."""
TOO_SLOW = 1013
"""The close code of a dropped watcher: try again later (the page reconnects)."""
OFFER_SLICE = 100
"""Watchers offered an update in one turn of the event loop. Each send compresses and writes
(tens of microseconds, or more); offered to a crowd of 2,000 at once, they ran in one turn,
and every other game's request waited behind them. A crowd is offered its update a slice at a
time, the loop answering other requests in between."""
PACKED = "deflate"
"""The packing a watcher may ask for (``?compress=deflate``): a zlib stream (RFC 1950), which
a browser opens with ``DecompressionStream("deflate")``."""
SEAT_PROTOCOL = "agon.seat."
"""The WebSocket subprotocol a player's page offers, its seat's token after it: a socket that
holds a seat of its game is not counted among the game's watchers, so a crowd at the cap
cannot keep the players out. (A subprotocol, not the query: a URL's query is logged.)"""
PACKED_LEVEL = 1
"""zlib's level for packed updates: its fastest, in a third of the time of its default (6) for
a quarter more bytes (an update of an 8×8 board: 3.3 KB against 2.6). A move's CPU is what
limits the arena, not the watchers' bytes."""


def packings_asked(query: str) -> list[str]:
    """The packings a WebSocket's query string asks for (its ``compress`` values, empty ones
    too, as Starlette reads them)."""
    return parse_qs(query, keep_blank_values=True).get("compress", [])


def asks_packed(query: str) -> bool:
    """Whether a WebSocket's query string asks for packed updates (``compress=deflate``)."""
    return packings_asked(query) == [PACKED]


class PackingWebSocket(WebSocketsSansIOProtocol):
    """Uvicorn's WebSocket protocol, leaving permessage-deflate out of a socket that asks for
    packed updates: their bytes would be compressed again, for each socket, for nothing
    (about half the time a text update takes). Every other socket negotiates it as before."""

    def handle_connect(self, event: Request) -> None:
        if asks_packed(event.path.partition("?")[2]):
            self.conn.available_extensions = []
        super().handle_connect(event)


class Update:
    """A message for WebSockets (a game's update for its watchers, an analysis): its JSON
    text, and that text packed, each made when first asked for, then shared by every socket it
    is sent on."""

    def __init__(self, message: dict[str, Any]) -> None:
        self.message = message

    @functools.cached_property
    def json(self) -> bytes:
        """The message as JSON, in UTF-8. By orjson: a game's update is mostly its board's SVG,
        which the standard library's encoder took a tenth of a move's CPU to write out
        (docs/web.md, *Updates written by orjson*)."""
        return orjson.dumps(self.message, option=orjson.OPT_NON_STR_KEYS)

    @functools.cached_property
    def text(self) -> str:
        return self.json.decode()

    @functools.cached_property
    def packed(self) -> bytes:
        return zlib.compress(self.json, PACKED_LEVEL)

    async def send(self, socket: WebSocket, packed: bool) -> None:
        """Send it on ``socket``: packed, as binary, or as text."""
        if packed:
            await socket.send_bytes(self.packed)
        else:
            await socket.send_text(self.text)


class _Outbox:
    """One watcher's socket and the update waiting for it, sent by its own task."""

    def __init__(self, hub: Hub, game_id: str, socket: WebSocket, packed: bool) -> None:
        self.socket = socket
        self.packed = packed
        self._waiting: Update | None = None
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = asyncio.create_task(
            self._send_updates(hub, game_id)
        )

    def offer(self, update: Update) -> None:
        """Send ``update`` next, instead of any update still waiting."""
        self._waiting = update
        self._ready.set()

    def close(self) -> None:
        """Stop sending (from the sender itself, which is dropping its watcher, nothing to do).
        The sender is then let go: cancelled, it keeps its cancellation, whose traceback holds
        this outbox, and so the socket's many objects would wait in a cycle for a full
        collection (docs/web.md, *Sockets freed as they close*)."""
        if self._task is not None and asyncio.current_task() is not self._task:
            self._task.cancel()
            self._task = None

    async def _send_updates(self, hub: Hub, game_id: str) -> None:
        while True:
            await self._ready.wait()
            self._ready.clear()
            update, self._waiting = self._waiting, None
            if update is None:
                continue
            # (asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow a
            # cancellation that comes as the send ends, and the sender then never ends)
            try:
                async with asyncio.timeout(SEND_SECONDS):
                    await update.send(self.socket, self.packed)
            except Exception:  # (too slow, or gone: either way, dropped)
                hub.leave(game_id, self.socket)
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(CLOSE_SECONDS):
                        await self.socket.close(code=TOO_SLOW, reason="too slow: reconnect")
                return


class Hub:
    """The open WebSockets of each game, each with its :class:`_Outbox`."""

    def __init__(self) -> None:
        self._outboxes: dict[str, dict[WebSocket, _Outbox]] = defaultdict(dict)
        self._announced: dict[str, int] = {}
        self._newest: dict[str, Update] = {}
        """A crowd's update not yet offered to all of it (:meth:`_offer_in_slices`)."""
        self._offering: dict[str, asyncio.Task[None]] = {}

    def join(self, game_id: str, socket: WebSocket, packed: bool = False) -> None:
        """Send the game's updates to ``socket`` from now on (call within the event loop),
        ``packed`` or as text."""
        outboxes = self._outboxes[game_id]
        if socket not in outboxes:
            outboxes[socket] = _Outbox(self, game_id, socket, packed)

    def leave(self, game_id: str, socket: WebSocket) -> None:
        outboxes = self._outboxes.get(game_id)
        if outboxes is None or socket not in outboxes:
            return
        outboxes.pop(socket).close()
        if not outboxes:
            del self._outboxes[game_id]
            self._announced.pop(game_id, None)

    def watchers(self, game_id: str) -> int:
        return len(self._outboxes.get(game_id, ()))

    def announced(self, game_id: str) -> int:
        """The latest revision of the game broadcast to its watchers (-1 if none yet)."""
        return self._announced.get(game_id, -1)

    def broadcast(self, game_id: str, update: Update, revision: int) -> None:
        """Offer ``update``, the game at ``revision``, to every watcher of the game: each
        revision once, and never one older than a revision already offered (two changes
        announced at once, or a change seen both by its own request and by the poll)."""
        outboxes = self._outboxes.get(game_id)
        if not outboxes or revision <= self.announced(game_id):
            return
        self._announced[game_id] = revision
        if len(outboxes) <= OFFER_SLICE:
            for outbox in outboxes.values():
                outbox.offer(update)
            return
        self._newest[game_id] = update
        if game_id not in self._offering:
            self._offering[game_id] = asyncio.create_task(self._offer_in_slices(game_id))

    async def _offer_in_slices(self, game_id: str) -> None:
        """Offer the game's newest update to its watchers, :data:`OFFER_SLICE` at a time; a
        newer one, broadcast meanwhile, is offered from the first watcher again in its place
        (so each watcher is offered revisions in order, as ever)."""
        try:
            while (update := self._newest.pop(game_id, None)) is not None:
                outboxes = list(self._outboxes.get(game_id, {}).values())
                for start in range(0, len(outboxes), OFFER_SLICE):
                    if game_id in self._newest:
                        break
                    for outbox in outboxes[start:start + OFFER_SLICE]:
                        outbox.offer(update)
                    await asyncio.sleep(0)  # (the loop's next turn: the sends, other requests)
        finally:
            del self._offering[game_id]
