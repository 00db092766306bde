"""The agents: legal play, reproducibility, tactics, proofs, tree reuse and the kernels."""

from __future__ import annotations

import time
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agon.core.errors import AgonError
from agon.core.game import Game, Move, State
from agon.core.limits import Limit
from agon.core.player import Player
from agon.games import make_game
from agon.search.agent import Agent
from agon.search.kernels import random_playouts
from agon.search.mcts import (
    AMAF_SCORE,
    AMAF_VISITS,
    CHILD_COUNT,
    FIRST_CHILD,
    MOVE,
    UNPROVEN,
    VISITS,
    MctsAgent,
    Tree,
    _select,
)
from agon.search.registry import AGENTS, make_agent
from agon.search.twins import kernels_for, pass_action, twin_for
from strategies import variants

SMALL_SPECS = ("random", "greedy", "mcts:60", "mcts-informed:60", "alphabeta:400")

ALTERNATOR_3X3 = make_game("alternator", {"size": "3x3", "komi": 0.5})
ALAK_6 = make_game("alak", {"size": 6})


def play_out(game: Game, black: Agent, white: Agent, state: State | None = None) -> list[Move]:
    """Play to the end through the rules engine (which refuses any illegal move)."""
    state = state or game.new_state()
    while not state.is_over:
        agent = black if state.to_move == 0 else white
        state.play(agent.choose(state))
    return state.history


def exact_margins(state: State) -> dict[Move, float]:
    """Each legal move's minimax margin for the player to move, on the reference rules."""
    memo: dict[object, float] = {}

    def black_margin(node: State) -> float:
        if node.is_over:
            return node.margin
        key = node.key()
        if key not in memo:
            values = []
            for move in node.legal_moves():
                node.play(move)
                values.append(black_margin(node))
                node.undo()
            memo[key] = max(values) if node.to_move == 0 else min(values)
        return memo[key]

    sign = 1 if state.to_move == 0 else -1
    margins = {}
    for move in state.legal_moves():
        state.play(move)
        margins[move] = sign * black_margin(state)
        state.undo()
    return margins


# --- every agent plays legal moves to the end ------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(game=variants(), black=st.sampled_from(SMALL_SPECS), white=st.sampled_from(SMALL_SPECS))
def test_agents_play_only_legal_moves(game: Game, black: str, white: str) -> None:
    moves = play_out(game, make_agent(black, game, seed=1), make_agent(white, game, seed=2))
    assert moves  # no variant here starts finished


@pytest.mark.parametrize("spec", [s for s in SMALL_SPECS if s != "random"])
@pytest.mark.parametrize(
    "game",
    [
        make_game("alternator", {"size": "4x3"}),
        make_game("alak", {"size": 7}),
        make_game("alak", {"size": 6, "rules": "traditional"}),
        make_game("alak", {"size": 6, "rules": "tromp-taylor"}),
    ],
    ids=lambda game: game.variant_id,
)
def test_agents_play_whole_games_against_random(spec: str, game: Game) -> None:
    for seed in range(2):
        agent = make_agent(spec, game, seed=seed)
        opponent = make_agent("random", game, seed=seed)
        play_out(game, agent, opponent)
        agent.reset()
        play_out(game, opponent, agent)


# --- reproducibility --------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["greedy", "mcts:200", "mcts-informed:200", "alphabeta:3000"])
@pytest.mark.parametrize(
    "game",
    [make_game("alternator", {"size": "4x4"}), make_game("alak", {"size": 9})],
    ids=lambda game: game.variant_id,
)
def test_seed_and_count_budget_repeat_a_game_exactly(spec: str, game: Game) -> None:
    def game_moves() -> list[Move]:
        return play_out(game, make_agent(spec, game, seed=7), make_agent(spec, game, seed=8))

    assert game_moves() == game_moves()


def test_reset_repeats_the_same_analysis() -> None:
    game = make_game("alternator", {"size": "4x4"})
    agent = make_agent("mcts:300", game, seed=3)
    first = agent.analyse(game.new_state())
    agent.reset()
    again = agent.analyse(game.new_state())
    assert (first.best_move, first.value, first.work) == (again.best_move, again.value, 300)


# --- tactics ----------------------------------------------------------------------------------

