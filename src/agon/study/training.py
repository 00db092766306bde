"""``agon train``: a game's evaluation weights learned from self-play and exact values.

Written once for every game whose fast twin declares its evaluation's terms
(:class:`agon.core.evaluation.Terms`). The method (docs/evaluation.md, *Learned weights*):

1. **Self-play.** ``games`` games of ``player`` against itself (a count budget, so that a game
   repeats from its seed), each opened with ``random_plies`` plies at random so that the games
   differ. Every position before a move is a sample: its terms and their base, as the twin's
   ``features`` kernel gives them.
2. **Exact values.** Each game's positions, from its end backwards, are looked up in the
   shipped store of exact values or solved within ``exact_nodes`` solver nodes, until one is
   not settled (the earlier ones are harder still).
3. **Fitting, TD(λ) on the games played.** A sample's target is its exact value where known,
   else its λ-return: the final margin mixed with the evaluations of the positions after it,
   under the weights being fitted. The weights are the least-squares fit of the targets less
   the base, pulled towards the hand weights by ``ridge`` (which decides where data are few);
   targets and fit are repeated until the weights settle.

Every :data:`HELD_OUT_EVERY`-th game is left out of the fit, and both weight sets, the hand
ones and the learned ones, are measured on it. The games played are kept in a checkpoint after
each one, so that a stopped training goes on where it stopped.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from agon.core.compiled import user_cache
from agon.core.errors import AgonError
from agon.core.evaluation import Terms, params_weights, weights_of
from agon.core.files import read_limited, replace_file_with
from agon.core.game import Game, State
from agon.core.limits import Limit
from agon.core.workers import raise_stop_heard
from agon.search.agent import RandomAgent
from agon.search.registry import make_agent
from agon.search.twins import twin_for
from agon.solve.solution import SolveInterrupted
from agon.solve.solver import Solver
from agon.study.store import SHIPPED_STORE, Store

Floats = npt.NDArray[np.float64]
HELD_OUT_EVERY = 5
"""Every this many games, one is held out of the fit (games 5, 10, …) to measure on."""
MAX_PLIES = 2_000
"""A self-play game longer than this is dropped (and counted)."""
SOLVER_TABLE_BITS = 16
"""Each game's solves share a small table of their own, so that a game's exact values do not
depend on the games before it (a stopped training repeats what it would have done)."""
MAX_CHECKPOINT_BYTES = 1 << 30
MAX_FIT_ROUNDS = 100
SETTLED = 1e-9
"""The largest change of a weight in the last round of a fit that counts as settled."""
Progress = Callable[[int, int], None]
"""Called with the games played so far and the games wanted."""


@dataclass(frozen=True)
class TrainRequest:
    game: Game
    games: int = 200
    player: str = "alphabeta:2000"
    random_plies: int = 4
    lam: float = 0.7
    exact_nodes: int = 100_000
    """Solver nodes a position may take to count as exactly known (0: no solving)."""
    ridge: float = 1.0
    seed: int = 1

    def __post_init__(self) -> None:
        if not 0 <= self.lam <= 1:
            raise AgonError(f"λ must be from 0 to 1, not {self.lam:g}")
        if not (math.isfinite(self.ridge) and self.ridge >= 0):
            raise AgonError(f"the ridge must be a number of at least 0, not {self.ridge:g}")

    def fingerprint(self, terms: Terms, weights: Floats) -> str:
        """What decides the games played (not how many, nor the fit): a checkpoint of another
        fingerprint is not resumed. The weights the player evaluates with are part of it."""
        decided = {
            "game": self.game.name, "options": self.game.options(), "player": self.player,
            "random_plies": self.random_plies, "exact_nodes": self.exact_nodes,
            "seed": self.seed, "terms": list(terms.names), "weights": weights.tolist(),
        }
        text = json.dumps(decided, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class PlayedGame:
    """One self-play game's samples: a row a position."""

    terms: Floats
    base: Floats
    exact: Floats
    """The exact value (Black's margin) where known, else NaN."""
    final: float


@dataclass
class Measure:
    """How well one set of weights estimates, on the held-out games."""

    exact_rmse: float | None
    exact_sign: float | None
    """The share of exactly known positions whose winner (or draw) it says right."""
    final_rmse: float | None
    """Against the games' final margins, on every position."""

    def as_json(self) -> dict[str, float | None]:
        return {
            "exact_rmse": _rounded(self.exact_rmse), "exact_sign": _rounded(self.exact_sign),
            "final_rmse": _rounded(self.final_rmse),
        }


@dataclass
class TrainReport:
    game: Game
    names: tuple[str, ...]
    hand: Floats
    learned: Floats
    games: int
    positions: int
    exact_positions: int
    held_out_games: int
    dropped_games: int
    rounds: int
    hand_measure: Measure
    learned_measure: Measure
    seconds: float
    player_weights: Floats
    """The weights the self-play games were evaluated with (those in force when they began)."""
    resumed_games: int = 0
    provenance: dict[str, Any] = field(default_factory=dict)

    def weights(self) -> dict[str, float]:
        return {name: round(float(w), 4) for name, w in zip(self.names, self.learned, strict=True)}


