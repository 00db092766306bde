"""Alternator boards as plain text, Rich renderables and SVG.

Every cell shows what the rules know of it: a pit as the arrow of its stem, a root as the size
of its tree (a blank cell, a tree of size 1, as a dot). A tree belongs to the colour of its root
cell, so the cell colours (brackets in plain text) also show who owns each tree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from html import escape

from rich.console import Group, RenderableType
from rich.text import Text

from agon.core.render import status_lines
from agon.games.alternator.rules import PIT_SYMBOLS, Alternator, AlternatorState

UNICODE_ARROWS = "↑→↓←"  # by direction, like PIT_SYMBOLS (the ASCII arrows)

# Rich styles: wooden dark and light cells; a tree's size drawn as a stone of its owner.
DARK_CELL = "on #8b5a2b"
LIGHT_CELL = "on #e8cfa0"
PIT_ON_DARK = "#f3e2c0"
PIT_ON_LIGHT = "#4a2f17"
BLACK_TREE = "bold #ffffff on #111111"
WHITE_TREE = "bold #111111 on #ffffff"
LAST_MOVE = "bold #d0201a"


def _cell_symbol(state: AlternatorState, cell: int, ascii: bool) -> str:
    value = state.cells[cell]
    if value < 0:
        return (PIT_SYMBOLS if ascii else UNICODE_ARROWS)[-1 - value]
    if value == 1:
        return "." if ascii else "·"
    return str(value)


def _content_width(state: AlternatorState) -> int:
    return max(len(str(size)) for size in state.roots().values())


def _file_labels(game: Alternator, cell_width: int) -> str:
    letters = "".join(chr(ord("a") + file).center(cell_width) for file in range(game.width))
    return "   " + letters.rstrip()


def _ranks_top_down(game: Alternator) -> range:
    return range(game.height - 1, -1, -1)


def render_text(state: AlternatorState, *, ascii: bool = False) -> str:
    """The board with dark cells in brackets, then the legend, side to move and score."""
    game = state.game
    width = _content_width(state)
    lines = [_file_labels(game, width + 2)]
    for rank in _ranks_top_down(game):
        row = []
        for file in range(game.width):
            cell = rank * game.width + file
            symbol = _cell_symbol(state, cell, ascii).rjust(width)
            row.append(f"[{symbol}]" if game.is_dark(cell) else f" {symbol} ")
        lines.append(f"{rank + 1:>2} {''.join(row)} {rank + 1}")
    lines.append(lines[0])
    arrows = PIT_SYMBOLS if ascii else UNICODE_ARROWS
    lines.append(f"[ ] dark cells (Black's); numbers: tree sizes; {arrows}: pits and their stems")
    lines.extend(status_lines(state))
    return "\n".join(lines)


def _last_move_cells(state: AlternatorState) -> set[int]:
    game = state.game
    if not state.history or state.history[-1] == game.pass_move:
        return set()
    pit, root = game.move_cells(state.history[-1])
    return {pit} if root is None else {pit, root}


def render_rich(state: AlternatorState) -> RenderableType:
    """The board with coloured cells; tree sizes drawn as stones of their owner's colour."""
    game = state.game
    width = _content_width(state)
    last = _last_move_cells(state)
    lines = [Text(_file_labels(game, width + 2))]
    for rank in _ranks_top_down(game):
        line = Text(f"{rank + 1:>2} ")
        for file in range(game.width):
            cell = rank * game.width + file
            dark = game.is_dark(cell)
            background = DARK_CELL if dark else LIGHT_CELL
            symbol = _cell_symbol(state, cell, ascii=False)
            if state.size(cell) >= 2:
                style = BLACK_TREE if dark else WHITE_TREE
            elif cell in last:
                style = f"{LAST_MOVE} {background}"
            else:
                style = f"{PIT_ON_DARK if dark else PIT_ON_LIGHT} {background}"
            line.append(" " * (width - len(symbol) + 1), style=background)
            line.append(symbol, style=style)
            line.append(" ", style=background)
        line.append(f" {rank + 1}")
        lines.append(line)
    lines.append(lines[0].copy())
    lines.append(
        Text.assemble(
            ("Trees of ", "dim"),
            ("Black", BLACK_TREE),
            (" and ", "dim"),
            ("White", WHITE_TREE),
            (" by size; arrows: pits and their stems", "dim"),
        )
    )
    lines.extend(Text(line) for line in status_lines(state))
    return Group(*lines)