# (game, position, the only winning move): White's single merge a3-b3 wins Alternator 3x3
# (komi 0.5), though the merges b2-b3 and c3-b3 gain as much now; a1-b1 wins another position
# outright; in Alak the capture at 6 is Black's only win.
TACTICS = [
    (ALTERNATOR_3X3, "1 1 1 / 2 1 v / ^ 3 < : w", "a3-b3", False),
    (ALTERNATOR_3X3, "1 2 < / v 1 2 / 2 1 ^ : w", "a1-b1", True),
    (ALAK_6, "...xo. x seen=......,...x..", "6", True),
]


@pytest.mark.parametrize(("game", "position", "winner", "greedy_sees_it"), TACTICS)
@pytest.mark.parametrize("spec", ["greedy", "mcts:3000", "mcts-informed:3000", "alphabeta:20000"])
def test_agents_find_the_only_winning_move(
    game: Game, position: str, winner: str, greedy_sees_it: bool, spec: str
) -> None:
    state = game.parse_position(position)
    margins = exact_margins(state)
    move = game.parse_move(winner)
    assert [m for m, value in margins.items() if value > 0] == [move]  # the premise
    if spec == "greedy" and not greedy_sees_it:
        # other moves gain as much now: which of them greedy plays is its evaluation's choice
        view = -1 if state.to_move is Player.WHITE else 1
        now = {}
        for legal in state.legal_moves():
            played = state.copy()
            played.play(legal)
            now[legal] = view * played.margin
        best_now = {m for m, gain in now.items() if gain == max(now.values())}
        assert move in best_now and len(best_now) > 1
        assert make_agent(spec, game, seed=1).choose(state) in best_now
        return
    for seed in range(3):
        assert make_agent(spec, game, seed=seed).choose(state) == move


def test_alphabeta_value_is_the_exact_margin_when_complete() -> None:
    state = ALTERNATOR_3X3.parse_position(TACTICS[0][1])
    analysis = make_agent("alphabeta:200000", ALTERNATOR_3X3, seed=1).analyse(state)
    assert analysis.proven and analysis.win_rate == 1.0
    assert analysis.value == max(exact_margins(state).values())
    assert analysis.principal_variation[0] == analysis.best_move


# Hayward's exercises on 1x5 linear Go (RULES.md): x to move, x's margin under best play.
@pytest.mark.parametrize(
    ("board", "value"),
    [("o.x..", 5), ("x..o.", -5), ("o..x.", 5), ("o....", 5), (".o...", 0), ("..o..", 0)],
)
def test_alphabeta_solves_published_linear_go_exercises(board: str, value: float) -> None:
    game = make_game("alak", {"size": 5, "rules": "tromp-taylor"})
    analysis = make_agent("alphabeta:1000000", game, seed=1).analyse(
        game.parse_position(f"{board} x")
    )
    assert analysis.proven
    assert analysis.value == value


# --- MCTS-Solver and tree reuse ---------------------------------------------------------------


@pytest.mark.slow
def test_mcts_solver_proves_a_won_game() -> None:
    state = ALTERNATOR_3X3.new_state()
    analysis = make_agent("mcts:200000", ALTERNATOR_3X3, seed=1).analyse(state)
    assert analysis.proven and analysis.win_rate == 1.0
    assert analysis.work < 200000  # stopped once the root was proven
    assert exact_margins(state)[analysis.best_move] > 0


def test_mcts_solver_proves_a_lost_position() -> None:
    state = ALTERNATOR_3X3.parse_position(TACTICS[0][1])
    state.play(ALTERNATOR_3X3.parse_move("b2-b3"))  # a losing move: Black now wins by force
    analysis = make_agent("mcts:20000", ALTERNATOR_3X3, seed=1).analyse(state)
    assert analysis.proven and analysis.win_rate == 1.0


def test_mcts_keeps_its_tree_between_moves() -> None:
    game = make_game("alternator", {"size": "4x4"})
    agent = MctsAgent(game, Limit(count=2000), seed=1)
    state = game.new_state()
    analysis = agent.analyse(state)
    state.play(analysis.principal_variation[0])
    state.play(analysis.principal_variation[1])
    agent.analyse(state)
    assert agent.tree.stats[VISITS, 0] > 2000  # visits from the first search were kept


def test_mcts_starts_afresh_on_another_game() -> None:
    game = make_game("alternator", {"size": "4x4"})
    agent = MctsAgent(game, Limit(count=500), seed=1)
    agent.analyse(game.new_state())
    other = game.parse_position("1 1 1 1 / 1 1 1 1 / 1 1 1 1 / 1 1 1 1 : w")  # White to move
    agent.analyse(other)
    assert agent.tree.stats[VISITS, 0] == 500


