"""Alternator's rules, written to be read (the fast twin in ``fast.py`` is tested against them).

Board cells are numbered ``rank * width + file`` from a1 = 0; a1 is dark (Black's). Each cell
holds either a *root* with the size of its tree (a blank cell is a root of size 1) or a *pit*
with the direction of its stem. A move ``p-r`` turns root ``p`` into a pit whose stem points at
the adjacent root ``r``, which absorbs ``p``'s tree; it is legal when size(p) >= size(r).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agon.core.errors import AgonError, NotationError, PositionError, quoted
from agon.core.game import Game, Move, Score, State, format_points, read_count
from agon.core.options import Option, check_komi, read_options
from agon.core.player import Player

MAX_SIDE = 26
DEFAULT_KOMI = 3.5

# Directions of a stem, in move-number order: north (up a rank), east, south, west.
DIRECTIONS = ("north", "east", "south", "west")
DIRECTION_STEPS = ((0, 1), (1, 0), (0, -1), (-1, 0))
# Position-text symbols of a pit, by the direction its stem points.
PIT_SYMBOLS = "^>v<"

REASON_PASSES = "both players passed"

_MOVE_RE = re.compile(r"^\s*([a-z])([0-9]{1,2})\s*-?\s*([a-z])([0-9]{1,2})\s*$")


@dataclass(frozen=True)
class Alternator(Game):
    """The variant: board size and komi."""

    width: int = 8
    height: int = 8
    komi_points: float = DEFAULT_KOMI

    name = "alternator"
    title = "Alternator"
    option_specs = (
        Option(
            "width", "whole", 8, "Files a, b, … from the left.", label="Files",
            minimum=1, maximum=MAX_SIDE,
        ),
        Option(
            "height", "whole", 8, "Ranks 1, 2, … from the bottom.", label="Ranks",
            minimum=1, maximum=MAX_SIDE,
        ),
        Option(
            "komi", "number", DEFAULT_KOMI,
            "Points added to White's score (3.5: the author's advice).", step=0.5,
        ),
        Option(
            "size", "text", "8x8", "Files x ranks, like 8x8 (sets width and height).",
            shortcut=True, reader=lambda value: parse_board_size(str(value)),
        ),
    )

    def __post_init__(self) -> None:
        for label, side in (("width", self.width), ("height", self.height)):
            if not 1 <= side <= MAX_SIDE:
                raise AgonError(f"board {label} must be 1 to {MAX_SIDE}, not {side}")
        if self.width * self.height < 2:
            raise AgonError("the board needs at least two cells")
        check_komi(self.komi_points)

    # --- the variant ------------------------------------------------------------------------

    @property
    def variant_id(self) -> str:
        return f"alternator-{self.width}x{self.height}"

    @property
    def description(self) -> str:
        return f"Alternator {self.width}×{self.height}, komi {format_points(self.komi_points)}"

    @property
    def komi(self) -> float:
        return self.komi_points

    def options(self) -> dict[str, Any]:
        return {"width": self.width, "height": self.height, "komi": self.komi_points}

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Alternator:
        values = read_options(cls.option_specs, options, cls.title)
        width, height = values.get("size", (values["width"], values["height"]))
        width = values["width"] if "width" in options else width
        height = values["height"] if "height" in options else height
        return cls(width, height, values["komi"])

    @property
    def cells(self) -> int:
        return self.width * self.height

    @property
    def num_actions(self) -> int:
        return 4 * self.cells + 1

    @property
    def pass_move(self) -> Move:
        return 4 * self.cells

    def new_state(self) -> AlternatorState:
        return AlternatorState(self, (1,) * self.cells, Player.BLACK, 0)

    # --- geometry ---------------------------------------------------------------------------

    def is_dark(self, cell: int) -> bool:
        """Dark cells (a1 and those of the same colour) belong to Black."""
        file, rank = cell % self.width, cell // self.width
        return (file + rank) % 2 == 0

    def owner_of_cell(self, cell: int) -> Player:
        return Player.BLACK if self.is_dark(cell) else Player.WHITE

    def neighbour(self, cell: int, direction: int) -> int | None:
        """The cell one step away in ``direction``, or None off the board."""
        file, rank = cell % self.width, cell // self.width
        step_file, step_rank = DIRECTION_STEPS[direction]
        file, rank = file + step_file, rank + step_rank
        if 0 <= file < self.width and 0 <= rank < self.height:
            return rank * self.width + file
        return None

    def stem_end(self, cell: int, content: int) -> int | None:
        """Where ``cell`` points its stem when it holds ``content`` (its entry in a state's
        ``cells``): the neighbour a pit's stem ends in; None for a root."""
        if content >= 0:
            return None
        return self.neighbour(cell, -1 - content)

    def cell_name(self, cell: int) -> str:
        return f"{chr(ord('a') + cell % self.width)}{cell // self.width + 1}"

    def cell_index(self, name: str) -> int:
        match = re.fullmatch(r"\s*([a-zA-Z])([0-9]{1,2})\s*", name)
        if not match:
            raise NotationError(f"{quoted(name)} is not a cell name like 'd4'")
        return self._cell(match.group(1).lower(), match.group(2), name)

    def _cell(self, letter: str, digits: str, text: str) -> int:
        file, rank = ord(letter) - ord("a"), int(digits) - 1
        if not (0 <= file < self.width and 0 <= rank < self.height):
            raise NotationError(
                f"{letter}{digits} in {quoted(text)} is off the {self.width}×{self.height} board"
            )
        return rank * self.width + file

    # --- moves ------------------------------------------------------------------------------

    def move_between(self, pit: int, root: int) -> Move:
        """The move that puts a pit on ``pit`` with its stem to the adjacent cell ``root``."""
        for direction in range(4):
            if self.neighbour(pit, direction) == root:
                return 4 * pit + direction
        raise NotationError(
            f"{self.cell_name(pit)} and {self.cell_name(root)} are not orthogonally adjacent"
        )

    def move_cells(self, move: Move) -> tuple[int, int | None]:
        """(pit, root) of a move; root is None when the stem would leave the board."""
        return move // 4, self.neighbour(move // 4, move % 4)

    def move_places(self, move: Move) -> tuple[int, ...]:
        if not 0 <= move < self.pass_move:
            return ()
        pit, root = self.move_cells(move)
        return () if root is None else (pit, root)

    def place_name(self, place: int) -> str:
        return self.cell_name(place)

    def parse_move(self, text: str) -> Move:
        cleaned = text.strip().lower()
        if cleaned in ("pass", "p"):
            return self.pass_move
        match = _MOVE_RE.match(cleaned)
        if not match:
            raise NotationError(
                f"{quoted(text)} is not a move: write the pit and the root, like 'd4-d5', or 'pass'"
            )
        pit = self._cell(match.group(1), match.group(2), text)
        root = self._cell(match.group(3), match.group(4), text)
        return self.move_between(pit, root)

    def format_move(self, move: Move) -> str:
        if move == self.pass_move:
            return "pass"
        if not 0 <= move < self.pass_move:
            raise NotationError(f"move number {move} is out of range")
        pit, root = self.move_cells(move)
        if root is None:
            return f"{self.cell_name(pit)}-off-board-{DIRECTIONS[move % 4]}"
        return f"{self.cell_name(pit)}-{self.cell_name(root)}"

    # --- positions --------------------------------------------------------------------------

    def parse_position(self, text: str) -> AlternatorState:
        return parse_alternator_position(self, text)


