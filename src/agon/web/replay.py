"""A stored game with its position rebuilt by replaying its moves through the rules engine."""

from __future__ import annotations

from dataclasses import dataclass, replace

from agon.core.game import Game, State
from agon.core.player import Player
from agon.games import make_game
from agon.web.store import StoredGame


@dataclass
class Loaded:
    """A stored game with its position rebuilt by the rules engine."""

    stored: StoredGame
    game: Game
    state: State
    movers: list[Player]
    """Who played each stored move."""

    @property
    def active(self) -> bool:
        return self.stored.status == "active"

    @property
    def to_move(self) -> str | None:
        player = self.state.to_move
        return player.label if player is not None and self.active else None

    @property
    def computer_to_move(self) -> bool:
        return self.active and computer_seat_to_move(self.stored, self.state)

    def copy(self) -> Loaded:
        """An independent copy: its state and lists can change without changing this one."""
        stored = replace(self.stored, moves=list(self.stored.moves))
        return Loaded(stored, self.game, self.state.copy(), list(self.movers))

    def with_move_stored(self, stored: StoredGame) -> Loaded:
        """The game once the one move played on :attr:`state` since it was loaded is stored
        as ``stored``, without replaying it (an independent copy)."""
        before = self.state.copy()
        before.undo()
        mover = before.to_move
        assert mover is not None, "a move stored after the end of the game"
        return Loaded(stored, self.game, self.state.copy(), [*self.movers, mover])


def computer_seat_to_move(stored: StoredGame, state: State) -> bool:
    """The player to move in ``state`` (a position of the stored game) is the computer."""
    player = state.to_move
    return player is not None and stored.agents[player.label] is not None


def replay(stored: StoredGame) -> Loaded:
    """The stored game with its position rebuilt from its moves."""
    game = make_game(stored.game, stored.options)
    state = game.new_state()
    movers: list[Player] = []
    for text in stored.moves:
        mover = state.to_move
        assert mover is not None, "a stored move after the end of the game"
        state.play_text(text)
        movers.append(mover)
    return Loaded(stored, game, state, movers)
