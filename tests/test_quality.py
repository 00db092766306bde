"""`agon quality`: the margin an agent's move gives away, against plain minimax, and the
report and command around it."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from tests.test_solve import reference
from typer.testing import CliRunner

from agon.cli import app
from agon.cli.common import INTERRUPTED
from agon.core.game import Game
from agon.core.player import Player
from agon.games.alak import Alak
from agon.games.alak.rules import AlakRules
from agon.games.alternator import Alternator
from agon.search.registry import make_agent
from agon.solve import quality
from agon.solve.quality import QualityReport, _loss, measure_quality
from agon.solve.solution import SolveInterrupted
from agon.solve.solver import Solver

runner = CliRunner()


@pytest.mark.parametrize(
    ("game", "moves"),
    [
        (Alternator(2, 3), []),
        (Alternator(3, 2, 0.5), []),
        (Alak(5, AlakRules.BALJEU), [1]),
        (Alak(4, AlakRules.TROMP_TAYLOR), [1, 2]),
        (Alak(3, AlakRules.TRADITIONAL), []),
    ],
    ids=str,
)
def test_loss_is_the_margin_a_move_gives_away(game: Game, moves: list[int]) -> None:
    state = game.new_state()
    state.play_all(moves)
    value, move_values = reference(state)
    view = -1 if state.to_move is Player.WHITE else 1
    solver = Solver(game, 14)
    losses = {move: _loss(solver, state, move) for move in state.legal_moves()}
    assert losses == {move: view * (value - after) for move, after in move_values.items()}
    assert min(losses.values()) == 0
    assert max(losses.values()) > 0  # a position where a move can be a mistake


def test_random_play_gives_points_away_and_the_report_adds_up() -> None:
    report = measure_quality(Alak(6, AlakRules.BALJEU), "random", positions=12, seed=3)
    assert report.positions == report.from_random + report.from_self_play == 12
    assert report.from_random == 6
    assert 0 < report.optimal < report.positions
    assert report.total_loss > 0
    assert report.mean_loss == report.total_loss / 12
    tallies = report.breakdown.values()
    assert sum(tally.judged for tally in tallies) == report.judged
    assert sum(tally.optimal for tally in tallies) == report.optimal
    assert sum(tally.given_away for tally in tallies) == pytest.approx(report.total_loss)
    for source, wanted in ((quality.RANDOM, 6), (quality.SELF_PLAY, 6)):
        assert sum(t.judged for (s, _), t in report.breakdown.items() if s == source) == wanted
    assert all(first == quality.first_ply_of_span(first) for _, first in report.breakdown)


def test_plies_are_counted_alone_then_in_spans_that_double() -> None:
    firsts = [quality.first_ply_of_span(ply) for ply in range(20)]
    assert firsts == [0, 1, 2, 3, *[4] * 4, *[8] * 8, *[16] * 4]
    assert [quality.span_text(first) for first in (0, 3, 4, 8, 64)] == [
        "0", "3", "4–7", "8–15", "64–127"
    ]


def test_positions_not_settled_in_time_are_left_out_and_counted() -> None:
    # 8 points with edge capture: some positions take more than one chunk of search, and a
    # limit this small stops every solve at its first chunk's end
    report = measure_quality(Alak(8), "random", positions=6, seed=2, max_seconds=1e-9)
    assert 0 < report.unsettled < report.positions == 6
    assert report.judged == report.positions - report.unsettled
    assert report.mean_loss == report.total_loss / report.judged
    assert report.optimal <= report.judged
    assert report.to_json()["unsettled"] == report.unsettled


def test_a_stop_while_judging_reports_the_positions_judged_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    judged = 0
    original = quality._loss

    def stopped_after_three(*arguments: Any) -> float:
        nonlocal judged
        judged += 1
        if judged > 3:  # Ctrl-C in the solver
            raise SolveInterrupted(-1, 1, 0, 0.0, timed_out=False)
        return original(*arguments)

    monkeypatch.setattr(quality, "_loss", stopped_after_three)
    report = measure_quality(Alak(5), "random", positions=10, seed=1, max_seconds=60)
    assert (report.positions, report.not_reached, report.judged) == (10, 7, 3)
    assert report.mean_loss == report.total_loss / 3
    assert report.to_json()["not_reached"] == 7


@pytest.mark.parametrize(
    ("game", "agent"),
    [(Alak(6, AlakRules.BALJEU), "random"), (Alternator(2, 3), "alphabeta:300")],
    ids=str,
)
def test_worker_processes_judge_the_same_positions_alike(game: Game, agent: str) -> None:
    alone = measure_quality(game, agent, positions=24, seed=4)
    spread = measure_quality(game, agent, positions=24, seed=4, jobs=2)
    figures = ("positions", "from_self_play", "optimal", "total_loss", "unsettled", "breakdown")
    assert [getattr(spread, name) for name in figures] == [
        getattr(alone, name) for name in figures
    ]


def test_worker_processes_play_the_same_self_play_games() -> None:
    game = Alak(6, AlakRules.BALJEU)
    contender = quality.Contender("random", make_agent)
    alone, _ = quality._self_play(game, contender, 40, random.Random(9))
    spread, _ = quality._self_play(game, contender, 40, random.Random(9), jobs=3)
    assert len(alone) >= 40
    assert [(state.history, move) for state, move in spread] == [
        (state.history, move) for state, move in alone
    ]


def test_the_quality_command_says_what_it_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[float | None, int]] = []

    def measured(*arguments: Any, jobs: int, make_player: Any) -> QualityReport:
        asked.append((arguments[-1], jobs))
        return QualityReport("Alak 9", "random", 4, 2, 2, 1, 2.0, 0.0, 3, 2.5)

    monkeypatch.setattr(quality, "measure_quality", measured)
    result = runner.invoke(
        app, ["quality", "alak", "random", "--max-seconds", "2.5", "--jobs", "3", "-q"]
    )
    assert result.exit_code == 0, result.output
    assert asked == [(2.5, 3)]
    assert "left out: 3 the solver did not settle within 2.5s a solve" in result.stdout
    assert "the figures describe the other 1" in result.stdout
    assert "mean margin given away per move: 2.000" in result.stdout


def test_a_stopped_measurement_says_so_and_exits_as_interrupted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stopped = QualityReport("Alak 9", "random", 4, 2, 2, 1, 1.0, 0.0, not_reached=2)
    monkeypatch.setattr(quality, "measure_quality", lambda *_, **__: stopped)
    result = runner.invoke(app, ["quality", "alak", "random", "-q"])
    assert result.exit_code == INTERRUPTED
    assert "stopped: 2 positions were not reached" in result.stdout
    assert "optimal moves: 50.0%" in result.stdout
    assert "interrupted" in result.stderr


def test_with_nothing_settled_there_are_no_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    nothing = QualityReport("Alak 9", "random", 4, 2, 2, 0, 0.0, 0.0, 4, 2.5)
    assert nothing.optimal_share is None and nothing.mean_loss is None
    assert nothing.to_json()["optimal_share"] is None
    monkeypatch.setattr(quality, "measure_quality", lambda *_, **__: nothing)
    result = runner.invoke(app, ["quality", "alak", "random", "--max-seconds", "2.5", "-q"])
    assert result.exit_code == 0, result.output
    assert "no position was settled, so there are no figures" in result.stdout
    assert "optimal moves" not in result.stdout


def test_the_quality_command_says_where_points_were_given_away(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tallies = {
        (quality.RANDOM, 8): quality.Tally(3, 1, 4.0),
        (quality.SELF_PLAY, 0): quality.Tally(2, 2, 0.0),
        (quality.SELF_PLAY, 1): quality.Tally(2, 1, 2.0),
    }
    report = QualityReport("Alak 9", "random", 7, 3, 4, 4, 6.0, 0.0, breakdown=tallies)
    monkeypatch.setattr(quality, "measure_quality", lambda *_arguments, **_options: report)
    result = runner.invoke(app, ["quality", "alak", "random", "-q"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-3:] == [
        "where points were given away (by source, then ply):",
        "  random games, ply 8–15: 4 in 3 positions (2 not optimal)",
        "  self-play, ply 1: 2 in 2 positions (1 not optimal)",
    ]
    result = runner.invoke(app, ["quality", "alak", "random", "-q", "--json"])
    assert json.loads(result.stdout)["breakdown"][0] == {
        "source": "random games", "plies": "8–15", "judged": 3, "optimal": 1, "given_away": 4.0,
    }


def test_worker_processes_know_the_agents_a_later_layer_adds() -> None:
    """The strongest agent is the study's, registered when the study is imported: worker
    processes, which import only what a task needs, make it through the command's factory."""
    result = runner.invoke(app, [
        "quality", "alak", "strongest:50ms", "--size", "5", "--positions", "6", "--jobs", "2",
        "--json", "-q",
    ])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["positions"] == 6


