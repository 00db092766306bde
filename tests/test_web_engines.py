"""Other programs as the arena's computer levels (``agon serve --engines FILE``): the
configuration read and refused in one line, a game against such a level played through the API
with its own process, a broken program forfeiting its game, and the room programs may take."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agon.cli import app as cli_app
from agon.core.records import GameRecord
from agon.games import make_game
from agon.web.app import create_app
from agon.web.config import ArenaLimits
from agon.web.engines import EngineLevel, read_engine_levels
from agon.web.levels import LEVELS_BY_KEY
from background import living_processes
from web_fixtures import Seat, TestClient, replayed, start_game

AGON = Path(sys.executable).parent / "agon"
CRASHING_ENGINE = """\
#!/usr/bin/env python3
import sys

for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    number, words = (words[0], words[1:]) if words[0].isdigit() else ("", words)
    if words[0] == "genmove":
        print("the network file is missing", file=sys.stderr, flush=True)
        sys.exit(2)
    answer = "false" if words[0] == "known_command" else ""
    print(f"={number} {answer}\\n", flush=True)
    if words[0] == "quit":
        break
"""
CONFIG = f"""\
[engines.agon-random]
label = "Agon's random engine"
command = "{AGON} engine alak --agent random"
seconds = 5
games = ["alak"]

[engines.crashing]
label = "Crashing"
command = ["./crashing_engine"]
seconds = 2
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    script = tmp_path / "crashing_engine"
    script.write_text(CRASHING_ENGINE)
    script.chmod(0o755)
    path = tmp_path / "engines.toml"
    path.write_text(CONFIG)
    return path


def arena_client(
    tmp_path: Path, levels: tuple[EngineLevel, ...], at_once: int = 8
) -> TestClient:
    limits = ArenaLimits(games_per_minute=10**6, reads_per_minute=10**6, engines_at_once=at_once)
    return TestClient(create_app(
        str(tmp_path / "arena.db"), workers=1, executor="thread", warm=False, limits=limits,
        engine_levels=levels,
    ))


@pytest.fixture
def client(tmp_path: Path, config: Path) -> Iterator[TestClient]:
    with arena_client(tmp_path, read_engine_levels(config, LEVELS_BY_KEY)) as opened:
        yield opened


def programs_running(name: str) -> int:
    """This process's children whose command line holds ``name``."""
    return sum(
        parent == os.getpid() and name in command
        for parent, _, command in living_processes().values()
    )


def play_to_the_end(seat: Seat, timeout: float = 120) -> dict[str, Any]:
    """Play the first legal move at each turn of the person until the game is over."""
    deadline = time.monotonic() + timeout
    while True:
        view = seat.wait_for_turn(timeout=60)
        if view["status"] != "active":
            return view
        state = replayed(view)
        move = next(m for m in state.legal_moves() if m != state.game.pass_move)
        answer = seat.move(state.game.format_move(move))
        assert answer.status_code == 200, answer.text
        assert time.monotonic() < deadline, "the game never ended"


# --- the configuration ---------------------------------------------------------------------------


