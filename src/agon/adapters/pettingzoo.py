"""Agon's games as PettingZoo AEC environments: ``env(name, **options)``, for any game the
registry lists.

Agents ``"black"`` and ``"white"`` take turns as the rules say (a pass is a move). Each observes
``{"observation": planes, "action_mask": int8 mask}``; the mask is all zeros for the agent not
to move. Rewards are 0 until the game ends, then +1 / −1 / 0 by the result; games always end, so
nothing is ever truncated. An illegal action raises :class:`~agon.core.errors.IllegalMove` (an
``AgonError``) naming the rule, and changes nothing.
Every rule is the Agon rules engine's. See docs/adapters.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from agon.adapters import (
    AGENTS,
    observation_planes,
    observation_shape,
    plane_names,
    unbounded_planes,
)
from agon.adapters.in_play import in_play
from agon.core.errors import AgonError, quoted
from agon.core.game import Game, State
from agon.core.player import Player
from agon.games import make_game, renderer

Observation = dict[str, np.ndarray]
RENDER_MODES = ("human", "ansi")


class AgonEnv(AECEnv[str, Observation, int | np.integer[Any]]):  # type: ignore[misc]
    """One Agon variant as an AEC environment, played on the game's fast twin where it has
    one (:mod:`agon.adapters.in_play`); ``state_now`` is the Agon state being played."""

    def __init__(self, game: Game, render_mode: str | None = None) -> None:
        super().__init__()
        if render_mode not in (None, *RENDER_MODES):
            raise AgonError(
                f"render_mode must be 'human', 'ansi' or None, not {quoted(render_mode)}"
            )
        self.game = game
        self.render_mode = render_mode
        self.metadata = {
            "name": f"agon_{game.name}_v0",
            "render_modes": list(RENDER_MODES),
            "is_parallelizable": False,
        }
        self.possible_agents = list(AGENTS)
        shape = observation_shape(game)
        plane_high = np.ones(shape, dtype=np.float32)
        for index, name in enumerate(plane_names(game)):
            if name in unbounded_planes(game):
                plane_high[index] = np.inf
        space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, plane_high, shape, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (game.num_actions,), dtype=np.int8),
            }
        )
        self._observation_spaces = dict.fromkeys(AGENTS, space)
        self._action_spaces = dict.fromkeys(AGENTS, spaces.Discrete(game.num_actions))
        self.reset()

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start again; ``options={"position": text}`` starts from a position text.

        ``seed`` is accepted for the API and unused: the games have no chance.
        """
        position = (options or {}).get("position")
        start = None if position is None else self.game.parse_position(position)
        if start is not None and start.to_move is None:
            raise AgonError("the starting position is already over")
        self._played = in_play(self.game, start)
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in AGENTS}
        self.agent_selection = AGENTS[self._played.to_move]

    @property
    def state_now(self) -> State:
        """The Agon state being played."""
        return self._played.reference()

    def observe(self, agent: str) -> Observation:
        mask = np.zeros(self.game.num_actions, dtype=np.int8)
        if self._played.to_move >= 0 and AGENTS[self._played.to_move] == agent:
            mask[self._played.legal_moves()] = 1
        return {"observation": observation_planes(self.state_now), "action_mask": mask}

    def state(self) -> np.ndarray:
        return observation_planes(self.state_now)

    def step(self, action: int | np.integer[Any] | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise AgonError(f"{agent} is to move: None is only for agents whose game is over")
        self._played.play(int(action))
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if self._played.to_move < 0:
            black = self._played.outcome
            self.rewards = {"black": black, "white": -black}
            self.terminations = dict.fromkeys(self.agents, True)
            self.agent_selection = AGENTS[Player[agent.upper()].other]
        else:
            self.agent_selection = AGENTS[self._played.to_move]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        text = renderer(self.game).render_text(self.state_now)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release: rendering is text."""


def env(game: Game | str, render_mode: str | None = None, **options: Any) -> AgonEnv:
    """An environment for ``game``: an Agon game, or a name with its options as keywords."""
    if isinstance(game, str):
        game = make_game(game, options)
    elif options:
        raise AgonError("give options with a game name, not with a Game object")
    return AgonEnv(game, render_mode)


__all__ = ["AgonEnv", "env"]