def test_the_quality_command() -> None:
    result = runner.invoke(
        app, ["quality", "alak", "greedy", "--size", "5", "--positions", "4", "--json", "-q"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["positions"] == 4
    assert report["agent"] == "greedy"
    assert 0 <= report["optimal_share"] <= 1
    assert report["mean_loss"] >= 0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["alak", "greedy", "--positions", "0"], "--positions must be 1 to"),
        (["alak", "nobody", "--positions", "2"], "nobody"),
        (["alak", "greedy", "--max-seconds", "0"], "--max-seconds must be a positive number"),
        (["alak", "greedy", "--max-seconds", "nan"], "of seconds, not nan"),
    ],
)
def test_bad_quality_options_are_named(arguments: list[str], message: str) -> None:
    result = runner.invoke(app, ["quality", *arguments])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_a_variant_whose_every_move_is_forced_is_refused_not_sampled_for_ever() -> None:
    # one point: the game is over before any choice (it used to loop without end)
    result = runner.invoke(app, ["quality", "alak", "greedy", "--size", "1", "--positions", "4"])
    assert result.exit_code == 2
    assert "offers no choice of moves" in result.output
    assert "Traceback" not in result.output


def test_the_random_positions_come_from_many_random_games() -> None:
    """One position from each of 40 random games on 3×3 (a game of at most nine decisions):
    they were all from one game, played again at each sample, before."""
    sampled = quality._random_positions(Alternator(3, 3), 40, random.Random(1))
    assert len({judging.state.position() for judging in sampled}) > 20
    assert len({judging.state.history[0] for judging in sampled if judging.state.history}) > 3


def test_the_report_counts_the_distinct_positions_of_its_self_play() -> None:
    """Alpha-beta chooses by no seed: its self-play games are one game played again, and the
    report says how few of their positions are distinct; random play's are nearly all."""
    game = Alak(6, AlakRules.BALJEU)
    repeated = measure_quality(game, "alphabeta:200", positions=24, seed=1)
    assert repeated.from_self_play == 12
    assert repeated.self_play_distinct < 8
    varied = measure_quality(game, "random", positions=24, seed=1)
    assert varied.self_play_distinct > 8
    text = runner.invoke(app, [
        "quality", "alak", "alphabeta:200", "--size", "6", "--positions", "24", "--seed", "1",
        "-q",
    ]).output
    assert f", {repeated.self_play_distinct} of them distinct: its own games repeat)" in text