def test_the_configuration_is_read(config: Path) -> None:
    levels = read_engine_levels(config, LEVELS_BY_KEY)
    assert [level.key for level in levels] == ["agon-random", "crashing"]
    first, second = levels
    assert first.label == "Agon's random engine" and first.games == ("alak",)
    assert first.engine.argv == (str(AGON), "engine", "alak", "--agent", "random")
    assert first.engine.seconds == 5 and first.plays("alak") and not first.plays("alternator")
    assert second.engine.argv == (str(config.parent / "crashing_engine"),)
    assert second.games is None and second.plays("alternator")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[engines.x\n", "is not TOML"),
        ("[players.x]\ncommand = 'sh'\n", "unknown table 'players'"),
        ("title = 'x'\n", "unknown table 'title'"),
        ("[engines]\n", "configures no engine"),
        ("[engines.Big]\ncommand = 'sh'\n", "a level's key is at most 24 of a-z"),
        ("[engines.hard]\ncommand = 'sh'\n", "'hard' is already a level of the arena"),
        ("[engines.x]\ncommand = 'sh'\ncolour = 'red'\n", "unknown field 'colour'"),
        ("[engines.x]\nlabel = 3\ncommand = 'sh'\n", "'label' must be a text"),
        ("[engines.x]\nlabel = \"a\\u0007\"\ncommand = 'sh'\n", "control character"),
        ("[engines.x]\ncommand = 'sh'\nseconds = 1.5\n", "'seconds' must be a whole number"),
        ("[engines.x]\ncommand = 'sh'\nseconds = 0\n", "'seconds' must be from 1 to 3600"),
        ("[engines.x]\ncommand = 'sh'\nseconds = true\n", "'seconds' must be a whole"),
        ("[engines.x]\ncommand = 'sh'\ngames = ['chess']\n", "there is no game 'chess'"),
        ("[engines.x]\ncommand = 'sh'\ngames = 'alak'\n", "'games' must be a list"),
        ("[engines.x]\ncommand = ''\n", "'command' names no program"),
        ("[engines.x]\ncommand = 7\n", "'command' must be the program and its arguments"),
        ("[engines.x]\ncommand = 'sh \"x'\n", "'command': No closing quotation"),
        ("[engines.x]\ncommand = 'no-such-program-here'\n", "no program 'no-such-program-here'"),
        ("[engines.x]\ncommand = './missing'\n", "missing is not a program"),
        ("[engines.x]\ncommand = './engines.toml'\n", "engines.toml is not a program"),
        ("[engines.x]\n", "'command' must be the program"),
    ],
)
def test_a_bad_configuration_is_refused_in_one_line(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "engines.toml"
    path.write_text(text)
    with pytest.raises(Exception) as refused:
        read_engine_levels(path, LEVELS_BY_KEY)
    assert type(refused.value).__name__ == "AgonError"
    assert message in str(refused.value) and "\n" not in str(refused.value)
    assert str(path) in str(refused.value)


def test_a_configuration_file_that_is_no_file_or_too_large_is_refused(tmp_path: Path) -> None:
    large = tmp_path / "large.toml"
    large.write_text("# " + "x" * 70_000)
    for path, message in [(large, "too large"), (tmp_path, "not a regular file"),
                          (tmp_path / "none.toml", "no such file")]:
        with pytest.raises(Exception, match=message):
            read_engine_levels(path)


def test_serve_refuses_a_bad_configuration_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[engines.x]\ncommand = 'no-such-program-here'\n")
    result = CliRunner().invoke(cli_app, ["serve", "--engines", str(bad), "--db",
                                          str(tmp_path / "a.db")])
    assert result.exit_code != 0
    assert "no program 'no-such-program-here'" in result.output
    assert "Traceback" not in result.output


# --- in the arena --------------------------------------------------------------------------------


def test_the_lobby_lists_each_level_with_its_games(client: TestClient) -> None:
    levels = {level["key"]: level for level in client.get("/api/meta").json()["levels"]}
    assert list(levels) == [*LEVELS_BY_KEY, "agon-random", "crashing"]
    assert levels["agon-random"]["games"] == ["alak"]
    assert levels["agon-random"]["agent"] == "another program"
    assert levels["crashing"]["games"] is None and levels["beginner"]["games"] is None


def test_a_level_is_offered_only_for_its_games(client: TestClient) -> None:
    answer = client.post("/api/games", json={
        "game": "alternator", "opponent": "computer", "level": "agon-random",
    })
    assert answer.status_code == 400
    assert answer.json()["detail"] == (
        "the level 'agon-random' (Agon's random engine) plays alak only"
    )


def test_a_game_against_a_program_has_its_own_process_until_it_ends(
    client: TestClient,
) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 7}, opponent="computer",
                         level="agon-random", colour="white")
    view = seat.wait_for_turn(timeout=60)
    assert view["players"]["black"]["label"] == "Computer · Agon's random engine"
    assert len(view["moves"]) == 1
    assert programs_running("engine alak") == 1
    final = play_to_the_end(seat)
    replayed(final)  # every move of the program obeyed the rules
    assert final["reason"] is not None and "forfeit" not in final["reason"]
    deadline = time.monotonic() + 30
    while programs_running("engine alak"):
        assert time.monotonic() < deadline, "the program outlived its game"
        time.sleep(0.05)
    record = GameRecord.from_json(seat.get("/record").text, make_game)
    assert record.players["black"] == "Agon's random engine (engine)"


def test_a_program_that_crashes_forfeits_its_game(client: TestClient) -> None:
    seat, _ = start_game(client, game="alternator", options={"width": 3, "height": 3},
                         opponent="computer", level="crashing", colour="white")
    view = seat.wait_for_turn(timeout=60)
    assert view["status"] == "over" and view["result"] == "W+F"
    assert view["headline"] == "White wins by forfeit"
    assert view["reason"].startswith("Black (Computer · Crashing) forfeits: ended (exit status 2)")
    assert "its last words: 'the network file is missing'" in view["reason"]
    record = GameRecord.from_json(seat.get("/record").text, make_game)
    assert (record.result, record.reason) == ("W+F", view["reason"])
    assert programs_running("crashing_engine") == 0


def test_programs_make_room_for_each_other(tmp_path: Path, config: Path) -> None:
    """With room for one program, two games take turns: each program is ended to make room
    for the other game's, and started again (and told the game's moves) at its next turn."""
    levels = read_engine_levels(config, LEVELS_BY_KEY)
    with arena_client(tmp_path, levels, at_once=1) as opened:
        seats = [
            start_game(opened, game="alak", options={"size": 9}, opponent="computer",
                       level="agon-random", colour="black")[0]
            for _ in range(2)
        ]
        for _ in range(2):
            for seat in seats:
                view = seat.view()
                if view["status"] != "active":
                    continue
                state = replayed(view)
                move = next(m for m in state.legal_moves() if m != state.game.pass_move)
                assert seat.move(state.game.format_move(move)).status_code == 200
                after = seat.wait_for_turn(timeout=60)
                assert after["status"] == "active" or "forfeit" not in (after["reason"] or "")
                assert programs_running("engine alak") <= 1
        for seat in seats:
            view = seat.view()
            assert len(view["moves"]) >= 4 or view["status"] == "over"
            replayed(view)
