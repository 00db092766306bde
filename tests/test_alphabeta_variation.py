"""The alpha-beta agent plays, reports and replays only legal moves.

A fast twin's kernels check nothing: a move that is not legal where it is played reads and
writes outside the twin's arrays, and can crash the process (a segmentation fault in
``_variation``, once, under ``tests/test_bench.py``). Its cause: a search stopped by its limit
before any iteration began fell back on ``move_lists[0, 0]``, a row that ``np.empty`` leaves
holding whatever memory it recycled, or the moves of the last position searched.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from agon.core.game import Game, State
from agon.core.limits import Limit
from agon.search.alphabeta import T_HISTORY, T_KEY, T_MOVE, AlphaBetaAgent
from agon.search.variants import bench_variants, variant

VARIANTS = sorted(bench_variants())

SPENT = Limit(deadline=0.0)
"""A limit already spent when a search starts (the clock's instant 0 has long passed)."""


def _played(game: Game, plies: int) -> State:
    """The state after the first legal move ``plies`` times (placements before the pass)."""
    state = game.new_state()
    for _ in range(plies):
        state.play(state.legal_moves()[0])
    return state


def _assert_legal_line(state: State, line: list[int]) -> None:
    replayed = state.copy()
    for move in line:
        assert move in replayed.legal_moves(), f"{move} is not legal after {replayed.history}"
        replayed.play(move)


@pytest.mark.parametrize("name", VARIANTS)
def test_a_spent_limit_gives_a_legal_move_whatever_the_move_lists_hold(name: str) -> None:
    game = variant(name)
    agent = AlphaBetaAgent(game, seed=0)
    state = game.new_state()
    # np.empty's rows may hold anything; one past the last action is never legal
    agent.move_lists[:] = agent.twin.num_actions
    analysis = agent.analyse(state, SPENT)
    assert analysis.best_move in state.legal_moves()
    assert analysis.principal_variation[0] == analysis.best_move
    _assert_legal_line(state, analysis.principal_variation)


@pytest.mark.parametrize("name", VARIANTS)
def test_a_spent_limit_does_not_reuse_the_last_positions_moves(name: str) -> None:
    game = variant(name)
    agent = AlphaBetaAgent(game, seed=0)
    start = game.new_state()
    first = agent.analyse(start, Limit(count=50)).best_move
    later = start.copy()
    later.play(first)
    # the move just played stands first in the last search's root row, and is not legal now
    agent.move_lists[0, 0] = first
    assert first not in later.legal_moves()
    analysis = agent.analyse(later, SPENT)
    assert analysis.best_move in later.legal_moves()
    _assert_legal_line(later, analysis.principal_variation)


@pytest.mark.parametrize("name", VARIANTS)
def test_the_variation_never_plays_a_table_move_of_another_position(name: str) -> None:
    game = variant(name)
    agent = AlphaBetaAgent(game, seed=0)
    state = _played(game, 2)
    analysis = agent.analyse(state, Limit(count=300))
    twin = agent.twin
    # every entry claims every position after the best move, with a move legal in none
    array = twin.from_reference(state)
    twin.play(twin.params, array, analysis.best_move)
    agent.table[:, T_KEY] = twin.key(twin.params, array)
    agent.table[:, T_HISTORY] = twin.history_key(twin.params, array)
    agent.table[:, T_MOVE] = twin.num_actions
    assert agent._variation(state, analysis.best_move) == [analysis.best_move]


def test_the_variation_of_an_illegal_first_move_is_empty() -> None:
    game = variant("alternator-8x8")
    agent = AlphaBetaAgent(game, seed=0)
    assert agent._variation(game.new_state(), agent.twin.num_actions) == []


GARBAGE_SCRIPT = """
from agon.core.limits import Limit
from agon.search.alphabeta import AlphaBetaAgent
from agon.search.variants import variant

game = variant({name!r})
agent = AlphaBetaAgent(game, seed=0)
agent.move_lists[:] = 1_000_000_000  # memory np.empty recycled
state = game.new_state()
analysis = agent.analyse(state, Limit(deadline=0.0))
assert analysis.best_move in state.legal_moves(), analysis
print("legal")
"""


@pytest.mark.parametrize("name", VARIANTS)
def test_garbage_in_the_move_lists_does_not_crash_the_process(name: str) -> None:
    # in a child process: before the fix, this move wrote far outside Alternator's state
    run = subprocess.run(
        [sys.executable, "-c", GARBAGE_SCRIPT.format(name=name)],
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert run.stdout.strip() == "legal"
