"""The exact solver's Numba kernels: fail-soft negamax alpha-beta over a transposition table.

Written once against the fast-twin contract (:mod:`agon.core.fast`): the twin's kernels and
the game's *canonical-key* kernel (:mod:`agon.solve.symmetry`) arrive as first-class
functions. Values are whole *units* of margin (``round(margin * scale)``) from the point of
view of the side to move; ``sign`` is +1 where Black is to move.

Every stored bound is a proven fact about the position under its key, which covers the
history the rules still read (see docs/solver.md), so a bound is reused in any later search,
with any window and any depth limit: a depth-limited search stores only what it proved.

Transposition table: ``tt`` is int64 ``(2 * buckets, 2)``; row ``[key, packed]`` where
``packed`` holds the lower and upper bound (20 bits each, offset), the best move in the
canonical frame plus one (16 bits) and log2 of the nodes its search took (8 bits). A bucket's
first row keeps the costliest search, the second is replaced every time.

``control`` (int64) carries the counters and limits between Python and the kernels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from agon.core.fast import NO_REFERENCE, Array, popcount

FloatArray = npt.NDArray[np.float64]
Kernel = Any

# control fields
C_NODES, C_LIMIT, C_ABORTED, C_MAX_PLY, C_SCALE, C_OVERFLOW, C_TT_HITS, C_STORES = range(8)
C_USE_SYMMETRY, C_MAX_VALUE, C_HISTORY, C_REPEATS_COUNT, C_FREE_HITS = 8, 9, 10, 11, 12
C_ITERATION, C_HINT_HITS, C_DEPTH_LIMITED, C_DEPTH_IN_SETBACKS = 13, 14, 15, 16
CONTROL_SIZE = 17

HINT_MIN_DEPTH = 3
"""Unknown results of searches at least this deep are remembered (see ``negamax``)."""

DEPENDS_ON_ALL = -1
"""A history reference that makes every ancestor's result depend on its history."""

INFINITY = 1 << 18
"""Larger than any margin in units."""
UNKNOWN = 1 << 30
"""What a search returns when its depth limit kept it from proving anything."""
NEED_ALL, NEED_HIGH, NEED_LOW = 0, 1, 2
_OFFSET = 1 << 19
_VALUE_MASK = (1 << 20) - 1
_MOVE_SHIFT = 40
_WORK_SHIFT = 56


@njit(cache=True)
def pack(lower: int, upper: int, move: int, work: int) -> int:
    return (
        (lower + _OFFSET)
        | (upper + _OFFSET) << 20
        | (move + 1) << _MOVE_SHIFT
        | work << _WORK_SHIFT
    )


@njit(cache=True)
def unpack(packed: int) -> tuple[int, int, int, int]:
    lower = (packed & _VALUE_MASK) - _OFFSET
    upper = ((packed >> 20) & _VALUE_MASK) - _OFFSET
    move = ((packed >> _MOVE_SHIFT) & 0xFFFF) - 1
    work = (packed >> _WORK_SHIFT) & 0x7F
    return lower, upper, move, work


@njit(cache=True)
def log2_work(nodes: int) -> int:
    work = 0
    while nodes > 1 and work < 127:
        nodes >>= 1
        work += 1
    return work


@njit(cache=True)
def tt_find(tt: Array, key: int) -> int:
    """The row holding ``key``, or -1."""
    row = (key & ((tt.shape[0] >> 1) - 1)) << 1
    if tt[row, 0] == key and tt[row, 1] != 0:
        return int(row)
    if tt[row + 1, 0] == key and tt[row + 1, 1] != 0:
        return int(row + 1)
    return -1


@njit(cache=True)
def tt_store(
    tt: Array, summaries: Array, key: int, lower: int, upper: int, move: int, work: int,
    summary: Array, keep_summary: bool,
) -> None:
    """Record bounds for ``key``, tightening what is already known about it; with
    ``keep_summary``, also the summary of the boards the proof met (merged with the summary
    already there, since the tightened bounds rest on both proofs)."""
    row = tt_find(tt, key)
    merge = row >= 0
    if merge:
        old_lower, old_upper, old_move, old_work = unpack(tt[row, 1])
        lower = max(lower, old_lower)
        upper = min(upper, old_upper)
        if move < 0:
            move = old_move
        work = max(work, old_work)
    else:
        row = (key & ((tt.shape[0] >> 1) - 1)) << 1
        if tt[row, 1] != 0 and unpack(tt[row, 1])[3] > work:
            row += 1
    tt[row, 0] = key
    tt[row, 1] = pack(lower, upper, move, work)
    if keep_summary:
        if merge:
            merge_summary(summaries[row], summary)
        else:
            summaries[row, :] = summary


