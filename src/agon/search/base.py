"""What the agents that think on a fast twin share: the twin, the budget, seeds, chunked work."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import ClassVar, Self

import numpy as np

from agon.core.errors import AgonError
from agon.core.fast import Array
from agon.core.game import Game, Move, State
from agon.search.agent import Agent, Budget
from agon.search.kernels import seed_rng
from agon.search.twins import kernels_for, pass_action, twin_for

CHUNK_SECONDS = 0.05
"""Aim of one kernel call under a time budget: short, so the clock and Ctrl-C are heard."""


class FastAgent(Agent):
    """An agent that thinks on the game's fast twin, within a budget per move."""

    name: ClassVar[str]
    default_budget: ClassVar[Budget | None] = None

    def __init__(self, game: Game, budget: Budget | None = None, seed: int | None = None) -> None:
        super().__init__(game, seed)
        self.twin = twin_for(game)
        self.kernels = kernels_for(self.twin)
        self.budget = budget or self.default_budget
        self.pass_move = pass_action(game)
        self.moves = np.empty(self.twin.num_actions, dtype=np.int64)
        self._seeds = random.Random(seed)

    @property
    def spec(self) -> str:
        return self.name if self.budget is None else f"{self.name}:{self.budget}"

    def reset(self) -> None:
        self._seeds = random.Random(self.seed)

    def warmed_up(self) -> Self:
        """This agent, after one tiny search: Numba loads (or compiles) its kernels now rather
        than on the clock of the first move."""
        state = self.game.new_state()
        if not state.is_over:
            budget, self.budget = self.budget, Budget(count=2)
            try:
                self.analyse(state)
            finally:
                self.budget = budget
            self.reset()
        return self

    def choose(self, state: State) -> Move:
        """A forced move is played without thinking; otherwise the analysis's best move."""
        moves = state.legal_moves()
        if len(moves) == 1:
            return moves[0]
        return super().choose(state)

    def root(self, state: State) -> Array:
        """The twin's array of ``state``; seeds compiled code's random generator for this move.

        A fresh seed per move, drawn from the agent's own seeded sequence, makes a seeded agent
        with a count budget repeat its games exactly, whatever else runs in the process.
        """
        if state.is_over:
            raise AgonError("the game is over: there is no move to choose")
        seed_rng(self._seeds.getrandbits(31))
        return self.twin.from_reference(state)


def spend(budget: Budget, step: Callable[[int], tuple[int, bool]], first_chunk: int) -> int:
    """Run ``step(n)`` (do up to ``n`` units of work; return units done and whether the search
    is finished) in chunks until the budget is spent; returns the units done.

    Under a time budget each chunk aims at :data:`CHUNK_SECONDS`; under a count budget the
    chunks add up to the count exactly, so that the result does not depend on the clock.
    """
    start = time.perf_counter()
    done = 0
    chunk = first_chunk
    first = True
    while True:
        if budget.count is not None:
            want = min(chunk, budget.count - done)
        else:
            assert budget.seconds is not None
            # the first chunk always runs: a budget shorter than it still gets a move chosen
            in_time = first or time.perf_counter() - start < budget.seconds
            want = chunk if in_time else 0
        if want <= 0:
            return done
        chunk_start = time.perf_counter()
        ran, finished = step(want)
        done += ran
        first = False
        if finished:
            return done
        elapsed = time.perf_counter() - chunk_start
        if ran > 0 and elapsed > 0:
            chunk = max(1, min(4 * chunk, int(ran * CHUNK_SECONDS / elapsed)))
        if budget.seconds is not None:
            remaining = budget.seconds - (time.perf_counter() - start)
            if ran > 0 and elapsed > 0:
                chunk = max(1, min(chunk, int(ran * remaining / elapsed) + 1))