def parse_board_size(text: str) -> tuple[int, int]:
    """``"8x8"`` → (8, 8); also accepts ``8×8`` and a single number for a square board."""
    match = re.fullmatch(r"\s*([0-9]+)\s*(?:[x×X*]\s*([0-9]+))?\s*", text)
    if not match:
        raise AgonError(f"board size {quoted(text)} must look like 8x8 (files x ranks)")
    sides = [side for side in match.groups() if side is not None]
    if any(len(side) > 4 for side in sides):  # (int() refuses over 4,300 digits)
        raise AgonError(
            f"board size {quoted(text)} is out of range: a side has 1 to {MAX_SIDE} cells"
        )
    width = int(sides[0])
    return width, int(sides[-1])


class AlternatorState(State):
    """An Alternator position and the moves that led to it.

    ``cells[i]`` is the tree size (> 0) for a root, or ``-1 - direction`` for a pit.
    """

    game: Alternator

    def __init__(
        self, game: Alternator, cells: tuple[int, ...], player: Player, passes: int
    ) -> None:
        super().__init__(game)
        self.cells = cells
        self.player = player
        self.passes = passes
        self._undo: list[tuple[tuple[int, ...], Player, int]] = []

    # --- queries ----------------------------------------------------------------------------

    def is_pit(self, cell: int) -> bool:
        return self.cells[cell] < 0

    def size(self, cell: int) -> int:
        """Tree size at a root (0 for a pit)."""
        return max(self.cells[cell], 0)

    def stem_target(self, cell: int) -> int | None:
        """For a pit, the cell its stem points to; None for a root."""
        return self.game.stem_end(cell, self.cells[cell])

    def roots(self) -> dict[int, int]:
        """Every root cell and its tree size."""
        return {cell: size for cell, size in enumerate(self.cells) if size > 0}

    def tree_root(self, cell: int) -> int:
        """Follow stems from ``cell`` to the root of its tree."""
        target = self.stem_target(cell)
        while target is not None:
            cell, target = target, self.stem_target(target)
        return cell

    @property
    def to_move(self) -> Player | None:
        return None if self.is_over else self.player

    @property
    def end_reason(self) -> str | None:
        return REASON_PASSES if self.passes >= 2 else None

    def illegal_reason(self, move: Move) -> str | None:
        game = self.game
        if self.is_over:
            return "the game is over"
        if not 0 <= move < game.num_actions:
            return "there is no such move"
        if move == game.pass_move:
            return None
        pit, root = game.move_cells(move)
        if root is None:
            return "the stem must end on an adjacent cell of the board"
        if self.is_pit(pit):
            return f"{game.cell_name(pit)} already has a dot (a pit)"
        if self.is_pit(root):
            return f"a root may never be drawn on a pit, and {game.cell_name(root)} is a pit"
        if self.size(pit) < self.size(root):
            return (
                f"the larger tree must attach to the smaller: the tree at "
                f"{game.cell_name(pit)} has size {self.size(pit)}, smaller than the tree "
                f"of size {self.size(root)} at {game.cell_name(root)}"
            )
        return None

    def legal_moves(self) -> list[Move]:
        if self.is_over:
            return []
        moves = [m for m in range(self.game.pass_move) if self.illegal_reason(m) is None]
        return [*moves, self.game.pass_move]

    def score(self) -> Score:
        black = sum(s for c, s in enumerate(self.cells) if s > 0 and self.game.is_dark(c))
        white = sum(s for c, s in enumerate(self.cells) if s > 0 and not self.game.is_dark(c))
        return Score(float(black), white + self.game.komi)

    # --- changes ----------------------------------------------------------------------------

    def _apply(self, move: Move) -> None:
        self._undo.append((self.cells, self.player, self.passes))
        if move == self.game.pass_move:
            self.passes += 1
        else:
            pit, root = self.game.move_cells(move)
            assert root is not None
            cells = list(self.cells)
            cells[root] += cells[pit]
            cells[pit] = -1 - move % 4
            self.cells = tuple(cells)
            self.passes = 0
        self.player = self.player.other

    def _revert(self) -> None:
        self.cells, self.player, self.passes = self._undo.pop()

    def copy(self) -> AlternatorState:
        twin = AlternatorState(self.game, self.cells, self.player, self.passes)
        twin.history = list(self.history)
        twin._undo = list(self._undo)
        return twin

    def key(self) -> tuple[tuple[int, ...], Player, int]:
        return self.cells, self.player, self.passes

    # --- text -------------------------------------------------------------------------------

    def position(self) -> str:
        """Ranks from the top, cells separated by spaces, ranks by '/', then side to move.

        A root is its size (``1`` for a blank cell), a pit is the arrow of its stem
        (``^ > v <``). ``pass`` at the end means the last move was a pass (``pass pass``: the
        last two, so the game is over).
        """
        game = self.game
        ranks = []
        for rank in reversed(range(game.height)):
            tokens = []
            for file in range(game.width):
                value = self.cells[rank * game.width + file]
                tokens.append(str(value) if value > 0 else PIT_SYMBOLS[-1 - value])
            ranks.append(" ".join(tokens))
        text = " / ".join(ranks) + f" : {self.player.letter.lower()}"
        return text + " pass" * self.passes


