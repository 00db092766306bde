"""Solved results: what a game asks ``agon tables`` to solve, and how docs/results.md shows it.

A game declares a :class:`Catalogue` (through its plugin): its jobs (positions to solve, in
families of growing boards), the variants on which the agents' move quality is measured, and
the sections of the report, written from the saved records with the helpers here. A record is
the JSON object ``agon tables`` saves for a job: ``status`` ``solved`` (``value``,
``best_moves``, ``moves`` where every opening is valued, ``lines``) or ``timeout`` (the proven
``lower`` and ``upper`` bounds, infinite where nothing was proven), with what it cost.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agon.core.game import Game, State, format_points

Record = dict[str, Any]
"""One job's saved result."""
Results = Mapping[str, Record]
"""Every job's saved result, by key."""


@dataclass(frozen=True)
class Work:
    """The search that went into a solver's tables, over all its runs."""

    nodes: int = 0
    seconds: float = 0.0
    runs: int = 0

    def __str__(self) -> str:
        runs = f"{self.runs} run{'s' if self.runs != 1 else ''}"
        return f"{self.nodes:,} nodes, {self.seconds:,.0f} s over {runs}"


@dataclass(frozen=True)
class Job:
    """One thing to solve: a position of a variant, its moves' values too if ``openings``."""

    key: str
    game: Game
    position: str | None = None
    openings: bool = False
    lines_after: tuple[str, ...] = ()
    """First moves after which a line of perfect play is recorded (to explain a claim)."""
    lines_only: bool = False
    """Only the lines: the position's own value is not solved (it may be far harder than the
    positions after ``lines_after``)."""
    family: str = ""
    """Jobs solved one at a time, in order, each harder than the last (default: the key
    without its last part: ``GAME-RULES`` of ``GAME-RULES-9``)."""
    grows: bool = True
    """Whether it is a larger board of its family: once a smaller one runs out of time before
    its value is proven, it gets only a short time, for bounds."""

    @property
    def family_name(self) -> str:
        return self.family or self.key.rsplit("-", 1)[0]

    def state(self) -> State:
        return self.game.parse_position(self.position) if self.position else self.game.new_state()


@dataclass(frozen=True)
class QualityGame:
    """A variant the agents' move quality is measured on (``agon quality``)."""

    label: str
    options: str
    """The variant's options on the command line."""
    game: Game


@dataclass(frozen=True)
class Catalogue:
    """What a game's ``agon tables`` solves and measures, and its part of the report."""

    jobs: Callable[[], Iterable[Job]]
    """Every job, the cheap ones first."""
    sections: Callable[[Results], list[str]]
    """The report's Markdown lines for the game, from every saved record."""
    quality: tuple[QualityGame, ...] = ()


# --- writing records as Markdown ------------------------------------------------------------


def points(value: float) -> str:
    """A margin or bound: ``3``, ``2.5``, ``∞`` where unbounded."""
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return format_points(value)


def signed(value: float) -> str:
    return f"+{points(value)}" if value > 0 else points(value)


def run_notes(record: Record) -> str:
    """The transposition table's size, where a run set it, whether the moves were solved
    apart, and the work of the runs before this one, where it went on from their tables (its
    own nodes and seconds are given)."""
    notes = [f"table 2^{record['table_bits']}"] if "table_bits" in record else []
    if "moves_apart" in record:
        notes.append(f"each move solved apart, {record['moves_apart']} at once")
    if "earlier" in record:
        notes.append(f"going on from {Work(**record['earlier'])} before")
    return f" ({'; '.join(notes)})" if notes else ""


def cost(record: Record) -> str:
    """The record's nodes and seconds, as two table cells."""
    return f"{record['nodes']:,} | {record['seconds']:.2f}{run_notes(record)}"


def in_move_order(game: Game, named: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Moves named as the game writes them (with what goes with each), in move-number order
    (saved results sort ``10`` before ``2``)."""
    return sorted(named, key=lambda item: game.parse_move(item[0]))


def open_moves(game: Game, record: Record, move_maps: Any, symmetries: int) -> str:
    """The best moves, one per class of symmetric moves (``move_maps``' first ``symmetries``
    rows map each move to its images)."""
    moves = [game.parse_move(name) for name in record["best_moves"]]
    shown: list[str] = []
    covered: set[int] = set()
    for move in moves:
        if move in covered:
            continue
        orbit = {int(images[move]) for images in move_maps[:symmetries]}
        covered |= orbit
        extra = len(orbit & set(moves)) - 1
        shown.append(game.format_move(move) + (f" (+{extra} symmetric)" if extra else ""))
    return ", ".join(shown) or "—"


def line_item(label: str, played: Record) -> str:
    """A line of perfect play as a list item."""
    moves = " ".join(played["moves"])
    if "stopped" in played:
        return f"- {label}: `{moves}` — {played['stopped']} after {len(played['moves'])} moves"
    return f"- {label}: `{moves}` — {played['end']}, Black's margin {signed(played['margin'])}"


def known_value(record: Record | None) -> float | None:
    """The value a job proved: solved, or out of time with its bounds met (its best moves not
    all checked)."""
    if record is None:
        return None
    if record["status"] == "solved":
        return float(record["value"])
    return float(record["lower"]) if record["lower"] == record["upper"] else None


def bounds_text(lower: float | None, upper: float | None) -> str:
    """A move's bounds (null where a side is not bounded) in a table cell."""
    if lower is not None and upper is not None:
        return signed(lower) if lower == upper else f"{signed(lower)}…{signed(upper)}"
    if upper is not None:
        return f"≤{signed(upper)}"
    return "?" if lower is None else f"≥{signed(lower)}"


def moves_so_far(game: Game, record: Record) -> str:
    """The moves with a bound proven when a job stopped, in move order."""
    return " ".join(
        f"{move}:{bounds_text(*bounds)}"
        for move, bounds in in_move_order(game, record["move_bounds"].items())
    )


def unsolved(game: Game, record: Record | None) -> str:
    """What a job that is not solved found: its value with its moves not all checked, or the
    bounds it proved, or that it was not attempted."""
    if record is None:
        return "not attempted"
    moves = f"; moves so far: {moves_so_far(game, record)}" if "move_bounds" in record else ""
    low, high = points(record["lower"]), points(record["upper"])
    if record["lower"] == record["upper"]:
        seconds = record["max_seconds"]
        spent, checked = "", ""
        if "value_seconds" in record:
            # a run going on from earlier tables may find the value there at once
            this_run = " of this run" if "earlier" in record else ""
            spent = (
                f" (proven in {record['value_seconds']:,} s, {record['value_nodes']:,} nodes"
                f"{this_run})"
            )
        if "best_so_far" in record:
            checked = f" (best so far: {', '.join(record['best_so_far']) or 'none'}"
            if record["not_best"]:
                checked += f"; not best: {', '.join(record['not_best'])}"
            checked += ")"
        return (
            f"value {signed(record['lower'])}{spent}; its moves not all solved in {seconds:g} s"
            f"{run_notes(record)}{checked}{moves}"
        )
    bounds = {
        (True, True): "no bound proven", (False, True): f"value ≥ {low}",
        (True, False): f"value ≤ {high}", (False, False): f"value in [{low}, {high}]",
    }[math.isinf(record["lower"]), math.isinf(record["upper"])]
    return f"not solved in {record['max_seconds']:g} s{run_notes(record)} ({bounds}{moves})"