def threaded(game: Game, count: int, seed: int | None, threads: int = 2) -> MctsAgent:
    agent = MctsAgent(game, Limit(count=count), seed=seed)
    agent.threads, agent.rave_equivalence = threads, 1000.0
    return agent


@pytest.mark.parametrize("game", [make_game("alternator", {"size": "4x4"}),
                                  make_game("alak", {"size": 9})], ids=str)
def test_mcts_on_threads_shares_the_count_sums_its_trees_and_repeats(game: Game) -> None:
    """With threads, each searches a tree of its own (with the agent's settings), the count
    is shared among them, the move is chosen from the root's statistics summed over the
    trees, and a seeded agent with a count repeats its analysis exactly, tree by tree; the
    trees are kept between moves, as one thread's is."""
    state = game.new_state()
    agent = threaded(game, 3001, seed=5, threads=3)
    analysis = agent.analyse(state)
    trees = agent.trees
    assert analysis.work == 3001
    assert [tree.stats[VISITS, 0] for tree in trees] == [1001, 1000, 1000]
    assert all(helper.agent.rave_equivalence == 1000.0 for helper in agent._helpers)
    summed = {child.move: child.visits for child in agent._root_children()}
    for move in state.legal_moves():
        assert summed[move] == sum(
            tree.stats[VISITS, tree.child_by_move(0, move)] for tree in trees
        )
    assert analysis.best_move == max(summed, key=lambda move: summed[move])
    again = threaded(game, 3001, seed=5, threads=3).analyse(state)
    assert (again.best_move, again.value, again.principal_variation) == (
        analysis.best_move, analysis.value, analysis.principal_variation
    )
    state.play(analysis.principal_variation[0])
    state.play(analysis.principal_variation[1])
    agent.analyse(state)
    kept = agent.trees
    assert [tree.stats[VISITS, 0] > share for tree, share in zip(kept, (1001, 1000, 1000),
                                                                   strict=True)] == [True] * 3
    agent.threads = 1  # (fewer threads: the others' searches are let go)
    assert agent.analyse(state).work == 3001 and agent._helpers == []
    agent.close()


def test_mcts_on_threads_proves_a_won_game() -> None:
    state = ALTERNATOR_3X3.new_state()
    analysis = threaded(ALTERNATOR_3X3, 200_000, seed=1).analyse(state)
    assert analysis.proven and analysis.win_rate == 1.0
    assert exact_margins(state)[analysis.best_move] > 0


# --- budgets and specs ------------------------------------------------------------------------


def test_time_budget_is_respected_roughly() -> None:
    game = make_game("alternator", {"size": "6x6"})
    for spec in ("mcts:200ms", "alphabeta:200ms"):
        analysis = make_agent(spec, game, seed=1).analyse(game.new_state())
        assert 0.1 < analysis.seconds < 2.0
        assert analysis.work > 0


@pytest.mark.parametrize("spec", ["mcts:0.0001ms", "mcts-informed:0.0001ms", "alphabeta:0.0001ms"])
def test_a_budget_too_short_for_any_work_still_gives_a_legal_move(spec: str) -> None:
    game = make_game("alak", {"size": 7})
    state = game.new_state()
    assert make_agent(spec, game, seed=1).analyse(state).best_move in state.legal_moves()


def test_registry_names_specs_and_refuses_bad_ones() -> None:
    game = make_game("alak", {"size": 5})
    assert {"random", "greedy", "mcts", "mcts-informed", "alphabeta"} <= set(AGENTS)
    assert make_agent("mcts:500ms", game).spec == "mcts:0.5s"
    assert make_agent("alphabeta:5000", game).spec == "alphabeta:5000"
    assert make_agent("mcts", game).spec == "mcts:1s"
    for bad in ("minimax", "mcts:fast", "mcts:0"):
        with pytest.raises(AgonError):
            make_agent(bad, game)


def test_finished_game_has_no_move_to_choose() -> None:
    game = make_game("alak", {"size": 2})
    state = game.new_state()
    while not state.is_over:
        state.play(state.legal_moves()[0])
    for spec in ("greedy", "mcts:10", "alphabeta:10"):
        with pytest.raises(AgonError):
            make_agent(spec, game).analyse(state)


