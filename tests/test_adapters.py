"""The OpenSpiel and PettingZoo adapters replay Agon's reference games move for move."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pyspiel
import pytest
from hypothesis import given, settings
from open_spiel.python.algorithms import mcts, minimax
from pettingzoo.test import api_test

from agon.adapters import (
    max_game_length,
    observation_planes,
    outcome,
    plane_names,
)
from agon.adapters import openspiel as spiel_adapter
from agon.adapters import pettingzoo as zoo_adapter
from agon.adapters.in_play import TwinGameInPlay
from agon.core.errors import AgonError, IllegalMove, PositionError
from agon.core.game import Game, State
from agon.games import make_game
from agon.games.alak.observation import PLANES as ALAK_PLANES
from agon.games.alternator.observation import PLANES as ALTERNATOR_PLANES
from agon.search.registry import make_agent
from strategies import played_states, replay_states, variants

SETTINGS = settings(max_examples=25, deadline=None)


def reference_value(state: State) -> float:
    """Black's game-theoretic result (+1, 0, −1) by plain negamax over reference states."""
    if state.is_over:
        return outcome(state)
    sign = 1.0 if state.to_move == 0 else -1.0
    best = -1.0
    for move in state.legal_moves():
        state.play(move)
        best = max(best, sign * reference_value(state))
        state.undo()
    return sign * best


# --- shared observation planes ------------------------------------------------------------------


def test_alternator_planes_show_roots_stems_colours_and_turn() -> None:
    game = make_game("alternator", {"width": 3, "height": 2})
    state = game.new_state()
    state.play_text("a1-b1")  # a1 becomes a pit pointing east; b1 a root of size 2
    planes = observation_planes(state)
    assert planes.shape == (len(ALTERNATOR_PLANES), 2, 3) == (9, 2, 3)
    plane = dict(zip(ALTERNATOR_PLANES, planes, strict=True))
    assert plane["root"].tolist() == [[0, 1, 1], [1, 1, 1]]
    assert plane["tree_size"][0, 1] == pytest.approx(2 / 6)
    assert plane["stem_east"][0, 0] == 1 and plane["stem_east"].sum() == 1
    assert plane["stem_north"].sum() == plane["stem_south"].sum() == plane["stem_west"].sum() == 0
    assert plane["dark_cell"].tolist() == [[1, 0, 1], [0, 1, 0]]
    assert not plane["black_to_move"].any() and not plane["last_move_passed"].any()
    state.play(game.pass_move)  # type: ignore[arg-type]
    plane = dict(zip(ALTERNATOR_PLANES, observation_planes(state), strict=True))
    assert plane["black_to_move"].all() and plane["last_move_passed"].all()


def test_alak_forbidden_plane_marks_the_point_just_captured() -> None:
    # RULES.md, Baljeu's example: g was just captured, so x may play b or e but not g.
    game = make_game("alak", {"size": 7})
    state = game.parse_position("o.xo.o. x captured=7")
    plane = dict(zip(ALAK_PLANES, observation_planes(state), strict=True))
    assert plane["black_stone"].tolist() == [0, 0, 1, 0, 0, 0, 0]
    assert plane["white_stone"].tolist() == [1, 0, 0, 1, 0, 1, 0]
    assert plane["empty"].tolist() == [0, 1, 0, 0, 1, 0, 1]
    assert plane["forbidden"].tolist() == [0, 0, 0, 0, 0, 0, 1]
    assert plane["black_to_move"].all()


def test_alak_prisoner_planes_count_captures_over_the_board_length() -> None:
    game = make_game("alak", {"size": 4, "rules": "traditional"})
    state = game.parse_position("xo.. x prisoners=3,1")
    plane = dict(zip(ALAK_PLANES, observation_planes(state), strict=True))
    assert plane["black_prisoners"].tolist() == [0.75] * 4
    assert plane["white_prisoners"].tolist() == [0.25] * 4


