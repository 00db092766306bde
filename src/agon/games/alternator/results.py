"""What ``agon tables`` solves of Alternator, and its section of docs/results.md."""

from __future__ import annotations

from collections.abc import Iterator

from agon.core.results import (
    Catalogue,
    Job,
    QualityGame,
    Results,
    cost,
    open_moves,
    points,
    signed,
    unsolved,
)
from agon.games.alternator import symmetry
from agon.games.alternator.rules import Alternator

MAX_CELLS = 20
"""Every board of up to this many cells is solved (one of each pair of transposed boards)."""
STRETCH = ((5, 5),)
"""Larger boards tried beyond them."""


def boards() -> list[tuple[int, int]]:
    """The boards solved: W ≤ H, from the fewest cells."""
    found = [
        (w, h)
        for h in range(1, MAX_CELLS + 1)
        for w in range(1, h + 1)
        if 2 <= w * h <= MAX_CELLS
    ]
    return [*sorted(found, key=lambda wh: (wh[0] * wh[1], wh[0])), *STRETCH]


def jobs() -> Iterator[Job]:
    for width, height in boards():
        yield Job(
            f"alternator-{width}x{height}", Alternator(width, height),
            family=f"alternator-{width}",
        )


def section(results: Results) -> list[str]:
    lines = [
        "## Alternator",
        "",
        "Values are Black's margin with perfect play **without komi**; the komi only shifts the "
        "final margin, so the value is also the *fair komi* (the komi that makes perfect play a "
        "draw). A half-point less lets Black win by ½, a half-point more lets White win by ½. "
        "The transpose maps a W×H board onto an H×W board keeping every cell's colour (a file "
        "becomes a rank, a1 stays a1), so both have the same value; only W ≤ H is listed.",
        "Best openings are listed one per class of symmetric moves.",
        "",
        "| board | value | fair komi | Black wins with komi | White wins with komi "
        "| best openings | nodes | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for width, height in boards():
        game = Alternator(width, height)
        record = results.get(f"alternator-{width}x{height}")
        if record is None or record["status"] != "solved":
            lines.append(f"| {width}×{height} | {unsolved(game, record)} ||||||| ")
            continue
        value = record["value"]
        found = symmetry.symmetries(game)
        lines.append(
            f"| {width}×{height} | {signed(value)} | {points(value)} | {points(value - 0.5)} "
            f"| {points(value + 0.5)} | {open_moves(game, record, found.move_maps, found.count)} "
            f"| {cost(record)} |"
        )
    return lines


CATALOGUE = Catalogue(
    jobs=jobs,
    sections=section,
    quality=(QualityGame("alternator-4x4", "--size 4x4", Alternator(4, 4)),),
)
