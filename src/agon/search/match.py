"""Matches between two agents: games with alternating colours, results and an Elo estimate.

Games are played on the reference rules (``State.play`` checks every move), each agent
thinking on its own. Game ``i`` (from 1) has A as Black when ``i`` is odd. Each agent gets a
seed derived from the match seed and the game number, so a seeded match with count budgets
repeats exactly, however many worker processes share the games. Agents that play the same
move in the same position play the same two games again and again: a match may open each
game with a few plies at random (:func:`opening_moves`), the same for the two games of a pair
(A as Black, then as White), so that the openings are fair. An agent that forfeits
(:class:`agon.search.agent.Forfeit`: another program that crashed, hung or answered an illegal
move) loses that game, and the match goes on. A match given a checkpoint file keeps each game
there as it ends and, started again, plays only the games the file does not hold: since a game
depends only on the match's seed and its number, the match resumed is the match uninterrupted.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agon.core.errors import AgonError
from agon.core.files import read_text_limited, replace_file
from agon.core.game import Game, Move
from agon.core.player import Player
from agon.core.render import player_name
from agon.core.workers import raise_stop_heard, worker_pool
from agon.search.agent import Agent, Forfeit, RandomAgent
from agon.search.registry import make_agent

PlayerFactory = Callable[[str, Game, int | None], Agent]
"""What makes a match's players from their specs, a seed and the game (:func:`make_agent` unless
a caller that knows other kinds of player says)."""

Z_95 = 1.959963984540054


@dataclass(frozen=True)
class GameSummary:
    """One finished game of a match."""

    number: int
    a_colour: Player
    result: str
    margin: float
    """Black's margin."""
    moves: int
    end_reason: str
    forfeit: bool = False
    """Whether the game ended by a forfeit: ``end_reason`` says who forfeited and why; the
    result is ``B+F`` or ``W+F`` (as SGF writes it) and the margin the least win, 1."""
    a_seconds: tuple[float, ...] = field(default=(), compare=False)
    """How long A took for each of its moves (wall clock, building the agent not counted; not
    part of what a game is, so two plays of a game compare equal)."""
    b_seconds: tuple[float, ...] = field(default=(), compare=False)

    @property
    def a_margin(self) -> float:
        return self.margin if self.a_colour is Player.BLACK else -self.margin

    @property
    def a_score(self) -> float:
        """A's result: win 1, draw 0.5, loss 0."""
        return 1.0 if self.a_margin > 0 else 0.0 if self.a_margin < 0 else 0.5

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.number,
            "a_colour": self.a_colour.label,
            "result": self.result,
            "margin": self.margin,
            "moves": self.moves,
            "end_reason": self.end_reason,
            "forfeit": self.forfeit,
        }


@dataclass(frozen=True)
class MoveTimes:
    """How long one side of a match took a move, over all its games."""

    moves: int
    mean: float | None
    p99: float | None
    """The 99th percentile (nearest rank): the time 99 moves in 100 took at most."""
    longest: float | None

    @classmethod
    def of(cls, seconds: list[float]) -> MoveTimes:
        if not seconds:
            return cls(0, None, None, None)
        ordered = sorted(seconds)
        rank = math.ceil(0.99 * len(ordered)) - 1
        return cls(len(ordered), sum(ordered) / len(ordered), ordered[rank], ordered[-1])

    def to_json(self) -> dict[str, Any]:
        return {"moves": self.moves, "mean": self.mean, "p99": self.p99, "max": self.longest}


@dataclass(frozen=True)
class EloEstimate:
    """Elo difference of A over B; ``None`` bounds are infinite (or the score is 0 or 1)."""

    difference: float | None
    low: float | None
    high: float | None


def elo_from_score(score: float) -> float:
    """The logistic model's Elo difference for an expected score strictly between 0 and 1."""
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0  # + 0.0: no "-0" for an even score