def test_game_length_bounds() -> None:
    assert max_game_length(make_game("alternator", {"width": 3, "height": 3})) == 18
    assert max_game_length(make_game("alak", {"size": 5})) == 3**5
    assert max_game_length(make_game("alak", {"size": 5, "rules": "tromp-taylor"})) == 2 * 3**5
    assert max_game_length(make_game("alak", {"size": 5, "rules": "traditional"})) == 4 * 3**5
    assert max_game_length(make_game("alak", {"size": 40})) == 2**31 - 1


@SETTINGS
@given(played_states(variants(), max_plies=150, to_the_end=True))
def test_random_games_never_exceed_the_length_bound(state: State) -> None:
    assert len(state.history) <= max_game_length(state.game)
    assert observation_planes(state).shape[0] == len(plane_names(state.game))


# --- OpenSpiel -----------------------------------------------------------------------------------


def test_openspiel_loads_games_by_name_with_parameters() -> None:
    game = pyspiel.load_game("python_agon_alternator(width=3,height=3)")
    assert game.num_distinct_actions() == 4 * 9 + 1
    assert game.max_game_length() == 18
    assert game.observation_tensor_shape() == [9, 3, 3]
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    alak = pyspiel.load_game("python_agon_alak(size=6,rules=traditional,komi=0.5)")
    assert alak.agon_game == make_game("alak", {"size": 6, "rules": "traditional", "komi": 0.5})
    assert alak.num_distinct_actions() == 7
    default = pyspiel.load_game("python_agon_alak")
    assert default.agon_game == make_game("alak")


def test_openspiel_refuses_bad_parameters_with_agon_messages() -> None:
    with pytest.raises(AgonError, match="1 to 40 points"):
        pyspiel.load_game("python_agon_alak(size=0)")
    with pytest.raises(AgonError, match="no komi"):
        pyspiel.load_game("python_agon_alak(komi=1.5)")
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter"):
        pyspiel.load_game("python_agon_alternator(depth=3)")


@SETTINGS
@given(played_states(variants(), max_plies=150, to_the_end=True))
def test_openspiel_replays_reference_games(reference: State) -> None:
    game = spiel_adapter.load(reference.game)
    state = game.new_initial_state()
    for snapshot, move in zip(replay_states(reference), [*reference.history, None], strict=True):
        assert str(state) == snapshot.position()
        assert state.is_terminal() == snapshot.is_over
        assert not state.is_chance_node()
        assert pyspiel.State.is_chance_node(state) is False  # (OpenSpiel's own answer agrees)
        if snapshot.is_over:
            assert state.current_player() == pyspiel.PlayerId.TERMINAL
        else:
            assert state.current_player() == snapshot.to_move
            assert state.legal_actions() == snapshot.legal_moves()
            mask = state.legal_actions_mask()
            assert [a for a, legal in enumerate(mask) if legal] == snapshot.legal_moves()
        assert np.array_equal(
            np.reshape(state.observation_tensor(0), game.observation_tensor_shape()),
            observation_planes(snapshot),
        )
        if move is not None:
            assert state.action_to_string(move) == reference.game.format_move(move)
            state.apply_action(move)
    black = outcome(reference)
    assert state.returns() == [black, -black]
    assert state.margin() == reference.margin
    if reference.is_over:
        assert black == {"B": 1.0, "W": -1.0, "d": 0.0}[reference.result[0]]  # type: ignore[index]


@pytest.mark.parametrize(
    "name",
    [
        "python_agon_alternator(width=3,height=3)",
        "python_agon_alternator(width=2,height=4,komi=0.0)",
        "python_agon_alak(size=7)",
        "python_agon_alak(size=6,edge_capture=False)",
        "python_agon_alak(size=5,rules=traditional)",
        "python_agon_alak(size=5,rules=tromp-taylor)",
    ],
)
def test_openspiel_random_simulation_test_passes(name: str) -> None:
    pyspiel.random_sim_test(pyspiel.load_game(name), num_sims=3, serialize=True, verbose=False)


