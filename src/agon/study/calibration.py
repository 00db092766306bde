"""Calibrated levels: the computer's strengths measured in Elo, and the levels chosen by them.

``agon calibrate`` plays a ladder of agents (a *pool*, weakest meant first) in adjacent pairs:
each pairing is an ``agon match`` with colours alternating and a few random plies to open
each pair of games. The first agent of the pool is the fixed anchor, rated 0; each other's
rating is the one before it plus the Elo difference its match measured, and its 95% interval
adds the intervals of the links below it (independent matches: their variances add). A link's
interval is Wilson's score interval, which stays finite for scores near 0 or 1, where the normal
approximation reaches past them. A match won (or lost) in every game has no finite estimate:
its score is taken as half a game short of the sweep, and the interval is open on that side,
so the rating and every one above it are open above (below).

The levels a lobby offers are then chosen by rating (:func:`chosen_ladder`): the anchor at the
bottom, the pool's last agent (the strongest) at the top, and between them the agents nearest
to even steps of rating, each measurably above the one before. The results ship in the game's
package (:data:`LEVELS_FILE`, one entry a variant, with how they were measured); a file named
by :data:`LEVELS_ENV` comes first. Docs: docs/search.md, *Calibrated levels*.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from agon.core.errors import AgonError
from agon.core.files import read_text_limited, read_versioned_json, replace_file
from agon.core.game import Game
from agon.core.plugin import GamePlugin
from agon.games import plugin_of
from agon.search.match import Z_95, GameSummary, MatchReport, elo_from_score, run_match
from agon.study.external import make_player

LEVELS_FILE = "levels.json"
LEVELS_FORMAT = 1
MAX_LEVELS_BYTES = 1 << 20
LEVELS_ENV = "AGON_LEVELS"
"""An environment variable naming a file of calibrations whose entries come before the games'
own."""
DEFAULT_POOL = (
    "random", "greedy", "mcts:8", "mcts:32", "mcts:128", "mcts:512", "mcts:2048", "mcts:8192",
    "strongest:2s",
)
"""MCTS by counts of simulations fills the steps between the greedy agent and the strongest:
each step four times the simulations, and a count repeats from its seed."""
LADDER_SIZE = 5
"""The levels chosen from a calibration, the anchor and the strongest among them."""
MIN_STEP = 50.0
"""The least rating (Elo) by which a chosen level is above the one below it."""
SURE = 1e-12
"""A score this close to 0 or 1 is a sweep's bound: the interval is open on that side."""


@dataclass(frozen=True)
class Pairing:
    """One link of the ladder: ``a`` (the weaker, meant) against ``b``, from A's view."""

    a: str
    b: str
    games: int
    wins: int
    draws: int
    losses: int
    mean_margin: float
    a_seconds: dict[str, Any]
    b_seconds: dict[str, Any]

    @classmethod
    def of(cls, report: MatchReport) -> Pairing:
        return cls(
            report.agent_a, report.agent_b, len(report.games), report.wins, report.draws,
            report.losses, report.mean_margin or 0.0, _rounded(report.move_times("a").to_json()),
            _rounded(report.move_times("b").to_json()),
        )

    def b_over_a(self) -> tuple[float, float, float]:
        """B's Elo over A: the estimate, and how far below and above it the 95% interval
        reaches (Wilson's score interval, which stays within 0 and 1 for a score near either:
        infinite only on the side a sweep leaves open)."""
        count = self.games
        mean = (self.losses + 0.5 * self.draws) / count  # B's score
        estimate = elo_from_score(min(max(mean, 0.5 / count), 1 - 0.5 / count))
        spread = Z_95 * Z_95 / count
        centre = (mean + spread / 2) / (1 + spread)
        half = Z_95 * math.sqrt(mean * (1 - mean) / count + spread / (4 * count)) / (1 + spread)
        low, high = centre - half, centre + half
        return (
            estimate,
            estimate - elo_from_score(low) if low > SURE else math.inf,
            elo_from_score(high) - estimate if high < 1 - SURE else math.inf,
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "a": self.a, "b": self.b, "games": self.games, "wins": self.wins,
            "draws": self.draws, "losses": self.losses, "mean_margin": self.mean_margin,
            "a_seconds": self.a_seconds, "b_seconds": self.b_seconds,
        }


def _rounded(times: Mapping[str, Any]) -> dict[str, Any]:
    return {key: round(value, 6) if isinstance(value, float) else value
            for key, value in times.items()}


