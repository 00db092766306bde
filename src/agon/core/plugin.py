"""What a game declares about itself, so that search, solvers and interfaces ask it instead of
knowing it.

A game is a package that exposes one :class:`GamePlugin` and names it in the Python entry-point
group ``agon.games`` (:mod:`agon.games` finds them). The plugin gathers the game's facts: its
options (from which the command line, the lobby's form and the adapters' parameters are
built), texts, renderers, observation planes, its fast twin if it has one, and what the solver
must know. Everything that is not a plain value is a function of the variant, or a loader that
imports a heavy module (Rich, Numba) only when it is first needed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from agon.core.game import Game, Move, State

if TYPE_CHECKING:
    from rich.console import RenderableType

    from agon.core.fast import FastTwin
    from agon.core.results import Catalogue
    from agon.core.symmetry import Symmetries

GameT = TypeVar("GameT", bound=Game)
StateT = TypeVar("StateT", bound=State)

class BoardRenderer(Protocol):
    """What a game's renderer draws: a board and the lines below it, for a terminal or a page.

    ``render_svg`` follows the SVG contract (docs/architecture.md): one element per board
    place, with ``data-place`` (the place's name) and ``aria-label`` (what is there)."""

    def render_text(self, state: Any, *, ascii: bool = False) -> str: ...

    def render_rich(self, state: Any) -> RenderableType: ...

    def render_svg(
        self, state: Any, *, highlight: Sequence[int] = (), last_move: Move | None = None
    ) -> str: ...


@dataclass(frozen=True)
class Observation(Generic[GameT, StateT]):
    """The position as float32 planes for learning frameworks (OpenSpiel, PettingZoo), the
    same for both players (docs/adapters.md)."""

    names: Callable[[GameT], tuple[str, ...]]
    """Each plane's name, in order."""
    shape: Callable[[GameT], tuple[int, ...]]
    """``(planes, ...)``: the planes and the board's own shape."""
    planes: Callable[[StateT], Any]
    """The planes of a state (a float32 array of :attr:`shape`)."""
    unbounded: tuple[str, ...] = ()
    """Planes whose values may exceed 1 (counts over the board's size)."""


class KomiRule(Enum):
    """How a variant's komi enters its solved value."""

    SEARCHED = "searched"
    """The search counts it (it does not only shift margins: a draw by repetition is worth 0
    whatever the komi), or there is none."""
    SUBTRACTED = "subtracted"
    """It only shifts every final margin: the search leaves it out and the value subtracts it."""
    LEFT_OUT = "left out"
    """It only shifts every final margin, and the value is given without it (it is then the
    fair komi); the result under the komi is given beside it."""


@dataclass(frozen=True)
class Solving(Generic[GameT]):
    """What the exact solver needs to know of a game (docs/solver.md)."""

    table_bits: Callable[[GameT], int]
    """The transposition table's default size, 2**bits buckets."""
    small: Callable[[GameT], bool] = lambda game: False
    """Solved in at most a few hundred thousand nodes: small tables do (a table is zeroed page
    by page as a search first touches it, which costs a small solve more than its search)."""
    largest_margin: Callable[[GameT], int | None] = lambda game: None
    """A bound on |Black's margin| at the end of any game, komi left out (None: none known)."""
    komi_rule: Callable[[GameT], KomiRule] = lambda game: KomiRule.SEARCHED
    without_komi: Callable[[GameT], GameT] | None = None
    """The variant with komi 0, where :attr:`komi_rule` can leave the komi out."""
    symmetries: Callable[[GameT], Symmetries] | None = None
    """The board symmetries that preserve values (None: only the identity)."""
    proof_numbers: Callable[[GameT], bool] = lambda game: False
    """Whether proof-number search takes turns with alpha-beta by default: for games whose
    proofs follow long forced lines (captures, ko fights); else alpha-beta alone."""
    tables_bits: int = 20
    """The transposition table's size in ``agon tables``."""
    warm_up: Callable[[], GameT] | None = None
    """A tiny variant whose solve loads every solver kernel the game uses."""


@dataclass(frozen=True)
class Judging:
    """How a game's values read to a player, and how much a move may give away before a review
    calls it an inaccuracy, a mistake or a blunder (docs/study.md)."""

    outcome_only: bool = False
    """The result is a win, a draw or a loss, and the margin (±1 or 0) counts no points: values
    are said as "wins", "draws" and "loses", never "by 1 point"."""
    thresholds: tuple[float, float, float] = (1.0, 2.0, 4.0)
    """Points given away (from the mover's view) from which a move is an inaccuracy, a
    mistake and a blunder. Whatever they say, a proven move that turns a win into a draw is at
    least a mistake, and one that turns a win into a loss a blunder."""


@dataclass(frozen=True)
class GamePlugin(Generic[GameT, StateT]):
    """Everything Agon's search, solvers and interfaces know of one game."""

    game: type[GameT]
    """The variant class: its ``name`` (the registry's), ``title`` and ``option_specs``."""
    summary: str
    """One line on what the game is like (the lobby shows it)."""
    credit: str
    """Who made the game, for people (the page's footer lists every game's)."""
    click_help: str
    """How a move is made by clicking the board."""
    texts: str
    """The package whose ``texts/<lang>.md`` hold the rules (:mod:`agon.core.texts`)."""
    renderer: Callable[[], BoardRenderer]
    """Loads the renderer (which imports Rich)."""
    max_game_length: Callable[[GameT], int]
    """A bound on the moves of any game of the variant, passes included."""
    languages: tuple[str, ...] = ("en",)
    observation: Observation[GameT, StateT] | None = None
    fast_twin: Callable[[GameT], FastTwin] | None = None
    """Builds the variant's fast twin (imports Numba); None: searched on the reference rules."""
    evaluate: Callable[[StateT], float] | None = None
    """A heuristic estimate of the final margin (Black's) of an ongoing position, for search on
    the reference rules (a fast twin has its own); None: the margin as it stands."""
    move_order: Callable[[StateT, Move], float] | None = None
    """A cheap priority of a move for search on the reference rules (higher first)."""
    solving: Solving[GameT] | None = None
    judging: Judging = Judging()
    """How values read to players, and how reviews judge moves."""
    benchmarks: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    """Variants ``agon bench`` measures: (label, options)."""
    checks: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    """More variants ``agon bench --verify`` checks the fast twin on."""
    catalogue: Callable[[], Catalogue] | None = None
    """What ``agon tables`` solves and how docs/results.md shows it."""
    order: int = 100
    """Where the game comes in lists (lower first)."""
    variant_examples: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)
    """Small variants worth testing (the conformance suite plays them)."""

    @property
    def name(self) -> str:
        return self.game.name

    @property
    def title(self) -> str:
        return self.game.title

    def make(self, options: Mapping[str, Any] | None = None) -> GameT:
        """The variant with these options (defaults for the rest)."""
        made = self.game.from_options(options or {})
        assert isinstance(made, self.game)
        return made
