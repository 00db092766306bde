"""The strongest agent (``strongest``): the stored exact values first, the solver next, search
where nothing is proven; it plays for the best margin, and it is the default opponent."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agon.cli.play_commands import strongest_agent_spec
from agon.core.errors import AgonError
from agon.core.game import Game, State
from agon.core.limits import Limit
from agon.core.player import Player
from agon.games import make_game
from agon.search.registry import AGENTS, make_agent
from agon.solve.solver import Solver
from agon.study.store import Entry, ExactValues
from agon.study.strongest import StrongestAgent, search_threads

SMALL_BOARDS = [
    ("alternator", {"width": 3, "height": 3}),
    ("alak", {"size": 7}),
    ("alak", {"size": 7, "rules": "tromp-taylor"}),
    ("tictactoe", {}),
]


def random_position(game: Game, rng: random.Random) -> State:
    state = game.new_state()
    for _ in range(rng.randrange(0, 6)):
        if state.is_over:
            break
        state.play(rng.choice(state.legal_moves()))
    if state.is_over:
        state.undo()
    return state


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's cache of exact values in the test's own folder."""
    monkeypatch.setenv("AGON_HOME", str(tmp_path))
    return tmp_path


def test_it_is_registered_and_the_default_opponent() -> None:
    assert "strongest" in AGENTS and "strongest-nostore" in AGENTS
    assert strongest_agent_spec() == "strongest:1s"
    game = make_game("alak", {"size": 5})
    assert make_agent("strongest:2s", game).spec == "strongest:2s"
    assert make_agent("strongest-nostore:500ms", game).spec == "strongest-nostore:0.5s"


@pytest.mark.parametrize(("name", "options"), SMALL_BOARDS)
@pytest.mark.parametrize("stored", [True, False])
def test_it_plays_a_move_of_best_margin_wherever_it_can_prove_it(
    name: str, options: dict[str, object], stored: bool, private_cache: Path
) -> None:
    game = make_game(name, options)
    agent = StrongestAgent(game, Limit(seconds=5), seed=3, exact=True if stored else None)
    judge = Solver(game)
    rng = random.Random(f"{name}{options}")
    for _ in range(6):
        state = random_position(game, rng)
        solution = judge.solve(state, openings=True)
        assert solution.move_values is not None
        analysis = agent.analyse(state)
        assert analysis.best_move in solution.best_moves, game.format_move(analysis.best_move)
        best = max(solution.move_values.values()) if state.to_move is Player.BLACK else min(
            solution.move_values.values())
        assert solution.move_values[analysis.best_move] == best  # the margin, not the result
        assert analysis.proven
        mover_view = solution.result_margin if state.to_move is Player.BLACK else (
            -solution.result_margin)
        assert analysis.value == pytest.approx(mover_view)
    agent.close()