def terms_of(game: Game) -> Terms:
    """The evaluation terms of ``game``'s twin; :class:`AgonError` where it has none."""
    terms = twin_for(game).terms
    if terms is None:
        raise AgonError(
            f"{game.description} has no evaluation terms to train (its fast twin does not "
            "declare them): it plays with the evaluation its author wrote"
        )
    return terms


def checkpoint_path(request: TrainRequest) -> Path:
    """Where a training of this request keeps its games by default."""
    terms = terms_of(request.game)
    fingerprint = request.fingerprint(terms, params_weights(twin_for(request.game).params, terms))
    return user_cache() / "training" / f"{request.game.name}-{fingerprint}.npz"


def train(
    request: TrainRequest, checkpoint: Path | None = None, progress: Progress | None = None
) -> TrainReport:
    """Play (or take from ``checkpoint``) the games, fit the weights, measure them."""
    started = time.monotonic()
    game = request.game
    twin = twin_for(game)
    terms = terms_of(game)
    player_weights = params_weights(twin.params, terms)
    fingerprint = request.fingerprint(terms, player_weights)
    played, dropped = _load_checkpoint(checkpoint, fingerprint, len(terms.names))
    resumed = min(len(played), request.games)
    store = Store(SHIPPED_STORE, writable=False)
    try:
        while len(played) < request.games:
            raise_stop_heard()
            if progress is not None:
                progress(len(played), request.games)
            index = len(played) + dropped
            found = _self_play(request, terms, index, store)
            if found is None:
                dropped += 1
                continue
            played.append(found)
            if checkpoint is not None:
                _save_checkpoint(checkpoint, fingerprint, played, dropped)
    finally:
        store.close()
    if progress is not None:
        progress(len(played), request.games)
    played = played[: request.games]
    fitted = [one for number, one in enumerate(played, 1) if number % HELD_OUT_EVERY]
    held_out = [one for number, one in enumerate(played, 1) if not number % HELD_OUT_EVERY]
    hand = weights_of(terms, None)
    learned, rounds = fit(fitted, hand, request.lam, request.ridge)
    return TrainReport(
        game=game, names=terms.names, hand=hand, learned=learned, games=len(played),
        positions=sum(len(one.base) for one in played),
        exact_positions=sum(int(np.sum(~np.isnan(one.exact))) for one in played),
        held_out_games=len(held_out), dropped_games=dropped, rounds=rounds,
        hand_measure=measure(held_out, hand), learned_measure=measure(held_out, learned),
        seconds=time.monotonic() - started, player_weights=player_weights,
        resumed_games=resumed,
    )


# --- self-play --------------------------------------------------------------------------------


def _solver_or_none(game: Game, request: TrainRequest) -> Solver | None:
    """The solver of the exact values (None where none are asked for, or the game has none)."""
    if request.exact_nodes <= 0:
        return None
    try:
        # chunks longer than any budget: each solve runs its budget in one piece, so whether a
        # position settles within it does not hang on the machine's speed
        return Solver(game, table_bits=SOLVER_TABLE_BITS, chunk_seconds=1_000.0)
    except AgonError:
        return None


def _self_play(
    request: TrainRequest, terms: Terms, index: int, store: Store
) -> PlayedGame | None:
    """Game ``index`` of the training (None: longer than :data:`MAX_PLIES`)."""
    game = request.game
    twin = twin_for(game)
    seeds = random.Random(f"{request.seed}:{index}")
    opening = RandomAgent(game, seeds.randrange(2**31))
    agent = make_agent(request.player, game, seed=seeds.randrange(2**31))
    state, array = game.new_state(), twin.new_state()
    rows: list[Floats] = []
    bases: list[float] = []
    states: list[State] = []
    while not state.is_over:
        raise_stop_heard()
        if len(states) >= MAX_PLIES:
            return None
        if twin.room(array) <= 0:
            array = twin.from_reference(state)
        row = np.zeros(len(terms.names), dtype=np.float64)
        bases.append(float(terms.features(twin.params, array, row)))
        rows.append(row)
        states.append(state.copy())
        chooser = opening if len(states) <= request.random_plies else agent
        move = chooser.choose(state)
        state.play(move)
        twin.play(twin.params, array, move)
    agent.close()
    exact = np.full(len(states), np.nan)
    solver = _solver_or_none(game, request)  # (a table of its own for each game)
    if solver is not None:
        _fill_exact(solver, store, states, exact, request.exact_nodes)
    return PlayedGame(
        np.array(rows).reshape(len(states), len(terms.names)), np.array(bases), exact,
        state.margin,
    )