# --- kernels ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "game",
    [make_game("alternator", {"size": "3x2"}), make_game("alak", {"size": 4})],
    ids=lambda game: game.variant_id,
)
def test_random_playouts_restore_the_state_and_stop_at_the_limit(game: Game) -> None:
    twin = twin_for(game)
    kernels = kernels_for(twin)
    state = twin.new_state()
    before = state.copy()
    moves = np.empty(twin.num_actions, dtype=np.int64)

    def plies(count: int, limit: int) -> int:
        return int(
            random_playouts(
                kernels.legal_moves,
                kernels.play,
                kernels.undo,
                kernels.end_code,
                kernels.margin,
                kernels.evaluate,
                kernels.move_order,
                kernels.to_move,
                twin.params,
                state,
                moves,
                pass_action(game),
                count,
                limit,
            )
        )

    assert plies(20, 1) == 20  # no game here ends in one ply
    assert np.array_equal(state, before)
    assert 20 < plies(20, 10_000) < 20 * 10_000
    assert np.array_equal(state, before)


def test_mcts_plays_the_best_margin_among_proven_wins_and_losses() -> None:
    """Once a move's result is proven, the points still differ: MCTS chooses among proven
    wins (or, lost anyway, among proven losses) by the mean margin, not by the visits."""
    agent = MctsAgent(ALTERNATOR_3X3, seed=1)

    def tree_of(children: list[tuple[int, float, float]]) -> Tree:
        """A root whose children (for Black) are (proof, visits, summed margin)."""
        tree = Tree.empty(8)
        tree.links[FIRST_CHILD, 0], tree.links[CHILD_COUNT, 0] = 1, len(children)
        for child, (proof, visits, margin) in enumerate(children, start=1):
            tree.links[:, child] = (child, -1, 0)
            tree.stats[:, child] = (visits, visits / 2, margin, 0.0, 0.0)  # (no RAVE counts)
            tree.flags[:, child] = (proof, 0)
        tree.counters[0] = 1 + len(children)
        return tree

    black_wins, white_wins = 2, 0
    def best(children: list[tuple[int, float, float]]) -> int:
        agent.tree = tree_of(children)
        return agent._best_child(agent._root_children()).move

    assert best([(black_wins, 100, 100.0), (black_wins, 10, 50.0), (UNPROVEN, 900, 0.0)]) == 2
    # (the win by 5, not the much visited win by 1)
    assert best([(white_wins, 100, -500.0), (white_wins, 10, -10.0)]) == 2  # lost anyway: by 1
    assert best([(UNPROVEN, 100, -500.0), (UNPROVEN, 10, 50.0)]) == 1  # unproven: most visited


class RaveAgent(MctsAgent):
    rave_equivalence = 1000.0


@pytest.mark.parametrize("game", [ALTERNATOR_3X3, make_game("alak", {"size": 9})], ids=str)
def test_rave_counts_each_move_as_though_played_first(game: Game) -> None:
    """Every visit of a child counts among its all-moves-as-first visits (its move is played
    right there, even where the same player made it earlier, as Alak's points are played
    again after a capture), and so do the iterations that played its move later, in the tree
    or the playout: so some children have more of those than visits. A pass counts nowhere.
    The marks of who played what are all taken back after each iteration."""
    agent = RaveAgent(game, seed=3)
    agent.analyse(game.new_state(), Limit(count=400))
    tree = agent.tree
    placed = [node for node in range(1, tree.size) if tree.links[MOVE, node] != game.pass_move]
    visits, amaf_visits = tree.stats[VISITS, placed], tree.stats[AMAF_VISITS, placed]
    assert (amaf_visits >= visits).all()
    assert (tree.stats[AMAF_SCORE, placed] <= amaf_visits).all()
    root_children = list(tree.children(0))
    assert sum(tree.stats[AMAF_VISITS, root_children]) > sum(tree.stats[VISITS, root_children])
    assert (agent.first_played == -1).all()
    plain = MctsAgent(game, seed=3)
    plain.analyse(game.new_state(), Limit(count=400))
    assert not plain.tree.stats[AMAF_VISITS, : plain.tree.size].any()


