"""The arena killed (SIGKILL) in the middle of a load of games, and started again: every move
that got a success reply is stored, every stored game replays legally, the database passes
SQLite's integrity check, watchers reconnect and catch up, and the computer's thinking processes
die with the server. Figures go to stdout (``-s``) for docs/web.md."""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Subprotocol

from agon.games import make_game
from agon.web.hub import SEAT_PROTOCOL
from web_fixtures import ArenaProcess, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("web-kill")]

GAME = "alak"
OPTIONS = {"size": 9}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ArenaProcess]:
    running = ArenaProcess(tmp_path / "arena.db")
    running.start()
    yield running
    running.kill()


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return status != "Z"


def test_the_thinking_processes_die_with_a_killed_server(server: ArenaProcess) -> None:
    created = httpx.post(f"{server.url}/api/games", json={
        "game": GAME, "options": OPTIONS, "opponent": "computer", "level": "beginner",
        "colour": "white",
    }).json()
    httpx.get(f"{server.url}/api/games/{created['id']}")
    deadline = time.monotonic() + 60
    while not server.descendants() and time.monotonic() < deadline:
        time.sleep(0.1)
    workers = server.descendants()
    assert workers, "the server started no worker"
    server.kill()
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in workers if alive(pid)]
    assert not left, f"{len(left)} of {len(workers)} workers outlived the server"


class Player(threading.Thread):
    """A client playing random legal moves in one game of its own, through any failure of the
    server; it keeps every move that got a success reply. Every other player sends its moves
    on the game's socket, as a page does, the others by HTTP."""

    def __init__(self, server: ArenaProcess, number: int, stop: threading.Event) -> None:
        super().__init__(name=f"player-{number}", daemon=True)
        self.server, self.stop, self.rng = server, stop, random.Random(number)
        self.against_computer = number % 4 == 0
        self.on_socket = number % 2 == 1
        self.game_id = ""
        self.token = ""
        self.acknowledged: list[str] = []
        self.failures = 0
        self.socket: ClientConnection | None = None
        self.socket_held = contextlib.ExitStack()
        self.sent = 0

    def request(self, method: str, path: str, **arguments: Any) -> httpx.Response | None:
        try:
            return httpx.request(method, f"{self.server.url}{path}", timeout=5, **arguments)
        except httpx.HTTPError:
            self.failures += 1
            time.sleep(0.05)
            return None

    def run(self) -> None:
        body = {"game": GAME, "options": OPTIONS, "level": "beginner",
                "opponent": "computer" if self.against_computer else "local"}
        while not self.game_id and not self.stop.is_set():
            answer = self.request("POST", "/api/games", json=body)
            if answer is not None and answer.status_code == 201:
                self.game_id, self.token = answer.json()["id"], answer.json()["token"]
        headers = {"X-Agon-Token": self.token}
        while not self.stop.is_set():
            answer = self.request("GET", f"/api/games/{self.game_id}", headers=headers)
            if answer is None or answer.status_code != 200:
                continue
            view = answer.json()
            if view["status"] != "active":
                return
            if view["thinking"]:
                time.sleep(0.02)
                continue
            state = make_game(view["game"], view["variant"]).new_state()
            for move in view["moves"]:
                state.play_text(move["text"])
            text = state.game.format_move(self.rng.choice(state.legal_moves()))
            ply = len(view["moves"]) + 1
            if self.on_socket:
                if self.move_on_socket(text):
                    self.acknowledged.append(f"{ply}:{text}")
                continue
            answer = self.request(
                "POST", f"/api/games/{self.game_id}/moves", json={"move": text}, headers=headers
            )
            if answer is not None and answer.status_code == 200:
                self.acknowledged.append(f"{ply}:{text}")
        self.socket_held.close()

    def move_on_socket(self, text: str) -> bool:
        """Send the move on the game's socket (opened again after a loss): whether it was
        answered done."""
        self.sent += 1
        try:
            if self.socket is None:
                self.socket = self.socket_held.enter_context(connect(
                    f"ws://127.0.0.1:{self.server.port}/ws/games/{self.game_id}", open_timeout=2,
                    subprotocols=[Subprotocol(SEAT_PROTOCOL + self.token)],
                ))
            self.socket.send(json.dumps(
                {"type": "move", "move": text, "token": self.token, "id": self.sent}))
            while (answer := json.loads(self.socket.recv(timeout=5)))["type"] == "update":
                pass
            return answer["id"] == self.sent and answer["type"] == "done"
        except Exception:  # (the server gone, or slow: a new socket, and the game looked at again)
            self.failures += 1
            self.socket_held.close()
            self.socket = None
            time.sleep(0.05)
            return False


