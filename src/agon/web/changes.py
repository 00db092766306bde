"""How a server process hears of what the others on the same PostgreSQL database do: one
connection per process ``LISTEN``\\s for changed games and queued computer turns (the store
announces both with ``NOTIFY`` as they commit, :mod:`agon.web.store`), in a thread of its own,
and hands each to the event loop at once. No polling: a move made on one process reaches the
watchers on the others as soon as it is committed.

A lost connection is opened again; since announcements made meanwhile are not kept, the arena
is then told to look again at everything it follows (``resync``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

from sqlalchemy.engine import URL

from agon.web.store import CHANGES_CHANNEL, TURNS_CHANNEL, application_name

log = logging.getLogger(__name__)

WAIT_SECONDS = 0.5
"""How long the listening thread waits for an announcement before it looks whether to stop."""
RETRY_SECONDS = 1.0
"""How long it waits before opening a lost connection again."""


class Listener:
    """Announcements from the database, handed to ``loop``: ``changed(game_id, revision)``
    for each change of a game, ``turn()`` for each computer turn queued, ``resync()`` after
    a lost connection was opened again."""

    def __init__(
        self,
        url: URL,
        loop: asyncio.AbstractEventLoop,
        *,
        changed: Callable[[str, int], None],
        turn: Callable[[], None],
        resync: Callable[[], None],
    ) -> None:
        # psycopg's own connection string, from SQLAlchemy's URL (password included)
        self._conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
        self._loop = loop
        self._changed, self._turn, self._resync = changed, turn, resync
        self._stop = threading.Event()
        self.listening = threading.Event()
        """Set while the connection listens (the tests wait for it)."""
        self._thread = threading.Thread(target=self._listen, name="agon-listen", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=WAIT_SECONDS * 4)

    def _listen(self) -> None:
        import psycopg

        lost = False
        while not self._stop.is_set():
            try:
                with psycopg.connect(
                    self._conninfo, autocommit=True, application_name=application_name()
                ) as connection:
                    connection.execute(f"LISTEN {CHANGES_CHANNEL}")
                    connection.execute(f"LISTEN {TURNS_CHANNEL}")
                    self.listening.set()
                    if lost:
                        self._hand(self._resync)
                        log.warning("listening to the database again")
                    while not self._stop.is_set():
                        for notice in connection.notifies(timeout=WAIT_SECONDS):
                            self._heard(notice.channel, notice.payload)
            except psycopg.Error as error:
                self.listening.clear()
                if self._stop.is_set():
                    return
                if not lost:
                    log.warning("lost the database's announcements (%s); trying again", error)
                lost = True
                self._stop.wait(RETRY_SECONDS)

    def _heard(self, channel: str, payload: str) -> None:
        if channel == TURNS_CHANNEL:
            self._hand(self._turn)
            return
        game_id, _, revision = payload.partition(" ")
        if revision.isdigit():
            self._hand(self._changed, game_id, int(revision))

    def _hand(self, callback: Callable[..., None], *arguments: object) -> None:
        try:
            self._loop.call_soon_threadsafe(callback, *arguments)
        except RuntimeError:  # (the loop has closed: the server is stopping)
            self._stop.set()