def elo_estimate(scores: list[float]) -> EloEstimate:
    """Elo difference and its 95% interval from A's game results (1, 0.5 or 0: a draw counts
    half a win).

    The interval comes from the normal approximation of the mean score, whose standard error is
    the sample standard deviation of the results over the square root of the number of games;
    the score's interval is mapped through the logistic model. A bound at a score of 0 or 1 is
    infinite (None). When every game was drawn, the spread of a fair coin (win or loss) stands
    in for the spread seen, which is none. When every game was won (or lost) the difference
    itself is infinite: the other bound is then the score ``0.05 ** (1 / n)`` (one-sided 95%: a
    weaker A would win all ``n`` games less than 5% of the time).
    """
    count = len(scores)
    if count == 0:
        return EloEstimate(None, None, None)
    score = sum(scores) / count
    if score in (0.0, 1.0):
        bound = 0.05 ** (1.0 / count)
        if score == 1.0:
            return EloEstimate(None, elo_from_score(bound), None)
        return EloEstimate(None, None, elo_from_score(1.0 - bound))
    variance = sum((s - score) ** 2 for s in scores) / count
    if variance == 0.0:  # every game drawn: no spread seen, so take a win-or-loss coin's
        variance = score * (1.0 - score)
    error = math.sqrt(variance / count)
    low, high = score - Z_95 * error, score + Z_95 * error
    return EloEstimate(
        elo_from_score(score),
        elo_from_score(low) if low > 0 else None,
        elo_from_score(high) if high < 1 else None,
    )


@dataclass
class MatchReport:
    """What a match found (so far, if it was interrupted)."""

    game: Game
    agent_a: str
    agent_b: str
    requested: int
    seed: int
    """The match's seed, drawn at its start where none was given: with it, and count budgets,
    the match repeats exactly."""
    opening_plies: int = 0
    games: list[GameSummary] = field(default_factory=list)
    interrupted: bool = False
    resumed: int = 0
    """Games taken from the match's checkpoint file rather than played."""

    @property
    def wins(self) -> int:
        return sum(g.a_score == 1.0 for g in self.games)

    @property
    def draws(self) -> int:
        return sum(g.a_score == 0.5 for g in self.games)

    @property
    def losses(self) -> int:
        return sum(g.a_score == 0.0 for g in self.games)

    @property
    def score(self) -> float | None:
        return sum(g.a_score for g in self.games) / len(self.games) if self.games else None

    @property
    def mean_margin(self) -> float | None:
        return sum(g.a_margin for g in self.games) / len(self.games) if self.games else None

    @property
    def elo(self) -> EloEstimate:
        return elo_estimate([g.a_score for g in self.games])

    def move_times(self, which: str) -> MoveTimes:
        """How long A (``which`` "a") or B ("b") took a move."""
        return MoveTimes.of([
            seconds for g in self.games
            for seconds in (g.a_seconds if which == "a" else g.b_seconds)
        ])

    def to_json(self) -> dict[str, Any]:
        elo = self.elo
        return {
            "game": self.game.variant_id,
            "variant": self.game.options(),
            "description": self.game.description,
            "a": self.agent_a,
            "b": self.agent_b,
            "seed": self.seed,
            "opening_plies": self.opening_plies,
            "requested": self.requested,
            "games": len(self.games),
            "interrupted": self.interrupted,
            "resumed": self.resumed,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "score": self.score,
            "draws_count_as": 0.5,
            "mean_margin": self.mean_margin,
            "elo": elo.difference,
            "elo_low": elo.low,
            "elo_high": elo.high,
            "elo_note": "A over B, logistic model, 95% interval by the normal approximation; "
            "null means unbounded (infinite)",
            "a_seconds": self.move_times("a").to_json(),
            "b_seconds": self.move_times("b").to_json(),
            "results": [g.to_json() for g in sorted(self.games, key=lambda g: g.number)],
        }


