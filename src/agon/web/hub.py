"""Live updates: every browser watching a game holds a WebSocket, and each change reaches all.

A change made by this server process is broadcast at once; one made by another process on the
same database is noticed by the watchers' polls (``Arena.follow``) and broadcast then.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from typing import Any

from fastapi import WebSocket


class Hub:
    """The open WebSockets of each game; a failed socket is dropped, never waited on."""

    def __init__(self) -> None:
        self._sockets: dict[str, set[WebSocket]] = defaultdict(set)
        self._announced: dict[str, int] = {}

    def join(self, game_id: str, socket: WebSocket) -> None:
        self._sockets[game_id].add(socket)

    def leave(self, game_id: str, socket: WebSocket) -> None:
        sockets = self._sockets.get(game_id)
        if sockets is None:
            return
        sockets.discard(socket)
        if not sockets:
            del self._sockets[game_id]
            self._announced.pop(game_id, None)

    def watchers(self, game_id: str) -> int:
        return len(self._sockets.get(game_id, ()))

    def announced(self, game_id: str) -> int:
        """The latest revision of the game broadcast to its watchers (-1 if none yet)."""
        return self._announced.get(game_id, -1)

    async def broadcast(self, game_id: str, message: dict[str, Any], revision: int) -> None:
        """Send ``message``, the game at ``revision``, to every watcher of the game: each
        revision once, and never one older than a revision already sent (two changes
        announced at once, or a change seen both by its own request and by a watcher's poll)."""
        sockets = list(self._sockets.get(game_id, ()))
        if not sockets or revision <= self.announced(game_id):
            return
        self._announced[game_id] = revision
        text = json.dumps(message)
        results = await asyncio.gather(
            *(asyncio.wait_for(socket.send_text(text), timeout=5) for socket in sockets),
            return_exceptions=True,
        )
        for socket, result in zip(sockets, results, strict=True):
            if isinstance(result, BaseException):
                self.leave(game_id, socket)