# --- history-free results (see docs/solver.md) -------------------------------------------
#
# A *summary* describes a set of boards (those a proof met): for each number of stones ``c``
# (its *level*), the stones every board of ``c`` stones has (``summary[3c]``; all bits where
# there is none), the stones some board of ``c`` stones has (``summary[3c + 1]``), and a
# 64-bit Bloom filter of those boards (``summary[3c + 2]``: two bits of a hash of each). A
# board could be in the set only if it passes its level's three tests. The filter tells apart
# the boards close to the present one that the masks cannot (one stone more or less, met or
# not). Boards are packed as ``history_board`` packs them. A node's ``trace`` row is its
# history reference, then its summary.

SUMMARY_FIELDS = 3
"""int64 words per level of a summary."""


@njit(cache=True)
def bloom_bits(board: int) -> int:
    """The two bits of ``board``'s hash that its level's Bloom filter sets."""
    mixed = (board * -7046029254386353131) & 0x7FFFFFFFFFFFFFFF  # Fibonacci hashing
    return (1 << (mixed >> 57)) | (1 << ((mixed >> 51) & 63))


@njit(cache=True)
def start_trace(trace_row: Array, board: int) -> None:
    """A node's trace before anything is searched: no reference, its own board met."""
    trace_row[0] = NO_REFERENCE
    trace_row[1::3] = -1
    trace_row[2::3] = 0
    trace_row[3::3] = 0
    level = popcount(board)
    trace_row[1 + 3 * level] = board
    trace_row[2 + 3 * level] = board
    trace_row[3 + 3 * level] = bloom_bits(board)


@njit(cache=True)
def merge_summary(summary: Array, other: Array) -> None:
    """Make ``summary`` describe its boards and ``other``'s."""
    for index in range(0, summary.shape[0], 3):
        summary[index] &= other[index]
        summary[index + 1] |= other[index + 1]
        summary[index + 2] |= other[index + 2]


@njit(cache=True)
def merge_trace(trace_row: Array, reference: int, summary: Array) -> None:
    trace_row[0] = min(trace_row[0], reference)
    merge_summary(trace_row[1:], summary)


@njit(cache=True)
def may_be_among(board: int, summary: Array) -> bool:
    """Whether ``board`` could be one of the boards ``summary`` describes."""
    level = popcount(board)
    common, seen, bloom = summary[3 * level], summary[3 * level + 1], summary[3 * level + 2]
    bits = bloom_bits(board)
    return bool(board & common == common and board & ~seen == 0 and bloom & bits == bits)


@njit(cache=True)
def free_entry_applies(
    history_board: Kernel, params: Array, state: Array, length: int, present: int,
    summary: Array, repeats_count: bool,
) -> bool:
    """Whether a history-free result whose proof met the boards ``summary`` describes holds
    here: no earlier board of this game could be one of them. (The present board is met by
    every proof from here; where only a board's presence counts, an earlier copy of it changes
    nothing.)"""
    for index in range(length - 1, -1, -1):
        board = history_board(params, state, index)
        if board == present and not repeats_count:
            continue
        if may_be_among(board, summary):
            return False
    return True


@njit(cache=True)
def position_key(
    key: Kernel,
    history_key: Kernel,
    canonical: Kernel,
    params: Array,
    symmetry: Array,
    state: Array,
    image: Array,
    control: Array,
) -> int:
    """The table key: ``key ^ history_key``, or the least key over the symmetric images
    (``image[0]`` gets the symmetry that reaches it, 0 being the identity)."""
    if control[C_USE_SYMMETRY] != 0:
        return canonical(params, symmetry, state, image)  # type: ignore[no-any-return]
    image[0] = 0
    return key(params, state) ^ history_key(params, state)  # type: ignore[no-any-return]


@njit(cache=True)
def terminal_value(margin: Kernel, params: Array, state: Array, sign: int, scale: int) -> int:
    return sign * int(np.rint(margin(params, state) * scale))


@njit(cache=True)
def order_moves(
    move_order: Kernel,
    params: Array,
    state: Array,
    moves: Array,
    scores: FloatArray,
    count: int,
    first: int,
    cutoffs: Array,
) -> None:
    """Sort ``moves[:count]`` by ``move_order``, best first, with ``first`` (if legal) ahead;
    ties go to the moves that caused the most cutoffs so far (``cutoffs``, the mover's row of
    the history heuristic)."""
    most = 1
    for index in range(count):
        most = max(most, cutoffs[moves[index]])
    for index in range(count):
        move = moves[index]
        if move == first:
            scores[index] = np.inf
        else:
            scores[index] = move_order(params, state, move) + 1e-3 * cutoffs[move] / most
    for index in range(1, count):
        move, score = moves[index], scores[index]
        slot = index
        while slot > 0 and scores[slot - 1] < score:
            moves[slot], scores[slot] = moves[slot - 1], scores[slot - 1]
            slot -= 1
        moves[slot], scores[slot] = move, score


