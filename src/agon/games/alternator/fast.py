"""Alternator's fast twin: the rules of ``rules.py`` as flat int64 arrays and Numba kernels.

The contract is :mod:`agon.core.fast`; ``tests/test_alternator_fast.py`` checks every kernel
against the reference rules move by move.

``params`` (read only), with ``N = width * height`` cells:

====================  ==========================================================================
index                 content
====================  ==========================================================================
0, 1, 2               width, height, N
3                     komi, the bits of a float64 (so any komi gives the reference's margin)
4                     Zobrist key of "White to move"
5, 6                  Zobrist keys of one and of two consecutive passes
7 .. 10               the evaluation's weights, one a term (float64 bits)
11 + 4*c + d          the neighbour of cell ``c`` in direction ``d`` (0 N, 1 E, 2 S, 3 W),
                      -1 off the board
11 + 4N + c           1 if cell ``c`` is dark (Black's), else 0
11 + 5N + c(N+4) + i  Zobrist key of cell ``c`` holding value index ``i``: a pit ``-1-d`` is
                      ``i = 3-d`` (0..3), a root of size ``s`` is ``i = s+3`` (4..N+3)
====================  ==========================================================================

``state`` (one game, mutated in place):

================  ===============================================================================
index             content
================  ===============================================================================
0 .. N-1          cells, as the reference's ``AlternatorState.cells``: a root's tree size (> 0),
                  or ``-1 - direction`` for a pit
N                 side to move (0 Black, 1 White)
N+1               consecutive passes (2: the game is over)
N+2               ply: moves on the undo stack
N+3               Zobrist key of cells, side to move and passes (kept up to date by play/undo)
N+4               Black's points without komi (White's are ``N`` minus these)
N+5 .. N+5+2N-1   undo stack, one entry per move: ``move | old passes << 16 | pit size << 18``
================  ===============================================================================

A game has at most N-1 placements (each turns a root into a pit), at most one pass between
two of them and before the first, and two at the end: at most 2N moves, the stack's length.
"""

from __future__ import annotations

import functools

import numpy as np
import numpy.typing as npt
from numba import njit

from agon.core.errors import AgonError
from agon.core.evaluation import Terms, set_weights, weights_for
from agon.core.fast import NO_HISTORY, FastTwin, kernels_in, zobrist_keys
from agon.core.game import State
from agon.core.player import Player
from agon.games.alternator.rules import REASON_PASSES, Alternator, AlternatorState

Array = npt.NDArray[np.int64]

ZOBRIST_SEED = 0x5EED_A17E
END_BOTH_PASSED = 1

P_WIDTH = 0
P_HEIGHT = 1
P_CELLS = 2
P_KOMI_BITS = 3
P_WHITE_KEY = 4
P_PASS_KEYS = 5  # two entries: one pass, two passes
P_WEIGHTS = 7  # the evaluation's weights, one a term (float64 bits), then the tables: P_TABLES

S_SIDE = 0  # header entries, after the N cells
S_PASSES = 1
S_PLY = 2
S_KEY = 3
S_BLACK_POINTS = 4
S_STACK = 5

ENTRY_PASSES_SHIFT = 16
ENTRY_SIZE_SHIFT = 18
ENTRY_MOVE_MASK = (1 << ENTRY_PASSES_SHIFT) - 1

# The evaluation's terms and the weights set by hand (docs/evaluation.md, "## Alternator",
# explains and measures them; trained weights, where a variant has them, take their place)
TERM_NAMES = ("pull", "gain", "tempo", "roots")
"""per point of the smallest tree a safe root can pull onto itself; per point of the largest
tree the side to move can take now; for being on move while placements remain; per root with
a root beside it (one that trees may still be moved onto), for its owner"""
HAND_WEIGHTS = (1.2, 0.8, 1.2, 2.3)
P_TABLES = P_WEIGHTS + len(TERM_NAMES)


# --- layout helpers ---------------------------------------------------------------------------


@njit(cache=True)
def _neighbour(params: Array, cell: int, direction: int) -> int:
    return int(params[P_TABLES + 4 * cell + direction])


