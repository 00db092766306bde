"""Numba kernels shared by every agent, written once against the fast-twin contract.

Each kernel receives the twin's kernels it needs as first-class Numba functions (see
:mod:`agon.core.fast`), so one compiled kernel serves every game. ``pass_move`` is the game's
pass action, or -1 where the rules have none.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from agon.core.fast import Array

FloatArray = npt.NDArray[np.float64]
Kernel = Any
"""A twin's kernel, passed as a first-class Numba function."""


@njit(cache=True)
def seed_rng(seed: int) -> None:
    """Seed the random generator of compiled code (it is not NumPy's, which Python seeds)."""
    np.random.seed(seed)


@njit(cache=True)
def placement_count(moves: Array, count: int, pass_move: int) -> int:
    """How many of the first ``count`` sorted legal moves are not the pass (which comes last)."""
    if count > 0 and moves[count - 1] == pass_move:
        return count - 1
    return count


@njit(cache=True)
def choose_playout_move(
    move_order: Kernel,
    params: Array,
    state: Array,
    moves: Array,
    count: int,
    pass_move: int,
    epsilon: float,
) -> int:
    """A playout's move among the ``count`` legal ``moves``.

    With probability ``epsilon`` uniform among the placements, else the placement that
    ``move_order`` likes best (ties broken at random); the pass only when nothing else is legal.
    """
    placements = placement_count(moves, count, pass_move)
    if placements == 0:
        return int(moves[0])
    if epsilon >= 1.0 or np.random.random() < epsilon:
        return int(moves[np.random.randint(placements)])
    best_score = -np.inf
    chosen = int(moves[0])
    ties = 0
    for index in range(placements):
        score = move_order(params, state, moves[index])
        if score > best_score:
            best_score, chosen, ties = score, int(moves[index]), 1
        elif score == best_score:
            ties += 1
            if np.random.randint(ties) == 0:
                chosen = int(moves[index])
    return chosen


@njit(cache=True)
def playout(
    legal_moves: Kernel,
    play: Kernel,
    end_code: Kernel,
    margin: Kernel,
    evaluate: Kernel,
    move_order: Kernel,
    to_move: Kernel,
    params: Array,
    state: Array,
    moves: Array,
    pass_move: int,
    epsilon: float,
    max_plies: int,
    record: Array,
    recorded: int,
) -> tuple[float, int]:
    """Play ``state`` on in place (moves as :func:`choose_playout_move`) to the end of the game,
    or for ``max_plies`` moves at most.

    Returns the final margin (``evaluate``'s estimate if the game was cut short) and the
    number of moves played, which ``undo`` must take back. The cut matters under rules that
    end a game only when the boards run out: random games there can last thousands of plies,
    and a twin's array has room for only so many. Where ``record`` has room (two rows: the
    moves and who made them), the moves are written into it from column ``recorded`` on.
    """
    plies = 0
    recording = record.shape[1] > 0
    while end_code(params, state) == 0:
        if plies >= max_plies:
            return float(evaluate(params, state)), plies
        count = legal_moves(params, state, moves)
        move = choose_playout_move(move_order, params, state, moves, count, pass_move, epsilon)
        if recording:
            record[0, recorded + plies] = move
            record[1, recorded + plies] = to_move(params, state)
        play(params, state, move)
        plies += 1
    return float(margin(params, state)), plies


@njit(cache=True)
def undo_plies(undo: Kernel, params: Array, state: Array, plies: int) -> None:
    for _ in range(plies):
        undo(params, state)


@njit(cache=True)
def random_playouts(
    legal_moves: Kernel,
    play: Kernel,
    undo: Kernel,
    end_code: Kernel,
    margin: Kernel,
    evaluate: Kernel,
    move_order: Kernel,
    to_move: Kernel,
    params: Array,
    state: Array,
    moves: Array,
    pass_move: int,
    count: int,
    max_plies: int,
) -> int:
    """Play ``count`` uniformly random games from ``state``, each cut at ``max_plies``, and
    restore ``state`` after each with ``undo`` (cheaper than a copy where the array holds a
    long history); the total number of moves played."""
    total = 0
    no_record = np.zeros((2, 0), dtype=np.int64)
    for _ in range(count):
        _, plies = playout(
            legal_moves, play, end_code, margin, evaluate, move_order, to_move, params, state,
            moves, pass_move, 1.0, max_plies, no_record, 0,
        )
        undo_plies(undo, params, state, plies)
        total += plies
    return total


@njit(cache=True)
def score_moves(
    legal_moves: Kernel,
    play: Kernel,
    undo: Kernel,
    end_code: Kernel,
    margin: Kernel,
    evaluate: Kernel,
    params: Array,
    state: Array,
    moves: Array,
    margins: FloatArray,
    estimates: FloatArray,
) -> int:
    """Each legal move's immediate margin and evaluation once played (Black's view).

    Writes the legal moves into ``moves``, the margin after each into ``margins`` and the
    evaluation after each into ``estimates`` (the margin itself when the move ends the game);
    returns how many moves there are.
    """
    count = legal_moves(params, state, moves)
    for index in range(count):
        play(params, state, moves[index])
        margins[index] = margin(params, state)
        if end_code(params, state) != 0:
            estimates[index] = margins[index]
        else:
            estimates[index] = evaluate(params, state)
        undo(params, state)
    return int(count)