def test_openspiel_states_clone_serialize_and_pickle() -> None:
    game = pyspiel.load_game("python_agon_alak(size=5,rules=traditional)")
    state = game.new_initial_state()
    for action in (1, 3, 5, 2):
        state.apply_action(action)
    twin = state.clone()
    twin.apply_action(4)
    assert state.history() == [1, 3, 5, 2] and twin.history() == [1, 3, 5, 2, 4]
    serialized = pyspiel.serialize_game_and_state(game, state)
    _, restored = pyspiel.deserialize_game_and_state(serialized)
    assert str(restored) == str(state)
    assert str(pickle.loads(pickle.dumps(state))) == str(state)


def test_a_game_longer_than_the_twins_room_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A twin's state array holds only so many plies: a longer game goes on in a new array,
    made from the reference state (the history the rules read included)."""
    from agon.games.alak import fast

    monkeypatch.setattr(fast, "history_margin", lambda size: 2)
    game = make_game("alak", {"size": 9, "rules": "tromp-taylor"})
    state = spiel_adapter.load(game).new_initial_state()
    reference = game.new_state()
    for move in (0, 8, 1, 7, 2, 6):  # (the room of 2 filled three times)
        state.apply_action(move)
        reference.play(move)
        assert str(state) == reference.position()
        assert state.legal_actions() == reference.legal_moves()


@pytest.mark.parametrize(
    "name",
    ["python_agon_alternator(width=3,height=3)", "python_agon_alak(size=6,rules=traditional)",
     "python_agon_alak(size=5)", "python_agon_alak(size=5,rules=tromp-taylor)"],
)
def test_games_from_the_start_share_its_array_until_their_first_move(name: str) -> None:
    """A clone is a new initial state with the original's attributes copied in: the new state
    no longer copies the start's array (1.4 MB on Alak 15) only to have it replaced. Nothing a
    game reads changes the shared array, and a game's first move plays on its own copy."""
    game = pyspiel.load_game(name)
    state = game.new_initial_state()
    start = state._played._array
    before = start.copy()
    clone = state.clone()
    assert clone._played._array is start and game.new_initial_state()._played._array is start
    for asked in (state.legal_actions, state.returns, state.is_terminal, state.current_player,
                  lambda: state.observation_tensor(0), lambda: str(state)):
        asked()
    first = state.legal_actions()[0]
    state.apply_action(first)
    assert state._played._array is not start and np.array_equal(start, before)
    clone.apply_action(clone.legal_actions()[-1])
    for copy, move in ((state, first), (clone, clone.history()[0])):
        reference = game.agon_game.new_state()
        reference.play(move)
        assert str(copy) == reference.position()
    assert str(game.new_initial_state()) == game.agon_game.new_state().position()


def test_openspiel_illegal_action_raises_the_rule() -> None:
    state = pyspiel.load_game("python_agon_alak(size=5)").new_initial_state()
    state.apply_action(2)
    before = str(state)
    with pytest.raises(IllegalMove, match="occupied"):
        state.apply_action(2)
    assert str(state) == before and state.legal_actions() == [0, 1, 3, 4]


@pytest.mark.parametrize(
    "name",
    ["python_agon_alternator(width=3,height=3)", "python_agon_alak(size=6,rules=traditional)"],
)
def test_openspiel_plays_on_the_fast_twin_and_clones_apart(name: str) -> None:
    """A game with a twin is played on it; a clone, a pickled copy and the original then go
    their own ways, each the reference rules' game of its own moves."""
    game = pyspiel.load_game(name)
    state = game.new_initial_state()
    assert isinstance(state._played, TwinGameInPlay)
    state.apply_action(state.legal_actions()[0])
    state.observation_tensor(0)  # (builds the reference state: the copies must not share it)
    copies = [state, state.clone(), pickle.loads(pickle.dumps(state))]
    for index, copy in enumerate(copies):
        for _ in range(3):
            if not copy.is_terminal():
                legal = copy.legal_actions()
                copy.apply_action(legal[index % len(legal)])
    for copy in copies:
        reference = game.agon_game.new_state()
        for action in copy.history():
            reference.play(action)
        assert str(copy) == reference.position() == copy.agon_state.position()
        assert copy.legal_actions() == reference.legal_moves()
        assert np.array_equal(
            np.reshape(copy.observation_tensor(0), game.observation_tensor_shape()),
            observation_planes(reference),
        )
    assert len({tuple(copy.history()) for copy in copies}) > 1


