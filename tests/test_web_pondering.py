"""The computer's agents in the arena: a game's home worker, and thinking on the opponent's
time (agon.web.thinking, agon.web.levels)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agon.core.errors import AgonError
from agon.web import levels
from agon.web import thinking as thinking_module
from agon.web.app import create_app
from agon.web.config import ArenaLimits
from web_fixtures import UNLIMITED, TestClient, replayed, start_game


def open_arena(database: Path, workers: int, ponder_seconds: float) -> Iterator[TestClient]:
    limits = replace(UNLIMITED, ponder_seconds=ponder_seconds)
    app = create_app(str(database), workers=workers, executor="thread", warm=False,
                     limits=limits)
    with TestClient(app) as client:
        yield client


@pytest.fixture
def three_workers(web_db: Path) -> Iterator[TestClient]:
    yield from open_arena(web_db, workers=3, ponder_seconds=0)


@pytest.fixture
def pondering(web_db: Path) -> Iterator[TestClient]:
    yield from open_arena(web_db, workers=1, ponder_seconds=120)


def any_move(view: dict[str, Any]) -> str:
    state = replayed(view)
    moves = [m for m in state.legal_moves() if m != state.game.pass_move]
    return state.game.format_move(moves[0])


def test_a_games_turns_are_thought_about_in_its_home_worker(
    three_workers: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    where: dict[str, set[str]] = {}
    real_think = thinking_module.think

    def recording(*arguments: Any) -> dict[str, Any]:
        where.setdefault(arguments[5], set()).add(threading.current_thread().name)
        return real_think(*arguments)

    monkeypatch.setattr(thinking_module, "think", recording)
    computer = three_workers.app.state.arena.computer
    for _ in range(6):
        seat, _ = start_game(three_workers, game="alak", options={"size": 7},
                             opponent="computer", level="easy", colour="white")
        view = seat.wait_for_turn()
        for _ in range(2):
            seat.move(any_move(view))
            view = seat.wait_for_turn()
        home = computer.home_of(seat.game_id)
        assert len(where[seat.game_id]) == 1
        assert where[seat.game_id].pop().startswith(f"agent-{home}_")
    assert len({computer.home_of(game) for game in where}) > 1  # (games spread over workers)


def test_the_computer_thinks_on_its_opponents_time_and_gives_way(pondering: TestClient) -> None:
    computer = pondering.app.state.arena.computer
    # (the strongest level thinks for a time on every variant, calibrated or not)
    seat, _ = start_game(pondering, game="alternator", options={"size": "6x6"},
                         opponent="computer", level="strongest", colour="black")
    assert seat.move(any_move(seat.view())).status_code == 200
    view = seat.wait_for_turn(timeout=60)
    deadline = time.monotonic() + 60
    while not computer._ponders:
        assert time.monotonic() < deadline, "the computer never thought on its opponent's time"
        time.sleep(0.02)
    time.sleep(0.5)
    asked = time.monotonic()
    assert seat.move(any_move(view)).status_code == 200
    assert len(seat.wait_for_turn(timeout=60)["moves"]) == 4
    # the ponder (120 s) gave way to the turn at once
    assert time.monotonic() - asked < 60
    while seat.game_id not in computer.pondered:
        assert time.monotonic() < deadline + 60, "the ponder never ended"
        time.sleep(0.02)
    assert computer.pondered[seat.game_id] > 0


def test_a_ponder_gives_way_and_the_next_work_lets_it_think_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stop = threading.Event()
    monkeypatch.setattr(levels._worker, "stop", stop, raising=False)
    position = ("alak", {"size": 9}, ["5"], "mcts:1s", 1, "a game")
    stop.set()  # work came for this worker
    started = time.monotonic()
    assert levels.ponder(*position, 30.0) == 0
    assert time.monotonic() - started < 20
    assert levels.as_work(int, "7") == 7 and not stop.is_set()
    assert levels.ponder(*position, 0.3) > 0


def test_pondering_may_be_switched_off_but_not_below_none() -> None:
    assert ArenaLimits.from_environment(ponder_seconds=0).ponder_seconds == 0
    assert ArenaLimits().ponder_seconds > 0
    with pytest.raises(AgonError, match="at least 0"):
        ArenaLimits.from_environment(ponder_seconds=-1)
    with pytest.raises(AgonError, match="positive"):
        ArenaLimits.from_environment(hints_per_minute=0)
