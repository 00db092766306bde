"""Board symmetries that preserve values, and the canonical-key kernels that use them.

A symmetry maps a position to one with the same value (for the same player to move), so the
solver stores one entry for all the images of a position: its table key is the least hash over
the images, and ``image[0]`` says which symmetry reaches that least image.

*Alternator.* A symmetry of the board must keep every cell's colour, since colour decides who
owns a tree. Of the eight symmetries of a square (the four of a rectangle when W != H), a mirror
``file -> W-1-file`` keeps colours iff W is odd, ``rank -> H-1-rank`` iff H is odd, the half-turn
iff W+H is even, the diagonal mirrors (square boards) always and the anti-diagonal iff W+H is
even, the quarter-turns (square boards) iff W is odd. They are found here by checking every
cell rather than by these rules. Pits turn with the board: a stem's direction is mapped by the
symmetry's linear part. The transpose ``(file, rank) -> (rank, file)`` keeps colours and a1, so
a W×H board and an H×W board have the same value.

*Alak.* Reversing the points preserves all three rule sets; the image reverses the board, the
just-captured points, the ko board and every board of the history.

The hashes are this module's own (each kernel hashes every image the same way); they only need
to be equal for equal images, which the twin's keys guarantee for the identity.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from agon.core.errors import AgonError
from agon.core.fast import Array
from agon.core.game import Game
from agon.games.alak import Alak
from agon.games.alak import fast as alak_fast
from agon.games.alak.rules import AlakRules
from agon.games.alternator import Alternator
from agon.games.alternator import fast as alternator_fast
from agon.games.alternator.rules import DIRECTION_STEPS

SEED = 0x5017_E5_AB


@dataclass(frozen=True, eq=False)
class Symmetries:
    """A variant's value-preserving symmetries, as the solver's kernels take them."""

    names: tuple[str, ...]
    """One name per symmetry, the identity first."""
    data: Array
    """What ``canonical`` reads (its own hash tables and the symmetries' maps)."""
    move_maps: Array
    """Rows ``s``: move -> its image under symmetry ``s``; rows ``S + s``: the inverse."""
    canonical: Any
    """``canonical(params, data, state, image) -> key``: least hash over the images."""


def _zobrist(count: int, seed: int) -> Array:
    rng = np.random.default_rng(seed)
    return rng.integers(-(2**63), 2**63 - 1, size=count, dtype=np.int64)


def _move_maps(forward: list[list[int]]) -> Array:
    actions = len(forward[0])
    maps = np.zeros((2 * len(forward), actions), dtype=np.int64)
    for index, images in enumerate(forward):
        maps[index] = images
        for move, image in enumerate(images):
            maps[len(forward) + index, image] = move
    return maps


# --- Alternator -----------------------------------------------------------------------------

Coordinates = Callable[[int, int], tuple[int, int]]


def _board_symmetries(width: int, height: int) -> list[tuple[str, Coordinates]]:
    """The symmetries that map the board onto itself, as maps of (file, rank)."""
    last_file, last_rank = width - 1, height - 1
    found: list[tuple[str, Coordinates]] = [
        ("identity", lambda f, r: (f, r)),
        ("mirror files", lambda f, r: (last_file - f, r)),
        ("mirror ranks", lambda f, r: (f, last_rank - r)),
        ("half-turn", lambda f, r: (last_file - f, last_rank - r)),
    ]
    if width == height:
        found += [
            ("diagonal mirror", lambda f, r: (r, f)),
            ("anti-diagonal mirror", lambda f, r: (last_rank - r, last_file - f)),
            ("quarter-turn", lambda f, r: (r, last_file - f)),
            ("three-quarter-turn", lambda f, r: (last_rank - r, f)),
        ]
    return found


def _cell(width: int, file_rank: tuple[int, int]) -> int:
    return file_rank[1] * width + file_rank[0]


def alternator_symmetries(game: Alternator, enabled: bool = True) -> Symmetries:
    width, height, cells = game.width, game.height, game.cells
    kept: list[tuple[str, list[int], list[int]]] = []
    for name, mapping in _board_symmetries(width, height):
        cell_map = [_cell(width, mapping(c % width, c // width)) for c in range(cells)]
        if any(game.is_dark(c) != game.is_dark(cell_map[c]) for c in range(cells)):
            continue
        origin = mapping(0, 0)
        directions = []
        for step_file, step_rank in DIRECTION_STEPS:
            moved = mapping(step_file, step_rank)
            step = (moved[0] - origin[0], moved[1] - origin[1])
            directions.append(DIRECTION_STEPS.index(step))
        kept.append((name, cell_map, directions))
        if not enabled:
            break
    values = cells + 4  # a pit's direction 0..3, a root's size 1..N as 3 + size
    keys = _zobrist(cells * values + 3, SEED + cells)
    table = np.zeros((len(kept), cells, values), dtype=np.int64)
    for index, (_, cell_map, directions) in enumerate(kept):
        for cell in range(cells):
            target = cell_map[cell]
            for value in range(values):
                image = directions[value] if value < 4 else value
                table[index, cell, value] = keys[target * values + image]
    header = [len(kept), cells, values, *keys[-3:]]
    data = np.concatenate([np.array(header, dtype=np.int64), table.ravel()])
    forward = []
    for _, cell_map, directions in kept:
        images = [4 * cell_map[m // 4] + directions[m % 4] for m in range(4 * cells)]
        forward.append([*images, game.pass_move])
    return Symmetries(
        names=tuple(name for name, _, _ in kept),
        data=data,
        move_maps=_move_maps(forward),
        canonical=alternator_canonical,
    )


@njit(cache=True)
def alternator_canonical(params: Array, data: Array, state: Array, image: Array) -> int:
    count, cells, values = data[0], data[1], data[2]
    rest = data[3 + state[cells + alternator_fast.S_SIDE]]
    rest ^= data[5] * state[cells + alternator_fast.S_PASSES]
    best = 0
    for symmetry in range(count):
        base = 6 + symmetry * cells * values
        value = rest
        for cell in range(cells):
            content = state[cell]
            index = content + 3 if content > 0 else -1 - content
            value ^= data[base + cell * values + index]
        if symmetry == 0 or value < best:
            best = value
            image[0] = symmetry
    return best


# --- Alak -----------------------------------------------------------------------------------

A_COUNT, A_SIZE, A_SALTS = 0, 1, 2
_SALTS = 8
A_TRADITIONAL = A_SALTS + _SALTS
A_BALJEU = A_TRADITIONAL + 1


@njit(cache=True)
def _mix(value: int) -> int:
    """SplitMix64's finaliser in wrapping int64 arithmetic."""
    value ^= (value >> 30) & 0x3FFFFFFFF
    value *= -4658895280553007687
    value ^= (value >> 27) & 0x1FFFFFFFFF
    value *= -7723592293110705685
    value ^= (value >> 31) & 0x1FFFFFFFF
    return value


@njit(cache=True)
def _reverse(mask: int, size: int) -> int:
    """The points of ``mask`` in reverse order on a board of ``size`` points."""
    reversed_mask = 0
    while mask:
        low = mask & -mask
        point = 0
        while (low >> point) != 1:
            point += 1
        reversed_mask |= 1 << (size - 1 - point)
        mask ^= low
    return reversed_mask


@njit(cache=True)
def _alak_image_key(data: Array, state: Array, mirror: bool) -> int:
    size = data[A_SIZE]
    salts = A_SALTS
    black, white = state[alak_fast.S_BLACK], state[alak_fast.S_WHITE]
    # the just-captured points bind only under baljeu (as in the twin's key)
    captured = state[alak_fast.S_CAPTURED] if data[A_BALJEU] != 0 else 0
    ko_black, ko_white = 0, 0
    if state[alak_fast.S_KO_SET] and (
        state[alak_fast.S_KO_BLACK] != black or state[alak_fast.S_KO_WHITE] != white
    ):
        ko_black, ko_white = state[alak_fast.S_KO_BLACK], state[alak_fast.S_KO_WHITE]
    if mirror:
        black, white = _reverse(black, size), _reverse(white, size)
        captured = _reverse(captured, size)
        ko_black, ko_white = _reverse(ko_black, size), _reverse(ko_white, size)
    counters = state[alak_fast.S_SIDE] | min(state[alak_fast.S_PASSES], 2) << 2
    if data[A_TRADITIONAL] != 0:  # prisoners count only there (as in the twin's key)
        counters |= state[alak_fast.S_PRISONERS] << 4 | state[alak_fast.S_PRISONERS + 1] << 34
    value = _mix(black ^ data[salts])
    value = _mix(value ^ white ^ data[salts + 1])
    value = _mix(value ^ counters ^ data[salts + 2])
    value = _mix(value ^ captured ^ data[salts + 3])
    value = _mix(value ^ ko_black ^ data[salts + 4])
    value = _mix(value ^ ko_white ^ data[salts + 5])
    # the history: the boards (or positions) its key counts, told by where that key changed
    traditional = data[A_TRADITIONAL] != 0
    history = 0
    previous = 0
    length = state[alak_fast.S_HISTORY_LENGTH]
    for index in range(length + 1):
        base = alak_fast.HEADER + alak_fast.RECORD * index if index < length else 0
        running = state[base + alak_fast.S_HISTORY_KEY]
        if running != previous:
            board_black = state[base + alak_fast.S_BLACK]
            board_white = state[base + alak_fast.S_WHITE]
            if mirror:
                board_black, board_white = _reverse(board_black, size), _reverse(board_white, size)
            side = state[base + alak_fast.S_SIDE] if traditional else 0
            salt = data[salts + 6] ^ (side * data[salts + 7])
            history += _mix(board_black ^ _mix(board_white ^ salt))
        previous = running
    return value ^ _mix(history)


@njit(cache=True)
def alak_canonical(params: Array, data: Array, state: Array, image: Array) -> int:
    best = _alak_image_key(data, state, False)
    image[0] = 0
    if data[A_COUNT] > 1:
        mirrored = _alak_image_key(data, state, True)
        if mirrored < best:
            best = mirrored
            image[0] = 1
    return best


def alak_symmetries(game: Alak, enabled: bool = True) -> Symmetries:
    size = game.size
    count = 2 if enabled and size > 1 else 1
    traditional = int(game.rules is AlakRules.TRADITIONAL)
    baljeu = int(game.rules is AlakRules.BALJEU)
    header = [count, size]
    data = np.concatenate(
        [np.array(header, dtype=np.int64), _zobrist(_SALTS, SEED + size), [traditional, baljeu]]
    ).astype(np.int64)
    forward = [list(range(size + 1))]
    if count == 2:
        forward.append([*(size - 1 - p for p in range(size)), size])
    names = ("identity", "mirror")[:count]
    return Symmetries(names, data, _move_maps(forward), alak_canonical)


# --- by game --------------------------------------------------------------------------------


@functools.cache
def symmetries_for(game: Game, enabled: bool = True) -> Symmetries:
    """The symmetries the solver uses for ``game`` (only the identity when not ``enabled``)."""
    if isinstance(game, Alternator):
        return alternator_symmetries(game, enabled)
    if isinstance(game, Alak):
        return alak_symmetries(game, enabled)
    raise AgonError(f"the solver does not know {game.description}")
