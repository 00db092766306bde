"""Other programs as players (``engine:COMMAND@SECONDS``): refereed by ``agon match`` and
``agon play``; a program that answers an illegal move, crashes, hangs or prints garbage loses its
game, and the match goes on (docs/engine.md, *Other programs as players*)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from agon.cli import app
from agon.core.errors import AgonError
from agon.games import make_game, names
from agon.search.match import run_match
from agon.study.external import (
    DEFAULT_MOVE_SECONDS,
    EngineSpec,
    make_player,
    parse_engine_spec,
)

ENGINE = "engine:agon engine alak --agent random@5s"
"""Agon's own engine as another program (its variant told by ``agon-game``)."""

BROKEN_ENGINE = """\
#!/usr/bin/env python3
import sys, time

mode = sys.argv[1]
last = None  # the last move played: its cell is a pit from then on, so playing it is illegal
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    number, words = (words[0], words[1:]) if words[0].isdigit() else ("", words)
    answer = "false" if words[0] == "known_command" else ""
    if words[0] == "play":
        last = words[2]
    elif words[0] == "genmove":
        if mode == "crash":
            print("warming up", file=sys.stderr)
            print("out of cheese", file=sys.stderr, flush=True)
            sys.exit(3)
        if mode == "hang":
            time.sleep(3600)
        if mode == "garbage":
            print("hello there", flush=True)
            continue
        answer = last or "a1-a2"
        last = answer
    print(f"={number} {answer}\\n", flush=True)
    if words[0] == "quit":
        break
"""
REASONS = {
    "illegal": "answered the illegal move",
    "crash": "ended (exit status 3); its last words: 'out of cheese'",
    "hang": "no answer to 'genmove",
    "garbage": "answered 'hello there' to 'genmove",
}

runner = CliRunner()


def agon(*args: str, input: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=input)


@pytest.fixture(autouse=True)
def programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``agon`` on the PATH, and a broken engine in the working folder (short specs: a spec is
    at most 100 characters)."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "broken_engine"
    script.write_text(BROKEN_ENGINE)
    script.chmod(0o755)


def broken_spec(mode: str) -> str:
    return f"engine:./broken_engine {mode}@1s"


def children() -> list[int]:
    """This process's child processes, zombies included."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat.rpartition(")")[2].split()[1])
            if parent == os.getpid():
                found.append(int(entry.name))
    return found


def test_specs_are_read_and_bad_ones_refused() -> None:
    assert parse_engine_spec("engine:prog --size 9") == EngineSpec(
        ("prog", "--size", "9"), DEFAULT_MOVE_SECONDS
    )
    assert parse_engine_spec('engine:"prog --flag x"@3s') == EngineSpec(
        ("prog", "--flag", "x"), 3
    )
    assert parse_engine_spec("engine:ssh user@host prog@2s").argv == (
        "ssh", "user@host", "prog"
    )
    for spec, fragment in [
        ("engine:", "names a program"),
        ("engine:prog@500ms", "whole seconds"),
        ("engine:prog@0s", "must be positive"),
        ('engine:"prog', "No closing quotation"),
        ("engine:prog\x07", "control character"),
        ("engine:" + "x" * 200, "over 100 characters"),
    ]:
        with pytest.raises(AgonError, match=fragment):
            parse_engine_spec(spec)


@pytest.mark.slow
def test_a_match_between_two_engines() -> None:
    result = agon(
        "match", "alak", "--size", "5", ENGINE, ENGINE.replace("@5s", "@4s"),
        "--games", "4", "--seed", "1", "--json",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["games"] == 4
    assert report["wins"] + report["draws"] + report["losses"] == 4
    for game in report["results"]:
        assert not game["forfeit"]
        assert game["moves"] >= 3 and game["end_reason"] and game["result"]


@pytest.mark.slow
@pytest.mark.parametrize("mode", sorted(REASONS))
def test_a_broken_engine_loses_each_game_and_the_match_goes_on(mode: str) -> None:
    game = make_game("alternator", {"size": "4x4"})
    before = children()
    report = run_match(
        game, broken_spec(mode), "random", 2, seed=1, make_player=make_player
    )
    assert len(report.games) == 2 and report.losses == 2
    for summary in report.games:
        loser = "Black" if summary.a_colour.label == "black" else "White"
        assert summary.forfeit
        assert summary.result == ("W+F" if loser == "Black" else "B+F")
        assert summary.end_reason.startswith(f"{loser} forfeits: {REASONS[mode]}")
    assert children() == before  # every program ended, and its status collected


def test_match_output_names_the_forfeits() -> None:
    result = agon(
        "match", "alternator", "--size", "4x4", broken_spec("crash"), "random",
        "--games", "2",
    )
    assert result.exit_code == 0, result.output
    assert "game 1: W+F, Black forfeits: ended (exit status 3)" in result.stdout
    assert "game 2: B+F, White forfeits: ended (exit status 3)" in result.stdout
    assert "0 wins, 0 draws, 2 losses" in result.stdout
    assert "Traceback" not in result.output


def test_a_program_that_cannot_start_is_refused_in_one_line() -> None:
    result = agon("match", "alak", "engine:/nonexistent/engine", "random")
    assert result.exit_code == 2
    assert "error: cannot start '/nonexistent/engine'" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_play_with_an_engine() -> None:
    spec = ENGINE.replace("random@5s", "greedy@5s")
    whole = agon("play", "alak", "--size", "5", "--black", "random", "--white", spec, input="")
    assert whole.exit_code == 0, whole.output
    assert f"White ({spec}) plays" in whole.stdout
    assert "Game over" in whole.stdout

    human = agon("play", "alak", "--size", "5", "--white", spec, input="3\n")
    assert human.exit_code == 0, human.output
    assert f"White ({spec}) plays" in human.stdout
    assert "end of input: the game is left unfinished" in human.stdout

    crash = broken_spec("crash")
    lost = agon("play", "alternator", "--size", "4x4", "--white", crash, input="a1-a2\n")
    assert lost.exit_code == 0, lost.output
    assert f"White ({crash}) forfeits: ended (exit status 3)" in lost.stdout
    assert "Traceback" not in lost.output

    # a record names the program, but only the command line starts one
    resumed = agon("play", "--resume", "alternator", input="quit\n")
    assert resumed.exit_code == 0, resumed.output
    assert "a program is started only where --white names it" in resumed.stdout


def test_the_example_engine_in_bash_plays_a_match() -> None:
    if "tictactoe" not in names():
        pytest.skip("the example game (examples/tictactoe) is not installed")
    script = Path(__file__).parents[1] / "examples" / "engines" / "random_tictactoe.sh"
    result = agon(
        "match", "tictactoe", f"engine:{script}@5s", "random", "--games", "4", "--json"
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["games"] == 4
    assert not any(game["forfeit"] for game in report["results"])
