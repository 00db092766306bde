"""Benchmarks of the rules engines and the agents, and a large-scale check of the fast twins.

``bench`` measures, per variant and in one run: random playouts per second on the reference
rules (Python) and on the fast twin, MCTS iterations per second and alpha-beta nodes per second
from the starting position. Numba's one-off compile (or cache-load) time is measured apart,
before any timing. ``verify`` plays random games on the reference rules and the twin side by
side, comparing legal moves, positions, keys, undo and results after every move.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from agon.core.fast import Array, FastTwin
from agon.core.game import Game, State
from agon.core.limits import Chunks, Limit
from agon.search.alphabeta import AlphaBetaAgent
from agon.search.kernels import random_playouts
from agon.search.mcts import MctsAgent
from agon.search.twins import kernels_for, pass_action, twin_for
from agon.search.variants import MEASURES, variant

PLAYOUT_PLIES = 5000
"""Random games are cut after this many plies, on both engines: where a game ends only when
its boards run out, a random one (passing only when forced) can last thousands (docs/search.md
gives lengths)."""


def reference_playout(state: State, rng: random.Random) -> int:
    """A random game on the reference rules, as the fast playouts play it; its length."""
    pass_move = state.game.pass_move
    plies = 0
    while not state.is_over and plies < PLAYOUT_PLIES:
        moves = state.legal_moves()
        placements = [m for m in moves if m != pass_move]
        state.play(rng.choice(placements or moves))
        plies += 1
    return plies


def _rate(run: Callable[[int], None], seconds: float) -> float:
    """Units per second of ``run(n)`` (do n units), run in growing batches for ``seconds``
    (batches of about a quarter of that, so that the last one overshoots little)."""

    def step(count: int) -> tuple[int, bool]:
        run(count)
        return count, False

    spending = Limit(seconds=seconds).start()
    done, _ = Chunks(1, seconds / 4, growth=4).run(step, spending)
    return done / spending.elapsed


def _fast_playouts(game: Game) -> Callable[[int], None]:
    """Plays ``n`` random games on the game's fast twin."""
    twin = twin_for(game)
    kernels, state = kernels_for(twin), twin.new_state()
    moves = np.empty(twin.num_actions, dtype=np.int64)

    def fast(count: int) -> None:
        random_playouts(
            kernels.legal_moves, kernels.play, kernels.undo, kernels.end_code,
            kernels.margin, kernels.evaluate, kernels.move_order, kernels.to_move, twin.params,
            state, moves, pass_action(game), count, PLAYOUT_PLIES,
        )

    return fast


def measure(game: Game, name: str, seconds: float) -> float:
    """One of :data:`MEASURES` for ``game``, over about ``seconds``."""
    if name == "reference_playouts_per_s":
        rng = random.Random(0)

        def reference(count: int) -> None:
            for _ in range(count):
                reference_playout(game.new_state(), rng)

        return _rate(reference, seconds)
    if name == "fast_playouts_per_s":
        return _rate(_fast_playouts(game), seconds)
    agent_class = MctsAgent if name == "mcts_iterations_per_s" else AlphaBetaAgent
    analysis = agent_class(game, seed=0).analyse(game.new_state(), Limit(seconds=seconds))
    return analysis.speed


def warm_up(names: list[str]) -> float:
    """Load (or compile) every kernel the benchmarks use; the seconds it took."""
    start = time.perf_counter()
    for name in names:
        game = variant(name)
        _fast_playouts(game)(1)
        MctsAgent(game).warmed_up()
        AlphaBetaAgent(game).warmed_up()
    return time.perf_counter() - start


def bench(
    names: list[str], seconds: float, on_step: Callable[[str, str], None] | None = None
) -> dict[str, Any]:
    """Every measure of every named variant (``seconds`` each), and ``compile_s``."""
    results: dict[str, Any] = {"compile_s": warm_up(names)}
    for name in names:
        game = variant(name)
        figures: dict[str, float] = {}
        for measure_name in MEASURES:
            if on_step is not None:
                on_step(name, measure_name)
            figures[measure_name] = measure(game, measure_name, seconds)
        figures["fast_speedup"] = figures["fast_playouts_per_s"] / figures[
            "reference_playouts_per_s"
        ]
        results[name] = figures
    return results


# --- verification -------------------------------------------------------------------------


def _differences(twin: FastTwin, reference: State, array: Array) -> list[str]:
    """How the twin's state differs from the reference state (empty when they agree)."""
    params = twin.params
    problems = []
    if twin.position(array) != reference.position():
        problems.append(
            f"position: reference {reference.position()!r}, twin {twin.position(array)!r}"
        )
    if twin.legal_list(array) != reference.legal_moves():
        problems.append(
            f"legal moves: reference {reference.legal_moves()}, twin {twin.legal_list(array)}"
        )
    to_move = -1 if reference.to_move is None else int(reference.to_move)
    if int(twin.to_move(params, array)) != to_move:
        problems.append(f"side to move: reference {to_move}, twin {twin.to_move(params, array)}")
    code = int(twin.end_code(params, array))
    if twin.end_reasons.get(code) != reference.end_reason:
        problems.append(
            f"end: reference {reference.end_reason!r}, twin code {code} "
            f"({twin.end_reasons.get(code)!r})"
        )
    if reference.is_over and float(twin.margin(params, array)) != reference.margin:
        problems.append(f"margin: reference {reference.margin}, twin {twin.margin(params, array)}")
    converted = twin.from_reference(reference)
    for name in ("key", "history_key"):
        kernel = getattr(twin, name)
        if int(kernel(params, converted)) != int(kernel(params, array)):
            problems.append(f"{name}: played and converted twin states differ")
    return problems


def verify_game(twin: FastTwin, rng: random.Random, pass_chance: float = 0.1) -> str | None:
    """Play one random game on both engines; the first difference found, or None.

    Moves are random placements, with a pass (where legal) now and then, so that the pass
    rules are exercised too; after each move the twin also undoes and replays it.
    """
    game = twin.game
    reference = game.new_state()
    array = twin.new_state()
    while True:
        problems = _differences(twin, reference, array)
        if problems:
            line = " ".join(game.format_move(m) for m in reference.history) or "(start)"
            return f"after {line}: " + "; ".join(problems)
        if reference.is_over:
            return None
        moves = reference.legal_moves()
        placements = [m for m in moves if m != game.pass_move]
        may_pass = game.pass_move is not None and game.pass_move in moves
        if may_pass and (not placements or rng.random() < pass_chance):
            move = moves[-1]  # the pass, last of the sorted moves
        else:
            move = rng.choice(placements)
        before = twin.position(array)
        twin.play(twin.params, array, move)
        twin.undo(twin.params, array)
        if twin.position(array) != before:
            return f"undo of {game.format_move(move)} does not restore {before!r}"
        reference.play(move)
        twin.play(twin.params, array, move)


def verify(
    names: list[str], games: int, seed: int, on_game: Callable[[str], None] | None = None
) -> list[str]:
    """``games`` random games per variant; the differences found, one line each."""
    mismatches = []
    for name in names:
        twin = twin_for(variant(name))
        rng = random.Random(f"{seed}:{name}")
        for number in range(1, games + 1):
            problem = verify_game(twin, rng)
            if problem is not None:
                mismatches.append(f"{name}, game {number}: {problem}")
            if on_game is not None:
                on_game(name)
    return mismatches
