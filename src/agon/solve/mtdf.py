"""How a :class:`~agon.solve.solver.Solver` settles a position's value, by role apart from what
it does with the value (the best moves, the openings: :mod:`agon.solve.solver`) and from its
saved tables (:mod:`agon.solve.checkpoint`).

MTD(f) asks null-window tests of the value until its bounds meet. Each test is settled by
alpha-beta with iterative deepening (:func:`agon.solve.kernels.negamax`), or by proof-number
search (:mod:`agon.solve.proof_numbers`) and alpha-beta taking turns on one table
(:meth:`ValueSearch._turn`). Every search runs in chunks within the solve's limit; between two
chunks the solver reports its progress, hears a stop and saves its tables now and then.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from agon.core.errors import AgonError
from agon.core.fast import Array, FastTwin
from agon.core.limits import Chunks, Spending, Stop
from agon.core.symmetry import Symmetries
from agon.solve import kernels as K
from agon.solve import proof_numbers as P
from agon.solve.checkpoint import CHECKPOINT_SECONDS, SavedTables
from agon.solve.facts import Search
from agon.solve.solution import Bounds, SolveInterrupted, bound_text

Searching = Generator[tuple[int, int], None, int]
"""A search run a round at a time (``next``, which gives the bounds proven so far: units, from
the view of the side to move where it searches), its result the generator's return value."""
_Buffers = tuple[Array, npt.NDArray[np.float64], Array, Array, Array, Array]

FIRST_DEPTH, DEPTH_STEP = 8, 2
"""Plies of the first search of iterative deepening, and plies added at each next one."""
FIRST_SETBACKS, SETBACKS_STEP = 2, 1
"""The same, where the limit counts setbacks (see :func:`counts_setbacks`)."""
NEIGHBOUR_TESTS = 2
"""MTD(f) tests tried on each side of the one it asks for while that one stays unsettled
(:meth:`ValueSearch.value`)."""
FIRST_TURN_NODES = 20_000
"""Nodes of a test's first proof-number turn (:meth:`ValueSearch._turn`); each next turn doubles."""
ALPHA_BETA_SHARE = 4
"""An alpha-beta turn gets this many times the nodes of the proof-number turn before it: its
nodes cost about a quarter as much (a proof-number node values every child)."""
NEIGHBOURS_AFTER = FIRST_TURN_NODES << 7
"""The tests beside the one MTD(f) asks for get turns only once that one has had turns of
this many nodes (seven, 2.5 million nodes in all) without being settled: most tests are
settled sooner, and every turn spent beside them is then lost."""


@dataclass
class _Test:
    """A null-window test of MTD(f) under way: how far each search has taken it."""

    beta: int
    depths: Iterator[int]
    """Alpha-beta's depth limits still to come (:meth:`ValueSearch._deepening`)."""
    depth: int
    """The depth limit alpha-beta has reached."""
    iteration: int
    """That depth's iteration number (what its hints are marked with)."""
    allowance: int
    """Nodes for the proof-number search's next turn."""


