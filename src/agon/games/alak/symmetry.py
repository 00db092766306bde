"""Alak's symmetry that preserves values, and its canonical-key kernel.

Reversing the points preserves all three rule sets; the image reverses the board, the
just-captured points, the ko board and every board of the history.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agon.core.fast import Array
from agon.core.symmetry import Symmetries, move_maps, random_keys
from agon.games.alak import fast
from agon.games.alak.fast import mix
from agon.games.alak.rules import Alak, Repetition, Scoring

SEED = 0x5017_E5_AB
A_COUNT, A_SIZE, A_SALTS = 0, 1, 2
_SALTS = 8
A_POSITIONS = A_SALTS + _SALTS
"""1 where the history counts positions (board and side, under ko), not boards."""
A_PRISONERS = A_POSITIONS + 1
"""1 where prisoners count."""
A_CAPTURE_BAN = A_PRISONERS + 1
"""1 where the points just captured bind."""


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
def _image_key(data: Array, state: Array, mirror: bool) -> int:
    size = data[A_SIZE]
    salts = A_SALTS
    black, white = state[fast.S_BLACK], state[fast.S_WHITE]
    # the just-captured points bind only where they are banned (as in the twin's key)
    captured = state[fast.S_CAPTURED] if data[A_CAPTURE_BAN] != 0 else 0
    ko_black, ko_white = 0, 0
    if state[fast.S_KO_SET] and (
        state[fast.S_KO_BLACK] != black or state[fast.S_KO_WHITE] != white
    ):
        ko_black, ko_white = state[fast.S_KO_BLACK], state[fast.S_KO_WHITE]
    if mirror:
        black, white = _reverse(black, size), _reverse(white, size)
        captured = _reverse(captured, size)
        ko_black, ko_white = _reverse(ko_black, size), _reverse(ko_white, size)
    counters = state[fast.S_SIDE] | min(state[fast.S_PASSES], 2) << 2
    if data[A_PRISONERS] != 0:  # (as in the twin's key)
        counters |= state[fast.S_PRISONERS] << 4 | state[fast.S_PRISONERS + 1] << 34
    value = mix(black ^ data[salts])
    value = mix(value ^ white ^ data[salts + 1])
    value = mix(value ^ counters ^ data[salts + 2])
    value = mix(value ^ captured ^ data[salts + 3])
    value = mix(value ^ ko_black ^ data[salts + 4])
    value = mix(value ^ ko_white ^ data[salts + 5])
    # the history: the boards (or positions) its key counts, told by where that key changed
    positions = data[A_POSITIONS] != 0
    history = 0
    previous = 0
    length = state[fast.S_HISTORY_LENGTH]
    for index in range(length + 1):
        base = fast.HEADER + fast.RECORD * index if index < length else 0
        running = state[base + fast.S_HISTORY_KEY]
        if running != previous:
            board_black = state[base + fast.S_BLACK]
            board_white = state[base + fast.S_WHITE]
            if mirror:
                board_black, board_white = _reverse(board_black, size), _reverse(board_white, size)
            side = state[base + fast.S_SIDE] if positions else 0
            salt = data[salts + 6] ^ (side * data[salts + 7])
            history += mix(board_black ^ mix(board_white ^ salt))
        previous = running
    return value ^ mix(history)


@njit(cache=True)
def canonical(params: Array, data: Array, state: Array, image: Array) -> int:
    best = _image_key(data, state, False)
    image[0] = 0
    if data[A_COUNT] > 1:
        mirrored = _image_key(data, state, True)
        if mirrored < best:
            best = mirrored
            image[0] = 1
    return best


def symmetries(game: Alak) -> Symmetries:
    """The identity and, from two points on, the mirror."""
    size = game.size
    count = 2 if size > 1 else 1
    rules = game.rule_set
    flags = [
        int(rules.repetition is Repetition.KO),
        int(rules.scoring is Scoring.AREA_AND_PRISONERS),
        int(rules.capture_ban),
    ]
    header = [count, size]
    data = np.concatenate(
        [np.array(header, dtype=np.int64), random_keys(_SALTS, SEED + size), flags]
    ).astype(np.int64)
    forward = [list(range(size + 1))]
    if count == 2:
        forward.append([*(size - 1 - p for p in range(size)), size])
    names = ("identity", "mirror")[:count]
    return Symmetries(names, data, move_maps(forward), canonical)
