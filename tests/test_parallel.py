"""Every move solved in worker processes (agon solve --jobs) against one solver."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agon.cli import app
from agon.core.game import Game
from agon.core.player import Player
from agon.games.alak import Alak
from agon.games.alak.rules import AlakRules
from agon.games.alternator import Alternator
from agon.solve import kernels as K
from agon.solve.parallel import MoveResult, _stopped
from agon.solve.session import SolveRequest, run
from agon.solve.solution import SolveInterrupted
from agon.solve.solver import Solver

pytestmark = pytest.mark.slow  # (solves in worker processes: make test-all, CI)

runner = CliRunner()
INF = float("inf")


@pytest.mark.parametrize(
    ("game", "moves"),
    [
        (Alak(6, AlakRules.TRADITIONAL), ""),
        (Alak(5, AlakRules.TROMP_TAYLOR), "3"),  # White to move: the least Black is held to
        (Alak(6), "2 5"),
        (Alternator(2, 3), ""),
    ],
)
def test_moves_solved_in_workers_agree_with_one_solver(game: Game, moves: str) -> None:
    state = game.new_state()
    state.play_all(game.parse_moves(moves))
    alone = Solver(game, 16).solve(state, openings=True)
    together = run(SolveRequest(game, state, openings=True, table_bits=16, move_jobs=2)).solution
    assert together is not None
    assert together.value == alone.value
    assert together.best_moves == alone.best_moves
    assert together.move_values == alone.move_values
    assert together.komi == alone.komi


def test_symmetric_moves_are_those_after_which_positions_and_histories_are_images() -> None:
    game = Alak(5, AlakRules.TROMP_TAYLOR)
    solver = Solver(game, 10)
    start = game.new_state()
    pass_move = game.parse_move("pass")
    assert solver.symmetric_moves(start) == {0: [0, 4], 1: [1, 3], 2: [2], pass_move: [pass_move]}
    # x 1, o 3, x 5: the board is its own mirror image, its history is not (x came to 1
    # first), so o's moves 2 and 4 lead to positions that superko can tell apart
    lopsided = game.new_state()
    lopsided.play_all(game.parse_moves("1 3 5"))
    classes = solver.symmetric_moves(lopsided)
    assert classes[1] == [1] and classes[3] == [3]


def test_moves_out_of_time_bound_the_value_as_their_own_bounds_do() -> None:
    solved, open_ended = MoveResult(0, 1.0, 1.0, 10, 0.1), MoveResult(1, -INF, 3.0, 20, 0.2)
    black, white = Alak(3).new_state(), Alak(3).new_state()
    white.play(0)
    assert black.to_move is Player.BLACK and white.to_move is Player.WHITE
    # Black reaches the most over its moves; a move not reported yet bounds nothing above
    stop = _stopped(black, [0, 1], [solved, open_ended], 0.0, timed_out=True)
    assert (stop.lower, stop.upper, stop.nodes, stop.timed_out) == (1.0, 3.0, 30, True)
    stop = _stopped(black, [0, 1, 2], [solved, open_ended], 0.0, timed_out=False)
    assert (stop.lower, stop.upper, stop.timed_out) == (1.0, INF, False)
    # White holds Black to the least
    stop = _stopped(white, [0, 1], [solved, open_ended], 0.0, timed_out=True)
    assert (stop.lower, stop.upper) == (-INF, 1.0)


def test_moves_whose_bounds_settle_the_value_prove_it_before_all_are_solved() -> None:
    black, white = Alak(4).new_state(), Alak(4).new_state()
    white.play(0)
    results = [
        MoveResult(0, 1.0, 1.0, 10, 0.1),  # reaches the value: best
        MoveResult(1, -INF, 0.0, 20, 0.2),  # below it: not best
        MoveResult(2, -3.0, 1.0, 30, 0.3),  # not known either way
        MoveResult(3, -2.0, 2.0, 40, 0.4),  # could be more than the value
    ]
    stop = _stopped(black, [0, 1, 2], results[:3], 0.0, timed_out=True)
    assert stop.lower == stop.upper == 1.0 and stop.proven is not None
    assert (stop.proven.best, stop.proven.not_best) == (["1"], ["2"])
    assert stop.proven.nodes == 60
    # every move's bounds, by name (1 to 3 are points)
    assert stop.move_bounds == {"1": (1.0, 1.0), "2": (-INF, 0.0), "3": (-3.0, 1.0)}
    # with the fourth move open, Black's value could still be 2
    assert _stopped(black, [0, 1, 2, 3], results, 0.0, timed_out=True).proven is None
    # White holds Black to the least: its moves' values are Black's margins
    held = [
        MoveResult(1, -1.0, -1.0, 10, 0.1),  # holds Black to the value: best
        MoveResult(2, -1.0, INF, 10, 0.1),  # not known either way
        MoveResult(3, 0.0, INF, 10, 0.1),  # lets Black have more: not best
    ]
    stop = _stopped(white, [1, 2, 3], held, 0.0, timed_out=False)
    assert stop.lower == stop.upper == -1.0 and stop.proven is not None
    assert (stop.proven.best, stop.proven.not_best) == (["2"], ["4"])


def test_a_solver_asked_to_stop_stops_after_its_chunk_as_on_ctrl_c() -> None:
    game = Alak(9)  # (far from solved within a chunk)
    solver = Solver(game, 12)
    assert not solver.stop_requested()  # this process is no worker: nothing asks it to stop
    solver.stop_requested = lambda: True
    with pytest.raises(SolveInterrupted) as stopped:
        solver.solve(game.new_state())
    assert not stopped.value.timed_out and stopped.value.nodes > 0


@pytest.mark.parametrize(
    "game", [Alak(9), Alak(16, AlakRules.TROMP_TAYLOR, komi_points=2.5)], ids=str
)
def test_bounds_at_the_games_own_limits_bound_nothing(game: Alak) -> None:
    solver = Solver(game, 12)
    solver.stop_requested = lambda: True
    with pytest.raises(SolveInterrupted) as stopped:
        solver.solve(game.new_state())
    # the game's own limits (a point each way per point, less the komi) are no bound
    assert (stopped.value.lower, stopped.value.upper) == (-INF, INF)
    largest = int(solver.control[K.C_MAX_VALUE])  # (units, the mover's view)
    assert solver._proven((largest - 4, largest)) == (largest - 4, K.INFINITY)
    assert solver._proven((-largest, 4 - largest)) == (-K.INFINITY, 4 - largest)
    assert solver._proven((largest, largest)) == (largest, largest)  # a value stays


def test_solve_with_jobs_gives_the_value_and_best_moves_of_one_solve() -> None:
    options = ["solve", "alak", "--size", "6", "--rules", "tromp-taylor", "--json", "-q"]
    alone = json.loads(runner.invoke(app, options).stdout)
    result = runner.invoke(app, [*options, "--jobs", "2"])
    assert result.exit_code == 0
    together = json.loads(result.stdout)
    assert "moves" not in together  # only asked for with --openings
    assert (together["value"], together["best_moves"]) == (alone["value"], alone["best_moves"])


def test_solve_with_jobs_out_of_time_reports_bounds() -> None:
    result = runner.invoke(
        app, ["solve", "alternator", "--size", "4x4", "--jobs", "2", "--max-seconds", "0.01",
              "--json", "-q"],
    )
    assert result.exit_code == 124
    data = json.loads(result.stdout)
    assert data["stopped"] == "out of time"
    # Alternator 4×4 is worth +2 (docs/results.md); null: no bound on that side
    assert data["lower"] is None or data["lower"] <= 2
    assert data["upper"] is None or data["upper"] >= 2


def test_solve_refuses_no_jobs() -> None:
    result = runner.invoke(app, ["solve", "alak", "--jobs", "0"])
    assert result.exit_code == 2
