"""Board symmetries that preserve values, as the exact solver takes them.

A symmetry maps a position to one with the same value (for the same player to move), so the
solver stores one entry for all the images of a position: its table key is the least hash over
the images, and ``image[0]`` says which symmetry reaches that least image. A game declares its
symmetries (``Solving.symmetries``); each game's canonical-key kernel hashes every image the
same way, with hashes of its own that need only be equal for equal images.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from agon.core.fast import Array


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
    """``canonical(params, data, state, image) -> key``: least hash over the images (a Numba
    kernel; called only where there is more than the identity)."""

    @property
    def count(self) -> int:
        return len(self.names)


def random_keys(count: int, seed: int) -> Array:
    """``count`` random 64-bit keys from a seeded generator (a symmetry kernel's hashes)."""
    rng = np.random.default_rng(seed)
    return rng.integers(-(2**63), 2**63 - 1, size=count, dtype=np.int64)


def move_maps(forward: list[list[int]]) -> Array:
    """The move maps of :attr:`Symmetries.move_maps` from each symmetry's images of the moves."""
    actions = len(forward[0])
    maps = np.zeros((2 * len(forward), actions), dtype=np.int64)
    for index, images in enumerate(forward):
        maps[index] = images
        for move, image in enumerate(images):
            maps[len(forward) + index, image] = move
    return maps


@njit(cache=True)
def no_images(params: Array, data: Array, state: Array, image: Array) -> int:
    """The canonical key of a game with the identity only: never called (the solver keys such
    a game's positions by the twin's keys), but a kernel of the right type must be passed."""
    image[0] = 0
    return 0


def identity(num_actions: int) -> Symmetries:
    """Only the identity: each position is its own image."""
    return Symmetries(
        ("identity",), np.zeros(1, dtype=np.int64), move_maps([list(range(num_actions))]),
        no_images,
    )
