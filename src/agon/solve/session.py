"""One solve session: a request in, a report out.

``agon solve``, ``agon tables`` and the worker processes that solve a position's moves apart
all solve through :func:`run`: it builds the solver, goes on from saved tables and keeps them,
solves the value, the best moves and (if asked) every move's value, and plays lines of
perfect play, all within the request's one limit, and reports what it found, or the bounds it
proved where it stopped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agon.core.errors import AgonError
from agon.core.game import Game, Move, State
from agon.core.limits import NO_LIMIT, Limit
from agon.core.results import Work
from agon.core.workers import winding_up
from agon.solve import parallel
from agon.solve.facts import DEFAULT_SPLIT_AFTER, Search
from agon.solve.solution import Bounds, Progress, Solution, SolveInterrupted, json_number
from agon.solve.solver import Solver, perfect_play

MAX_LINE_PLIES = 500
"""A line of perfect play has at most this many moves (a ko fight under superko can be long)."""


@dataclass(frozen=True)
class SolveRequest:
    """What to solve, and how."""

    game: Game
    state: State | None = None
    """The position (None: the start)."""
    openings: bool = False
    """Every legal move's value too."""
    value_first: bool = False
    """With ``openings``: settle the value and the best moves first, then every move's value
    in the time left, so that a position whose weaker moves take too long still gets them."""
    lines_after: tuple[str, ...] = ()
    """Beginnings (moves, as text; ``""``: none) after which a line of perfect play is given."""
    lines_only: bool = False
    """Only the lines: the position's own value is not solved (it may be far harder)."""
    limit: Limit = NO_LIMIT
    """For the whole session: its time is shared by the value, the openings and the lines."""
    table_bits: int | None = None
    """The transposition table's size, 2**bits buckets, as asked for: saved tables gone on
    from must have it."""
    default_table_bits: int | None = None
    """The size where none is asked for (None: the game's default)."""
    search: Search | None = None
    tables_file: Path | None = None
    """Where the solver's tables are kept: gone on from where it exists (with ``resume``), and
    saved when the session ends, stops or is interrupted."""
    resume: bool = True
    keep_solved_tables: bool = True
    """False: delete the tables file once everything asked for is solved."""
    move_jobs: int = 1
    """Above one: every move solved apart in that many worker processes
    (:mod:`agon.solve.parallel`); with :attr:`cluster`, the CPUs of a local Ray cluster."""
    cluster: str | None = None
    """Every move solved apart on this Ray cluster (:mod:`agon.solve.on_ray`: ``local``, or
    a running cluster's address), not in worker processes here."""
    window: Bounds | None = None
    """Only bounds on the value that answer this window (:meth:`Solver.bounds_within`), as a
    spread solve asks of a reply whose sibling has set its window; not the best moves."""
    split_after: Limit | None = DEFAULT_SPLIT_AFTER
    """Where moves are solved apart: the budget after which a position still unsolved is
    split, its replies solved apart in turn (:mod:`agon.solve.parallel`); None: each move is
    solved whole."""

    def position(self) -> State:
        return self.game.new_state() if self.state is None else self.state.copy()


@dataclass
class PerfectLine:
    """A line of perfect play, and how it ended: the game over, or a solve on the way out of
    time or interrupted (``stopped``)."""

    moves: list[Move]
    end: State
    stopped: SolveInterrupted | None = None

    def as_json(self, game: Game) -> dict[str, Any]:
        data: dict[str, Any] = {"moves": [game.format_move(m) for m in self.moves]}
        if self.end.is_over:
            data["end"] = self.end.end_reason
            data["margin"] = json_number(self.end.margin)
        if self.stopped is not None:
            data["stopped"] = self.stopped.reason
        return data


@dataclass
class SolveReport:
    """What a session found."""

    request: SolveRequest
    solution: Solution | None = None
    """The value and best moves (every move's value too, where asked and settled)."""
    stopped: SolveInterrupted | None = None
    """Where the value or its best moves were not settled: what was proven of them."""
    openings_stopped: SolveInterrupted | None = None
    """Where, with ``value_first``, the moves' values were not all settled: what was proven."""
    openings_seconds: float | None = None
    """The time the moves' values had, with ``value_first``."""
    lines: dict[str, PerfectLine] = field(default_factory=dict)
    nodes: int = 0
    """Nodes searched in this session (earlier runs' are in ``earlier``)."""
    seconds: float = 0.0
    table_bits: int | None = None
    """The size of the table the session solved with (of the saved tables gone on from)."""
    earlier: Work = field(default_factory=Work)
    """The work of the earlier runs whose saved tables the session went on from."""
    bounds: Bounds | None = None
    """With a :attr:`SolveRequest.window`: the bounds found that answer it."""
    moves_apart: int | None = None
    """How many moves were solved at once, where they were solved apart (worker processes, or
    a Ray cluster's CPUs)."""
    notes: list[str] = field(default_factory=list)
    """What went wrong that did not stop the session (tables that could not be saved)."""

    @property
    def stop(self) -> SolveInterrupted | None:
        """The first thing that stopped short: the value, the openings or a line."""
        return self.stopped or self.openings_stopped or next(
            (line.stopped for line in self.lines.values() if line.stopped), None
        )


