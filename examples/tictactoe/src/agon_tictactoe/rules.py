"""Tic-tac-toe as an m,n,k-game, written to be read: the rules Agon plays, searches and solves.

The board has ``width`` files (a, b, … from the left) and ``height`` ranks (1, 2, … from the
bottom). Cells are numbered ``rank * width + file`` from a1 = 0, and every move number is the
cell where the mover places a stone. The board is a string of ``x`` (Black), ``o`` (White) and
``.`` (empty), one character per cell in that order. Black moves first; the first player with
``line`` stones in a row (a rank, a file or a diagonal) wins; a full board without one is a draw.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agon.core.errors import AgonError, NotationError, PositionError, quoted
from agon.core.game import Game, Move, Score, State
from agon.core.options import Option, read_options
from agon.core.player import Player

MAX_SIDE = 5
EMPTY = "."
STONES = ("x", "o")  # indexed by Player
DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))
"""(file, rank) steps of a line: along a rank, up a file, and the two diagonals."""

REASON_FULL = "the board is full"

_CELL_RE = re.compile(r"\s*([a-z])(\d{1,2})\s*")


@dataclass(frozen=True)
class TicTacToe(Game):
    """The variant: the board's size and the length of a winning line."""

    width: int = 3
    height: int = 3
    line: int = 3

    name = "tictactoe"
    title = "Tic-tac-toe"
    option_specs = (
        Option("width", "whole", 3, "Files a, b, … from the left.", label="Files",
               minimum=1, maximum=MAX_SIDE),
        Option("height", "whole", 3, "Ranks 1, 2, … from the bottom.", label="Ranks",
               minimum=1, maximum=MAX_SIDE),
        Option("line", "whole", 3, "Stones in a row that win.", label="Line to win",
               minimum=1, maximum=MAX_SIDE),
    )

    def __post_init__(self) -> None:
        for label, value in (("width", self.width), ("height", self.height), ("line", self.line)):
            if not 1 <= value <= MAX_SIDE:
                raise AgonError(f"the {label} must be 1 to {MAX_SIDE}, not {value}")

    # --- the variant ------------------------------------------------------------------------

    @property
    def variant_id(self) -> str:
        return f"tictactoe-{self.width}x{self.height}-{self.line}"

    @property
    def description(self) -> str:
        return f"Tic-tac-toe {self.width}×{self.height}, {self.line} in a row"

    @property
    def komi(self) -> float:
        return 0.0

    def options(self) -> dict[str, Any]:
        return {"width": self.width, "height": self.height, "line": self.line}

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> TicTacToe:
        values = read_options(cls.option_specs, options, cls.title)
        return cls(values["width"], values["height"], values["line"])

    @property
    def cells(self) -> int:
        return self.width * self.height

    @property
    def num_actions(self) -> int:
        return self.cells

    @property
    def pass_move(self) -> Move | None:
        return None

    def new_state(self) -> TicTacToeState:
        return TicTacToeState(self, EMPTY * self.cells)

    # --- cells and moves --------------------------------------------------------------------

    def cell_name(self, cell: int) -> str:
        return f"{chr(ord('a') + cell % self.width)}{cell // self.width + 1}"

    def move_places(self, move: Move) -> tuple[int, ...]:
        return (move,) if 0 <= move < self.cells else ()

    def place_name(self, place: int) -> str:
        return self.cell_name(place)

    def parse_move(self, text: str) -> Move:
        match = _CELL_RE.fullmatch(text.lower())
        if not match:
            raise NotationError(f"{quoted(text)} is not a move: write a cell like 'b2'")
        file, rank = ord(match.group(1)) - ord("a"), int(match.group(2)) - 1
        if not (0 <= file < self.width and 0 <= rank < self.height):
            raise NotationError(
                f"{match.group(1)}{match.group(2)} is off the {self.width}×{self.height} board"
            )
        return rank * self.width + file

    def format_move(self, move: Move) -> str:
        if not 0 <= move < self.cells:
            raise NotationError(f"move number {move} is out of range")
        return self.cell_name(move)

    def parse_position(self, text: str) -> TicTacToeState:
        return parse_tictactoe_position(self, text)


@functools.cache
def winning_lines(width: int, height: int, length: int) -> tuple[tuple[int, ...], ...]:
    """Every run of ``length`` cells in a row on the board, as cell numbers."""
    lines = []
    for start in range(width * height):
        file, rank = start % width, start // width
        for step_file, step_rank in DIRECTIONS:
            end_file = file + step_file * (length - 1)
            end_rank = rank + step_rank * (length - 1)
            if 0 <= end_file < width and 0 <= end_rank < height:
                cells = (
                    (rank + step_rank * i) * width + file + step_file * i for i in range(length)
                )
                lines.append(tuple(cells))
    return tuple(dict.fromkeys(lines))  # (a line of one cell is found in every direction)


