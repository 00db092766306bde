"""Exact solving from Python: MTD(f) over the negamax kernel, in chunks, with progress.

A :class:`Solver` owns one transposition table for one variant; every position it solves
shares it. Each probe of MTD(f) is a null-window search run in chunks of about a second (the
kernel stops when its node allowance runs out and the probe restarts, finding its finished
subtrees in the table), so progress can be shown and Ctrl-C stops cleanly with the bounds
proven so far (:class:`SolveInterrupted`).

Values are Black's margin with perfect play. Where the komi only shifts every final margin, a
variant is solved without it, and its game says whether the value then subtracts the komi or
is given without it (:class:`~agon.core.plugin.KomiRule`); where a draw by repetition is worth
0 whatever the komi, the search keeps it.
"""

from __future__ import annotations

import functools
import math
import sys
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import cfunc, types

from agon.core.errors import AgonError
from agon.core.fast import Array, FastTwin
from agon.core.game import Game, Move, State
from agon.core.limits import NO_LIMIT, Chunks, Limit, Stop
from agon.core.memory import check_memory
from agon.core.player import Player
from agon.core.plugin import KomiRule
from agon.core.results import Work
from agon.core.symmetry import Symmetries, identity
from agon.core.workers import stop_asked
from agon.games import plugin, plugins
from agon.search.twins import kernels_for, twin_for
from agon.solve import kernels as K
from agon.solve import proof_numbers as P
from agon.solve.checkpoint import (
    TABLE_NAMES,
    TablesHeader,
    kernels_fingerprint,
    load_tables,
    save_tables,
)
from agon.solve.facts import Search, default_table_bits, is_small_board, solving_facts

Progress = Callable[[str], None]
"""Where a long solve reports how it goes (a line at a time)."""
Searching = Generator[tuple[int, int], None, int]
"""A search run a round at a time (``next``, which gives the bounds proven so far: units, from
the view of the side to move where it searches), its result the generator's return value."""
Bounds = tuple[float, float]
"""Black's margin proven at least the first and at most the second (±infinity: no bound)."""
NO_BOUNDS: Bounds = (float("-inf"), float("inf"))
"""Nothing proven."""

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
FIRST_DEPTH, DEPTH_STEP = 8, 2
"""Plies of the first search of iterative deepening, and plies added at each next one."""
FIRST_SETBACKS, SETBACKS_STEP = 2, 1
"""The same, where the limit counts setbacks (see :func:`counts_setbacks`)."""
NEIGHBOUR_TESTS = 2
"""MTD(f) tests tried on each side of the one it asks for while that one stays unsettled
(:meth:`Solver.value`)."""
NUMBERS_BITS = 22
"""The proof-number search's table of proof and disproof numbers has 2**NUMBERS_BITS buckets of
two entries (24 bytes each, 200 MB), or as many as the transposition table where that has
more; on small boards (:func:`is_small_board`) as many as the transposition table (how much
its size matters: docs/solver.md, *Limits*)."""
FIRST_TURN_NODES = 20_000
"""Nodes of a test's first proof-number turn (:meth:`Solver._turn`); each next turn doubles."""
ALPHA_BETA_SHARE = 4
"""An alpha-beta turn gets this many times the nodes of the proof-number turn before it: its
nodes cost about a quarter as much (a proof-number node values every child)."""
NEIGHBOURS_AFTER = FIRST_TURN_NODES << 7
"""The tests beside the one MTD(f) asks for get turns only once that one has had turns of
this many nodes (seven, 2.5 million nodes in all) without being settled: most tests are
settled sooner, and every turn spent beside them is then lost."""
CHECKPOINT_SECONDS = 1800.0
"""A solver with a :attr:`Solver.checkpoint` saves its tables this often while it searches."""


_Buffers = tuple[Array, npt.NDArray[np.float64], Array, Array, Array, Array]


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
class _Test:
    """A null-window test of MTD(f) under way: how far each search has taken it."""

    beta: int
    depths: Iterator[int]
    """Alpha-beta's depth limits still to come (:meth:`Solver._deepening`)."""
    depth: int
    """The depth limit alpha-beta has reached."""
    iteration: int
    """That depth's iteration number (what its hints are marked with)."""
    allowance: int
    """Nodes for the proof-number search's next turn."""


