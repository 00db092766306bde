"""The agent interface every player program implements, and the agent registry by spec.

An agent spec is ``NAME`` or ``NAME:BUDGET``: ``random``, ``greedy``, ``mcts:2s`` (seconds per
move), ``mcts:500ms``, ``mcts:20000`` (iterations), ``alphabeta:50000`` (nodes). The budget is
the agent's limit per move where a call gives none (:class:`agon.core.limits.Limit`).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from agon.core.errors import AgonError
from agon.core.game import Game, Move, State
from agon.core.limits import Limit


@dataclass
class Analysis:
    """What an agent thinks of a position."""

    best_move: Move
    value: float | None = None
    """Estimated final margin from the point of view of the player to move (None if unknown)."""
    principal_variation: list[Move] = field(default_factory=list)
    work: int = 0
    """Iterations (MCTS) or nodes (alpha-beta) spent."""
    seconds: float = 0.0
    proven: bool = False
    """True when the outcome is proven: a win, draw or loss (``win_rate`` 1, 0.5 or 0) that
    best play cannot change. Whether ``value`` is then exact too depends on the agent (it is
    for a complete alpha-beta search, not for MCTS, whose value stays a playout mean)."""
    win_rate: float | None = None
    """Expected result of the player to move (win 1, draw 0.5, loss 0), where the agent has one."""

    @property
    def speed(self) -> float:
        return self.work / self.seconds if self.seconds > 0 else 0.0


class Agent(ABC):
    """A player program. ``choose`` must return a legal move of a game that is not over."""

    def __init__(self, game: Game, seed: int | None = None) -> None:
        self.game = game
        self.seed = seed

    @property
    @abstractmethod
    def spec(self) -> str:
        """The spec that rebuilds this agent, e.g. ``"mcts:2s"``."""

    @abstractmethod
    def analyse(self, state: State, limit: Limit | None = None) -> Analysis:
        """Think about ``state`` (which it does not change) within ``limit`` (else the agent's
        own budget) and report."""

    def choose(self, state: State, limit: Limit | None = None) -> Move:
        return self.analyse(state, limit).best_move

    def reset(self) -> None:  # noqa: B027 - most agents keep nothing between games
        """Forget everything learned in the current game (a new game starts)."""

    def close(self) -> None:  # noqa: B027 - most agents hold nothing outside the process
        """Let go of what the agent holds outside this process (another program's)."""


class Forfeit(AgonError):
    """An agent that cannot go on with the game (another program that crashed, hung, ran out of
    time or answered a move the rules forbid): its side loses the game, for the reason given."""


class RandomAgent(Agent):
    """Plays uniformly among the legal moves, passing only when nothing else is legal."""

    def __init__(self, game: Game, seed: int | None = None) -> None:
        super().__init__(game, seed)
        self.rng = random.Random(seed)

    @property
    def spec(self) -> str:
        return "random"

    def analyse(self, state: State, limit: Limit | None = None) -> Analysis:
        moves = state.legal_moves()
        if not moves:
            raise AgonError("the game is over: there is no move to choose")
        placements = [m for m in moves if m != self.game.pass_move]
        return Analysis(best_move=self.rng.choice(placements or moves))

    def reset(self) -> None:
        self.rng = random.Random(self.seed)