def _fill_exact(
    solver: Solver, store: Store, states: list[State], exact: Floats, nodes: int
) -> None:
    """The exact values of a game's positions, from its end back to the first one not settled
    within ``nodes``."""
    for ply in range(len(states) - 1, -1, -1):
        state = states[ply]
        entry = store.get(state.game, state)
        if entry is not None:
            exact[ply] = entry.value
            continue
        try:
            exact[ply] = solver.margin(state, Limit(count=nodes))
        except SolveInterrupted:
            return


# --- fitting and measuring --------------------------------------------------------------------


def targets(games: list[PlayedGame], weights: Floats, lam: float) -> Floats:
    """Each sample's target: its exact value where known, else its λ-return under
    ``weights`` (the final margin where λ is 1; the next position's estimate where it is 0)."""
    found = []
    for one in games:
        values = one.base + one.terms @ weights
        known = ~np.isnan(one.exact)
        values[known] = one.exact[known]
        target = np.empty_like(values)
        following_return, following_value = one.final, one.final
        for ply in range(len(values) - 1, -1, -1):
            if known[ply]:
                target[ply] = one.exact[ply]
            else:
                target[ply] = (1 - lam) * following_value + lam * following_return
            following_return, following_value = target[ply], values[ply]
        found.append(target)
    return np.concatenate(found) if found else np.zeros(0)


def fit(games: list[PlayedGame], hand: Floats, lam: float, ridge: float) -> tuple[Floats, int]:
    """The weights TD(λ) settles on (see the module's description), and the rounds it took."""
    if not games:
        return hand.copy(), 0
    terms = np.concatenate([one.terms for one in games])
    base = np.concatenate([one.base for one in games])
    normal = terms.T @ terms + ridge * np.eye(len(hand))
    weights = hand.copy()
    for rounds in range(1, MAX_FIT_ROUNDS + 1):
        wanted = targets(games, weights, lam) - base
        new = np.linalg.lstsq(normal, terms.T @ wanted + ridge * hand, rcond=None)[0]
        settled = float(np.max(np.abs(new - weights))) <= SETTLED
        weights = new
        if settled:
            return weights, rounds
    return weights, MAX_FIT_ROUNDS


def measure(games: list[PlayedGame], weights: Floats) -> Measure:
    """How well ``weights`` estimate the positions of ``games`` (see :class:`Measure`)."""
    if not games:
        return Measure(None, None, None)
    estimates = np.concatenate([one.base + one.terms @ weights for one in games])
    finals = np.concatenate([np.full(len(one.base), one.final) for one in games])
    exact = np.concatenate([one.exact for one in games])
    known = ~np.isnan(exact)
    final_rmse = float(np.sqrt(np.mean((estimates - finals) ** 2)))
    if not known.any():
        return Measure(None, None, final_rmse)
    errors = estimates[known] - exact[known]
    signs = np.sign(np.round(estimates[known], 6)) == np.sign(exact[known])
    return Measure(float(np.sqrt(np.mean(errors**2))), float(np.mean(signs)), final_rmse)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


# --- the checkpoint ---------------------------------------------------------------------------


def _save_checkpoint(
    path: Path, fingerprint: str, played: list[PlayedGame], dropped: int
) -> None:
    def write(file: BinaryIO) -> None:
        np.savez(
            file,
            fingerprint=np.array(fingerprint),
            dropped=np.array(dropped),
            lengths=np.array([len(one.base) for one in played], dtype=np.int64),
            terms=np.concatenate([one.terms for one in played]),
            base=np.concatenate([one.base for one in played]),
            exact=np.concatenate([one.exact for one in played]),
            final=np.array([one.final for one in played]),
        )

    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file_with(path, write)


def _load_checkpoint(
    path: Path | None, fingerprint: str, term_count: int
) -> tuple[list[PlayedGame], int]:
    """The games a checkpoint of this fingerprint kept, and the games it dropped (none, where
    there is no such checkpoint: one of another training is left alone, and replaced)."""
    if path is None or not path.is_file():
        return [], 0
    try:
        data = read_limited(path, MAX_CHECKPOINT_BYTES, "a training checkpoint")
        with np.load(io.BytesIO(data), allow_pickle=False) as found:
            if str(found["fingerprint"]) != fingerprint:
                return [], 0
            lengths, terms = found["lengths"], found["terms"]
            base, exact, final = found["base"], found["exact"], found["final"]
            dropped = int(found["dropped"])
    except (OSError, ValueError, KeyError) as error:
        raise AgonError(f"{path} is not a training checkpoint Agon can read: {error}") from None
    if terms.ndim != 2 or terms.shape[1] != term_count or len(final) != len(lengths):
        raise AgonError(f"{path} is not a checkpoint of this game's terms")
    played = []
    start = 0
    for length, margin in zip(lengths.tolist(), final.tolist(), strict=True):
        end = start + length
        played.append(PlayedGame(terms[start:end], base[start:end], exact[start:end], margin))
        start = end
    return played, dropped