class Watcher(threading.Thread):
    """A page's WebSocket: reconnects after each loss, keeps the latest revision seen."""

    def __init__(self, server: ArenaProcess, game_id: str, stop: threading.Event) -> None:
        super().__init__(name="watcher", daemon=True)
        self.server, self.game_id, self.stop = server, game_id, stop
        self.revision = -1
        self.connections = 0

    def run(self) -> None:
        address = f"ws://127.0.0.1:{self.server.port}/ws/games/{self.game_id}"
        while not self.stop.is_set():
            try:
                with connect(address, open_timeout=2) as socket:
                    self.connections += 1
                    while not self.stop.is_set():
                        try:
                            message = json.loads(socket.recv(timeout=0.5))
                        except TimeoutError:
                            continue
                        self.revision = max(self.revision, message["view"]["revision"])
            except (OSError, Exception):  # (a refused or lost connection: try again)
                time.sleep(0.1)


MOVES_BETWEEN_KILLS = 5
"""Acknowledged moves the players make before each kill, and after the last restart."""
DEADLINE_S = 180.0
"""How long the test waits for each count (generous: a loaded machine is slow, not wrong)."""


def test_a_killed_arena_loses_no_acknowledged_move(tmp_path: Path) -> None:
    server = ArenaProcess(tmp_path / "arena.db")
    server.start()
    stop, watching = threading.Event(), threading.Event()
    players = [Player(server, number, stop) for number in range(8)]
    for player in players:
        player.start()
    wait_for(lambda: all(player.game_id for player in players), "games created", DEADLINE_S)
    watcher = Watcher(server, players[1].game_id, watching)
    watcher.start()

    def acknowledged() -> int:
        return sum(len(player.acknowledged) for player in players)

    # each kill comes after some moves were acknowledged (counted, not timed: a loaded machine
    # makes fewer moves a second, never fewer moves to check)
    kills, restart_seconds = 3, []
    try:
        for _ in range(kills):
            target = acknowledged() + MOVES_BETWEEN_KILLS
            wait_for(
                lambda target=target: acknowledged() >= target, "moves before the kill",
                DEADLINE_S,
            )
            server.kill()
            time.sleep(0.3)
            restart_seconds.append(server.start())
        target = acknowledged() + MOVES_BETWEEN_KILLS
        wait_for(lambda: acknowledged() >= target, "moves after the last restart", DEADLINE_S)
    finally:
        stop.set()
        for player in players:
            player.join(timeout=30)
    # the watcher goes on until it has seen the game's last revision
    final = httpx.get(f"{server.url}/api/games/{players[1].game_id}", timeout=30).json()
    try:
        wait_for(
            lambda: watcher.revision >= final["revision"], "last revision at the watcher",
            DEADLINE_S,
        )
    finally:
        watching.set()
        watcher.join(timeout=10)
    lost, replayed_games = 0, 0
    for player in players:
        view = httpx.get(f"{server.url}/api/games/{player.game_id}", timeout=30).json()
        stored = [f"{ply}:{move['text']}" for ply, move in enumerate(view["moves"], start=1)]
        lost += len(set(player.acknowledged) - set(stored))
        state = make_game(view["game"], view["variant"]).new_state()
        for move in view["moves"]:
            state.play_text(move["text"])  # raises if a stored game is not legal
        replayed_games += 1
    server.kill()
    with sqlite3.connect(server.database) as database:
        assert database.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    print(
        f"\nkill test: {len(players)} games, {acknowledged()} acknowledged moves ("
        f"{sum(len(p.acknowledged) for p in players if p.on_socket)} on the games' sockets), "
        f"{kills} kills, "
        f"{lost} lost, {replayed_games} games replayed legally, restarts answering after "
        f"{', '.join(f'{seconds:.1f}' for seconds in restart_seconds)} s, watcher connected "
        f"{watcher.connections} times"
    )
    assert lost == 0
    assert acknowledged() >= (kills + 1) * MOVES_BETWEEN_KILLS
    assert all(player.acknowledged for player in players if player.on_socket), \
        "a player on the game's socket had no move acknowledged"
    assert watcher.connections >= kills + 1
    assert watcher.revision == final["revision"]
