"""docs/position_graph.py, whose counts docs/solver.md quotes: the graph of baljeu positions
without the repetition rule, its cycles, and the margins each side forces there."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from agon.core.player import Player
from agon.games.alak import Alak
from agon.games.alak.rules import AlakPosition, AlakState


@pytest.fixture(scope="module")
def position_graph() -> ModuleType:
    path = Path(__file__).parents[1] / "docs" / "position_graph.py"
    spec = importlib.util.spec_from_file_location("position_graph", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_seven_points_with_edge_capture_have_cycles(position_graph: ModuleType) -> None:
    positions, successors = position_graph.position_graph(Alak(size=7))
    predecessors = position_graph.predecessors_of(successors)
    assert len(positions) == 4_401
    cycles = [size for size in position_graph.component_sizes(successors) if size > 1]
    assert cycles == [1_166]
    assert position_graph.forces(positions, successors, predecessors, Player.BLACK, 1)
    assert not position_graph.forces(positions, successors, predecessors, Player.BLACK, 2)
    assert position_graph.forces(positions, successors, predecessors, Player.WHITE, 1)
    assert not position_graph.forces(positions, successors, predecessors, Player.WHITE, 0)


def test_without_edge_capture_eight_points_have_no_cycle(position_graph: ModuleType) -> None:
    positions, successors = position_graph.position_graph(Alak(size=8, edge_capture=False))
    predecessors = position_graph.predecessors_of(successors)
    assert max(position_graph.component_sizes(successors)) == 1
    assert position_graph.forces(positions, successors, predecessors, Player.BLACK, 0)
    assert position_graph.forces(positions, successors, predecessors, Player.WHITE, 0)


def test_the_forced_margins_are_not_bounds_of_the_real_game(position_graph: ModuleType) -> None:
    """On 5 points no position recurs and White forces at most +1 in the graph, but the value is
    +2: the repetition rule refuses White's only placement of this line and ends the game."""
    game = Alak(size=5)
    positions, successors = position_graph.position_graph(game)
    predecessors = position_graph.predecessors_of(successors)
    assert position_graph.forces(positions, successors, predecessors, Player.WHITE, 1)
    state = game.new_state()
    for point in (2, 5, 1, 3, 4, 1, 2, 5, 1):
        state.play(point - 1)
    assert state.board == "xx.xo" and state.is_over and state.margin == 2
    now = state.current
    fresh = AlakState(game, AlakPosition(board=now.board, player=now.player, captured=now.captured))
    assert fresh.legal_moves() == [2]  # point 3, whose board `..o.o` was seen after move 4
