"""The arena's study: positions set up or imported and read by the rules engine, analyses of
positions (one short one, or refined round after round over a WebSocket), and reviews of whole
games, thought out on the arena's workers within the limits of
:class:`~agon.web.config.ArenaLimits` and kept, so that a review's shared link does not think
again.

Work is done on the computer's worker pool (:class:`~agon.web.thinking.Computer`) as side work
(:class:`~agon.web.thinking.SideWork`): a limited number at once, never the last worker. A
review thinks about one position at a time, so that the computer's turns and other people's
analyses take their turns between its positions.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agon.core.errors import AgonError, IllegalMove, RecordError, quoted
from agon.core.game import Game, Move, State
from agon.core.player import Player
from agon.core.records import GameRecord, parse_json
from agon.games import make_game, plugins
from agon.study.analysis import (
    PositionAnalysis,
    Review,
    assemble_review,
    positions_of,
    review_order,
)
from agon.study.values import describe, json_value
from agon.web import analysts
from agon.web.config import ArenaLimits
from agon.web.errors import ArenaError, NotFound
from agon.web.guard import RateLimit, TooManyRequests
from agon.web.thinking import Computer, SideWork

log = logging.getLogger(__name__)

MAX_STUDY_MOVES = 1000
"""The most moves a line studied (a pasted record, a game reviewed) may have."""
MAX_POSITION_TEXT = 20_000
"""The longest position text the study reads from a request."""
STEP_SECONDS = 1.0
"""The limit of one short analysis (``POST /api/study/analysis``)."""
REFINE_FIRST_SECONDS = 0.5
"""The first round of a refinement; each next round has twice the time, up to
:data:`REFINE_ROUND_SECONDS`."""
REFINE_ROUND_SECONDS = 4.0
"""The longest round of a refinement: a stop is heard between rounds."""
REVIEW_POSITION_SECONDS = 1.0
"""The most a review thinks about one position."""
REVIEW_LEAST_SECONDS = 0.05
"""The least a review thinks about one position (however many it has)."""
REVIEWS_KEPT = 64
"""Finished reviews kept in memory, the least recently asked dropped first."""
RETRY_FAILED_SECONDS = 60.0
"""A review that failed is said to have failed for this long; then asking again starts it
afresh."""
BUSY = "the analysts are busy: try again soon"


@dataclass
class Line:
    """A line to study: a variant, a start position (a position text; None: the game's start)
    and the moves from it, every one checked by the rules."""

    game: Game
    start: str | None
    first: State
    moves: list[Move]

    @property
    def texts(self) -> list[str]:
        return [self.game.format_move(move) for move in self.moves]

    def states(self) -> list[State]:
        """The position before the first move and after each move."""
        return positions_of(self.first, self.moves)

    def final(self) -> tuple[State, list[Player]]:
        """The position after every move, and who played each."""
        state = self.first.copy()
        movers = []
        for move in self.moves:
            mover = state.to_move
            assert mover is not None
            movers.append(mover)
            state.play(move)
        return state, movers

    def key(self) -> str:
        """What names the line whatever the request's spelling (its reviews are shared)."""
        named = {
            "game": self.game.name, "options": self.game.options(), "start": self.start,
            "moves": self.texts,
        }
        text = json.dumps(named, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()


def game_of(name: str, options: dict[str, Any]) -> Game:
    """The variant ``options`` name of the game ``name``: NotFound for a game there is not,
    a 400 naming a bad option."""
    if name.strip().lower() not in plugins():
        known = ", ".join(plugins())
        raise NotFound(f"there is no game {quoted(name)}: the arena has {known}")
    return make_game(name, options)


def read_line(
    name: str, options: dict[str, Any], position: str | None, moves: list[str]
) -> Line:
    """The line of ``moves`` from ``position`` (None or empty: the start) of the variant;
    refusals name the part that is wrong: the position (400), a move that cannot be read
    (400) or one that breaks a rule (422)."""
    game = game_of(name, options)
    if len(moves) > MAX_STUDY_MOVES:
        raise ArenaError(f"{len(moves):,} moves: the study reads at most {MAX_STUDY_MOVES:,}")
    start = position.strip() if position else None
    if start is not None and len(start) > MAX_POSITION_TEXT:
        raise ArenaError(f"the position text is over {MAX_POSITION_TEXT:,} characters")
    try:
        first = game.parse_position(start) if start else game.new_state()
    except AgonError as error:
        raise ArenaError(f"the position does not load: {error}") from None
    state = first.copy()
    played = []
    for index, text in enumerate(moves, start=1):
        try:
            played.append(state.play_text(text))
        except IllegalMove as error:
            raise IllegalMove(f"move {index} ({quoted(text)}): {error}") from None
        except AgonError as error:
            raise ArenaError(f"move {index} ({quoted(text)}): {error}") from None
    return Line(game, start, first, played)


def read_record(text: str) -> dict[str, Any]:
    """An Agon record (JSON text, as the arena exports it) read and every move checked: the
    line it holds (game, variant, start position, moves) and its players and result."""
    try:
        data = parse_json(text)
        moves = data.get("moves") if isinstance(data, dict) else None
        if isinstance(moves, list) and len(moves) > MAX_STUDY_MOVES:
            raise ArenaError(  # (refused before a move is replayed)
                f"the record has {len(moves):,} moves: the study reads at most "
                f"{MAX_STUDY_MOVES:,}"
            )
        record = GameRecord.from_dict(data, make_game)
    except (RecordError, ArenaError) as error:
        raise ArenaError(f"the record does not load: {error}") from None
    except AgonError as error:  # (the JSON itself)
        raise ArenaError(f"the record does not load: {error}") from None
    if record.start_position and len(record.start_position) > MAX_POSITION_TEXT:
        raise ArenaError(f"the record's start position is over {MAX_POSITION_TEXT:,} characters")
    return {
        "game": record.game.name,
        "variant": record.game.options(),
        "description": record.game.description,
        "position": record.start_position or None,
        "moves": list(record.moves),
        "players": record.players,
        "result": record.result,
        "reason": record.reason,
    }


@dataclass
class ReviewJob:
    """A review being made, or made: one position at a time, from the end to the start."""

    line: Line
    players: dict[str, str]
    total: int
    done: int = 0
    result: dict[str, Any] | None = None
    error: str | None = None
    ended: float = 0.0
    """When it ended (:func:`time.monotonic`)."""
    task: asyncio.Task[None] | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        status = "done" if self.result is not None else "failed" if self.error else "running"
        return {
            "status": status, "done": self.done, "total": self.total, "error": self.error,
            "review": self.result,
        }


class Study:
    """Analyses and reviews for the arena's pages, on its workers, within its limits."""

    def __init__(self, computer: Computer, side_work: SideWork, limits: ArenaLimits) -> None:
        self.computer = computer
        self.side_work = side_work
        self.limits = limits
        self._analyses = RateLimit(limits.analyses_per_minute)
        self._reviews_started = RateLimit(limits.reviews_per_minute)
        self._reviews: OrderedDict[str, ReviewJob] = OrderedDict()

    def close(self) -> None:
        for job in self._reviews.values():
            if job.task is not None:
                job.task.cancel()

    # --- one position ------------------------------------------------------------------------

    async def analyse(self, line: Line, client: str) -> dict[str, Any]:
        """A short analysis (:data:`STEP_SECONDS`) of the line's last position."""
        state, _ = line.final()
        if self.side_work.busy("analysis"):
            raise TooManyRequests(BUSY, 2)
        self._analyses.take(client, "analyses")
        async with self.side_work.slot("analysis", refusal=BUSY):
            return await self.computer.run(
                analysts.analyse_position, line.game.name, line.game.options(),
                state.position(), STEP_SECONDS,
            )

    async def refine(
        self, state: State, client: str, send: Callable[[dict[str, Any]], Awaitable[None]],
        request: Any,
    ) -> None:
        """Analyses of ``state``, each better than the last, sent as they come (``analysis``
        messages; the last says ``thinking: false``), until one is exact or
        :attr:`ArenaLimits.analysis_seconds` are spent; cancelled to stop. ``request`` is the
        client's id of the request, sent back with every message."""
        try:
            self._analyses.take(client, "analyses")
        except TooManyRequests as error:
            await send({
                "type": "busy", "id": request, "detail": str(error),
                "retry_after": error.retry_after,
            })
            return
        game = state.game
        position = state.position()
        spent, seconds, rounds = 0.0, REFINE_FIRST_SECONDS, 0
        while True:
            rounds += 1
            started = time.monotonic()
            found = await self._round(game, position, seconds)
            spent += time.monotonic() - started
            if found is None:
                return
            left = self.limits.analysis_seconds - spent
            thinking = not found["exact"] and left > 0.05 and found["source"] != "final"
            await send({
                "type": "analysis", "id": request, "analysis": found, "round": rounds,
                "thinking": thinking,
            })
            if not thinking:
                return
            seconds = min(seconds * 2, REFINE_ROUND_SECONDS, left)

    async def _round(self, game: Game, position: str, seconds: float) -> dict[str, Any] | None:
        """One round of a refinement, in a task of its own: a refinement cancelled meanwhile
        stops waiting for a worker, but a round being thought out keeps its worker (and its
        place in the count of side work) until it ends."""
        cancelled = False

        async def think() -> dict[str, Any] | None:
            async with self.side_work.slot("analysis", stop=lambda: cancelled) as held:
                if not held:
                    return None
                return await self.computer.run(
                    analysts.analyse_position, game.name, game.options(), position, seconds
                )

        task = asyncio.create_task(think())
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
            task.add_done_callback(_forget)
            raise

    # --- whole games -------------------------------------------------------------------------

    def review(self, line: Line, players: dict[str, str], client: str) -> dict[str, Any]:
        """The review of ``line``: made, being made (with how far it got), or started now
        (counted against the client's reviews a minute)."""
        key = line.key()
        job = self._reviews.get(key)
        if job is not None and (
            job.error is None or time.monotonic() - job.ended < RETRY_FAILED_SECONDS
        ):
            self._reviews.move_to_end(key)
            return job.to_json()
        self._reviews_started.take(client, "reviews started")
        job = ReviewJob(line, dict(players), len(line.moves) + 1)
        job.task = asyncio.create_task(self._make_review(job))
        self._reviews[key] = job
        self._forget_old_reviews()
        return job.to_json()

    def _forget_old_reviews(self) -> None:
        finished = [key for key, job in self._reviews.items() if job.task and job.task.done()]
        for key in finished[: max(0, len(self._reviews) - REVIEWS_KEPT)]:
            del self._reviews[key]

    async def _make_review(self, job: ReviewJob) -> None:
        line = job.line
        game = line.game
        states = line.states()
        analyses: dict[int, PositionAnalysis] = {}
        thought = 0.0
        try:
            for index in review_order(states):
                # (the positions still to analyse are this one and those before it)
                left = self.limits.review_seconds - thought
                seconds = min(
                    REVIEW_POSITION_SECONDS, max(REVIEW_LEAST_SECONDS, left / (index + 1))
                )
                async with self.side_work.slot("analysis"):
                    started = time.monotonic()
                    analyses[index] = await self.computer.run(
                        analysts.analyse_for_review, game.name, game.options(), line.start,
                        line.texts[:index], seconds,
                    )
                    thought += time.monotonic() - started
                job.done += 1
            job.result = review_json(
                assemble_review(states, line.moves, analyses, job.players), states
            )
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.exception("a review failed")
            job.error = f"the review failed ({error.__class__.__name__}): try again in a minute"
        job.ended = time.monotonic()


def review_json(review: Review, states: list[State]) -> dict[str, Any]:
    """A review as the analysis board reads it: :meth:`Review.to_json`, each move's value
    before it in words, and the values of the positions in order (the graph's points: Black's
    margin before each move and after the last)."""
    game = review.game
    found = review.to_json()
    for entry, reviewed in zip(found["moves"], review.reviewed, strict=True):
        entry["words_before"] = describe(game, reviewed.before.value)
        entry["words_after"] = describe(game, reviewed.after.value)
    final = review.final
    points = [
        {"ply": reviewed.ply - 1, "value": json_value(reviewed.before.value.black),
         "exact": reviewed.before.value.exact}
        for reviewed in review.reviewed
    ]
    if final is not None:
        points.append({
            "ply": len(states) - 1, "value": json_value(final.value.black),
            "exact": final.value.exact,
        })
    found["points"] = points
    found["final"] = None if final is None else {
        "value": json_value(final.value.black), "exact": final.value.exact,
        "words": describe(game, final.value),
    }
    return found


def _forget(task: asyncio.Task[Any]) -> None:
    """Read a left task's outcome, so that its exception is not reported as never read."""
    if not task.cancelled():
        task.exception()
