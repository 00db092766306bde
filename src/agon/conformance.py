"""The conformance suite: what every game must do, checked the same way for each, as OpenSpiel's
``random_sim_test`` and Pgx's ``api_test`` check theirs.

A game's tests create the suite's test class in one line::

    from agon.conformance import suite

    TestTicTacToe = suite("tictactoe")

The class's tests run on the game's ``tooling.variant_examples`` (its default variant where it
declares none): random games through the reference rules and the game's twin in lock-step,
copies and undo, notation, position texts, records, options, renderers, illegal moves, the
end of a game, texts, observation planes, the agents, the solver against a plain negamax, and
the OpenSpiel and PettingZoo adapters. Random games are seeded, so a failure repeats.

This module needs the ``test`` extra (pytest and Hypothesis, and open-spiel and pettingzoo for
the adapters): ``pip install agon[test]``.
"""

from __future__ import annotations

import contextlib
import functools
import io
import itertools
import json
import random
import re
import sys
import warnings
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agon.core.errors import AgonError, IllegalMove, NotationError, PositionError
from agon.core.evaluation import params_weights
from agon.core.game import Game, Move, State, result_text
from agon.core.player import Player
from agon.core.plugin import GamePlugin
from agon.core.records import GameRecord
from agon.core.render import status_lines
from agon.core.texts import LANGUAGE_NAMES
from agon.games import (
    make_game,
    plugin,
    plugins,
    register,
    renderer,
    rules_text,
    unregister,
    words,
)
from agon.search.bench import verify_game
from agon.search.registry import make_agent
from agon.search.twins import twin_for
from agon.solve.solver import Solver

GAMES_PER_TEST = 3
FORCED_GAMES = 40
"""Random games searched for positions with a single legal move, beyond the sample games."""
"""Random games each test plays per variant (the lock-step test plays more)."""
LOCKSTEP_GAMES = 8
MAX_PLIES = 300
"""Random games are cut after this many plies (some rule sets allow games of thousands)."""
PASS_ODDS = 8
"""A random game passes about once in this many moves while it has another move to play."""
AGENT_SPECS = ("random", "greedy", "mcts:200", "alphabeta:2000")
NEGAMAX_POSITIONS = 6_000
"""The most positions the plain negamax that checks the solver may visit from one position."""
SOLVER_TABLE_BITS = 14
SUMMARY_LENGTH = 120
"""The most characters of a game's summary in the lobby."""
JUNK = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "/", ":", "x", "\x00", "-1", "9" * 30, "é" * 5, "pass pass"]),
)


# --- variants and random games ----------------------------------------------------------------


def variants(game_name: str) -> list[Game]:
    """The variants the suite plays: the game's examples, else its default."""
    found = plugin(game_name)
    return [found.make(options) for options in found.tooling.variant_examples] or [found.make()]


def random_game(
    game: Game, rng: random.Random, plies: int = MAX_PLIES, pass_odds: int | None = PASS_ODDS
) -> State:
    """A random legal game from the start, to its end or ``plies`` moves; passes are rare
    (about one in ``pass_odds`` moves), or only where nothing else is legal (None)."""
    state, pass_move = game.new_state(), game.pass_move
    while not state.is_over and len(state.history) < plies:
        moves = state.legal_moves()
        others = [move for move in moves if move != pass_move]
        if pass_move is not None and pass_move in moves and (
            not others or (pass_odds is not None and rng.randrange(pass_odds) == 0)
        ):
            state.play(pass_move)
        else:
            state.play(rng.choice(others))
    return state


def replayed(final: State) -> list[State]:
    """Copies of every state of a game played from the start: before each move and the last."""
    states = [final.game.new_state()]
    for move in final.history:
        following = states[-1].copy()
        following.play(move)
        states.append(following)
    return states


@functools.cache
def sample_games(game: Game, count: int = GAMES_PER_TEST) -> tuple[State, ...]:
    """``count`` random games of the variant (seeded by it), each as its final state."""
    rng = random.Random(f"agon-conformance:{game!r}")
    return tuple(random_game(game, rng) for _ in range(count))


def sample_states(game: Game) -> Iterator[State]:
    """Every state of the sample games (fresh copies)."""
    for final in sample_games(game):
        yield from replayed(final)


