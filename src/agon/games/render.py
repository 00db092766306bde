"""Boards for people: plain text, Rich terminal renderables and SVG, whichever the game.

Each game's ``render`` module draws its own board; this module picks the right one and holds
the lines every board shows below it (side to move, score, result).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from agon.core.game import State, format_points
from agon.core.player import Player
from agon.games.alak.rules import AlakState
from agon.games.alternator.rules import AlternatorState

if TYPE_CHECKING:
    from rich.console import RenderableType


class BoardRenderer(Protocol):
    """What each game's ``render`` module provides."""

    def render_text(self, state: Any, *, ascii: bool = False) -> str: ...

    def render_rich(self, state: Any) -> RenderableType: ...

    def render_svg(
        self, state: Any, *, highlight: Iterable[int] = (), last_move: int | None = None
    ) -> str: ...


def renderer(state: State) -> BoardRenderer:
    """The render module of the state's game (imported on first use: it may import Rich)."""
    if isinstance(state, AlternatorState):
        from agon.games.alternator import render as alternator_render

        return alternator_render
    if isinstance(state, AlakState):
        from agon.games.alak import render as alak_render

        return alak_render
    raise TypeError(f"no renderer for {type(state).__name__}")


def render_text(state: State, *, ascii: bool = False) -> str:
    """The board as plain text for any terminal; ``ascii`` avoids every non-ASCII character."""
    return renderer(state).render_text(state, ascii=ascii)


def render_rich(state: State) -> RenderableType:
    """The board in colour, for a Rich console."""
    return renderer(state).render_rich(state)


def render_svg(state: State, *, highlight: Iterable[int] = (), last_move: int | None = None) -> str:
    """The board as a self-contained SVG string (see the SVG board contract)."""
    return renderer(state).render_svg(state, highlight=highlight, last_move=last_move)


def player_name(player: Player) -> str:
    return player.name.capitalize()


def status_lines(state: State) -> list[str]:
    """The side to move (or the result and why the game ended) and the score, komi included."""
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
