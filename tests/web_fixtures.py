"""Fixtures and helpers of the web arena's tests (imported by test_web_*.py, not by conftest)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agon.core.game import State
from agon.games import make_game

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

from agon.web.app import create_app
from agon.web.config import ArenaLimits
from background import free_port


class Seat:
    """One player's side of a game, through a TestClient."""

    def __init__(self, client: TestClient, game_id: str, token: str | None) -> None:
        self.client = client
        self.game_id = game_id
        self.token = token

    @property
    def headers(self) -> dict[str, str]:
        return {"X-Agon-Token": self.token} if self.token else {}

    def get(self, path: str = "") -> Any:
        return self.client.get(f"/api/games/{self.game_id}{path}", headers=self.headers)

    def post(self, path: str, json: Any = None) -> Any:
        return self.client.post(f"/api/games/{self.game_id}{path}", json=json, headers=self.headers)

    def move(self, text: str) -> Any:
        return self.post("/moves", {"move": text})

    def view(self) -> dict[str, Any]:
        answer = self.get()
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def wait_for_turn(self, timeout: float = 30) -> dict[str, Any]:
        """The view once the computer has answered (or the game is over)."""
        deadline = time.monotonic() + timeout
        while True:
            view = self.view()
            if view["status"] != "active" or not view["thinking"]:
                return view
            assert time.monotonic() < deadline, "the computer never answered"
            time.sleep(0.02)


def wait_for(reached: Callable[[], Any], what: str, seconds: float = 60.0) -> Any:
    """What ``reached`` returns once it is true, asked every 50 ms for up to ``seconds``
    (generous: a loaded machine is slow, not wrong)."""
    deadline = time.monotonic() + seconds
    while not (found := reached()):
        assert time.monotonic() < deadline, f"no {what} within {seconds:.0f} s"
        time.sleep(0.05)
    return found


def receive_within(socket: Any, seconds: float) -> Any:
    """The socket's next JSON message; fails (rather than hangs) if none comes in time."""
    received: list[Any] = []
    reader = threading.Thread(target=lambda: received.append(socket.receive_json()), daemon=True)
    reader.start()
    reader.join(seconds)
    assert received, f"no message within {seconds} s"
    return received[0]


def start_game(client: TestClient, **body: Any) -> tuple[Seat, dict[str, Any]]:
    answer = client.post("/api/games", json=body)
    assert answer.status_code == 201, answer.text
    created = answer.json()
    return Seat(client, created["id"], created["token"]), created


def replayed(view: dict[str, Any]) -> State:
    """The position of a view, rebuilt independently through the rules engine."""
    state = make_game(view["game"], view["variant"]).new_state()
    for move in view["moves"]:
        state.play_text(move["text"])
    return state


UNLIMITED = ArenaLimits(
    games_per_minute=10**6, hints_per_minute=10**6, analyses_per_minute=10**6,
    reviews_per_minute=10**6, reads_per_minute=10**6, ponder_seconds=0,
)
"""The rates a test's many games and hints need (tests/test_web_hardening.py tries the
limits themselves), and no thinking on the opponent's time (tests/test_web_pondering.py tries
it), which would keep a core busy for half a minute after each of the computer's moves."""


DATABASES = ["sqlite", "postgresql"]


@pytest.fixture(params=DATABASES, name="arena_url")
def arena_url_on_both_databases(request: pytest.FixtureRequest, web_db: Path) -> str:
    """``arena_url`` of a module whose tests all run on each database the arena serves from:
    imported there (and named in its ``__all__``), it takes the place of conftest's."""
    if request.param == "sqlite":
        return str(web_db)
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def make_client(arena_url: str) -> Iterator[Callable[..., TestClient]]:
    """Opens TestClients on the test's database (a second one simulates a server restart)."""
    clients: list[TestClient] = []

    def opener(executor: str = "thread") -> TestClient:
        client = TestClient(
            create_app(arena_url, workers=1, executor=executor, warm=False, limits=UNLIMITED)
        )
        client.__enter__()
        clients.append(client)
        return client

    yield opener
    for client in reversed(clients):
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client()


class ArenaProcess:
    """``agon serve`` in a process of its own, to be killed (SIGKILL, like a crash) and started
    again on the same port and database."""

    def __init__(self, database: Path | str) -> None:
        self.database = database
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        """Start it; the seconds until it answers."""
        started = time.monotonic()
        environment = {
            **os.environ, "AGON_GAMES_PER_MINUTE": "100000", "AGON_READS_PER_MINUTE": "1000000"
        }
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from agon.cli import main; main()", "serve",
             "--port", str(self.port), "--db", str(self.database), "--workers", "1"],
            env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = started + 120
        while True:
            try:
                if httpx.get(f"{self.url}/api/meta", timeout=1).status_code == 200:
                    return time.monotonic() - started
            except httpx.HTTPError:
                pass
            assert self.process.poll() is None, "the arena server exited at start"
            assert time.monotonic() < deadline, "the arena server never answered"
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL the server alone (its thinking workers must die with it by themselves)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def descendants(self) -> set[int]:
        """The process ids of everything the server started (from /proc)."""
        assert self.process is not None
        children: dict[int, list[int]] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                children.setdefault(parent, []).append(int(entry.name))
        found: set[int] = set()
        waiting = [self.process.pid]
        while waiting:
            for child in children.get(waiting.pop(), []):
                found.add(child)
                waiting.append(child)
        return found

    def post(self, path: str, body: Any, token: str | None = None) -> dict[str, Any]:
        headers = {"X-Agon-Token": token} if token else {}
        answer = httpx.post(f"{self.url}{path}", json=body, headers=headers)
        answer.raise_for_status()
        return dict(answer.json())

    def view(self, game_id: str, token: str) -> dict[str, Any]:
        answer = httpx.get(f"{self.url}/api/games/{game_id}", headers={"X-Agon-Token": token})
        answer.raise_for_status()
        return dict(answer.json())

    def play_any_move(self, game_id: str, token: str) -> str:
        """Plays the first legal move of the game's position; returns it as written."""
        state = replayed(self.view(game_id, token))
        move = state.game.format_move(state.legal_moves()[0])
        self.post(f"/api/games/{game_id}/moves", {"move": move}, token)
        return move
