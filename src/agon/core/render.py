"""What every board shows below it, whichever the game: the side to move, the score, the result.

Each game draws its own board (its plugin's renderer) and adds these lines.
"""

from __future__ import annotations

from agon.core.game import State, format_points
from agon.core.player import Player


def player_name(player: Player) -> str:
    return player.name.capitalize()


def status_lines(state: State, *, outcome_only: bool = False) -> list[str]:
    """The side to move (or the result and why the game ended) and the score, komi included;
    for a game of wins, draws and losses only (``Judging.outcome_only`` in its plugin, which its
    renderer passes on), the winner and no points."""
    if outcome_only:
        if not state.is_over:
            assert state.to_move is not None
            return [f"{player_name(state.to_move)} to move"]
        winner = state.winner
        outcome = "Draw" if winner is None else f"{player_name(winner)} wins"
        return [f"Game over: {state.end_reason}. {outcome}"]
    score = state.score()
    komi = state.game.komi
    komi_note = f" (komi {format_points(komi)})" if komi else ""
    score_line = (
        f"Score: Black {format_points(score.black)}, White {format_points(score.white)}{komi_note}"
    )
    if state.is_over:
        return [f"Game over: {state.end_reason}. Result: {state.result}", score_line]
    assert state.to_move is not None
    return [f"{player_name(state.to_move)} to move", score_line]
