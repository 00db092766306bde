"""Hypothesis strategies shared by the tests: game variants, and random legal games of them.

``played_states(variants)`` draws a variant, then legal moves one at a time through the rules
engine, so every state it gives is reachable by legal play; its ``history`` lists the moves.
Passes are rare: about one move in ``PASS_ODDS`` while a placement is legal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar, cast

from hypothesis import strategies as st

from agon.core.game import Game, State
from agon.core.options import Option
from agon.core.records import GameRecord
from agon.games import make_game, plugins
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


# --- hostile input: every registered game, through the registry only ----------------------------

HUGE_NUMBERS = (
    "9" * 5000, "1" + "0" * 23, "-1", "0", "1e999", "-1e999", "nan", "inf", "1e308", "+7",
    "1_000", "\u0661", "0x10", "7.5", "", " ", "-0", "99999999999999999999",
)
"""Texts of numbers an attacker tries: too many digits for ``int``, past any range, not
finite, signed, other scripts' digits, written in other bases."""


def registered_variants() -> st.SearchStrategy[Game]:
    """The small variants every registered game names for testing (and its default)."""
    examples = [
        (name, dict(options))
        for name, found in plugins().items()
        for options in ({}, *found.tooling.variant_examples)
    ]
    return st.sampled_from(examples).map(lambda example: make_game(*example))


def mutated_texts(text: str) -> st.SearchStrategy[str]:
    """``text`` as it is, or with pieces cut, repeated, replaced by huge numbers or odd
    characters, or its tokens shuffled: mostly near-misses that reach deep into a parser."""

    @st.composite
    def mutate(draw: st.DrawFn) -> str:
        result = text
        for _ in range(draw(st.integers(0, 3))):
            start = draw(st.integers(0, len(result)))
            end = draw(st.integers(start, min(len(result), start + 8)))
            piece = draw(
                st.one_of(
                    st.sampled_from(HUGE_NUMBERS),
                    st.text(max_size=4),
                    st.sampled_from(["/", ":", " ", "=", ",", "pass", "\x00", "\n"]),
                    st.just(result[start:end] * draw(st.integers(0, 50))),
                )
            )
            result = result[:start] + piece + result[end:]
        if draw(st.integers(0, 9)) == 0:
            tokens = result.split()
            result = " ".join(draw(st.permutations(tokens)))
        return result

    return mutate()


@st.composite
def positions(draw: st.DrawFn) -> tuple[Game, str]:
    """A variant and a position text: a real position of it, often mutated."""
    state = draw(played_states(registered_variants(), max_plies=20))
    return state.game, draw(mutated_texts(state.position()))


@st.composite
def move_texts(draw: st.DrawFn, game: Game) -> str:
    """A list of moves for ``game``: legal ones from its start, some mutated."""
    state = draw(played_states(game, max_plies=12))
    text = " ".join(game.format_move(move) for move in state.history)
    return draw(mutated_texts(text))


def option_values(option: Option) -> st.SearchStrategy[str]:
    """Texts for a game's option on the command line: valid values and hostile ones."""
    valid: list[str] = [option.text(option.default)]
    if option.choices:
        valid += [choice.value for choice in option.choices]
    if option.kind == "whole" and option.minimum is not None and option.maximum is not None:
        valid += [str(int(option.minimum)), str(int(option.maximum)), str(int(option.maximum) + 1)]
    return st.one_of(st.sampled_from(valid), st.sampled_from(HUGE_NUMBERS), st.text(max_size=6))


@st.composite
def records(draw: st.DrawFn) -> str:
    """A record's JSON text: valid (a real game of a registered game), or with fields of the
    wrong type, huge numbers, deep nesting, an unknown version, or garbage."""
    state = draw(played_states(registered_variants(), max_plies=20))
    data: dict[str, Any] = GameRecord.from_state(state).to_dict()
    kind = draw(st.sampled_from(["valid", "field", "nesting", "garbage", "moves"]))
    if kind == "field":
        key = draw(st.sampled_from(sorted(data)))
        data[key] = draw(
            st.one_of(
                st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8),
                st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3),
                                                                     st.integers(), max_size=2),
                st.sampled_from(["HUGE", 99, -1, 1e308]),
            )
        )
    elif kind == "moves" and data["moves"]:
        index = draw(st.integers(0, len(data["moves"]) - 1))
        data["moves"][index] = draw(mutated_texts(data["moves"][index]))
    elif kind == "nesting":
        depth = draw(st.sampled_from([5, 21, 1000, 100_000]))
        data[draw(st.sampled_from(sorted(data)))] = "NEST"
        text = json.dumps(data).replace('"NEST"', "[" * depth + "]" * depth)
        return text
    text = json.dumps(data).replace('"HUGE"', "9" * 5000)
    if kind == "garbage":
        text = draw(mutated_texts(text))
    return text


def variant_args(game: Game) -> list[str]:
    """The command line's game and options that make ``game`` (``alak --size 5 …``)."""
    specs = {option.name: option for option in game.option_specs}
    args = [game.name]
    for name, value in game.options().items():
        option = specs[name]
        if option.kind == "bool":
            args.append(option.flag if value else "--no-" + option.flag.removeprefix("--"))
        else:
            args += [option.flag, option.text(value)]
    return args
