"""The strongest agent (``strongest``, ``strongest:2s``): perfect play where Agon knows or can
prove the value, the best search elsewhere, written once for every game.

Each move asks, in turn: the stores of exact values (the one Agon ships, then the user's
cache, :mod:`agon.study.store`); the solver, in a share of the move's time (its table kept from
move to move, so that the end of a game is proven earlier and earlier, and sized by the time a
move: :func:`~agon.solve.solver.player_table_bits`); and, where neither
knows, a search in the time left: MCTS in a wide game (one whose start has
:data:`WIDE_START` legal moves or more, where it is the stronger search: docs/search.md,
*Ladder*), alpha-beta (which counts margins, and is exact itself where its iterations reach
every end) in a narrower one, each kept from move to move. The solver gets most of each move's
time while the game is within its reach, a small share (enough to notice when the end comes
within reach) once it is beyond. A narrow game is beyond its reach after two failures in a row
to prove a move's position (the start counts as one), and the solver tries again with most of
the time after 3, 7, 15 … (the positions shrink as the game goes on, and one just too large for
it, two moves into a small board's game, is proven a move or two later: docs/search.md, *The
strongest agent on the largest solved boards*); a wide game starts beyond its reach and stays
there until the solver proves a position. A position the stores answer counts neither way.
It plays for the best margin where the game scores points, not only for the result, choosing
at random (seeded) among the moves that keep the exact value. A wide game's MCTS searches on
:func:`search_threads` threads (``$AGON_THREADS``; one by default), each a tree of its own. This is
:class:`~agon.study.analysis.Analyst`'s analysis, the same as the hint's and the analysis
board's: the computer plays what the study says.
"""

from __future__ import annotations

import os
import random
import time

from agon.core.errors import AgonError, quoted
from agon.core.game import Game, State, read_count
from agon.core.limits import Limit
from agon.search.agent import Agent, Analysis
from agon.search.registry import make_agent
from agon.solve.solver import player_table_bits
from agon.study.analysis import Analyst
from agon.study.store import ExactValues

NAME = "strongest"
DEFAULT_LIMIT = Limit(seconds=1)
SOLVER_SHARE = 0.9
"""The solver's share of a move's time while it proves the game's positions."""
SOLVER_SHARE_BEYOND_REACH = 0.1
"""Its share while the game is beyond its reach."""
WIDE_START = 64
"""Legal moves at the start that make a game wide: between the widest start measured where
alpha-beta plays better (49) and the narrowest where MCTS does (81): docs/search.md,
*strongest*."""
WIDE_SEARCH = "mcts"
WIDE_SEARCH_SETTINGS = {"exploration": 0.1, "margin_weight": 0.2, "rave_equivalence": 1000.0}
"""MCTS's constants in a wide game: a narrower search with a larger bonus for the margin than
``mcts``'s own, and RAVE (at equal simulations, stronger on the widest board measured and
weaker on a narrow one, which alpha-beta searches here: docs/search.md, *Tuning the
constants* and *RAVE in the wide search*)."""
SOLVER_CHUNK_SECONDS = 0.05
"""The solver's chunks, as the agents' are (a move's time is kept to within one)."""
THREADS_ENV = "AGON_THREADS"
MAX_THREADS = 256


def search_threads() -> int:
    """The threads of a wide game's search: ``$AGON_THREADS`` (1 to :data:`MAX_THREADS`), else
    one. More threads search more in the same time, each on a core (docs/search.md, *Threads*); an
    arena's thinking workers each take that many. A bad value is an AgonError naming it."""
    text = os.environ.get(THREADS_ENV, "").strip()
    if not text:
        return 1
    threads = read_count(text)
    if threads is None or not 1 <= threads <= MAX_THREADS:
        raise AgonError(f"{THREADS_ENV}={quoted(text[:40])} is not a number of threads from 1 to "
                        f"{MAX_THREADS}")
    return threads


