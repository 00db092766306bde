"""Kayles, written to be read: a second example game, for the tests, with the unusual variants
every tool must cope with.

A row of ``pins`` pins, numbered 1, 2, … from the left. A move knocks down one standing pin, or
two standing neighbours; whoever knocks down the last pin wins (normal play). There is no pass,
and the result is a win or a loss, never points. Move numbers: ``i`` knocks down pin ``i + 1``
alone, ``pins + i`` pins ``i + 1`` and ``i + 2`` together.

Its unusual variants:

- ``pins=0``: the option allows it, but the game is over before its first move, and
  :meth:`agon.core.plugin.GamePlugin.make` refuses it (``Kayles.from_options`` alone builds it).
- ``leftmost=true``: only the leftmost standing pin may be knocked down, alone: exactly one
  legal move at every turn, so the game is decided by the parity of ``pins``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agon.core.errors import AgonError, NotationError, PositionError, quoted
from agon.core.game import Game, Move, Score, State
from agon.core.options import Option, read_options
from agon.core.player import Player

MAX_PINS = 16
STANDING, DOWN = "|", "."
SIDES = ("b", "w")  # indexed by Player

_MOVE_RE = re.compile(r"\s*(\d{1,2})(?:\s*-\s*(\d{1,2}))?\s*")


@dataclass(frozen=True)
class Kayles(Game):
    """The variant: the row's length, and whether only the leftmost pin may fall."""

    pins: int = 7
    leftmost: bool = False

    name = "kayles"
    title = "Kayles"
    option_specs = (
        Option("pins", "whole", 7, "Pins in the row (0: over before it starts, refused).",
               minimum=0, maximum=MAX_PINS),
        Option("leftmost", "bool", False,
               "Only the leftmost standing pin may be knocked down: one move at every turn.",
               label="Leftmost pin only"),
    )

    def __post_init__(self) -> None:
        if not 0 <= self.pins <= MAX_PINS:
            raise AgonError(f"the pins must be 0 to {MAX_PINS}, not {self.pins}")

    @property
    def variant_id(self) -> str:
        return f"kayles-{self.pins}" + ("-leftmost" if self.leftmost else "")

    @property
    def description(self) -> str:
        return f"Kayles, {self.pins} pins" + (", leftmost only" if self.leftmost else "")

    @property
    def komi(self) -> float:
        return 0.0

    def options(self) -> dict[str, Any]:
        return {"pins": self.pins, "leftmost": self.leftmost}

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Kayles:
        values = read_options(cls.option_specs, options, cls.title)
        return cls(values["pins"], values["leftmost"])

    @property
    def num_actions(self) -> int:
        return max(0, 2 * self.pins - 1)

    @property
    def pass_move(self) -> Move | None:
        return None

    def new_state(self) -> KaylesState:
        return KaylesState(self, STANDING * self.pins, Player.BLACK)

    # --- pins and moves ---------------------------------------------------------------------

    def move_places(self, move: Move) -> tuple[int, ...]:
        if 0 <= move < self.pins:
            return (move,)
        if self.pins <= move < self.num_actions:
            return (move - self.pins, move - self.pins + 1)
        return ()

    def place_name(self, place: int) -> str:
        return str(place + 1)

    def parse_move(self, text: str) -> Move:
        match = _MOVE_RE.fullmatch(text)
        if text.strip().lower() == "pass":
            raise NotationError("there is no pass in Kayles: knock down a pin")
        if not match:
            raise NotationError(f"{quoted(text)} is not a move: write a pin like '3' or two "
                                "neighbours like '3-4'")
        first = int(match.group(1))
        if not 1 <= first <= self.pins:
            raise NotationError(f"there is no pin {first}: the pins are 1 to {self.pins}")
        if match.group(2) is None:
            return first - 1
        if int(match.group(2)) != first + 1 or first == self.pins:
            raise NotationError(f"{quoted(text)}: two pins knocked down together are neighbours")
        return self.pins + first - 1

    def format_move(self, move: Move) -> str:
        places = self.move_places(move)
        if not places:
            raise NotationError(f"move number {move} is out of range")
        return "-".join(self.place_name(place) for place in places)

    def parse_position(self, text: str) -> KaylesState:
        tokens = text.split()
        if len(tokens) != 2:
            raise PositionError("a Kayles position is the row ('|' standing, '.' down) and the "
                                "side to move: '||.|| b'")
        row, side = tokens
        if len(row) != self.pins or set(row) - {STANDING, DOWN}:
            raise PositionError(f"the row must be {self.pins} of '|' and '.', not {quoted(row)}")
        if side not in SIDES:
            raise PositionError(f"the side to move must be 'b' or 'w', not {quoted(side)}")
        return KaylesState(self, row, Player(SIDES.index(side)))


class KaylesState(State):
    """A row of pins and the side to move."""

    game: Kayles

    def __init__(self, game: Kayles, row: str, player: Player) -> None:
        super().__init__(game)
        self.row = row
        self.player = player

    @property
    def to_move(self) -> Player | None:
        return None if self.is_over else self.player

    @property
    def end_reason(self) -> str | None:
        if STANDING in self.row:
            return None
        if not self.row:
            return "there are no pins"
        return f"{self.player.other.name.capitalize()} knocked down the last pin"

    def legal_moves(self) -> list[Move]:
        return [move for move in range(self.game.num_actions) if self.illegal_reason(move) is None]

    def illegal_reason(self, move: Move) -> str | None:
        if self.is_over:
            return "the game is over"
        places = self.game.move_places(move)
        if not places:
            return "there is no such move"
        if any(self.row[place] != STANDING for place in places):
            return "only standing pins can be knocked down"
        if self.game.leftmost and places != (self.row.index(STANDING),):
            return "only the leftmost standing pin may be knocked down, alone"
        return None

    def score(self) -> Score:
        """The winner 1 point, the loser 0 (who cannot move has lost); 0–0 while it goes on."""
        if not self.is_over:
            return Score(0.0, 0.0)
        return Score(0.0, 1.0) if self.player is Player.BLACK else Score(1.0, 0.0)

    def _apply(self, move: Move) -> None:
        row = list(self.row)
        for place in self.game.move_places(move):
            row[place] = DOWN
        self.row = "".join(row)
        self.player = self.player.other

    def _revert(self) -> None:
        row = list(self.row)
        for place in self.game.move_places(self.history[-1]):
            row[place] = STANDING
        self.row = "".join(row)
        self.player = self.player.other

    def copy(self) -> KaylesState:
        twin = KaylesState(self.game, self.row, self.player)
        twin.history = list(self.history)
        return twin

    def key(self) -> tuple[str, Player]:
        return self.row, self.player

    def position(self) -> str:
        """The row, then the side to move: ``||.|| b``."""
        return f"{self.row} {SIDES[self.player]}"
