"""Alternator's board symmetries that preserve values, and its canonical-key kernel.

A symmetry of the board must keep every cell's colour, since colour decides who owns a tree.
Of the eight symmetries of a square (the four of a rectangle when W != H), a mirror
``file -> W-1-file`` keeps colours iff W is odd, ``rank -> H-1-rank`` iff H is odd, the half-turn
iff W+H is even, the diagonal mirrors (square boards) always and the anti-diagonal iff W+H is
even, the quarter-turns (square boards) iff W is odd. They are found here by checking every
cell rather than by these rules. Pits turn with the board: a stem's direction is mapped by the
symmetry's linear part. The transpose ``(file, rank) -> (rank, file)`` keeps colours and a1, so
a W×H board and an H×W board have the same value.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from agon.core.fast import Array
from agon.core.symmetry import Symmetries, move_maps, random_keys
from agon.games.alternator import fast
from agon.games.alternator.rules import DIRECTION_STEPS, Alternator

SEED = 0x5017_E5_AB

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


def symmetries(game: Alternator) -> Symmetries:
    """The symmetries of the board that keep every cell's colour."""
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
    values = cells + 4  # a pit's direction 0..3, a root's size 1..N as 3 + size
    keys = random_keys(cells * values + 3, SEED + cells)
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
        move_maps=move_maps(forward),
        canonical=canonical,
    )


@njit(cache=True)
def canonical(params: Array, data: Array, state: Array, image: Array) -> int:
    count, cells, values = data[0], data[1], data[2]
    rest = data[3 + state[cells + fast.S_SIDE]]
    rest ^= data[5] * state[cells + fast.S_PASSES]
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
