"""Exact solving from Python: MTD(f) over the negamax kernel, in chunks, with progress.

A :class:`Solver` owns one transposition table for one variant; every position it solves
shares it. Each probe of MTD(f) is a null-window search run in chunks of about a second (the
kernel stops when its node allowance runs out and the probe restarts, finding its finished
subtrees in the table), so progress can be shown and Ctrl-C stops cleanly with the bounds
proven so far (:class:`SolveInterrupted`).

Values are Black's margin with perfect play. Alternator and tromp-taylor Alak are solved
without komi (the komi only shifts every final margin); their value under the variant's komi
is the solved value minus the komi. Traditional Alak is solved with its komi, since a draw by
repetition is worth 0 whatever the komi.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import cfunc, types

from agon.core.errors import AgonError
from agon.core.fast import Array, FastTwin
from agon.core.game import Game, Move, State
from agon.core.player import Player
from agon.games.alak import Alak
from agon.games.alak import fast as alak_fast
from agon.games.alak.rules import AlakRules
from agon.games.alternator import Alternator
from agon.search.twins import history_kernels_for, kernels_for, twin_for
from agon.solve import kernels as K
from agon.solve.symmetry import Symmetries, symmetries_for

MAX_CHUNK_FACTOR = 10
"""A chunk of search runs at most this many times ``chunk_seconds``."""
HINT_BITS = 20
"""Entries of the table of unknown results (16 bytes each)."""
FIRST_DEPTH, DEPTH_STEP = 8, 2
"""Plies of the first search of iterative deepening, and plies added at each next one."""
FIRST_SETBACKS, SETBACKS_STEP = 2, 1
"""The same, where the limit counts setbacks (see :func:`counts_setbacks`)."""
NEIGHBOUR_TESTS = 2
"""MTD(f) tests tried on each side of the one it asks for, at a depth that leaves it unknown."""


_Buffers = tuple[Array, npt.NDArray[np.float64], Array]


def default_table_bits(game: Game) -> int:
    """2**22 buckets of two entries, 16 bytes each (128 MiB), for Alternator; for Alak, whose
    entries also keep two summaries of 24·(N+1) bytes, 2**20 up to 12 points (1.25 GiB on 12),
    2**19 up to 16 (0.8 GiB on 16) and 2**18 beyond."""
    if isinstance(game, Alak):
        return 20 if game.size <= 12 else 19 if game.size <= 16 else 18
    return 22


class SolveInterrupted(Exception):
    """A solve stopped by Ctrl-C or its time limit, with the bounds proven so far.

    The bounds are Black's margin (as :attr:`Solution.value` reports it) at the position whose
    value was being searched when it stopped: the root, or one of its moves for openings.
    """

    def __init__(
        self, lower: float, upper: float, nodes: int, seconds: float, timed_out: bool
    ) -> None:
        reason = "out of time" if timed_out else "interrupted"
        super().__init__(f"{reason}: the value lies between {lower:g} and {upper:g}")
        self.lower, self.upper, self.nodes, self.seconds = lower, upper, nodes, seconds
        self.timed_out = timed_out


@dataclass
class Solution:
    """The solved value of a position and how it was found."""

    value: float
    """Black's margin with perfect play: under the variant's rules, except that an Alternator
    value leaves the komi out (:attr:`result_margin` puts it in)."""
    best_moves: list[Move]
    move_values: dict[Move, float] | None
    """Black's margin after each legal move, as :attr:`value` counts it (with openings)."""
    nodes: int
    seconds: float
    komi: float | None = None
    """Alternator's komi, which :attr:`value` leaves out; None for Alak."""

    @property
    def result_margin(self) -> float:
        """Black's margin with perfect play under the variant's komi."""
        return self.value - (self.komi or 0.0)


@dataclass
class _Progress:
    started: float = field(default_factory=time.monotonic)
    last_report: float = 0.0