def parse_alternator_position(game: Alternator, text: str) -> AlternatorState:
    board_text, separator, tail = text.partition(":")
    if not separator:
        raise PositionError("a position needs ': b' or ': w' after the board (side to move)")
    tail_tokens = tail.split()
    if not tail_tokens or tail_tokens[0].lower() not in ("b", "w", "black", "white"):
        raise PositionError("the side to move after ':' must be 'b' or 'w'")
    player = Player.parse(tail_tokens[0])
    passes = 0
    if len(tail_tokens) > 1:
        if tail_tokens[1:] not in (["pass"], ["pass", "pass"]):
            unexpected = quoted(" ".join(tail_tokens[1:]))
            raise PositionError(f"unexpected {unexpected} after the side to move")
        passes = len(tail_tokens) - 1
    rank_texts = [r.split() for r in board_text.split("/")]
    if len(rank_texts) != game.height:
        raise PositionError(f"the position has {len(rank_texts)} ranks, the board {game.height}")
    cells = [0] * game.cells
    for row, tokens in enumerate(rank_texts):
        rank = game.height - 1 - row
        if len(tokens) != game.width:
            raise PositionError(
                f"rank {rank + 1} has {len(tokens)} cells, the board is {game.width} wide"
            )
        for file, token in enumerate(tokens):
            cell = rank * game.width + file
            size = read_count(token)
            if token in PIT_SYMBOLS:
                cells[cell] = -1 - PIT_SYMBOLS.index(token)
            elif size is not None and 0 < size <= game.cells:
                cells[cell] = size
            elif token.isascii() and token.isdigit() and token.strip("0"):
                raise PositionError(
                    f"cell {game.cell_name(cell)}: a tree of {quoted(token)} cells does not fit "
                    f"on the board of {game.cells}"
                )
            else:
                raise PositionError(
                    f"cell {game.cell_name(cell)}: {quoted(token)} is neither a tree size "
                    "nor a pit "
                    f"({' '.join(PIT_SYMBOLS)})"
                )
    state = AlternatorState(game, tuple(cells), player, passes)
    _check_trees(state)
    return state


def _check_trees(state: AlternatorState) -> None:
    """Every stem must lead along its tree to a root whose size counts its cells."""
    game = state.game
    counted = {cell: 1 for cell in state.roots()}
    for cell in range(game.cells):
        if not state.is_pit(cell):
            continue
        seen = {cell}
        target = state.stem_target(cell)
        while target is not None and state.is_pit(target):
            if target in seen:
                raise PositionError(f"the stems from {game.cell_name(cell)} go round in a loop")
            seen.add(target)
            target = state.stem_target(target)
        if target is None:
            raise PositionError(f"the stem of {game.cell_name(cell)} points off the board")
        counted[target] += 1
    for cell, size in state.roots().items():
        if counted[cell] != size:
            raise PositionError(
                f"the tree rooted at {game.cell_name(cell)} has {counted[cell]} cells "
                f"but is marked size {size}"
            )