# --- SVG (the contract: docs/architecture.md) ----------------------------------------------------

CELL = 40
MARGIN = 22

SVG_STYLE = """
.board .frame { fill: #5c3a1e; }
.board .label { fill: #f3e2c0; font: 11px sans-serif; text-anchor: middle; }
.board .square.dark { fill: #b07a4a; }
.board .square.light { fill: #f0d9b5; }
.board .cell rect { fill: transparent; stroke: none; }
.board .cell.last rect { fill: #a9c8ff; mix-blend-mode: multiply; }
.board .cell.highlight rect { fill: #ffe066; mix-blend-mode: multiply; stroke: #e0a800;
  stroke-width: 2; }
.board .stem { stroke: #2b1a0c; stroke-width: 3; stroke-linecap: round; }
.board .pit { fill: #2b1a0c; }
.board .root-mark { stroke-width: 1.5; }
.board .root-mark.owner-black { fill: #161616; stroke: #000; }
.board .root-mark.owner-white { fill: #fafafa; stroke: #444; }
.board .size { font: bold 15px sans-serif; text-anchor: middle; dominant-baseline: central; }
.board .size.owner-black { fill: #fafafa; }
.board .size.owner-white { fill: #161616; }
"""


def _centre(game: Alternator, cell: int) -> tuple[int, int]:
    file, rank = cell % game.width, cell // game.width
    return MARGIN + file * CELL + CELL // 2, MARGIN + (game.height - 1 - rank) * CELL + CELL // 2


def _drawing_order(state: AlternatorState) -> list[int]:
    """Cells farthest from their tree's root first, roots last.

    A stem ends at the centre of the next cell of its tree, so that cell must be drawn after
    it: its pit dot or its root's disc then covers the stem's end.
    """
    steps_to_root: dict[int, int] = {}
    for start in range(state.game.cells):
        stems: list[int] = []
        cell = start
        while cell not in steps_to_root and (target := state.stem_target(cell)) is not None:
            stems.append(cell)
            cell = target
        steps = steps_to_root.setdefault(cell, 0)
        for pit in reversed(stems):  # (each cell's steps counted once, from its root down)
            steps += 1
            steps_to_root[pit] = steps
    return sorted(range(state.game.cells), key=lambda cell: (-steps_to_root[cell], cell))


def render_svg(
    state: AlternatorState, *, highlight: Iterable[int] = (), last_move: int | None = None
) -> str:
    """The board as SVG: coloured squares, then one ``g.cell`` per cell with its marks."""
    game = state.game
    highlighted = set(highlight)
    last: set[int] = set()
    if last_move is not None and last_move != game.pass_move:
        pit, root = game.move_cells(last_move)
        last = {pit} if root is None else {pit, root}
    drawn = _cells_drawn(game)
    parts = [_svg_background(game)]
    for cell in _drawing_order(state):
        parts.append(drawn(cell, state.cells[cell], cell in highlighted, cell in last))
    parts.append("</svg>")
    return "\n".join(parts)


