"""The contract of a game's *fast twin*: the same rules as flat NumPy arrays and Numba kernels.

The reference rules (readable Python) define the games; a fast twin exists only so that search
and solvers run fast, and is tested against the reference move by move. Search code
(``agon.search``, ``agon.solve``) is written once against this contract: it receives the
kernels as first-class Numba functions, so one compiled search serves every game.

Every kernel takes ``params`` (int64[:], the variant, read only) and ``state`` (int64[:], one
game, mutated in place; it carries its own undo stack, so ``play`` then ``undo`` restores it
exactly). Moves are the same action numbers as in :mod:`agon.core.game`.

The kernels are declared once, in :data:`KERNELS` (name and signature); a twin module
defines a function of each name, and :func:`kernels_in` gathers them for :class:`FastTwin`.
The search kernels take them as compiled C callbacks of these signatures
(:mod:`agon.search.twins`). Kernels (all ``@njit(cache=True)``):

``legal_moves(params, state, out) -> int``
    Write the legal moves into ``out`` (length ``num_actions``), sorted, pass included where
    legal; return how many. Zero when the game is over.
``play(params, state, move) -> None``
    Play a move that ``legal_moves`` returned.
``undo(params, state) -> None``
    Take back the last move played with ``play``.
``to_move(params, state) -> int``
    0 Black, 1 White, -1 when the game is over.
``end_code(params, state) -> int``
    0 while the game goes on, else a game-specific reason code (``end_reasons`` names them).
``margin(params, state) -> float``
    Black's points minus White's, komi included, as the reference's ``State.margin``.
``key(params, state) -> int``
    A 64-bit hash of everything that decides the game from here (see the game's docs for
    what history it covers); equal keys are treated as equal positions by transposition tables.
``history_key(params, state) -> int``
    A 64-bit hash of the part of the game's history that the rules still depend on and ``key``
    leaves out (the boards a rule against repetition forbids, the counts of a third-repetition
    rule; 0 where the rules never look back). A search may reuse a stored
    result for a position only when both keys match.
``history_length(params, state) -> int``
    How many earlier positions the state's history holds (loaded ones included): the present
    position is number ``history_length``, the oldest number 0 (0 where the rules never look
    back).
``history_board(params, state, index) -> int``
    The stones of position ``index`` (``index == history_length``: the present one) packed into
    one int64, Black's in the low 32 bits and White's in the high 32 (boards of at most 32
    points; 0 for games whose rules never look back). Solvers use it to tell which earlier
    boards a stored result could depend on (docs/solver.md).
``history_reference(params, state) -> int``
    The earliest history position whose *presence* changed what the rules allow now: for each
    placement refused because its board was seen before, the latest position with that board;
    for a game ended by a third repetition, the first of the occurrences. Of these the least;
    :data:`NO_REFERENCE` when the present moves and end do not depend on the history.
``evaluate(params, state) -> float``
    A heuristic estimate of the final margin (Black minus White) for ongoing positions.
``move_order(params, state, move) -> float``
    A cheap priority for move ordering: higher is tried first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from agon.core.compiled import cache_kernels, rebuild_damaged_caches
from agon.core.evaluation import Terms
from agon.core.game import Game, State

# every kernel module imports this one, before it defines a kernel: from here on kernels are
# cached in the folder of these sources (Agon's and the installed plugins'), and a damaged
# cache is rebuilt, not fatal
cache_kernels()
rebuild_damaged_caches()

Array = npt.NDArray[np.int64]

NO_REFERENCE = 1 << 40
"""What ``history_reference`` returns when the history decides nothing now."""


@njit(cache=True)
def popcount(mask: int) -> int:
    """How many bits of ``mask`` are set (stones on a bitmask board)."""
    count = 0
    while mask:
        mask &= mask - 1
        count += 1
    return count


def zobrist_keys(seed: int, count: int) -> Array:
    """``count`` 64-bit keys for Zobrist hashing, from splitmix64 seeded with ``seed``: the
    same on every machine and NumPy version (a twin's keys must not change under its stored
    results)."""
    golden, mix1, mix2 = (
        np.uint64(c) for c in (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB)
    )
    z = np.uint64(seed) + golden * np.arange(1, count + 1, dtype=np.uint64)
    z = (z ^ (z >> np.uint64(30))) * mix1
    z = (z ^ (z >> np.uint64(27))) * mix2
    return (z ^ (z >> np.uint64(31))).view(np.int64)


@dataclass(frozen=True)
class Kernel:
    """One kernel of the contract."""

    name: str
    signature: str
    """Its Numba signature: the type of the C callback the search kernels receive."""


_STATE = "int64[::1], int64[::1]"  # (params, state)
KERNELS: tuple[Kernel, ...] = (
    Kernel("legal_moves", f"int64({_STATE}, int64[::1])"),
    Kernel("play", f"void({_STATE}, int64)"),
    Kernel("undo", f"void({_STATE})"),
    Kernel("to_move", f"int64({_STATE})"),
    Kernel("end_code", f"int64({_STATE})"),
    Kernel("margin", f"float64({_STATE})"),
    Kernel("key", f"int64({_STATE})"),
    Kernel("history_key", f"int64({_STATE})"),
    Kernel("evaluate", f"float64({_STATE})"),
    Kernel("move_order", f"float64({_STATE}, int64)"),
    Kernel("history_length", f"int64({_STATE})"),
    Kernel("history_board", f"int64({_STATE}, int64)"),
    Kernel("history_reference", f"int64({_STATE})"),
)
"""Every kernel of a fast twin, the one list the rest is derived from."""
KERNEL_NAMES = frozenset(kernel.name for kernel in KERNELS)


def kernels_in(*sources: ModuleType | Mapping[str, Any]) -> dict[str, Any]:
    """The contract's kernels by name, each from the first of ``sources`` (a twin module, or
    its ``globals()``; then, say, :data:`NO_HISTORY`) that has one of that name; a
    :class:`TypeError` names those none has or that are not Numba functions."""
    found: dict[str, Any] = {}
    for source in reversed(sources):
        found.update(vars(source) if isinstance(source, ModuleType) else source)
    kernels = {name: found.get(name) for name in sorted(KERNEL_NAMES)}
    wrong = [name for name, kernel in kernels.items() if not hasattr(kernel, "py_func")]
    if wrong:
        raise TypeError(f"a fast twin has no @njit function {', '.join(wrong)}")
    return kernels


# --- the history kernels of rules that never look back (no position can repeat) -----------


@njit(cache=True)
def _no_history_key(params: Array, state: Array) -> int:
    return 0


@njit(cache=True)
def _no_history_length(params: Array, state: Array) -> int:
    return 0


@njit(cache=True)
def _no_history_board(params: Array, state: Array, index: int) -> int:
    return 0


@njit(cache=True)
def _no_history_reference(params: Array, state: Array) -> int:
    return NO_REFERENCE


NO_HISTORY = {
    "history_key": _no_history_key,
    "history_length": _no_history_length,
    "history_board": _no_history_board,
    "history_reference": _no_history_reference,
}
"""The history kernels of a game whose rules never look back:
``kernels_in(globals(), NO_HISTORY)``."""


@dataclass(frozen=True, eq=False)
class FastTwin:
    """A game variant's fast twin: its parameters, its kernels and converters."""

    game: Game
    params: Array
    num_actions: int
    end_reasons: dict[int, str]
    new_state: Callable[[], Array]
    """A fresh state array for the starting position."""
    from_reference: Callable[[State], Array]
    """The state array of a reference state (its loaded history included)."""
    position: Callable[[Array], str]
    """The reference position text of a state array."""
    room: Callable[[Array], int]
    """How many more plies the state array can take (a search from it goes no deeper)."""
    kernels: Mapping[str, Any] = field(repr=False)
    """The Numba function of each of :data:`KERNELS`, by name (:func:`kernels_in`); each is
    also an attribute of the twin: ``twin.play(twin.params, state, move)``."""
    repeats_count: bool = False
    """Whether a position's *number* of earlier occurrences matters (a third repetition ends
    the game), not only whether its board was seen."""
    board_points: int = 0
    """How many points the boards ``history_board`` packs have (0 where the rules never look
    back): a solver can keep a result apart from its history only where they fit (1 to 32)."""
    terms: Terms | None = None
    """The terms of its ``evaluate`` where that is a weighted sum whose weights live in
    ``params`` (:mod:`agon.core.evaluation`): what ``agon train`` fits; None where it is not."""
    cached: bool = True
    """Whether the kernels may be compiled into Numba's on-disk cache (not those that call
    back into Python: a cached one fails when it is loaded)."""

    def __post_init__(self) -> None:
        missing = KERNEL_NAMES - set(self.kernels)
        if missing:
            raise TypeError(f"a fast twin lacks the kernels {', '.join(sorted(missing))}")

    def __getattr__(self, name: str) -> Any:
        """A kernel by its name (only names that are not fields reach here)."""
        if name in KERNEL_NAMES and "kernels" in self.__dict__:
            return self.__dict__["kernels"][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def legal_list(self, state: Array) -> list[int]:
        """Legal moves as a Python list (convenience for tests and interfaces)."""
        out = np.empty(self.num_actions, dtype=np.int64)
        count = self.kernels["legal_moves"](self.params, state, out)  # (not via __getattr__: slow)
        return out[:count].tolist()  # type: ignore[no-any-return]