@dataclass(frozen=True)
class ProvenValue:
    """A position's value proven before its moves were all checked: what proving it took,
    and the moves found to keep it (``best``) or not (``not_best``) so far, as text."""

    nodes: int
    seconds: float
    best: list[str]
    not_best: list[str]

    def __str__(self) -> str:
        found = f"best so far: {', '.join(self.best) or 'none'}"
        if self.not_best:
            found += f"; not best: {', '.join(self.not_best)}"
        return (
            f"proven in {self.nodes:,} nodes and {self.seconds:.1f} s; its best moves were not "
            f"all checked ({found})"
        )


class SolveInterrupted(Exception):
    """A solve stopped by Ctrl-C or its time limit, with the bounds proven so far.

    The bounds are Black's margin (as :attr:`Solution.value` reports it) at the position whose
    value was being searched when it stopped: the root, or one of its moves for openings.
    Where the root's value was proven and only its moves were being checked, ``proven`` says
    what the value took and which moves were checked, so a table can still report them.
    """

    def __init__(
        self, lower: float, upper: float, nodes: int, seconds: float, timed_out: bool,
        proven: ProvenValue | None = None, earlier: Work | None = None,
        move_bounds: dict[str, Bounds] | None = None,
    ) -> None:
        self.lower, self.upper, self.nodes, self.seconds = lower, upper, nodes, seconds
        self.timed_out, self.proven = timed_out, proven
        self.earlier = earlier or Work()
        """The work of the earlier runs this one went on from (``nodes`` is this run's)."""
        self.move_bounds = move_bounds or {}
        """The root's moves (by name, in move order) with a bound proven on the position after
        them, where its moves were being searched: equal bounds are the move's value."""
        if proven is not None:
            found = f"the value is {_bound_text(lower)} ({proven})"
        elif math.isinf(lower) and math.isinf(upper):
            found = "no bound proven"
        elif math.isinf(upper):
            found = f"the value is at least {_bound_text(lower)}"
        elif math.isinf(lower):
            found = f"the value is at most {_bound_text(upper)}"
        else:
            found = f"the value lies between {_bound_text(lower)} and {_bound_text(upper)}"
        super().__init__(f"{self.reason}: {found}")

    @property
    def reason(self) -> str:
        """Why it stopped: "out of time" or "interrupted"."""
        return "out of time" if self.timed_out else "interrupted"

    def found(self) -> dict[str, Any]:
        """What was proven besides the bounds, as JSON holds it: where the value was proven,
        what that took and the moves checked so far (``value_nodes``, ``value_seconds``,
        ``best_so_far``, ``not_best``); and the moves' bounds (``move_bounds``: move →
        ``[lower, upper]``, null where a side is not bounded)."""
        data: dict[str, Any] = {}
        if self.proven is not None:
            data["value_nodes"] = self.proven.nodes
            data["value_seconds"] = round(self.proven.seconds, 2)
            data["best_so_far"] = self.proven.best
            data["not_best"] = self.proven.not_best
        if self.move_bounds:
            data["move_bounds"] = {
                move: [json_number(bound) for bound in bounds]
                for move, bounds in self.move_bounds.items()
            }
        return data


def json_number(value: float) -> float | int | None:
    """A margin or bound as JSON holds it: a whole number as an integer, and null for an
    infinite bound (JSON has no infinity)."""
    if math.isinf(value):
        return None
    return int(value) if float(value).is_integer() else value


def _bound_text(bound: float) -> str:
    return f"{bound:g}".replace("inf", "∞")


