"""What the agents that think on a fast twin share: the twin, the limit, seeds, chunks of work."""

from __future__ import annotations

import random
from typing import ClassVar, Self

import numpy as np

from agon.core.errors import AgonError
from agon.core.fast import Array
from agon.core.game import Game, Move, State
from agon.core.limits import Chunks, Limit
from agon.search.agent import Agent
from agon.search.kernels import seed_rng
from agon.search.twins import kernels_for, pass_action, twin_for

CHUNK_SECONDS = 0.05
"""Aim of one kernel call: short, so the clock and Ctrl-C are heard."""
CHUNK_GROWTH = 4
"""A chunk is at most this many times larger than the last (the first, small one's speed
includes loading the kernels)."""


class FastAgent(Agent):
    """An agent that thinks on the game's fast twin, within a limit per move."""

    name: ClassVar[str]
    default_limit: ClassVar[Limit | None] = None

    def __init__(self, game: Game, limit: Limit | None = None, seed: int | None = None) -> None:
        super().__init__(game, seed)
        self.twin = twin_for(game)
        self.kernels = kernels_for(self.twin)
        self.limit = limit or self.default_limit
        """The limit of each move where a call gives none (the spec's budget)."""
        self.pass_move = pass_action(game)
        self.moves = np.empty(self.twin.num_actions, dtype=np.int64)
        self._seeds = random.Random(seed)

    @property
    def spec(self) -> str:
        return self.name if self.limit is None else f"{self.name}:{self.limit}"

    def reset(self) -> None:
        self._seeds = random.Random(self.seed)

    def _keys(self, array: Array) -> tuple[int, int]:
        """The twin's keys of a position (its own, its history's), by the twin's compiled
        kernels: the search's, called from Python, would run as Python."""
        twin = self.twin
        return int(twin.key(twin.params, array)), int(twin.history_key(twin.params, array))

    def warmed_up(self) -> Self:
        """This agent, after tiny searches of the start and of the position after its first
        move: Numba loads (or compiles) its kernels now, those of a search that goes on from an
        earlier move's (a tree or table kept) too, rather than on the clock of a move."""
        state = self.game.new_state()
        for _ in range(2):
            if state.is_over:
                break
            state.play(self.analyse(state, Limit(count=2)).best_move)
        self.reset()
        return self

    def choose(self, state: State, limit: Limit | None = None) -> Move:
        """A forced move is played without thinking; otherwise the analysis's best move."""
        moves = state.legal_moves()
        if len(moves) == 1:
            return moves[0]
        return super().choose(state, limit)

    def limit_of(self, limit: Limit | None) -> Limit:
        """The limit a call spends: the one it gives, else the agent's own."""
        chosen = limit or self.limit
        assert chosen is not None, f"{self.name} needs a limit"
        return chosen

    @staticmethod
    def chunks(first: int) -> Chunks:
        """The chunks a search runs in, the first of ``first`` units."""
        return Chunks(first, CHUNK_SECONDS, growth=CHUNK_GROWTH)

    def root(self, state: State) -> Array:
        """The twin's array of ``state``; seeds compiled code's random generator for this move.

        A fresh seed per move, drawn from the agent's own seeded sequence, makes a seeded agent
        with a count limit repeat its games exactly, whatever else runs in the process.
        """
        if state.is_over:
            raise AgonError("the game is over: there is no move to choose")
        seed_rng(self._seeds.getrandbits(31))
        return self.twin.from_reference(state)
