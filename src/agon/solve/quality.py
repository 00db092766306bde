"""How good an agent's moves are, judged by the exact solver.

Positions are sampled half from uniformly random games and half from the agent's self-play
games (where the agent's move is the one it played; each game's agent has a seed of its own).
In a position from a random game, an agent of its own (with a seed of its own) chooses the
move. Each position is solved move by move; the agent's move is *optimal* when its value
equals the position's value, and the margin it *gives away* is the difference, from the
mover's point of view. Positions with a single legal move say nothing about an agent and are
skipped. With a time limit per solve, positions the solver cannot settle within it are left out
and counted (``unsettled``): the figures then describe the positions it settled, which are the
easier ones. With several jobs, worker processes play the self-play games and judge the
positions; the sample does not depend on how many there are.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Generator
from contextlib import closing
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from agon.core.errors import AgonError
from agon.core.game import Game, Move, State
from agon.core.limits import Limit
from agon.core.player import Player
from agon.core.workers import worker_pool
from agon.search.agent import Agent, RandomAgent
from agon.search.match import PlayerFactory
from agon.search.registry import make_agent
from agon.solve.solution import SolveInterrupted, labelled_progress
from agon.solve.solver import Solver, warm_up_kernels

MAX_GAME_PLIES = 400
"""Random and self-play games longer than this are cut (their positions still count)."""
MAX_GAMES_WITHOUT_CHOICE = 100
"""Random games in which every move is forced, after which a variant is refused as having
no position to judge (rather than sampled for ever)."""


RANDOM, SELF_PLAY = "random games", "self-play"
"""Where a judged position comes from."""


def first_ply_of_span(ply: int) -> int:
    """The first ply of the span a position's ply is counted in: each of the first four plies
    alone, then spans that double (4–7, 8–15, 16–31, …), so that every game length has a few."""
    return ply if ply < 4 else 1 << (ply.bit_length() - 1)


@dataclass
class Tally:
    """Judged positions, how many of them the agent met with an optimal move, and the margin
    it gave away in all."""

    judged: int = 0
    optimal: int = 0
    given_away: float = 0.0

    def add(self, loss: float) -> None:
        self.judged += 1
        self.optimal += loss == 0
        self.given_away += loss


@dataclass
class QualityReport:
    game: str
    agent: str
    positions: int
    from_random: int
    from_self_play: int
    optimal: int
    total_loss: float
    agent_seconds: float
    unsettled: int = 0
    """Positions left out because a solve ran past ``max_seconds``."""
    max_seconds: float | None = None
    not_reached: int = 0
    """Positions not judged because the measurement was stopped (Ctrl-C) first."""
    self_play_distinct: int = 0
    """The distinct positions among those from self-play: fewer where the agent repeats its
    games (one that chooses by no seed plays one game again and again, and its mistakes there
    count as often)."""
    breakdown: dict[tuple[str, int], Tally] = field(default_factory=dict)
    """The judged positions by where they come from (:data:`RANDOM`, :data:`SELF_PLAY`) and by
    the span of plies their ply is in (its first ply, :func:`first_ply_of_span`)."""

    @property
    def judged(self) -> int:
        """The positions the figures describe: those the solver settled."""
        return self.positions - self.unsettled - self.not_reached

    @property
    def optimal_share(self) -> float | None:
        """The share of judged positions where the agent's move was optimal (None if none)."""
        return self.optimal / self.judged if self.judged else None

    @property
    def mean_loss(self) -> float | None:
        """The mean margin given away per judged position (None if none)."""
        return self.total_loss / self.judged if self.judged else None

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "agent": self.agent,
            "positions": self.positions,
            "from_random": self.from_random,
            "from_self_play": self.from_self_play,
            "self_play_distinct": self.self_play_distinct,
            "unsettled": self.unsettled,
            "not_reached": self.not_reached,
            "max_seconds": self.max_seconds,
            "optimal_share": None if self.optimal_share is None else round(self.optimal_share, 4),
            "mean_loss": None if self.mean_loss is None else round(self.mean_loss, 4),
            "agent_seconds_per_move": round(self.agent_seconds, 3),
            "breakdown": [
                {
                    "source": source, "plies": span_text(first), "judged": tally.judged,
                    "optimal": tally.optimal, "given_away": round(tally.given_away, 4),
                }
                for (source, first), tally in sorted(self.breakdown.items())
            ],
        }


def span_text(first: int) -> str:
    """The span of plies that starts at ``first`` (:func:`first_ply_of_span`), as text."""
    return str(first) if first < 4 else f"{first}–{2 * first - 1}"


@dataclass(frozen=True)
class Contender:
    """The agent judged: its spec, and the function that makes it (sent to worker processes
    by name, so that an agent a later layer adds, like the study's ``strongest``, is known
    there too)."""

    spec: str
    make: PlayerFactory

    def agent(self, game: Game, seed: int | None) -> Agent:
        return self.make(self.spec, game, seed)


