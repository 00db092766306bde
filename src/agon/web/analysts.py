"""The study's thinking, run in the arena's worker processes: hints, analyses of positions and
the positions of a review, each a plain top-level function of plain values (so that it can run
in another process) around an :class:`~agon.study.analysis.Analyst`.

Each worker (process, or thread where the arena thinks in threads) keeps the analysts of the
variants it analysed last, so that the solver's table of one request serves the next (the
steps of the analysis board, the rounds of a refinement, the positions of a review); exact
answers are also kept in the store of exact values (:mod:`agon.study.store`), which every
worker reads.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

from agon.core.game import Game, State
from agon.core.limits import NO_LIMIT, Limit
from agon.core.player import Player
from agon.games import make_game
from agon.solve.solver import player_table_bits
from agon.study import puzzles
from agon.study.analysis import Analyst, PositionAnalysis
from agon.study.store import ExactValues
from agon.study.values import Value, describe, json_value, outcome, short

TABLE_BITS = 16
"""The largest transposition table, and table of proof numbers, a worker's solver gets
(2**bits buckets, and no more than a player's: ``player_table_bits``): the arena solves small
positions, and keeps its memory for many."""
ANALYSTS_KEPT = 2
"""The analysts (one a variant) a worker keeps between requests."""

_local = threading.local()


def analyst_for(game: Game) -> Analyst:
    """This worker's analyst of ``game``'s variant (made on first use, the least recently used
    one dropped past :data:`ANALYSTS_KEPT`)."""
    kept: OrderedDict[Game, Analyst] = _local.__dict__.setdefault("analysts", OrderedDict())
    found = kept.pop(game, None)
    if found is None:
        bits = min(player_table_bits(game, NO_LIMIT), TABLE_BITS)
        found = Analyst(game, ExactValues(), table_bits=bits, numbers_bits=bits)
    kept[game] = found
    while len(kept) > ANALYSTS_KEPT:
        _, dropped = kept.popitem(last=False)
        if dropped.exact is not None:
            dropped.exact.close()
    return found


def position_of(game_name: str, options: dict[str, Any], position: str | None) -> State:
    """The position ``position`` (a position text; None: the start) of the variant."""
    game = make_game(game_name, options)
    return game.parse_position(position) if position else game.new_state()


def analyse_position(
    game_name: str, options: dict[str, Any], position: str | None, seconds: float
) -> dict[str, Any]:
    """The analysis of a position within ``seconds``, as the analysis board shows it
    (:func:`analysis_json`)."""
    state = position_of(game_name, options, position)
    analysis = analyst_for(state.game).analyse(state, Limit(seconds=seconds), moves=True)
    return analysis_json(state, analysis)


def analyse_for_review(
    game_name: str, options: dict[str, Any], start: str | None, moves: list[str],
    seconds: float,
) -> PositionAnalysis:
    """The position after ``moves`` from ``start`` (a position text; None: the start), one of
    a review, analysed within ``seconds`` (every move's value where it is solved). It is
    reached by its moves, so that the store can give it its value from the position before."""
    state = position_of(game_name, options, start)
    for text in moves:
        state.play_text(text)
    return analyst_for(state.game).analyse(state, Limit(seconds=seconds), moves=True)


def hint(
    game_name: str, options: dict[str, Any], moves: list[str], seconds: float
) -> dict[str, Any]:
    """A hint for the player to move after ``moves``: the best move found within ``seconds``
    (exact where the store or the solver has it), its value in words from that player's view,
    and the line expected."""
    game = make_game(game_name, options)
    state = game.new_state()
    for text in moves:
        state.play_text(text)
    mover = state.to_move
    assert mover is not None, "a hint in a finished game"
    analysis = analyst_for(game).analyse(state, Limit(seconds=seconds), moves=False)
    move = analysis.best_moves[0] if analysis.best_moves else state.legal_moves()[0]
    line = analysis.principal_variation or [move]
    return {
        "move": game.format_move(move),
        "value": json_value(analysis.value.for_player(mover)),
        "exact": analysis.value.exact,
        "value_text": describe(game, analysis.value, mover),
        "short": short(game, analysis.value),
        "pv": [game.format_move(played) for played in line],
        "source": analysis.source,
    }


def analysis_json(state: State, analysis: PositionAnalysis) -> dict[str, Any]:
    """An analysis as the analysis board shows it: :meth:`PositionAnalysis.to_json`, the
    value in words (naming the player: "best play: Black wins by 2"), and every legal move
    with its value where the position is solved, the best ones first (from the mover's view)
    and marked."""
    game = state.game
    found = analysis.to_json(game)
    found["words"] = describe(game, analysis.value)
    found["to_move"] = None if state.to_move is None else state.to_move.label
    found["moves"] = moves_with_values(state, analysis)
    return found


def moves_with_values(state: State, analysis: PositionAnalysis) -> list[dict[str, Any]]:
    """Each legal move with Black's exact value after it (where solved), its value in short,
    and whether it is a best move; sorted best first for the player to move."""
    game, mover = state.game, state.to_move
    if mover is None:
        return []
    values = analysis.move_values or {}
    best = set(analysis.best_moves)
    sign = 1 if mover is Player.BLACK else -1

    def rank(move: int) -> tuple[int, float, int]:
        value = values.get(move)
        return (move not in best, -sign * value if value is not None else 0.0, move)

    listed = []
    for move in sorted(state.legal_moves(), key=rank):
        value = values.get(move)
        listed.append({
            "move": game.format_move(move),
            "value": json_value(value),
            "value_text": None if value is None else short(game, Value(value, True)),
            "best": move in best,
            "outcome": None if value is None else outcome(sign * value),
        })
    return listed


def find_puzzles(
    game_name: str, options: dict[str, Any], count: int, seconds: float, seed: int
) -> list[dict[str, Any]]:
    """Up to ``count`` puzzles of the variant found within ``seconds``
    (:func:`agon.study.puzzles.find_puzzles`), as records (:meth:`Puzzle.to_record`)."""
    game = make_game(game_name, options)
    analyst = analyst_for(game)
    deadline = time.monotonic() + seconds
    analyst.stop_requested = lambda: time.monotonic() > deadline
    try:
        found = puzzles.find_puzzles(analyst, count, seed=seed, limit=Limit(seconds=0.5))
        return [puzzle.to_record() for puzzle in found]
    finally:
        analyst.stop_requested = lambda: False
