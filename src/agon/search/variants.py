"""The variants ``agon bench`` measures and checks, as the games declare them, and what it
measures: read by the command's options and help without loading any kernel (the measuring is
:mod:`agon.search.bench`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agon.core.game import Game
from agon.games import make_game, plugins


def bench_variants() -> dict[str, tuple[str, Mapping[str, Any]]]:
    """The variants ``bench`` measures by default, as the games declare them: label →
    (game, options)."""
    return {
        label: (name, options)
        for name, found in plugins().items() for label, options in found.tooling.benchmarks
    }


def verify_variants() -> dict[str, tuple[str, Mapping[str, Any]]]:
    """The variants ``verify`` checks the fast twins on: the benchmarks' and the more the
    games declare."""
    checked = {
        label: (name, options)
        for name, found in plugins().items() for label, options in found.tooling.checks
    }
    return {**bench_variants(), **checked}


MEASURES = (
    "reference_playouts_per_s",
    "fast_playouts_per_s",
    "mcts_iterations_per_s",
    "alphabeta_nodes_per_s",
)


def variant(label: str) -> Game:
    game_name, options = verify_variants()[label]
    return make_game(game_name, options)