@dataclass(frozen=True)
class Rating:
    """An agent's rating on the ladder (the anchor's is 0)."""

    spec: str
    elo: float
    low: float | None
    """The 95% interval's bounds; None: unbounded (a sweep on the way)."""
    high: float | None
    seconds_mean: float | None
    """How long it took a move, on average and at p99, in its matches (wall clock)."""
    seconds_p99: float | None

    def as_json(self) -> dict[str, Any]:
        return {
            "spec": self.spec, "elo": round(self.elo, 1),
            "low": None if self.low is None else round(self.low, 1),
            "high": None if self.high is None else round(self.high, 1),
            "seconds_mean": self.seconds_mean, "seconds_p99": self.seconds_p99,
        }


def ratings_of(pairings: Sequence[Pairing]) -> list[Rating]:
    """The ladder's ratings from its pairings (each one's A is the previous one's B)."""
    if not pairings:
        return []
    times: dict[str, list[tuple[int, float, float]]] = {}
    for pairing in pairings:
        for spec, seconds in ((pairing.a, pairing.a_seconds), (pairing.b, pairing.b_seconds)):
            if seconds.get("moves"):
                times.setdefault(spec, []).append(
                    (seconds["moves"], seconds["mean"], seconds["p99"])
                )
    ratings = [_rated(pairings[0].a, 0.0, 0.0, 0.0, times)]
    elo = below = above = 0.0
    for pairing in pairings:
        step, step_below, step_above = pairing.b_over_a()
        elo += step
        below = math.hypot(below, step_below)
        above = math.hypot(above, step_above)
        ratings.append(_rated(pairing.b, elo, below, above, times))
    return ratings


def _rated(
    spec: str, elo: float, below: float, above: float,
    times: Mapping[str, list[tuple[int, float, float]]],
) -> Rating:
    seen = times.get(spec, [])
    moves = sum(count for count, _, _ in seen)
    mean = sum(count * value for count, value, _ in seen) / moves if moves else None
    p99 = max(value for _, _, value in seen) if seen else None
    return Rating(
        spec, elo, None if math.isinf(below) else elo - below,
        None if math.isinf(above) else elo + above, mean, p99,
    )


def chosen_ladder(ratings: Sequence[Rating], size: int = LADDER_SIZE) -> list[Rating]:
    """The levels to offer, weakest first: the anchor, the last of the pool (the strongest),
    and between them those nearest to even steps of rating, each at least :data:`MIN_STEP`
    above the one below it and below the top; fewer where the ratings do not spread."""
    if not ratings:
        return []
    bottom, top = ratings[0], ratings[-1]
    if len(ratings) == 1 or top.elo < bottom.elo + MIN_STEP:
        return [top]
    chosen = [bottom]
    middle = ratings[1:-1]
    last = -1  # (the index in ``middle`` of the level chosen last: the next comes after it)
    for step in range(1, size - 1):
        target = bottom.elo + (top.elo - bottom.elo) * step / (size - 1)
        floor = chosen[-1].elo + MIN_STEP
        fitting = [
            index for index, rating in enumerate(middle)
            if index > last and floor <= rating.elo <= top.elo - MIN_STEP
        ]
        if fitting:
            last = min(fitting, key=lambda index: abs(middle[index].elo - target))
            chosen.append(middle[last])
    return [*chosen, top]


# --- playing a calibration --------------------------------------------------------------------


@dataclass(frozen=True)
class CalibrationRequest:
    game: Game
    pool: tuple[str, ...] = DEFAULT_POOL
    games: int = 20
    """Games a pairing."""
    seed: int = 1
    random_plies: int = 2
    jobs: int = 1

    def fingerprint(self) -> str:
        """What decides the games played (not how many processes play them)."""
        decided = json.dumps(
            [self.game.name, self.game.options(), self.pool, self.games, self.seed,
             self.random_plies], sort_keys=True,
        )
        return hashlib.sha256(decided.encode()).hexdigest()[:16]


@dataclass
class Calibration:
    """A calibration's pairings so far (all of them once it is complete)."""

    request: CalibrationRequest
    pairings: list[Pairing] = field(default_factory=list)
    resumed: int = 0
    """Pairings taken from the checkpoint."""

    @property
    def complete(self) -> bool:
        return len(self.pairings) == len(self.request.pool) - 1