@lru_cache(maxsize=64)  # (one a board size and komi: bounded, since a client chooses them)
def _svg_background(game: Alternator) -> str:
    """What every position of the board draws the same: frame, labels, squares (the arena
    draws the board at each move)."""
    board_width, board_height = game.width * CELL, game.height * CELL
    total_width, total_height = board_width + 2 * MARGIN, board_height + 2 * MARGIN
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="board alternator" '
        f'viewBox="0 0 {total_width} {total_height}" data-width="{game.width}" '
        f'data-height="{game.height}" role="img" aria-label="{escape(game.description)}">',
        f"<style>{SVG_STYLE}</style>",
        f'<rect class="frame" x="0" y="0" width="{total_width}" height="{total_height}" rx="6"/>',
    ]
    for file in range(game.width):
        x = MARGIN + file * CELL + CELL // 2
        letter = chr(ord("a") + file)
        parts += [_label(x, MARGIN - 7, letter), _label(x, MARGIN + board_height + 15, letter)]
    for rank in range(game.height):
        y = MARGIN + (game.height - 1 - rank) * CELL + CELL // 2 + 4
        number = str(rank + 1)
        parts += [_label(MARGIN // 2, y, number), _label(total_width - MARGIN // 2, y, number)]
    parts.append('<g class="squares">')
    for cell in range(game.cells):
        x, y = (c - CELL // 2 for c in _centre(game, cell))
        colour = "dark" if game.is_dark(cell) else "light"
        parts.append(
            f'<rect class="square {colour}" x="{x}" y="{y}" width="{CELL}" height="{CELL}"/>'
        )
    parts.append("</g>")
    return "\n".join(parts)


def _label(x: int, y: int, text: str) -> str:
    return f'<text class="label" x="{x}" y="{y}">{text}</text>'


BOARDS_DRAWN = 8
"""Boards (a size and komi each) whose cells are kept drawn at once, each up to
:data:`CELLS_DRAWN` cells: 16,384 cells in all, whatever boards a client asks for."""
CELLS_DRAWN = 2048
"""Cells kept drawn for one board: 300 random games of 8×8 drew 1,718 different ones."""


@lru_cache(maxsize=BOARDS_DRAWN)
def _cells_drawn(game: Alternator) -> Callable[[int, int, bool, bool], str]:
    """The board's cells drawn, each from what its marks depend on: its content in the rules'
    array (a pit's direction or a root's size), and whether it is lit or part of the last move.
    The arena draws the board at every move, and most cells are as before."""

    @lru_cache(maxsize=CELLS_DRAWN)
    def drawn(cell: int, content: int, highlighted: bool, last: bool) -> str:
        target = game.stem_end(cell, content)
        return _svg_cell_drawn(game, cell, target, max(content, 0), highlighted, last)

    return drawn


def _svg_cell_drawn(
    game: Alternator, cell: int, target: int | None, size: int, highlighted: bool, last: bool
) -> str:
    """One cell's marks, from what they depend on (a pit's stem ends in ``target``)."""
    pit = target is not None
    cx, cy = _centre(game, cell)
    classes = ["cell", "dark" if game.is_dark(cell) else "light"]
    classes.append("pit" if pit else "root")
    if highlighted:
        classes.append("highlight")
    if last:
        classes.append("last")
    half = CELL // 2
    name = game.cell_name(cell)
    content = f", tree of {size}" if size >= 2 else ", pit" if pit else ""
    parts = [
        f'<g class="{" ".join(classes)}" data-place="{name}" aria-label="{name}{content}">',
        f'<rect x="{cx - half}" y="{cy - half}" width="{CELL}" height="{CELL}"/>',
    ]
    if target is not None:
        tx, ty = _centre(game, target)
        parts.append(f'<line class="stem" x1="{cx}" y1="{cy}" x2="{tx}" y2="{ty}"/>')
        parts.append(f'<circle class="pit" cx="{cx}" cy="{cy}" r="5"/>')
    if size >= 2:
        owner = f"owner-{game.owner_of_cell(cell).label}"
        parts.append(f'<circle class="root-mark {owner}" cx="{cx}" cy="{cy}" r="{CELL * 0.36:g}"/>')
        parts.append(f'<text class="size {owner}" x="{cx}" y="{cy}">{size}</text>')
    parts.append("</g>")
    return "".join(parts)
