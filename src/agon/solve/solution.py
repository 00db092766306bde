"""What a solve gives, and how a long one reports: values, bounds proven so far, a solve cut
short (:class:`SolveInterrupted`), and progress lines."""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agon.core.game import Move
from agon.core.results import Work

Progress = Callable[[str], None]
"""Where a long solve reports how it goes (a line at a time)."""
Bounds = tuple[float, float]
"""Black's margin proven at least the first and at most the second (±infinity: no bound)."""
NO_BOUNDS: Bounds = (float("-inf"), float("inf"))
"""Nothing proven."""


@dataclass(frozen=True)
class ProvenValue:
    """A position's value proven before its moves were all checked: what proving it took,
    and the moves found to keep it (``best``) or not (``not_best``) so far, as text."""

    nodes: int
    seconds: float
    best: list[str]
    not_best: list[str]

    def __str__(self) -> str:
        found = f"best so far: {', '.join(self.best) or 'none'}"
        if self.not_best:
            found += f"; not best: {', '.join(self.not_best)}"
        return (
            f"proven in {self.nodes:,} nodes and {self.seconds:.1f} s; its best moves were not "
            f"all checked ({found})"
        )


class SolveInterrupted(Exception):
    """A solve stopped by Ctrl-C or its time limit, with the bounds proven so far.

    The bounds are Black's margin (as :attr:`Solution.value` reports it) at the position whose
    value was being searched when it stopped: the root, or one of its moves for openings.
    Where the root's value was proven and only its moves were being checked, ``proven`` says
    what the value took and which moves were checked, so a table can still report them.
    """

    def __init__(
        self, lower: float, upper: float, nodes: int, seconds: float, timed_out: bool,
        proven: ProvenValue | None = None, earlier: Work | None = None,
        move_bounds: dict[str, Bounds] | None = None,
    ) -> None:
        self.lower, self.upper, self.nodes, self.seconds = lower, upper, nodes, seconds
        self.timed_out, self.proven = timed_out, proven
        self.earlier = earlier or Work()
        """The work of the earlier runs this one went on from (``nodes`` is this run's)."""
        self.move_bounds = move_bounds or {}
        """The root's moves (by name, in move order) with a bound proven on the position after
        them, where its moves were being searched: equal bounds are the move's value."""
        if proven is not None:
            found = f"the value is {bound_text(lower)} ({proven})"
        elif math.isinf(lower) and math.isinf(upper):
            found = "no bound proven"
        elif math.isinf(upper):
            found = f"the value is at least {bound_text(lower)}"
        elif math.isinf(lower):
            found = f"the value is at most {bound_text(upper)}"
        else:
            found = f"the value lies between {bound_text(lower)} and {bound_text(upper)}"
        super().__init__(f"{self.reason}: {found}")

    @property
    def reason(self) -> str:
        """Why it stopped: "out of time" or "interrupted"."""
        return "out of time" if self.timed_out else "interrupted"

    def found(self) -> dict[str, Any]:
        """What was proven besides the bounds, as JSON holds it: where the value was proven,
        what that took and the moves checked so far (``value_nodes``, ``value_seconds``,
        ``best_so_far``, ``not_best``); and the moves' bounds (``move_bounds``: move →
        ``[lower, upper]``, null where a side is not bounded)."""
        data: dict[str, Any] = {}
        if self.proven is not None:
            data["value_nodes"] = self.proven.nodes
            data["value_seconds"] = round(self.proven.seconds, 2)
            data["best_so_far"] = self.proven.best
            data["not_best"] = self.proven.not_best
        if self.move_bounds:
            data["move_bounds"] = {
                move: [json_number(bound) for bound in bounds]
                for move, bounds in self.move_bounds.items()
            }
        return data


def json_number(value: float) -> float | int | None:
    """A margin or bound as JSON holds it: a whole number as an integer, and null for an
    infinite bound (JSON has no infinity)."""
    if math.isinf(value):
        return None
    return int(value) if float(value).is_integer() else value


def bound_text(bound: float) -> str:
    return f"{bound:g}".replace("inf", "∞")


@dataclass
class Solution:
    """The solved value of a position and how it was found."""

    value: float
    """Black's margin with perfect play: under the variant's rules, except where the game
    gives values without the komi (:attr:`komi`; :attr:`result_margin` puts it in)."""
    best_moves: list[Move]
    move_values: dict[Move, float] | None
    """Black's margin after each legal move, as :attr:`value` counts it (with openings)."""
    nodes: int
    seconds: float
    komi: float | None = None
    """The komi :attr:`value` leaves out (:attr:`KomiRule.LEFT_OUT`), else None."""
    earlier: Work = field(default_factory=Work)
    """The work of the earlier runs whose saved tables this solve went on from (``nodes``
    and ``seconds`` are this run's)."""

    @property
    def result_margin(self) -> float:
        """Black's margin with perfect play under the variant's komi."""
        return self.value - (self.komi or 0.0)


def stderr_progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def labelled_progress(progress: Progress, label: str) -> Progress:
    """``progress`` with each line named by ``label``, for one of several solves at once
    (a module-level function bound with ``partial``, so a worker process can be sent it)."""
    return functools.partial(_labelled, progress, label)


def _labelled(progress: Progress, label: str, message: str) -> None:
    progress(f"{label}: {message}")