def agent_seed(match_seed: int, number: int, which: str) -> int:
    """The seed of agent ``which`` ("a" or "b") in game ``number``: the same in any process."""
    return random.Random(f"{match_seed}:{number}:{which}").getrandbits(63)


def opening_moves(game: Game, match_seed: int, number: int, plies: int) -> list[Move]:
    """The random plies that open game ``number`` of a match: the same for both games of a
    pair (1 and 2, 3 and 4, …), fewer where the game ends sooner."""
    pair = (number + 1) // 2
    walker = RandomAgent(game, random.Random(f"{match_seed}:opening:{pair}").getrandbits(63))
    state = game.new_state()
    moves: list[Move] = []
    while len(moves) < plies and not state.is_over:
        move = walker.choose(state)
        state.play(move)
        moves.append(move)
    return moves


def play_game(
    game: Game,
    spec_a: str,
    spec_b: str,
    number: int,
    match_seed: int,
    make_player: PlayerFactory = make_agent,
    opening_plies: int = 0,
) -> GameSummary:
    """Play game ``number`` of a match (A is Black when ``number`` is odd), from its opening
    (:func:`opening_moves`). The players are made for this game alone, and closed at its end
    however it ends."""
    a_colour = Player.BLACK if number % 2 == 1 else Player.WHITE
    seats = {a_colour: (spec_a, "a"), a_colour.other: (spec_b, "b")}
    players: dict[Player, Agent] = {}
    seconds: dict[Player, list[float]] = {Player.BLACK: [], Player.WHITE: []}
    state = game.new_state()
    for move in opening_moves(game, match_seed, number, opening_plies):
        state.play(move)
    mover = Player.BLACK
    try:
        for mover, (spec, which) in seats.items():
            players[mover] = make_player(spec, game, agent_seed(match_seed, number, which))
        while not state.is_over:
            raise_stop_heard()
            assert state.to_move is not None
            mover = state.to_move
            started = time.perf_counter()
            move = players[mover].choose(state)
            seconds[mover].append(time.perf_counter() - started)
            state.play(move)
    except Forfeit as forfeit:
        return GameSummary(
            number=number,
            a_colour=a_colour,
            result=f"{mover.other.letter}+F",
            margin=1.0 if mover is Player.WHITE else -1.0,
            moves=len(state.history),
            end_reason=f"{player_name(mover)} forfeits: {forfeit}",
            forfeit=True,
            a_seconds=tuple(seconds[a_colour]),
            b_seconds=tuple(seconds[a_colour.other]),
        )
    finally:
        for agent in players.values():
            agent.close()
    return GameSummary(
        number=number,
        a_colour=a_colour,
        result=state.result or "",
        margin=state.margin,
        moves=len(state.history),
        end_reason=state.end_reason or "",
        a_seconds=tuple(seconds[a_colour]),
        b_seconds=tuple(seconds[a_colour.other]),
    )


Job = tuple[Game, str, str, int, int, PlayerFactory, int]


def _play_game_job(job: Job) -> GameSummary:
    return play_game(*job)


