"""Depth-first proof-number search (df-pn) for the null-window tests of MTD(f).

A test asks whether the side to move reaches at least ``beta`` (units, as in
:mod:`agon.solve.kernels`). Iterative deepening answers it by searching every line to a limit
that grows; a proof often needs one long line of captures (a ko fight) and many short ones, so
most of that work is spent below the limit on lines no proof needs. df-pn instead follows, at
each node, the move whose subtree looks cheapest to settle, judged by *proof* and *disproof
numbers*: how many leaves must still be settled to prove, or to disprove, the node (Nagai's
depth-first form of Allis's proof-number search, with the 1 + ε threshold of Pawlewicz and Lew).
It has no depth limit, so every result it returns is proven.

Soundness is the negamax kernel's: whatever is proven is stored in the same bounds table, with
the same record of what each bound rests on (docs/solver.md), and a child's result is read from
that table only where it holds in the present history. The proof and disproof numbers of nodes
not yet settled only steer the search; they live in a table of their own (``numbers``), keyed by
the present position and the test alone, so they are shared between histories: an estimate that
does not fit the history here costs time, never soundness.

Numbers are from the view of the side to move: φ to prove that it reaches ``beta``, δ to
disprove it. A node's φ is the least δ of its children (one refuted reply proves it), its δ the
sum of their φ (every reply must be proven). A child not searched yet counts φ = 1 and δ = its
number of moves.

Two refinements, each switched on by the solver where it measured faster (docs/solver.md):
*weak* proof numbers (Ueda, Hashimoto, Hashimoto and Iida's WPNS), which count a node's δ as
its children's largest φ plus the number of its other open children rather than their sum,
so that subtrees reached by transposition are not counted again at every parent; and a
*start from the estimate*, which gives a child not searched yet the static evaluation's
distance from the test as extra proof (or disproof) work to do.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agon.core.fast import Array
from agon.solve.kernels import (
    C_ABORTED,
    C_ESTIMATED_START,
    C_HISTORY,
    C_MAX_VALUE,
    C_NODES,
    C_REPEATS_COUNT,
    C_SCALE,
    C_STORES,
    C_WEAK_PROOFS,
    HIGH,
    INFINITY,
    LOW,
    FloatArray,
    Kernel,
    add_board,
    enter_node,
    log2_work,
    look_up,
    order_moves,
    rest_on_child,
    rest_on_refused_moves,
    start_node_trace,
    store_bounds,
    terminal_value,
    trace_summary,
)

PN_INFINITY = 1 << 40
"""A proof or disproof number meaning "cannot be done": the node is settled the other way."""
_PN_MASK = (1 << 31) - 1
"""Numbers are kept in the table up to 2^31 - 1 (larger ones are stored as that)."""
EPSILON_NUMERATOR, EPSILON_DENOMINATOR = 5, 4
"""The 1 + ε threshold: a child is searched until its δ exceeds (1 + ε) times its nearest
rival's, so that the search does not switch back and forth between two children."""


@njit(cache=True)
def _numbers_key(present_key: int, beta: int) -> int:
    """The ``numbers`` table key of a node under the test ``beta`` (never 0)."""
    mixed = (present_key ^ (beta * -7046029254386353131)) * -4658895280553007687
    return mixed | 1


@njit(cache=True)
def _numbers_bucket(numbers: Array, key: int) -> int:
    """The first row of ``key``'s bucket (bit 0 of a key is always set: it is left out)."""
    return int(((key >> 1) & ((numbers.shape[0] >> 1) - 1)) << 1)


@njit(cache=True)
def _numbers_find(numbers: Array, key: int) -> int:
    row = _numbers_bucket(numbers, key)
    if numbers[row, 0] == key:
        return int(row)
    if numbers[row + 1, 0] == key:
        return int(row + 1)
    return -1


