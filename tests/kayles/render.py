"""Kayles rows as plain text, Rich renderables and SVG (the SVG contract of docs/architecture.md:
one element per place, with ``data-place`` and ``aria-label``)."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from rich.console import Group, RenderableType
from rich.text import Text

from agon.core.render import status_lines
from kayles.rules import STANDING, KaylesState


def render_text(state: KaylesState, *, ascii: bool = False) -> str:
    """Pin numbers above the row: ``|`` standing, ``.`` (or ``·``) down."""
    down = "." if ascii else "·"
    numbers = " ".join(f"{pin + 1:>2}" for pin in range(state.game.pins))
    row = " ".join(f"{STANDING if pin == STANDING else down:>2}" for pin in state.row)
    return "\n".join([numbers, row, *status_lines(state, outcome_only=True)])


def render_rich(state: KaylesState) -> RenderableType:
    row = Text()
    for pin in state.row:
        row.append(" |" if pin == STANDING else " ·", style="bold" if pin == STANDING else "dim")
    return Group(row, *(Text(line) for line in status_lines(state, outcome_only=True)))


SPACING = 40
SVG_STYLE = """
.board .place rect { fill: #fffdf7; stroke: #3b3325; }
.board .place.highlight rect { fill: #ffe066; }
.board .place.last rect { fill: #d6e4ff; }
.board .pin { fill: #3b3325; }
"""


def render_svg(
    state: KaylesState, *, highlight: Iterable[int] = (), last_move: int | None = None
) -> str:
    """One ``g.place`` per pin: ``data-place`` its number, ``aria-label`` standing or down."""
    game = state.game
    lit = set(highlight)
    last = set(game.move_places(last_move)) if last_move is not None else set()
    width = SPACING * max(1, game.pins)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="board kayles" '
        f'viewBox="0 0 {width} 80" role="img" aria-label="{escape(game.description)}">',
        f"<style>{SVG_STYLE}</style>",
    ]
    for place, pin in enumerate(state.row):
        classes = " ".join(
            ["place"] + ["highlight"] * (place in lit) + ["last"] * (place in last)
        )
        name = game.place_name(place)
        what = "standing" if pin == STANDING else "down"
        x = place * SPACING
        parts.append(
            f'<g class="{classes}" data-place="{name}" aria-label="pin {name}, {what}">'
            f'<rect x="{x}" y="0" width="{SPACING}" height="80"/>'
            + (f'<rect class="pin" x="{x + 15}" y="15" width="10" height="50"/>'
               if pin == STANDING else "")
            + "</g>"
        )
    parts.append("</svg>")
    return "\n".join(parts)