@dataclass
class Solution:
    """The solved value of a position and how it was found."""

    value: float
    """Black's margin with perfect play: under the variant's rules, except where the game
    gives values without the komi (:attr:`komi`; :attr:`result_margin` puts it in)."""
    best_moves: list[Move]
    move_values: dict[Move, float] | None
    """Black's margin after each legal move, as :attr:`value` counts it (with openings)."""
    nodes: int
    seconds: float
    komi: float | None = None
    """The komi :attr:`value` leaves out (:attr:`KomiRule.LEFT_OUT`), else None."""
    earlier: Work = field(default_factory=Work)
    """The work of the earlier runs whose saved tables this solve went on from (``nodes``
    and ``seconds`` are this run's)."""

    @property
    def result_margin(self) -> float:
        """Black's margin with perfect play under the variant's komi."""
        return self.value - (self.komi or 0.0)


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
    the kernels can count stones and the rules have no pass, so that only captures prolong a
    game (where a pass also counts, plies serve better: docs/solver.md)."""
    return keeps_results_apart_from_history(twin) and twin.game.pass_move is None


def refines_proof_numbers(twin: FastTwin) -> bool:
    """Whether the proof-number search uses weak proof numbers and starts each child from the
    estimate (:mod:`agon.solve.proof_numbers`): where the rules have a pass, whose passes and
    returns to earlier positions make many transpositions (the measurements for and against:
    docs/solver.md)."""
    return twin.game.pass_move is not None


class Solver:
    """Solves positions of one variant, sharing one transposition table."""

    def __init__(
        self,
        game: Game,
        table_bits: int | None = None,
        symmetry: bool = True,
        progress: Progress | None = None,
        chunk_seconds: float = 1.0,
        inline: bool = False,
        search: Search | None = None,
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
        # the summaries of history-free results, one per table row (docs/solver.md)
        # (boards of more than 32 points do not pack into one int64: every result of theirs is
        # stored under its whole history, which is also sound)
        history = keeps_results_apart_from_history(self.twin)
        levels = self.twin.board_points + 1
        self._summary_size = K.summary_size(levels if history else 1)
        table_rows = 2 << table_bits
        # the proof-number search's table of numbers (only where it runs)
        numbers_rows = 2 if self.search is Search.ALPHA_BETA else (
            2 << (table_bits if is_small_board(game) else max(NUMBERS_BITS, table_bits))
        )
        # a summary for each bound of an entry
        summary_shape = (table_rows if history else 1, 2 * self._summary_size)
        shapes = [(table_rows, 2), summary_shape, (1 << HINT_BITS, 2), (numbers_rows, 3)]
        check_memory(
            sum(rows * columns for rows, columns in shapes) * np.dtype(np.int64).itemsize,
            f"the solver's tables of 2**{table_bits} buckets (table bits {table_bits})",
        )
        self.table, self.summaries, self.hints, self.numbers = (
            np.zeros(shape, dtype=np.int64) for shape in shapes
        )
        self.control = np.zeros(K.CONTROL_SIZE, dtype=np.int64)
        self.control[K.C_HISTORY] = int(history)
        self.control[K.C_REPEATS_COUNT] = int(self.twin.repeats_count)
        self.control[K.C_DEPTH_IN_SETBACKS] = int(counts_setbacks(self.twin))
        refined = refines_proof_numbers(self.twin)
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

    def tables_header(self) -> TablesHeader:
        """What :meth:`save_tables` says its file is: this solver's variant, search and
        kernels, and the work in its tables, earlier runs' included."""
        return TablesHeader(
            variant={
                "game": self.variant.name, "options": self.variant.options(),
                "description": self.variant.description,
            },
            search=self.search.value,
            symmetry=self.symmetry,
            kernels=kernels_fingerprint(),
            work=Work(
                nodes=self.earlier.nodes + self.nodes,
                seconds=round(self.earlier.seconds + time.monotonic() - self._started, 1),
                runs=self.earlier.runs + 1,
            ),
        )

    def save_tables(self, path: Path) -> None:
        """Save the tables to ``path`` (replaced only once the new file is complete), for
        :meth:`load_tables` in a later run; :class:`AgonError` if it cannot be written."""
        if self.progress is not None:
            self.progress(f"saving the tables to {path} …")
        arrays = {name: getattr(self, name) for name in TABLE_NAMES}
        save_tables(path, self.tables_header(), arrays)
        self._saved = time.monotonic()

    def keep_tables(self, path: Path) -> None:
        """:meth:`save_tables` where a failed save (a full disk) must not end the work: it is
        reported (through :attr:`progress`), and while searching tried again after
        :data:`CHECKPOINT_SECONDS`."""
        try:
            self.save_tables(path)
        except AgonError as error:
            self._saved = time.monotonic()
            if self.progress is not None:
                self.progress(f"the tables were not saved: {error}")

    def go_on_from(self, path: Path, table_bits: int | None = None, resume: bool = True) -> None:
        """Keep the tables in ``path``: go on from them where the file exists (and
        ``resume``), as :meth:`load_tables` does, and save them there while searching."""
        if resume and path.exists():
            self.load_tables(path, table_bits)
            if self.progress is not None:
                self.progress(f"going on from {path}: {self.earlier} before this run")
        self.checkpoint = path

    @property
    def table_bits(self) -> int:
        """The transposition table has 2**table_bits buckets."""
        return _buckets_bits(self.table)

    def load_tables(self, path: Path, table_bits: int | None = None) -> None:
        """Go on from the tables saved in ``path`` by :meth:`save_tables` (their size replaces
        this solver's; ``table_bits``, where given, must be theirs): every bound proven into
        them holds here, since they are refused unless they were written for this variant,
        with these symmetries, by these kernels. :class:`AgonError` says why a file cannot
        be used."""
        header, arrays = load_tables(path, self.tables_header())
        problem = None
        saved_bits = _buckets_bits(arrays["table"])
        if table_bits is not None and saved_bits != table_bits:
            problem = (
                f"they have a table of 2**{saved_bits} buckets: give that --table-bits or "
                "leave it out"
            )
        if problem is None and arrays["summaries"].shape[1] != self.summaries.shape[1]:
            problem = "their summaries are of another size"
        rows = arrays["table"].shape[0] if self.summaries.shape[0] > 1 else 1
        if problem is None and arrays["summaries"].shape[0] != rows:
            problem = "their table and summaries do not match"
        if problem is None and arrays["cutoffs"].shape != self.cutoffs.shape:
            problem = "their history heuristic is for another board"
        if problem is not None:
            raise AgonError(f"cannot go on from {path}: {problem}")
        self.table, self.summaries, self.cutoffs = (
            arrays["table"], arrays["summaries"], arrays["cutoffs"]
        )
        # (alpha-beta alone keeps no proof numbers, so its files bring none)
        if self.search is not Search.ALPHA_BETA and arrays["numbers"].shape[0] > 2:
            self.numbers = arrays["numbers"]
        self.earlier = header.work

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
        depth limit), so that several positions' searches can take turns (:meth:`_take_turns`:
        ``array`` holds the position whenever a round runs, and they may share ``buffers``,
        which no round reads after it ends). Returns the value."""
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
                else:
                    upper = result
                estimate = result
            yield lower, upper
        return lower

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
        text = ", ".join(_bound_text(b) for b in self._black_bounds(self._sign, self._bounds))
        self.progress(
            f"{self.nodes:,} nodes in {seconds:.0f}s ({self.nodes / max(seconds, 1e-9):,.0f}/s), "
            f"{self._method}, value{self._target} in [{text}] (Black's margin)"
        )

    def _start_solving(self, state: State, limit: Limit | None) -> tuple[Array, int, int]:
        """A new solve of ``state`` within ``limit`` (its clock started): the twin array, the
        mover's ``sign`` (as :meth:`value` takes it) and the value in units from the mover's
        view."""
        self._spending = (limit or NO_LIMIT).start()
        self._last_report = 0.0
        self._target = ""
        # (a stop before the first probe proves nothing: not the last solve's bounds)
        self._bounds, self._sign = (-K.INFINITY, K.INFINITY), 1
        with self._stops_between_searches():
            array = self.state_array(state)
            black_view = -1 if state.to_move is Player.WHITE else 1
            return array, black_view, self.value(array, black_view)

    @contextmanager
    def _stops_between_searches(self) -> Iterator[None]:
        """Ctrl-C between two searches' chunks (each search turns one within it into
        :class:`SolveInterrupted` itself) stops the solve as within one: with the bounds
        proven so far."""
        try:
            yield
        except KeyboardInterrupt:
            raise self._stopped(timed_out=False) from None

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

            kept = _bound_text(self._report_value(black_view * value))
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


def _buckets_bits(table: Array) -> int:
    """``bits`` of a transposition table of 2**bits buckets (two rows each)."""
    return int(table.shape[0]).bit_length() - 2


def _kernel_arguments(
    twin: FastTwin, symmetries: Symmetries, inline: bool
) -> tuple[tuple[Any, ...], Any]:
    """The kernels the negamax kernel takes, and the evaluation the proof-number search also
    takes after them: Numba dispatchers (``inline``: compiled into one
    search per game, the fastest, but compiled afresh in every process, a few seconds) or C
    callbacks (one search for every game, cached on disk)."""
    kernels: Any = twin if inline else kernels_for(twin)
    canonical = symmetries.canonical if inline else _canonical_callback(symmetries.canonical)
    return (
        kernels.legal_moves, kernels.play, kernels.undo, kernels.margin, kernels.move_order,
        kernels.key, kernels.history_key, canonical, kernels.history_length,
        kernels.history_board, kernels.history_reference,
    ), kernels.evaluate


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


def _to_the_end(searching: Searching) -> int:
    """Run a search's rounds one after another: its result."""
    while True:
        try:
            next(searching)
        except StopIteration as done:
            return int(done.value)


def stderr_progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def labelled_progress(progress: Progress, label: str) -> Progress:
    """``progress`` with each line named by ``label``, for one of several solves at once
    (a module-level function bound with ``partial``, so a worker process can be sent it)."""
    return functools.partial(_labelled, progress, label)


def _labelled(progress: Progress, label: str, message: str) -> None:
    progress(f"{label}: {message}")


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