@njit(cache=True)
def _is_dark(params: Array, n: int, cell: int) -> bool:
    return bool(params[P_TABLES + 4 * n + cell] != 0)


@njit(cache=True)
def _cell_key(params: Array, n: int, cell: int, value: int) -> int:
    index = value + 4 if value < 0 else value + 3
    return int(params[P_TABLES + 5 * n + cell * (n + 4) + index])


@njit(cache=True)
def _passes_key(params: Array, passes: int) -> int:
    return int(params[P_PASS_KEYS + passes - 1]) if passes > 0 else 0


@njit(cache=True)
def _komi(params: Array) -> float:
    return float(params[P_KOMI_BITS : P_KOMI_BITS + 1].view(np.float64)[0])


@njit(cache=True)
def _full_key(params: Array, state: Array) -> int:
    """The Zobrist key computed from scratch (play and undo keep it up to date instead)."""
    n = params[P_CELLS]
    zobrist = 0
    for cell in range(n):
        zobrist ^= _cell_key(params, n, cell, state[cell])
    if state[n + S_SIDE] == 1:
        zobrist ^= params[P_WHITE_KEY]
    return zobrist ^ _passes_key(params, state[n + S_PASSES])


@njit(cache=True)
def _placement_key(
    params: Array, n: int, move: int, root: int, pit_size: int, root_size: int
) -> int:
    """What a placement changes in the Zobrist key (xor it in to play, again to undo)."""
    pit = move >> 2
    changed = _cell_key(params, n, pit, pit_size) ^ _cell_key(params, n, pit, -1 - (move & 3))
    return (
        changed
        ^ _cell_key(params, n, root, root_size)
        ^ _cell_key(params, n, root, root_size + pit_size)
    )


@njit(cache=True)
def _black_gain(params: Array, n: int, pit: int, pit_size: int) -> int:
    """Black's points won by moving the tree at ``pit``: a tree always moves to the other colour."""
    return -pit_size if _is_dark(params, n, pit) else pit_size


@njit(cache=True)
def _black_points(params: Array, state: Array) -> int:
    n = params[P_CELLS]
    points = 0
    for cell in range(n):
        if state[cell] > 0 and _is_dark(params, n, cell):
            points += state[cell]
    return points


# --- the kernels of the contract --------------------------------------------------------------


@njit(cache=True)
def legal_moves(params: Array, state: Array, out: Array) -> int:
    n = params[P_CELLS]
    if state[n + S_PASSES] >= 2:
        return 0
    count = 0
    for pit in range(n):
        pit_size = state[pit]
        if pit_size <= 0:
            continue
        for direction in range(4):
            root = _neighbour(params, pit, direction)
            if root >= 0 and 0 < state[root] <= pit_size:
                out[count] = 4 * pit + direction
                count += 1
    out[count] = 4 * n
    return count + 1


@njit(cache=True)
def play(params: Array, state: Array, move: int) -> None:
    n = params[P_CELLS]
    passes = state[n + S_PASSES]
    ply = state[n + S_PLY]
    zobrist = state[n + S_KEY] ^ params[P_WHITE_KEY] ^ _passes_key(params, passes)
    if move == 4 * n:
        state[n + S_STACK + ply] = move | passes << ENTRY_PASSES_SHIFT
        passes += 1
    else:
        pit, direction = move >> 2, move & 3
        root = _neighbour(params, pit, direction)
        pit_size, root_size = state[pit], state[root]
        state[n + S_STACK + ply] = (
            move | passes << ENTRY_PASSES_SHIFT | pit_size << ENTRY_SIZE_SHIFT
        )
        zobrist ^= _placement_key(params, n, move, root, pit_size, root_size)
        state[pit] = -1 - direction
        state[root] = root_size + pit_size
        state[n + S_BLACK_POINTS] += _black_gain(params, n, pit, pit_size)
        passes = 0
    state[n + S_PASSES] = passes
    state[n + S_KEY] = zobrist ^ _passes_key(params, passes)
    state[n + S_SIDE] ^= 1
    state[n + S_PLY] = ply + 1