@njit(cache=True)
def _numbers_store(numbers: Array, key: int, phi: int, delta: int, work: int) -> None:
    """Keep ``phi``, ``delta`` for ``key``: in its row if it has one, else in its bucket's
    row whose numbers cost less work."""
    row = _numbers_find(numbers, key)
    if row >= 0:
        work = max(work, numbers[row, 2])
    else:
        row = _numbers_bucket(numbers, key)
        if numbers[row + 1, 2] < numbers[row, 2]:
            row += 1
    numbers[row, 0] = key
    numbers[row, 1] = min(phi, _PN_MASK) | min(delta, _PN_MASK) << 31
    numbers[row, 2] = work


@njit(cache=True)
def _saturating_sum(first: int, second: int) -> int:
    return min(first + second, PN_INFINITY)


@njit(cache=True)
def prove(
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
    evaluate: Kernel,
    params: Array,
    symmetry: Array,
    move_maps: Array,
    state: Array,
    beta: int,
    sign: int,
    ply: int,
    phi_limit: int,
    delta_limit: int,
    tt: Array,
    summaries: Array,
    numbers: Array,
    control: Array,
    moves: Array,
    scores: FloatArray,
    phis: Array,
    deltas: Array,
    values: Array,
    trace: Array,
    image: Array,
    cutoffs: Array,
) -> tuple[int, int, int]:
    """Search until the node is settled or its φ reaches ``phi_limit`` or its δ reaches
    ``delta_limit``: ``(φ, δ, value)``. φ = 0: proven, the side to move reaches ``value``
    (at least ``beta``); δ = 0: disproven, it reaches at most ``value`` (below ``beta``);
    otherwise ``value`` is 0. Returns at once (0, 0, 0) when ``control`` aborts it.

    ``moves``, ``scores`` (move ordering), ``phis``, ``deltas`` and ``values`` have a row per
    ply for the node's children; ``trace[ply]`` gets what a settled result rests on, as
    :func:`agon.solve.kernels.negamax` describes; ``cutoffs`` is its history heuristic.
    """
    if not enter_node(control, ply, moves.shape[0]):
        return 0, 0, 0
    history = control[C_HISTORY] != 0
    split = control[C_REPEATS_COUNT] == 0
    row_trace = trace[ply]
    child_trace = trace[ply + 1]
    nodes_before = control[C_NODES]
    phi, delta, value, count, first, table_key, frame, length, present_key = _enter(
        legal_moves, margin, key, history_key, canonical, history_length, history_board,
        history_reference, params, symmetry, move_maps, state, beta, sign, ply, tt, summaries,
        control, moves, trace, image,
    )
    if count < 0:
        return phi, delta, value
    side = 0 if sign > 0 else 1
    order_moves(move_order, params, state, moves[ply], scores[ply], count, first, cutoffs[side])
    best, best_move, best_board = -INFINITY, -1, -1
    valued = 0  # the children valued so far (from the table or at once, or their numbers)
    while True:
        if valued < count:
            chosen = valued
            valued += 1
            move = moves[ply, chosen]
            play(params, state, move)
            phi, delta, value = _child_numbers(
                legal_moves, margin, key, history_key, canonical, history_length,
                history_board, history_reference, evaluate, params, symmetry, move_maps, state,
                1 - beta, -sign, ply + 1, tt, summaries, numbers, control, moves, trace, image,
            )
        else:
            phi, delta = PN_INFINITY, 0
            chosen, runner_up = -1, PN_INFINITY
            open_children, largest_phi = 0, 0
            for index in range(count):
                child_delta = deltas[ply, index]
                delta = _saturating_sum(delta, phis[ply, index])
                if phis[ply, index] > 0:
                    open_children += 1
                    largest_phi = max(largest_phi, phis[ply, index])
                if child_delta < phi:
                    chosen, runner_up, phi = index, phi, child_delta
                elif child_delta < runner_up:
                    runner_up = child_delta
            # weak proof numbers: transpositions make the plain sum count shared subtrees twice
            weak = control[C_WEAK_PROOFS] != 0 and delta > 0
            if weak:
                delta = min(largest_phi + open_children - 1, PN_INFINITY)
            if delta == 0:
                # every reply reaches 1 - beta for the opponent: disproven
                if history and best_board >= 0:
                    # and an upper bound rests on some move staying allowed (docs/solver.md)
                    add_board(trace_summary(row_trace, HIGH), best_board)
                work = log2_work(control[C_NODES] - nodes_before + 1)
                store_bounds(
                    key, history_key, canonical, params, symmetry, move_maps, state, image,
                    control, tt, summaries, row_trace, -INFINITY, best, best_move, work, length,
                    present_key, table_key, frame,
                )
                control[C_STORES] += 1
                return PN_INFINITY, 0, best
            if phi >= phi_limit or delta >= delta_limit:
                work = log2_work(control[C_NODES] - nodes_before + 1)
                _numbers_store(numbers, _numbers_key(present_key, beta), phi, delta, work)
                return phi, delta, 0
            move = moves[ply, chosen]
            child_phi = phis[ply, chosen]
            # searched until its δ passes (1 + ε) times the runner-up's (and at least by one)
            child_delta_limit = min(
                phi_limit, runner_up + 1 + runner_up * (EPSILON_NUMERATOR - EPSILON_DENOMINATOR)
                // EPSILON_DENOMINATOR,
            )
            child_phi_limit = delta_limit - delta + child_phi
            if weak:
                child_phi_limit = delta_limit - open_children + 1
            play(params, state, move)
            phi, delta, value = prove(
                legal_moves, play, undo, margin, move_order, key, history_key, canonical,
                history_length, history_board, history_reference, evaluate, params, symmetry,
                move_maps, state, 1 - beta, -sign, ply + 1, child_phi_limit, child_delta_limit,
                tt, summaries, numbers, control, moves, scores, phis, deltas, values, trace,
                image, cutoffs,
            )
            if control[C_ABORTED] != 0:
                undo(params, state)
                return 0, 0, 0
        child_board = history_board(params, state, history_length(params, state)) if (
            history
        ) else 0
        undo(params, state)
        phis[ply, chosen], deltas[ply, chosen], values[ply, chosen] = phi, delta, value
        if delta == 0:
            # a reply the opponent loses: proven
            return _proven(
                key, history_key, canonical, params, symmetry, move_maps, state, image,
                control, tt, summaries, row_trace, child_trace, -value, move, child_board,
                nodes_before, length, present_key, table_key, frame, cutoffs, side,
            )
        if phi == 0:
            if history:
                rest_on_child(row_trace, child_trace, HIGH, split)
            if -value > best:
                best, best_move, best_board = -value, move, child_board


