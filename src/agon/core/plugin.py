"""What a game declares about itself, so that search, solvers and interfaces ask it instead of
knowing it.

A game is a package that exposes one :class:`GamePlugin` and names it in the Python entry-point
group ``agon.games`` (:mod:`agon.games` finds them). The plugin declares what the game *is*:
its variant class (identity and options), its texts, renderer, bound on a game's length,
and, optionally, its fast twin, observation planes, search heuristics, what the solver must
know and how values read to players. What Agon's own tools want besides (variants to measure
and test, the tables to solve, where the game comes in lists) is a separate, optional
declaration, :class:`Tooling`.

Whatever imports a heavy module (Rich, Numba) is named by a *dotted path*, ``package.module``
or ``package.module:attribute``, that Agon imports when it is first needed (:func:`load`);
everything else is a plain value or a function of the variant.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from agon.core.errors import AgonError, quoted
from agon.core.game import Game, Move, State

if TYPE_CHECKING:
    from rich.console import RenderableType

    from agon.core.fast import FastTwin
    from agon.core.results import Catalogue
    from agon.core.symmetry import Symmetries

GameT = TypeVar("GameT", bound=Game)
StateT = TypeVar("StateT", bound=State)


def load(path: str) -> Any:
    """The object a dotted path names: ``package.module`` is the module itself,
    ``package.module:attribute`` an attribute of it. A path that does not load is an
    :class:`AgonError` naming it and why."""
    module_name, _, attribute = path.partition(":")
    try:
        loaded = importlib.import_module(module_name)
        for part in filter(None, attribute.split(".")):
            loaded = getattr(loaded, part)
    except (ImportError, AttributeError) as error:
        raise AgonError(f"{quoted(path)} does not load: {error}") from None
    return loaded


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

    default_table_bits: Callable[[GameT], int]
    """The size of a solve's transposition table where its caller names none: 2**bits
    buckets."""
    small: Callable[[GameT], bool] = lambda game: False
    """Solved in at most a few hundred thousand nodes: small tables do (a table is zeroed page
    by page as a search first touches it, which costs a small solve more than its search)."""
    largest_margin: Callable[[GameT], int | None] = lambda game: None
    """A bound on |Black's margin| at the end of any game, komi left out (None: none known)."""
    komi_rule: Callable[[GameT], KomiRule] = lambda game: KomiRule.SEARCHED
    without_komi: Callable[[GameT], GameT] | None = None
    """The variant with komi 0, where :attr:`komi_rule` can leave the komi out."""
    symmetries: str | None = None
    """Dotted path of a function of the variant giving the board symmetries that preserve
    values (:class:`~agon.core.symmetry.Symmetries`); None: only the identity."""
    proof_numbers: Callable[[GameT], bool] = lambda game: False
    """Whether proof-number search takes turns with alpha-beta by default: for games whose
    proofs follow long forced lines (captures, ko fights); else alpha-beta alone."""
    refined_proof_numbers: Callable[[GameT], bool] = lambda game: False
    """Whether the proof-number search uses weak proof numbers and starts each child from its
    estimate: for rules whose passes and returns to earlier positions make many
    transpositions (docs/solver.md has the measurements for and against)."""
    depth_in_setbacks: Callable[[GameT], bool] = lambda game: False
    """Whether iterative deepening limits only a line's *setbacks*, the moves that add no
    stone to the board (captures; the rules must have no pass): where every other move adds a
    stone, so that a run of them ends, and the twin's history kernels give the stones
    (``board_points``, at most 32)."""
    warm_up: Callable[[], GameT] | None = None
    """A tiny variant whose solve loads every solver kernel the game uses."""

    def symmetries_of(self, game: GameT) -> Symmetries | None:
        """The variant's declared symmetries (None where the game declares none)."""
        if self.symmetries is None:
            return None
        found: Symmetries = load(self.symmetries)(game)
        return found


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
class Tooling:
    """What Agon's own tools want of a game beyond what it is: every field is optional, and a
    game that declares none is still played, searched, solved and served everywhere."""

    order: int = 100
    """Where the game comes in lists (lower first; then by name)."""
    variant_examples: tuple[Mapping[str, Any], ...] = ()
    """Small variants worth testing, as options: the conformance suite plays each (the default
    variant where there are none)."""
    benchmarks: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    """Variants ``agon bench`` measures: (label, options)."""
    checks: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    """More variants ``agon bench --verify`` checks the fast twin on: (label, options)."""
    catalogue: str | None = None
    """Dotted path of the game's :class:`~agon.core.results.Catalogue`: what ``agon tables``
    solves and how docs/results.md shows it (None: the game has no tables)."""
    catalogue_table_bits: int = 20
    """The size of the transposition table of each solve of the catalogue, 2**bits buckets."""

    def load_catalogue(self) -> Catalogue | None:
        """The catalogue (imported on first use), or None."""
        if self.catalogue is None:
            return None
        found: Catalogue = load(self.catalogue)
        return found


