"""Matches: colours, results, the Elo estimate, interruption, checkpoints and the ``agon match``
command."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agon.cli import app
from agon.core.errors import AgonError
from agon.core.player import Player
from agon.games import make_game
from agon.search.match import (
    GameSummary,
    elo_estimate,
    elo_from_score,
    opening_moves,
    play_game,
    run_match,
)

runner = CliRunner()
ALAK_5 = make_game("alak", {"size": 5})


def test_elo_of_known_scores() -> None:
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(0.75) == pytest.approx(400 * math.log10(3))  # 190.8
    assert elo_from_score(10 / 11) == pytest.approx(400.0)  # odds 10:1
    assert elo_from_score(0.25) == pytest.approx(-elo_from_score(0.75))


def test_elo_interval_from_the_normal_approximation() -> None:
    # Two wins and two losses: score 0.5, per-game deviation 0.5, standard error 0.25.
    estimate = elo_estimate([1.0, 0.0, 1.0, 0.0])
    assert estimate.difference == 0.0
    assert estimate.low == pytest.approx(elo_from_score(0.5 - 1.959964 * 0.25))
    assert estimate.high == pytest.approx(-estimate.low)
    # A draw counts half a win, and draws shrink the spread.
    drawn = elo_estimate([1.0, 0.5, 0.5, 0.0])
    assert drawn.difference == 0.0
    assert drawn.low is not None and drawn.low > estimate.low


def test_elo_of_a_clean_sweep_is_unbounded_with_a_one_sided_bound() -> None:
    sweep = elo_estimate([1.0] * 10)
    assert sweep.difference is None and sweep.high is None
    assert sweep.low == pytest.approx(elo_from_score(0.05 ** (1 / 10)))
    wipeout = elo_estimate([0.0] * 10)
    assert wipeout.difference is None and wipeout.low is None
    assert wipeout.high == pytest.approx(-sweep.low)
    # A bound past a score of 1 is unbounded too.
    assert elo_estimate([1.0, 1.0, 0.5]).high is None
    assert elo_estimate([]).difference is None


def test_elo_of_all_draws_is_even_with_a_real_interval() -> None:
    draws = elo_estimate([0.5] * 4)
    assert draws.difference == 0.0 and str(draws.difference) == "0.0"
    assert draws.low == pytest.approx(elo_from_score(0.5 - 1.959964 * 0.25))
    assert draws.high == pytest.approx(-draws.low)


def test_colours_alternate_and_summaries_add_up() -> None:
    report = run_match(ALAK_5, "greedy", "random", games=4, seed=5)
    colours = [g.a_colour for g in sorted(report.games, key=lambda g: g.number)]
    assert colours == [Player.BLACK, Player.WHITE, Player.BLACK, Player.WHITE]
    assert report.wins + report.draws + report.losses == 4
    for summary in report.games:
        assert summary.a_margin == (summary.margin if summary.a_colour is Player.BLACK
                                    else -summary.margin)


@pytest.mark.slow
def test_a_seeded_match_with_count_budgets_repeats_in_any_number_of_processes() -> None:
    one = run_match(ALAK_5, "mcts:50", "alphabeta:100", games=2, jobs=1, seed=9)
    two = run_match(ALAK_5, "mcts:50", "alphabeta:100", games=2, jobs=2, seed=9)
    assert one.to_json()["results"] == two.to_json()["results"]
    assert play_game(ALAK_5, "mcts:50", "alphabeta:100", 1, 9) == one.games[0]


def test_random_openings_are_shared_by_a_pair_and_vary_between_pairs() -> None:
    game = make_game("alternator", {"size": "4x4"})
    first, second, third = (opening_moves(game, 3, number, 4) for number in (1, 2, 3))
    assert first == second and first != third and len(first) == 4
    state = game.new_state()
    for move in first:
        state.play(move)  # (legal)
    assert opening_moves(game, 3, 1, 0) == []
    assert len(opening_moves(make_game("alak", {"size": 2}), 3, 1, 50)) < 50  # it ends first
    # deterministic agents: one pair's two games again and again without them, not with them
    same = run_match(game, "alphabeta:300", "alphabeta:300", games=6, seed=3)
    varied = run_match(game, "alphabeta:300", "alphabeta:300", games=6, seed=3,
                       opening_plies=4)
    assert len({(g.a_colour, g.margin, g.moves) for g in same.games}) == 2
    assert len({(g.a_colour, g.margin, g.moves) for g in varied.games}) > 2
    assert varied.to_json()["opening_plies"] == 4


def test_interrupted_match_reports_the_games_finished() -> None:
    def stop_after_two(summary: GameSummary) -> None:
        if summary.number == 2:
            raise KeyboardInterrupt

    report = run_match(ALAK_5, "random", "random", games=10, seed=1, on_game=stop_after_two)
    assert report.interrupted
    assert len(report.games) == 2


def test_a_stop_heard_but_lost_ends_the_match_between_moves() -> None:
    """A stop whose interrupt was lost in a callback from C was still heard: the game under
    way asks before each move, and the match ends as on Ctrl-C."""
    from agon.core.workers import hear_stop

    def stop_after_one(summary: GameSummary) -> None:
        hear_stop()

    try:
        report = run_match(ALAK_5, "random", "random", games=10, seed=1, on_game=stop_after_one)
    finally:
        hear_stop(False)
    assert report.interrupted
    assert len(report.games) == 1


def test_match_command_json_has_every_key() -> None:
    result = runner.invoke(
        app, ["match", "alak", "greedy", "random", "--size", "5", "--games", "4", "--jobs", "1",
              "--seed", "1", "--json"],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    for key in ("game", "a", "b", "games", "wins", "draws", "losses", "score", "mean_margin",
                "elo", "elo_low", "elo_high", "interrupted", "results"):
        assert key in report
    assert report["games"] == 4 and report["a"] == "greedy" and not report["interrupted"]
    assert report["wins"] + report["draws"] + report["losses"] == 4
    assert [r["a_colour"] for r in report["results"]] == ["black", "white", "black", "white"]


def test_match_command_text_report() -> None:
    result = runner.invoke(
        app, ["match", "alternator", "greedy", "random", "--size", "3x3", "--games", "2",
              "--seed", "2"],
    )
    assert result.exit_code == 0, result.output
    assert "A = greedy, B = random" in result.stdout
    assert "Elo A - B" in result.stdout


def test_match_command_writes_a_line_a_game_where_stderr_is_no_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A match run in the background (into a log) shows how far it is, a game a line."""
    for name in ("FORCE_COLOR", "TTY_INTERACTIVE", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    args = ["match", "alak", "greedy", "random", "--size", "5", "--games", "3", "--seed", "1",
            "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert [line.split(":")[0] for line in lines] == ["1/3 games", "2/3 games", "3/3 games"]
    report = json.loads(result.stdout)
    tally = f"+{report['wins']} ={report['draws']} -{report['losses']}"
    assert lines[-1].endswith(f"greedy vs random  {tally}")
    quiet = runner.invoke(app, [*args, "--quiet"])
    assert quiet.exit_code == 0 and quiet.stderr == ""
    assert json.loads(quiet.stdout)["wins"] == report["wins"]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["alak", "minimax", "random"], "unknown agent"),
        (["alak", "mcts:soon", "random"], "budget"),
        (["alternator", "random", "random", "--rules", "baljeu"],
         "not an option of Alternator"),
    ],
)
def test_match_command_refuses_bad_input_in_one_line(args: list[str], fragment: str) -> None:
    result = runner.invoke(app, ["match", *args, "--games", "1"])
    assert result.exit_code == 2
    assert fragment in result.stderr
    assert "Traceback" not in result.output