def run(request: SolveRequest, progress: Progress | None = None) -> SolveReport:
    """Solve what ``request`` asks for; Ctrl-C stops it (``KeyboardInterrupt``, the tables
    kept) unless a search is under way, which then stops with its bounds (``stopped``)."""
    # one deadline for the whole session, whatever its parts and processes
    request = replace(request, limit=request.limit.from_now())
    if (request.move_jobs > 1 or request.cluster is not None) and not request.lines_only:
        return _apart(request, progress)
    return solve_here(request, progress)


def solve_here(request: SolveRequest, progress: Progress | None = None) -> SolveReport:
    """:func:`run` with one solver, in this process (the request's limit counts from now, where
    it has seconds)."""
    started = time.monotonic()
    limit = request.limit.from_now()
    solver = Solver(
        request.game, request.table_bits or request.default_table_bits, progress=progress,
        search=request.search,
    )
    report = SolveReport(request)
    if request.tables_file is not None:
        solver.go_on_from(request.tables_file, request.table_bits, request.resume)
    report.earlier = solver.earlier
    report.table_bits = solver.table_bits
    try:
        if not request.lines_only:
            _solve_position(solver, request, limit, report)
        if report.stopped is None:
            for beginning in request.lines_after:
                report.lines[beginning] = _line(solver, request.position(), beginning, limit)
    except KeyboardInterrupt:
        _keep_tables(solver, report, solved=False)
        raise
    report.nodes = solver.nodes
    if request.lines_only:
        report.seconds = time.monotonic() - started
    _keep_tables(solver, report, solved=report.stop is None)
    return report


def _solve_position(
    solver: Solver, request: SolveRequest, limit: Limit, report: SolveReport
) -> None:
    state = request.position()
    if request.window is not None:
        started = time.monotonic()
        try:
            report.bounds = solver.bounds_within(state, request.window, limit)
            report.seconds = time.monotonic() - started
        except SolveInterrupted as stop:
            report.stopped, report.seconds = stop, stop.seconds
        return
    try:
        first = solver.solve(state, request.openings and not request.value_first, limit)
    except SolveInterrupted as stop:
        report.stopped = stop
        report.seconds = stop.seconds
        return
    report.solution = first
    report.seconds = first.seconds
    if not (request.openings and request.value_first):
        return
    report.openings_seconds = limit.start().seconds_left()  # (None: no limit)
    try:
        openings = solver.solve(state, True, limit)
    except SolveInterrupted as stop:
        if not stop.timed_out:
            raise KeyboardInterrupt from None
        report.openings_stopped = stop
        return
    report.solution = replace(
        first, move_values=openings.move_values, nodes=first.nodes + openings.nodes,
        seconds=first.seconds + openings.seconds,
    )
    report.seconds = report.solution.seconds


def _line(solver: Solver, state: State, beginning: str, limit: Limit) -> PerfectLine:
    """A line of perfect play after ``beginning`` (moves as text), as far as the solver gets
    within ``limit``."""
    moves = state.game.parse_moves(beginning)
    state.play_all(moves)
    try:
        moves.extend(perfect_play(solver, state, MAX_LINE_PLIES, limit))  # (played on state)
    except SolveInterrupted as stop:
        return PerfectLine(moves, state, stop)
    return PerfectLine(moves, state)


def _keep_tables(solver: Solver, report: SolveReport, solved: bool) -> None:
    """Save the solver's tables to the request's file (or delete it, once solved, where the
    request keeps no solved tables)."""
    path = report.request.tables_file
    if path is None:
        return
    if solved and not report.request.keep_solved_tables:
        path.unlink(missing_ok=True)
        return
    winding_up()  # (in a worker: a stop waits for the tables, however long saving takes)
    try:
        solver.save_tables(path)
    except AgonError as error:
        report.notes.append(f"the tables were not saved: {error}")
    except KeyboardInterrupt:
        report.notes.append(f"interrupted while saving: {path} is as it was before")


def _apart(request: SolveRequest, progress: Progress | None) -> SolveReport:
    """:func:`run` with every move solved apart, each a session of its own in a worker
    (:func:`agon.solve.parallel.solve_moves_apart`); the lines, if asked, then get a solver of
    their own (the workers' tables are gone)."""
    report = SolveReport(request, moves_apart=request.move_jobs)

    def workers(at_once: int) -> None:
        report.moves_apart = at_once

    try:
        solution = parallel.solve_moves_apart(request, solve_here, progress, workers)
    except SolveInterrupted as stop:
        report.stopped, report.nodes, report.seconds = stop, stop.nodes, stop.seconds
        report.earlier = stop.earlier
        return report
    if not request.openings:
        solution = replace(solution, move_values=None)
    report.solution, report.earlier = solution, solution.earlier
    report.nodes, report.seconds = solution.nodes, solution.seconds
    if request.lines_after:
        lines = solve_here(replace(request, lines_only=True, tables_file=None), progress)
        report.lines = lines.lines
        report.nodes += lines.nodes
    if request.tables_file is not None and not request.keep_solved_tables:
        for path in parallel.kept_move_tables(request.tables_file):
            path.unlink()
    return report