def _game_positions(game: Game, agent: Agent) -> list[tuple[State, Move]]:
    """Every decision of one game ``agent`` plays against itself: (position, move played)."""
    agent.reset()
    state = game.new_state()
    decisions: list[tuple[State, Move]] = []
    while not state.is_over and len(state.history) < MAX_GAME_PLIES:
        move = agent.choose(state)
        if len(state.legal_moves()) > 1:
            decisions.append((state.copy(), move))
        state.play(move)
    return decisions


def _self_play_game(
    game: Game, contender: Contender, seed: int
) -> tuple[list[tuple[State, Move]], float]:
    """The decisions of one self-play game by a new agent with ``seed``, and its seconds."""
    player = contender.agent(game, seed)
    try:
        started = time.monotonic()
        decisions = _game_positions(game, player)
        return decisions, time.monotonic() - started
    finally:
        player.close()


def _self_play(
    game: Game, contender: Contender, wanted: int, seeds: random.Random, jobs: int = 1,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[tuple[State, Move]], float]:
    """The decisions of self-play games until there are ``wanted`` (or a game has none), and
    the seconds the agent took for them. Each game's agent is new, with a seed of its own
    (the next of ``seeds``): an agent made once would play the same game again and again where
    it chooses by its seed, and count one game's mistakes many times over. With ``jobs``
    above one, that many games at a time in worker processes; the games taken are the same."""
    pool: list[tuple[State, Move]] = []
    seconds = 0.0
    with closing(_self_play_games(game, contender, seeds, jobs)) as games:
        for decisions, game_seconds in games:
            seconds += game_seconds
            pool.extend(decisions)
            if progress is not None:
                progress(f"self-play: {min(len(pool), wanted)}/{wanted} positions")
            if not decisions or len(pool) >= wanted:
                break
    return pool, seconds


def _self_play_games(
    game: Game, contender: Contender, seeds: random.Random, jobs: int
) -> Generator[tuple[list[tuple[State, Move]], float], None, None]:
    """Self-play games without end, in the order of their seeds: with ``jobs`` above one,
    played ``jobs`` at a time in worker processes (the last round's extra games are lost
    when the caller stops taking them)."""
    if jobs <= 1:
        while True:
            yield _self_play_game(game, contender, seeds.randrange(2**31))
    workers = worker_pool(jobs)
    try:
        while True:
            round_seeds = [seeds.randrange(2**31) for _ in range(jobs)]
            yield from workers.map(partial(_self_play_game, game, contender), round_seeds)
    finally:
        workers.terminate()
        workers.join()


@dataclass(frozen=True)
class _Judging:
    """A position to judge: the move played there in self-play, or, from a random game, the
    seed of the agent that is to choose it."""

    state: State
    played: Move | None
    agent_seed: int


@dataclass(frozen=True)
class _Verdict:
    loss: float | None
    """The margin the agent's move gives away; None where the solver did not settle it."""
    agent_seconds: float | None
    """The agent's time for the move (None where it was played in self-play)."""
    source: str
    ply: int


_judge: Solver | None = None
"""A worker process's solver (its table kept from position to position)."""


def _start_judge(game: Game) -> None:
    global _judge
    _judge = Solver(game)
    warm_up_kernels(game.name)


def _judge_in_worker(
    game: Game, contender: Contender, max_seconds: float | None, judging: _Judging
) -> _Verdict:
    assert _judge is not None, "the worker was started without its solver"
    return _judge_position(_judge, game, contender, max_seconds, judging)


def _judge_position(
    solver: Solver, game: Game, contender: Contender, max_seconds: float | None, judging: _Judging
) -> _Verdict:
    """The verdict on one position: the agent's move (an agent of its own chooses it where
    none was played) and the margin it gives away, each solve within ``max_seconds``."""
    played = judging.played
    seconds: float | None = None
    if played is None:
        agent = contender.agent(game, judging.agent_seed)
        try:
            started = time.monotonic()
            played = agent.choose(judging.state)
            seconds = time.monotonic() - started
        finally:
            agent.close()
    try:
        loss: float | None = _loss(solver, judging.state, played, Limit(seconds=max_seconds))
    except SolveInterrupted as stop:
        if not stop.timed_out:
            raise
        loss = None
    source = RANDOM if judging.played is None else SELF_PLAY
    return _Verdict(loss, seconds, source, len(judging.state.history))