class ValueSearch(SavedTables):
    """The value-searching part of a :class:`~agon.solve.solver.Solver`, which sets up what it
    reads here."""

    game: Any
    twin: FastTwin
    symmetries: Symmetries
    scale: int
    shift: float
    hints: Array
    image: Array
    stop_requested: Callable[[], bool]
    _summary_size: int
    _pass_move: int
    _kernels: tuple[Any, ...]
    _evaluate: Any
    _chunks: dict[str, Chunks]
    _spending: Spending
    _last_report: float
    _bounds: tuple[int, int]
    _sign: int
    _method: str
    _target: str
    lower_bound_move: int | None

    def value(self, array: Array, sign: int, guess: int = 0) -> int:
        """Exact value in units, from the view of the side to move (MTD(f)); ``sign`` is +1
        where that side is Black (also where the game is over: the side that would move).

        A test MTD(f) asks for that is not settled at once gives way to the tests just beside
        it (:data:`NEIGHBOUR_TESTS`), which are often settled sooner, before it is searched
        further. So a position too hard to solve still gets narrow bounds (Ctrl-C and time
        limits report them). With alpha-beta alone, "further" is the next depth limit; with
        proof numbers, each test gets turns (:meth:`_turn`)."""
        return _to_the_end(self._value_rounds(array, sign, guess))

    def _value_rounds(
        self, array: Array, sign: int, guess: int, buffers: _Buffers | None = None
    ) -> Searching:
        """:meth:`value` a round at a time (a round: a turn on a test, or its tests at one
        depth limit), so that several positions' searches can take turns
        (:meth:`~agon.solve.solver.Solver._take_turns`: ``array`` holds the position whenever a
        round runs, and they may share ``buffers``, which no round reads after it ends).
        Returns the value."""
        buffers = self._buffers(array) if buffers is None else buffers
        if self.search is Search.ALPHA_BETA:
            depths = self._deepening(array)
            depth = next(depths)

            def settle(near: list[int]) -> tuple[int, int] | None:
                # every test at this depth limit, then a deeper limit
                nonlocal depth
                for beta in near:
                    result = self._probe_at(array, sign, beta - 1, beta, depth, buffers)
                    if result != K.UNKNOWN:
                        return beta, result
                depth = next(depths)
                return None
        else:
            tests: dict[int, _Test] = {}

            def settle(near: list[int]) -> tuple[int, int] | None:
                # the tests beside the first get turns only once it has proven hard
                if near[0] not in tests or tests[near[0]].allowance < NEIGHBOURS_AFTER:
                    near = near[:1]
                for beta in near:
                    if beta not in tests:
                        tests[beta] = self._new_test(array, beta)
                    result = self._turn(array, sign, tests[beta], buffers)
                    if result is not None:
                        return beta, result
                return None

        lower, upper = self._stored_bounds(array, sign, buffers)
        estimate = guess
        while lower < upper:
            self._bounds, self._sign = (lower, upper), sign
            first = estimate + 1 if estimate <= lower else estimate
            first = min(max(first, lower + 1), upper)
            settled = settle(_tests_near(first, lower, upper))
            if settled is not None:
                beta, result = settled
                if result >= beta:
                    lower = result
                    self.lower_bound_move = self._table_move(array)
                else:
                    upper = result
                estimate = result
            yield lower, upper
        return lower

    def _table_move(self, array: Array) -> int | None:
        """The move the table keeps for the position ``array`` holds, else None: the best
        move of the last search there, which is the move that reached the test's value where
        that search proved a lower bound. None too where the rules read the history: a bound
        proven without it is kept under the present position alone, and the move under the
        whole situation may be an earlier search's."""
        if self.control[K.C_HISTORY]:
            return None
        kernels, symmetries = self._kernels, self.symmetries
        key = K.position_key(
            kernels[5], kernels[6], kernels[7], self.twin.params, symmetries.data, array,
            self.image, self.control,
        )
        row = K.tt_find(self.table, key)
        move = -1 if row < 0 else K.unpack(self.table[row, 1])[2]
        if move < 0:
            return None
        return int(symmetries.move_maps[symmetries.count + self.image[0], move])

    def _stored_bounds(self, array: Array, sign: int, buffers: _Buffers) -> tuple[int, int]:
        """The bounds on ``array``'s value (units, as :meth:`value` counts them) that the
        table proves already, else the game's own: two searches limited to no ply, which look
        the position up and go no further. MTD(f) starts from them, so a solve that goes on
        from saved tables asks only the tests still open (from the game's own bounds it would
        ask its first guess again, perhaps the hardest test, before the stored bounds answer
        the others)."""
        bound = int(self.control[K.C_MAX_VALUE])
        lower, upper = -bound, bound
        for alpha, beta in ((-bound, -bound + 1), (bound - 1, bound)):
            result = self._probe_at(array, sign, alpha, beta, 0, buffers)
            if result == K.UNKNOWN:
                continue
            if result >= beta:
                lower = result
            else:
                upper = result
        return lower, upper

    def _probe_rounds(
        self, array: Array, sign: int, alpha: int, beta: int, buffers: _Buffers
    ) -> Searching:
        """Fail-soft value of ``array`` in the window (alpha, beta), in units, for the side to
        move (``sign`` as in :meth:`value`), searched until a bound is proven: a round (a depth
        limit, or a turn) at a time, as :meth:`_value_rounds` runs :meth:`value`."""
        bound = int(self.control[K.C_MAX_VALUE])
        if self.search is Search.ALPHA_BETA:
            for depth in self._deepening(array):
                self._bounds, self._sign = (-bound, bound), sign  # (no stale bounds shown)
                value = self._probe_at(array, sign, alpha, beta, depth, buffers)
                if value != K.UNKNOWN:
                    return value
                yield -bound, bound
            raise AssertionError("unreachable: the deepening ends with a full-depth search")
        test = self._new_test(array, beta)
        while True:
            self._bounds, self._sign = (-bound, bound), sign
            settled = self._turn(array, sign, test, buffers)
            if settled is not None:
                return settled
            yield -bound, bound

    def _new_test(self, array: Array, beta: int) -> _Test:
        depths = self._deepening(array)
        return _Test(beta, depths, next(depths), self._next_iteration(), FIRST_TURN_NODES)

    def _next_iteration(self) -> int:
        """A new number for a depth-limited search's hints (see negamax)."""
        self.control[K.C_ITERATION] += 1
        return int(self.control[K.C_ITERATION])

    def _turn(self, array: Array, sign: int, test: _Test, buffers: _Buffers) -> int | None:
        """One turn on ``test``: the proof-number search for the test's allowance of nodes,
        then (with :attr:`Search.BOTH`) alpha-beta's iterative deepening for
        :data:`ALPHA_BETA_SHARE` times as many. The test's fail-soft value, or None where
        neither settled it (its next turn gets twice the nodes). Both store what they prove
        in the one table, so each resumes with the other's proofs: the proof numbers from
        their own table, alpha-beta at the depth limit it had reached."""
        allowance = test.allowance
        test.allowance *= 2
        alpha, beta = test.beta - 1, test.beta
        # (alpha-beta alone never takes turns: it deepens in value and probe)
        value = self._search(array, alpha, beta, sign, None, buffers, allowance)
        if value is not None or self.search is Search.PROOF_NUMBERS:
            return value
        allowance *= ALPHA_BETA_SHARE
        while allowance > 0:
            nodes = self.nodes
            self.control[K.C_ITERATION] = test.iteration
            value = self._search(array, alpha, beta, sign, test.depth, buffers, allowance)
            allowance -= self.nodes - nodes
            if value is None:
                return None
            if value != K.UNKNOWN:
                return value
            test.depth, test.iteration = next(test.depths), self._next_iteration()
        return None

    def _deepening(self, array: Array) -> Iterator[int]:
        """The depth limits of iterative deepening from ``array``: :data:`FIRST_DEPTH`, then
        :data:`DEPTH_STEP` plies more each time (a coarser step overshoots the depth a proof
        needs at a high price: docs/solver.md); in setbacks where :func:`counts_setbacks`.
        Games whose arrays have room for fewer than four plies a move are searched to their
        end at once."""
        plies = self.twin.room(array)
        first, step = FIRST_DEPTH, DEPTH_STEP
        if self.control[K.C_DEPTH_IN_SETBACKS]:
            first, step = FIRST_SETBACKS, SETBACKS_STEP
        depth = first if plies > 4 * self.twin.num_actions else plies - 1
        while depth < plies - 1:
            yield depth
            depth += step
        yield plies - 1
        raise AgonError("this position's game is too long for the solver's arrays")

    def _buffers(self, array: Array) -> _Buffers:
        """The searches' per-ply arrays for searches from ``array``, as deep as its state
        array allows: moves, their ordering scores, traces, and the proof-number search's
        children's proof numbers, disproof numbers and values."""
        plies = self.twin.room(array)
        moves = np.zeros((plies + 1, self.twin.num_actions), dtype=np.int64)
        scores = np.zeros(moves.shape, dtype=np.float64)
        trace = np.zeros((plies + 1, K.TRACE_HEAD + 3 * self._summary_size), dtype=np.int64)
        rows = moves.shape if self.search is not Search.ALPHA_BETA else (1, 1)
        phis, deltas, values = (np.zeros(rows, dtype=np.int64) for _ in range(3))
        return moves, scores, trace, phis, deltas, values

    def _probe_at(
        self, array: Array, sign: int, alpha: int, beta: int, depth: int, buffers: _Buffers
    ) -> int:
        """One alpha-beta search limited to ``depth`` (plies, or setbacks: see
        :meth:`_deepening`), with ``buffers`` from :meth:`_buffers`: its fail-soft value, or
        :data:`~agon.solve.kernels.UNKNOWN`."""
        self._next_iteration()
        value = self._search(array, alpha, beta, sign, depth, buffers, None)
        assert value is not None  # (no allowance)
        return value

    def _stopped(self, timed_out: bool) -> SolveInterrupted:
        low, high = self._black_bounds(self._sign, self._proven(self._bounds))
        seconds = self._spending.elapsed
        return SolveInterrupted(low, high, self.nodes, seconds, timed_out, earlier=self.earlier)

    def _proven(self, bounds: tuple[int, int]) -> tuple[int, int]:
        """Bounds in units with the game's own (every margin lies within them) made infinite:
        nothing was proven there. A value (equal bounds) stays as it is."""
        largest = int(self.control[K.C_MAX_VALUE])
        lower, upper = bounds
        if lower == upper:
            return bounds
        lower = -K.INFINITY if lower <= -largest else lower
        return lower, K.INFINITY if upper >= largest else upper

    def _black_bounds(self, sign: int, bounds: tuple[int, int]) -> Bounds:
        """Bounds in units from the view of the side to move (``sign`` as :meth:`value` takes
        it) as Black's margin."""
        low, high = sorted(self._report_value(sign * bound) for bound in bounds)
        return low, high

    def _report_value(self, units: int) -> float:
        """Black's margin as reported, from Black's view in units (±infinity kept)."""
        if abs(units) >= K.INFINITY:
            return float("inf") if units > 0 else float("-inf")
        return units / self.scale - self.shift

    def _search(
        self, array: Array, alpha: int, beta: int, sign: int, depth: int | None,
        buffers: _Buffers, allowance: int | None,
    ) -> int | None:
        """One search of the window (``alpha``, ``beta``): alpha-beta limited to ``depth``,
        or the proof-number search of the test ``beta`` where ``depth`` is None; run in
        chunks of about :attr:`chunk_seconds` within the solve's limit, and stopped (None)
        once it has spent ``allowance`` nodes, if given, without a result."""
        control = self.control
        moves, scores, trace, phis, deltas, values = buffers
        method = "proof numbers" if depth is None else "alpha-beta"
        self._method = method if depth is None else f"depth {depth}"
        if depth is not None:
            control[K.C_DEPTH_LIMITED] = int(depth < moves.shape[0] - 2)
        found = [0]

        def step(nodes: int) -> tuple[int, bool]:
            before = self.nodes
            control[K.C_LIMIT] = control[K.C_NODES] + nodes
            if depth is None:
                prove: Any = P.prove
                found[0] = int(prove(
                    *self._kernels, self._evaluate, self.twin.params, self.symmetries.data,
                    self.symmetries.move_maps, array, beta, sign, 0, P.PN_INFINITY,
                    P.PN_INFINITY, self.table, self.summaries, self.numbers, control,
                    moves, scores, phis, deltas, values, trace, self.image, self.cutoffs,
                )[2])
            else:
                search: Any = K.negamax
                found[0] = int(search(
                    *self._kernels, self.twin.params, self.symmetries.data,
                    self.symmetries.move_maps, array, alpha, beta, sign, 0, depth,
                    self.table, self.summaries, self.hints, control, moves, scores, trace,
                    self.image, self._pass_move, self.cutoffs, K.NEED_ALL,
                ))
            if not control[K.C_ABORTED]:
                return self.nodes - before, True
            if control[K.C_OVERFLOW]:
                raise AgonError("this position's game is too long for the solver's arrays")
            control[K.C_ABORTED] = 0
            return self.nodes - before, False

        try:
            _, stop = self._chunks[method].run(step, self._spending, allowance, self._between)
        except KeyboardInterrupt:
            raise self._stopped(timed_out=False) from None
        if stop is Stop.LIMIT:
            raise self._stopped(timed_out=True)
        return found[0] if stop is Stop.FINISHED else None

    def _between(self) -> None:
        """After each chunk of a search: report progress, stop where asked to, and save the
        tables now and then."""
        self._report()
        if self.stop_requested():
            raise self._stopped(timed_out=False)
        if self.checkpoint is not None and time.monotonic() - self._saved > CHECKPOINT_SECONDS:
            self.keep_tables(self.checkpoint)

    def _report(self) -> None:
        now = time.monotonic()
        if self.progress is None or now - self._last_report < 1.0:
            return
        self._last_report = now
        seconds = self._spending.elapsed
        text = ", ".join(bound_text(b) for b in self._black_bounds(self._sign, self._bounds))
        self.progress(
            f"{self.nodes:,} nodes in {seconds:.0f}s ({self.nodes / max(seconds, 1e-9):,.0f}/s), "
            f"{self._method}, value{self._target} in [{text}] (Black's margin)"
        )

    @contextmanager
    def _stops_between_searches(self) -> Iterator[None]:
        """Ctrl-C between two searches' chunks (each search turns one within it into
        :class:`SolveInterrupted` itself) stops the solve as within one: with the bounds
        proven so far."""
        try:
            yield
        except KeyboardInterrupt:
            raise self._stopped(timed_out=False) from None


def _tests_near(first: int, lower: int, upper: int) -> list[int]:
    """``first``, then the null-window tests within :data:`NEIGHBOUR_TESTS` of it (nearest
    first), that can still move the bounds ``lower < value <= upper``."""
    tests = [first]
    for distance in range(1, NEIGHBOUR_TESTS + 1):
        tests += [t for t in (first - distance, first + distance) if lower < t <= upper]
    return tests


def _to_the_end(searching: Searching) -> int:
    """Run a search's rounds one after another: its result."""
    while True:
        try:
            next(searching)
        except StopIteration as done:
            return int(done.value)
