"""Alpha-beta (negamax) with iterative deepening and a transposition table, on a fast twin.

Values are margins from the point of view of the player to move: ``evaluate`` at the horizon,
the exact final margin at the end of a game. A finished game's value is pushed away from zero by
:data:`WIN_BONUS` (a win by 1 beats any estimate; the order of margins is kept), so that a
forced win is recognised as one.

The transposition table is keyed by ``(key, history_key)``: a stored result is reused only for a
position whose rules-relevant history is the same too, which keeps it sound under rules that
forbid repetitions or end a game at one. An entry whose subtree reached the end of
the game everywhere (no horizon, no heuristic) is stored with :data:`EXACT_DEPTH`, valid at any
depth; when a whole iteration reaches no horizon the search is complete and its value exact.

Moves are tried in this order: the table's move, two killer moves per ply, then by
``move_order`` plus a history-heuristic bonus below one point.

Why the solver has an alpha-beta of its own (:mod:`agon.solve.kernels`): this one estimates,
the solver's proves. Here values are floats, the horizon asks ``evaluate``, and an entry holds a
value at a depth under the whole history's key. The solver's values are whole units of margin,
with no evaluation at all; its entries hold proven bounds under the board's canonical key (the
symmetries), with the summaries of the earlier boards each proof rests on, so that a proof
serves every history it holds for, and it takes turns with proof-number search on one table.
One search serving both would carry the other's costs at every node.
"""

from __future__ import annotations

import time
from typing import Self

import numpy as np
import numpy.typing as npt
from numba import njit

from agon.core.fast import Array
from agon.core.game import Game, Move, State
from agon.core.limits import Limit, Spending
from agon.search.agent import Analysis
from agon.search.base import FastAgent
from agon.search.kernels import Kernel

WIN_BONUS = 100_000.0
EXACT_DEPTH = 1 << 30
MAX_PLY = 512
UNLIMITED_NODES = 1 << 62
"""The node limit of an iteration under no limit at all."""
MAX_VARIATION = 64
"""The longest principal variation reported."""
HASH_MULTIPLIER = -7046029254386353131  # 0x9E3779B97F4A7C15 as a signed 64-bit integer

# Transposition table: ``table[index]`` = key, history key, best move, depth * 4 + bound.
T_KEY, T_HISTORY, T_MOVE, T_DEPTH_BOUND = 0, 1, 2, 3
BOUND_EXACT, BOUND_LOWER, BOUND_UPPER = 0, 1, 2

# ``counters``: nodes so far, the node limit, whether the limit stopped the search, horizon
# leaves reached (estimates used), the best root move found in this iteration.
C_NODES, C_LIMIT, C_ABORTED, C_HORIZON, C_ROOT_MOVE = 0, 1, 2, 3, 4
# ``reals``: the root move's value, the largest history-heuristic score.
R_ROOT_VALUE, R_HISTORY_MAX = 0, 1

Floats = npt.NDArray[np.float64]
Table = npt.NDArray[np.int64]


def table_index(key: int, history: int, mask: int) -> int:
    """The table's row of a position: the low bits, the same whether the product wraps at 64
    bits (compiled) or not (Python)."""
    return (key ^ (history * HASH_MULTIPLIER)) & mask


_table_index = njit(cache=True)(table_index)
""":func:`table_index` compiled, for the kernels (Python calls the plain function: no kernel
is loaded on a move's clock)."""


@njit(cache=True)
def _final_value(black_margin: float, player: int) -> float:
    """A finished game's value for ``player``: the margin, pushed away from zero."""
    value = black_margin if player == 0 else -black_margin
    if value > 0:
        return value + WIN_BONUS
    if value < 0:
        return value - WIN_BONUS
    return 0.0


@njit(cache=True)
def _order_moves(
    move_order: Kernel, params: Array, state: Array, moves: Array, count: int, scores: Floats,
    table_move: int, killers: Array, history: Floats, player: int, history_max: float,
) -> None:
    for index in range(count):
        move = moves[index]
        if move == table_move:
            scores[index] = np.inf
        elif move == killers[0]:
            scores[index] = 1e300
        elif move == killers[1]:
            scores[index] = 1e299
        else:
            scores[index] = (
                move_order(params, state, move) + history[player, move] / (history_max + 1.0)
            )


