"""Every move solved in worker processes (agon solve --jobs) against one solver."""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agon.cli import app
from agon.core.errors import AgonError
from agon.core.game import Game, Move, State
from agon.core.limits import Limit
from agon.core.player import Player
from agon.core.results import Work
from agon.games.alak import Alak
from agon.games.alak.rules import AlakRules
from agon.games.alternator import Alternator
from agon.solve import kernels as K
from agon.solve import parallel
from agon.solve.parallel import _stopped
from agon.solve.session import SolveRequest, run, solve_here
from agon.solve.solution import Bounds, SolveInterrupted
from agon.solve.solver import Solver

pytestmark = pytest.mark.slow  # (solves in worker processes: make test-all, CI)

runner = CliRunner()
INF = float("inf")
TWO_CLASSES = "6 4 2 3"
"""Moves of Alak 6 (traditional) after which the side to move has two classes of moves, and
thousands of nodes to solve: a budget of 50 nodes spent leaves one of two CPUs idle."""


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
    black, white = Alak(3).new_state(), Alak(3).new_state()
    white.play(0)
    assert black.to_move is Player.BLACK and white.to_move is Player.WHITE
    assert black.legal_moves() == [0, 1, 2] and white.legal_moves() == [1, 2]
    solved, open_ended, between = (1.0, 1.0), (-INF, 3.0), (0.0, 2.0)

    def stopped(state: State, bounds: dict[Move, Bounds], timed_out: bool) -> SolveInterrupted:
        return _stopped(state, bounds, 30, Work(), 0.0, timed_out)

    # Black reaches the most over its moves
    stop = stopped(black, {0: solved, 1: open_ended, 2: between}, timed_out=True)
    assert (stop.lower, stop.upper, stop.nodes, stop.timed_out) == (1.0, 3.0, 30, True)
    # a move not reported yet bounds nothing above
    stop = stopped(black, {0: solved, 1: open_ended}, timed_out=False)
    assert (stop.lower, stop.upper, stop.timed_out) == (1.0, INF, False)
    # White holds Black to the least
    stop = stopped(white, {1: solved, 2: open_ended}, timed_out=True)
    assert (stop.lower, stop.upper) == (-INF, 1.0)


def test_moves_whose_bounds_settle_the_value_prove_it_before_all_are_solved() -> None:
    black = Alak(3).new_state()
    bounds: dict[Move, Bounds] = {
        0: (1.0, 1.0),  # reaches the value: best
        1: (-INF, 0.0),  # below it: not best
        2: (-3.0, 1.0),  # not known either way
    }
    stop = _stopped(black, bounds, 60, Work(), 0.0, timed_out=True)
    assert stop.lower == stop.upper == 1.0 and stop.proven is not None
    assert (stop.proven.best, stop.proven.not_best) == (["1"], ["2"])
    assert stop.proven.nodes == 60
    # every move's bounds, by name (1 to 3 are points)
    assert stop.move_bounds == {"1": (1.0, 1.0), "2": (-INF, 0.0), "3": (-3.0, 1.0)}
    # with a fourth move that could still reach 2, Black's value could be 2
    four = Alak(4).new_state()
    four_bounds = {**bounds, 3: (-2.0, 2.0)}
    assert _stopped(four, four_bounds, 60, Work(), 0.0, timed_out=True).proven is None
    # White holds Black to the least: its moves' values are Black's margins
    white = Alak(4).new_state()
    white.play(0)
    held: dict[Move, Bounds] = {
        1: (-1.0, -1.0),  # holds Black to the value: best
        2: (-1.0, INF),  # not known either way
        3: (0.0, INF),  # lets Black have more: not best
    }
    stop = _stopped(white, held, 30, Work(), 0.0, timed_out=False)
    assert stop.lower == stop.upper == -1.0 and stop.proven is not None
    assert (stop.proven.best, stop.proven.not_best) == (["2"], ["4"])


class InProcessTasks:
    """Tasks run here, one at a time as their results are asked for, in the order they were
    sent, as if ``at_once`` ran at once: a spread solve that splits the same way every run."""

    def __init__(self, at_once: int) -> None:
        self.at_once = at_once
        self.waiting: deque[tuple[Any, Callable[..., Any], tuple[Any, ...]]] = deque()
        self.sent: list[Any] = []
        self.windows: list[Bounds | None] = []
        """Each task's window (None: its exact value asked for)."""
        self.one_cpu_after: int | None = None
        """After this many tasks, one CPU only (as a cluster losing nodes)."""

    def submit(self, tag: Any, task: Callable[..., Any], *arguments: Any) -> None:
        self.waiting.append((tag, task, arguments))
        self.sent.append(tag)
        _, request, *_ = arguments
        self.windows.append(request.window)
        if self.one_cpu_after is not None and len(self.sent) >= self.one_cpu_after:
            self.at_once = 1

    def next(self) -> tuple[Any, Any]:
        tag, task, arguments = self.waiting.popleft()
        return tag, task(*arguments)


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch) -> InProcessTasks:
    """A spread solve's tasks run by :class:`InProcessTasks` (32 at once), not in workers."""
    tasks = InProcessTasks(32)

    @contextmanager
    def solvers(request: SolveRequest, first_tasks: int) -> Iterator[tuple[InProcessTasks, Any]]:
        yield tasks, None
        tasks.waiting.clear()  # (a solve settled early leaves tasks, as a pool cancels them)

    monkeypatch.setattr(parallel, "_move_solvers", solvers)
    return tasks


