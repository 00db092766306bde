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

This is not the agents' alpha-beta (:mod:`agon.search.alphabeta`), which estimates with
floats at a horizon: the docstring there says why there are two.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from agon.core.fast import NO_REFERENCE, Array, popcount

FloatArray = npt.NDArray[np.float64]
Kernel = Any

# the fields of ``control``, by role (one int64 array: the kernels take it as one argument)
# - settings, written by the solver before a search, read by the kernels:
C_LIMIT, C_SCALE, C_USE_SYMMETRY, C_MAX_VALUE, C_HISTORY, C_REPEATS_COUNT = 1, 4, 8, 9, 10, 11
C_ITERATION, C_DEPTH_LIMITED, C_DEPTH_IN_SETBACKS = 13, 15, 16
C_WEAK_PROOFS, C_ESTIMATED_START = 17, 18
# - counters the kernels keep, across searches:
C_NODES, C_MAX_PLY, C_TT_HITS, C_STORES, C_FREE_HITS, C_HINT_HITS = 0, 3, 6, 7, 12, 14
# - what a search tells the solver when it returns (reset by the solver):
C_ABORTED, C_OVERFLOW = 2, 5
CONTROL_SIZE = 19

HINT_MIN_DEPTH = 3
"""Unknown results of searches at least this deep are remembered (see ``negamax``)."""
CUTOFF_LOOKAHEAD_PLIES = 10
"""Nodes this close to a search's root look their moves' positions up in the table before
searching any (see ``negamax``): deeper, the look-ups cost more than the cutoffs they find."""

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
def enter_node(control: Array, ply: int, plies: int) -> bool:
    """Count a node of either search at ``ply``; False, with the search marked aborted, where
    the node limit is reached or the per-ply arrays (``plies`` rows) have no room for its
    children (then also marked overflowed)."""
    control[C_NODES] += 1
    if control[C_NODES] < control[C_LIMIT] and ply + 1 < plies:
        return True
    control[C_ABORTED] = 1
    if ply + 1 >= plies:
        control[C_OVERFLOW] = 1
    return False


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
    low_summary: Array, high_summary: Array, keep_summary: bool,
) -> None:
    """Record bounds for ``key``, tightening what is already known about it; with
    ``keep_summary``, also the summaries of the boards each bound's proof rests on (a tighter
    bound replaces its summary; an equal one merges with it, since either proof holds)."""
    row = tt_find(tt, key)
    merge = row >= 0
    old_lower, old_upper = -INFINITY, INFINITY
    if merge:
        old_lower, old_upper, old_move, old_work = unpack(tt[row, 1])
        if move < 0:
            move = old_move
        work = max(work, old_work)
    else:
        row = (key & ((tt.shape[0] >> 1) - 1)) << 1
        if tt[row, 1] != 0 and unpack(tt[row, 1])[3] > work:
            row += 1
    tt[row, 0] = key
    tt[row, 1] = pack(max(lower, old_lower), min(upper, old_upper), move, work)
    if keep_summary:
        size = low_summary.shape[0]
        if lower > old_lower:
            summaries[row, :size] = low_summary
        elif lower == old_lower > -INFINITY:
            merge_summary(summaries[row, :size], low_summary)
        if upper < old_upper:
            summaries[row, size:] = high_summary
        elif upper == old_upper < INFINITY:
            merge_summary(summaries[row, size:], high_summary)


# --- history-free results (see docs/solver.md) -------------------------------------------
#
# A *summary* describes a set of boards (those a proof rests on): for each number of stones
# ``c`` (its *level*), the stones every board of ``c`` stones has (``summary[2c]``; all bits
# where there is none) and the stones some board of ``c`` stones has (``summary[2c + 1]``);
# then one Bloom filter of all the boards (the last ``BLOOM_WORDS`` words: ``BLOOM_HASHES``
# bits of a hash of each). A board could be in the set only if it passes its level's two
# masks and the filter. The filter tells apart the boards close to the present one that the
# masks cannot (one stone more or less, met or not). Boards are packed as ``history_board``
# packs them.
#
# A node's ``trace`` row says what its result rests on, for each bound apart (a lower bound
# needs only its best move, an upper bound every move): the earliest history position its
# lower bound, its upper bound and its best move's result depend on, then the summaries of
# its lower bound, its upper bound and its best move's result (``TRACE_HEAD`` references,
# then three summaries).

