"""Tic-tac-toe's fast twin: the rules of ``rules.py`` as flat int64 arrays and Numba kernels.

A twin is optional: without one Agon searches and solves a game on its reference rules, more
slowly. It must say exactly what the reference says, move by move: Agon's conformance suite
plays random games on both in lock-step (``tests/test_tictactoe.py``), and so does
``agon bench --verify``. The contract (every kernel and its signature) is
:mod:`agon.core.fast`; copy this module to write a twin of your own.

``params`` (the variant, read only), with ``N = width * height`` cells and ``L`` winning lines:

=============  ================================================================================
index          content
=============  ================================================================================
0, 1, 2, 3     width, height, N, the length of a winning line
4              L
5 + 2c + p     Zobrist key of cell ``c`` holding a stone of player ``p`` (0 Black, 1 White)
5 + 2N + i     winning line ``i`` as a bitmask of its cells (bit ``c``: cell ``c``)
=============  ================================================================================

``state`` (one game, mutated in place; boards of up to 5 × 5 fit a bitmask):

=============  ================================================================================
index          content
=============  ================================================================================
0, 1           Black's stones and White's, as bitmasks
2              side to move (0 Black, 1 White; as the stones say, once the game is over too)
3              end code: 0 while the game goes on, else an ``END_*`` below
4              ply: moves on the undo stack
5              Zobrist key of the stones (kept up to date by play and undo)
6 .. 6+N-1     undo stack: the cell of each move played
=============  ================================================================================

The side to move follows from the stones, so the key is the stones' alone, and the rules never
look back: the history kernels are Agon's for such rules (:data:`~agon.core.fast.NO_HISTORY`).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from agon.core.errors import AgonError
from agon.core.fast import NO_HISTORY, Array, FastTwin, kernels_in, popcount, zobrist_keys
from agon.core.game import State
from agon_tictactoe.rules import (
    EMPTY,
    REASON_FULL,
    STONES,
    TicTacToe,
    TicTacToeState,
    winning_lines,
)

ZOBRIST_SEED = 0x71C7AC70E
END_BLACK_LINE = 1
END_WHITE_LINE = 2
END_FULL = 3

P_WIDTH = 0
P_HEIGHT = 1
P_CELLS = 2
P_LINE = 3
P_LINES = 4
P_KEYS = 5

S_BLACK = 0
S_WHITE = 1
S_SIDE = 2
S_END = 3
S_PLY = 4
S_KEY = 5
S_STACK = 6


# --- helpers ----------------------------------------------------------------------------------


@njit(cache=True)
def _line(params: Array, index: int) -> int:
    """Winning line ``index`` as a bitmask."""
    return int(params[P_KEYS + 2 * params[P_CELLS] + index])


@njit(cache=True)
def _completes_a_line(params: Array, stones: int, cell: int) -> bool:
    """Whether ``stones`` fill a winning line through ``cell``."""
    for index in range(params[P_LINES]):
        line = _line(params, index)
        if (line >> cell) & 1 and (stones & line) == line:
            return True
    return False


# --- the kernels of the contract --------------------------------------------------------------


@njit(cache=True)
def legal_moves(params: Array, state: Array, out: Array) -> int:
    if state[S_END] != 0:
        return 0
    filled = state[S_BLACK] | state[S_WHITE]
    count = 0
    for cell in range(params[P_CELLS]):
        if not (filled >> cell) & 1:
            out[count] = cell
            count += 1
    return count


@njit(cache=True)
def play(params: Array, state: Array, move: int) -> None:
    mover = state[S_SIDE]
    stones = state[S_BLACK + mover] | (1 << move)
    state[S_BLACK + mover] = stones
    state[S_KEY] ^= params[P_KEYS + 2 * move + mover]
    state[S_STACK + state[S_PLY]] = move
    state[S_PLY] += 1
    state[S_SIDE] = 1 - mover
    if _completes_a_line(params, stones, move):
        state[S_END] = END_BLACK_LINE + mover
    elif popcount(state[S_BLACK] | state[S_WHITE]) == params[P_CELLS]:
        state[S_END] = END_FULL


@njit(cache=True)
def undo(params: Array, state: Array) -> None:
    ply = state[S_PLY] - 1
    move = state[S_STACK + ply]
    state[S_STACK + ply] = 0  # so that undoing everything gives back the very same array
    state[S_PLY] = ply
    state[S_END] = 0  # (a move is played only while the game goes on)
    mover = 1 - state[S_SIDE]
    state[S_SIDE] = mover
    state[S_BLACK + mover] &= ~(1 << move)
    state[S_KEY] ^= params[P_KEYS + 2 * move + mover]


@njit(cache=True)
def to_move(params: Array, state: Array) -> int:
    return -1 if state[S_END] != 0 else int(state[S_SIDE])


@njit(cache=True)
def end_code(params: Array, state: Array) -> int:
    return int(state[S_END])


@njit(cache=True)
def margin(params: Array, state: Array) -> float:
    """1 for Black's line, -1 for White's, 0 otherwise (the reference's score, no komi)."""
    if state[S_END] == END_BLACK_LINE:
        return 1.0
    if state[S_END] == END_WHITE_LINE:
        return -1.0
    return 0.0


@njit(cache=True)
def key(params: Array, state: Array) -> int:
    return int(state[S_KEY])


@njit(cache=True)
def evaluate(params: Array, state: Array) -> float:
    """The margin once the game is over; before, the lines each side can still fill, weighted
    by the square of the stones already in them, as a fraction of the most there could be (so
    always between -1 and 1)."""
    if state[S_END] != 0:
        return margin(params, state)
    black, white = state[S_BLACK], state[S_WHITE]
    value = 0
    for index in range(params[P_LINES]):
        line = _line(params, index)
        mine, theirs = popcount(black & line), popcount(white & line)
        if theirs == 0:
            value += mine * mine
        elif mine == 0:
            value -= theirs * theirs
    length = params[P_LINE]
    return float(value) / float(params[P_LINES] * length * length + 1)


@njit(cache=True)
def move_order(params: Array, state: Array, move: int) -> float:
    """Cells near the centre first: they lie on the most lines."""
    width, height = params[P_WIDTH], params[P_HEIGHT]
    file, rank = move % width, move // width
    return -float(abs(2 * file - (width - 1)) + abs(2 * rank - (height - 1)))


# --- building the twin ------------------------------------------------------------------------


def _make_params(game: TicTacToe) -> Array:
    n = game.cells
    lines = winning_lines(game.width, game.height, game.line)
    params = np.zeros(P_KEYS + 2 * n + len(lines), dtype=np.int64)
    params[P_WIDTH], params[P_HEIGHT], params[P_CELLS] = game.width, game.height, n
    params[P_LINE], params[P_LINES] = game.line, len(lines)
    params[P_KEYS : P_KEYS + 2 * n] = zobrist_keys(ZOBRIST_SEED, 2 * n)
    for index, cells in enumerate(lines):
        params[P_KEYS + 2 * n + index] = sum(1 << cell for cell in cells)
    return params


@functools.lru_cache(maxsize=64)
def fast_twin(game: TicTacToe) -> FastTwin:
    """The fast twin of a tic-tac-toe variant (built once per variant)."""
    params = _make_params(game)
    n = game.cells

    def from_reference(reference: State) -> Array:
        if not isinstance(reference, TicTacToeState) or reference.game != game:
            raise AgonError(f"not a state of {game.description}: {reference!r}")
        start = reference.copy()  # the position before its moves, which are then replayed
        while start.history:
            start.undo()
        state = np.zeros(S_STACK + n, dtype=np.int64)
        for cell, content in enumerate(start.board):
            if content != EMPTY:
                player = STONES.index(content)
                state[S_BLACK + player] |= 1 << cell
                state[S_KEY] ^= params[P_KEYS + 2 * cell + player]
        state[S_SIDE] = int(start.player)
        winner = start.winner_by_line()
        if winner is not None:
            state[S_END] = END_BLACK_LINE + int(winner)
        elif EMPTY not in start.board:
            state[S_END] = END_FULL
        for move in reference.history:
            play(params, state, move)
        return state

    def position(state: Array) -> str:
        black, white = int(state[S_BLACK]), int(state[S_WHITE])
        board = "".join(
            STONES[0] if black >> cell & 1 else STONES[1] if white >> cell & 1 else EMPTY
            for cell in range(n)
        )
        return TicTacToeState(game, board).position()

    return FastTwin(
        game=game,
        params=params,
        num_actions=game.num_actions,
        end_reasons={
            END_BLACK_LINE: f"Black completed a line of {game.line}",
            END_WHITE_LINE: f"White completed a line of {game.line}",
            END_FULL: REASON_FULL,
        },
        new_state=lambda: from_reference(game.new_state()),
        from_reference=from_reference,
        position=position,
        # two plies more than the longest game (every move fills a cell): the solver's deepest
        # search goes room - 1 plies, and must reach the end of every game
        room=lambda state: n + 2,
        # this module's functions named as the contract's kernels, and no history
        kernels=kernels_in(globals(), NO_HISTORY),
    )
