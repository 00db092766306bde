"""How good an agent's moves are, judged by the exact solver.

Positions are sampled half from uniformly random games and half from the agent's self-play
games (where the agent's move is the one it played; each game's agent has a seed of its own).
Each position is solved move by move; the agent's move is *optimal* when its value equals the
position's value, and the margin it *gives away* is the difference, from the mover's point of
view. Positions with a single legal move say nothing about an agent and are skipped. With a
time limit per solve, positions the solver cannot settle within it are left out and counted
(``unsettled``): the figures then describe the positions it settled, which are the easier
ones.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agon.core.errors import AgonError
from agon.core.game import Game, Move, State
from agon.core.limits import Limit
from agon.core.player import Player
from agon.search.agent import Agent, RandomAgent
from agon.search.registry import make_agent
from agon.solve.solution import SolveInterrupted, labelled_progress
from agon.solve.solver import Solver, warm_up_kernels

MAX_GAME_PLIES = 400
"""Random and self-play games longer than this are cut (their positions still count)."""
MAX_GAMES_WITHOUT_CHOICE = 100
"""Random games in which every move is forced, after which a variant is refused as having
no position to judge (rather than sampled for ever)."""


@dataclass
class QualityReport:
    game: str
    agent: str
    positions: int
    from_random: int
    from_self_play: int
    optimal: int
    total_loss: float
    agent_seconds: float
    unsettled: int = 0
    """Positions left out because a solve ran past ``max_seconds``."""
    max_seconds: float | None = None

    @property
    def judged(self) -> int:
        """The positions the figures describe: those the solver settled."""
        return self.positions - self.unsettled

    @property
    def optimal_share(self) -> float | None:
        """The share of judged positions where the agent's move was optimal (None if none)."""
        return self.optimal / self.judged if self.judged else None

    @property
    def mean_loss(self) -> float | None:
        """The mean margin given away per judged position (None if none)."""
        return self.total_loss / self.judged if self.judged else None

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "agent": self.agent,
            "positions": self.positions,
            "from_random": self.from_random,
            "from_self_play": self.from_self_play,
            "unsettled": self.unsettled,
            "max_seconds": self.max_seconds,
            "optimal_share": None if self.optimal_share is None else round(self.optimal_share, 4),
            "mean_loss": None if self.mean_loss is None else round(self.mean_loss, 4),
            "agent_seconds_per_move": round(self.agent_seconds, 3),
        }


def _game_positions(game: Game, agent: Agent) -> list[tuple[State, Move]]:
    """Every decision of one game ``agent`` plays against itself: (position, move played)."""
    agent.reset()
    state = game.new_state()
    decisions: list[tuple[State, Move]] = []
    while not state.is_over and len(state.history) < MAX_GAME_PLIES:
        move = agent.choose(state)
        if len(state.legal_moves()) > 1:
            decisions.append((state.copy(), move))
        state.play(move)
    return decisions


def _self_play(
    game: Game, agent_spec: str, wanted: int, rng: random.Random,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[tuple[State, Move]], float]:
    """The decisions of self-play games until there are ``wanted`` (or a game has none), and
    the seconds the agent took for them. Each game's agent is new, with a seed of its own: an
    agent made once would play the same game again and again where it chooses by its seed,
    and count one game's mistakes many times over."""
    pool: list[tuple[State, Move]] = []
    seconds = 0.0
    while len(pool) < wanted:
        player = make_agent(agent_spec, game, rng.randrange(2**31))
        try:
            started = time.monotonic()
            decisions = _game_positions(game, player)
            seconds += time.monotonic() - started
        finally:
            player.close()
        pool.extend(decisions)
        if progress is not None:
            progress(f"self-play: {min(len(pool), wanted)}/{wanted} positions")
        if not decisions:
            break
    return pool, seconds


def _loss(solver: Solver, state: State, move: Move, limit: Limit | None = None) -> float:
    """The margin the mover gives away by playing ``move`` (0 for an optimal move), each
    solve within ``limit``."""
    after = state.copy()
    after.play(move)
    view = -1.0 if state.to_move is Player.WHITE else 1.0
    return view * (solver.margin(state, limit) - solver.margin(after, limit)) + 0.0  # no -0.0


def measure_quality(
    game: Game,
    agent_spec: str,
    positions: int,
    seed: int,
    progress: Callable[[str], None] | None = None,
    max_seconds: float | None = None,
) -> QualityReport:
    """Judge ``agent_spec`` on ``positions`` positions (half random, half self-play), leaving
    out those whose solves take more than ``max_seconds`` each (Ctrl-C still stops it all)."""
    rng = random.Random(seed)
    agent = make_agent(agent_spec, game, seed)
    solver = Solver(game)
    limit = Limit(seconds=max_seconds)
    wanted_random = positions - positions // 2
    sampled: list[tuple[State, Move | None]] = []
    walker = RandomAgent(game, rng.randrange(2**31))
    empty_games = 0
    while len(sampled) < wanted_random:
        decisions = _game_positions(game, walker)
        if decisions:
            sampled.append((rng.choice(decisions)[0], None))
            continue
        empty_games += 1
        if empty_games >= MAX_GAMES_WITHOUT_CHOICE:
            raise AgonError(
                f"{game.description} offers no choice of moves: in {empty_games} random games "
                "every move was forced (or the game was over at the start), so there is no "
                "position to judge an agent on"
            )
    pool, agent_seconds = _self_play(game, agent_spec, positions // 2, rng, progress)
    agent_moves = len(pool)
    rng.shuffle(pool)
    sampled.extend((state, move) for state, move in pool[: positions // 2])
    optimal, total_loss, unsettled = 0, 0.0, 0
    if progress is not None:
        progress(f"solving {len(sampled)} positions …")
    warm_up_kernels(game.name)  # so that compiling does not count against --max-seconds
    for index, (state, played) in enumerate(sampled, start=1):
        if played is None:
            started = time.monotonic()
            played = agent.choose(state)
            agent_seconds += time.monotonic() - started
            agent_moves += 1
        if progress is not None:  # the solver's own reports, during long solves
            solver.progress = labelled_progress(progress, f"position {index}/{len(sampled)}")
        try:
            loss = _loss(solver, state, played, limit)
        except SolveInterrupted as stop:
            if not stop.timed_out:
                raise
            unsettled += 1
            outcome = f"not settled within {max_seconds:g}s, left out"
        else:
            optimal += loss == 0
            total_loss += loss
            outcome = f"gave away {loss:g}"
        if progress is not None:
            progress(f"position {index}/{len(sampled)}: {outcome}")
    return QualityReport(
        game=game.description,
        agent=agent.spec,
        positions=len(sampled),
        from_random=wanted_random,
        from_self_play=len(sampled) - wanted_random,
        optimal=optimal,
        total_loss=total_loss,
        agent_seconds=agent_seconds / max(agent_moves, 1),
        unsettled=unsettled,
        max_seconds=max_seconds,
    )
