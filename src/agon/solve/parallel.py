"""Every move of a position solved at once in worker processes (``agon solve --jobs N``,
``agon tables --move-jobs N``), or on a Ray cluster (``--ray``, :mod:`agon.solve.on_ray`).

Each task solves one position with a solver of its own (its own tables), so the tasks share
no results: the work is more than one solver's, but spread over cores. The first tasks are
the positions after each move (of symmetric moves, the same position after them up to a
symmetry, only one is solved). Splitting is to keep every CPU busy: a task sent while fewer
tasks are open than CPUs has a budget
(:attr:`~agon.solve.session.SolveRequest.split_after`). Where it is spent before the position
is solved, the task ends with its bounds, and the position is *split* if CPUs would otherwise
be idle: the positions after each of its replies become tasks in turn, and may be split
again, so that an opening too large for one core spreads over many. Otherwise it is sent
again to be solved whole (with a tables file, from where it stopped). A split position's first
reply is sent with the window its parent needs, the others once it has answered, each asked
only whether it beats that (*young brothers wait*). A position's value
follows exactly from its replies' values (the most the side to move can reach), and its
bounds from theirs and its own task's; so do the solve's value and best moves. A task that
runs out of the solve's time, or is interrupted, still bounds the value; where the bounds
already settle it, it is reported proven, with the moves known to keep it so far. With a
tables file, each task's solver goes on from its own file (:func:`move_tables_file`) and saves
to it when it ends, and the positions split so far and the bounds proven below the moves are
kept in :func:`split_file`, so a solve too long for one run goes on in the next from where it
stopped.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from agon.core.errors import AgonError
from agon.core.files import read_versioned_json, replace_file
from agon.core.game import Move, State
from agon.core.limits import Limit
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
    Bounds,
    Progress,
    ProvenValue,
    Solution,
    SolveInterrupted,
    json_number,
    labelled_progress,
)
from agon.solve.solver import MAX_CHUNK_FACTOR, Solver, warm_up_kernels

if TYPE_CHECKING:
    from agon.solve.session import SolveReport, SolveRequest

    SolveOne = Callable[[SolveRequest, Progress | None], SolveReport]

TABLES_ANSWER_SECONDS = MAX_CHUNK_FACTOR + STOP_ANSWER_SECONDS
"""With a tables file, how long a stop waits for each task's search to answer (and then save
its tables): to the end of its longest chunk (chunks of a long search grow to
:data:`~agon.solve.solver.MAX_CHUNK_FACTOR` seconds). Without, a search that has not answered
within :data:`~agon.core.workers.STOP_ANSWER_SECONDS` is killed, its bounds lost: a stop ends
within a second or two."""
MAX_TASKS = 20_000
"""Tasks sent in one solve past which none is given a budget: each is solved whole, however
long it takes, so that a small budget cannot split positions without end."""
CHECKPOINT_SECONDS = 30.0
"""With a tables file, how often a spread solve writes its checkpoint (:func:`split_file`):
at most so much is lost where it is killed, besides its tasks' own work since their saves."""
MAX_SPLIT_PLIES = 6
"""A position this many moves below the root is solved whole, never split: deeper, solving
apart loses more to the tables the tasks do not share than it gains (docs/solver.md)."""
SPLIT_FILE_BYTES = 16 * 1024 * 1024
"""The largest list of split positions read back (:func:`split_file`)."""
PATH_SEPARATOR = ","
INF = float("inf")
"""Between the moves of a position's path in the name of its tables file."""


class TaskResult(NamedTuple):
    """A task's solve of its position: its bounds (equal once solved, Black's margin), nodes
    and seconds."""

    lower: float
    upper: float
    nodes: int
    seconds: float
    earlier: Work = Work()
    """The work of the earlier runs its solver went on from (with a tables file)."""