def calibrate(
    request: CalibrationRequest,
    checkpoint: Path,
    on_game: Callable[[Pairing | None, GameSummary | None], None] | None = None,
    again: Sequence[str] = (),
) -> Calibration:
    """Play the ladder's pairings that ``checkpoint`` does not hold yet, writing each there as
    it ends; ``again`` names agents of the pool whose pairings are played again (after a change
    to them), the checkpoint's others kept. Ctrl-C (KeyboardInterrupt) stops it within a game,
    keeping the pairings done (and not those of ``again``: a stopped run goes on without it),
    and the games done of the pairing under way, in a match checkpoint beside ``checkpoint``
    (:func:`pairing_games_file`, deleted once the pairing is kept). ``on_game(None, summary)``
    follows each game (those taken from a pairing's games file too); ``on_game(pairing, None)``
    each pairing taken from the checkpoint."""
    pool = request.pool
    if len(pool) < 2:
        raise AgonError("a calibration needs at least two agents: the anchor and another")
    named = {spec.lower(): spec for spec in pool}  # (agent names are read in any case)
    strangers = [spec for spec in again if spec.lower() not in named]
    if strangers:
        raise AgonError(
            f"only agents of the pool can be played again: {', '.join(strangers)} "
            f"{'is' if len(strangers) == 1 else 'are'} not in it ({', '.join(pool)})"
        )
    links = list(itertools.pairwise(pool))
    replayed = {named[spec.lower()] for spec in again}
    kept = [
        None if pairing is None or {pairing.a, pairing.b} & replayed else pairing
        for pairing in _checkpointed(checkpoint, request)
    ]
    kept += [None] * (len(links) - len(kept))
    if again:
        _keep(checkpoint, request, kept)
        for index, (weaker, stronger) in enumerate(links):
            if {weaker, stronger} & replayed:
                pairing_games_file(checkpoint, request, index).unlink(missing_ok=True)
    calibration = Calibration(request)
    for index, (weaker, stronger) in enumerate(links):
        pairing = kept[index]
        if pairing is not None:
            calibration.resumed += 1
            if on_game is not None:
                on_game(pairing, None)
        else:
            games_file = pairing_games_file(checkpoint, request, index)
            each_game = None if on_game is None else functools.partial(on_game, None)
            report = run_match(
                request.game, weaker, stronger, request.games, request.jobs, request.seed,
                each_game, make_player, request.random_plies, checkpoint=games_file,
                on_resumed=None if each_game is None else functools.partial(_tell_each, each_game),
            )
            if report.interrupted:
                raise KeyboardInterrupt
            pairing = kept[index] = Pairing.of(report)
            _keep(checkpoint, request, kept)
            games_file.unlink(missing_ok=True)
        calibration.pairings.append(pairing)
    return calibration


def _tell_each(heard: Callable[[GameSummary], None], games: Sequence[GameSummary]) -> None:
    """``heard`` of each game taken from a pairing's games file, as of each game played."""
    for summary in games:
        heard(summary)


def pairing_games_file(checkpoint: Path, request: CalibrationRequest, index: int) -> Path:
    """Where the games of pairing ``index`` (from 0) are kept while it is played: beside the
    checkpoint, named after what decides them, so that only this calibration goes on from
    them."""
    name = f"{checkpoint.stem}-{request.fingerprint()}-pairing-{index + 1}.jsonl"
    return checkpoint.with_name(name)


def _keep(path: Path, request: CalibrationRequest, pairings: Sequence[Pairing | None]) -> None:
    """Write the checkpoint: the pairings in the ladder's order, None for one not played
    before one that is."""
    played = list(pairings)
    while played and played[-1] is None:
        played.pop()
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, json.dumps({
        "fingerprint": request.fingerprint(),
        "pairings": [None if pairing is None else pairing.as_json() for pairing in played],
    }))


def _checkpointed(path: Path, request: CalibrationRequest) -> list[Pairing | None]:
    """The pairings a checkpoint of the same calibration holds, in the ladder's order (None
    where one is not played; none at all if it is another's, or unreadable: a checkpoint is
    only a saving of time)."""
    if not path.is_file():
        return []
    links = list(itertools.pairwise(request.pool))
    try:
        found = json.loads(read_text_limited(path, MAX_LEVELS_BYTES, "a calibration checkpoint"))
        if found.get("fingerprint") != request.fingerprint():
            return []
        pairings = [None if raw is None else _pairing(raw) for raw in found["pairings"]]
    except (AgonError, ValueError, KeyError, TypeError, AttributeError):
        return []
    # (a pairing of other agents than its place in the ladder's is not taken)
    return [
        pairing if pairing is not None and (pairing.a, pairing.b) == link else None
        for pairing, link in zip(pairings, links, strict=False)
    ]