def solving_variant(game: Game) -> tuple[Game, float]:
    """The variant the solver searches, and what to subtract from its values to report them.

    Where the komi only shifts every final margin (Alternator, tromp-taylor) the search runs
    without it; Alternator reports that komi-free value, tromp-taylor subtracts the komi.
    Traditional Alak keeps its komi, since a draw by repetition is worth 0 whatever the komi.
    """
    if isinstance(game, Alternator):
        return replace(game, komi_points=0.0), 0.0
    if isinstance(game, Alak):
        if game.rules is AlakRules.TROMP_TAYLOR:
            return replace(game, komi_points=0.0), game.komi
        if not float(2 * game.komi).is_integer():
            raise AgonError("solving traditional Alak needs a komi that is a multiple of 0.5")
        return game, 0.0
    raise AgonError(f"the solver does not know {game.description}")


def largest_margin(game: Game) -> int:
    """A bound on |margin| at the end of any game of the variant solved (komi 0 where the
    komi only shifts margins): every point or cell counted once; traditional prisoners make
    Alak's margin unbounded there."""
    if isinstance(game, Alternator):
        return game.cells
    if isinstance(game, Alak) and game.rules is not AlakRules.TRADITIONAL:
        return game.size
    return K.INFINITY


def keeps_results_apart_from_history(twin: FastTwin) -> bool:
    """Whether results whose proof read nothing from the past are stored under the present
    position alone (docs/solver.md): for games whose rules look back, with boards that pack
    into one int64."""
    return 0 < twin.board_points <= 32


def counts_setbacks(twin: FastTwin) -> bool:
    """Whether iterative deepening limits only the *setbacks* of a line, the moves that add no
    stone to the board (see :func:`agon.solve.kernels.negamax`), rather than its plies: where
    the kernels can count stones and the rules have no pass (baljeu), so that only captures
    prolong a game. (Where a pass also counts, tromp-taylor and traditional Alak, plies served
    better: measured on tromp-taylor 1 × 9, 0.7 million nodes against 6.6 million.)"""
    return keeps_results_apart_from_history(twin) and twin.game.pass_move is None


def plies_available(game: Game, state: Array) -> int:
    """How deep a search may go from ``state`` before the twin's array is full."""
    if isinstance(game, Alak):
        return int(state[alak_fast.S_CAPACITY] - state[alak_fast.S_HISTORY_LENGTH])
    return 2 * game.num_actions + 2


