"""Live updates: each revision of a game reaches its watchers once, and never after a newer
one; a slow watcher slows neither a move nor the others, and is dropped; a game watched by many
sockets is polled once (docs/web.md, *How it is built*)."""

from __future__ import annotations

import asyncio
import gc
import json
import time
import weakref
import zlib
from typing import Any

import pytest

import agon.web.arena as arena_module
import agon.web.hub as hub_module
from agon.web.hub import TOO_SLOW, Hub, Update
from web_fixtures import TestClient, client, make_client, start_game  # noqa: F401

DEADLINE = 30.0
"""Seconds a test waits for what must happen (the machine may be busy)."""


class Watcher:
    """A WebSocket that keeps what it is sent; with a ``gate``, each send waits until the gate
    is open (for ever, if it never is)."""

    def __init__(self, gate: asyncio.Event | None = None) -> None:
        self.sent: list[int] = []
        self.gate = gate
        self.closed: int | None = None

    async def send_text(self, text: str) -> None:
        if self.gate is not None:
            await self.gate.wait()
        self.sent.append(json.loads(text)["revision"])

    async def send_bytes(self, packed: bytes) -> None:
        await self.send_text(zlib.decompress(packed).decode())

    async def close(self, code: int, reason: str) -> None:
        await asyncio.sleep(0)  # (a real close waits for the socket)
        self.closed = code


def announce(hub: Hub, revision: int) -> None:
    message: dict[str, Any] = {"revision": revision}
    hub.broadcast("g", Update(message), revision)


async def until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.01)


def test_a_watcher_who_leaves_is_freed_without_the_garbage_collector() -> None:
    """A socket holds many objects (the framework's, the connection's): left in a reference
    cycle as it closed, they waited for a full collection, and the process's memory grew until
    one came (docs/web.md, *Sockets freed as they close*)."""

    async def scenario() -> weakref.ref[Watcher]:
        hub = Hub()
        watcher = Watcher()
        hub.join("g", watcher)  # type: ignore[arg-type]
        announce(hub, 1)
        await until(lambda: watcher.sent == [1], "the update sent")
        hub.leave("g", watcher)  # type: ignore[arg-type]
        for _ in range(3):
            await asyncio.sleep(0)  # (its sender cancelled and ended)
        return weakref.ref(watcher)

    gc.disable()
    try:
        freed = asyncio.run(scenario())
        assert freed() is None
    finally:
        gc.enable()