@dataclass(eq=False)
class Branch:
    """A position of a spread solve, reached from the root by ``path``: solved by a task of
    its own (``own``: its bounds), or split, its replies then branches of their own.

    Its ``window`` is what its parent needs of it, as alpha-beta passes a window down: bounds
    that put its value at most the window's low end, at least its high end, or exactly (the
    root's moves, and the first reply of each split position whose own window is whole, need
    their exact values)."""

    path: tuple[Move, ...]
    state: State
    window: Bounds = NO_BOUNDS
    own: Bounds = NO_BOUNDS
    budgeted: bool = False
    """Whether its task was given the split budget."""
    replies: dict[Move, Branch] | None = None
    """Once split: a branch for each class of symmetric replies, under its first move."""
    classes: dict[Move, list[Move]] = field(default_factory=dict)
    """Once split: the classes of symmetric replies, as :meth:`Solver.symmetric_moves` gives."""
    waiting: list[Move] = field(default_factory=list)
    """Once split: the replies not sent yet, which wait for the first reply's answer to
    narrow their windows (*young brothers wait*)."""
    bounds: Bounds = NO_BOUNDS
    """What is known of its value: its own task's bounds, narrowed by its replies'."""

    def settle(self) -> None:
        """Its :attr:`bounds`, again, from its own and (its replies' being up to date) its
        replies'."""
        lower, upper = self.own
        if self.replies is not None:
            choice = movers_choice(self.state)
            lower = max(lower, choice(reply.bounds[0] for reply in self.replies.values()))
            upper = min(upper, choice(reply.bounds[1] for reply in self.replies.values()))
        self.bounds = (lower, upper)

    @property
    def answered(self) -> bool:
        """Whether its bounds tell its parent what the window asks."""
        lower, upper = self.bounds
        return lower == upper or upper <= self.window[0] or lower >= self.window[1]

    def reply_window(self) -> Bounds:
        """The window a reply sent now gets: this branch's own, narrowed by what its replies
        have proven (a reply worth no more to the side to move than that cannot matter)."""
        low, high = self.window
        if self.state.to_move is Player.BLACK:
            return max(low, self.bounds[0]), high
        return low, min(high, self.bounds[1])

    def move_bounds(self) -> dict[Move, Bounds]:
        """Once split: each reply's bounds (a symmetric reply's are its class's)."""
        assert self.replies is not None
        return {
            move: self.replies[first].bounds
            for first, members in self.classes.items() for move in members
        }


def solve_moves_apart(
    request: SolveRequest, solve_one: SolveOne, progress: Progress | None = None,
    workers: Callable[[int], None] | None = None,
) -> Solution:
    """The value, best moves and every move's value of the request's position, its moves
    solved by ``solve_one`` (a session of its own: :func:`agon.solve.session.solve_here`) in
    ``request.move_jobs`` processes, or on the request's cluster, within the request's limit,
    those too large for their budget split (see the module); :class:`SolveInterrupted` (with
    the bounds the tasks proved) when the time runs out or Ctrl-C stops it. ``workers`` is
    told how many tasks are solved at once (the processes, or the cluster's CPUs)."""
    game, state = request.game, request.position()
    moves = state.legal_moves()
    if not moves:  # the game is over: nothing to spread
        report = solve_one(replace(request, move_jobs=1, cluster=None, openings=True), progress)
        assert report.solution is not None
        return report.solution
    started = time.monotonic()
    finder = Solver(game, 10)
    spread = _Spread(request, solve_one, finder, progress)
    root = spread.root
    try:
        tasks_at_first = len(finder.symmetric_moves(state))
        with _move_solvers(request, tasks_at_first) as (solving, stop), spread.keeping():
            if workers is not None:
                workers(solving.at_once)
            spread.start(solving)
            try:
                spread.collect(solving)
            except KeyboardInterrupt:
                # each task stops at the end of its chunk, with its bounds (and its tables
                # saved); one that has not answered in time is killed with the pool
                tables = request.tables_file
                answer_seconds = STOP_ANSWER_SECONDS if tables is None else TABLES_ANSWER_SECONDS
                if progress is not None:
                    saving = " and saves its tables" if tables is not None else ""
                    progress(
                        f"stopping: each move's solve ends its chunk{saving} (a solve still "
                        f"searching after {answer_seconds:g} s is stopped at once) …"
                    )
                spread.stopping = True
                stop_and_wait(stop, lambda: spread.collect(solving), answer_seconds)
                raise
    except KeyboardInterrupt:
        raise spread.stopped(started, timed_out=False) from None
    values = root.move_bounds()
    if any(lower != upper for lower, upper in values.values()):
        raise spread.stopped(started, timed_out=True)
    value = root.bounds[0]
    return Solution(
        value=value,
        best_moves=[move for move in moves if values[move][0] == value],
        move_values={move: values[move][0] for move in moves},
        nodes=spread.nodes,
        seconds=time.monotonic() - started,
        komi=finder.reported_komi,
        earlier=spread.earlier,
    )