class StrongestAgent(Agent):
    """See the module's description. ``exact`` is where exact values are read and kept (the
    shipped store and the user's cache unless given; None: the solver and search alone)."""

    name = NAME

    def __init__(
        self,
        game: Game,
        limit: Limit | None = None,
        seed: int | None = None,
        exact: ExactValues | bool | None = True,
    ) -> None:
        super().__init__(game, seed)
        self.limit = limit or DEFAULT_LIMIT
        values = ExactValues() if exact is True else (exact or None)
        self.name = NAME if values is not None else f"{NAME}-nostore"
        bits = player_table_bits(game, self.limit)
        self.analyst = Analyst(
            game, values, seed=1 if seed is None else seed, chunk_seconds=SOLVER_CHUNK_SECONDS,
            table_bits=bits, numbers_bits=bits,
        )
        self._choices = random.Random(seed)
        self.wide = len(game.new_state().legal_moves()) >= WIDE_START
        """Whether the game is wide: searched by MCTS, not alpha-beta."""
        self._failures = 1
        """Moves in a row whose position the solver did not prove (one to start with: a wide
        game starts beyond its reach)."""
        self.threads = search_threads()
        """The threads of the wide search (:func:`search_threads`)."""
        self._wide_search: Agent | None = None

    @property
    def spec(self) -> str:
        return f"{self.name}:{self.limit}"

    def analyse(self, state: State, limit: Limit | None = None) -> Analysis:
        mover = state.to_move
        assert mover is not None, "the game is over: there is no move to choose"
        started = time.monotonic()
        stored = self.analyst.known(state, moves=False) is not None
        found = self.analyst.analyse(
            state, limit or self.limit, moves=False, exact_share=self.solver_share(),
            engine=self.wide_search if self.wide else None,
        )
        exact = found.value.exact and found.best_proven
        if not stored:  # (the store's answer says nothing of what the solver can prove)
            self._failures = 0 if exact else self._failures + 1
        best = found.best_moves
        move = best[0] if len(best) == 1 else self._choices.choice(best)
        variation = found.principal_variation
        if not variation or variation[0] != move:
            variation = [move]
        return Analysis(
            best_move=move,
            value=found.value.for_player(mover),
            principal_variation=list(variation),
            work=found.nodes,
            seconds=time.monotonic() - started,
            proven=exact,
        )

    def solver_share(self) -> float:
        """The solver's share of the next move's time: :data:`SOLVER_SHARE` while the game is
        within its reach (it proved the last move's position, or the game starts), and, in a
        narrow game, again after 1, 3, 7, 15 … moves in a row it failed to prove (one less than
        a power of two, the start counting as one: a few of a long game's moves, further and
        further apart); :data:`SOLVER_SHARE_BEYOND_REACH` otherwise. A position the store
        knows counts neither way: the solver did not try it."""
        failures = self._failures
        if self.wide:
            return SOLVER_SHARE if failures == 0 else SOLVER_SHARE_BEYOND_REACH
        trying_again = failures & (failures + 1) == 0
        return SOLVER_SHARE if trying_again else SOLVER_SHARE_BEYOND_REACH

    @property
    def wide_search(self) -> Agent:
        """The search of a wide game (made on first use)."""
        if self._wide_search is None:
            self._wide_search = make_agent(WIDE_SEARCH, self.game, self.seed)
            for setting, value in {**WIDE_SEARCH_SETTINGS, "threads": self.threads}.items():
                setattr(self._wide_search, setting, value)
        return self._wide_search

    def reset(self) -> None:
        self._choices = random.Random(self.seed)
        self._failures = 1
        self.analyst.engine.reset()
        if self._wide_search is not None:
            self._wide_search.reset()

    def close(self) -> None:
        if self.analyst.exact is not None:
            self.analyst.exact.close()
        if self._wide_search is not None:
            self._wide_search.close()

    def warmed_up(self) -> StrongestAgent:
        """This agent with its solver's and its search's kernels loaded (compiled after an
        upgrade) now, not on the clock of a move."""
        from agon.solve.solver import warm_up_kernels

        warm_up_kernels(self.game.name)
        _ = self.wide_search if self.wide else self.analyst.engine  # (made warm)
        return self