MASK_FIELDS = 2
"""int64 words per level of a summary: the stones all its boards have, and any has."""
BLOOM_WORDS = 64
"""int64 words of a summary's Bloom filter (4,096 bits): see docs/solver.md for the sizes tried."""
_BLOOM_BITS = (64 * BLOOM_WORDS).bit_length() - 1
"""Bits of a board's hash that place one of its bits in the filter."""
BLOOM_HASHES = 4
"""Bits of the filter set for each board."""
TRACE_HEAD = 3
"""References at the head of a trace row: lower bound, upper bound, best move's result."""
LOW, HIGH, BEST = 0, 1, 2


def summary_size(levels: int) -> int:
    """int64 words of a summary of boards of up to ``levels - 1`` stones."""
    return MASK_FIELDS * levels + BLOOM_WORDS


@njit(cache=True)
def _bloom_position(board: int, which: int) -> int:
    """The place of the ``which``-th bit that ``board`` sets in a summary's Bloom filter."""
    mixed = (board * -7046029254386353131) & 0x7FFFFFFFFFFFFFFF  # Fibonacci hashing
    return (mixed >> (63 - _BLOOM_BITS * (which + 1))) & (64 * BLOOM_WORDS - 1)


@njit(cache=True)
def trace_summary(trace_row: Array, which: int) -> Array:
    """The summary :data:`LOW`, :data:`HIGH` or :data:`BEST` of a trace row."""
    size = (trace_row.shape[0] - TRACE_HEAD) // 3
    start = TRACE_HEAD + which * size
    return trace_row[start : start + size]


@njit(cache=True)
def clear_summary(summary: Array) -> None:
    """Make ``summary`` describe no board."""
    summary[:] = 0
    summary[0 : summary.shape[0] - BLOOM_WORDS : MASK_FIELDS] = -1


@njit(cache=True)
def start_trace(trace_row: Array) -> None:
    """A node's trace before anything is searched: no reference, no board. (The best move's
    summary is written when there is a best move.)"""
    trace_row[:TRACE_HEAD] = NO_REFERENCE
    clear_summary(trace_summary(trace_row, LOW))
    clear_summary(trace_summary(trace_row, HIGH))


# inlined where called (as Numba IR): it runs at every node of both searches
@njit(cache=True, inline="always")
def start_node_trace(
    history_length: Kernel, history_board: Kernel, params: Array, state: Array,
    control: Array, row_trace: Array,
) -> tuple[int, int]:
    """Where the rules read the history: a node's ``(length, present)``, its history's length
    and its present board, with its trace ``row_trace`` started (:func:`start_trace`) and,
    where a third repetition counts, both bounds resting on the present board (every board met
    counts for both alike); elsewhere ``(0, 0)``, the trace left as it is."""
    if control[C_HISTORY] == 0:
        return 0, 0
    length = history_length(params, state)
    present = history_board(params, state, length)
    start_trace(row_trace)
    if control[C_REPEATS_COUNT] != 0:
        add_board(trace_summary(row_trace, LOW), present)
        add_board(trace_summary(row_trace, HIGH), present)
    return length, present


# inlined, as start_node_trace is
@njit(cache=True, inline="always")
def rest_on_refused_moves(
    history_reference: Kernel, params: Array, state: Array, row_trace: Array, count: int,
    split: bool,
) -> None:
    """Where the rules read the history: the moves it forbids now could be allowed after
    another, so a node's upper bound (and the end of the game, where it has no move: ``count``
    0) rests on them, and where repetitions count (not ``split``) its lower bound too; a lower
    bound needs only its best move."""
    reference = history_reference(params, state)
    row_trace[HIGH] = min(row_trace[HIGH], reference)
    if count == 0 or not split:
        row_trace[LOW] = min(row_trace[LOW], reference)


@njit(cache=True)
def add_board(summary: Array, board: int) -> None:
    """Make ``summary`` describe ``board`` too."""
    base = MASK_FIELDS * popcount(board)
    summary[base] &= board
    summary[base + 1] |= board
    bloom = summary.shape[0] - BLOOM_WORDS
    for which in range(BLOOM_HASHES):
        position = _bloom_position(board, which)
        summary[bloom + (position >> 6)] |= 1 << (position & 63)


@njit(cache=True)
def merge_summary(summary: Array, other: Array) -> None:
    """Make ``summary`` describe its boards and ``other``'s."""
    bloom = summary.shape[0] - BLOOM_WORDS
    for index in range(0, bloom, MASK_FIELDS):
        summary[index] &= other[index]
        summary[index + 1] |= other[index + 1]
    for index in range(bloom, summary.shape[0]):
        summary[index] |= other[index]


@njit(cache=True)
def rest_on(
    trace_row: Array, which: int, reference: int, summary: Array, both: bool
) -> None:
    """Make bound ``which`` of a trace (or, with ``both``, each bound) rest also on what
    ``reference`` and ``summary`` stand for."""
    for side in (LOW, HIGH):
        if side == which or both:
            trace_row[side] = min(trace_row[side], reference)
            merge_summary(trace_summary(trace_row, side), summary)