class _Spread:
    """The branches of one spread solve, its tasks, and what they found."""

    def __init__(
        self, request: SolveRequest, solve_one: SolveOne, finder: Solver,
        progress: Progress | None,
    ) -> None:
        self.request, self.solve_one, self.finder = request, solve_one, finder
        self.progress = progress
        self.root = Branch((), request.position())
        self.branches: dict[tuple[Move, ...], Branch] = {(): self.root}
        self.open = 0
        """Tasks sent and not answered yet."""
        self.queued_after = 0
        """While tasks are being sent together: how many are still to come after this one."""
        self.sent = 0
        self.stopping = False
        """Whether the solve is being stopped: what the tasks answer is only kept."""
        self.nodes = 0
        """This run's nodes, every task's together."""
        self.earlier = Work()
        """The earlier runs' work that the tasks' solvers went on from."""
        self.kept = SpreadCheckpoint()
        """What this run and the earlier ones (read back) have done."""
        self.kept_at = time.monotonic()
        tables = request.tables_file
        if tables is not None and request.resume and split_file(tables).exists():
            self.kept = SpreadCheckpoint.read(split_file(tables))

    def start(self, solving: TaskResults[tuple[Move, ...], TaskResult]) -> None:
        """Split the root: each class of symmetric moves a task (all at once: each move's
        value is wanted), or split at once where an earlier run split it."""
        self._split(self.root, solving)

    def collect(self, solving: TaskResults[tuple[Move, ...], TaskResult]) -> None:
        """Take the tasks' results until every move of the root is settled, or no task is
        left. A branch whose task spent its budget unanswered is split (where a CPU would
        otherwise be idle) or sent again; a split branch's waiting replies are sent once its
        first reply has answered. What answers a branch's window is enough: the tasks left
        below it are not waited for (they are cancelled with the pool)."""
        assert self.root.replies is not None
        root_moves = list(self.root.replies.values())
        while self.open and not all(move.answered for move in root_moves):
            path, result = solving.next()
            self.open -= 1
            self.nodes += result.nodes
            self.earlier = _add_earlier(self.earlier, result.earlier)
            branch = self.branches[path]
            branch.own = (max(branch.own[0], result.lower), min(branch.own[1], result.upper))
            branch.settle()
            if not branch.answered and self._out_of_budget(branch) and self._wanted(branch):
                # (the CPUs asked again each time: a cluster's may come and go)
                if self.open < solving.at_once and branch.state.legal_moves():
                    self._split(branch, solving)
                    self._announce_split(branch)
                else:  # (the other tasks keep the CPUs busy: splitting would only cost)
                    self._send(branch, solving)
            self._settle_from(branch, solving)
            self.keep()

    def _out_of_budget(self, branch: Branch) -> bool:
        """Whether ``branch``'s task ended because it spent its budget (not the solve's time,
        not cut short by a stop)."""
        return (
            branch.budgeted and not self.stopping and not stop_asked()
            and not self.request.limit.start().out_of_time()
        )

    def _wanted(self, branch: Branch) -> bool:
        """Whether the solve still needs an answer of ``branch``: no position above it (nor
        itself) is answered."""
        path = branch.path
        while path:
            if self.branches[path].answered:
                return False
            path = path[:-1]
        return True

    def _split(
        self, branch: Branch, solving: TaskResults[tuple[Move, ...], TaskResult]
    ) -> None:
        """Make ``branch``'s replies branches: the root's all sent at once; another's first
        reply sent with the branch's window, the others waiting for its answer."""
        branch.classes = self.finder.symmetric_moves(branch.state)
        branch.replies = {}
        for move in branch.classes:
            after = branch.state.copy()
            after.play(move)
            reply = Branch((*branch.path, move), after)
            branch.replies[move] = reply
            self.branches[reply.path] = reply
        branch.settle()
        first, *others = branch.classes
        branch.waiting = [] if branch is self.root else others
        self._start_all(branch, [first] + ([] if branch.waiting else others), solving)
        self._settle_from(branch, solving)

    def _start_all(
        self, branch: Branch, moves: list[Move],
        solving: TaskResults[tuple[Move, ...], TaskResult],
    ) -> None:
        """:meth:`_start` the replies ``moves`` of ``branch`` with its reply window, each
        knowing how many are still to come after it (so that none is given a budget where
        those sent with it fill the CPUs)."""
        assert branch.replies is not None
        # (every move of the root wants its exact value)
        window = NO_BOUNDS if branch is self.root else branch.reply_window()
        after = self.queued_after
        for index, move in enumerate(moves):
            self.queued_after = after + len(moves) - 1 - index
            self._start(branch.replies[move], window, solving)
        self.queued_after = after

    def _start(
        self, branch: Branch, window: Bounds,
        solving: TaskResults[tuple[Move, ...], TaskResult],
    ) -> None:
        """Set ``branch`` going with ``window``: nothing more where what an earlier run proved
        answers it, split at once where an earlier run split it, else a task of its own."""
        branch.window = window
        names = self._names(branch.path)
        if names in self.kept.bounds:
            branch.own = self.kept.bounds[names]
            branch.settle()
            if branch.answered:
                return
        if names in self.kept.split and branch.state.legal_moves():
            self._split(branch, solving)
        else:
            self._send(branch, solving)

    def _send(self, branch: Branch, solving: TaskResults[tuple[Move, ...], TaskResult]) -> None:
        request, progress = self.request, self.progress
        names = self._names(branch.path)
        text = PATH_SEPARATOR.join(names)
        where = f"after {' '.join(names)}"
        label = None if progress is None else labelled_progress(progress, where)
        tables = request.tables_file
        alone = replace(
            request, state=branch.state, openings=False, value_first=False, lines_after=(),
            lines_only=False, move_jobs=1, cluster=None,
            # (below the moves, the checkpoint keeps what a solved task proved, not its tables)
            keep_solved_tables=len(branch.path) == 1,
            tables_file=None if tables is None else move_tables_file(tables, text),
            limit=self._task_limit(branch, solving.at_once),
            window=None if branch.window == NO_BOUNDS else branch.window,
        )
        self.sent += 1
        self.open += 1
        deadline = alone.limit.deadline
        on_the_wall = None if deadline is None else time.time() + deadline - time.monotonic()
        solving.submit(branch.path, _solve_task, self.solve_one, alone, label, on_the_wall)

    def _task_limit(self, branch: Branch, at_once: int) -> Limit:
        """The limit of ``branch``'s task: the solve's, and the budget where fewer tasks are
        open than CPUs (and not too many were sent, and it is not too deep to split)."""
        limit, budget = self.request.limit, self.request.split_after
        branch.budgeted = (
            budget is not None and self.sent < MAX_TASKS
            and self.open + self.queued_after < at_once
            and len(branch.path) < MAX_SPLIT_PLIES
        )
        if budget is None or not branch.budgeted:
            return limit
        counts = [count for count in (limit.count, budget.count) if count is not None]
        return Limit(seconds=budget.seconds, count=min(counts, default=None)).by(limit.deadline)

    def _settle_from(
        self, branch: Branch, solving: TaskResults[tuple[Move, ...], TaskResult]
    ) -> None:
        """The bounds of ``branch`` and those above it, again, up to the root (those answered
        kept for the next run); a branch whose first reply has now answered, itself still
        wanted, sends its waiting replies."""
        path: tuple[Move, ...] | None = branch.path
        while path is not None:
            above = self.branches[path]
            path = path[:-1] if path else None
            above.settle()
            if above.answered and above.path:
                self._keep_answer(above)
            first = next(iter(above.classes), None)
            if (
                above.waiting and first is not None and above.replies is not None
                and above.replies[first].answered and self._wanted(above)
            ):
                waiting, above.waiting = above.waiting, []
                self._start_all(above, waiting, solving)
                above.settle()

    def _keep_answer(self, branch: Branch) -> None:
        """Keep what answers ``branch`` for the next run; below the moves, its tables are then
        of no more use."""
        names = self._names(branch.path)
        if self.kept.bounds.get(names) == branch.bounds:
            return  # (kept already, each time a result below it came)
        self.kept.bounds[names] = branch.bounds
        tables = self.request.tables_file
        if tables is not None and len(names) > 1:
            move_tables_file(tables, PATH_SEPARATOR.join(names)).unlink(missing_ok=True)

    @contextmanager
    def keeping(self) -> Iterator[None]:
        """The checkpoint written when the block ends, however it ends."""
        try:
            yield
        finally:
            self.keep(now=True)

    def keep(self, now: bool = False) -> None:
        """Write the checkpoint (with a tables file, once a position was split: until then
        the moves' tables say it all), at most every :data:`CHECKPOINT_SECONDS` unless
        ``now``."""
        tables = self.request.tables_file
        if tables is None or not self.kept.split:
            return
        if not now and time.monotonic() - self.kept_at < CHECKPOINT_SECONDS:
            return
        self.kept.write(split_file(tables))
        self.kept_at = time.monotonic()

    def stopped(self, started: float, timed_out: bool) -> SolveInterrupted:
        """What the tasks proved, where the solve stopped short."""
        move_bounds = self.root.move_bounds() if self.root.replies is not None else {}
        return _stopped(
            self.root.state, move_bounds, self.nodes, self.earlier, started, timed_out
        )

    def _announce_split(self, branch: Branch) -> None:
        """Say that ``branch`` was split, and keep it so; its own tables are of no more use."""
        names = self._names(branch.path)
        self.kept.split.add(names)
        tables = self.request.tables_file
        if tables is not None:
            move_tables_file(tables, PATH_SEPARATOR.join(names)).unlink(missing_ok=True)
        self.keep(now=True)
        if self.progress is not None:
            self.progress(
                f"after {' '.join(names)}: not solved within {self.request.split_after}: its "
                f"{len(branch.classes)} replies are solved apart"
            )

    def _names(self, path: tuple[Move, ...]) -> tuple[str, ...]:
        return tuple(self.request.game.format_move(move) for move in path)


