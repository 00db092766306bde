"""The greedy agent: the move with the best immediate score, looking no further."""

from __future__ import annotations

import random
import time

import numpy as np

from agon.core.game import Game, State
from agon.core.limits import Limit
from agon.search.agent import Analysis
from agon.search.base import FastAgent
from agon.search.kernels import score_moves


class GreedyAgent(FastAgent):
    """Plays each legal move on the twin and keeps the one whose margin is best for the mover;
    ties go to the better ``evaluate``, then to a placement over a pass, then to chance.

    ``Analysis.value`` is the mover's margin right after the chosen move; ``proven`` when that
    move ends the game with a win. It takes no limit: one ply costs next to nothing.
    """

    name = "greedy"

    def __init__(self, game: Game, limit: Limit | None = None, seed: int | None = None) -> None:
        super().__init__(game, limit, seed)
        self.margins = np.empty(self.twin.num_actions, dtype=np.float64)
        self.estimates = np.empty(self.twin.num_actions, dtype=np.float64)
        self.rng = random.Random(seed)

    @property
    def spec(self) -> str:
        return self.name

    def reset(self) -> None:
        super().reset()
        self.rng = random.Random(self.seed)

    def analyse(self, state: State, limit: Limit | None = None) -> Analysis:
        start = time.perf_counter()
        root = self.root(state)
        kernels, twin = self.kernels, self.twin
        count = score_moves(
            kernels.legal_moves, kernels.play, kernels.undo, kernels.end_code, kernels.margin,
            kernels.evaluate, twin.params, root, self.moves, self.margins, self.estimates,
        )
        sign = 1.0 if state.to_move == 0 else -1.0
        candidates = [
            (
                sign * float(self.margins[i]),
                sign * float(self.estimates[i]),
                int(self.moves[i]) != self.pass_move,
                self.rng.random(),
                int(self.moves[i]),
            )
            for i in range(count)
        ]
        margin, _, _, _, move = max(candidates)
        twin.play(twin.params, root, move)
        won = twin.end_code(twin.params, root) != 0 and margin > 0
        return Analysis(
            best_move=move,
            value=margin,
            principal_variation=[move],
            work=count,
            seconds=time.perf_counter() - start,
            proven=won,
            win_rate=1.0 if won else None,
        )