@njit(cache=True)
def _proven(
    key: Kernel, history_key: Kernel, canonical: Kernel, params: Array, symmetry: Array,
    move_maps: Array, state: Array, image: Array, control: Array, tt: Array,
    summaries: Array, row_trace: Array, child_trace: Array, value: int, move: int,
    child_board: int, nodes_before: int, length: int, present_key: int, table_key: int,
    frame: int, cutoffs: Array, side: int,
) -> tuple[int, int, int]:
    """Settle a node proven by ``move`` (worth ``value``), whose child's trace is
    ``child_trace``: its lower bound rests on that move staying allowed and on the child's
    upper bound (see negamax)."""
    if control[C_HISTORY] != 0:
        split = control[C_REPEATS_COUNT] == 0
        rest_on_child(row_trace, child_trace, LOW, split)
        add_board(trace_summary(row_trace, LOW), child_board)
    cutoffs[side, move] += 1
    work = log2_work(control[C_NODES] - nodes_before + 1)
    store_bounds(
        key, history_key, canonical, params, symmetry, move_maps, state, image, control, tt,
        summaries, row_trace, value, INFINITY, move, work, length, present_key, table_key,
        frame,
    )
    control[C_STORES] += 1
    return 0, PN_INFINITY, value


@njit(cache=True)
def _enter(
    legal_moves: Kernel, margin: Kernel, key: Kernel, history_key: Kernel, canonical: Kernel,
    history_length: Kernel, history_board: Kernel, history_reference: Kernel, params: Array,
    symmetry: Array, move_maps: Array, state: Array, beta: int, sign: int, ply: int,
    tt: Array, summaries: Array, control: Array, moves: Array, trace: Array, image: Array,
) -> tuple[int, int, int, int, int, int, int, int, int]:
    """What a node of the test ``beta`` is before its children are valued: ``(φ, δ, value,
    count, first, table_key, frame, length, present_key)``. Where the margins' bounds, the
    table or the game's end settle it, ``count`` is -1 and ``(φ, δ, value)`` is its result, as
    :func:`prove` returns it; else ``count`` is its number of moves (listed in
    ``moves[ply]``), ``first`` the table's move to try first, ``table_key`` and ``frame``
    those of :func:`agon.solve.kernels.look_up`, ``length`` its history's length and
    ``present_key`` its position's key. ``trace[ply]`` is started as negamax starts it."""
    history = control[C_HISTORY] != 0
    split = control[C_REPEATS_COUNT] == 0
    row_trace = trace[ply]
    length, present = start_node_trace(
        history_length, history_board, params, state, control, row_trace
    )
    largest = control[C_MAX_VALUE]
    if beta > largest:
        return PN_INFINITY, 0, largest, -1, -1, 0, 0, length, 0
    if beta <= -largest:
        return 0, PN_INFINITY, -largest, -1, -1, 0, 0, length, 0
    present_key = key(params, state)
    lower, upper, first, table_key, frame = look_up(
        key, history_key, canonical, history_board, params, symmetry, move_maps, state, image,
        control, tt, summaries, row_trace, beta - 1, beta, length, present, present_key,
    )
    if lower >= beta:
        return 0, PN_INFINITY, lower, -1, first, table_key, frame, length, present_key
    if upper < beta:
        return PN_INFINITY, 0, upper, -1, first, table_key, frame, length, present_key
    count = legal_moves(params, state, moves[ply])
    if history:
        rest_on_refused_moves(history_reference, params, state, row_trace, count, split)
    if count == 0:
        value = terminal_value(margin, params, state, sign, control[C_SCALE])
        if value >= beta:
            return 0, PN_INFINITY, value, -1, first, table_key, frame, length, present_key
        return PN_INFINITY, 0, value, -1, first, table_key, frame, length, present_key
    return 0, 0, 0, count, first, table_key, frame, length, present_key


