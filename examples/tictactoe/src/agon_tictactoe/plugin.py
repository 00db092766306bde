"""What tic-tac-toe declares to Agon (:class:`agon.core.plugin.GamePlugin`).

Agon finds this plugin through the entry point in ``pyproject.toml``::

    [project.entry-points."agon.games"]
    tictactoe = "agon_tictactoe:PLUGIN"

The game has no fast twin: Agon searches and solves it on the rules in ``rules.py``.
"""

from __future__ import annotations

from agon.core.game import Move
from agon.core.plugin import BoardRenderer, GamePlugin, Judging, Observation, Solving
from agon_tictactoe import observation
from agon_tictactoe.rules import TicTacToe, TicTacToeState


def _renderer() -> BoardRenderer:
    from agon_tictactoe import render  # (imports Rich: only when a board is drawn)

    return render


def _central_first(state: TicTacToeState, move: Move) -> float:
    """Search tries cells near the centre first: they lie on the most lines."""
    game = state.game
    file, rank = move % game.width, move // game.width
    return -abs(2 * file - (game.width - 1)) - abs(2 * rank - (game.height - 1))


PLUGIN: GamePlugin[TicTacToe, TicTacToeState] = GamePlugin(
    game=TicTacToe,
    summary="Noughts and crosses on boards up to 5×5: get your stones in a row.",
    credit="Tic-tac-toe, a traditional game (m,n,k-games generalise it)",
    click_help="Click an empty cell to place your stone there.",
    texts="agon_tictactoe",
    languages=("en", "es", "nl", "lt"),
    renderer=_renderer,
    # every move fills a cell
    max_game_length=lambda game: game.cells,
    observation=Observation(
        names=lambda game: observation.PLANES, shape=observation.shape, planes=observation.planes
    ),
    move_order=_central_first,
    solving=Solving(
        table_bits=lambda game: 16,
        small=lambda game: True,
        largest_margin=lambda game: 1,
        warm_up=lambda: TicTacToe(1, 1, 1),
    ),
    # a line or no line: a win, a draw or a loss, never points
    judging=Judging(outcome_only=True),
    order=3,
    variant_examples=(
        {"width": 3, "height": 3, "line": 3},
        {"width": 2, "height": 2, "line": 2},
        {"width": 4, "height": 3, "line": 3},
        {"width": 1, "height": 3, "line": 3},
    ),
)