def _pairing(raw: Mapping[str, Any]) -> Pairing:
    games, wins, draws, losses = (raw[key] for key in ("games", "wins", "draws", "losses"))
    counts = (games, wins, draws, losses)
    if not all(isinstance(count, int) and count >= 0 for count in counts) or games < 1 \
            or wins + draws + losses != games:
        raise ValueError("a pairing's counts do not add up")
    return Pairing(
        str(raw["a"]), str(raw["b"]), games, wins, draws, losses, float(raw["mean_margin"]),
        dict(raw["a_seconds"]), dict(raw["b_seconds"]),
    )


# --- the files of calibrations -------------------------------------------------------------------


@dataclass(frozen=True)
class CalibratedEntry:
    """One variant's calibration, with how it was measured."""

    game: str
    options: dict[str, Any]
    pairings: tuple[Pairing, ...]
    provenance: dict[str, Any] = field(default_factory=dict)

    def ratings(self) -> list[Rating]:
        return ratings_of(self.pairings)

    def as_json(self) -> dict[str, Any]:
        ratings = self.ratings()
        return {
            "game": self.game,
            "options": self.options,
            "ratings": [rating.as_json() for rating in ratings],
            "levels": [rating.spec for rating in chosen_ladder(ratings)],
            "pairings": [pairing.as_json() for pairing in self.pairings],
            "provenance": self.provenance,
        }


def read_calibrations(path: Path) -> list[CalibratedEntry]:
    """The entries of a levels file; :class:`AgonError` naming what is wrong with it."""
    entries = []
    for raw in read_versioned_json(
        path, MAX_LEVELS_BYTES, "a file of calibrated levels", LEVELS_FORMAT, "entries"
    ):
        try:
            name, options = raw["game"], raw["options"]
            pairings = [_pairing(pairing) for pairing in raw["pairings"]]
            if not isinstance(name, str) or not isinstance(options, dict) or not pairings:
                raise ValueError("no game, no options or no pairings")
            provenance = raw.get("provenance")
            entries.append(CalibratedEntry(
                name, options, tuple(pairings),
                provenance if isinstance(provenance, dict) else {},
            ))
        except (ValueError, KeyError, TypeError) as error:
            raise AgonError(f"{path}: an entry is not a calibration ({error})") from None
    return entries


def write_calibrations(entries: Sequence[CalibratedEntry]) -> str:
    """The text of a levels file holding ``entries`` (one line an entry)."""
    lines = ",\n".join(f"    {json.dumps(entry.as_json(), sort_keys=True)}" for entry in entries)
    return f'{{\n  "format": {LEVELS_FORMAT},\n  "entries": [\n{lines}\n  ]\n}}\n'


def package_levels_file(found: GamePlugin[Any, Any]) -> Path:
    """The levels file of a game's package (which may not exist)."""
    return Path(str(resources.files(found.texts).joinpath(LEVELS_FILE)))


def calibrations_of(found: GamePlugin[Any, Any]) -> list[CalibratedEntry]:
    """The calibrations of a game's variants: those of the file :data:`LEVELS_ENV` names (the
    user's own), then those its package ships."""
    chosen = os.environ.get(LEVELS_ENV)
    files = [Path(chosen).expanduser()] if chosen else []
    files.append(package_levels_file(found))
    return [entry for path in files for entry in _calibrations_in(path)
            if entry.game == found.name]


def calibration_for(game: Game) -> CalibratedEntry | None:
    """The calibration of ``game``'s variant (the first, :func:`calibrations_of`); None where
    it has none (its levels are then not rated)."""
    options = game.options()
    return next((entry for entry in calibrations_of(plugin_of(game))
                 if entry.options == options), None)


def calibrated_variants(found: GamePlugin[Any, Any]) -> list[tuple[Game, str]]:
    """The variants of a game that have a calibration, each once, with its anchor."""
    variants: list[tuple[Game, str]] = []
    for entry in calibrations_of(found):
        try:
            game = found.make(entry.options)
        except AgonError:
            continue  # (a variant this version of the game no longer has)
        if all(game.options() != other.options() for other, _ in variants):
            variants.append((game, entry.pairings[0].a))
    return variants


@functools.cache
def _calibrations_in(path: Path) -> tuple[CalibratedEntry, ...]:
    """A levels file's entries, read once a process (none where there is no such file)."""
    return tuple(read_calibrations(path)) if path.is_file() else ()