@contextmanager
def _move_solvers(
    request: SolveRequest, tasks_at_first: int
) -> Iterator[tuple[TaskResults[tuple[Move, ...], TaskResult], AskedStop]]:
    """Where the tasks are solved, and how they are asked to stop: ``request.move_jobs``
    worker processes here (no more than ``moves`` where no task is split), or the Ray cluster
    ``request.cluster``."""
    if request.cluster is not None:
        from agon.solve import on_ray

        with on_ray.ray_results(request.cluster, request.move_jobs, warm_up_kernels) as found:
            yield found
        return
    stop = stop_signal()
    processes = request.move_jobs
    if request.split_after is None:
        processes = min(processes, tasks_at_first)
    with worker_pool(processes, warm_up_kernels, stop) as pool:
        yield WorkerResults(pool), stop


def move_tables_file(tables_file: Path, path: str) -> Path:
    """Where a spread solve keeps the tables of the solver of the position after ``path``
    (its moves as the game writes them, joined by :data:`PATH_SEPARATOR`): beside
    ``tables_file``, named after both."""
    return tables_file.with_name(f"{tables_file.stem}-after-{path}{tables_file.suffix}")


def split_file(tables_file: Path) -> Path:
    """Where a spread solve lists the positions it split, beside ``tables_file``."""
    return tables_file.with_name(f"{tables_file.stem}-split.json")