@njit(cache=True)
def undo(params: Array, state: Array) -> None:
    n = params[P_CELLS]
    ply = state[n + S_PLY] - 1
    entry = state[n + S_STACK + ply]
    state[n + S_STACK + ply] = 0  # so that undoing everything gives back the very same array
    move = entry & ENTRY_MOVE_MASK
    old_passes = (entry >> ENTRY_PASSES_SHIFT) & 3
    zobrist = state[n + S_KEY] ^ params[P_WHITE_KEY] ^ _passes_key(params, state[n + S_PASSES])
    if move != 4 * n:
        pit = move >> 2
        root = _neighbour(params, pit, move & 3)
        pit_size = entry >> ENTRY_SIZE_SHIFT
        root_size = state[root] - pit_size
        zobrist ^= _placement_key(params, n, move, root, pit_size, root_size)
        state[pit] = pit_size
        state[root] = root_size
        state[n + S_BLACK_POINTS] -= _black_gain(params, n, pit, pit_size)
    state[n + S_PASSES] = old_passes
    state[n + S_KEY] = zobrist ^ _passes_key(params, old_passes)
    state[n + S_SIDE] ^= 1
    state[n + S_PLY] = ply


@njit(cache=True)
def to_move(params: Array, state: Array) -> int:
    n = params[P_CELLS]
    return -1 if state[n + S_PASSES] >= 2 else int(state[n + S_SIDE])


@njit(cache=True)
def end_code(params: Array, state: Array) -> int:
    return END_BOTH_PASSED if state[params[P_CELLS] + S_PASSES] >= 2 else 0


@njit(cache=True)
def margin(params: Array, state: Array) -> float:
    n = params[P_CELLS]
    black = state[n + S_BLACK_POINTS]
    # The reference's order of operations, so that any komi gives the same float.
    return float(black) - (float(n - black) + _komi(params))


@njit(cache=True)
def key(params: Array, state: Array) -> int:
    return int(state[params[P_CELLS] + S_KEY])


@njit(cache=True)
def _smallest_neighbour(params: Array, state: Array, cell: int) -> int:
    """The size of the smallest root next to ``cell``, 0 if it has none."""
    smallest = 0
    for direction in range(4):
        other = _neighbour(params, cell, direction)
        if other >= 0 and state[other] > 0 and (smallest == 0 or state[other] < smallest):
            smallest = state[other]
    return int(smallest)


@njit(cache=True)
def _terms(params: Array, state: Array) -> tuple[float, float, float, float, float]:
    """The margin now, and the evaluation's terms (:data:`TERM_NAMES`), Black's view."""
    value = margin(params, state)
    n = params[P_CELLS]
    if state[n + S_PASSES] >= 2:
        return value, 0.0, 0.0, 0.0, 0.0
    mover_dark = state[n + S_SIDE] == 0
    movable = False
    mover_gain = 0  # the largest tree the side to move can hand to its own colour now
    pull = 0.0
    roots = 0.0
    for cell in range(n):
        size = state[cell]
        if size <= 0:
            continue
        smallest_neighbour = _smallest_neighbour(params, state, cell)
        dark = _is_dark(params, n, cell)
        if smallest_neighbour > 0:
            roots += 1.0 if dark else -1.0
        if smallest_neighbour > size:
            # A safe root: it cannot move, and its owner can pull any neighbour onto it.
            pull += smallest_neighbour if dark else -smallest_neighbour
        elif smallest_neighbour > 0:
            movable = True
            # Moving a tree hands it to the other colour: only its owner's opponent gains.
            if dark != mover_dark:
                mover_gain = max(mover_gain, size)
    if not movable:  # only passes remain: the margin is final
        return value, pull, 0.0, 0.0, roots
    sign = 1.0 if mover_dark else -1.0
    return value, pull, sign * mover_gain, sign, roots


@njit(cache=True)
def features(params: Array, state: Array, out: npt.NDArray[np.float64]) -> float:
    """The terms of :func:`evaluate` in ``out``; returns the margin now (their base)."""
    value, out[0], out[1], out[2], out[3] = _terms(params, state)
    return value