def run_match(
    game: Game,
    spec_a: str,
    spec_b: str,
    games: int,
    jobs: int = 1,
    seed: int | None = None,
    on_game: Callable[[GameSummary], None] | None = None,
    make_player: PlayerFactory = make_agent,
    opening_plies: int = 0,
    checkpoint: Path | None = None,
    on_resumed: Callable[[list[GameSummary]], None] | None = None,
) -> MatchReport:
    """Play the match, each game opened by ``opening_plies`` random plies; Ctrl-C stops it
    and the report holds the games finished so far.

    The agent specs are checked (by building the agents once) before any game starts.
    ``make_player`` must be a module's function where ``jobs`` > 1 (workers receive it).
    With ``checkpoint``, each game is kept in that file as it ends, and the games it already
    holds are not played again (:func:`resume_match`; ``on_resumed`` hears of them). The
    report's seed is the match's, drawn at its start where none was given (or taken from the
    checkpoint), so that any match can be played again.
    """
    for spec in (spec_a, spec_b):
        make_player(spec, game, None).close()
    done: dict[int, GameSummary] = {}
    if checkpoint is None:
        match_seed = seed if seed is not None else _drawn_seed()
    else:
        match_seed, kept = resume_match(checkpoint, game, spec_a, spec_b, seed, opening_plies)
        done = {summary.number: summary for summary in kept if summary.number <= games}
    report = MatchReport(game, spec_a, spec_b, games, match_seed, opening_plies)
    report.games.extend(done[number] for number in sorted(done))
    report.resumed = len(done)
    if on_resumed is not None and done:
        on_resumed(list(report.games))
    job_list = [
        (game, spec_a, spec_b, number, match_seed, make_player, opening_plies)
        for number in range(1, games + 1)
        if number not in done
    ]
    results = _results(job_list, jobs)
    try:
        for summary in results:
            report.games.append(summary)
            if checkpoint is not None:
                keep_game(checkpoint, summary)
            if on_game is not None:
                on_game(summary)
    except KeyboardInterrupt:
        report.interrupted = True
    finally:
        results.close()  # stops the workers at once if the match was cut short
    return report


def _drawn_seed() -> int:
    return random.SystemRandom().getrandbits(63)


def _results(job_list: list[Job], jobs: int) -> Generator[GameSummary, None, None]:
    if jobs <= 1:
        for job in job_list:
            yield _play_game_job(job)
        return
    pool = worker_pool(min(jobs, len(job_list)) or 1)
    try:
        yield from pool.imap_unordered(_play_game_job, job_list)
        pool.close()
    finally:
        pool.terminate()
        pool.join()


# --- a match's checkpoint file ----------------------------------------------------------------

CHECKPOINT_FORMAT = "agon match checkpoint 1"
MAX_CHECKPOINT_BYTES = 64 * 1024 * 1024
"""A checkpoint keeps each game's move times, some kilobytes a game of hundreds of moves (200
such games, about 2 MB); read, they take about 16 times their bytes, as the report of a match
never stopped holds them too."""


def resume_match(
    path: Path, game: Game, spec_a: str, spec_b: str, seed: int | None, opening_plies: int
) -> tuple[int, list[GameSummary]]:
    """The seed and the finished games of the match that ``path`` keeps, the file made ready
    for more (a new one started where there is none: its seed ``seed``, or drawn).

    The file (JSON lines) starts with what decides the games: the variant, the agents, the
    seed and the random opening plies; another match's file is refused (:class:`AgonError`),
    and left as it is. Where no seed is given, the file's is taken. A last line cut short (the
    program killed while writing it) is dropped; any other line that is no finished game of
    this match is refused, naming it.
    """
    header: dict[str, Any] = {
        "format": CHECKPOINT_FORMAT,
        "game": game.name,
        "options": json.loads(json.dumps(game.options())),  # (as the file will read them)
        "a": spec_a,
        "b": spec_b,
        "seed": seed,
        "opening_plies": opening_plies,
    }
    try:
        exists = path.exists()
    except OSError as error:
        raise AgonError(f"cannot use {path} as the match's checkpoint: {error}") from None
    games: list[GameSummary] = []
    if exists:
        lines = read_text_limited(path, MAX_CHECKPOINT_BYTES, "a match's checkpoint").split("\n")
        found = _checkpoint_header(path, lines[0])
        asked = {key: value for key, value in header.items() if value is not None}
        differs = [key for key, value in asked.items() if found.get(key) != value]
        if differs:
            raise AgonError(
                f"{path} keeps another match ({_described(found)}), not this one "
                f"({_described(header)}): give another checkpoint file, or delete that one"
            )
        header["seed"] = found["seed"]
        games = _kept_games(path, lines[1:])
    elif seed is None:
        header["seed"] = _drawn_seed()
    text = "".join(json.dumps(line) + "\n" for line in [header, *map(_game_line, games)])
    try:
        replace_file(path, text)
    except FileNotFoundError:
        raise AgonError(
            f"cannot write the match's checkpoint {path}: there is no folder {path.parent}"
        ) from None
    except OSError as error:
        raise AgonError(
            f"cannot write the match's checkpoint {path}: {error.strerror or error}"
        ) from None
    return int(header["seed"]), games


