"""Tic-tac-toe boards as plain text, Rich renderables and SVG (the contract every renderer
follows: docs/architecture.md in Agon)."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from rich.console import Group, RenderableType
from rich.text import Text

from agon.core.render import status_lines
from agon_tictactoe.rules import EMPTY, STONES, TicTacToe, TicTacToeState

CONTENTS = {STONES[0]: "black stone", STONES[1]: "white stone", EMPTY: "empty"}
"""What a cell holds, in words (the SVG's aria-label)."""


def _file_labels(game: TicTacToe) -> str:
    return "   " + " ".join(chr(ord("a") + file) for file in range(game.width))


def _last_cell(state: TicTacToeState) -> int | None:
    return state.history[-1] if state.history else None


def render_text(state: TicTacToeState, *, ascii: bool = False) -> str:
    """The board, ranks from the top: ``x`` Black, ``o`` White, ``.`` (or ``·``) empty."""
    game = state.game
    empty = EMPTY if ascii else "·"
    lines = [_file_labels(game)]
    for rank in reversed(range(game.height)):
        row = state.board[rank * game.width : (rank + 1) * game.width]
        symbols = " ".join(empty if cell == EMPTY else cell for cell in row)
        lines.append(f"{rank + 1:>2} {symbols} {rank + 1}")
    lines.append(lines[0])
    lines.append(f"x Black, o White; {game.line} in a row wins")
    return "\n".join([*lines, *status_lines(state, outcome_only=True)])


def render_rich(state: TicTacToeState) -> RenderableType:
    """The board with bold stones, the last one underlined."""
    game = state.game
    last = _last_cell(state)
    lines = [Text(_file_labels(game), style="dim")]
    for rank in reversed(range(game.height)):
        line = Text(f"{rank + 1:>2} ", style="dim")
        for file in range(game.width):
            cell = rank * game.width + file
            content = state.board[cell]
            if file:
                line.append(" ")
            if content == EMPTY:
                line.append("·", style="dim")
            else:
                style = "bold underline" if cell == last else "bold"
                line.append(content, style=style + (" red" if content == "x" else " blue"))
        lines.append(line)
    lines.extend(Text(text) for text in status_lines(state, outcome_only=True))
    return Group(*lines)


# --- SVG ------------------------------------------------------------------------------------------

CELL = 60
MARGIN = 22
MARK = 18

SVG_STYLE = """
.board .frame { fill: #f4efe4; }
.board .label { fill: #6b5a3e; font: 12px sans-serif; text-anchor: middle; }
.board .cell rect { fill: #fffdf7; stroke: #3b3325; stroke-width: 2; }
.board .cell.highlight rect { fill: #ffe066; }
.board .cell.last rect { fill: #d6e4ff; }
.board .mark { fill: none; stroke-width: 7; stroke-linecap: round; }
.board .mark.black { stroke: #c0261a; }
.board .mark.white { stroke: #1f4fa8; }
"""


def render_svg(
    state: TicTacToeState, *, highlight: Iterable[int] = (), last_move: int | None = None
) -> str:
    """The board as SVG: one ``g.cell`` per cell (``data-place`` its name, ``aria-label``
    what is there); Black's stones drawn as crosses, White's as rings."""
    game = state.game
    highlighted = set(highlight)
    total_width = game.width * CELL + 2 * MARGIN
    total_height = game.height * CELL + 2 * MARGIN
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="board tictactoe" '
        f'viewBox="0 0 {total_width} {total_height}" data-width="{game.width}" '
        f'data-height="{game.height}" role="img" aria-label="{escape(game.description)}">',
        f"<style>{SVG_STYLE}</style>",
        f'<rect class="frame" x="0" y="0" width="{total_width}" height="{total_height}" rx="6"/>',
    ]
    for file in range(game.width):
        x = MARGIN + file * CELL + CELL // 2
        parts.append(_label(x, total_height - 6, chr(ord("a") + file)))
    for rank in range(game.height):
        y = MARGIN + (game.height - 1 - rank) * CELL + CELL // 2 + 4
        parts.append(_label(MARGIN // 2, y, str(rank + 1)))
    for cell in range(game.cells):
        parts.append(_svg_cell(state, cell, cell in highlighted, cell == last_move))
    parts.append("</svg>")
    return "\n".join(parts)


def _label(x: int, y: int, text: str) -> str:
    return f'<text class="label" x="{x}" y="{y}">{text}</text>'


def _svg_cell(state: TicTacToeState, cell: int, highlighted: bool, last: bool) -> str:
    game = state.game
    file, rank = cell % game.width, cell // game.width
    left, top = MARGIN + file * CELL, MARGIN + (game.height - 1 - rank) * CELL
    cx, cy = left + CELL // 2, top + CELL // 2
    content = state.board[cell]
    classes = ["cell"] + (["highlight"] if highlighted else []) + (["last"] if last else [])
    name = game.cell_name(cell)
    parts = [
        f'<g class="{" ".join(classes)}" data-place="{name}" '
        f'aria-label="{name}, {CONTENTS[content]}">',
        f'<rect x="{left}" y="{top}" width="{CELL}" height="{CELL}"/>',
    ]
    if content == STONES[0]:
        parts.append(
            f'<path class="mark black" d="M{cx - MARK},{cy - MARK} L{cx + MARK},{cy + MARK} '
            f'M{cx - MARK},{cy + MARK} L{cx + MARK},{cy - MARK}"/>'
        )
    elif content == STONES[1]:
        parts.append(f'<circle class="mark white" cx="{cx}" cy="{cy}" r="{MARK}"/>')
    parts.append("</g>")
    return "".join(parts)