@njit(cache=True)
def evaluate(params: Array, state: Array) -> float:
    """The margin now, plus what safe roots will pull in, plus the move, plus the roots still in
    play (docs/evaluation.md)."""
    value, pull, gain, tempo, roots = _terms(params, state)
    weights = params[P_WEIGHTS:P_TABLES].view(np.float64)
    return float(
        value + weights[0] * pull + weights[1] * gain + weights[2] * tempo + weights[3] * roots
    )


@njit(cache=True)
def move_order(params: Array, state: Array, move: int) -> float:
    """Immediate gain, less what the opponent can take straight back; pass last."""
    n = params[P_CELLS]
    if move == 4 * n:
        return -3.0 * float(n) - 1.0
    pit, direction = move >> 2, move & 3
    root = _neighbour(params, pit, direction)
    pit_size = state[pit]
    merged = pit_size + state[root]
    # The tree changes colour: the mover gains it if it was the opponent's.
    mover_dark = state[n + S_SIDE] == 0
    gain = pit_size if _is_dark(params, n, pit) != mover_dark else -pit_size
    # Can the opponent hand the merged tree straight back (onto another neighbour of root)?
    recapture = 0
    for other_direction in range(4):
        other = _neighbour(params, root, other_direction)
        if other >= 0 and other != pit and 0 < state[other] <= merged:
            recapture = merged
    return float(gain - recapture) + float(merged) / (4.0 * float(n))


TERMS = Terms(
    TERM_NAMES, HAND_WEIGHTS, features, P_WEIGHTS, __name__.rpartition(".")[0],
    carries_over=("width", "height", "komi"),
)


# --- building the twin ----------------------------------------------------------------------


def _make_params(game: Alternator) -> Array:
    n = game.cells
    params = np.zeros(P_TABLES + 5 * n + n * (n + 4), dtype=np.int64)
    params[P_WIDTH], params[P_HEIGHT], params[P_CELLS] = game.width, game.height, n
    params[P_KOMI_BITS] = np.array([game.komi], dtype=np.float64).view(np.int64)[0]
    set_weights(params, TERMS, weights_for(game, TERMS))
    for cell in range(n):
        for direction in range(4):
            neighbour = game.neighbour(cell, direction)
            params[P_TABLES + 4 * cell + direction] = -1 if neighbour is None else neighbour
        params[P_TABLES + 4 * n + cell] = int(game.is_dark(cell))
    keys = zobrist_keys(ZOBRIST_SEED + 32 * game.width + game.height, 3 + n * (n + 4))
    params[P_WHITE_KEY : P_WHITE_KEY + 3] = keys[:3]
    params[P_TABLES + 5 * n :] = keys[3:]
    return params


def _state_length(game: Alternator) -> int:
    return game.cells + S_STACK + 2 * game.cells


@functools.lru_cache(maxsize=64)
def fast_twin(game: Alternator) -> FastTwin:
    """The fast twin of an Alternator variant (built once per variant)."""
    params = _make_params(game)
    n = game.cells

    def from_reference(reference: State) -> Array:
        if not isinstance(reference, AlternatorState) or reference.game != game:
            raise AgonError(f"not a state of {game.description}: {reference!r}")
        start = reference.copy()
        while start.history:
            start.undo()
        state = np.zeros(_state_length(game), dtype=np.int64)
        state[:n] = start.cells
        state[n + S_SIDE] = int(start.player)
        state[n + S_PASSES] = start.passes
        state[n + S_BLACK_POINTS] = _black_points(params, state)
        state[n + S_KEY] = _full_key(params, state)
        for move in reference.history:
            play(params, state, move)
        return state

    def position(state: Array) -> str:
        cells = tuple(int(value) for value in state[:n])
        player = Player(int(state[n + S_SIDE]))
        return AlternatorState(game, cells, player, int(state[n + S_PASSES])).position()

    return FastTwin(
        game=game,
        params=params,
        num_actions=game.num_actions,
        end_reasons={END_BOTH_PASSED: REASON_PASSES},
        new_state=lambda: from_reference(game.new_state()),
        from_reference=from_reference,
        position=position,
        # (more than the 2N plies a game can last: the solver's arrays have always had room)
        room=lambda state: 2 * game.num_actions + 2,
        kernels=kernels_in(globals(), NO_HISTORY),
        terms=TERMS,
    )
