"""Agon's games as OpenSpiel Python games: importing this module registers every game in the
registry with pyspiel, as ``python_agon_<name>``, its parameters the game's options.

``pyspiel.load_game("python_agon_<name>(<option>=<value>,...)")`` then gives a game that every
OpenSpiel algorithm can play. Every rule is the Agon rules engine's: a state plays on the
game's fast twin where it has one (the reference rules' answers, tested move by move, at the
twin's speed; :mod:`agon.adapters.in_play`) and on the reference rules otherwise. Actions
are Agon's action numbers. Returns are +1/−1/0 by the result, zero-sum;
:meth:`AgonState.margin` gives the points. See docs/adapters.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import pyspiel
from open_spiel.python.observation import IIGObserverForPublicInfoGame

from agon.adapters import max_game_length, observation_planes, observation_shape
from agon.adapters.in_play import GameInPlay, in_play
from agon.core.errors import AgonError
from agon.core.game import Game, State
from agon.core.options import Option
from agon.core.plugin import GamePlugin
from agon.games import make_game, plugins

PREFIX = "python_agon_"
"""OpenSpiel's name of an Agon game is this and the game's name."""


def _game_type(short_name: str, title: str, defaults: Mapping[str, Any]) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=short_name,
        long_name=f"Agon {title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=dict(defaults),
    )


class AgonGame(pyspiel.Game):  # type: ignore[misc]
    """An Agon variant for OpenSpiel; subclasses name the game and its parameters."""

    agon_name: ClassVar[str]
    game_type: ClassVar[pyspiel.GameType]

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        options = {**self.game_type.parameter_specification, **(params or {})}
        agon_game = make_game(self.agon_name, options)
        info = pyspiel.GameInfo(
            num_distinct_actions=agon_game.num_actions,
            max_chance_outcomes=0,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=max_game_length(agon_game),
        )
        super().__init__(self.game_type, info, dict(params or {}))
        self.agon_game: Game = agon_game

    def new_initial_state(self) -> AgonState:
        return AgonState(self, in_play(self.agon_game))

    def state_of(self, agon_state: State) -> AgonState:
        """The OpenSpiel state of an Agon state of this variant (copied: the Agon state may go
        on); its OpenSpiel history starts there."""
        return AgonState(self, in_play(self.agon_game, agon_state.copy()))

    def state_from_position(self, text: str) -> AgonState:
        """A state from an Agon position text (``PositionError`` if it cannot be read)."""
        return AgonState(self, in_play(self.agon_game, self.agon_game.parse_position(text)))

    def make_py_observer(
        self, iig_obs_type: Any = None, params: Mapping[str, Any] | None = None
    ) -> Any:
        # Perfect information: the position observes everything; an information state with
        # perfect recall is the public history of actions, as for OpenSpiel's own board games.
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return PlanesObserver(self.agon_game, params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class AgonState(pyspiel.State):  # type: ignore[misc]
    """An OpenSpiel state that asks every rule of the game it plays (:mod:`agon.adapters.in_play`:
    on the game's fast twin where it has one)."""

    def __init__(self, game: AgonGame, played: GameInPlay) -> None:
        super().__init__(game)
        self._played = played

    @property
    def agon_state(self) -> State:
        """The Agon reference state of the moves played (built when first asked for)."""
        return self._played.reference()

    def current_player(self) -> int:
        player = self._played.to_move
        return TERMINAL if player < 0 else player

    def _legal_actions(self, player: int) -> list[int]:
        return self._played.legal_moves()

    def legal_actions(self, player: int | None = None) -> list[int]:
        """As OpenSpiel's, answered here: through OpenSpiel's C++ the list is converted twice,
        which costs more than finding it on a fast twin."""
        played = self._played
        if played.to_move < 0 or (player is not None and player != played.to_move):
            return []
        return list(played.legal_moves())

    def is_chance_node(self) -> bool:
        """Never: Agon's games have no chance (their OpenSpiel type says so). Answered here
        rather than through OpenSpiel's C++, which asks :meth:`current_player` back."""
        return False

    def _apply_action(self, action: int) -> None:
        self._played.play(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        return self._played.game.format_move(int(action))

    def is_terminal(self) -> bool:
        return self._played.to_move < 0

    def returns(self) -> list[float]:
        black = self._played.outcome
        return [black, -black]

    def margin(self) -> float:
        """Black's points minus White's, komi included (final once the game is over)."""
        return self._played.margin

    def __str__(self) -> str:
        return self._played.position()


TERMINAL = int(pyspiel.PlayerId.TERMINAL)


class PlanesObserver:
    """OpenSpiel's observer protocol over :func:`agon.adapters.observation_planes`."""

    def __init__(self, game: Game, params: Mapping[str, Any] | None) -> None:
        if params:
            raise AgonError(f"the Agon observer takes no parameters, not {dict(params)}")
        shape = observation_shape(game)
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state: AgonState, player: int) -> None:
        self.dict["observation"][...] = observation_planes(state.agon_state)

    def string_from(self, state: AgonState, player: int) -> str:
        return state.agon_state.position()


def parameter_default(option: Option) -> Any:
    """An option's default as an OpenSpiel parameter (a bool, int, float or string)."""
    if option.kind in ("choice", "text"):
        return option.text(option.default)
    if option.kind == "number":
        return float(option.default)
    return option.default


def game_class(plugin: GamePlugin[Any, Any]) -> type[AgonGame]:
    """The OpenSpiel game class of an Agon game: its parameters are the game's options."""
    defaults = {
        option.name: parameter_default(option)
        for option in plugin.game.option_specs if not option.shortcut
    }
    return type(
        f"{plugin.game.__name__}Game",
        (AgonGame,),
        {"agon_name": plugin.name, "game_type": _game_type(PREFIX + plugin.name, plugin.title,
                                                           defaults)},
    )


def load(game: Game) -> AgonGame:
    """The OpenSpiel game of an Agon variant: ``load(make_game(name, options))``."""
    register_games()  # (a game registered since this module was imported)
    game_class = _BY_AGON_NAME.get(game.name)
    if game_class is None:
        raise AgonError(f"{game.title} has no OpenSpiel adapter")
    loaded: AgonGame = pyspiel.load_game(game_class.game_type.short_name, game.options())
    return loaded


_BY_AGON_NAME: dict[str, type[AgonGame]] = {}


def register_games() -> None:
    """Register with pyspiel every game of the registry not yet registered (importing this
    module registers those there are; :func:`agon.games.register` may add more since)."""
    for name, plugin in plugins().items():
        if name not in _BY_AGON_NAME:
            _BY_AGON_NAME[name] = game_class(plugin)
            pyspiel.register_game(_BY_AGON_NAME[name].game_type, _BY_AGON_NAME[name])


register_games()

__all__ = ["PREFIX", "AgonGame", "AgonState", "game_class", "load", "register_games"]