def test_a_revision_is_packed_once_for_every_watcher_who_asks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Packed and text watchers of one game all get each revision; the packing is done once
    a revision, however many watchers asked for it (a crowd costs one compression)."""
    packings: list[int] = []
    real_compress = zlib.compress

    def counted(data: bytes, level: int = -1) -> bytes:
        packings.append(len(data))
        return real_compress(data, level)

    monkeypatch.setattr(hub_module.zlib, "compress", counted)

    async def scenario() -> list[list[int]]:
        hub = Hub()
        packed, text = [Watcher() for _ in range(5)], [Watcher() for _ in range(2)]
        for watcher in packed:
            hub.join("g", watcher, packed=True)  # type: ignore[arg-type]
        for watcher in text:
            hub.join("g", watcher)  # type: ignore[arg-type]
        for revision in (1, 2):
            announce(hub, revision)
            await until(lambda: all(w.sent[-1:] == [hub.announced("g")]
                                    for w in packed + text), "sent")
        return [watcher.sent for watcher in packed + text]

    assert asyncio.run(scenario()) == [[1, 2]] * 7
    assert len(packings) == 2


def test_each_revision_is_sent_once_and_in_order() -> None:
    async def scenario() -> list[list[int]]:
        hub = Hub()
        watchers = [Watcher(), Watcher()]
        for watcher in watchers:
            hub.join("g", watcher)  # type: ignore[arg-type]
        for revision in (1, 1, 3, 2, 4):  # (the same change seen again; an older one late)
            announce(hub, revision)
            await until(lambda: all(w.sent[-1:] == [hub.announced("g")] for w in watchers), "sent")
        assert hub.announced("g") == 4
        for watcher in watchers:
            hub.leave("g", watcher)  # type: ignore[arg-type]
        assert hub.announced("g") == -1 and hub.watchers("g") == 0
        return [watcher.sent for watcher in watchers]

    assert asyncio.run(scenario()) == [[1, 3, 4], [1, 3, 4]]


def test_a_slow_watcher_gets_the_newest_update_and_slows_no_one() -> None:
    """While an update is on its way to a slow watcher, newer ones replace each other: it is
    sent the newest next, never an older one after it; the fast watcher gets every one."""

    async def scenario() -> tuple[list[int], list[int]]:
        hub = Hub()
        gate = asyncio.Event()
        slow, fast = Watcher(gate), Watcher()
        hub.join("g", slow)  # type: ignore[arg-type]
        hub.join("g", fast)  # type: ignore[arg-type]
        for revision in (1, 2, 3, 4):
            announce(hub, revision)  # (returns at once: a broadcast waits for no one)
            await until(lambda: fast.sent[-1:] == [hub.announced("g")], "the fast one served")
        gate.set()  # (the slow one's first send ends: the newest is sent next)
        await until(lambda: slow.sent[-1:] == [4], "the slow one served")
        for watcher in (slow, fast):
            hub.leave("g", watcher)  # type: ignore[arg-type]
        return slow.sent, fast.sent

    slow, fast = asyncio.run(scenario())
    assert fast == [1, 2, 3, 4]
    assert slow == [1, 4]


def test_a_stuck_watcher_is_dropped_and_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_module, "SEND_SECONDS", 0.05)

    async def scenario() -> tuple[Watcher, Watcher, Hub]:
        hub = Hub()
        stuck, fine = Watcher(asyncio.Event()), Watcher()  # (its gate never opens)
        hub.join("g", stuck)  # type: ignore[arg-type]
        hub.join("g", fine)  # type: ignore[arg-type]
        announce(hub, 1)
        await until(lambda: hub.watchers("g") == 1, "the stuck watcher dropped")
        announce(hub, 2)
        await until(lambda: fine.sent == [1, 2], "the other served")
        hub.leave("g", fine)  # type: ignore[arg-type]
        return stuck, fine, hub

    stuck, _, _ = asyncio.run(scenario())
    assert stuck.closed == TOO_SLOW and stuck.sent == []


def test_the_games_watched_here_are_polled_together(
    client: TestClient, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    """Changes made by another server process are found by polling: one read of every game
    watched here, however many games and watchers this process holds (a poll a game, or a
    socket, would make many times as many)."""
    refresh = 0.05
    monkeypatch.setattr(arena_module, "REFRESH_SECONDS", refresh)
    game_ids = [
        start_game(client, game="alak", options={"size": 5}, opponent="local")[0].game_id
        for _ in range(3)
    ]
    store = client.app.state.arena.store  # type: ignore[attr-defined]
    polls: list[list[str]] = []
    revisions = store.revisions

    def counted(polled: list[str]) -> dict[str, int]:
        polls.append(sorted(polled))
        return revisions(polled)  # type: ignore[no-any-return]

    monkeypatch.setattr(store, "revisions", counted)
    sockets = [client.websocket_connect(f"/ws/games/{game_id}") for game_id in game_ids * 2]
    opened = [socket.__enter__() for socket in sockets]
    try:
        for socket in opened:
            socket.receive_json()
        started = time.monotonic()
        time.sleep(20 * refresh)
        elapsed = time.monotonic() - started
    finally:
        for socket in sockets:
            socket.__exit__(None, None, None)
    assert 0 < len(polls) <= elapsed / refresh + 2  # (six sockets polling would make 6×)
    assert polls[-1] == sorted(game_ids)


def test_a_poll_that_fails_is_made_again(
    client: TestClient, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.setattr(arena_module, "REFRESH_SECONDS", 0.05)
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    store = client.app.state.arena.store  # type: ignore[attr-defined]
    polls: list[None] = []
    revisions = store.revisions

    def failing_first(polled: list[str]) -> dict[str, int]:
        polls.append(None)
        if len(polls) == 1:
            raise RuntimeError("the database is away")
        return revisions(polled)  # type: ignore[no-any-return]

    monkeypatch.setattr(store, "revisions", failing_first)
    with client.websocket_connect(f"/ws/games/{seat.game_id}") as socket:
        socket.receive_json()
        deadline = time.monotonic() + 30
        while len(polls) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert len(polls) >= 3


def test_a_move_s_view_is_built_once_for_its_answer_and_its_watchers(
    client: TestClient, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    """The board's SVG costs milliseconds: a move's answer, its broadcast and a watcher who
    joins then share one view of the game at that revision."""
    from agon.web import views

    built: list[int] = []
    public_view = views.public_view

    def counted(loaded: Any, labels: Any) -> dict[str, Any]:
        built.append(loaded.stored.revision)
        return public_view(loaded, labels)

    monkeypatch.setattr(views, "public_view", counted)
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    with client.websocket_connect(f"/ws/games/{seat.game_id}") as watcher:
        assert watcher.receive_json()["view"]["revision"] == 0
        answer = seat.move("2").json()
        assert watcher.receive_json()["view"] == {
            key: value for key, value in answer.items() if key not in ("you", "invite_token")
        }
        with client.websocket_connect(f"/ws/games/{seat.game_id}") as late:
            assert late.receive_json()["view"]["revision"] == 1
    assert seat.view()["revision"] == 1
    assert built == [0, 1]


def test_a_crowd_is_offered_each_update_a_slice_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sends to a crowd are spread over turns of the event loop, so that other requests are
    answered in between; every watcher still gets each revision once and in order."""
    monkeypatch.setattr(hub_module, "OFFER_SLICE", 2)

    async def scenario() -> tuple[list[list[int]], set[int]]:
        hub, turns = Hub(), 0
        crowd = [Watcher() for _ in range(10)]
        turns_of_sends: set[int] = set()
        for watcher in crowd:
            hub.join("g", watcher)  # type: ignore[arg-type]
            send = watcher.send_text

            async def counted(text: str, send: Any = send) -> None:
                turns_of_sends.add(turns)
                await send(text)

            watcher.send_text = counted  # type: ignore[method-assign]

        async def ticking() -> None:  # (another request: it counts the loop's turns)
            nonlocal turns
            while True:
                turns += 1
                await asyncio.sleep(0)

        ticker = asyncio.create_task(ticking())
        for revision in (1, 2, 3):
            announce(hub, revision)
            await until(lambda: all(w.sent[-1:] == [hub.announced("g")] for w in crowd), "sent")
        ticker.cancel()
        for watcher in crowd:
            hub.leave("g", watcher)  # type: ignore[arg-type]
        return [watcher.sent for watcher in crowd], turns_of_sends

    sent, turns_of_sends = asyncio.run(scenario())
    assert sent == [[1, 2, 3]] * 10
    assert len(turns_of_sends) >= 3 * 10 // 2  # (at most a slice of sends a turn)


def test_a_newer_update_replaces_one_still_being_offered_to_a_crowd(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(hub_module, "OFFER_SLICE", 2)

    async def scenario() -> list[list[int]]:
        hub = Hub()
        crowd = [Watcher() for _ in range(10)]
        for watcher in crowd:
            hub.join("g", watcher)  # type: ignore[arg-type]
        announce(hub, 1)
        await asyncio.sleep(0)  # (the first slice offered 1)
        announce(hub, 2)
        await until(lambda: all(w.sent[-1:] == [2] for w in crowd), "the newest sent")
        for watcher in crowd:
            hub.leave("g", watcher)  # type: ignore[arg-type]
        return [watcher.sent for watcher in crowd]

    sent = asyncio.run(scenario())
    assert all(watcher in ([1, 2], [2]) for watcher in sent)
    assert [1, 2] in sent and [2] in sent  # (offered 1 before 2 came; the rest only 2)
