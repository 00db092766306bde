"""The protocol every game implements, and every agent, solver and interface relies on.

A *game* is a variant value (a board size, a rule set, a komi, …): immutable, hashable,
and able to create states, read and write moves and positions. A *state* is one game in
progress: it plays and undoes moves and answers every question the rules can ask of it.

Moves are integers (*actions*) in ``range(game.num_actions)``, so that search code, fast
twins and framework adapters (OpenSpiel, PettingZoo) share one encoding; ``game.pass_move`` is
the pass action where the rules have one. Text notation is the game's concern:
``game.parse_move`` and ``game.format_move``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from agon.core.errors import IllegalMove, NotationError
from agon.core.options import Option
from agon.core.player import Player

Move = int
"""An action number: ``0 <= move < game.num_actions``."""

MAX_POSITION_LENGTH = 1_000_000
"""The longest position text read (a large board's, with the boards its history has seen,
is some thousands of characters)."""
MAX_MOVES_LENGTH = 1_000_000
"""The longest text of moves read at once (``--moves``; some hundred thousand moves)."""
MAX_COUNT_DIGITS = 9
"""A count in a position text (a tree's size, prisoners, passes) has at most this many
significant digits: more than any board holds, and far within a 64-bit integer."""


def read_count(text: str) -> int | None:
    """The whole number that ``text`` writes in ASCII digits (``"007"`` is 7), or None where it
    is not one, or has more than :data:`MAX_COUNT_DIGITS` significant digits (no sign, no
    ``_``, no other script's digits, and never a number Python takes digit by digit)."""
    if not (text.isascii() and text.isdigit()) or len(text.lstrip("0")) > MAX_COUNT_DIGITS:
        return None
    return int(text)

StateT = TypeVar("StateT", bound="State")


@dataclass(frozen=True)
class Score:
    """Both players' points as the rules count them, komi included in White's."""

    black: float
    white: float

    @property
    def margin(self) -> float:
        """Black's points minus White's."""
        return self.black - self.white


def format_points(value: float) -> str:
    """``3.0`` → ``"3"``, ``2.5`` → ``"2.5"``: whole numbers without a decimal point."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def result_text(margin: float) -> str:
    """The result in the usual notation: ``"B+2.5"``, ``"W+1"`` or ``"draw"``."""
    if margin > 0:
        return f"B+{format_points(margin)}"
    if margin < 0:
        return f"W+{format_points(-margin)}"
    return "draw"


class Game(ABC):
    """A game variant: what the rules are, before any move is played."""

    name: ClassVar[str]
    """Registry name used on the command line, in records and by its entry point."""
    title: ClassVar[str]
    """Display name, capitalised."""
    option_specs: ClassVar[tuple[Option, ...]]
    """The variants' options: ``from_options`` reads them, and the command line, the lobby's
    form and the adapters' parameters are built from them."""

    @property
    @abstractmethod
    def variant_id(self) -> str:
        """A short stable identifier of the variant, e.g. ``"NAME-8x8"``."""

    @property
    @abstractmethod
    def description(self) -> str:
        """One line for people, e.g. ``"Title 8×8, komi 3.5"``."""

    @abstractmethod
    def options(self) -> dict[str, Any]:
        """JSON-ready variant options; ``type(game).from_options(game.options()) == game``."""

    @classmethod
    @abstractmethod
    def from_options(cls, options: Mapping[str, Any]) -> Game:
        """Build the variant from options; raise :class:`AgonError` naming a bad one."""

    @property
    @abstractmethod
    def num_actions(self) -> int:
        """Number of distinct move numbers, pass included."""

    @property
    @abstractmethod
    def pass_move(self) -> Move | None:
        """The pass action, or None where the rules have no pass."""

    @property
    @abstractmethod
    def komi(self) -> float:
        """Points added to White's score."""

    @abstractmethod
    def new_state(self) -> State:
        """The starting position."""

    @abstractmethod
    def parse_move(self, text: str) -> Move:
        """Read a move in any accepted notation; raise :class:`NotationError` if unreadable.

        Only the notation is checked here; legality is the state's business.
        """

    @abstractmethod
    def format_move(self, move: Move) -> str:
        """The canonical notation of a move."""

    @abstractmethod
    def parse_position(self, text: str) -> State:
        """Read a position text; raise :class:`PositionError` naming what is wrong."""

    @abstractmethod
    def move_places(self, move: Move) -> tuple[int, ...]:
        """The board places a move is made of, in the order a player picks them (a pit, then
        its root; a point): what a board shows highlighted, and what clicks make the move.
        A pass has none."""

    @abstractmethod
    def place_name(self, place: int) -> str:
        """A board place's name in the game's notation (``d4``, ``3``), unique on the board."""

    def parse_moves(self, text: str) -> list[Move]:
        """Read a space- or comma-separated list of moves."""
        return [self.parse_move(token) for token in text.replace(",", " ").split()]


class State(ABC):
    """One game in progress. Mutable: :meth:`play` and :meth:`undo` change it in place."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.history: list[Move] = []
        """Moves played on this state object, oldest first (not those before a loaded position)."""

    # --- what the rules say about the current position -------------------------------------

    @property
    @abstractmethod
    def to_move(self) -> Player | None:
        """The player to move, or None when the game is over."""

    @abstractmethod
    def legal_moves(self) -> list[Move]:
        """Every legal move, sorted by move number; empty when the game is over."""

    @abstractmethod
    def illegal_reason(self, move: Move) -> str | None:
        """None if ``move`` is legal, else the rule it breaks, in words a player understands."""

    @property
    @abstractmethod
    def end_reason(self) -> str | None:
        """Why the game ended (e.g. "both players passed"), or None while it goes on."""

    @abstractmethod
    def score(self) -> Score:
        """Points as the rules count them now, komi included (final when the game is over)."""

    @abstractmethod
    def position(self) -> str:
        """The position text: ``game.parse_position(state.position())`` gives an equal state."""

    @abstractmethod
    def key(self) -> Any:
        """A hashable value equal for states that the rules cannot tell apart from now on."""

    @abstractmethod
    def copy(self: StateT) -> StateT:
        """An independent copy, history included."""

    @abstractmethod
    def _apply(self, move: Move) -> None:
        """Play a move already known to be legal."""

    @abstractmethod
    def _revert(self) -> None:
        """Take back the last move applied."""

    # --- shared behaviour ------------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.end_reason is not None

    @property
    def margin(self) -> float:
        """Black minus White, komi included; 0 for a draw the rules declare regardless of points."""
        return self.score().margin

    @property
    def result(self) -> str | None:
        """``"B+2.5"``, ``"W+1"``, ``"draw"``, or None while the game goes on."""
        return result_text(self.margin) if self.is_over else None

    @property
    def winner(self) -> Player | None:
        if not self.is_over or self.margin == 0:
            return None
        return Player.BLACK if self.margin > 0 else Player.WHITE

    def is_legal(self, move: Move) -> bool:
        return self.illegal_reason(move) is None

    def play(self, move: Move) -> None:
        """Play a move, or raise :class:`IllegalMove` with the rule it breaks."""
        reason = self.illegal_reason(move)
        if reason is not None:
            raise IllegalMove(f"{self._describe_move(move)} is illegal: {reason}")
        self._apply(move)
        self.history.append(move)

    def play_text(self, text: str) -> Move:
        """Parse a move in any accepted notation and play it; returns the move played."""
        move = self.game.parse_move(text)
        self.play(move)
        return move

    def play_all(self, moves: Iterable[Move]) -> None:
        for move in moves:
            self.play(move)

    def undo(self) -> Move:
        """Take back the last move played on this state; returns it."""
        if not self.history:
            raise IllegalMove("there is no move to undo")
        self._revert()
        return self.history.pop()

    def _describe_move(self, move: Move) -> str:
        if 0 <= move < self.game.num_actions:
            with suppress(NotationError):  # an action with no notation, e.g. baljeu's pass
                return self.game.format_move(move)
        return f"move number {move}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.game.variant_id} {self.position()!r}>"
