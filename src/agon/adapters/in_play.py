"""A game being played through an adapter, on the game's fast twin where it has one.

Both adapters ask the rules the same few questions, move after move: who is to move, which moves
are legal, play this one, the margin. :func:`in_play` answers them on the game's fast twin (the
reference rules' answers, tested move by move, at the twin's speed; docs/adapters.md gives the
figures) and, for a game without one, on the reference rules. The reference state itself is
built from the moves only where something asks for it (the observation planes, an illegal
move's reason), and then brought up to date only when asked again.

OpenSpiel clones a Python state by making a new initial state and deep-copying each of its
attributes into it, and pickles them: :meth:`GameInPlay.__deepcopy__` copies only what differs
between two games of a variant, and ``__reduce__`` pickles the start and the moves. A game from
the variant's start shares the start's state array until its first move (a twin's array may
hold room for thousands of plies, megabytes, which the new initial state of each clone copied
for nothing: docs/adapters.md).
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from typing import Any

from agon.adapters import result_of
from agon.core.errors import IllegalMove
from agon.core.fast import Array, FastTwin
from agon.core.game import Game, State
from agon.games import plugin_of


class GameInPlay(ABC):
    """One game of a variant, from its start: its moves, and the rules' answers now."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self._legal: list[int] | None = None
        """The legal moves now, once asked for (a move replaces the list, never changes it)."""

    @property
    @abstractmethod
    def to_move(self) -> int:
        """The player to move: 0 Black, 1 White, -1 once the game is over."""

    @abstractmethod
    def _find_legal_moves(self) -> list[int]: ...

    def legal_moves(self) -> list[int]:
        """The legal moves, sorted (found once a position: do not change the list)."""
        if self._legal is None:
            self._legal = self._find_legal_moves()
        return self._legal

    @abstractmethod
    def play(self, move: int) -> None:
        """Play a move; an illegal one raises :class:`IllegalMove` naming the rule it breaks,
        and changes nothing."""

    @property
    @abstractmethod
    def margin(self) -> float:
        """Black's points minus White's, komi included (final once the game is over)."""

    @property
    def outcome(self) -> float:
        """Black's result: +1 win, −1 loss, 0 draw or game not over (White's is the opposite)."""
        return result_of(self.margin) if self.to_move < 0 else 0.0

    @abstractmethod
    def position(self) -> str:
        """The Agon position text."""

    @abstractmethod
    def reference(self) -> State:
        """The Agon reference state of the moves played."""


class ReferenceGameInPlay(GameInPlay):
    """A game played on the reference rules."""

    def __init__(self, state: State) -> None:
        super().__init__(state.game)
        self._state = state

    @property
    def to_move(self) -> int:
        player = self._state.to_move
        return -1 if player is None else int(player)

    def _find_legal_moves(self) -> list[int]:
        return self._state.legal_moves()

    def play(self, move: int) -> None:
        self._state.play(move)
        self._legal = None

    @property
    def margin(self) -> float:
        return self._state.margin

    def position(self) -> str:
        return self._state.position()

    def reference(self) -> State:
        return self._state

    def __deepcopy__(self, memo: dict[int, Any]) -> ReferenceGameInPlay:
        return ReferenceGameInPlay(self._state.copy())


class _Variant:
    """What every game of one variant on its twin reads and none changes."""

    def __init__(self, twin: FastTwin, start: State) -> None:
        self.twin = twin
        self.params = twin.params
        # (the kernels a move calls, looked up once)
        self.play = twin.play
        self.to_move, self.margin = twin.to_move, twin.margin
        self.start = start
        """The variant's starting position (never played on)."""
        self.start_array = twin.from_reference(start)
        # every kernel a game calls, loaded (or compiled) now rather than on a move's clock
        probe = self.start_array.copy()
        self.margin(self.params, probe)
        for move in twin.legal_list(probe)[:1]:
            self.play(self.params, probe, move)
            self.to_move(self.params, probe)


@functools.cache
def _variant(game: Game) -> _Variant | None:
    twin = plugin_of(game).build_fast_twin(game)
    return None if twin is None else _Variant(twin, game.new_state())


class TwinGameInPlay(GameInPlay):
    """A game played on the game's fast twin: its state array, and the moves played on it."""

    def __init__(self, variant: _Variant, start: State) -> None:
        super().__init__(start.game)
        self._variant, self._start = variant, start
        """Where the game began (never played on: :meth:`reference` plays on a copy)."""
        self._array: Array = (
            variant.start_array if start is variant.start else variant.twin.from_reference(start)
        )
        """The twin's state array, once it is this game's own (:attr:`_shared` until then)."""
        self._moves: list[int] = []
        self._to_move = int(variant.to_move(variant.params, self._array))
        self._reference: State | None = None
        self._reference_plies = 0
        """How many of the moves ``_reference`` has played."""

    @property
    def to_move(self) -> int:
        return self._to_move

    def _find_legal_moves(self) -> list[int]:
        return self._variant.twin.legal_list(self._array)

    def play(self, move: int) -> None:
        if move not in self.legal_moves():
            reason = self.reference().illegal_reason(move)
            raise IllegalMove(reason or f"move {move} is not legal here")
        variant = self._variant
        if variant.twin.room(self._array) < 1:  # (a long game: an array with more room)
            self._array = variant.twin.from_reference(self.reference())
        elif self._shared:
            self._array = self._array.copy()
        variant.play(variant.params, self._array, move)
        self._moves.append(move)
        self._to_move = int(variant.to_move(variant.params, self._array))
        self._legal = None

    @property
    def _shared(self) -> bool:
        """Whether the array is still the variant's start's (read, never played on)."""
        return self._array is self._variant.start_array

    @property
    def margin(self) -> float:
        return float(self._variant.margin(self._variant.params, self._array))

    def position(self) -> str:
        return self._variant.twin.position(self._array)

    def reference(self) -> State:
        if self._reference is None:
            self._reference, self._reference_plies = self._start.copy(), 0
        for move in self._moves[self._reference_plies :]:
            self._reference.play(move)
        self._reference_plies = len(self._moves)
        return self._reference

    def __deepcopy__(self, memo: dict[int, Any]) -> TwinGameInPlay:
        copy = TwinGameInPlay.__new__(TwinGameInPlay)
        copy.__dict__.update(self.__dict__)
        copy._array = self._array if self._shared else self._array.copy()
        copy._moves = list(self._moves)
        if self._reference is not None:
            copy._reference = self._reference.copy()
        return copy

    def __reduce__(self) -> tuple[Any, ...]:
        return _replayed, (self._start, self._moves)


def _replayed(start: State, moves: list[int]) -> GameInPlay:
    """The game of these moves from ``start`` (a pickled game loaded)."""
    game = in_play(start.game, start)
    for move in moves:
        game.play(move)
    return game


def in_play(game: Game, start: State | None = None) -> GameInPlay:
    """A game of this variant from ``start`` (never played on; by default the variant's
    start), on its game's fast twin where it has one."""
    variant = _variant(game)
    if variant is None:
        return ReferenceGameInPlay(game.new_state() if start is None else start.copy())
    return TwinGameInPlay(variant, variant.start if start is None else start)


__all__ = ["GameInPlay", "ReferenceGameInPlay", "TwinGameInPlay", "in_play"]
