"""The agent interface every player program implements, and the agent registry by spec.

An agent spec is ``NAME`` or ``NAME:BUDGET``: ``random``, ``greedy``, ``mcts:2s`` (seconds per
move), ``mcts:500ms``, ``mcts:20000`` (iterations), ``alphabeta:50000`` (nodes).
"""

from __future__ import annotations

import random
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from agon.core.errors import AgonError, quoted
from agon.core.game import Game, Move, State


@dataclass(frozen=True)
class Budget:
    """How much an agent may think per move: seconds, or a count of iterations/nodes."""

    seconds: float | None = None
    count: int | None = None

    @classmethod
    def parse(cls, text: str) -> Budget:
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*", text.lower())
        if not match:
            raise AgonError(
                f"budget {quoted(text)} must be a time like '2s' or '500ms', "
                "or a count like '20000'"
            )
        value, unit = float(match.group(1)), match.group(2)
        if unit == "s":
            budget = cls(seconds=value)
        elif unit == "ms":
            budget = cls(seconds=value / 1000)
        else:
            if not value.is_integer():
                raise AgonError(f"a count budget must be a whole number, not {quoted(text)}")
            budget = cls(count=int(value))
        if (budget.seconds or budget.count or 0) <= 0:
            raise AgonError(f"budget {quoted(text)} must be positive")
        return budget

    def __str__(self) -> str:
        if self.seconds is not None:
            return f"{self.seconds:g}s"
        return str(self.count)


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
    def analyse(self, state: State) -> Analysis:
        """Think about ``state`` (which it does not change) and report."""

    def choose(self, state: State) -> Move:
        return self.analyse(state).best_move

    def reset(self) -> None:  # noqa: B027 - most agents keep nothing between games
        """Forget everything learned in the current game (a new game starts)."""


class RandomAgent(Agent):
    """Plays uniformly among the legal moves, passing only when nothing else is legal."""

    def __init__(self, game: Game, seed: int | None = None) -> None:
        super().__init__(game, seed)
        self.rng = random.Random(seed)

    @property
    def spec(self) -> str:
        return "random"

    def analyse(self, state: State) -> Analysis:
        moves = state.legal_moves()
        if not moves:
            raise AgonError("the game is over: there is no move to choose")
        placements = [m for m in moves if m != self.game.pass_move]
        return Analysis(best_move=self.rng.choice(placements or moves))

    def reset(self) -> None:
        self.rng = random.Random(self.seed)
