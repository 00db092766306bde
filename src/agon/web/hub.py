"""Live updates: every browser watching a game holds a WebSocket, and each change reaches all.

A change made by this server process is broadcast at once; one made by another process on the
same database is noticed by one poll per game (``Arena.following``) and broadcast then.

A broadcast never waits for a watcher: each socket has its own sender, and only the newest
update waits for it (every update is the whole view of the game, so one left unsent is never
needed). A watcher that keeps one update unsent for :data:`SEND_SECONDS` is dropped: its socket
is closed, and its page reconnects and is sent the game afresh. So a slow or stuck watcher
never slows a move, nor the other watchers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import defaultdict
from typing import Any

from fastapi import WebSocket

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


class _Outbox:
    """One watcher's socket and the update waiting for it, sent by its own task."""

    def __init__(self, hub: Hub, game_id: str, socket: WebSocket) -> None:
        self.socket = socket
        self._waiting: str | None = None
        self._ready = asyncio.Event()
        self._task = asyncio.create_task(self._send_updates(hub, game_id))

    def offer(self, text: str) -> None:
        """Send ``text`` next, instead of any update still waiting."""
        self._waiting = text
        self._ready.set()

    def close(self) -> None:
        """Stop sending (from the sender itself, which is dropping its watcher, nothing to do)."""
        if asyncio.current_task() is not self._task:
            self._task.cancel()

    async def _send_updates(self, hub: Hub, game_id: str) -> None:
        while True:
            await self._ready.wait()
            self._ready.clear()
            text, self._waiting = self._waiting, None
            if text is None:
                continue
            # (asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow a
            # cancellation that comes as the send ends, and the sender then never ends)
            try:
                async with asyncio.timeout(SEND_SECONDS):
                    await self.socket.send_text(text)
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
        self._newest: dict[str, str] = {}
        """A crowd's update not yet offered to all of it (:meth:`_offer_in_slices`)."""
        self._offering: dict[str, asyncio.Task[None]] = {}

    def join(self, game_id: str, socket: WebSocket) -> None:
        """Send the game's updates to ``socket`` from now on (call within the event loop)."""
        outboxes = self._outboxes[game_id]
        if socket not in outboxes:
            outboxes[socket] = _Outbox(self, game_id, socket)

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

    def broadcast(self, game_id: str, message: dict[str, Any], revision: int) -> None:
        """Offer ``message``, the game at ``revision``, to every watcher of the game: each
        revision once, and never one older than a revision already offered (two changes
        announced at once, or a change seen both by its own request and by the poll)."""
        outboxes = self._outboxes.get(game_id)
        if not outboxes or revision <= self.announced(game_id):
            return
        self._announced[game_id] = revision
        text = json.dumps(message)
        if len(outboxes) <= OFFER_SLICE:
            for outbox in outboxes.values():
                outbox.offer(text)
            return
        self._newest[game_id] = text
        if game_id not in self._offering:
            self._offering[game_id] = asyncio.create_task(self._offer_in_slices(game_id))

    async def _offer_in_slices(self, game_id: str) -> None:
        """Offer the game's newest update to its watchers, :data:`OFFER_SLICE` at a time; a
        newer one, broadcast meanwhile, is offered from the first watcher again in its place
        (so each watcher is offered revisions in order, as ever)."""
        try:
            while (text := self._newest.pop(game_id, None)) is not None:
                outboxes = list(self._outboxes.get(game_id, {}).values())
                for start in range(0, len(outboxes), OFFER_SLICE):
                    if game_id in self._newest:
                        break
                    for outbox in outboxes[start:start + OFFER_SLICE]:
                        outbox.offer(text)
                    await asyncio.sleep(0)  # (the loop's next turn: the sends, other requests)
        finally:
            del self._offering[game_id]