@njit(cache=True)
def may_be_among(board: int, summary: Array) -> bool:
    """Whether ``board`` could be one of the boards ``summary`` describes."""
    base = MASK_FIELDS * popcount(board)
    common, seen = summary[base], summary[base + 1]
    if board & common != common or board & ~seen != 0:
        return False
    bloom = summary.shape[0] - BLOOM_WORDS
    for which in range(BLOOM_HASHES):
        position = _bloom_position(board, which)
        if summary[bloom + (position >> 6)] & (1 << (position & 63)) == 0:
            return False
    return True


@njit(cache=True)
def free_bounds_apply(
    history_board: Kernel, params: Array, state: Array, length: int, present: int,
    low_summary: Array, high_summary: Array, repeats_count: bool, low: bool, high: bool,
) -> tuple[bool, bool]:
    """Whether the lower and the upper bound of a history-free result hold here (asked only
    where ``low``, ``high``): no earlier board of this game could be one of the boards its
    proof rests on. (Where only a board's presence counts, the present board cannot be one:
    an earlier copy of it changes nothing.)"""
    for index in range(length - 1, -1, -1):
        board = history_board(params, state, index)
        if board == present and not repeats_count:
            continue
        low = low and not may_be_among(board, low_summary)
        high = high and not may_be_among(board, high_summary)
        if not (low or high):
            break
    return low, high


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
def rest_on_child(row_trace: Array, child_trace: Array, which: int, split: bool) -> None:
    """Make bound ``which`` of a node rest on what its child's opposite bound rests on (a
    node's upper bound on its children's lower bounds, and the other way round); where
    repetitions count (not ``split``), on both of the child's bounds."""
    opposite = HIGH if which == LOW else LOW
    rest_on(row_trace, which, child_trace[opposite], trace_summary(child_trace, opposite),
            not split)
    if not split:
        rest_on(row_trace, which, child_trace[which], trace_summary(child_trace, which), True)


@njit(cache=True)
def look_up(
    key: Kernel, history_key: Kernel, canonical: Kernel, history_board: Kernel, params: Array,
    symmetry: Array, move_maps: Array, state: Array, image: Array, control: Array, tt: Array,
    summaries: Array, row_trace: Array, alpha: int, beta: int, length: int, present: int,
    present_key: int,
) -> tuple[int, int, int, int, int]:
    """The proven bounds the table holds for this node (``-INFINITY``, ``INFINITY`` where
    none): a history-free entry's bounds where no earlier board could undo them, else the
    whole-situation entry's. Only the bounds that can settle or narrow the window
    (``alpha``, ``beta``) are checked, and the node's trace (``row_trace``) then rests on
    each of them. Also the move to try first (the stored best move, in this position's
    frame; -1 if none), the whole-situation key where it was computed (else 0) and the
    symmetry of its frame."""
    history = control[C_HISTORY] != 0
    split = control[C_REPEATS_COUNT] == 0
    symmetries = move_maps.shape[0] >> 1
    table_key, frame = 0, 0
    lower, upper, stored_move, free, row = -INFINITY, INFINITY, -1, False, -1
    first = -1  # a history-free entry's best move is tried first even where it does not hold
    if history:
        row = tt_find(tt, present_key)
        if row >= 0:
            entry_lower, entry_upper, stored_move, _ = unpack(tt[row, 1])
            size = (row_trace.shape[0] - TRACE_HEAD) // 3
            low_holds, high_holds = free_bounds_apply(
                history_board, params, state, length, present, summaries[row, :size],
                summaries[row, size:], control[C_REPEATS_COUNT] != 0, entry_lower > alpha,
                entry_upper < beta,
            )
            if low_holds or high_holds:
                free = True
                control[C_FREE_HITS] += 1
                if low_holds:
                    lower = entry_lower
                if high_holds:
                    upper = entry_upper
            else:
                first, row = stored_move, -1
    if row < 0:
        table_key = position_key(
            key, history_key, canonical, params, symmetry, state, image, control
        )
        frame = image[0]
        row = tt_find(tt, table_key)
        if row >= 0:
            lower, upper, stored_move, _ = unpack(tt[row, 1])
    if row >= 0:
        control[C_TT_HITS] += 1
        if history:
            # the node's result rests on each stored bound it uses
            size = (row_trace.shape[0] - TRACE_HEAD) // 3
            for bound in (LOW, HIGH):
                if (lower > alpha) if bound == LOW else (upper < beta):
                    if free:
                        stored = summaries[row, bound * size : (bound + 1) * size]
                        rest_on(row_trace, bound, NO_REFERENCE, stored, not split)
                    else:
                        row_trace[bound] = DEPENDS_ON_ALL
                        if not split:
                            row_trace[LOW] = row_trace[HIGH] = DEPENDS_ON_ALL
        if stored_move >= 0 and first < 0:
            first = move_maps[symmetries + frame, stored_move]
    return lower, upper, first, table_key, frame