@pytest.mark.parametrize(
    ("game", "moves"),
    [
        (Alak(6, AlakRules.TRADITIONAL), ""),
        (Alak(5, AlakRules.TROMP_TAYLOR), "3"),  # White to move: the least Black is held to
        (Alternator(3, 3), ""),
        (Alternator(2, 4), ""),
    ],
)
def test_positions_too_large_for_their_budget_are_split_and_agree_with_one_solver(
    in_process: InProcessTasks, game: Game, moves: str
) -> None:
    said = split_solve_agrees(game, moves, jobs=32, nodes=20)
    # positions two moves and more from the root were sent: openings were split
    assert any(len(path) >= 2 for path in in_process.sent)
    assert any("replies are solved apart" in line for line in said)
    # replies after the first were asked only what their windows need
    assert any(window is not None for window in in_process.windows)
    assert max(len(path) for path in in_process.sent) <= parallel.MAX_SPLIT_PLIES


def split_solve_agrees(game: Game, moves: str, jobs: int, nodes: int) -> list[str]:
    """Solve the position after ``moves`` with its moves apart in ``jobs``, split after
    ``nodes``; check its value, best moves and every move's value against one solver's, and
    return what it said as it went."""
    state = game.new_state()
    state.play_all(game.parse_moves(moves))
    alone = Solver(game, 16).solve(state, openings=True)
    said: list[str] = []
    request = SolveRequest(
        game, state, openings=True, table_bits=14, move_jobs=jobs,
        split_after=Limit(count=nodes),
    )
    report = run(request, said.append)
    assert report.solution is not None
    assert report.solution.value == alone.value
    assert report.solution.best_moves == alone.best_moves
    assert report.solution.move_values == alone.move_values
    return said


def test_an_opening_too_large_for_its_budget_is_split_in_workers() -> None:
    game = Alak(6, AlakRules.TRADITIONAL)
    state = game.new_state()
    state.play_all(game.parse_moves(TWO_CLASSES))
    assert len(Solver(game, 10).symmetric_moves(state)) == 2
    said = split_solve_agrees(game, TWO_CLASSES, jobs=2, nodes=50)
    assert any("replies are solved apart" in line for line in said)


@pytest.mark.parametrize(
    ("game", "moves"),
    [
        (Alak(6, AlakRules.TRADITIONAL), "2"),
        (Alak(5, AlakRules.TROMP_TAYLOR), ""),
        (Alternator(3, 3), "a1-a2"),
        (Alternator(2, 4), ""),
    ],
)
def test_bounds_within_a_window_answer_it_and_hold_the_value(game: Game, moves: str) -> None:
    state = game.new_state()
    state.play_all(game.parse_moves(moves))
    value = Solver(game, 14).margin(state)
    windows = [
        (-INF, INF), (value - 1, value + 1), (value - 3, value - 1), (value + 1, value + 4),
        (-INF, value - 1), (value + 1, INF), (value, value + 1), (value - 1, value),
    ]
    for low, high in windows:
        solver = Solver(game, 14)
        lower, upper = solver.bounds_within(state, (low, high))
        assert lower <= value <= upper
        assert lower == upper or upper <= low or lower >= high, (low, high)
    # a window beside the value is answered for less than the value costs, on one side at least
    whole = Solver(game, 14)
    whole.margin(state)
    beside = []
    for window in [(value + 1, INF), (-INF, value - 1)]:
        solver = Solver(game, 14)
        solver.bounds_within(state, window)
        beside.append(solver.nodes)
    assert min(beside) < whole.nodes


def test_without_a_budget_every_move_is_solved_whole(in_process: InProcessTasks) -> None:
    game = Alternator(3, 3)
    request = SolveRequest(game, openings=True, table_bits=14, move_jobs=32, split_after=None)
    assert run(request).solution is not None
    assert all(len(path) == 1 for path in in_process.sent)