def kept_move_tables(tables_file: Path) -> list[Path]:
    """The files a spread solve keeps beside ``tables_file`` (:func:`move_tables_file`, and
    :func:`split_file` where it split positions), as they are on disk now."""
    kept = sorted(tables_file.parent.glob(move_tables_file(tables_file, "*").name))
    return kept + [split_file(tables_file)] * split_file(tables_file).exists()


@dataclass
class SpreadCheckpoint:
    """What a spread solve has done, kept beside its tables file (:func:`split_file`) so that
    the next run goes on from it: the positions it split, and the bounds proven of the
    positions solved apart (each position as its moves' text)."""

    split: set[tuple[str, ...]] = field(default_factory=set)
    bounds: dict[tuple[str, ...], Bounds] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> SpreadCheckpoint:
        """The checkpoint in ``path`` (:class:`AgonError` naming what is wrong with it)."""
        what = "a spread solve's checkpoint"
        kept = cls()
        try:
            for entry in read_versioned_json(path, SPLIT_FILE_BYTES, what, 1, "positions"):
                moves = _moves_text(entry["moves"])
                if entry.get("split") is True:
                    kept.split.add(moves)
                if "bounds" in entry:
                    lower, upper = entry["bounds"]
                    kept.bounds[moves] = (_bound(lower, -INF), _bound(upper, INF))
        except (TypeError, ValueError, KeyError, AttributeError) as error:
            raise AgonError(f"{path} is not {what}: {error!s}") from None
        return kept

    def write(self, path: Path) -> None:
        """Each position split or bounded, with what is known of it (a bound null: none)."""
        positions = []
        for moves in sorted(self.split | self.bounds.keys()):
            entry: dict[str, object] = {"moves": list(moves), "split": moves in self.split}
            if moves in self.bounds:
                entry["bounds"] = [json_number(bound) for bound in self.bounds[moves]]
            positions.append(entry)
        data = {"format": 1, "positions": positions}
        try:
            replace_file(path, json.dumps(data) + "\n")
        except OSError as error:
            raise AgonError(f"cannot write {path}: {error.strerror or error}") from None