class Solver:
    """Solves positions of one variant, sharing one transposition table."""

    def __init__(
        self,
        game: Game,
        table_bits: int | None = None,
        symmetry: bool = True,
        progress: Callable[[str], None] | None = None,
        chunk_seconds: float = 1.0,
        inline: bool = False,
        max_seconds: float | None = None,
    ) -> None:
        self.game = game
        self.variant, self.shift = solving_variant(game)
        self.max_seconds = max_seconds
        self.twin: FastTwin = twin_for(self.variant)
        self.symmetries: Symmetries = symmetries_for(self.variant, symmetry)
        self.scale = 1 if float(self.variant.komi).is_integer() else 2
        if table_bits is None:
            table_bits = default_table_bits(game)
        self.table = np.zeros((2 << table_bits, 2), dtype=np.int64)
        # the summaries of history-free results, one per table row (docs/solver.md)
        # (boards of more than 32 points do not pack into one int64: every result of theirs is
        # stored under its whole history, which is also sound)
        history = keeps_results_apart_from_history(self.twin)
        levels = self.twin.board_points + 1
        self._summary_size = K.SUMMARY_FIELDS * levels if history else K.SUMMARY_FIELDS
        rows = self.table.shape[0] if history else 1
        # a summary for each bound of an entry
        self.summaries = np.zeros((rows, 2 * self._summary_size), dtype=np.int64)
        self.hints = np.zeros((1 << HINT_BITS, 2), dtype=np.int64)
        self.control = np.zeros(K.CONTROL_SIZE, dtype=np.int64)
        self.control[K.C_HISTORY] = int(history)
        self.control[K.C_REPEATS_COUNT] = int(self.twin.repeats_count)
        self.control[K.C_DEPTH_IN_SETBACKS] = int(counts_setbacks(self.twin))
        self.control[K.C_SCALE] = self.scale
        self.control[K.C_USE_SYMMETRY] = int(len(self.symmetries.names) > 1)
        self.control[K.C_MAX_VALUE] = min(largest_margin(self.variant) * self.scale, K.INFINITY)
        self.image = np.zeros(1, dtype=np.int64)
        self.cutoffs = np.zeros((2, self.twin.num_actions), dtype=np.int64)
        self.progress = progress
        self.chunk_seconds = chunk_seconds
        self._chunk = max(10_000, int(200_000 * chunk_seconds))  # ~200k nodes a second
        self._kernels = _kernel_arguments(self.twin, self.symmetries, inline)
        self._bounds: tuple[int, int] = (-K.INFINITY, K.INFINITY)
        self._sign = 1
        self._clock = _Progress()
        self._depth = FIRST_DEPTH
        self._target = ""
        pass_move = self.variant.pass_move
        self._pass_move = -1 if pass_move is None else pass_move

    @property
    def nodes(self) -> int:
        return int(self.control[K.C_NODES])

    # --- positions ---------------------------------------------------------------------------

    def state_array(self, state: State) -> Array:
        """The twin array of a reference state of :attr:`game`, in the solved variant."""
        if state.game != self.game:
            raise AgonError(f"not a position of {self.game.description}")
        if self.variant == self.game:
            return self.twin.from_reference(state)
        return self.twin.from_reference(self.variant.parse_position(state.position()))

    def legal_moves(self, array: Array) -> list[Move]:
        return self.twin.legal_list(array)

    # --- solving -----------------------------------------------------------------------------

    def value(self, array: Array, sign: int, guess: int = 0) -> int:
        """Exact value in units, from the view of the side to move (MTD(f)); ``sign`` is +1
        where that side is Black (also where the game is over: the side that would move).

        Iterative deepening runs outside MTD(f): at each depth limit the null-window test
        MTD(f) asks for comes first, and if that limit leaves it unknown, the tests just beside
        it (:data:`NEIGHBOUR_TESTS`), which are often proven at a depth where the first is not;
        only when all are unknown does the limit grow. So a position too hard to solve still
        gets narrow bounds (Ctrl-C and time limits report them)."""
        bound = int(self.control[K.C_MAX_VALUE])
        lower, upper = -bound, bound
        estimate = guess
        search = self._deepening(array)
        depth = next(search)
        buffers = self._buffers(array)
        while lower < upper:
            first = estimate + 1 if estimate <= lower else estimate
            first = min(max(first, lower + 1), upper)
            for test in _tests_near(first, lower, upper):
                self._bounds, self._sign = (lower, upper), sign
                result = self._probe_at(array, sign, test - 1, test, depth, buffers)
                if result != K.UNKNOWN:
                    break
            else:
                depth = next(search)
                continue
            if result >= test:
                lower = result
            else:
                upper = result
            estimate = result
        return lower

    def probe(self, array: Array, sign: int, alpha: int, beta: int) -> int:
        """Fail-soft alpha-beta value of ``array`` in the window (alpha, beta), in units, for
        the side to move (``sign`` as in :meth:`value`): searches limited to ever more plies
        until one proves a bound."""
        buffers = self._buffers(array)
        for depth in self._deepening(array):
            value = self._probe_at(array, sign, alpha, beta, depth, buffers)
            if value != K.UNKNOWN:
                return value
        raise AssertionError("unreachable: the deepening ends with a full-depth search")

    def _deepening(self, array: Array) -> Iterator[int]:
        """The depth limits of iterative deepening from ``array``: :data:`FIRST_DEPTH`, then
        :data:`DEPTH_STEP` plies more each time (a search costs about twice as much for two
        more plies on Alak, so a coarser step overshoots the depth a proof needs at a high
        price); in setbacks where :func:`counts_setbacks`. Games as short as Alternator's are
        searched to their end at once."""
        plies = plies_available(self.variant, array)
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
        """The search's per-ply arrays (moves, their scores, traces) for searches from
        ``array``, as deep as its state array allows."""
        plies = plies_available(self.variant, array)
        moves = np.zeros((plies + 1, self.twin.num_actions), dtype=np.int64)
        scores = np.zeros(moves.shape, dtype=np.float64)
        trace = np.zeros((plies + 1, K.TRACE_HEAD + 3 * self._summary_size), dtype=np.int64)
        return moves, scores, trace

    def _probe_at(
        self, array: Array, sign: int, alpha: int, beta: int, depth: int, buffers: _Buffers
    ) -> int:
        """One search limited to ``depth`` (plies, or setbacks: see :meth:`_deepening`), with
        ``buffers`` from :meth:`_buffers`: its fail-soft value, or
        :data:`~agon.solve.kernels.UNKNOWN`."""
        moves, scores, trace = buffers
        self.control[K.C_DEPTH_LIMITED] = int(depth < moves.shape[0] - 2)
        self._depth = depth
        self.control[K.C_ITERATION] += 1
        try:
            return self._search(array, alpha, beta, sign, depth, moves, scores, trace)
        except KeyboardInterrupt:
            raise self._stopped(timed_out=False) from None

    def _stopped(self, timed_out: bool) -> SolveInterrupted:
        low, high = sorted(self._report_value(self._sign * b) for b in self._bounds)
        seconds = time.monotonic() - self._clock.started
        return SolveInterrupted(low, high, self.nodes, seconds, timed_out)

    def _report_value(self, units: int) -> float:
        """Black's margin as reported, from Black's view in units (±infinity kept)."""
        if abs(units) >= K.INFINITY:
            return float("inf") if units > 0 else float("-inf")
        return units / self.scale - self.shift

    def _search(
        self, array: Array, alpha: int, beta: int, sign: int, depth: int, moves: Array,
        scores: npt.NDArray[np.float64], trace: Array,
    ) -> int:
        """One depth-limited search, run in chunks of about :attr:`chunk_seconds`."""
        control = self.control
        while True:
            control[K.C_LIMIT] = control[K.C_NODES] + self._chunk
            started = time.monotonic()
            search: Any = K.negamax
            value = int(
                search(
                    *self._kernels, self.twin.params, self.symmetries.data,
                    self.symmetries.move_maps, array, alpha, beta, sign, 0, depth, self.table,
                    self.summaries, self.hints, control, moves, scores, trace, self.image,
                    self._pass_move, self.cutoffs, K.NEED_ALL,
                )
            )
            if not control[K.C_ABORTED]:
                return value
            if control[K.C_OVERFLOW]:
                raise AgonError("this position's game is too long for the solver's arrays")
            control[K.C_ABORTED] = 0
            self._resize_chunk(time.monotonic() - started)
            self._report()
            if self.max_seconds is not None and (
                time.monotonic() - self._clock.started > self.max_seconds
            ):
                raise self._stopped(timed_out=True)

    def _resize_chunk(self, elapsed: float) -> None:
        # about chunk_seconds per chunk, and a little more each time so that a probe whose
        # restarts cost more than a chunk still finishes; but never more than
        # MAX_CHUNK_FACTOR chunks' time, since Ctrl-C and time limits wait for a chunk's end
        # (a restart finds its finished subtrees in the table and its unknown ones in the hints)
        rate = self._chunk / max(elapsed, 1e-3)
        grown = int(1.02 * max(self._chunk, rate * self.chunk_seconds))
        longest = int(rate * self.chunk_seconds * MAX_CHUNK_FACTOR)
        self._chunk = max(10_000, min(grown, longest))

    def _report(self) -> None:
        now = time.monotonic()
        if self.progress is None or now - self._clock.last_report < 1.0:
            return
        self._clock.last_report = now
        seconds = now - self._clock.started
        bounds = sorted(self._report_value(self._sign * b) for b in self._bounds)
        text = ", ".join(f"{b:g}".replace("inf", "∞") for b in bounds)
        self.progress(
            f"{self.nodes:,} nodes in {seconds:.0f}s ({self.nodes / max(seconds, 1e-9):,.0f}/s), "
            f"depth {self._depth}, value{self._target} in [{text}] (Black's margin)"
        )

    def margin(self, state: State) -> float:
        """Only the value of ``state``: Black's margin with perfect play, as
        :attr:`Solution.value` counts it (no best moves, so cheaper than :meth:`solve`)."""
        self._clock = _Progress()
        self._target = ""
        black_view = -1 if state.to_move is Player.WHITE else 1
        return self._report_value(black_view * self.value(self.state_array(state), black_view))

    def solve(self, state: State, openings: bool = False) -> Solution:
        """Value, best moves and (with ``openings``) every legal move's value of ``state``."""
        self._clock = _Progress()
        nodes_before = self.nodes
        array = self.state_array(state)
        black_view = -1 if state.to_move is Player.WHITE else 1
        self._target = ""
        value = self.value(array, black_view)
        try:
            best, move_values = self._moves(array, black_view, value, openings)
        except SolveInterrupted as stop:
            # the position's own value is proven: report it, not the move being searched
            known = self._report_value(black_view * value)
            raise SolveInterrupted(known, known, stop.nodes, stop.seconds, stop.timed_out) from None
        return Solution(
            value=self._report_value(black_view * value),
            best_moves=best,
            move_values=move_values,
            nodes=self.nodes - nodes_before,
            seconds=time.monotonic() - self._clock.started,
            komi=self.game.komi if isinstance(self.game, Alternator) else None,
        )

    def _moves(
        self, array: Array, black_view: int, value: int, openings: bool
    ) -> tuple[list[Move], dict[Move, float] | None]:
        """The best moves of a position whose value (units, mover's view) is known, and with
        ``openings`` every move's value (Black's margin)."""
        moves = self.legal_moves(array)
        move_values: dict[Move, float] | None = None
        best: list[Move] = []
        if openings:
            move_values = {}
            for move in moves:
                self._target = f" after {self.game.format_move(move)}"
                self.twin.play(self.twin.params, array, move)
                units = -self.value(array, -black_view, -value)
                self.twin.undo(self.twin.params, array)
                move_values[move] = self._report_value(black_view * units)
                if units == value:
                    best.append(move)
        else:
            for move in moves:
                self._target = f" after {self.game.format_move(move)} (is it best?)"
                self.twin.play(self.twin.params, array, move)
                # the move keeps the value iff the opponent's value is at most -value
                if self.probe(array, -black_view, -value, -value + 1) <= -value:
                    best.append(move)
                self.twin.undo(self.twin.params, array)
        return best, move_values