def forced_states(game: Game, count: int = 3) -> list[State]:
    """Up to ``count`` positions with a single legal move, from the sample games, else from
    up to :data:`FORCED_GAMES` more random games."""
    rng = random.Random(f"forced {game.variant_id}")
    found: list[State] = []
    games = itertools.chain(
        sample_games(game), (random_game(game, rng) for _ in range(FORCED_GAMES))
    )
    for final in games:
        found += [state for state in replayed(final) if len(state.legal_moves()) == 1]
        if len(found) >= count:
            break
    return found[:count]


def ongoing_states(game: Game, count: int) -> list[State]:
    """The start and positions from the middle of the sample games, none of them over."""
    found = [game.new_state()]
    for final in sample_games(game):
        states = [s for s in replayed(final) if not s.is_over]
        if len(states) > 1:
            found.append(states[len(states) // 2])
    return found[:count]


def places(game: Game) -> list[int]:
    """The board's places: every place some move is made of."""
    return sorted({place for move in range(game.num_actions) for place in game.move_places(move)})


def snapshot(state: State) -> tuple[str, Any, list[Move]]:
    return state.position(), state.key(), list(state.history)


# --- a plain negamax over the reference rules --------------------------------------------------


class TooLarge(Exception):
    """The plain negamax would visit more positions than it may."""


class Negamax:
    """Black's margin with perfect play by plain minimax over the reference rules, each position
    valued once (states of equal ``key()`` have equal values); :class:`TooLarge` once more than
    ``limit`` positions are valued, all questions to one instance together."""

    def __init__(self, limit: int = NEGAMAX_POSITIONS) -> None:
        self.limit = limit
        self.known: dict[Any, float] = {}

    def margin(self, state: State) -> float:
        return self._value(state.copy(), 0)

    def move_margins(self, state: State) -> dict[Move, float]:
        """The margin after each legal move."""
        found = {}
        for move in state.legal_moves():
            following = state.copy()
            following.play(move)
            found[move] = self._value(following, 0)
        return found

    def _value(self, state: State, depth: int) -> float:
        key = state.key()
        if key in self.known:
            return self.known[key]
        if len(self.known) >= self.limit or depth > sys.getrecursionlimit() // 4:
            raise TooLarge
        if state.is_over:
            found = float(state.margin)
        else:
            results = []
            for move in state.legal_moves():
                state.play(move)
                try:
                    results.append(self._value(state, depth + 1))
                finally:
                    state.undo()
            found = max(results) if state.to_move is Player.BLACK else min(results)
        self.known[key] = found
        return found


def solver_cases(game: Game) -> list[tuple[State, dict[Move, float]]]:
    """Positions whose plain negamax fits in its limit, with the margin after each move: the
    start, if it fits, and from each of two random games that pass only when they must (so
    that they end with few moves left) the earliest position that fits (going back from its
    end until one does not)."""
    cases = []
    start = game.new_state()
    with contextlib.suppress(TooLarge):
        cases.append((start, Negamax().move_margins(start)))
    rng = random.Random(f"agon-conformance-solver:{game!r}")
    for final in (random_game(game, rng, pass_odds=None) for _ in range(2)):
        negamax, found = Negamax(), None
        for state in reversed([s for s in replayed(final) if not s.is_over]):
            try:
                found = (state, negamax.move_margins(state))
            except TooLarge:
                break
        if found is not None and found[0].history:
            cases.append(found)
    return cases


# --- the suite ----------------------------------------------------------------------------------


class _Conformance:
    """The tests; :func:`suite` makes a class of them for one game."""

    game_name: ClassVar[str]

    added: ClassVar[GamePlugin[Any, Any] | None] = None
    """A plugin no entry point names, registered around the class's own tests alone."""

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Each test that takes a ``variant`` runs on every variant of the game's examples."""
        if "variant" in metafunc.fixturenames:
            with registered(self.added):
                games = variants(self.game_name)
            metafunc.parametrize("variant", games, ids=[game.variant_id for game in games])

    @pytest.fixture(autouse=True, scope="class")
    @classmethod
    def _registered(cls) -> Iterator[None]:
        with registered(cls.added):
            yield

    @property
    def plugin(self) -> GamePlugin[Any, Any]:
        return plugin(self.game_name)

    # --- the rules engine --------------------------------------------------------------------

    def test_random_games_agree_with_the_twin_in_lock_step(self, variant: Game) -> None:
        """Legal moves, positions, side to move, end, margin, keys and undo: the game's twin
        (its fast twin, or the twin over its reference rules) as the reference rules say."""
        twin = twin_for(variant)
        rng = random.Random(f"lock-step:{variant!r}")
        for number in range(LOCKSTEP_GAMES):
            problem = verify_game(twin, rng)
            assert problem is None, f"game {number + 1}: {problem}"

    def test_evaluation_terms_add_up_to_the_evaluation(self, variant: Game) -> None:
        """Where the twin declares its evaluation's terms (what ``agon train`` fits), the
        evaluation is their base plus the weighted terms, with the weights ``params`` hold."""
        twin = twin_for(variant)
        terms = twin.terms
        if terms is None:
            return  # (an evaluation that is not a weighted sum: nothing to add up)
        weights = params_weights(twin.params, terms)
        assert weights.shape == (len(terms.names),) and np.all(np.isfinite(weights))
        for state in sample_states(variant):
            array = twin.from_reference(state)
            row = np.zeros(len(terms.names), dtype=np.float64)
            base = terms.features(twin.params, array, row)
            estimate = twin.evaluate(twin.params, array)
            assert estimate == pytest.approx(base + float(row @ weights)), state.position()

    def test_copies_are_independent_and_undo_restores(self, variant: Game) -> None:
        fresh = variant.new_state()
        with pytest.raises(IllegalMove):
            fresh.undo()
        for state in sample_states(variant):
            before = snapshot(state)
            copied = state.copy()
            assert snapshot(copied) == before and copied is not state
            assert copied.history is not state.history
            for move in state.legal_moves()[:3]:
                copied.play(move)
                assert snapshot(state) == before, "playing on a copy changed the original"
                assert copied.history == [*before[2], move]
                state.play(move)
                assert snapshot(state) == snapshot(copied)
                assert state.undo() == move
                assert snapshot(state) == before, f"undo of {move} does not restore"
                copied.undo()
            if state.history:
                last = state.history[-1]
                undone = state.copy()
                undone.undo()
                assert snapshot(state) == before, "undo on a copy changed the original"
                undone.play(last)
                assert snapshot(undone) == before

    def test_equal_keys_mean_the_same_future(self, variant: Game) -> None:
        """States of equal ``key()`` (which transposition tables take for the same position)
        have the same moves, end and margin, and so have the states after each move."""
        by_key: dict[Any, State] = {}
        for state in sample_states(variant):
            first = by_key.setdefault(state.key(), state)
            if first is state:
                continue
            assert _future(first) == _future(state), (
                f"{first.position()!r} and {state.position()!r} share a key"
            )

    def test_every_action_with_a_notation_reads_back(self, variant: Game) -> None:
        written = 0
        for move in range(variant.num_actions):
            try:
                text = variant.format_move(move)
            except NotationError:
                continue
            if move != variant.pass_move and not variant.move_places(move):
                continue  # (no move on this board: its text may only describe it)
            written += 1
            assert variant.parse_move(text) == move, f"{text!r} reads as another move"
            assert variant.parse_moves(f"{text}, {text}") == [move, move]
        assert written, "no action has a notation"
        for outside in (-1, variant.num_actions):
            with pytest.raises(NotationError):
                variant.format_move(outside)
        for state in sample_states(variant):
            for move in state.legal_moves():  # (records write them)
                assert variant.parse_move(variant.format_move(move)) == move

    def test_places_are_named_once_and_make_the_moves(self, variant: Game) -> None:
        board = places(variant)
        names = [variant.place_name(place) for place in board]
        assert board and len(set(names)) == len(names), f"place names repeat: {names}"
        assert all(name.strip() == name and name for name in names)
        if variant.pass_move is not None:
            assert variant.move_places(variant.pass_move) == ()
        for state in sample_states(variant):
            made = [variant.move_places(m) for m in state.legal_moves() if m != variant.pass_move]
            assert all(made), "a move other than the pass is made of no place"
            assert len(set(made)) == len(made), "two legal moves are made of the same places"

    def test_illegal_actions_are_explained_and_change_nothing(self, variant: Game) -> None:
        for state in sample_states(variant):
            legal = set(state.legal_moves())
            before = snapshot(state)
            for move in [-1, *range(variant.num_actions), variant.num_actions]:
                reason = state.illegal_reason(move)
                if move in legal:
                    assert reason is None, f"legal move {move} is refused: {reason}"
                    continue
                assert isinstance(reason, str) and reason.strip(), f"{move}: no reason given"
                with pytest.raises(IllegalMove):
                    state.play(move)
                assert snapshot(state) == before, f"the refused move {move} changed the state"

    def test_the_end_and_the_result_agree(self, variant: Game) -> None:
        found = self.plugin
        longest = found.max_game_length(variant)
        largest = found.solving.largest_margin(variant) if found.solving else None
        ended = 0
        for state in sample_states(variant):
            over = state.is_over
            moves = state.legal_moves()
            assert over == (state.end_reason is not None) == (not moves)
            assert over == (state.to_move is None)
            assert moves == sorted(set(moves))
            assert all(0 <= move < variant.num_actions for move in moves)
            assert len(state.history) <= longest
            margin = state.margin
            # (the rules may declare a draw whatever the points: a margin of 0)
            assert margin in (state.score().margin, 0), "the margin is not the score's"
            if not over:
                assert state.result is None and state.winner is None
                continue
            ended += 1
            assert state.result == result_text(margin)
            expected = None if margin == 0 else Player.BLACK if margin > 0 else Player.WHITE
            assert state.winner == expected
            if largest is not None:
                assert abs(margin + variant.komi) <= largest, "the margin passes its bound"
        assert ended or all(len(g.history) == MAX_PLIES for g in sample_games(variant))

    # --- texts: positions, records, options, rules --------------------------------------------

    def test_position_texts_round_trip(self, variant: Game) -> None:
        for state in sample_states(variant):
            text = state.position()
            loaded = variant.parse_position(text)
            assert loaded.game == variant
            assert loaded.position() == text
            assert loaded.key() == state.key()
            assert loaded.to_move == state.to_move
            assert loaded.legal_moves() == state.legal_moves()
            assert loaded.end_reason == state.end_reason
            assert loaded.margin == state.margin

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def test_junk_is_refused_in_words(self, variant: Game, data: st.DataObject) -> None:
        """A position text is read or refused with :class:`PositionError`, a move text with
        :class:`NotationError`; never another exception. A text that is read writes back."""
        positions = sorted({state.position() for state in sample_states(variant)})
        base = data.draw(st.sampled_from(positions))
        at = data.draw(st.integers(0, len(base)))
        text = data.draw(st.one_of(
            JUNK,
            st.builds(lambda junk: base[:at] + junk + base[at:], JUNK),
            st.builds(lambda cut: base[:at] + base[at + cut:], st.integers(1, 3)),
            st.builds(lambda: base[:at]),
        ))
        try:
            loaded = variant.parse_position(text)
        except PositionError:
            pass
        else:
            again = variant.parse_position(loaded.position())
            assert again.position() == loaded.position() and again.key() == loaded.key()
        try:
            move = variant.parse_move(text)
        except NotationError:
            pass
        else:
            assert 0 <= move < variant.num_actions

    def test_records_round_trip(self, variant: Game) -> None:
        for final in sample_games(variant):
            players = {"black": "random", "white": "greedy"}
            record = GameRecord.from_state(final, players)
            loaded = GameRecord.from_json(record.to_json(), make_game)
            assert loaded.game == variant
            assert loaded.moves == [variant.format_move(move) for move in final.history]
            assert loaded.players == players
            assert (loaded.result, loaded.reason) == (final.result, final.end_reason)
            replay = loaded.replay()
            assert replay.history == final.history
            assert replay.position() == final.position()
            assert len(loaded.states()) == len(final.history) + 1

    def test_options_read_back_and_bad_ones_are_refused(self, variant: Game) -> None:
        options = variant.options()
        assert json.loads(json.dumps(options)) == options
        assert type(variant).from_options(options) == variant
        assert make_game(self.game_name, json.loads(json.dumps(options))) == variant
        assert variant.variant_id and variant.description
        with pytest.raises(AgonError):
            make_game(self.game_name, {**options, "no_such_option": 1})
        for option in variant.option_specs:
            assert json.loads(json.dumps(option.describe()))["name"] == option.name
            if option.shortcut:
                continue
            assert option.name in options, f"option {option.name} is missing from options()"
            with pytest.raises(AgonError):
                make_game(self.game_name, {**options, option.name: ["junk"]})
            for outside in (
                None if option.minimum is None else option.minimum - 1,
                None if option.maximum is None else option.maximum + 1,
            ):
                if outside is not None:
                    with pytest.raises(AgonError):
                        make_game(self.game_name, {**options, option.name: outside})

    def test_every_option_value_makes_a_playable_variant_or_is_refused(self) -> None:
        """Each option at its bounds (a bool either way, a choice at each value), the others at
        their defaults: the variant is made, and its start has a move to play, or it is refused
        in words (a variant over before its first move is refused: every tool needs a move)."""
        found = self.plugin
        for option in found.game.option_specs:
            if option.shortcut:
                continue
            values = {
                "bool": [False, True], "choice": [choice.value for choice in option.choices]
            }.get(option.kind, [v for v in (option.minimum, option.maximum) if v is not None])
            for value in values:
                try:
                    made = found.make({option.name: value})
                except AgonError as refusal:
                    assert str(refusal).strip(), f"{option.name}={value}: refused in no words"
                    continue
                start = made.new_state()
                assert not start.is_over and start.to_move is not None, f"{option.name}={value}"
                assert start.legal_moves(), f"{option.name}={value}: no move at the start"

    def test_rules_texts_in_every_declared_language(self, variant: Game) -> None:
        languages = self.plugin.languages
        assert "en" in languages
        for lang in languages:
            assert lang in LANGUAGE_NAMES
            text = rules_text(variant, lang)
            assert text.startswith("#") and len(text) > 100
            assert "<!--" not in text, f"{lang}: an option block is left in the text"
        with pytest.raises(AgonError):
            rules_text(variant, "xx")

    def test_the_lobby_words_in_every_declared_language(self, variant: Game) -> None:
        said = words(variant.name)
        assert list(said) == list(self.plugin.languages)
        for lang, lang_words in said.items():
            assert lang_words.summary.strip() and lang_words.click_help.strip(), lang
            assert len(lang_words.summary) <= SUMMARY_LENGTH, f"{lang}: a summary is one line"

    def test_every_dotted_path_loads(self, variant: Game) -> None:
        """The renderer, twin, symmetries and catalogue a plugin names import, and are what
        the contract says (Agon imports them only when first needed)."""
        found = self.plugin
        assert callable(found.load_renderer().render_svg)
        assert found.fast_twin is None or found.build_fast_twin(variant) is not None
        solving = found.solving
        if solving is not None and solving.symmetries is not None:
            symmetries = solving.symmetries_of(variant)
            assert symmetries is not None and symmetries.count >= 1
        catalogue = found.tooling.load_catalogue()
        assert found.tooling.catalogue is None or catalogue is not None

    # --- what players and programs see --------------------------------------------------------

    def test_text_and_rich_boards_show_the_status(self, variant: Game) -> None:
        from rich.console import Console

        drawing = renderer(variant)
        outcome_only = self.plugin.judging.outcome_only  # (the renderer says it, not points)
        for final in sample_games(variant)[:2]:
            for state in [*replayed(final)[:: max(1, len(final.history) // 5)], final]:
                plain = drawing.render_text(state, ascii=True)
                assert plain.isascii(), f"not ASCII: {plain!r}"
                text = drawing.render_text(state)
                output = io.StringIO()
                Console(file=output, width=120, color_system=None).print(
                    drawing.render_rich(state)
                )
                assert not outcome_only or "Score:" not in plain, "points in a game of none"
                for line in status_lines(state, outcome_only=outcome_only):
                    assert line in plain and line in text and line in output.getvalue()

    def test_svg_names_every_place(self, variant: Game) -> None:
        drawing = renderer(variant)
        board = places(variant)
        names = {variant.place_name(place): place for place in board}
        for state in ongoing_states(variant, 3):
            move = state.legal_moves()[0]
            svg = drawing.render_svg(state, highlight=board[:1], last_move=move)
            items = _svg_places(svg)
            assert sorted(items) == sorted(names), "one data-place element per board place"
            for name, (label, classes) in items.items():
                assert name in label, f"{name}: its aria-label {label!r} does not name it"
                assert ("highlight" in classes) == (names[name] == board[0])
                assert ("last" in classes) == (names[name] in variant.move_places(move))
            after = state.copy()
            after.play(move)
            changed = _svg_places(drawing.render_svg(after))
            assert any(
                changed[variant.place_name(place)][0] != items[variant.place_name(place)][0]
                for place in variant.move_places(move)
            ) or not variant.move_places(move), "the labels do not say what the move changed"

    def test_observation_planes(self, variant: Game) -> None:
        declared = self.plugin.observation
        if declared is None:
            pytest.skip(f"{variant.title} declares no observation planes")
        names = declared.names(variant)
        shape = tuple(declared.shape(variant))
        assert len(names) == shape[0] == len(set(names))
        assert set(declared.unbounded) <= set(names)
        bounded = [i for i, name in enumerate(names) if name not in declared.unbounded]
        seen = set()
        for state in sample_states(variant):
            planes = declared.planes(state)
            assert planes.shape == shape and planes.dtype == np.float32
            assert np.isfinite(planes).all() and (planes >= 0).all()
            assert (planes[bounded] <= 1).all()
            seen.add(planes.tobytes())
        assert len(seen) > 1, "the planes are the same in every position"

    # --- search, solver, adapters ----------------------------------------------------------

    def test_results_read_as_the_game_judges(self, variant: Game) -> None:
        """A game of wins and losses (``Judging.outcome_only``) ends ±1 or 0, and its results
        read without points where people read them: "Black wins", never "wins by 1 point".
        Records keep the result's notation (``B+1``: docs/engine.md)."""
        from agon.cli.play_commands import result_sentence
        from agon.study.values import Value, describe
        from agon.web.views import result_headline

        only = self.plugin.judging.outcome_only
        for final in sample_games(variant):
            if not final.is_over:
                continue
            margin = final.margin
            said = [
                result_sentence(final), result_headline(variant.name, str(final.result)),
                describe(variant, Value(margin, True)),
            ]
            if only:
                assert margin in (-1, 0, 1), f"a win or a loss, yet a margin of {margin}"
                assert not any(re.search(r"\bby\b|\bpoints?\b", text) for text in said), said
            elif margin:
                assert all(" by " in text for text in said), said

    def test_forced_moves_are_played_by_every_agent_and_the_solver(self, variant: Game) -> None:
        """Positions with a single legal move (a pass alone, a variant that forces every move):
        every agent plays it, and the solver names it the best move."""
        forced = forced_states(variant)
        if not forced:  # (tic-tac-toe 2×2 with a line of two is over before one comes)
            pytest.skip(f"no position with a single legal move in {FORCED_GAMES} random games")
        solver = Solver(variant, table_bits=SOLVER_TABLE_BITS)
        for state in forced:
            only = state.legal_moves()[0]
            for spec in AGENT_SPECS:
                move = make_agent(spec, variant, seed=0).choose(state)
                assert move == only, f"{spec} chose {move}, not the only legal move {only}"
            with contextlib.suppress(TooLarge):
                Negamax().margin(state)  # (the solver is asked only where it is quick)
                assert solver.solve(state).best_moves == [only]

    def test_agents_choose_legal_moves(self, variant: Game) -> None:
        for spec in AGENT_SPECS:
            agent = make_agent(spec, variant, seed=0)
            for state in ongoing_states(variant, 3):
                before = snapshot(state)
                move = agent.choose(state)
                assert move in state.legal_moves(), f"{spec} chose an illegal move {move}"
                assert snapshot(state) == before, f"{spec} changed the position"
            finished = random_game(variant, random.Random(0))
            if finished.is_over:
                with pytest.raises(AgonError):
                    agent.choose(finished)

    def test_the_solver_agrees_with_a_plain_negamax(self, variant: Game) -> None:
        """The solver's value and best moves, where a plain negamax can check them."""
        cases = solver_cases(variant)
        if not cases:
            pytest.skip("no position small enough for the plain negamax")
        solver = Solver(variant, table_bits=SOLVER_TABLE_BITS)
        for state, after in cases:
            solution = solver.solve(state)
            mover = 1 if state.to_move is Player.BLACK else -1
            expected = mover * max(mover * value for value in after.values())
            where = " ".join(variant.format_move(m) for m in state.history) or "the start"
            assert solution.result_margin == expected, f"value after {where}"
            best = [move for move, value in after.items() if value == expected]
            assert solution.best_moves == best, f"best moves after {where}"

    def test_openspiel_plays_the_game(self, variant: Game) -> None:
        pyspiel = pytest.importorskip("pyspiel")
        if self.plugin.observation is None:
            pytest.skip(f"{variant.title} declares no observation planes")
        from agon.adapters import openspiel, outcome

        openspiel.register_games()  # (a game registered since the adapter was imported)
        default = pyspiel.load_game(openspiel.PREFIX + self.game_name)
        assert default.agon_game == self.plugin.make()
        game = openspiel.load(variant)
        assert game.agon_game == variant
        assert game.num_distinct_actions() == variant.num_actions
        for final in sample_games(variant):
            state = game.new_initial_state()
            for reference, move in zip(replayed(final), [*final.history, None], strict=True):
                assert str(state) == reference.position()
                assert state.is_terminal() == reference.is_over
                if not reference.is_over:
                    assert state.current_player() == reference.to_move
                    assert state.legal_actions() == reference.legal_moves()
                if move is not None:
                    assert state.action_to_string(move) == variant.format_move(move)
                    state.apply_action(move)
            black = outcome(final)
            assert state.returns() == [black, -black]
        pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)

    def test_pettingzoo_api_test_passes(self, variant: Game) -> None:
        api = pytest.importorskip("pettingzoo.test")
        if self.plugin.observation is None:
            pytest.skip(f"{variant.title} declares no observation planes")
        from agon.adapters import pettingzoo

        with warnings.catch_warnings():
            # advice that does not fit board games: agent names other than "player_N", and
            # dict observations (what PettingZoo's own classic games give)
            warnings.simplefilter("ignore", UserWarning)
            api.api_test(pettingzoo.env(variant), num_cycles=50)


def _future(state: State) -> tuple[Any, ...]:
    """What the rules say of a state and the keys of the states after its moves."""
    after = []
    for move in state.legal_moves():
        state.play(move)
        after.append(state.key())
        state.undo()
    return state.to_move, state.end_reason, state.margin, after


def _svg_places(svg: str) -> dict[str, tuple[str, set[str]]]:
    """Each ``data-place`` element of an SVG board: its aria-label and its classes."""
    root = ElementTree.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.find("{http://www.w3.org/2000/svg}style") is not None, "no <style> of its own"
    found: dict[str, tuple[str, set[str]]] = {}
    for element in root.iter():
        name = element.get("data-place")
        if name is None:
            continue
        assert name not in found, f"two elements for place {name}"
        label = element.get("aria-label")
        assert label, f"place {name} has no aria-label"
        found[name] = (label, set(element.get("class", "").split()))
    return found


@contextlib.contextmanager
def registered(added: GamePlugin[Any, Any] | None) -> Iterator[None]:
    """``added`` registered (:func:`agon.games.register`) while the block runs, unless it is
    None or already the registry's: then nothing changes."""
    if added is None or plugins().get(added.name) is added:
        yield
        return
    register(added)
    try:
        yield
    finally:
        unregister(added.name)


def suite(game: str | GamePlugin[Any, Any]) -> type:
    """The conformance tests of the game called ``game``, as a pytest class: bind it to a
    name that starts with ``Test`` in a test module (``TestTicTacToe = suite("tictactoe")``).
    ``game`` may be a plugin that no entry point names (a game under development, a test's
    own): the class registers it around its own tests alone, so other tests never see it."""
    added = game if isinstance(game, GamePlugin) else None
    with registered(added):
        found = plugin(game.name if isinstance(game, GamePlugin) else game)
    title = "".join(part.capitalize() for part in re.split(r"[^0-9A-Za-z]+", found.name))
    return type(
        f"TestConformance{title}", (_Conformance,),
        {"game_name": found.name, "added": added,
         "__doc__": f"{found.title} passes the conformance suite."},
    )


__all__ = ["Negamax", "TooLarge", "random_game", "registered", "suite", "variants"]