def keep_game(path: Path, summary: GameSummary) -> None:
    """Add a finished game to the checkpoint file (one line, written at once)."""
    try:
        with path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(_game_line(summary)) + "\n")
    except OSError as error:
        raise AgonError(
            f"cannot keep game {summary.number} in {path}: {error.strerror or error}"
        ) from None


def _checkpoint_header(path: Path, line: str) -> dict[str, Any]:
    try:
        found = json.loads(line)
    except ValueError:
        found = None
    if not isinstance(found, dict) or found.get("format") != CHECKPOINT_FORMAT \
            or not isinstance(found.get("seed"), int):
        raise AgonError(
            f"{path} is not a match's checkpoint (its first line does not say so): "
            f"left as it is; give another file"
        )
    return found


def _described(header: Mapping[str, Any]) -> str:
    seed = "any seed" if header.get("seed") is None else f"seed {header['seed']}"
    return (
        f"{header.get('a')} vs {header.get('b')} on {header.get('game')} {header.get('options')}, "
        f"{seed}, {header.get('opening_plies')} random opening plies"
    )


def _kept_games(path: Path, lines: list[str]) -> list[GameSummary]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    games: dict[int, GameSummary] = {}
    for index, line in enumerate(lines):
        try:
            summary = _game_from(json.loads(line))
            if summary.number in games:
                raise ValueError(f"game {summary.number} is there twice")
        except (ValueError, KeyError, TypeError) as error:
            if index == len(lines) - 1:
                break  # (cut short as it was written)
            raise AgonError(
                f"line {index + 2} of {path} is not a finished game of the match ({error}): "
                f"the file was changed; it is left as it is"
            ) from None
        games[summary.number] = summary
    return [games[number] for number in sorted(games)]


def _game_line(summary: GameSummary) -> dict[str, Any]:
    return {
        **summary.to_json(),
        "a_seconds": [round(seconds, 6) for seconds in summary.a_seconds],
        "b_seconds": [round(seconds, 6) for seconds in summary.b_seconds],
    }


def _game_from(raw: Any) -> GameSummary:
    """A game kept in a checkpoint; ``ValueError`` (or ``KeyError``, ``TypeError``) where it
    is not one."""
    number, moves = raw["game"], raw["moves"]
    if type(number) is not int or number < 1 or type(moves) is not int or moves < 0:
        raise ValueError("its number or its moves are not counts")
    colour = Player.parse(raw["a_colour"])
    if colour is not (Player.BLACK if number % 2 == 1 else Player.WHITE):
        raise ValueError(f"A has the wrong colour in game {number}")
    times = [raw["a_seconds"], raw["b_seconds"]]
    if not all(isinstance(seconds, list) for seconds in times) or not all(
        isinstance(value, int | float) and 0 <= value < math.inf for seconds in times
        for value in seconds
    ):
        raise ValueError("its move times are not lists of seconds")
    margin = raw["margin"]
    if not isinstance(margin, int | float) or not math.isfinite(margin):
        raise ValueError("its margin is not a number")
    return GameSummary(
        number=number,
        a_colour=colour,
        result=str(raw["result"]),
        margin=float(margin),
        moves=moves,
        end_reason=str(raw["end_reason"]),
        forfeit=bool(raw["forfeit"]),
        a_seconds=tuple(float(value) for value in times[0]),
        b_seconds=tuple(float(value) for value in times[1]),
    )
