"""How much a search may spend, and the one loop that spends it in chunks.

A :class:`Limit` is passed to each call of an agent or a solver (as python-chess passes its
``Limit`` to an engine): seconds for this call, a count of units (MCTS iterations, alpha-beta
or solver nodes), a deadline, or any of them together, whichever comes first. Nothing changes
another object's limit: a caller that wants a deadline for a series of calls passes one.

Compiled searches run in chunks of units, so that the clock, a stop request and Ctrl-C are
heard between them: :class:`Chunks` sizes them from the speed measured so far and runs them
within a limit, for the agents and the solver alike.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum

from agon.core.errors import AgonError, quoted
from agon.core.workers import came_from_stop

MAX_SECONDS = 1e9
"""The longest time limit (some thirty years): longer ones are refused, not left to overflow
the clocks and waits they reach."""
MAX_COUNT = 10**15
"""The largest count limit (more units than any search runs)."""


@dataclass(frozen=True)
class Limit:
    """At most ``seconds`` from the call's start, ``count`` units, and until ``deadline`` (a
    :func:`time.monotonic` instant); None: no such bound."""

    seconds: float | None = None
    count: int | None = None
    deadline: float | None = None

    def __post_init__(self) -> None:
        seconds, count = self.seconds, self.count
        if seconds is not None and not (math.isfinite(seconds) and 0 < seconds <= MAX_SECONDS):
            raise AgonError(
                f"a time limit must be a positive number of seconds up to {MAX_SECONDS:g}, "
                f"not {seconds:g}"
            )
        if count is not None and not 0 < count <= MAX_COUNT:
            raise AgonError(f"a count limit must be 1 to {MAX_COUNT:,}, not {quoted(count)}")

    @classmethod
    def parse(cls, text: str) -> Limit:
        """``2s``, ``500ms`` (seconds), or ``20000`` (a count)."""
        match = re.fullmatch(r"\s*([0-9]{1,9}(?:\.[0-9]{1,9})?)\s*(ms|s)?\s*", text.lower())
        if not match:
            raise AgonError(
                f"budget {quoted(text)} must be a time like '2s' or '500ms', "
                "or a count like '20000'"
            )
        value, unit = float(match.group(1)), match.group(2)
        if value <= 0:
            raise AgonError(f"budget {quoted(text)} must be positive")
        if unit == "s":
            return cls(seconds=value)
        if unit == "ms":
            return cls(seconds=value / 1000)
        if not value.is_integer():
            raise AgonError(f"a count budget must be a whole number, not {quoted(text)}")
        return cls(count=int(value))

    def __str__(self) -> str:
        parts = []
        if self.seconds is not None:
            parts.append(f"{self.seconds:g}s")
        if self.count is not None:
            parts.append(str(self.count))
        if self.deadline is not None:
            parts.append(f"until {self.deadline:.1f}")
        return " or ".join(parts) or "no limit"

    def by(self, deadline: float | None) -> Limit:
        """This limit, and ``deadline`` too (the earlier one counts)."""
        if deadline is None:
            return self
        if self.deadline is not None:
            deadline = min(deadline, self.deadline)
        return replace(self, deadline=deadline)

    def from_now(self) -> Limit:
        """This limit with its seconds made a deadline, counting from now: one limit for a
        series of calls (each call's count stays its own)."""
        return Limit(count=self.count).by(self.start().end)

    def start(self) -> Spending:
        """This limit's spending, starting now."""
        return Spending(self)


NO_LIMIT = Limit()


class Spending:
    """A limit being spent: what is left of it since :meth:`Limit.start`."""

    def __init__(self, limit: Limit) -> None:
        self.limit = limit
        self.started = time.monotonic()
        self.units = 0
        """Units spent so far (:meth:`Chunks.run` counts them)."""
        end = None if limit.seconds is None else self.started + limit.seconds
        if limit.deadline is not None:
            end = limit.deadline if end is None else min(end, limit.deadline)
        self.end = end
        """The instant the limit's time runs out, or None."""

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def seconds_left(self) -> float | None:
        return None if self.end is None else self.end - time.monotonic()

    def units_left(self) -> int | None:
        return None if self.limit.count is None else self.limit.count - self.units

    def out_of_time(self) -> bool:
        left = self.seconds_left()
        return left is not None and left <= 0


class Stop(Enum):
    """Why :meth:`Chunks.run` returned."""

    FINISHED = "finished"
    """The work is done."""
    LIMIT = "limit"
    """The limit is spent (time or count)."""
    ALLOWANCE = "allowance"
    """The units allowed to this run are spent."""


Step = Callable[[int], tuple[int, bool]]
"""Do up to ``n`` units of work; return the units done and whether the work is finished."""


@dataclass
class Chunks:
    """Chunks of work sized to take about ``seconds`` each, at the speed measured so far.

    A chunk that ran whole resizes the next: to what takes ``seconds`` at its speed, but at
    most ``growth`` times larger, never aiming past ``longest`` times ``seconds`` nor past
    the time the limit leaves, and at least ``minimum``; where ``creep`` is given, at least
    that much larger than the last, so that work that restarts each chunk (a probe finding
    its finished subtrees in a table) still gets further each time.
    """

    size: int
    """Units of the next chunk."""
    seconds: float
    minimum: int = 1
    growth: float = math.inf
    longest: float = math.inf
    creep: float | None = None
    rate: float | None = None
    """Units a second, as the last chunk measured it (None: not yet measured)."""

    def run(
        self, step: Step, spending: Spending, allowance: int | None = None,
        between: Callable[[], None] | None = None,
    ) -> tuple[int, Stop]:
        """Run ``step`` in chunks until the work is finished, ``spending`` is spent or
        ``allowance`` units are done. The first chunk always runs (so a limit shorter than a
        chunk still gets some work done), but, like every chunk, no longer than the time left
        at the speed measured so far, or ``minimum`` (a chunk sized in an earlier, longer run
        would overrun a short limit). ``between`` runs after each chunk that did not finish the work
        (progress, stop requests: it may raise to stop). Returns the units done and why it
        stopped. A stop that landed within ``step`` as some other error (a callback from
        compiled code: :func:`agon.core.workers.came_from_stop`) is raised as the
        ``KeyboardInterrupt`` it was."""
        done = 0
        first = True
        while True:
            if not first and spending.out_of_time():
                return done, Stop.LIMIT
            first = False
            want = self.size
            units_left = spending.units_left()
            if units_left is not None:
                if units_left <= 0:
                    return done, Stop.LIMIT
                want = min(want, units_left)
            if allowance is not None:
                if done >= allowance:
                    return done, Stop.ALLOWANCE
                want = min(want, allowance - done)
            seconds_left = spending.seconds_left()
            if self.rate is not None and seconds_left is not None:
                want = min(want, max(self.minimum, int(self.rate * max(seconds_left, 0.0)) + 1))
            started = time.perf_counter()
            try:
                ran, finished = step(want)
            except Exception as error:
                if not came_from_stop(error):
                    raise
                raise KeyboardInterrupt from error
            elapsed = time.perf_counter() - started
            done += ran
            spending.units += ran
            if finished:
                return done, Stop.FINISHED
            if ran > 0:
                self.rate = ran / max(elapsed, 1e-6)
            if want == self.size and ran > 0:
                self._resize(ran, elapsed, spending)
            if between is not None:
                between()

    def _resize(self, ran: int, elapsed: float, spending: Spending) -> None:
        rate = ran / max(elapsed, 1e-6)
        aim = rate * self.seconds
        size = aim if self.creep is None else max(aim, self.creep * self.size)
        size = min(size, self.growth * self.size, self.longest * aim)
        left = spending.seconds_left()
        if left is not None:
            size = min(size, rate * max(left, 0.0) + 1)
        self.size = max(self.minimum, int(size))
