"""Exact solving from Python: a position's value, its best moves and its openings.

A :class:`Solver` owns one transposition table for one variant; every position it solves
shares it. Its parts, by role: this module sets it up and turns values into best moves and
openings; :mod:`agon.solve.mtdf` finds a value (MTD(f)'s null-window tests, settled by
alpha-beta and proof-number search in chunks of about a second, so that progress can be shown
and Ctrl-C stops cleanly with the bounds proven so far, :class:`SolveInterrupted`);
:mod:`agon.solve.checkpoint` saves its tables and goes on from them; what a solve gives is in
:mod:`agon.solve.solution`.

Values are Black's margin with perfect play. Where the komi only shifts every final margin, a
variant is solved without it, and its game says whether the value then subtracts the komi or
is given without it (:class:`~agon.core.plugin.KomiRule`); where a draw by repetition is worth
0 whatever the komi, the search keeps it.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agon.core.errors import AgonError
from agon.core.fast import Array, FastTwin
from agon.core.game import Game, Move, State
from agon.core.limits import NO_LIMIT, Chunks, Limit
from agon.core.memory import check_memory
from agon.core.player import Player
from agon.core.plugin import KomiRule
from agon.core.results import Work
from agon.core.symmetry import Symmetries, identity
from agon.core.workers import stop_asked
from agon.games import plugin, plugins
from agon.search.twins import callback, kernels_for, twin_for
from agon.solve import kernels as K
from agon.solve.facts import Search, default_table_bits, is_small_board, solving_facts
from agon.solve.mtdf import Searching, ValueSearch
from agon.solve.solution import (
    NO_BOUNDS,
    Bounds,
    Progress,
    ProvenValue,
    Solution,
    SolveInterrupted,
    bound_text,
)

MAX_CHUNK_FACTOR = 10
"""A chunk of search runs at most this many times ``chunk_seconds`` (Ctrl-C and time limits
wait for a chunk's end)."""
CHUNK_CREEP = 1.02
"""Each chunk that ran whole makes the next at least this much larger, so that a probe whose
restarts cost more than a chunk still finishes (a restart finds its finished subtrees in the
table, its unknown ones in the hints, or its proof numbers in theirs)."""
MIN_CHUNK = 10_000
HINT_BITS = 20
"""Entries of the table of unknown results (16 bytes each)."""
NUMBERS_BITS = 22
"""The proof-number search's table of proof and disproof numbers has 2**NUMBERS_BITS buckets of
two entries (24 bytes each, 200 MB), or as many as the transposition table where that has
more; on small boards (:func:`is_small_board`) as many as the transposition table (how much
its size matters: docs/solver.md, *Limits*)."""


def default_search(game: Game) -> Search:
    """Both searches in turns where the game says its proofs follow long forced lines (a
    depth-limited search reaches them only after many iterations, while some positions still
    suit alpha-beta better); else alpha-beta alone, whose nodes cost less than proof-number
    nodes, each of which values every child (docs/solver.md has the measurements)."""
    return Search.BOTH if solving_facts(game).proof_numbers(game) else Search.ALPHA_BETA


@functools.cache
def symmetries_for(game: Game, enabled: bool = True) -> Symmetries:
    """The symmetries the solver uses for ``game`` (only the identity when not ``enabled``,
    or where the game declares none)."""
    declared = solving_facts(game).symmetries_of(game) if enabled else None
    return identity(game.num_actions) if declared is None else declared


@dataclass
class _MoveChecks:
    """What the searches of a position's moves have found so far (:meth:`Solver._moves`)."""

    keeps: dict[Move, bool] = field(default_factory=dict)
    """Whether each move settled so far keeps the position's value."""
    values: dict[Move, float] | None = None
    """Each move's value settled so far (Black's margin), where every move's value is asked
    for (else None)."""
    bounds: dict[Move, tuple[int, int]] = field(default_factory=dict)
    """Each move's bounds proven so far: units, from the view of the side to move after it."""


def solving_variant(game: Game) -> tuple[Game, float]:
    """The variant the solver searches, and what to subtract from its values to report them:
    where the komi only shifts every final margin (:class:`KomiRule`) the search leaves it
    out; the game says whether the value then subtracts it or is given without it."""
    facts = solving_facts(game)
    rule = facts.komi_rule(game)
    if rule is KomiRule.SEARCHED:
        if not float(2 * game.komi).is_integer():
            raise AgonError(f"solving {game.description} needs a komi that is a multiple of 0.5")
        return game, 0.0
    assert facts.without_komi is not None, f"{game.title} declares no variant without komi"
    return facts.without_komi(game), game.komi if rule is KomiRule.SUBTRACTED else 0.0


def largest_margin(game: Game) -> int:
    """A bound on |margin| at the end of any game of the variant solved (komi 0 where the
    komi only shifts margins), where its game knows one."""
    bound = solving_facts(game).largest_margin(game)
    return K.INFINITY if bound is None else bound


def keeps_results_apart_from_history(twin: FastTwin) -> bool:
    """Whether results whose proof read nothing from the past are stored under the present
    position alone (docs/solver.md): for games whose rules look back, with boards that pack
    into one int64."""
    return 0 < twin.board_points <= 32


def counts_setbacks(twin: FastTwin) -> bool:
    """Whether iterative deepening limits only the *setbacks* of a line, the moves that add no
    stone to the board (see :func:`agon.solve.kernels.negamax`), rather than its plies: where
    the game declares it (``Solving.depth_in_setbacks``; where a pass also counts, plies serve
    better: docs/solver.md) and the twin's history kernels can count the stones."""
    declared = solving_facts(twin.game).depth_in_setbacks(twin.game)
    return declared and keeps_results_apart_from_history(twin) and twin.game.pass_move is None


def refines_proof_numbers(game: Game) -> bool:
    """Whether the proof-number search uses weak proof numbers and starts each child from the
    estimate (:mod:`agon.solve.proof_numbers`), as the game declares
    (``Solving.refined_proof_numbers``)."""
    return solving_facts(game).refined_proof_numbers(game)


PLAYER_TABLE_BYTES = 256 << 20
"""The most a player's solver's tables take (the strongest agent's, the arena's analysts'):
many of them live in one arena, and a fresh table costs its first touch of every page on the
clock of a move (docs/search.md, *Time a move*)."""
SOLVER_NODES_A_SECOND = 1_000_000
"""The solver's fastest pace on one core (docs/solver.md, *Limits*)."""
MIN_TABLE_BITS = 12
"""The smallest a player's tables get (2**bits buckets)."""


def player_table_bits(game: Game, limit: Limit) -> int:
    """The size (bits) of the transposition table, and of the table of proof numbers, of a
    solver that thinks within ``limit`` a move (a player's): a bucket (two entries) for every
    node it may visit in a move (its count, or its seconds at :data:`SOLVER_NODES_A_SECOND`;
    the game's default size where ``limit`` has neither), so that the tables hold what it
    proved over the last moves, on which the next move's proofs build; at least
    2**:data:`MIN_TABLE_BITS` buckets, and at most the game's default size and what fits in
    :data:`PLAYER_TABLE_BYTES`."""
    bits = default_table_bits(game)
    nodes = limit.count if limit.seconds is None else limit.seconds * SOLVER_NODES_A_SECOND
    if nodes is not None:
        bits = min(bits, max(MIN_TABLE_BITS, math.ceil(math.log2(max(1.0, nodes)))))
    variant, _ = solving_variant(game)
    twin, search = twin_for(variant), default_search(game)
    while bits > MIN_TABLE_BITS and _bytes_of(
        _table_shapes(game, twin, search, bits, bits)
    ) > PLAYER_TABLE_BYTES:
        bits -= 1
    return bits


def _table_shapes(
    game: Game, twin: FastTwin, search: Search, table_bits: int, numbers_bits: int | None
) -> list[tuple[int, int]]:
    """The shapes of a solver's tables (int64): the transposition table, its summaries, the
    hints and the proof numbers. ``numbers_bits`` None: :data:`NUMBERS_BITS` or the
    transposition table's size, whichever is larger (as large where the board is small)."""
    table_rows = 2 << table_bits
    # the proof-number search's table of numbers (only where it runs)
    if numbers_bits is None:
        numbers_bits = table_bits if is_small_board(game) else max(NUMBERS_BITS, table_bits)
    numbers_rows = 2 if search is Search.ALPHA_BETA else 2 << numbers_bits
    # the summaries of history-free results, one for each bound of a table row
    # (docs/solver.md; boards of more than 32 points do not pack into one int64: every result
    # of theirs is stored under its whole history, which is also sound)
    history = keeps_results_apart_from_history(twin)
    summary_shape = (table_rows if history else 1, 2 * summary_size(twin))
    return [(table_rows, 2), summary_shape, (1 << HINT_BITS, 2), (numbers_rows, 3)]


def summary_size(twin: FastTwin) -> int:
    """The int64 words of one summary of the boards earlier in a game (one word where results
    are kept under their whole history: :func:`keeps_results_apart_from_history`)."""
    history = keeps_results_apart_from_history(twin)
    return K.summary_size(twin.board_points + 1 if history else 1)


def _bytes_of(shapes: list[tuple[int, int]]) -> int:
    return sum(rows * columns for rows, columns in shapes) * np.dtype(np.int64).itemsize


class Solver(ValueSearch):
    """Solves positions of one variant, sharing one transposition table of 2**``table_bits``
    buckets (the game's default size unless given) and a table of proof numbers of
    2**``numbers_bits`` (as :func:`_table_shapes` sizes it unless given)."""

    def __init__(
        self,
        game: Game,
        table_bits: int | None = None,
        symmetry: bool = True,
        progress: Progress | None = None,
        chunk_seconds: float = 1.0,
        inline: bool = False,
        search: Search | None = None,
        numbers_bits: int | None = None,
    ) -> None:
        self.game = game
        self.symmetry = symmetry
        self.search = default_search(game) if search is None else search
        self.variant, self.shift = solving_variant(game)
        left_out = solving_facts(game).komi_rule(game) is KomiRule.LEFT_OUT
        self.reported_komi = game.komi if left_out else None
        """The komi the values leave out (:attr:`Solution.komi`), or None."""
        self.twin: FastTwin = twin_for(self.variant)
        self.symmetries: Symmetries = symmetries_for(self.variant, symmetry)
        self.scale = 1 if float(self.variant.komi).is_integer() else 2
        if table_bits is None:
            table_bits = default_table_bits(game)
        self._summary_size = summary_size(self.twin)
        shapes = _table_shapes(game, self.twin, self.search, table_bits, numbers_bits)
        check_memory(
            _bytes_of(shapes),
            f"the solver's tables of 2**{table_bits} buckets (table bits {table_bits})",
        )
        self.table, self.summaries, self.hints, self.numbers = (
            np.zeros(shape, dtype=np.int64) for shape in shapes
        )
        self.control = np.zeros(K.CONTROL_SIZE, dtype=np.int64)
        self.control[K.C_HISTORY] = int(keeps_results_apart_from_history(self.twin))
        self.control[K.C_REPEATS_COUNT] = int(self.twin.repeats_count)
        self.control[K.C_DEPTH_IN_SETBACKS] = int(counts_setbacks(self.twin))
        refined = refines_proof_numbers(self.variant)
        self.control[K.C_WEAK_PROOFS] = self.control[K.C_ESTIMATED_START] = int(refined)
        self.control[K.C_SCALE] = self.scale
        self.control[K.C_USE_SYMMETRY] = int(len(self.symmetries.names) > 1)
        self.control[K.C_MAX_VALUE] = min(largest_margin(self.variant) * self.scale, K.INFINITY)
        self.image = np.zeros(1, dtype=np.int64)
        self.cutoffs = np.zeros((2, self.twin.num_actions), dtype=np.int64)
        self.progress = progress
        self.chunk_seconds = chunk_seconds
        # ~200k alpha-beta nodes a second, a quarter as many proof-number nodes; each search
        # keeps its own chunks, since their nodes cost differently
        # (short chunks, for a player's share of a move, may be short at the least too)
        minimum = max(MIN_CHUNK // 100, int(MIN_CHUNK * min(chunk_seconds, 1.0)))
        first_chunk = max(minimum, int(200_000 * chunk_seconds))
        self._chunks = {
            method: Chunks(
                first, chunk_seconds, minimum=minimum, longest=MAX_CHUNK_FACTOR,
                creep=CHUNK_CREEP,
            )
            for method, first in (("alpha-beta", first_chunk), ("proof numbers", first_chunk // 4))
        }
        self._spending = NO_LIMIT.start()
        self._last_report = 0.0
        self._kernels, self._evaluate = _kernel_arguments(self.twin, self.symmetries, inline)
        self._bounds: tuple[int, int] = (-K.INFINITY, K.INFINITY)
        self._sign = 1
        self._method = ""
        self._target = ""
        self.lower_bound_move = None
        """The move that proved the last lower bound of the value being searched (None: not
        known)."""
        pass_move = self.variant.pass_move
        self._pass_move = -1 if pass_move is None else pass_move
        self.checkpoint: Path | None = None
        """Where the tables are saved every :data:`CHECKPOINT_SECONDS` while searching."""
        self.stop_requested: Callable[[], bool] = stop_asked
        """Asked between chunks: True stops the solve as Ctrl-C does. By default, whether
        this is a worker process whose parent asked its tasks to stop (a worker leaves Ctrl-C
        to its parent: :mod:`agon.core.workers`)."""
        self.earlier = Work()
        """The work of earlier runs in the tables (:meth:`load_tables`)."""
        self._started = self._saved = time.monotonic()

    @property
    def nodes(self) -> int:
        """Nodes searched by this solver (earlier runs' are in :attr:`earlier`)."""
        return int(self.control[K.C_NODES])

    # --- tables saved to a file ----------------------------------------------------------------


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

    def symmetric_moves(self, state: State) -> dict[Move, list[Move]]:
        """The legal moves of ``state`` in classes, in move order, each under its first move:
        the positions after the moves of a class (with their histories) are images of one
        another under the variant's symmetries, as the table's keys tell, so they are worth
        the same."""
        return self._move_classes(self.state_array(state))

    def _move_classes(self, array: Array) -> dict[Move, list[Move]]:
        """:meth:`symmetric_moves` of the position ``array`` holds."""
        if self.symmetries.count == 1:
            return {move: [move] for move in self.legal_moves(array)}
        classes: dict[int, list[Move]] = {}
        symmetries, params = self.symmetries, self.twin.params
        for move in self.legal_moves(array):
            self.twin.play(params, array, move)
            image_key = symmetries.canonical(params, symmetries.data, array, self.image)
            self.twin.undo(params, array)
            classes.setdefault(int(image_key), []).append(move)
        return {kind[0]: kind for kind in classes.values()}

    # --- solving -----------------------------------------------------------------------------


    def _start_solving(
        self, state: State, limit: Limit | None, known: float | None = None
    ) -> tuple[Array, int, int]:
        """A new solve of ``state`` within ``limit`` (its clock started): the twin array, the
        mover's ``sign`` (as :meth:`value` takes it) and the value in units from the mover's
        view (``known``, Black's margin as :meth:`margin` reports it, where given: not
        searched)."""
        array, black_view = self._begin(state, limit)
        with self._stops_between_searches():
            if known is not None:
                return array, black_view, black_view * self._units(known)
            return array, black_view, self.value(array, black_view)

    def _begin(self, state: State, limit: Limit | None) -> tuple[Array, int]:
        """A new search of ``state`` within ``limit`` (its clock started): the twin array and
        the mover's ``sign`` (as :meth:`value` takes it)."""
        self._spending = (limit or NO_LIMIT).start()
        self._last_report = 0.0
        self._target = ""
        self.lower_bound_move = None
        # (a stop before the first probe proves nothing: not the last solve's bounds)
        self._bounds, self._sign = (-K.INFINITY, K.INFINITY), 1
        with self._stops_between_searches():
            array = self.state_array(state)
        return array, -1 if state.to_move is Player.WHITE else 1

    def _units(self, margin: float) -> int:
        """Black's margin as reported, in units from Black's view (±infinity kept)."""
        if math.isinf(margin):
            return K.INFINITY if margin > 0 else -K.INFINITY
        return round((margin + self.shift) * self.scale)

    def bounds_within(self, state: State, window: Bounds, limit: Limit | None = None) -> Bounds:
        """Bounds on the value of ``state`` (Black's margin) that answer ``window``, (low,
        high): the value is at most low, or at least high, or (equal bounds) it is known. What
        an alpha-beta search needs of a move whose sibling has set its window, and often far
        cheaper than the value (:mod:`agon.solve.parallel`). :class:`SolveInterrupted` where
        ``limit`` runs out first."""
        array, black_view = self._begin(state, limit)
        low, high = sorted(black_view * self._units(bound) for bound in window)
        rounds = self._value_rounds(array, black_view, 0)
        with self._stops_between_searches():
            while True:
                try:
                    lower, upper = next(rounds)
                except StopIteration as done:
                    lower = upper = int(done.value)
                if lower == upper or upper <= low or lower >= high:
                    break
        # (not _proven: a bound at the game's own limits may be the very answer asked for)
        return self._black_bounds(black_view, (lower, upper))


    def margin(self, state: State, limit: Limit | None = None) -> float:
        """Only the value of ``state``: Black's margin with perfect play, as
        :attr:`Solution.value` counts it (no best moves, so cheaper than :meth:`solve`);
        :class:`SolveInterrupted` where ``limit`` runs out first."""
        _, black_view, value = self._start_solving(state, limit)
        return self._report_value(black_view * value)

    def solve(
        self, state: State, openings: bool = False, limit: Limit | None = None
    ) -> Solution:
        """Value, best moves and (with ``openings``) every legal move's value of ``state``;
        :class:`SolveInterrupted` where ``limit`` runs out first (or Ctrl-C comes)."""
        nodes_before = self.nodes
        array, black_view, value = self._start_solving(state, limit)
        value_nodes = self.nodes - nodes_before
        value_seconds = self._spending.elapsed
        checks = _MoveChecks(values={} if openings else None)
        try:
            with self._stops_between_searches():
                best = self._moves(array, black_view, value, checks)
        except SolveInterrupted as stop:
            # the position's own value is proven: report it, not the move being searched
            known = self._report_value(black_view * value)
            # in move order (the array is back at the position), not the order they settled in
            moves, name = self.legal_moves(array), self.game.format_move
            proven = ProvenValue(
                value_nodes, value_seconds,
                best=[name(move) for move in moves if checks.keeps.get(move) is True],
                not_best=[name(move) for move in moves if checks.keeps.get(move) is False],
            )
            found = (
                (name(move), self._black_bounds(-black_view, self._proven(checks.bounds[move])))
                for move in moves if move in checks.bounds
            )
            move_bounds = {move: bounds for move, bounds in found if bounds != NO_BOUNDS}
            raise SolveInterrupted(
                known, known, stop.nodes, stop.seconds, stop.timed_out, proven, self.earlier,
                move_bounds,
            ) from None
        return Solution(
            value=self._report_value(black_view * value),
            best_moves=best,
            move_values=checks.values,
            nodes=self.nodes - nodes_before,
            seconds=self._spending.elapsed,
            komi=self.reported_komi,
            earlier=self.earlier,
        )

    def one_best_move(self, state: State, limit: Limit | None = None) -> Move:
        """One move that keeps the value of ``state`` (which must not be over): the first
        whose check settles, so cheaper than :meth:`solve`, which checks every move."""
        array, black_view, value = self._start_solving(state, limit)
        with self._stops_between_searches():
            return self._moves(array, black_view, value, _MoveChecks(), first_only=True)[0]

    def moves_keeping(
        self, state: State, margin: float, limit: Limit | None = None
    ) -> list[Move]:
        """The moves that keep ``margin``, the value of ``state`` known from elsewhere (a store;
        Black's margin as :meth:`margin` reports it), found without proving that value again,
        so cheaper than :meth:`solve`. Where ``limit`` runs out first, the moves found so far
        to keep it (:class:`SolveInterrupted` where there is none yet)."""
        array, black_view, value = self._start_solving(state, limit, margin)
        checks = _MoveChecks()
        try:
            with self._stops_between_searches():
                return self._moves(array, black_view, value, checks)
        except SolveInterrupted as stop:
            kept = [move for move in self.legal_moves(array) if checks.keeps.get(move)]
            if not (stop.timed_out and kept):
                raise
            return kept

    def _moves(
        self, array: Array, black_view: int, value: int, checks: _MoveChecks,
        first_only: bool = False,
    ) -> list[Move]:
        """The best moves of a position whose value (units, mover's view) is known, recording
        in ``checks`` what each move's search finds as it goes (every move's value where
        ``checks.values`` is given). The moves' searches take turns a round at a time, so the
        cheap ones are settled first and no hard one holds the others up; with ``first_only``
        they stop at the first best move found (which is then the only one returned). One
        move of each class of symmetric moves is searched; the others share its result."""
        moves = self.legal_moves(array)
        classes = self._move_classes(array)
        # the move that proved the value first: it is settled almost at once, and a solve
        # stopped among the moves already has one best move
        for leader, members in list(classes.items()):
            if self.lower_bound_move in members:
                classes = {leader: members} | classes
                break
        buffers = self._buffers(array)  # (the moves' positions have fewer plies left)
        keeps, move_values = checks.keeps, checks.values
        largest = int(self.control[K.C_MAX_VALUE])
        if move_values is None:

            def checked(move: Move, result: int) -> bool:
                # the move keeps the value iff the opponent's value is at most -value (and
                # then it is -value: no move does better than the position's value)
                keeps[move] = result <= -value
                checks.bounds[move] = (-value, -value) if keeps[move] else (result, largest)
                return first_only and keeps[move]

            kept = bound_text(self._report_value(black_view * value))
            self._take_turns(array, f" (does it keep {kept}?)", checked, checks.bounds, classes, {
                move: self._probe_rounds(array, -black_view, -value, -value + 1, buffers)
                for move in classes
            })
            return [move for move in moves if keeps.get(move)]

        def valued(move: Move, result: int) -> bool:
            move_values[move] = self._report_value(-black_view * result)
            keeps[move] = -result == value
            checks.bounds[move] = (result, result)
            return False

        self._take_turns(array, "", valued, checks.bounds, classes, {
            move: self._value_rounds(array, -black_view, -value, buffers) for move in classes
        })
        for move in moves:  # in move order, not the order they were settled in
            move_values[move] = move_values.pop(move)
        return [move for move in moves if keeps[move]]

    def _take_turns(
        self, array: Array, asking: str, settled: Callable[[Move, int], bool],
        bounds: dict[Move, tuple[int, int]], classes: dict[Move, list[Move]],
        searches: dict[Move, Searching],
    ) -> None:
        """Run the searches of the positions after ``searches``' moves a round each in turn,
        keeping in ``bounds`` what each round has proven and handing each result (both in the
        opponent's view) to ``settled`` as it comes, until all are settled or ``settled`` says
        it has what it needs (returns True). What a move's search finds holds for every move
        of its class (``classes``, under the move searched)."""
        play, undo, params = self.twin.play, self.twin.undo, self.twin.params
        while searches:
            for move, searching in list(searches.items()):
                self._target = f" after {self.game.format_move(move)}{asking}"
                play(params, array, move)
                enough = False
                try:
                    found = next(searching)
                    bounds.update(dict.fromkeys(classes[move], found))
                except StopIteration as done:
                    del searches[move]
                    # (a list first: every move of the class must reach ``settled``)
                    results = [settled(image, int(done.value)) for image in classes[move]]
                    enough = any(results)
                finally:
                    undo(params, array)
                if enough:
                    return


def perfect_play(
    solver: Solver, state: State, max_plies: int = 200, limit: Limit | None = None
) -> Iterator[Move]:
    """Play a line of perfect play on ``state``, yielding each move once played: at each step
    a move that keeps the value (:meth:`Solver.one_best_move`), until the game ends or
    ``max_plies``. ``limit``'s time is for the whole line (its count, for each step); a solve
    cut short raises :class:`SolveInterrupted` at the step it was on, after the moves already
    played."""
    step_limit = None if limit is None else limit.from_now()
    for _ in range(max_plies):
        if state.is_over:
            return
        move = solver.one_best_move(state, step_limit)
        state.play(move)
        yield move


def _kernel_arguments(
    twin: FastTwin, symmetries: Symmetries, inline: bool
) -> tuple[tuple[Any, ...], Any]:
    """The kernels the negamax kernel takes, and the evaluation the proof-number search also
    takes after them: Numba dispatchers (``inline``: compiled into one
    search per game, the fastest, but compiled afresh in every process, a few seconds) or C
    callbacks (one search for every game, cached on disk)."""
    kernels: Any = twin if inline else kernels_for(twin)
    canonical = (
        symmetries.canonical if inline else callback(symmetries.canonical, CANONICAL, True)
    )
    return (
        kernels.legal_moves, kernels.play, kernels.undo, kernels.margin, kernels.move_order,
        kernels.key, kernels.history_key, canonical, kernels.history_length,
        kernels.history_board, kernels.history_reference,
    ), kernels.evaluate


CANONICAL = "int64(int64[::1], int64[::1], int64[::1], int64[::1])"
"""The signature of a game's canonical-key kernel (params, symmetry data, state, image)."""


def warm_up_kernels(game_name: str | None = None) -> None:
    """Compile (or load) the solver's kernels for every game with a fast twin, or for the game
    of this name only, by solving the tiny variant each game declares for it, so that no
    solve's seconds count compiling. (A game without a twin shares the solver's kernels with
    the others, and its callbacks compile afresh in every process: warmed up only by name.)
    Ctrl-C raises ``KeyboardInterrupt``: the tiny solve's bounds are nobody's."""
    if game_name is None:
        chosen = {name: found for name, found in plugins().items() if found.fast_twin}
    else:
        chosen = {game_name: plugin(game_name)}
    for found in chosen.values():
        tiny = found.solving.warm_up if found.solving is not None else None
        if tiny is not None:
            game = tiny()
            try:
                Solver(game, 10).solve(game.new_state())
            except SolveInterrupted:
                raise KeyboardInterrupt from None
