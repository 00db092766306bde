"""Alak boards as plain text, Rich renderables and SVG: a numbered line of points."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from rich.console import Group, RenderableType
from rich.text import Text

from agon.core.render import status_lines
from agon.games.alak.rules import EMPTY, STONES, AlakState, Scoring

CAPTURED_TEXT = "*"
# Rich: stones as discs, the points just captured as red crosses, the last stone underlined.
RICH_SYMBOLS = {STONES[0]: "●", STONES[1]: "○"}
CAPTURED_RICH = ("×", "bold red")
LAST_STONE = "bold underline"


def _slot_width(state: AlakState) -> int:
    return len(str(state.game.size)) + 2


def _last_point(state: AlakState) -> int | None:
    if state.history and state.history[-1] < state.game.size:
        return state.history[-1]
    return None


def _notes(state: AlakState) -> list[str]:
    """What the board alone does not show: fresh captures and prisoners where they count."""
    lines = []
    if state.just_captured:
        points = ", ".join(str(p + 1) for p in sorted(state.just_captured))
        line = f"Just captured: {points}"
        if state.game.rule_set.capture_ban and not state.is_over:
            line += " (the side to move may not place there now)"
        lines.append(line)
    if state.game.rule_set.scoring is Scoring.AREA_AND_PRISONERS:
        black, white = state.prisoners
        lines.append(f"Prisoners: Black {black}, White {white}")
    return lines


def render_text(state: AlakState, *, ascii: bool = False) -> str:
    """Numbers over the line of points: ``x`` Black, ``o`` White, ``*`` just captured."""
    width = _slot_width(state)
    empty = EMPTY if ascii else "·"
    numbers = "".join(str(point + 1).ljust(width) for point in range(state.game.size))
    symbols = []
    for point, stone in enumerate(state.board):
        if point in state.just_captured:
            symbols.append(CAPTURED_TEXT)
        else:
            symbols.append(empty if stone == EMPTY else stone)
    connector = ("-" if ascii else "─") * (width - 1)
    legend = f"x Black, o White{', * just captured' if state.just_captured else ''}"
    lines = ["  " + numbers.rstrip(), "  " + connector.join(symbols), legend]
    return "\n".join([*lines, *_notes(state), *status_lines(state)])


def render_rich(state: AlakState) -> RenderableType:
    """The line of points with ● Black and ○ White stones."""
    width = _slot_width(state)
    last = _last_point(state)
    numbers = "".join(str(point + 1).ljust(width) for point in range(state.game.size))
    line = Text("  ")
    for point, stone in enumerate(state.board):
        if point:
            line.append("─" * (width - 1), style="dim")
        if point in state.just_captured:
            line.append(*CAPTURED_RICH)
        elif stone == EMPTY:
            line.append("·", style="dim")
        else:
            line.append(RICH_SYMBOLS[stone], style=LAST_STONE if point == last else "bold")
    lines = [Text("  " + numbers.rstrip(), style="dim"), line]
    lines.extend(Text(note, style="dim") for note in _notes(state))
    lines.extend(Text(text) for text in status_lines(state))
    return Group(*lines)


# --- SVG (the contract: docs/architecture.md) ----------------------------------------------------

POINT = 40
MARGIN = 12
HEIGHT = 78
LINE_Y = 30
STONE_RADIUS = 15
CROSS = 7

SVG_STYLE = """
.board .frame { fill: #e3c28f; }
.board .point rect { fill: transparent; }
.board .point.highlight rect { fill: #ffe066; mix-blend-mode: multiply; }
.board .point.last rect { fill: #a9c8ff; mix-blend-mode: multiply; }
.board .point line { stroke: #4a2f17; stroke-width: 2; }
.board .point .capture-mark { stroke: #c0261a; stroke-width: 3; stroke-linecap: round; }
.board .label { fill: #4a2f17; font: 12px sans-serif; text-anchor: middle; }
.board .stone { stroke-width: 1.5; }
.board .stone.black { fill: #161616; stroke: #000; }
.board .stone.white { fill: #fafafa; stroke: #444; }
"""


def render_svg(
    state: AlakState, *, highlight: Iterable[int] = (), last_move: int | None = None
) -> str:
    """The board as SVG: one ``g.point`` per point (``data-place`` counts from 1)."""
    game = state.game
    highlighted = set(highlight)
    total_width = game.size * POINT + 2 * MARGIN
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="board alak" '
        f'viewBox="0 0 {total_width} {HEIGHT}" data-size="{game.size}" role="img" '
        f'aria-label="{escape(game.description)}">',
        f"<style>{SVG_STYLE}</style>",
        f'<rect class="frame" x="0" y="0" width="{total_width}" height="{HEIGHT}" rx="6"/>',
    ]
    for point, stone in enumerate(state.board):
        classes = ["point"]
        if point in highlighted:
            classes.append("highlight")
        if point in state.just_captured:
            classes.append("captured")
        if point == last_move:
            classes.append("last")
        left = MARGIN + point * POINT
        centre = left + POINT // 2
        # The line runs between the outermost points, not past them.
        start = centre if point == 0 else left
        end = centre if point == game.size - 1 else left + POINT
        content = "empty" if stone == EMPTY else (
            "black stone" if stone == STONES[0] else "white stone"
        )
        item = [
            f'<g class="{" ".join(classes)}" data-place="{point + 1}" '
            f'aria-label="point {point + 1}, {content}">',
            f'<rect x="{left}" y="0" width="{POINT}" height="{HEIGHT}"/>',
            f'<line x1="{start}" y1="{LINE_Y}" x2="{end}" y2="{LINE_Y}"/>',
            f'<line x1="{centre}" y1="{LINE_Y - 5}" x2="{centre}" y2="{LINE_Y + 5}"/>',
            f'<text class="label" x="{centre}" y="{HEIGHT - 12}">{point + 1}</text>',
        ]
        if stone != EMPTY:
            colour = "black" if stone == STONES[0] else "white"
            item.append(
                f'<circle class="stone {colour}" cx="{centre}" cy="{LINE_Y}" r="{STONE_RADIUS}"/>'
            )
        if point in state.just_captured:
            item.append(
                f'<path class="capture-mark" d="M{centre - CROSS},{LINE_Y - CROSS} '
                f"L{centre + CROSS},{LINE_Y + CROSS} M{centre - CROSS},{LINE_Y + CROSS} "
                f'L{centre + CROSS},{LINE_Y - CROSS}"/>'
            )
        item.append("</g>")
        parts.append("".join(item))
    parts.append("</svg>")
    return "\n".join(parts)
