"""What ``agon tables`` solves of tic-tac-toe, and its section of Agon's docs/results.md."""

from __future__ import annotations

from collections.abc import Iterator

from agon.core.results import Catalogue, Job, Results, cost, unsolved
from agon_tictactoe.rules import TicTacToe

MAX_CELLS = 16
"""Every board of up to this many cells is solved, with every line that fits a file (4 × 4
with four in a row takes seconds; 4 × 5 with four, minutes)."""

PUBLISHED = {(3, 3, 3): 0, (3, 4, 3): 1, (4, 4, 3): 1, (4, 4, 4): 0}
"""Published values of m,n,k-games, Black's margin by (width, height, line), W ≤ H: 3,3,3 is a
draw, 4,3,3 and 4,4,3 are won by the first player, 4,4,4 is a draw (J. W. H. M. Uiterwijk and
H. J. van den Herik, "The advantage of the initiative", Information Sciences 122 (2000); as
https://en.wikipedia.org/wiki/M,n,k-game lists them)."""

VALUES = {1: "Black wins", 0: "draw", -1: "White wins"}


def boards() -> list[tuple[int, int, int]]:
    """(width, height, line) of every board solved: W ≤ H (a board and its transpose have the
    same value), lines up to H, from the fewest cells."""
    found = [
        (width, height, line)
        for height in range(1, 6)
        for width in range(1, height + 1)
        for line in range(1, height + 1)
        if width * height <= MAX_CELLS
    ]
    return sorted(found, key=lambda board: (board[0] * board[1], board[0], board[2]))


def job_key(width: int, height: int, line: int) -> str:
    return f"tictactoe-{width}x{height}-{line}"


def jobs() -> Iterator[Job]:
    for width, height, line in boards():
        # a family per line length, its boards growing
        yield Job(
            job_key(width, height, line), TicTacToe(width, height, line),
            family=f"tictactoe-line-{line}",
        )


def section(results: Results) -> list[str]:
    lines = [
        "## Tic-tac-toe",
        "",
        "The example game (examples/tictactoe), as an m,n,k-game: a W×H board, a line of k to "
        "win. A board and its transpose have the same value; only W ≤ H is listed, with every "
        "line that fits. *Published*: the value in the literature where there is one (J. W. H. "
        "M. Uiterwijk and H. J. van den Herik, \"The advantage of the initiative\", "
        "Information Sciences 122 (2000); https://en.wikipedia.org/wiki/M,n,k-game): 3×3 with "
        "three is a draw, 4×3 and 4×4 with three are won by the first player, 4×4 with four is "
        "a draw.",
        "",
        "| board | line | value | published | best openings | nodes | seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    for width, height, line in boards():
        game = TicTacToe(width, height, line)
        record = results.get(job_key(width, height, line))
        known = PUBLISHED.get((width, height, line))
        published = "" if known is None else VALUES[known]
        if record is None or record["status"] != "solved":
            lines.append(f"| {width}×{height} | {line} | {unsolved(game, record)} "
                         f"| {published} ||||")
            continue
        value = int(record["value"])
        if known is not None and known != value:
            published += " (**differs**)"
        best = record["best_moves"]
        openings = "every cell" if len(best) == game.cells else ", ".join(best) or "—"
        lines.append(
            f"| {width}×{height} | {line} | {VALUES[value]} | {published} | {openings} "
            f"| {cost(record)} |"
        )
    return lines


CATALOGUE = Catalogue(jobs=jobs, sections=section)