@pytest.mark.parametrize(
    "name",
    [
        "python_agon_alternator(width=2,height=2,komi=0.5)",
        "python_agon_alternator(width=3,height=2,komi=0.5)",
        "python_agon_alternator(width=3,height=2,komi=1.0)",
        "python_agon_alak(size=5)",
        "python_agon_alak(size=4,edge_capture=False)",
    ],
)
@pytest.mark.slow
def test_openspiel_minimax_agrees_with_reference_negamax(name: str) -> None:
    game = pyspiel.load_game(name)
    value, _ = minimax.alpha_beta_search(game, maximum_depth=100, maximizing_player_id=0)
    assert value == reference_value(game.agon_game.new_state())


def test_openspiel_mcts_bot_finds_baljeus_capture() -> None:
    # RULES.md: in x x . x x o ., o to move, o at c captures four stones (and wins).
    game = pyspiel.load_game("python_agon_alak(size=7)")
    state = game.state_from_position("xx.xxo. o")
    bot = mcts.MCTSBot(
        game,
        uct_c=2.0,
        max_simulations=300,
        evaluator=mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)),
        random_state=np.random.RandomState(1),
        solve=True,
    )
    root = bot.mcts_search(state)
    assert root.outcome == [-1.0, 1.0]
    assert state.action_to_string(root.best_child().action) == "3"


def test_openspiel_mcts_bot_plays_legal_moves() -> None:
    game = pyspiel.load_game("python_agon_alternator(width=3,height=3)")
    bot = mcts.MCTSBot(
        game, 2.0, 50, mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)),
        random_state=np.random.RandomState(2),
    )
    state = game.new_initial_state()
    for _ in range(4):
        action = bot.step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
    assert len(state.agon_state.history) == 4


def test_openspiel_bad_position_text_is_an_agon_error() -> None:
    with pytest.raises(PositionError):
        pyspiel.load_game("python_agon_alak(size=7)").state_from_position("xx. o")


# --- PettingZoo ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "game",
    [
        make_game("alternator", {"width": 3, "height": 3}),
        make_game("alak", {"size": 7}),
        make_game("alak", {"size": 6, "rules": "traditional"}),
        make_game("alak", {"size": 5, "rules": "tromp-taylor", "komi": 0.5}),
    ],
)
def test_pettingzoo_api_test_passes(game: Game) -> None:
    with warnings.catch_warnings():
        # api_test's advice that does not fit board games: agent names other than
        # "player_N", and dict observations (what PettingZoo's own classic games give)
        warnings.simplefilter("ignore", UserWarning)
        api_test(zoo_adapter.env(game), num_cycles=100)


@SETTINGS
@given(played_states(variants(), max_plies=150, to_the_end=True))
def test_pettingzoo_replays_reference_games(reference: State) -> None:
    environment = zoo_adapter.env(reference.game)
    assert isinstance(environment._played, TwinGameInPlay)  # (the built-in games have twins)
    for snapshot, move in zip(replay_states(reference), reference.history, strict=False):
        agent = environment.agent_selection
        assert agent == ("black", "white")[snapshot.to_move]  # type: ignore[index]
        observation, reward, terminated, truncated, _ = environment.last()
        assert (reward, terminated, truncated) == (0.0, False, False)
        assert np.flatnonzero(observation["action_mask"]).tolist() == snapshot.legal_moves()
        assert not environment.observe(("white", "black")[snapshot.to_move])["action_mask"].any()  # type: ignore[index]
        assert np.array_equal(observation["observation"], observation_planes(snapshot))
        environment.step(np.int64(move))
    black = outcome(reference)
    if reference.is_over:
        final = {"black": black, "white": -black}
        for _ in range(2):
            _, reward, terminated, _, _ = environment.last(observe=False)
            assert terminated and reward == final[environment.agent_selection]
            environment.step(None)
        assert environment.agents == []
    else:
        assert not any(environment.terminations.values())