@dataclass(frozen=True)
class GamePlugin(Generic[GameT, StateT]):
    """Everything Agon's search, solvers and interfaces know of one game."""

    game: type[GameT]
    """The variant class: its ``name`` (the registry's), ``title`` and ``option_specs``."""
    credit: str
    """Who made the game, for people (the page's footer lists every game's)."""
    texts: str
    """The package whose ``texts/`` hold the rules, ``<lang>.md``, and the words of the lobby
    and the game page, ``words.toml`` (:mod:`agon.core.texts`)."""
    renderer: str
    """Dotted path of the renderer (a module, or an object, with the methods of
    :class:`BoardRenderer`; it may import Rich)."""
    max_game_length: Callable[[GameT], int]
    """A bound on the moves of any game of the variant, passes included."""
    languages: tuple[str, ...] = ("en",)
    """The languages of the texts, English (``en``) always among them
    (:data:`agon.core.texts.LANGUAGE_NAMES` lists those Agon knows)."""
    observation: Observation[GameT, StateT] | None = None
    fast_twin: str | None = None
    """Dotted path of a function of the variant giving its fast twin
    (:class:`~agon.core.fast.FastTwin`; it imports Numba); None: searched on the reference
    rules."""
    evaluate: Callable[[StateT], float] | None = None
    """A heuristic estimate of the final margin (Black's) of an ongoing position, for search on
    the reference rules (a fast twin has its own); None: the margin as it stands."""
    move_order: Callable[[StateT, Move], float] | None = None
    """A cheap priority of a move for search on the reference rules (higher first)."""
    solving: Solving[GameT] | None = None
    judging: Judging = Judging()
    """How values read to players, and how reviews judge moves."""
    tooling: Tooling = Tooling()
    """What Agon's own tools want of the game besides."""

    @property
    def name(self) -> str:
        return self.game.name

    @property
    def title(self) -> str:
        return self.game.title

    def load_renderer(self) -> BoardRenderer:
        """The renderer (imported on first use)."""
        found: BoardRenderer = load(self.renderer)
        return found

    def build_fast_twin(self, game: GameT) -> FastTwin | None:
        """The variant's fast twin (imports its kernels), or None where the game has none."""
        if self.fast_twin is None:
            return None
        found: FastTwin = load(self.fast_twin)(game)
        return found

    def make(self, options: Mapping[str, Any] | None = None) -> GameT:
        """The variant with these options (defaults for the rest). A variant whose start is
        already over (a row of no pins) is refused: every tool assumes a move to play."""
        made = self.game.from_options(options or {})
        assert isinstance(made, self.game)
        start = made.new_state()
        if start.is_over:
            raise AgonError(
                f"{made.description} is over before its first move ({start.end_reason}): "
                "a variant must leave a move to play"
            )
        return made