@njit(cache=True)
def negamax(
    legal_moves: Kernel, play: Kernel, undo: Kernel, to_move: Kernel, end_code: Kernel,
    margin: Kernel, key: Kernel, history_key: Kernel, evaluate: Kernel, move_order: Kernel,
    params: Array, state: Array, depth: int, ply: int, alpha: float, beta: float, player: int,
    moves: Table, scores: Floats, killers: Table, history: Floats, table: Table,
    table_values: Floats, counters: Array, reals: Floats,
) -> float:
    """The value of ``state`` (not over) for ``player``, the player to move, searched ``depth``
    plies deep within the window (alpha, beta). Returns 0 once the node limit is reached."""
    if depth <= 0 or ply >= MAX_PLY:
        counters[C_HORIZON] += 1
        estimate = float(evaluate(params, state))
        return estimate if player == 0 else -estimate
    position_key = key(params, state)
    history_hash = history_key(params, state)
    slot = _table_index(position_key, history_hash, table.shape[0] - 1)
    table_move = -1
    if table[slot, T_KEY] == position_key and table[slot, T_HISTORY] == history_hash:
        table_move = table[slot, T_MOVE]
        stored_depth = table[slot, T_DEPTH_BOUND] >> 2
        bound = table[slot, T_DEPTH_BOUND] & 3
        value = float(table_values[slot])
        if ply > 0 and stored_depth >= depth and (
            bound == BOUND_EXACT
            or (bound == BOUND_LOWER and value >= beta)
            or (bound == BOUND_UPPER and value <= alpha)
        ):
            if stored_depth < EXACT_DEPTH:
                counters[C_HORIZON] += 1
            return value
    count = legal_moves(params, state, moves[ply])
    _order_moves(
        move_order, params, state, moves[ply], count, scores[ply], table_move, killers[ply],
        history, player, reals[R_HISTORY_MAX],
    )
    horizon_before = counters[C_HORIZON]
    original_alpha = alpha
    best_value = -np.inf
    best_move = moves[ply, 0]
    for index in range(count):
        pick = index  # selection sort: the best remaining move first
        for other in range(index + 1, count):
            if scores[ply, other] > scores[ply, pick]:
                pick = other
        move = moves[ply, pick]
        moves[ply, pick] = moves[ply, index]
        moves[ply, index] = move
        scores[ply, pick] = scores[ply, index]
        play(params, state, move)
        counters[C_NODES] += 1
        if end_code(params, state) != 0:
            value = _final_value(margin(params, state), player)
        else:
            next_player = to_move(params, state)
            if next_player == player:
                value = negamax(
                    legal_moves, play, undo, to_move, end_code, margin, key, history_key,
                    evaluate, move_order, params, state, depth - 1, ply + 1, alpha, beta,
                    player, moves, scores, killers, history, table, table_values, counters,
                    reals,
                )
            else:
                value = -negamax(
                    legal_moves, play, undo, to_move, end_code, margin, key, history_key,
                    evaluate, move_order, params, state, depth - 1, ply + 1, -beta, -alpha,
                    next_player, moves, scores, killers, history, table, table_values,
                    counters, reals,
                )
        undo(params, state)
        if counters[C_ABORTED]:
            return 0.0
        if value > best_value:
            best_value, best_move = value, move
            if ply == 0:
                counters[C_ROOT_MOVE] = move
                reals[R_ROOT_VALUE] = value
        alpha = max(alpha, value)
        if alpha >= beta:
            if move != killers[ply, 0]:
                killers[ply, 1] = killers[ply, 0]
                killers[ply, 0] = move
            history[player, move] += depth * depth
            reals[R_HISTORY_MAX] = max(reals[R_HISTORY_MAX], history[player, move])
            break
        if counters[C_NODES] >= counters[C_LIMIT]:
            counters[C_ABORTED] = 1
            return 0.0
    if best_value <= original_alpha:
        bound = BOUND_UPPER
    elif best_value >= beta:
        bound = BOUND_LOWER
    else:
        bound = BOUND_EXACT
    stored = EXACT_DEPTH if counters[C_HORIZON] == horizon_before else depth
    table[slot, T_KEY] = position_key
    table[slot, T_HISTORY] = history_hash
    table[slot, T_MOVE] = best_move
    table[slot, T_DEPTH_BOUND] = stored * 4 + bound
    table_values[slot] = best_value
    return best_value