@njit(cache=True)
def negamax(
    legal_moves: Kernel,
    play: Kernel,
    undo: Kernel,
    margin: Kernel,
    move_order: Kernel,
    key: Kernel,
    history_key: Kernel,
    canonical: Kernel,
    history_length: Kernel,
    history_board: Kernel,
    history_reference: Kernel,
    params: Array,
    symmetry: Array,
    move_maps: Array,
    state: Array,
    alpha: int,
    beta: int,
    sign: int,
    ply: int,
    depth: int,
    tt: Array,
    summaries: Array,
    hints: Array,
    control: Array,
    moves: Array,
    scores: FloatArray,
    trace: Array,
    image: Array,
    pass_move: int,
    cutoffs: Array,
    need: int,
) -> int:
    """Fail-soft alpha-beta value (units, side to move's view) of ``state``.

    A result ``v <= alpha`` is an upper bound, ``v >= beta`` a lower bound, else exact;
    :data:`UNKNOWN` where a line longer than ``depth`` more plies kept the search from
    proving either (iterative deepening finds short proofs before long ones), and 0 when
    aborted. With ``control[C_DEPTH_IN_SETBACKS]`` (and the history kernels, which give the
    stones) only *setbacks* count against ``depth``: moves that add no stone to the board
    (captures, passes). A run of placements that capture nothing ends when the board is
    full, so every line still ends, and the limit falls only where a game can go on.
    ``move_maps`` rows ``s`` and ``S + s`` map moves into and out of symmetry ``s``'s
    frame; ``pass_move`` is the pass action, or -1 where the rules have none; ``cutoffs``
    (2 × actions) counts the cutoffs each move caused, per side, for move ordering.

    With a depth limit a node is *proven high* (some move reaches ``beta``), *proven low*
    (every move stays below it) or unknown. ``need`` says what the caller can use:
    :data:`NEED_ALL`; :data:`NEED_HIGH` (only whether the node is proven high: its moves are
    then asked only whether they are proven low for the opponent); :data:`NEED_LOW` (only
    whether it is proven low: it gives up at its first move not proven below ``beta``). A
    node that has met an unknown move can no longer be proven low, so it asks its other moves
    only what :data:`NEED_HIGH` asks. This keeps depth-limited searches from exploring every
    line to the limit (the null-window searches of MTD(f) are the windows it is meant for).

    Where the rules read the history (``control[C_HISTORY]``), ``trace[ply]`` gets what the
    result rests on: the earliest history position it depends on (``trace[ply, 0]``) and a
    summary of the boards its proof met; a result that depends on no position before this
    one is stored *history-free*, under the present key alone (docs/solver.md).

    In a depth-limited search (``control[C_DEPTH_LIMITED]``), ``hints`` remembers the
    situations (key and history) whose null-window search of this iteration
    (``control[C_ITERATION]``, one per depth limit of one probe) ended unknown, with the depth:
    searched again at that depth or less, they are unknown again at once. This saves the work
    a chunk's restart or a transposition would repeat; a hint proves nothing, so it can cost
    no soundness.
    """
    control[C_NODES] += 1
    if control[C_NODES] >= control[C_LIMIT] or ply + 1 >= moves.shape[0]:
        control[C_ABORTED] = 1
        if ply + 1 >= moves.shape[0]:
            control[C_OVERFLOW] = 1
        return 0
    if ply > control[C_MAX_PLY]:
        control[C_MAX_PLY] = ply
    history = control[C_HISTORY] != 0
    length, present = 0, 0
    if history:
        length = history_length(params, state)
        present = history_board(params, state, length)
        start_trace(trace[ply], present)
    # no margin lies outside ±C_MAX_VALUE: a window beyond it is settled at once
    if alpha >= control[C_MAX_VALUE]:
        return control[C_MAX_VALUE]  # type: ignore[no-any-return]
    if beta <= -control[C_MAX_VALUE]:
        return -control[C_MAX_VALUE]  # type: ignore[no-any-return]
    nodes_before = control[C_NODES]
    symmetries = move_maps.shape[0] >> 1
    # hints serve only searches that a depth limit can leave unknown
    hinting = control[C_DEPTH_LIMITED] != 0 and depth >= HINT_MIN_DEPTH and beta - alpha == 1
    present_key = key(params, state) if history or hinting else 0
    free_key, table_key, frame, row = present_key, 0, 0, -1
    if history:
        row = tt_find(tt, free_key)
        if row >= 0 and free_entry_applies(
            history_board, params, state, length, present, summaries[row],
            control[C_REPEATS_COUNT] != 0,
        ):
            control[C_FREE_HITS] += 1
            merge_trace(trace[ply], NO_REFERENCE, summaries[row])
        else:
            row = -1
    if row < 0:
        table_key = position_key(
            key, history_key, canonical, params, symmetry, state, image, control
        )
        frame = image[0]
        row = tt_find(tt, table_key)
        if row >= 0 and history:
            trace[ply, 0] = DEPENDS_ON_ALL
    first = -1
    if row >= 0:
        lower, upper, stored_move, _ = unpack(tt[row, 1])
        control[C_TT_HITS] += 1
        if lower >= beta or lower == upper:
            return lower
        if upper <= alpha:
            return upper
        alpha = max(alpha, lower)
        beta = min(beta, upper)
        if stored_move >= 0:
            first = move_maps[symmetries + frame, stored_move]
    hint, situation = -1, 0
    if hinting:
        situation = present_key ^ history_key(params, state)
        hint = situation & (hints.shape[0] - 1)
        known = hints[hint, 1]
        if hints[hint, 0] == situation and known >> 16 == control[C_ITERATION] and (
            known & 0xFFFF >= depth
        ):
            control[C_HINT_HITS] += 1
            return UNKNOWN
        hints[hint, 0] = situation
        hints[hint, 1] = -1  # not known yet: set if this search ends unknown
    count = legal_moves(params, state, moves[ply])
    if history:
        trace[ply, 0] = min(trace[ply, 0], history_reference(params, state))
    if count == 0:
        return terminal_value(margin, params, state, sign, control[C_SCALE])
    best, best_move = -INFINITY, -1
    window = alpha
    if moves[ply, count - 1] == pass_move:
        # a pass that ends the game costs nothing to value and often settles the node
        play(params, state, pass_move)
        if legal_moves(params, state, moves[ply + 1]) == 0:
            best = -terminal_value(margin, params, state, -sign, control[C_SCALE])
            best_move = pass_move
            window = max(window, best)
            count -= 1
            if history:
                reference = history_reference(params, state)
                trace[ply, 0] = min(trace[ply, 0], reference)
        undo(params, state)
    unknown = False
    if depth <= 0 and best < beta:
        count, unknown = 0, True
    side = 0 if sign > 0 else 1
    order_moves(move_order, params, state, moves[ply], scores[ply], count, first, cutoffs[side])
    asked = NEED_ALL if need == NEED_ALL else (NEED_LOW if need == NEED_HIGH else NEED_HIGH)
    setbacks = control[C_DEPTH_IN_SETBACKS] != 0
    stones = popcount(present) if setbacks else 0
    for index in range(count):
        if window >= beta:
            break
        move = moves[ply, index]
        play(params, state, move)
        cost = 1
        if setbacks and popcount(
            history_board(params, state, history_length(params, state))
        ) > stones:
            cost = 0
        value = negamax(
            legal_moves, play, undo, margin, move_order, key, history_key, canonical,
            history_length, history_board, history_reference, params, symmetry, move_maps,
            state, -beta, -window, -sign, ply + 1, depth - cost, tt, summaries, hints, control,
            moves, scores, trace, image, pass_move, cutoffs, asked,
        )
        undo(params, state)
        if control[C_ABORTED] != 0:
            return 0
        if history:
            merge_trace(trace[ply], trace[ply + 1, 0], trace[ply + 1, 1:])
        if value == UNKNOWN:
            unknown = True
            if need == NEED_LOW:
                return UNKNOWN
            asked = NEED_LOW
            continue
        value = -value
        if value > best:
            best, best_move = value, move
            window = max(window, value)
            if window >= beta:
                cutoffs[side, move] += 1
    if unknown and best < beta and hint >= 0 and hints[hint, 0] == situation:
        hints[hint, 1] = control[C_ITERATION] << 16 | min(depth, 0xFFFF)
    if unknown and best <= alpha:
        return UNKNOWN
    if history and trace[ply, 0] >= length:
        table_key, frame = free_key, 0
    elif history and table_key == 0:
        table_key = position_key(
            key, history_key, canonical, params, symmetry, state, image, control
        )
        frame = image[0]
    if unknown and best < beta:
        tt_store(tt, summaries, table_key, best, INFINITY, move_maps[frame, best_move], 0,
                 trace[ply, 1:], history)
        return UNKNOWN
    lower = best if best > alpha else -INFINITY
    upper = best if best < beta else INFINITY
    work = log2_work(control[C_NODES] - nodes_before + 1)
    tt_store(tt, summaries, table_key, lower, upper, move_maps[frame, best_move], work,
             trace[ply, 1:], history)
    control[C_STORES] += 1
    return best
