"""The computer's named levels, and the thinking itself (run in a worker process).

Each level lists agent specs from strongest wish to safest fallback; the first one the agent
registry has is used, so the levels keep working whichever agents a version ships.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import agon.study  # noqa: F401 - (registers the strongest agent)
from agon.core.errors import AgonError, quoted
from agon.core.game import Game, State
from agon.core.limits import Limit
from agon.games import make_game, plugins
from agon.search.agent import Agent
from agon.search.registry import AGENTS, make_agent, parse_spec
from agon.solve.solver import warm_up_kernels
from agon.study.calibration import Rating, calibration_for, chosen_ladder


@dataclass(frozen=True)
class Level:
    key: str
    label: str
    specs: tuple[str, ...]


LEVELS: tuple[Level, ...] = (
    Level("beginner", "Beginner", ("random",)),
    Level("easy", "Easy", ("greedy", "random")),
    Level("medium", "Medium", ("mcts:512", "greedy", "random")),
    Level("hard", "Hard", ("mcts:1s", "greedy", "random")),
    Level("strongest", "Strongest", ("strongest:2s", "alphabeta:2s", "mcts:1s", "random")),
)
"""The levels where a variant has no calibration (docs/search.md, *Calibrated levels*): one
family of search, more of it each step, so that each is stronger than the one before."""
LEVELS_BY_KEY = {level.key: level for level in LEVELS}
DEFAULT_LEVEL = "medium"
KEPT_AGENTS = 3
"""Agents each worker keeps between moves, one a game (one of the strongest holds its solver's
tables, at most ``agon.solve.solver.PLAYER_TABLE_BYTES``)."""
PONDER_SLICE_S = 0.2
"""A ponder looks whether work came for its worker between slices of this long."""
_worker = threading.local()
T = TypeVar("T")


def first_available(specs: tuple[str, ...]) -> str:
    """The first spec whose agent the registry has (checked by name: building one compiles)."""
    for spec in specs:
        if spec.partition(":")[0] in AGENTS:
            return spec
    return "random"


@dataclass(frozen=True)
class OfferedLevel:
    """A level as a variant offers it: the agent that plays it, and its measured rating and
    time a move where the variant is calibrated."""

    key: str
    label: str
    spec: str
    rating: Rating | None = None


def offered_levels(game: Game | None = None) -> list[OfferedLevel]:
    """The levels ``game``'s variant offers, weakest first: those its calibration chose by
    rating (:func:`agon.study.calibration.chosen_ladder`), named Beginner to Strongest (the
    middle names left out where fewer were chosen); else :data:`LEVELS`, not rated."""
    calibration = None if game is None else calibration_for(game)
    ladder = [] if calibration is None else [
        rating for rating in chosen_ladder(calibration.ratings())
        if first_available((rating.spec,)) == rating.spec
    ]
    if len(ladder) < 2:
        return [OfferedLevel(level.key, level.label, first_available(level.specs))
                for level in LEVELS]
    keys = [LEVELS[0], *LEVELS[1:-1][: len(ladder) - 2], LEVELS[-1]]
    return [
        OfferedLevel(level.key, level.label, rating.spec, rating)
        for level, rating in zip(keys, ladder, strict=True)
    ]


def level_spec(key: str, game: Game | None = None) -> str:
    """The agent that plays level ``key`` (on ``game``'s variant: see :func:`offered_levels`)."""
    offered = offered_levels(game)
    for level in offered:
        if level.key == key:
            return level.spec
    names = ", ".join(level.key for level in offered)
    if key in LEVELS_BY_KEY and game is not None:
        raise AgonError(
            f"the level {quoted(key)} is not offered on {game.description} (its levels, by "
            f"measured strength: {names})"
        )
    raise AgonError(f"unknown level {quoted(key)}: choose one of {names}")


def seconds_a_move(spec: str) -> float | None:
    """How long the agent ``spec`` thinks a move (None: no time limit, it answers at once or
    by a count of simulations)."""
    limit = parse_spec(spec)[1]
    return None if limit is None else limit.seconds


def think(
    game_name: str, options: dict[str, Any], moves: list[str], spec: str, seed: int,
    owner: str = "",
) -> dict[str, Any]:
    """Rebuild the position from its moves and let the agent analyse it (the agent that game
    ``owner`` has in this worker, :func:`kept_agent`).

    A plain top-level function of plain values, so that it can run in another process.
    """
    game, state = _position(game_name, options, moves)
    analysis = kept_agent(game, spec, seed, owner).analyse(state)
    return {
        "move": game.format_move(analysis.best_move),
        "value": analysis.value,
        "pv": [game.format_move(move) for move in analysis.principal_variation],
        "proven": analysis.proven,
        "spec": spec,
    }


def ponder(
    game_name: str, options: dict[str, Any], moves: list[str], spec: str, seed: int,
    owner: str, seconds: float,
) -> int:
    """Think on the opponent's time: game ``owner``'s agent analyses the position its
    opponent is to move in, for up to ``seconds``, so that its tree and tables are further on
    when its turn comes; it gives way as soon as other work is given to this worker
    (:func:`listen_for_stops`). Returns the work done (iterations, nodes)."""
    stop: Any = getattr(_worker, "stop", None)
    game, state = _position(game_name, options, moves)
    agent = kept_agent(game, spec, seed, owner)
    deadline = time.monotonic() + seconds
    work = 0
    while not (stop is not None and stop.is_set()) and not state.is_over:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        analysis = agent.analyse(state, Limit(seconds=min(PONDER_SLICE_S, left)))
        work += analysis.work
        if analysis.proven:
            break  # (nothing more to find)
    return work


def listen_for_stops(stop: Any) -> None:
    """Run first in each worker: ``stop`` (an Event) is set when work is given to this worker,
    so that a ponder there gives way to it."""
    _worker.stop = stop


def as_work(function: Callable[..., T], *arguments: Any) -> T:
    """``function(*arguments)`` run as this worker's work: any ponder queued before it has
    given way, so the next one may think again."""
    stop: Any = getattr(_worker, "stop", None)
    if stop is not None:
        stop.clear()
    return function(*arguments)


def _position(game_name: str, options: dict[str, Any], moves: list[str]) -> tuple[Game, State]:
    game = make_game(game_name, options)
    state = game.new_state()
    for text in moves:
        state.play_text(text)
    return game, state


def kept_agent(game: Game, spec: str, seed: int, owner: str = "") -> Agent:
    """The agent ``spec`` of ``game``'s variant that this worker (process or thread) keeps for
    game ``owner`` from move to move, so that its tables (the solver's, alpha-beta's, MCTS's
    tree) are not lost after each move. The :data:`KEPT_AGENTS` used last are kept; where
    that many are kept, a new game takes over the agent of its variant and spec used longest
    ago (its tables hold for any game; a tree is started afresh where the position is not in
    it), else one is made with ``seed``."""
    kept: OrderedDict[tuple[str, str, str], Agent] | None = getattr(_worker, "agents", None)
    if kept is None:
        kept = _worker.agents = OrderedDict()
    variant = f"{game.name} {json.dumps(game.options(), sort_keys=True)}"
    key = (variant, spec, owner)
    agent = kept.pop(key, None)
    if agent is None and len(kept) >= KEPT_AGENTS:
        alike = next((old for old in kept if old[:2] == (variant, spec)), None)
        if alike is not None:
            agent = kept.pop(alike)
    agent = agent or make_agent(spec, game, seed=seed)
    kept[key] = agent
    while len(kept) > KEPT_AGENTS:
        _, oldest = kept.popitem(last=False)
        oldest.close()
    return agent


def warm_up() -> None:
    """Run once in each worker process: load the agents' compiled kernels, and the solver's
    (the strongest level's, the hints' and the analyses'), before a game needs them."""
    for found in plugins().values():
        make_agent(first_available(("greedy", "random")), found.make(), seed=0)
    warm_up_kernels()