def test_a_budget_spent_while_every_cpu_is_busy_sends_the_position_again_whole(
    in_process: InProcessTasks,
) -> None:
    game = Alak(6, AlakRules.TRADITIONAL)
    # the moves go out with budgets, then the cluster shrinks to one CPU: once a move's budget
    # is spent, the others keep it busy
    in_process.one_cpu_after = len(Solver(game, 10).symmetric_moves(game.new_state()))
    alone = Solver(game, 16).solve(game.new_state(), openings=True)
    request = SolveRequest(
        game, openings=True, table_bits=14, move_jobs=1, cluster="in-process",
        split_after=Limit(count=100),
    )
    solution = parallel.solve_moves_apart(request, solve_here)
    assert solution.move_values == alone.move_values
    assert all(len(path) == 1 for path in in_process.sent)
    assert len(in_process.sent) > len(set(in_process.sent))  # (some were sent twice)


def test_a_split_solve_goes_on_from_the_positions_it_split(
    in_process: InProcessTasks, tmp_path: Path
) -> None:
    game = Alternator(3, 3)
    tables = tmp_path / "solve.npz"
    request = SolveRequest(
        game, openings=True, table_bits=14, move_jobs=32, split_after=Limit(count=300),
        tables_file=tables,
    )
    first = run(request).solution
    kept = parallel.SpreadCheckpoint.read(parallel.split_file(tables))
    split = kept.split
    assert split and all(path for path in split)
    # what the tasks below the moves proved is kept, their tables are not
    assert any(len(path) >= 2 for path in kept.bounds)
    assert not any(
        parallel.move_tables_file(tables, ",".join(path)).exists()
        for path in kept.bounds if len(path) >= 2
    )
    assert parallel.split_file(tables) in parallel.kept_move_tables(tables)
    in_process.sent.clear()
    said: list[str] = []
    again = run(request, said.append).solution
    assert again is not None and first is not None
    assert again.move_values == first.move_values
    # what was split is split at once, its own solve not sent again; what was proven is not
    # asked again
    sent = {tuple(game.format_move(move) for move in path) for path in in_process.sent}
    assert not sent & split
    assert not sent & {path for path, (lower, upper) in kept.bounds.items() if lower == upper}
    split_again = {line.split(":")[0] for line in said if "replies are solved apart" in line}
    assert not split_again & {f"after {' '.join(path)}" for path in split}
    # once solved, a run that keeps no tables deletes them all, the list of splits too
    assert run(replace(request, keep_solved_tables=False)).solution is not None
    assert parallel.kept_move_tables(tables) == []


def test_a_task_reads_its_deadline_from_the_wall_clock_which_hosts_share() -> None:
    """On another host of a cluster, the parent's monotonic deadline means nothing: here it is
    long past, while the same instant on the wall clock is a minute away."""
    game = Alak(5, AlakRules.TROMP_TAYLOR)
    request = SolveRequest(game, limit=Limit(deadline=time.monotonic() - 1000.0))
    result = parallel._solve_task(solve_here, request, None, time.time() + 60.0)
    assert result.lower == result.upper == Solver(game, 14).margin(game.new_state())
    # a wall-clock deadline past is past here too
    result = parallel._solve_task(solve_here, request, None, time.time() - 1.0)
    assert (result.lower, result.upper) == (-INF, INF)


@pytest.mark.parametrize(
    "written",
    [
        '{"format": 1, "split": [["a1-a2"]]}',
        "[",
        '{"format": 2, "positions": []}',
        '{"format": 1, "positions": [{"moves": [1], "split": true}]}',
        '{"format": 1, "positions": [{"split": true}]}',
        '{"format": 1, "positions": [{"moves": ["a1-a2"], "bounds": ["low", null]}]}',
        '{"format": 1, "positions": [{"moves": ["a1-a2"], "bounds": [1]}]}',
        '{"format": 1, "positions": [7]}',
    ],
)
def test_a_checkpoint_that_is_not_one_is_refused_by_name(tmp_path: Path, written: str) -> None:
    path = tmp_path / "solve-split.json"
    path.write_text(written)
    with pytest.raises(AgonError, match=r"solve-split\.json"):
        parallel.SpreadCheckpoint.read(path)


def test_a_checkpoint_reads_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "solve-split.json"
    kept = parallel.SpreadCheckpoint(
        split={("a1-a2",), ("a1-a2", "b1-b2")},
        bounds={("a1-a2", "c1-c2"): (-INF, 3.0), ("b1-b2",): (2.5, 2.5)},
    )
    kept.write(path)
    assert parallel.SpreadCheckpoint.read(path) == kept


def test_split_after_takes_a_budget_or_never() -> None:
    options = ["solve", "alak", "--size", "5", "--jobs", "2", "--json", "-q"]
    for budget in ("never", "2000", "1s"):
        result = runner.invoke(app, [*options, "--split-after", budget])
        assert result.exit_code == 0, result.output
    result = runner.invoke(app, [*options, "--split-after", "soon"])
    assert result.exit_code == 2
    assert "--split-after" in result.output and "never" in result.output


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