def _verdicts(
    game: Game, contender: Contender, max_seconds: float | None, sampled: list[_Judging], jobs: int,
    progress: Callable[[str], None] | None,
) -> Generator[_Verdict, None, None]:
    """The verdict on each sampled position: in order, or, with ``jobs`` above one, as the
    worker processes finish them."""
    if jobs <= 1:
        solver = Solver(game)
        warm_up_kernels(game.name)  # so that compiling does not count against --max-seconds
        for index, judging in enumerate(sampled, start=1):
            if progress is not None:  # the solver's own reports, during long solves
                solver.progress = labelled_progress(progress, f"position {index}/{len(sampled)}")
            yield _judge_position(solver, game, contender, max_seconds, judging)
        return
    workers = worker_pool(min(jobs, len(sampled)), partial(_start_judge, game))
    try:
        yield from workers.imap_unordered(
            partial(_judge_in_worker, game, contender, max_seconds), sampled
        )
    finally:
        workers.terminate()
        workers.join()


def _loss(solver: Solver, state: State, move: Move, limit: Limit | None = None) -> float:
    """The margin the mover gives away by playing ``move`` (0 for an optimal move), each
    solve within ``limit``."""
    after = state.copy()
    after.play(move)
    view = -1.0 if state.to_move is Player.WHITE else 1.0
    return view * (solver.margin(state, limit) - solver.margin(after, limit)) + 0.0  # no -0.0


def _random_positions(game: Game, wanted: int, rng: random.Random) -> list[_Judging]:
    """One position from each of ``wanted`` random games that offer a choice of moves, each
    with the seed of the agent that is to choose there."""
    sampled: list[_Judging] = []
    empty_games = 0
    while len(sampled) < wanted:
        # a walker of its own each game: _game_positions resets its agent, so one walker
        # would play one game again and again
        decisions = _game_positions(game, RandomAgent(game, rng.randrange(2**31)))
        if decisions:
            sampled.append(_Judging(rng.choice(decisions)[0], None, rng.randrange(2**31)))
            continue
        empty_games += 1
        if empty_games >= MAX_GAMES_WITHOUT_CHOICE:
            raise AgonError(
                f"{game.description} offers no choice of moves: in {empty_games} random games "
                "every move was forced (or the game was over at the start), so there is no "
                "position to judge an agent on"
            )
    return sampled


def measure_quality(
    game: Game,
    agent_spec: str,
    positions: int,
    seed: int,
    progress: Callable[[str], None] | None = None,
    max_seconds: float | None = None,
    jobs: int = 1,
    make_player: PlayerFactory = make_agent,
) -> QualityReport:
    """Judge ``agent_spec`` on ``positions`` positions (half random, half self-play), leaving
    out those whose solves take more than ``max_seconds`` each, in ``jobs`` processes, each
    agent made by ``make_player`` (a module's function: worker processes receive it). Ctrl-C
    while the positions are judged ends the measurement with those judged so far (the report
    counts the others as ``not_reached``); before that, it is a ``KeyboardInterrupt``."""
    rng = random.Random(seed)
    contender = Contender(agent_spec, make_player)
    checked = contender.agent(game, seed)  # (a bad spec is named before any work)
    spec = checked.spec
    checked.close()
    wanted_random = positions - positions // 2
    sampled = _random_positions(game, wanted_random, rng)
    pool, agent_seconds = _self_play(
        game, contender, positions // 2, random.Random(rng.randrange(2**63)), jobs, progress
    )
    agent_moves = len(pool)
    rng.shuffle(pool)
    taken = pool[: positions // 2]
    sampled.extend(_Judging(state, move, 0) for state, move in taken)
    breakdown: dict[tuple[str, int], Tally] = {}
    unsettled, judged = 0, 0
    if progress is not None:
        progress(f"solving {len(sampled)} positions …")
    verdicts = _verdicts(game, contender, max_seconds, sampled, jobs, progress)
    try:
        for verdict in verdicts:
            judged += 1
            if verdict.agent_seconds is not None:
                agent_seconds += verdict.agent_seconds
                agent_moves += 1
            if verdict.loss is None:
                unsettled += 1
                outcome = f"not settled within {max_seconds:g}s, left out"
            else:
                span = (verdict.source, first_ply_of_span(verdict.ply))
                breakdown.setdefault(span, Tally()).add(verdict.loss)
                outcome = f"gave away {verdict.loss:g}"
            if progress is not None:
                progress(f"position {judged}/{len(sampled)}: {outcome}")
    except (KeyboardInterrupt, SolveInterrupted):
        pass  # (the report says how many were not reached)
    finally:
        verdicts.close()  # stops the workers at once if the measurement was cut short
    return QualityReport(
        game=game.description,
        agent=spec,
        positions=len(sampled),
        from_random=wanted_random,
        from_self_play=len(sampled) - wanted_random,
        self_play_distinct=len({state.key() for state, _ in taken}),
        optimal=sum(tally.optimal for tally in breakdown.values()),
        total_loss=sum(tally.given_away for tally in breakdown.values()),
        agent_seconds=agent_seconds / max(agent_moves, 1),
        unsettled=unsettled,
        max_seconds=max_seconds,
        not_reached=len(sampled) - judged,
        breakdown=breakdown,
    )
