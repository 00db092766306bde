"""Hypothesis strategies shared by the tests: game variants, and random legal games of them.

``played_states(variants)`` draws a variant, then legal moves one at a time through the rules
engine, so every state it gives is reachable by legal play; its ``history`` lists the moves.
Passes are rare: about one move in ``PASS_ODDS`` while a placement is legal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar, cast

from hypothesis import strategies as st

from agon.core.game import Game, State
from agon.games import make_game
from agon.games.alak.rules import AlakRules

KOMIS = (0.0, 0.5, 2.0, 3.5)
PASS_ODDS = 8
"""A random game passes about once in this many moves while it has a placement to play."""

StateT = TypeVar("StateT", bound=State)


@st.composite
def alternator_variants(draw: st.DrawFn, max_side: int = 5, square: bool = False) -> Game:
    """Alternator boards up to ``max_side`` on each side (at least two cells), any komi."""
    width = draw(st.integers(2 if square else 1, max_side))
    height = width if square else draw(st.integers(1 if width > 1 else 2, max_side))
    komi = draw(st.sampled_from(KOMIS))
    return make_game("alternator", {"width": width, "height": height, "komi": komi})


@st.composite
def alak_variants(
    draw: st.DrawFn, max_size: int = 7, rules: Sequence[AlakRules] = tuple(AlakRules)
) -> Game:
    """Alak boards of 1 to ``max_size`` points under the given rule sets, every option drawn."""
    chosen = draw(st.sampled_from(list(rules)))
    options: dict[str, object] = {"size": draw(st.integers(1, max_size)), "rules": chosen.value}
    if chosen is AlakRules.BALJEU:
        options["edge_capture"] = draw(st.booleans())
    else:
        options["komi"] = draw(st.sampled_from(KOMIS))
    return make_game("alak", options)


def variants() -> st.SearchStrategy[Game]:
    """Any small variant of either game."""
    return st.one_of(alternator_variants(), alak_variants())


@st.composite
def played_states(
    draw: st.DrawFn,
    games: st.SearchStrategy[Game] | Game,
    max_plies: int = 60,
    to_the_end: bool = False,
) -> State:
    """A state reached by random legal moves from the start of a drawn (or given) variant.

    Plays up to ``max_plies`` moves; with ``to_the_end`` it goes on until the game is over (or
    ``max_plies`` is reached), otherwise it also draws how many moves to play.
    """
    game = games if isinstance(games, Game) else draw(games)
    plies = max_plies if to_the_end else draw(st.integers(0, max_plies))
    # One generator for all the moves: uniform choices give longer, more varied games than
    # Hypothesis's boundary-seeking integers, and it still replays and shrinks.
    rng = draw(st.randoms(use_true_random=False))
    state = game.new_state()
    while not state.is_over and len(state.history) < plies:
        moves = state.legal_moves()
        placements = [move for move in moves if move != game.pass_move]
        # Pass now and then only (two in a row end most games), or when nothing else is legal.
        if not placements or rng.randrange(PASS_ODDS) == 0:
            state.play(moves[-1])
        else:
            state.play(rng.choice(placements))
    return state


def replay_states(state: StateT) -> list[StateT]:
    """Copies of a state played from its game's start: before the first move and after each."""
    snapshots = [cast(StateT, state.game.new_state())]
    for move in state.history:
        following = snapshots[-1].copy()
        following.play(move)
        snapshots.append(following)
    return snapshots