@njit(cache=True)
def table_move(table: Table, key: int, history: int) -> int:
    """The best move stored for a position, or -1."""
    index = _table_index(key, history, table.shape[0] - 1)
    if table[index, T_KEY] == key and table[index, T_HISTORY] == history:
        return int(table[index, T_MOVE])
    return -1


def decode(value: float) -> tuple[float, bool]:
    """(margin, whether the outcome is forced) from a search value."""
    if value >= WIN_BONUS / 2:
        return value - WIN_BONUS, True
    if value <= -WIN_BONUS / 2:
        return value + WIN_BONUS, True
    return value + 0.0, False  # + 0.0 turns a negated draw's -0.0 into 0.0


class AlphaBetaAgent(FastAgent):
    """Iterative-deepening negamax; keeps its transposition table between moves.

    ``Analysis.value`` is the margin from the mover's view: exact when the search reached every
    end of the game (``proven``, with ``win_rate`` exact), else the estimate at the horizon. A
    forced win or loss found before a complete search is ``proven`` too (``win_rate`` 1 or 0);
    its ``value`` is then a margin that best play achieves at least, and deeper iterations
    (while the limit lasts) look for a bigger one.
    """

    name = "alphabeta"
    default_limit = Limit(seconds=1.0)
    table_bits = 19
    """The table has 2**19 entries (20 MB)."""
    first_limit = 20_000
    """Nodes of the first iteration under a time limit, before the speed is known."""
    time_aim = 0.8
    """The share of the time left that an iteration's nodes are sized to take at the speed
    measured so far: a deeper iteration visits its nodes more slowly (moves ran up to a sixth
    over their time: docs/search.md, *alphabeta*), and what is left searches the depth again."""

    def __init__(self, game: Game, limit: Limit | None = None, seed: int | None = None) -> None:
        super().__init__(game, limit, seed)
        actions = self.twin.num_actions
        self.move_lists = np.empty((MAX_PLY, actions), dtype=np.int64)
        self.scores = np.empty((MAX_PLY, actions), dtype=np.float64)
        self.killers = np.empty((MAX_PLY, 2), dtype=np.int64)
        self.history = np.zeros((2, actions), dtype=np.float64)
        self.counters = np.zeros(5, dtype=np.int64)
        self.reals = np.zeros(2, dtype=np.float64)
        self._new_table()

    def _new_table(self) -> None:
        self.table = np.zeros((1 << self.table_bits, 4), dtype=np.int64)
        self.table[:, T_KEY] = -1  # unlikely to equal a real key, and never with move -1 used
        self.table[:, T_MOVE] = -1
        self.table_values = np.zeros(1 << self.table_bits, dtype=np.float64)

    def reset(self) -> None:
        super().reset()
        self._new_table()
        self.history[:] = 0.0

    def _search(self, root: Array, depth: int, node_limit: int) -> tuple[float, bool]:
        """One iteration; (value, completed within the node limit)."""
        counters, kernels, twin = self.counters, self.kernels, self.twin
        counters[C_LIMIT] = counters[C_NODES] + node_limit
        counters[C_ABORTED] = 0
        counters[C_HORIZON] = 0
        counters[C_ROOT_MOVE] = -1
        player = int(twin.to_move(twin.params, root))
        value = negamax(
            kernels.legal_moves, kernels.play, kernels.undo, kernels.to_move, kernels.end_code,
            kernels.margin, kernels.key, kernels.history_key, kernels.evaluate,
            kernels.move_order, twin.params, root, depth, 0, -np.inf, np.inf, player,
            self.move_lists, self.scores, self.killers, self.history, self.table,
            self.table_values, counters, self.reals,
        )
        return float(value), not counters[C_ABORTED]

    def _node_limit(self, spending: Spending) -> int:
        """Nodes the next iteration may visit: what is left of a count, and what the time left
        allows at the speed measured so far (a guess before anything is measured)."""
        nodes = int(self.counters[C_NODES])
        allowed = [] if spending.limit.count is None else [spending.limit.count - nodes]
        left = spending.seconds_left()
        if left is not None:
            elapsed = spending.elapsed
            if left <= 0:
                return 0
            if nodes < self.first_limit or elapsed <= 0:
                allowed.append(self.first_limit)
            else:
                allowed.append(max(1000, int(nodes / elapsed * left * self.time_aim)))
        return min(allowed, default=UNLIMITED_NODES)

    def analyse(self, state: State, limit: Limit | None = None) -> Analysis:
        start = time.perf_counter()
        spending = self.limit_of(limit).start()
        root = self.root(state)
        self.counters[C_NODES] = 0
        self.killers[:] = -1
        self.history *= 0.5  # old cut-offs still hint, less
        self.reals[R_HISTORY_MAX] *= 0.5
        best_move: Move | None = None
        value, complete = 0.0, False
        depth = 1
        while depth < MAX_PLY and not complete:
            nodes = self._node_limit(spending)
            if nodes <= 0:
                break
            if best_move is not None:
                self._search_first(root, best_move)
            iteration_value, finished = self._search(root, depth, nodes)
            if self.counters[C_ROOT_MOVE] >= 0:  # better than every move searched before it
                best_move = int(self.counters[C_ROOT_MOVE])
                value = iteration_value if finished else float(self.reals[R_ROOT_VALUE])
            if finished:
                complete = self.counters[C_HORIZON] == 0
                depth += 1
            # Else the node limit ran out: a count is spent (the next limit is 0), or the
            # clock's guess was short: search this depth again (the table keeps what was
            # found) with what time is left.
        if best_move is None:  # not even one move searched: take the ordering's favourite
            best_move = self._favourite(root)
        margin, forced = decode(value)
        proven = complete or forced
        win_rate = None
        if proven:
            win_rate = 1.0 if margin > 0 else 0.0 if margin < 0 else 0.5
        return Analysis(
            best_move=best_move,
            value=margin,
            principal_variation=self._variation(state, best_move),
            work=int(self.counters[C_NODES]),
            seconds=time.perf_counter() - start,
            proven=proven,
            win_rate=win_rate,
        )

    def _search_first(self, root: Array, move: Move) -> None:
        """Make ``move`` the root's table move, which the search tries first. So every
        iteration, and every search of a depth again after one cut short, starts with the move
        chosen so far, and a search cut short replaces it only by a move found better at the
        same depth. Otherwise, where other positions had taken the root's slot in the table,
        a search cut short after the move order's favourite alone played that move, however
        bad (a forced loss, once: docs/search.md, *alphabeta*). A new entry has depth 0: a
        hint for the order, never a value (the root is never cut off, nor is depth 0 looked
        up)."""
        table = self.table
        key, history = self._keys(root)
        slot = table_index(key, history, table.shape[0] - 1)
        if table[slot, T_KEY] == key and table[slot, T_HISTORY] == history:
            table[slot, T_MOVE] = move
        else:
            table[slot] = (key, history, move, 0 * 4 + BOUND_EXACT)  # depth 0
            self.table_values[slot] = 0.0

    def warmed_up(self) -> Self:
        """As :meth:`FastAgent.warmed_up`, and the root's table row written, as every iteration
        after the first does (the warm-up's tiny searches end before a second)."""
        root = self.root(self.game.new_state())
        self._search_first(root, self._favourite(root))
        super().warmed_up()  # (which empties the table again)
        return self

    def _favourite(self, root: Array) -> Move:
        """The legal move that ``move_order`` rates highest. Not ``move_lists[0, 0]``: where no
        search ran, that row holds another position's moves, or whatever ``np.empty`` found in
        memory, and playing such a move writes outside the twin's arrays."""
        twin = self.twin
        return max(
            twin.legal_list(root), key=lambda move: float(twin.move_order(twin.params, root, move))
        )

    def _variation(self, state: State, first: Move) -> list[Move]:
        """The best move, then the table's moves, each only if the twin finds it legal where it
        would be played: the twin's kernels check nothing, and a table's move may be another
        position's (keys collide)."""
        twin = self.twin
        array = twin.from_reference(state)
        line: list[Move] = []
        move = first
        while len(line) < MAX_VARIATION and move in twin.legal_list(array):
            line.append(move)
            twin.play(twin.params, array, move)
            if twin.end_code(twin.params, array) != 0:
                break
            move = table_move(
                self.table, twin.key(twin.params, array), twin.history_key(twin.params, array)
            )
        return line