def _moves_text(moves: object) -> tuple[str, ...]:
    if not isinstance(moves, list) or not all(isinstance(move, str) for move in moves):
        raise TypeError("a position must be a list of moves")
    return tuple(moves)


def _bound(number: object, none: float) -> float:
    """A bound as JSON holds it (null: ``none``, no bound)."""
    if number is None:
        return none
    if not isinstance(number, int | float) or isinstance(number, bool):
        raise TypeError(f"a bound must be a number or null, not {number!r}")
    return float(number)


def _solve_task(
    solve_one: SolveOne, request: SolveRequest, progress: Progress | None,
    wall_deadline: float | None,
) -> TaskResult:
    """One position's solve, in a worker: solved, or its bounds when its limit ran out or the
    parent asked it to stop. Its limit's deadline is read from ``wall_deadline``, the same
    instant on the wall clock (:func:`time.time`), which the hosts of a cluster share where
    each has a monotonic clock of its own."""
    if wall_deadline is not None:
        here = time.monotonic() + wall_deadline - time.time()
        request = replace(request, limit=replace(request.limit, deadline=here))
    if request.limit.start().out_of_time() or stop_asked():
        return TaskResult(float("-inf"), float("inf"), 0, 0.0)
    report = solve_one(request, progress)
    if report.stopped is not None:
        stop = report.stopped
        return TaskResult(stop.lower, stop.upper, stop.nodes, stop.seconds, report.earlier)
    if report.bounds is not None:
        lower, upper = report.bounds
        return TaskResult(lower, upper, report.nodes, report.seconds, report.earlier)
    assert report.solution is not None
    value = report.solution.value
    solution = report.solution
    return TaskResult(value, value, solution.nodes, solution.seconds, report.earlier)


def _add_earlier(total: Work, more: Work) -> Work:
    """The work of the earlier runs the tasks' solvers went on from, all together (its runs:
    the most any task's solver had)."""
    return Work(
        nodes=total.nodes + more.nodes, seconds=round(total.seconds + more.seconds, 1),
        runs=max(total.runs, more.runs),
    )


def _stopped(
    state: State, move_bounds: dict[Move, Bounds], nodes: int, earlier: Work, started: float,
    timed_out: bool,
) -> SolveInterrupted:
    """The position's bounds from its moves' (a move not reported yet bounds nothing), with
    the moves' own. Where they meet, the value is proven: the moves proven to reach it keep
    it, and those proven not to reach it do not (the others are not known yet)."""
    moves = state.legal_moves()
    lowers = {move: move_bounds.get(move, NO_BOUNDS)[0] for move in moves}
    uppers = {move: move_bounds.get(move, NO_BOUNDS)[1] for move in moves}
    choice = movers_choice(state)
    lower, upper = choice(lowers.values()), choice(uppers.values())
    seconds = time.monotonic() - started
    name = state.game.format_move
    named_bounds = {
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
        lower, upper, nodes, seconds, timed_out, proven, earlier, named_bounds
    )


def movers_choice(state: State) -> Callable[[Iterable[float]], float]:
    """How a position's value (Black's margin) follows from its moves': the most Black
    reaches after some move, or the least White holds Black to."""
    return max if state.to_move is Player.BLACK else min