def test_rave_tries_the_unvisited_child_with_the_best_all_moves_as_first_mean() -> None:
    """Without RAVE the first unvisited child comes first; with it, the unvisited child whose
    move did best wherever it was played."""
    tree = Tree.empty(4)
    tree.links[FIRST_CHILD, 0], tree.links[CHILD_COUNT, 0] = 1, 3
    for child, (amaf_visits, amaf_score) in enumerate([(10, 2), (10, 8), (0, 0)], start=1):
        tree.links[:, child] = (child, -1, 0)
        tree.stats[:, child] = (0.0, 0.0, 0.0, amaf_visits, amaf_score)
        tree.flags[:, child] = (UNPROVEN, 0)
    tree.stats[VISITS, 0] = 30
    for rave_equivalence, chosen in ((0.0, 1), (1000.0, 2)):
        picked = _select(tree.links, tree.stats, tree.flags, 0, 0.1, 0.2, 8.0, rave_equivalence)
        assert picked == chosen


def test_alphabeta_ends_within_its_time_where_deeper_iterations_run_slower(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An injected clock: each node of depth D costs 1 µs × 1.2^D, so that each iteration
    # runs slower than the speed measured over those before it, as on a real board.
    from agon.core import limits
    from agon.search import alphabeta

    now = [1000.0]
    # (the limits' own clock only: the process's time.monotonic stays as it is)
    clock = types.SimpleNamespace(monotonic=lambda: now[0], perf_counter=time.perf_counter)
    monkeypatch.setattr(limits, "time", clock)
    game = make_game("alternator", {"size": "8x8"})
    agent = make_agent("alphabeta:1s", game, seed=1)
    search = agent._search  # type: ignore[attr-defined]

    def slower_when_deeper(root: np.ndarray, depth: int, node_limit: int) -> tuple[float, bool]:
        nodes = int(agent.counters[alphabeta.C_NODES])  # type: ignore[attr-defined]
        found = search(root, depth, node_limit)
        visited = int(agent.counters[alphabeta.C_NODES]) - nodes  # type: ignore[attr-defined]
        now[0] += visited * 1e-6 * 1.2**depth
        return found  # type: ignore[no-any-return]

    monkeypatch.setattr(agent, "_search", slower_when_deeper)
    started = now[0]
    agent.analyse(game.new_state())
    assert now[0] - started <= 1.05


@settings(max_examples=200, deadline=None)
@given(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1),
       st.integers(0, 30))
def test_a_table_row_is_the_same_from_python_as_compiled(key: int, history: int, bits: int) -> None:
    from agon.search.alphabeta import _table_index, table_index

    mask = (1 << bits) - 1
    assert table_index(key, history, mask) == _table_index(key, history, mask)


def test_alphabeta_cut_short_keeps_its_move_where_the_table_lost_the_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Depth 1 searched whole, then depth 2 cut short just after its first root move, with the
    # table emptied before each iteration (as where other positions take the root's slot):
    # the first move searched must be the one depth 1 chose, which then stands. Before, the
    # move order's favourite was searched first and played on that one valuation.
    from agon.search import alphabeta

    game = make_game("alternator", {"size": "4x4"})
    walker = make_agent("random", game, seed=3)
    favourite_differs = 0
    for _ in range(12):
        state = game.new_state()
        for _ in range(2):
            state.play(walker.choose(state))
        chosen = _alphabeta_with_node_limits(monkeypatch, game, state, [alphabeta.UNLIMITED_NODES])
        after = state.copy()
        after.play(chosen)
        first_only = 2 + len(after.legal_moves())  # the chosen move's subtree at depth 2, + 1
        kept = _alphabeta_with_node_limits(
            monkeypatch, game, state, [alphabeta.UNLIMITED_NODES, first_only]
        )
        assert kept == chosen
        favourite = make_agent("alphabeta:1", game)._favourite(  # type: ignore[attr-defined]
            twin_for(game).from_reference(state)
        )
        favourite_differs += favourite != chosen
    assert favourite_differs  # (so the test can fail: the order alone would search another)


def _alphabeta_with_node_limits(
    monkeypatch: pytest.MonkeyPatch, game: Game, state: State, limits: list[int]
) -> Move:
    """The move alpha-beta chooses in ``state`` when its iterations may visit ``limits``' nodes
    in turn (then none), its table emptied as each ends."""
    from agon.search import alphabeta

    agent = make_agent("alphabeta:1s", game, seed=1)
    assert isinstance(agent, alphabeta.AlphaBetaAgent)
    left = list(limits)

    def next_limit(spending: object) -> int:
        # (asked before each iteration: the table is emptied as the last one ends)
        agent.table[:, alphabeta.T_KEY] = -1
        return left.pop(0) if left else 0

    monkeypatch.setattr(agent, "_node_limit", next_limit)
    return agent.analyse(state).best_move
