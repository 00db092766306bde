"""OpenSpiel's MCTSBot as an Agon agent, ``openspiel-mcts``: a baseline Agon did not write,
playing through the OpenSpiel adapter (on the game's fast twin where it has one).

Its settings are the common ones: UCT with ``uct_c`` 2, one uniformly random rollout per leaf,
MCTS-Solver on, a fresh tree every move. ``openspiel-mcts:2000`` runs 2,000 simulations a move;
``openspiel-mcts:1s`` runs as many as a second holds: MCTSBot takes only a number of
simulations, so the agent sets it from the speed of its earlier searches (the first move
measures it on a short search first). See docs/search.md.
"""

from __future__ import annotations

import time

import numpy as np
from open_spiel.python.algorithms import mcts

from agon.adapters.openspiel import AgonGame, AgonState, load
from agon.core.game import Game, Move, State
from agon.core.limits import Limit
from agon.search.agent import Agent, Analysis

UCT_C = 2.0
DEFAULT_LIMIT = Limit(count=1000)
PROBE_SIMULATIONS = 32
"""The first timed search measures the speed on this many simulations."""
MIN_SIMULATIONS = 2
"""MCTSBot fails on a search of one simulation whose root it cannot expand."""


class OpenSpielMctsAgent(Agent):
    """OpenSpiel's ``MCTSBot`` (:mod:`open_spiel.python.algorithms.mcts`)."""

    def __init__(self, game: Game, limit: Limit | None = None, seed: int | None = None) -> None:
        super().__init__(game, seed)
        self.limit = limit or DEFAULT_LIMIT
        self._spiel_game: AgonGame = load(game)
        self._spiel_game.new_initial_state()  # (its twin's kernels loaded now, not on a move)
        self._random = np.random.RandomState(np.random.MT19937(seed))  # (any seed Agon gives)
        self._evaluator = mcts.RandomRolloutEvaluator(1, self._random)
        self._seconds_a_simulation: float | None = None
        """Measured on the latest search."""

    @property
    def spec(self) -> str:
        budget = self.limit.count if self.limit.count is not None else f"{self.limit.seconds:g}s"
        return f"openspiel-mcts:{budget}"

    def analyse(self, state: State, limit: Limit | None = None) -> Analysis:
        spending = (limit or self.limit).start()
        spiel_state = self._spiel_game.state_of(state)
        root: mcts.SearchNode | None = None
        simulations = spending.units_left()
        if simulations is None:
            if self._seconds_a_simulation is None:
                root = self._search(spiel_state, PROBE_SIMULATIONS)
            assert self._seconds_a_simulation is not None
            simulations = int((spending.seconds_left() or 0.0) / self._seconds_a_simulation)
        if root is None or simulations > root.explore_count:
            root = self._search(spiel_state, max(simulations, MIN_SIMULATIONS))
        best = root.best_child()
        line: list[Move] = []
        node = root
        while node.children and node.explore_count > 1:
            node = node.best_child()
            line.append(int(node.action))
        if best.outcome is not None:  # (proven: its result, not its rollouts' mean)
            reward = float(best.outcome[best.player])
        else:
            reward = best.total_reward / best.explore_count if best.explore_count else 0.0
        return Analysis(
            best_move=int(best.action),
            principal_variation=line,
            work=root.explore_count,
            seconds=spending.elapsed,
            proven=root.outcome is not None,
            win_rate=(reward + 1) / 2,
        )

    def _search(self, spiel_state: AgonState, simulations: int) -> mcts.SearchNode:
        """A fresh tree of ``simulations`` simulations from ``spiel_state``; the speed kept."""
        bot = mcts.MCTSBot(
            self._spiel_game, UCT_C, simulations, self._evaluator, solve=True,
            random_state=self._random,
        )
        started = time.monotonic()
        root = bot.mcts_search(spiel_state)
        self._seconds_a_simulation = (time.monotonic() - started) / max(root.explore_count, 1)
        return root