def principal_variation(solver: Solver, state: State, max_plies: int = 200) -> list[Move]:
    """A line of perfect play from ``state``: the first best move at each step, until the game
    ends (or ``max_plies``)."""
    line: list[Move] = []
    state = state.copy()
    while not state.is_over and len(line) < max_plies:
        move = solver.solve(state).best_moves[0]
        state.play(move)
        line.append(move)
    return line


def _kernel_arguments(twin: FastTwin, symmetries: Symmetries, inline: bool) -> tuple[Any, ...]:
    """The kernels the negamax kernel takes: Numba dispatchers (``inline``: compiled into one
    search per game, the fastest, but compiled afresh in every process, a few seconds) or C
    callbacks (one search for every game, cached on disk)."""
    if inline:
        kernels: Any = twin
        history: Any = twin
        canonical = symmetries.canonical
    else:
        kernels = kernels_for(twin)
        history = history_kernels_for(twin)
        canonical = _canonical_callback(symmetries.canonical)
    return (
        kernels.legal_moves, kernels.play, kernels.undo, kernels.margin, kernels.move_order,
        kernels.key, kernels.history_key, canonical, history.history_length,
        history.history_board, history.history_reference,
    )


_ARRAY = types.Array(types.int64, 1, "C")


@functools.cache
def _canonical_callback(dispatcher: Any) -> Any:
    return cfunc(types.int64(_ARRAY, _ARRAY, _ARRAY, _ARRAY), cache=True)(dispatcher.py_func)


def _tests_near(first: int, lower: int, upper: int) -> list[int]:
    """``first``, then the null-window tests within :data:`NEIGHBOUR_TESTS` of it (nearest
    first), that can still move the bounds ``lower < value <= upper``."""
    tests = [first]
    for distance in range(1, NEIGHBOUR_TESTS + 1):
        tests += [t for t in (first - distance, first + distance) if lower < t <= upper]
    return tests


def stderr_progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
