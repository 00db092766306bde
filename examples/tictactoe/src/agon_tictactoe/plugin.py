"""What tic-tac-toe declares to Agon (:class:`agon.core.plugin.GamePlugin`).

Agon finds this plugin through the entry point in ``pyproject.toml``::

    [project.entry-points."agon.games"]
    tictactoe = "agon_tictactoe:PLUGIN"

Everything not a plain value is either a function of the variant or a dotted path that Agon
imports only when it is needed: the renderer (Rich), the fast twin (Numba) and the catalogue.
"""

from __future__ import annotations

from agon.core.plugin import GamePlugin, Judging, Observation, Solving, Tooling
from agon_tictactoe import observation
from agon_tictactoe.rules import TicTacToe, TicTacToeState

PLUGIN: GamePlugin[TicTacToe, TicTacToeState] = GamePlugin(
    game=TicTacToe,
    credit="Tic-tac-toe, a traditional game (m,n,k-games generalise it)",
    texts="agon_tictactoe",
    languages=("en", "es", "nl", "lt"),
    renderer="agon_tictactoe.render",  # (imports Rich: loaded only when a board is drawn)
    # every move fills a cell
    max_game_length=lambda game: game.cells,
    observation=Observation(
        names=lambda game: observation.PLANES, shape=observation.shape, planes=observation.planes
    ),
    # the rules as Numba kernels (fast.py): searched and solved on them, not on rules.py
    fast_twin="agon_tictactoe.fast:fast_twin",
    solving=Solving(
        default_table_bits=lambda game: 16,
        small=lambda game: True,
        largest_margin=lambda game: 1,
        warm_up=lambda: TicTacToe(1, 1, 1),
    ),
    # a line or no line: a win, a draw or a loss, never points
    judging=Judging(outcome_only=True),
    tooling=Tooling(
        order=3,
        variant_examples=(
            {"width": 3, "height": 3, "line": 3},
            {"width": 2, "height": 2, "line": 2},
            {"width": 4, "height": 3, "line": 3},
            {"width": 1, "height": 3, "line": 3},
        ),
        # more variants `agon bench --verify` checks the fast twin on
        checks=(
            ("tictactoe-3x3", {}),
            ("tictactoe-4x4-4", {"width": 4, "height": 4, "line": 4}),
            ("tictactoe-5x5-4", {"width": 5, "height": 5, "line": 4}),
            ("tictactoe-5x2-2", {"width": 5, "height": 2, "line": 2}),
        ),
        # what `agon tables` solves, and the game's section of docs/results.md
        catalogue="agon_tictactoe.results:CATALOGUE",
    ),
)