def test_sigterm_stops_the_match_command_which_reports_the_games_finished() -> None:
    """As Ctrl-C: a match stopped by ``kill`` (or a job scheduler) reports its games so far
    (a stopped match had lost them all). The program signals itself after its second game."""
    script = """
import os, signal
from agon.cli import search_commands
from agon.console import main

real = search_commands.run_match

def terminated_after_two(game, a, b, games, jobs, seed, on_game, *rest, **named):
    def then_terminated(summary):
        on_game(summary)
        if summary.number == 2:
            os.kill(os.getpid(), signal.SIGTERM)
    return real(game, a, b, games, jobs, seed, then_terminated, *rest, **named)

search_commands.run_match = terminated_after_two
main()
"""
    command = [sys.executable, "-c", script, "match", "alak", "random", "random", "--size", "5",
               "--games", "10", "--seed", "1", "--json"]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 130, finished.stderr
    report = json.loads(finished.stdout)
    assert report["interrupted"] and report["games"] == 2


def _stop_after(count: int) -> Callable[[GameSummary], None]:
    def stop(summary: GameSummary) -> None:
        if summary.number == count:
            raise KeyboardInterrupt

    return stop


def test_a_match_with_a_checkpoint_goes_on_where_it_stopped(tmp_path: Path) -> None:
    """Stopped after two games and started again (with more games asked for), the match is
    the one played without a stop: the same games, their move times kept."""
    kept = tmp_path / "match.jsonl"
    whole = run_match(ALAK_5, "greedy", "random", games=6, seed=4)
    stopped = run_match(ALAK_5, "greedy", "random", games=4, seed=4, on_game=_stop_after(2),
                        checkpoint=kept)
    assert stopped.interrupted and len(stopped.games) == 2
    heard: list[list[GameSummary]] = []
    resumed = run_match(ALAK_5, "greedy", "random", games=6, seed=4, checkpoint=kept,
                        on_resumed=heard.append)
    assert heard == [stopped.games] and resumed.resumed == 2 and not resumed.interrupted
    assert resumed.to_json()["results"] == whole.to_json()["results"]
    assert resumed.move_times("a").moves == whole.move_times("a").moves
    assert len(kept.read_text().splitlines()) == 1 + 6
    again = run_match(ALAK_5, "greedy", "random", games=6, seed=4, checkpoint=kept,
                      on_game=lambda summary: pytest.fail("a kept game was played again"))
    assert again.resumed == 6 and again.to_json()["results"] == whole.to_json()["results"]