@njit(cache=True)
def _child_numbers(
    legal_moves: Kernel, margin: Kernel, key: Kernel, history_key: Kernel, canonical: Kernel,
    history_length: Kernel, history_board: Kernel, history_reference: Kernel,
    evaluate: Kernel, params: Array, symmetry: Array, move_maps: Array, state: Array, beta: int,
    sign: int, ply: int,
    tt: Array, summaries: Array, numbers: Array, control: Array, moves: Array, trace: Array,
    image: Array,
) -> tuple[int, int, int]:
    """A child's ``(φ, δ, value)`` without searching it: settled where the game ends there or
    the table holds a bound that settles the test ``beta`` here (with ``trace[ply]`` as
    :func:`prove` would leave it), else its numbers from ``numbers`` or, for a child not
    searched yet, φ = 1 and δ = its number of moves."""
    phi, delta, value, count, _, _, _, _, present_key = _enter(
        legal_moves, margin, key, history_key, canonical, history_length, history_board,
        history_reference, params, symmetry, move_maps, state, beta, sign, ply, tt, summaries,
        control, moves, trace, image,
    )
    if count < 0:
        return phi, delta, value
    row = _numbers_find(numbers, _numbers_key(present_key, beta))
    if row >= 0:
        packed = numbers[row, 1]
        return packed & _PN_MASK, (packed >> 31) & _PN_MASK, 0
    if control[C_ESTIMATED_START] == 0:
        return 1, count, 0
    # the further the estimate is from the test, the harder the side it is against looks
    estimate = sign * int(np.rint(evaluate(params, state) * control[C_SCALE]))
    gap = estimate - beta
    if gap >= 0:
        return 1, count + gap, 0
    return 1 - gap, count, 0