def test_a_stored_entry_is_played_without_searching(private_cache: Path) -> None:
    game = make_game("alternator", {"width": 4, "height": 4})
    state = game.new_state()
    legal = state.legal_moves()
    chosen = legal[len(legal) // 2]
    values = ExactValues(shipped=None)
    assert values.cache is not None
    values.cache.put(game, state, Entry(2.0, (chosen,), None, nodes=123, seconds=9.0))
    agent = StrongestAgent(game, Limit(seconds=5), seed=1, exact=values)
    analysis = agent.analyse(state)
    assert analysis.best_move == chosen
    assert analysis.value == 2.0 and analysis.work == 123
    agent.close()


def test_where_nothing_is_proven_it_searches_within_its_time() -> None:
    game = make_game("alternator")  # 8×8: far beyond the solver in a tenth of a second
    agent = StrongestAgent(game, Limit(seconds=0.1), seed=1, exact=None)
    state = game.new_state()
    analysis = agent.analyse(state)
    assert state.is_legal(analysis.best_move)
    assert not analysis.proven and analysis.value is not None


def test_its_games_repeat_from_a_seed(private_cache: Path) -> None:
    game = make_game("alak", {"size": 7})

    def game_moves(seed: int) -> list[str]:
        agent = StrongestAgent(game, Limit(seconds=5), seed=seed, exact=None)
        state = game.new_state()
        while not state.is_over:
            state.play(agent.analyse(state).best_move)
        agent.close()
        return [game.format_move(move) for move in state.history]

    assert game_moves(4) == game_moves(4)


def test_a_wide_games_search_is_mcts_with_its_own_constants() -> None:
    from agon.search.mcts import MctsAgent
    from agon.study.strongest import WIDE_SEARCH_SETTINGS

    wide = StrongestAgent(make_game("alternator", {"size": "8x8"}), Limit(count=1), exact=None)
    narrow = StrongestAgent(make_game("alak", {"size": 7}), Limit(count=1), exact=None)
    assert wide.wide and not narrow.wide
    # (the line measured: alpha-beta plays better on 4x4, MCTS on 5x5: docs/search.md)
    assert [StrongestAgent(make_game("alternator", {"size": size}), Limit(count=1),
                           exact=None).wide for size in ("4x4", "5x5")] == [False, True]
    search = wide.wide_search
    assert isinstance(search, MctsAgent)
    assert {name: getattr(search, name) for name in WIDE_SEARCH_SETTINGS} == WIDE_SEARCH_SETTINGS
    plain = make_agent("mcts", wide.game)
    assert isinstance(plain, MctsAgent)
    assert plain.exploration != search.exploration  # (mcts's own are left alone)


def test_a_wide_games_search_runs_on_the_threads_the_environment_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agon.search.mcts import MctsAgent

    game = make_game("alternator", {"size": "6x6"})
    monkeypatch.delenv("AGON_THREADS", raising=False)
    assert search_threads() == 1
    monkeypatch.setenv("AGON_THREADS", "3")
    agent = StrongestAgent(game, Limit(count=600), seed=1, exact=None)
    analysis = agent.analyse(game.new_state())
    search = agent.wide_search
    assert isinstance(search, MctsAgent) and search.threads == 3 and len(search._helpers) == 2
    assert game.new_state().is_legal(analysis.best_move)
    agent.close()
    assert search._helpers == []
    for bad in ("0", "many", "-2", "257", "9" * 5000, "²"):
        monkeypatch.setenv("AGON_THREADS", bad)
        with pytest.raises(AgonError, match=r"AGON_THREADS=.* is not a number of threads"):
            StrongestAgent(game, Limit(count=1), exact=None)


@pytest.mark.parametrize(
    ("name", "options", "shares_failing", "shares_after_proof"),
    [
        # narrow: most of the time at the start, then again after 3 and 7 failures in a row
        ("alak", {"size": 7}, [0.9, 0.1, 0.9, 0.1, 0.1, 0.1, 0.9, 0.1, 0.1], [0.9, 0.9, 0.1]),
        # wide: beyond the solver's reach from the start until it proves a position
        ("alternator", {"size": "8x8"}, [0.1] * 9, [0.9, 0.1, 0.1]),
    ],
)
def test_the_solver_tries_again_as_the_game_shrinks(
    monkeypatch: pytest.MonkeyPatch, name: str, options: dict[str, object],
    shares_failing: list[float], shares_after_proof: list[float],
) -> None:
    from agon.study.analysis import PositionAnalysis
    from agon.study.values import Value

    game = make_game(name, options)
    agent = StrongestAgent(game, Limit(count=1), exact=None)
    state = game.new_state()
    shares: list[float] = []
    proving = False

    def analysed(_: State, __: Limit, moves: bool, exact_share: float, **___: object) -> object:
        shares.append(exact_share)
        return PositionAnalysis(
            Value(0.0, proving), state.legal_moves()[:1], source="solver" if proving else "engine",
            best_proven=proving,
        )

    monkeypatch.setattr(agent.analyst, "analyse", analysed)
    for _ in shares_failing:
        agent.analyse(state)
    assert shares == shares_failing
    proving = True
    agent.analyse(state)
    proving = False
    shares.clear()
    for _ in shares_after_proof:
        agent.analyse(state)
    assert shares == shares_after_proof


def test_a_position_the_store_knows_leaves_the_solver_s_record_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The store's answer is not the solver's proof. On Alak tromp-taylor 11 the store knows
    the start; counted as a proof, it gave the solver most of the time again at the next two
    moves, which it could not prove, and alpha-beta a tenth of a second for each (the second
    and third moves gave 12 points away in 500 positions: docs/search.md)."""
    from agon.study.analysis import PositionAnalysis
    from agon.study.values import Value

    game = make_game("alak", {"size": 7})
    agent = StrongestAgent(game, Limit(count=1), exact=None)
    state = game.new_state()
    shares: list[float] = []

    def in_store() -> bool:  # (the position of the first move only)
        return not shares

    def known(_: State, moves: bool = True) -> object:
        return PositionAnalysis(Value(0.0, True), state.legal_moves()[:1], source="store") if (
            in_store()
        ) else None

    def analysed(_: State, __: Limit, moves: bool, exact_share: float, **___: object) -> object:
        stored = in_store()
        shares.append(exact_share)
        return PositionAnalysis(  # (the store's answer is exact; the engine's is not)
            Value(0.0, stored), state.legal_moves()[:1], source="store" if stored else "engine",
            best_proven=stored,
        )

    monkeypatch.setattr(agent.analyst, "known", known)
    monkeypatch.setattr(agent.analyst, "analyse", analysed)
    for _ in range(4):
        agent.analyse(state)
    # the start's share; then, the store's answer not counted, the start's try again, and the
    # failures' schedule from there (a proof counted would give 0.9, 0.9, 0.9, 0.1)
    assert shares == [0.9, 0.9, 0.1, 0.9]


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("alak", {"size": 15, "rules": "baljeu"}),  # its default tables: about 1 GB
        ("alak", {"size": 11, "rules": "tromp-taylor"}),
        ("alternator", {"size": "8x8"}),
        ("alternator", {"width": 3, "height": 3}),
    ],
)
def test_its_solver_s_tables_are_sized_by_its_time_a_move(
    name: str, options: dict[str, object]
) -> None:
    from agon.solve.facts import default_table_bits
    from agon.solve.solver import MIN_TABLE_BITS, PLAYER_TABLE_BYTES

    game = make_game(name, options)

    def table_bytes_and_bits(limit: Limit) -> tuple[int, int]:
        solver = StrongestAgent(game, limit, exact=None).analyst.solver
        tables = (solver.table, solver.summaries, solver.hints, solver.numbers)
        bits = solver.table.shape[0].bit_length() - 2  # (2 rows a bucket)
        if solver.numbers.shape[0] > 2:  # (the proof-number search's, where it runs)
            assert solver.numbers.shape[0] == solver.table.shape[0]
        return sum(table.nbytes for table in tables), bits

    sizes = [table_bytes_and_bits(Limit(seconds=s)) for s in (0.01, 0.1, 1, 100)]
    assert all(size <= PLAYER_TABLE_BYTES for size, _ in sizes)
    bits = [bits for _, bits in sizes]
    assert bits == sorted(bits)  # more time a move, no smaller a table
    assert MIN_TABLE_BITS <= bits[0] < bits[-1] <= default_table_bits(game)
    assert table_bytes_and_bits(Limit(count=1))[1] == MIN_TABLE_BITS
