"""Fixtures and helpers of the web arena's tests (imported by test_web_*.py, not by conftest)."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agon.core.game import State
from agon.games import make_game

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

from agon.web.app import create_app
from agon.web.config import ArenaLimits


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


UNLIMITED = ArenaLimits(games_per_minute=10**6, hints_per_minute=10**6)
"""The rates a test's many games and hints need (tests/test_web_hardening.py tries the
limits themselves)."""


@pytest.fixture
def web_db(tmp_path: Path) -> Path:
    return tmp_path / "arena.db"


@pytest.fixture
def make_client(web_db: Path) -> Iterator[Callable[..., TestClient]]:
    """Opens TestClients on the test's database (a second one simulates a server restart)."""
    clients: list[TestClient] = []

    def opener(executor: str = "thread") -> TestClient:
        client = TestClient(
            create_app(str(web_db), workers=1, executor=executor, warm=False, limits=UNLIMITED)
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