class TicTacToeState(State):
    """A tic-tac-toe position: the board alone (the side to move follows from the counts)."""

    game: TicTacToe

    def __init__(self, game: TicTacToe, board: str) -> None:
        super().__init__(game)
        self.board = board
        self._placed: list[int] = []
        """The cells filled by the moves applied to this object, for undo."""

    # --- queries ----------------------------------------------------------------------------

    @property
    def player(self) -> Player:
        """Whose turn it is by the stones on the board (Black moves first)."""
        black, white = self.board.count(STONES[0]), self.board.count(STONES[1])
        return Player.BLACK if black == white else Player.WHITE

    def has_line(self, player: Player) -> bool:
        stone = STONES[player]
        game = self.game
        return any(
            all(self.board[cell] == stone for cell in line)
            for line in winning_lines(game.width, game.height, game.line)
        )

    def winner_by_line(self) -> Player | None:
        """The player who completed a line (the one who moved last, if anyone has)."""
        last = self.player.other
        return last if self.has_line(last) else None

    @property
    def to_move(self) -> Player | None:
        return None if self.is_over else self.player

    @property
    def end_reason(self) -> str | None:
        winner = self.winner_by_line()
        if winner is not None:
            return f"{winner.name.capitalize()} completed a line of {self.game.line}"
        if EMPTY not in self.board:
            return REASON_FULL
        return None

    def legal_moves(self) -> list[Move]:
        if self.is_over:
            return []
        return [cell for cell, content in enumerate(self.board) if content == EMPTY]

    def illegal_reason(self, move: Move) -> str | None:
        if self.is_over:
            return "the game is over"
        if not 0 <= move < self.game.cells:
            return "there is no such cell"
        if self.board[move] != EMPTY:
            return f"{self.game.cell_name(move)} is occupied"
        return None

    def score(self) -> Score:
        """The winner 1 point, the loser 0; 0–0 for a draw or a game still going on."""
        winner = self.winner_by_line()
        if winner is None:
            return Score(0.0, 0.0)
        return Score(1.0, 0.0) if winner is Player.BLACK else Score(0.0, 1.0)

    # --- changes ----------------------------------------------------------------------------

    def _apply(self, move: Move) -> None:
        stone = STONES[self.player]
        self.board = self.board[:move] + stone + self.board[move + 1 :]
        self._placed.append(move)

    def _revert(self) -> None:
        cell = self._placed.pop()
        self.board = self.board[:cell] + EMPTY + self.board[cell + 1 :]

    def copy(self) -> TicTacToeState:
        twin = TicTacToeState(self.game, self.board)
        twin.history = list(self.history)
        twin._placed = list(self._placed)
        return twin

    def key(self) -> str:
        return self.board

    # --- text -------------------------------------------------------------------------------

    def position(self) -> str:
        """Ranks from the top, separated by '/', then the side whose turn it is: ``x..`` /
        ``.o.`` / ``...`` ``x``, written ``x../.o./... x``."""
        width = self.game.width
        ranks = [
            self.board[rank * width : (rank + 1) * width]
            for rank in reversed(range(self.game.height))
        ]
        return "/".join(ranks) + " " + STONES[self.player]


def parse_tictactoe_position(game: TicTacToe, text: str) -> TicTacToeState:
    tokens = text.lower().split()
    if len(tokens) != 2:
        raise PositionError(
            "a tic-tac-toe position is the ranks from the top, separated by '/', and the side "
            "to move: 'x../.o./... x'"
        )
    board_text, side = tokens
    ranks = board_text.split("/")
    if len(ranks) != game.height:
        raise PositionError(f"the position has {len(ranks)} ranks, the board {game.height}")
    for row, rank_text in enumerate(ranks):
        if len(rank_text) != game.width:
            raise PositionError(
                f"rank {game.height - row} has {len(rank_text)} cells, "
                f"the board is {game.width} wide"
            )
        wrong = set(rank_text) - {EMPTY, *STONES}
        if wrong:
            raise PositionError(
                f"rank {game.height - row} has {quoted(''.join(sorted(wrong)))}: use x, o and ."
            )
    if side not in STONES:
        raise PositionError(f"the side to move must be 'x' or 'o', not {quoted(side)}")
    state = TicTacToeState(game, "".join(reversed(ranks)))
    black, white = state.board.count(STONES[0]), state.board.count(STONES[1])
    if black not in (white, white + 1):
        raise PositionError(
            f"Black moves first: Black has as many stones as White or one more, "
            f"not {black} against {white}"
        )
    if STONES[state.player] != side:
        raise PositionError(
            f"with {black} black and {white} white stones it is "
            f"{state.player.name.capitalize()}'s turn, not {quoted(side)}'s"
        )
    lines = [player for player in Player if state.has_line(player)]
    if len(lines) == 2:
        raise PositionError("both sides have a line: the game would have ended at the first")
    if lines and lines[0] is state.player:
        raise PositionError(
            f"{lines[0].name.capitalize()} has a line, yet the other side has moved since"
        )
    return state