def test_pettingzoo_illegal_action_raises_and_changes_nothing() -> None:
    environment = zoo_adapter.env("alak", size=5)
    environment.step(2)
    before = environment.state_now.position()
    with pytest.raises(IllegalMove, match="occupied"):
        environment.step(2)
    with pytest.raises(AgonError, match="to move"):
        environment.step(None)
    assert environment.state_now.position() == before
    assert environment.agent_selection == "white"


def test_pettingzoo_starts_from_a_position_and_scores_the_end() -> None:
    environment = zoo_adapter.env("alak", size=7)
    environment.reset(options={"position": "xx.xxo. o"})
    assert environment.agent_selection == "white"
    environment.step(6)  # RULES.md: o at g lets x play c and win 5–2
    environment.step(2)
    assert environment.state_now.result == "B+3"
    assert environment.rewards == {"black": 1.0, "white": -1.0}
    assert all(environment.terminations.values())


def test_pettingzoo_refuses_bad_arguments() -> None:
    with pytest.raises(AgonError, match="unknown game"):
        zoo_adapter.env("chess")
    with pytest.raises(AgonError, match="render_mode"):
        zoo_adapter.env("alak", render_mode="rgb_array")
    with pytest.raises(AgonError, match="with a game name"):
        zoo_adapter.env(make_game("alak"), size=5)
    finished = "xo x"  # baljeu: x to move with no empty point is a finished game
    with pytest.raises(AgonError, match="already over"):
        zoo_adapter.env("alak", size=2).reset(options={"position": finished})


def test_pettingzoo_renders_text() -> None:
    environment = zoo_adapter.env("alternator", width=3, height=2, render_mode="ansi")
    assert "Black to move" in environment.render()  # type: ignore[operator]


# --- OpenSpiel's MCTSBot as an agent --------------------------------------------------------------


def test_openspiel_mcts_agent_finds_baljeus_capture_and_repeats_with_its_seed() -> None:
    game = make_game("alak", {"size": 7})
    state = game.parse_position("xx.xxo. o")
    analyses = [make_agent("openspiel-mcts:300", game, seed=3).analyse(state) for _ in range(2)]
    assert game.format_move(analyses[0].best_move) == "3"  # (captures four stones and wins)
    assert analyses[0].proven and analyses[0].win_rate == 1.0
    assert analyses[0].work <= 300  # (MCTSBot stops once the root is solved)
    assert analyses[0].principal_variation == analyses[1].principal_variation
    assert state.position() == "xx.xxo. o"  # (unchanged)


def test_openspiel_mcts_agent_by_time_plays_legal_moves_to_the_end() -> None:
    """A time budget: the first move measures the speed on a short search, then each move
    runs as many simulations as its time holds (at least two: one fails in MCTSBot)."""
    game = make_game("alternator", {"width": 3, "height": 3})
    agent = make_agent("openspiel-mcts:20ms", game, seed=1)
    assert agent.spec == "openspiel-mcts:0.02s"
    state = game.new_state()
    while not state.is_over:
        analysis = agent.analyse(state)
        assert analysis.work >= 2 and analysis.best_move in state.legal_moves()
        state.play(analysis.best_move)


def test_agon_match_plays_openspiel_mcts_in_worker_processes() -> None:
    """Spawned workers find the agent by its entry point too."""
    result = subprocess.run(
        [sys.executable, "-c", "from agon.cli import main; main()", "match", "alak",
         "openspiel-mcts:30", "random",
         "--size", "5", "--games", "2", "--jobs", "2", "--seed", "1", "--json"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["games"], report["interrupted"]) == (2, False)