def test_a_match_without_a_seed_reports_the_one_it_drew() -> None:
    drawn = run_match(ALAK_5, "greedy", "random", games=3)
    again = run_match(ALAK_5, "greedy", "random", games=3, seed=drawn.seed)
    assert again.to_json()["results"] == drawn.to_json()["results"]
    assert drawn.to_json()["seed"] == drawn.seed


def test_a_checkpoint_keeps_the_seed_drawn_for_a_match_without_one(tmp_path: Path) -> None:
    kept = tmp_path / "match.jsonl"
    first = run_match(ALAK_5, "greedy", "random", games=2, checkpoint=kept)
    assert isinstance(first.seed, int)
    second = run_match(ALAK_5, "greedy", "random", games=4, checkpoint=kept)
    assert second.seed == first.seed and second.resumed == 2
    assert second.to_json()["results"] == run_match(
        ALAK_5, "greedy", "random", games=4, seed=first.seed
    ).to_json()["results"]


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"spec_b": "greedy"}, "keeps another match"),
        ({"seed": 5}, "keeps another match"),
        ({"opening_plies": 1}, "keeps another match"),
        ({"game": make_game("alak", {"size": 6})}, "keeps another match"),
        ({"game": make_game("alak", {"size": 5, "edge_capture": False})}, "keeps another match"),
    ],
)
def test_another_match_s_checkpoint_is_refused_and_left_as_it_was(
    tmp_path: Path, change: dict[str, Any], fragment: str
) -> None:
    kept = tmp_path / "match.jsonl"
    run_match(ALAK_5, "greedy", "random", games=2, seed=4, checkpoint=kept)
    before = kept.read_bytes()
    settings: dict[str, Any] = {"game": ALAK_5, "spec_a": "greedy", "spec_b": "random",
                                "games": 3, "seed": 4, "checkpoint": kept, **change}
    with pytest.raises(AgonError, match=fragment):
        run_match(**settings)
    assert kept.read_bytes() == before


def test_a_checkpoint_is_of_one_komi(tmp_path: Path) -> None:
    """Options that a variant's name leaves out (Alternator's komi) still name the match."""
    kept = tmp_path / "match.jsonl"
    board = {"size": "2x2"}
    run_match(make_game("alternator", board), "greedy", "random", games=1, seed=1,
              checkpoint=kept)
    with pytest.raises(AgonError, match="keeps another match"):
        run_match(make_game("alternator", {**board, "komi": 0.5}), "greedy", "random", games=2,
                  seed=1, checkpoint=kept)


def test_a_file_that_is_no_checkpoint_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    with pytest.raises(AgonError, match="is not a match's checkpoint"):
        run_match(ALAK_5, "greedy", "random", games=2, seed=4, checkpoint=notes)
    assert notes.read_text() == "my notes\n"


def test_a_game_cut_short_in_the_file_is_dropped_and_a_changed_one_refused(
    tmp_path: Path,
) -> None:
    kept = tmp_path / "match.jsonl"
    run_match(ALAK_5, "greedy", "random", games=3, seed=4, checkpoint=kept)
    lines = kept.read_text().splitlines()
    kept.write_text("\n".join(lines) + '\n{"game": 4, "a_colo')  # (killed as it wrote)
    resumed = run_match(ALAK_5, "greedy", "random", games=4, seed=4, checkpoint=kept)
    assert resumed.resumed == 3 and len(resumed.games) == 4
    assert len(kept.read_text().splitlines()) == 1 + 4  # (the torn line gone)
    changed = [*lines[:2], lines[2].replace('"white"', '"black"'), *lines[3:]]
    kept.write_text("\n".join(changed) + "\n")
    with pytest.raises(AgonError, match=r"line 3 of .* is not a finished game"):
        run_match(ALAK_5, "greedy", "random", games=4, seed=4, checkpoint=kept)
    assert kept.read_text() == "\n".join(changed) + "\n"


def test_match_command_goes_on_from_its_checkpoint(tmp_path: Path) -> None:
    kept = tmp_path / "match.jsonl"
    args = ["match", "alak", "greedy", "random", "--size", "5", "--seed", "1", "--json",
            "--checkpoint", str(kept)]
    first = runner.invoke(app, [*args, "--games", "2"])
    assert first.exit_code == 0, first.output
    second = runner.invoke(app, [*args, "--games", "3"])
    assert second.exit_code == 0, second.output
    report = json.loads(second.stdout)
    assert report["games"] == 3 and report["resumed"] == 2
    assert "2/3 games kept in" in second.stderr
    other = runner.invoke(app, ["match", "alak", "random", "greedy", "--size", "5", "--games",
                                "1", "--checkpoint", str(kept)])
    assert other.exit_code == 2 and "keeps another match" in other.stderr
    assert "Traceback" not in other.output