@njit(cache=True)
def store_bounds(
    key: Kernel, history_key: Kernel, canonical: Kernel, params: Array, symmetry: Array,
    move_maps: Array, state: Array, image: Array, control: Array, tt: Array,
    summaries: Array, row_trace: Array, lower: int, upper: int, best_move: int, work: int,
    length: int, present_key: int, table_key: int, frame: int,
) -> None:
    """Store the bounds a search proved at this node (see :func:`look_up` for the keys):
    each bound proven without the history before this position under the present key alone,
    with the summary it rests on; the rest under the whole situation."""
    if control[C_HISTORY] != 0:
        free_lower = lower if row_trace[LOW] >= length else -INFINITY
        free_upper = upper if row_trace[HIGH] >= length else INFINITY
        if free_lower > -INFINITY or free_upper < INFINITY:
            tt_store(tt, summaries, present_key, free_lower, free_upper, best_move, work,
                     trace_summary(row_trace, LOW), trace_summary(row_trace, HIGH), True)
        if free_lower == lower and free_upper == upper:
            return
    if table_key == 0:
        table_key = position_key(
            key, history_key, canonical, params, symmetry, state, image, control
        )
        frame = image[0]
    stored_move = move_maps[frame, best_move] if best_move >= 0 else -1
    tt_store(tt, summaries, table_key, lower, upper, stored_move, work,
             trace_summary(row_trace, LOW), trace_summary(row_trace, HIGH), False)


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
def transposition_cutoff(
    play: Kernel, undo: Kernel, key: Kernel, history_key: Kernel, canonical: Kernel,
    params: Array, symmetry: Array, state: Array, image: Array, control: Array, tt: Array,
    moves: Array, count: int, beta: int,
) -> tuple[int, int]:
    """The first of ``moves[:count]`` whose position the table already proves worth at
    least ``beta`` to the side to move (a lower bound, from the opponent's upper bound), and
    that bound: ``(-INFINITY, -1)`` where there is none."""
    for index in range(count):
        move = moves[index]
        play(params, state, move)
        row = tt_find(tt, position_key(
            key, history_key, canonical, params, symmetry, state, image, control
        ))
        undo(params, state)
        if row >= 0:
            bound = -unpack(tt[row, 1])[1]
            if bound >= beta:
                return bound, move
    return -INFINITY, -1


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

    Where the rules read no history, a node within :data:`CUTOFF_LOOKAHEAD_PLIES` of the root
    first looks its moves' positions up (:func:`transposition_cutoff`), and in a search to
    the end a node on the line a chunk's end interrupts keeps the move under way as its table
    move, so that the next chunk goes on down the same line.
    """
    if not enter_node(control, ply, moves.shape[0]):
        return 0
    if ply > control[C_MAX_PLY]:
        control[C_MAX_PLY] = ply
    history = control[C_HISTORY] != 0
    # where a third repetition counts, every board met counts for both bounds alike
    split = control[C_REPEATS_COUNT] == 0
    row_trace = trace[ply]
    length, present = start_node_trace(
        history_length, history_board, params, state, control, row_trace
    )
    # no margin lies outside ±C_MAX_VALUE: a window beyond it is settled at once
    if alpha >= control[C_MAX_VALUE]:
        return control[C_MAX_VALUE]  # type: ignore[no-any-return]
    if beta <= -control[C_MAX_VALUE]:
        return -control[C_MAX_VALUE]  # type: ignore[no-any-return]
    nodes_before = control[C_NODES]
    # hints serve only searches that a depth limit can leave unknown
    hinting = control[C_DEPTH_LIMITED] != 0 and depth >= HINT_MIN_DEPTH and beta - alpha == 1
    present_key = key(params, state) if history or hinting else 0
    lower, upper, first, table_key, frame = look_up(
        key, history_key, canonical, history_board, params, symmetry, move_maps, state, image,
        control, tt, summaries, row_trace, alpha, beta, length, present, present_key,
    )
    if lower >= beta or lower == upper:
        return lower
    if upper <= alpha:
        return upper
    alpha = max(alpha, lower)
    beta = min(beta, upper)
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
        rest_on_refused_moves(history_reference, params, state, row_trace, count, split)
    if count == 0:
        return terminal_value(margin, params, state, sign, control[C_SCALE])
    best, best_move, best_board = -INFINITY, -1, -1
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
                # a pass is always allowed: only what its ending rests on counts
                reference = history_reference(params, state)
                row_trace[BEST] = reference
                clear_summary(trace_summary(row_trace, BEST))
                rest_on(row_trace, HIGH, reference, trace_summary(row_trace, BEST), not split)
        undo(params, state)
    unknown = False
    if depth <= 0 and best < beta:
        count, unknown = 0, True
    if not history and ply < CUTOFF_LOOKAHEAD_PLIES and best < beta and count > 1:
        bound, cut_move = transposition_cutoff(
            play, undo, key, history_key, canonical, params, symmetry, state, image, control,
            tt, moves[ply], count, beta,
        )
        if bound >= beta:
            store_bounds(
                key, history_key, canonical, params, symmetry, move_maps, state, image,
                control, tt, summaries, row_trace, bound, INFINITY, cut_move, 0, length,
                present_key, table_key, frame,
            )
            control[C_STORES] += 1
            return bound
    side = 0 if sign > 0 else 1
    order_moves(move_order, params, state, moves[ply], scores[ply], count, first, cutoffs[side])
    asked = NEED_ALL if need == NEED_ALL else (NEED_LOW if need == NEED_HIGH else NEED_HIGH)
    setbacks = control[C_DEPTH_IN_SETBACKS] != 0
    stones = popcount(present) if setbacks else 0
    child_trace = trace[ply + 1]
    for index in range(count):
        if window >= beta:
            break
        move = moves[ply, index]
        play(params, state, move)
        child_board = history_board(params, state, history_length(params, state)) if (
            history
        ) else 0
        cost = 1
        if setbacks and popcount(child_board) > stones:
            cost = 0
        value = negamax(
            legal_moves, play, undo, margin, move_order, key, history_key, canonical,
            history_length, history_board, history_reference, params, symmetry, move_maps,
            state, -beta, -window, -sign, ply + 1, depth - cost, tt, summaries, hints, control,
            moves, scores, trace, image, pass_move, cutoffs, asked,
        )
        undo(params, state)
        if control[C_ABORTED] != 0:
            if not (history or control[C_DEPTH_LIMITED]):
                # the search starts again from its root after a chunk: this move first, to
                # go on where it stopped rather than try another (a gain only in searches
                # to the end of positions without history: docs/solver.md)
                tt_store(tt, summaries, table_key, -INFINITY, INFINITY, move_maps[frame, move],
                         0, trace_summary(row_trace, LOW), trace_summary(row_trace, HIGH), False)
            return 0
        if value == UNKNOWN:
            unknown = True
            if need == NEED_LOW:
                return UNKNOWN
            asked = NEED_LOW
            continue
        value = -value
        if history:
            # every move's result, as a lower bound for the opponent, bounds this node above
            rest_on_child(row_trace, child_trace, HIGH, split)
        if value > best:
            best, best_move = value, move
            if history:
                row_trace[BEST] = child_trace[HIGH]
                trace_summary(row_trace, BEST)[:] = trace_summary(child_trace, HIGH)
                best_board = child_board
            window = max(window, value)
            if window >= beta:
                cutoffs[side, move] += 1
    if unknown and best < beta and hint >= 0 and hints[hint, 0] == situation:
        hints[hint, 1] = control[C_ITERATION] << 16 | min(depth, 0xFFFF)
    if unknown and best <= alpha:
        return UNKNOWN
    if history:
        if best > alpha:
            # the lower bound rests on the best move staying allowed and on its result
            rest_on(row_trace, LOW, row_trace[BEST], trace_summary(row_trace, BEST),
                    not split)
            if best_board >= 0:
                add_board(trace_summary(row_trace, LOW), best_board)
        if best_board >= 0:
            # and an upper bound on some move staying allowed, where the game would end
            # without one
            add_board(trace_summary(row_trace, HIGH), best_board)
    # with a move unknown, only a lower bound is proven
    undecided = unknown and best < beta
    lower = best if best > alpha else -INFINITY
    upper = best if best < beta and not undecided else INFINITY
    work = 0 if undecided else log2_work(control[C_NODES] - nodes_before + 1)
    store_bounds(
        key, history_key, canonical, params, symmetry, move_maps, state, image, control, tt,
        summaries, row_trace, lower, upper, best_move, work, length, present_key, table_key,
        frame,
    )
    if undecided:
        return UNKNOWN
    control[C_STORES] += 1
    return best
