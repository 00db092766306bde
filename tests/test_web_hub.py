"""Live updates: each revision of a game reaches its watchers once, and never after a newer
one (docs/web.md, *How it is built*)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agon.web.hub import Hub


class Watcher:
    """A WebSocket that keeps what it is sent."""

    def __init__(self) -> None:
        self.sent: list[int] = []

    async def send_text(self, text: str) -> None:
        self.sent.append(json.loads(text)["revision"])


def test_each_revision_is_sent_once_and_in_order() -> None:
    hub = Hub()
    watchers = [Watcher(), Watcher()]
    for watcher in watchers:
        hub.join("g", watcher)  # type: ignore[arg-type]

    async def announce(revision: int) -> None:
        message: dict[str, Any] = {"revision": revision}
        await hub.broadcast("g", message, revision)

    async def scenario() -> None:
        await announce(1)
        await announce(1)  # (the same change, seen again by a watcher's poll)
        await announce(3)
        await announce(2)  # (an older change announced late)
        await announce(4)

    asyncio.run(scenario())
    assert [watcher.sent for watcher in watchers] == [[1, 3, 4], [1, 3, 4]]
    assert hub.announced("g") == 4
    for watcher in watchers:
        hub.leave("g", watcher)  # type: ignore[arg-type]
    assert hub.announced("g") == -1 and hub.watchers("g") == 0
