"""Every move of a position solved at once in worker processes (``agon solve --jobs N``,
``agon tables --move-jobs N``), or on a Ray cluster (``--ray``, :mod:`agon.solve.on_ray`).

Each worker solves the position after one move with a solver of its own (its own tables), so
the moves share no results: the work is more than one solver's, but spread over cores. Of
symmetric moves (the same position after them, up to a symmetry) only one is solved. The
position's value follows exactly from its moves' values (the most the side to move can reach),
and so do its best moves. A move whose solve runs out of time, or is interrupted, still
bounds the position's value, as its own bounds do; where the moves' bounds already settle
the position's value, it is reported proven, with the moves known to keep it so far. With a
tables file, each move's solver goes on from its own file (:func:`move_tables_file`) and saves
to it when it ends, so a parallel solve too long for one run goes on in the next.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from agon.core.game import Move, State
from agon.core.player import Player
from agon.core.results import Work
from agon.core.workers import (
    STOP_ANSWER_SECONDS,
    AskedStop,
    TaskResults,
    WorkerResults,
    stop_and_wait,
    stop_asked,
    stop_signal,
    worker_pool,
)
from agon.solve.solution import (
    NO_BOUNDS,
    Progress,
    ProvenValue,
    Solution,
    SolveInterrupted,
    labelled_progress,
)
from agon.solve.solver import MAX_CHUNK_FACTOR, Solver, warm_up_kernels

if TYPE_CHECKING:
    from agon.solve.session import SolveReport, SolveRequest

    SolveOne = Callable[[SolveRequest, Progress | None], SolveReport]

TABLES_ANSWER_SECONDS = MAX_CHUNK_FACTOR + STOP_ANSWER_SECONDS
"""With a tables file, how long a stop waits for each move's search to answer (and then save
its tables): to the end of its longest chunk (chunks of a long search grow to
:data:`~agon.solve.solver.MAX_CHUNK_FACTOR` seconds). Without, a search that has not answered
within :data:`~agon.core.workers.STOP_ANSWER_SECONDS` is killed, its bounds lost: a stop ends
within a second or two."""


class MoveResult(NamedTuple):
    """A move's solve: its bounds (equal once solved, Black's margin), nodes and seconds."""

    move: Move
    lower: float
    upper: float
    nodes: int
    seconds: float
    earlier: Work = Work()
    """The work of the earlier runs its solver went on from (with a tables file)."""


def solve_moves_apart(
    request: SolveRequest, solve_one: SolveOne, progress: Progress | None = None,
    workers: Callable[[int], None] | None = None,
) -> Solution:
    """The value, best moves and every move's value of the request's position, each move
    solved by ``solve_one`` (a session of its own: :func:`agon.solve.session.solve_here`) in
    one of ``request.move_jobs`` processes, within the request's limit;
    :class:`SolveInterrupted` (with the bounds the moves proved) when the time runs out or
    Ctrl-C stops it. With a tables file, each move's solver keeps its tables in
    :func:`move_tables_file` of it. ``workers`` is told how many moves are solved at once
    (the processes, or the cluster's CPUs)."""
    game, state = request.game, request.position()
    moves = state.legal_moves()
    if not moves:  # the game is over: nothing to spread
        report = solve_one(replace(request, move_jobs=1, cluster=None, openings=True), progress)
        assert report.solution is not None
        return report.solution
    started = time.monotonic()
    results: list[MoveResult] = []
    classes: dict[Move, list[Move]] = {}

    def collect(solving: TaskResults[Move, MoveResult]) -> None:
        while len(results) < len(moves):
            _, outcome = solving.next()
            results.append(outcome)
            results.extend(  # its symmetric moves, which cost nothing more
                outcome._replace(move=move, nodes=0, seconds=0.0, earlier=Work())
                for move in classes[outcome.move][1:]
            )

    tables = request.tables_file
    try:
        # one move of each class of symmetric moves is solved; the others are worth the same
        finder = Solver(game, 10)
        classes = finder.symmetric_moves(state)
        with _move_solvers(request, len(classes)) as (solving, stop):
            if workers is not None:
                workers(solving.at_once)
            for move in classes:
                name = game.format_move(move)
                label = None if progress is None else labelled_progress(progress, f"after {name}")
                child = state.copy()
                child.play(move)
                alone = replace(
                    request, state=child, openings=False, value_first=False, lines_after=(),
                    lines_only=False, move_jobs=1, cluster=None, keep_solved_tables=True,
                    tables_file=None if tables is None else move_tables_file(tables, name),
                )
                solving.submit(move, _solve_move, solve_one, alone, move, label)
            try:
                collect(solving)
            except KeyboardInterrupt:
                # each worker stops at the end of its chunk, with its bounds (and its tables
                # saved); one that has not answered in time is killed with the pool
                answer_seconds = STOP_ANSWER_SECONDS if tables is None else TABLES_ANSWER_SECONDS
                if progress is not None:
                    saving = " and saves its tables" if tables is not None else ""
                    progress(
                        f"stopping: each move's solve ends its chunk{saving} (a solve still "
                        f"searching after {answer_seconds:g} s is stopped at once) …"
                    )
                stop_and_wait(stop, lambda: collect(solving), answer_seconds)
                raise
    except KeyboardInterrupt:
        raise _stopped(state, moves, results, started, timed_out=False) from None
    if any(result.lower != result.upper for result in results):
        raise _stopped(state, moves, results, started, timed_out=True)
    values = {result.move: result.lower for result in results}
    value = _movers_choice(state)(values.values())
    return Solution(
        value=value,
        best_moves=[move for move in moves if values[move] == value],
        move_values={move: values[move] for move in moves},
        nodes=sum(result.nodes for result in results),
        seconds=time.monotonic() - started,
        komi=finder.reported_komi,
        earlier=_earlier_work(results),
    )


@contextmanager
def _move_solvers(
    request: SolveRequest, moves: int
) -> Iterator[tuple[TaskResults[Move, MoveResult], AskedStop]]:
    """Where the moves are solved, and how they are asked to stop: ``request.move_jobs``
    worker processes here (no more than ``moves``), or the Ray cluster ``request.cluster``."""
    if request.cluster is not None:
        from agon.solve import on_ray

        with on_ray.ray_results(request.cluster, request.move_jobs, warm_up_kernels) as found:
            yield found
        return
    stop = stop_signal()
    with worker_pool(min(request.move_jobs, moves), warm_up_kernels, stop) as pool:
        yield WorkerResults(pool), stop


def move_tables_file(tables_file: Path, move: str) -> Path:
    """Where a parallel solve keeps the tables of the solver of the position after ``move``
    (as the game writes it): beside ``tables_file``, named after both."""
    return tables_file.with_name(f"{tables_file.stem}-after-{move}{tables_file.suffix}")


def kept_move_tables(tables_file: Path) -> list[Path]:
    """The files a parallel solve keeps beside ``tables_file`` (:func:`move_tables_file`), as
    they are on disk now."""
    return sorted(tables_file.parent.glob(move_tables_file(tables_file, "*").name))


def _solve_move(
    solve_one: SolveOne, request: SolveRequest, move: Move, progress: Progress | None
) -> MoveResult:
    """One move's solve, in a worker: solved, or its bounds when the limit ran out or the
    parent asked it to stop."""
    if request.limit.start().out_of_time() or stop_asked():
        return MoveResult(move, float("-inf"), float("inf"), 0, 0.0)
    report = solve_one(request, progress)
    if report.stopped is not None:
        stop = report.stopped
        return MoveResult(move, stop.lower, stop.upper, stop.nodes, stop.seconds, report.earlier)
    assert report.solution is not None
    value = report.solution.value
    return MoveResult(
        move, value, value, report.solution.nodes, report.solution.seconds, report.earlier
    )


def _earlier_work(results: list[MoveResult]) -> Work:
    """The work of the earlier runs the moves' solvers went on from, all together (its runs:
    the most any move's solver had)."""
    return Work(
        nodes=sum(result.earlier.nodes for result in results),
        seconds=round(sum(result.earlier.seconds for result in results), 1),
        runs=max((result.earlier.runs for result in results), default=0),
    )


def _stopped(
    state: State, moves: list[Move], results: list[MoveResult], started: float,
    timed_out: bool,
) -> SolveInterrupted:
    """The position's bounds from its moves' (a move not reported yet bounds nothing), with
    the moves' own. Where they meet, the value is proven: the moves proven to reach it keep
    it, and those proven not to reach it do not (the others are not known yet)."""
    lowers = {move: float("-inf") for move in moves}
    uppers = {move: float("inf") for move in moves}
    for result in results:
        lowers[result.move], uppers[result.move] = result.lower, result.upper
    choice = _movers_choice(state)
    lower, upper = choice(lowers.values()), choice(uppers.values())
    nodes, seconds = sum(result.nodes for result in results), time.monotonic() - started
    name = state.game.format_move
    move_bounds = {
        name(move): (lowers[move], uppers[move]) for move in moves
        if (lowers[move], uppers[move]) != NO_BOUNDS
    }
    proven = None
    if lower == upper:
        black = state.to_move is Player.BLACK

        def movers_view(move: Move) -> tuple[float, float]:
            """The move's bounds as the side to move counts them (its own margin)."""
            if black:
                return lowers[move], uppers[move]
            return -uppers[move], -lowers[move]

        value = lower if black else -lower
        proven = ProvenValue(
            nodes, seconds,
            best=[name(move) for move in moves if movers_view(move)[0] >= value],
            not_best=[name(move) for move in moves if movers_view(move)[1] < value],
        )
    return SolveInterrupted(
        lower, upper, nodes, seconds, timed_out, proven, _earlier_work(results), move_bounds
    )


def _movers_choice(state: State) -> Callable[[Iterable[float]], float]:
    """How a position's value (Black's margin) follows from its moves': the most Black
    reaches after some move, or the least White holds Black to."""
    return max if state.to_move is Player.BLACK else min
