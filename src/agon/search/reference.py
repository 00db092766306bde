"""A fast twin for a game that has none: the twin contract over the game's reference rules.

So a new game is searched and solved on its first day, by the very kernels that search the
games with twins: each kernel here is a Numba function that calls back into Python (object
mode) and asks the reference state, which the twin's array names by a number. Slower by far
than a real twin, and the same answers.

The state array holds one number, the handle of a reference state kept in :data:`_LIVE`
while the array lives. ``key`` hashes the state's ``key()`` (which covers whatever history
the rules read), so the solver keys every result by it and ``history_key`` is 0. A game with
no declared evaluation is evaluated by its margin as it stands.
"""

from __future__ import annotations

import hashlib
import itertools
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit, objmode

from agon.core.errors import AgonError
from agon.core.fast import NO_HISTORY, Array, FastTwin, kernels_in
from agon.core.game import Game, State
from agon.core.plugin import GamePlugin

MAX_ROOM = 1 << 12
"""The most plies a search from one position may go (a game's own bound, where lower)."""


@dataclass
class _Live:
    """A reference state a twin array stands for, and how its game is evaluated."""

    state: State
    plugin: GamePlugin[Any, Any]


_LIVE: dict[int, _Live] = {}
_handles = itertools.count(1)
_END_CODES: dict[str, int] = {}
"""End codes of the reference rules' end reasons, numbered as they are first met."""
END_REASONS: dict[int, str] = {}
"""What each end code means (every reference twin shares them)."""


def _live(state: Array) -> _Live:
    return _LIVE[int(state[0])]


def _array_for(state: State, plugin: GamePlugin[Any, Any]) -> Array:
    handle = next(_handles)
    array = np.array([handle], dtype=np.int64)
    _LIVE[handle] = _Live(state, plugin)
    weakref.finalize(array, _LIVE.pop, handle, None)
    return array


# --- the Python side of each kernel ------------------------------------------------------------


def _legal_moves(state: Array, out: Array) -> int:
    moves = _live(state).state.legal_moves()
    out[: len(moves)] = moves
    return len(moves)


def _play(state: Array, move: int) -> None:
    _live(state).state.play(int(move))


def _undo(state: Array) -> None:
    _live(state).state.undo()


def _to_move(state: Array) -> int:
    player = _live(state).state.to_move
    return -1 if player is None else int(player)


def _end_code(state: Array) -> int:
    reason = _live(state).state.end_reason
    if reason is None:
        return 0
    code = _END_CODES.setdefault(reason, len(_END_CODES) + 1)
    END_REASONS[code] = reason
    return code


def _margin(state: Array) -> float:
    return float(_live(state).state.margin)


def _key(state: Array) -> int:
    digest = hashlib.blake2b(repr(_live(state).state.key()).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def _evaluate(state: Array) -> float:
    live = _live(state)
    if live.plugin.evaluate is None:
        return float(live.state.margin)
    return float(live.plugin.evaluate(live.state))


def _move_order(state: Array, move: int) -> float:
    live = _live(state)
    if live.plugin.move_order is None:
        return 0.0
    return float(live.plugin.move_order(live.state, int(move)))


# --- the kernels (the contract of agon.core.fast) ----------------------------------------------
# Each kernel calls a function that holds the object-mode block: a C callback
# (agon.search.twins) cannot hold one itself (Numba refuses to compile it), but may call one.
# Numba caches no function that holds an object-mode block (a cached one fails when loaded),
# so these compile in each process that uses them, a second or two.


@njit(cache=False)
def _ask_legal_moves(state: Array, out: Array) -> int:
    with objmode(count="int64"):
        count = _legal_moves(state, out)
    return count


@njit(cache=False)
def _ask_play(state: Array, move: int) -> None:
    with objmode():
        _play(state, move)


@njit(cache=False)
def _ask_undo(state: Array) -> None:
    with objmode():
        _undo(state)


@njit(cache=False)
def _ask_to_move(state: Array) -> int:
    with objmode(player="int64"):
        player = _to_move(state)
    return player


@njit(cache=False)
def _ask_end_code(state: Array) -> int:
    with objmode(code="int64"):
        code = _end_code(state)
    return code


@njit(cache=False)
def _ask_margin(state: Array) -> float:
    with objmode(value="float64"):
        value = _margin(state)
    return value


@njit(cache=False)
def _ask_key(state: Array) -> int:
    with objmode(value="int64"):
        value = _key(state)
    return value


@njit(cache=False)
def _ask_evaluate(state: Array) -> float:
    with objmode(value="float64"):
        value = _evaluate(state)
    return value


@njit(cache=False)
def _ask_move_order(state: Array, move: int) -> float:
    with objmode(value="float64"):
        value = _move_order(state, move)
    return value


@njit
def legal_moves(params: Array, state: Array, out: Array) -> int:
    return _ask_legal_moves(state, out)


@njit
def play(params: Array, state: Array, move: int) -> None:
    _ask_play(state, move)


@njit
def undo(params: Array, state: Array) -> None:
    _ask_undo(state)


@njit
def to_move(params: Array, state: Array) -> int:
    return _ask_to_move(state)


@njit
def end_code(params: Array, state: Array) -> int:
    return _ask_end_code(state)


@njit
def margin(params: Array, state: Array) -> float:
    return _ask_margin(state)


@njit
def key(params: Array, state: Array) -> int:
    return _ask_key(state)


@njit
def evaluate(params: Array, state: Array) -> float:
    return _ask_evaluate(state)


@njit
def move_order(params: Array, state: Array, move: int) -> float:
    return _ask_move_order(state, move)


def reference_twin(game: Game, plugin: GamePlugin[Any, Any]) -> FastTwin:
    """The twin of a variant whose game has no fast twin of its own."""
    # two plies more than the longest game, as the fast twins give: the solver's deepest
    # search goes room − 1 plies, and must reach the end of every game
    room = min(plugin.max_game_length(game) + 2, MAX_ROOM)

    def from_reference(reference: State) -> Array:
        if reference.game != game:
            raise AgonError(f"not a state of {game.description}: {reference!r}")
        return _array_for(reference.copy(), plugin)

    def position(array: Array) -> str:
        return _live(array).state.position()

    def plies_left(array: Array) -> int:
        return room

    return FastTwin(
        game=game,
        params=np.zeros(1, dtype=np.int64),
        num_actions=game.num_actions,
        end_reasons=END_REASONS,
        new_state=lambda: _array_for(game.new_state(), plugin),
        from_reference=from_reference,
        position=position,
        room=plies_left,
        kernels=kernels_in(globals(), NO_HISTORY),
        cached=False,
    )

