"""Alternator's fast twin against the reference rules, move by move."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agon.core.errors import AgonError
from agon.games.alak import Alak
from agon.games.alternator import Alternator, AlternatorState
from agon.games.alternator.fast import TERMS, _full_key, fast_twin

SEED = 20240611

# (width, height, games): over 1,000 games, most of them on small boards where they are cheap.
BOARDS = [
    (1, 2, 60),
    (2, 1, 20),
    (2, 2, 150),
    (3, 3, 200),
    (2, 5, 150),
    (4, 4, 150),
    (5, 5, 100),
    (3, 7, 100),
    (1, 9, 60),
    (6, 4, 40),
    (8, 8, 12),
]

KOMIS = [0.0, 1.0, 3.5, 4.0, -2.0, 0.1, 7.25]


def random_move(moves: list[int], pass_move: int, rng: random.Random) -> int:
    """Mostly placements, sometimes a pass, so that pass sequences get tested too."""
    placements = [m for m in moves if m != pass_move]
    if not placements or rng.random() < 0.15:
        return pass_move
    return rng.choice(placements)


def assert_same(twin_state: np.ndarray, reference: AlternatorState) -> None:
    """Every question the contract answers gives the reference's answer."""
    twin = fast_twin(reference.game)
    params = twin.params
    assert twin.legal_list(twin_state) == reference.legal_moves()
    assert twin.position(twin_state) == reference.position()
    to_move = twin.to_move(params, twin_state)
    assert to_move == (-1 if reference.to_move is None else int(reference.to_move))
    code = twin.end_code(params, twin_state)
    assert (twin.end_reasons[code] if code else None) == reference.end_reason
    assert twin.margin(params, twin_state) == reference.margin
    assert twin.key(params, twin_state) == _full_key(params, twin_state)
    assert twin.history_key(params, twin_state) == 0
    value = twin.evaluate(params, twin_state)
    assert np.isfinite(value)
    if reference.is_over:
        assert value == reference.margin


def play_random_game(game: Alternator, rng: random.Random) -> None:
    twin = fast_twin(game)
    reference = game.new_state()
    state = twin.new_state()
    start = state.copy()
    assert_same(state, reference)
    keys_seen = {twin.key(twin.params, state)}
    while not reference.is_over:
        move = random_move(reference.legal_moves(), game.pass_move, rng)
        reference.play(move)
        twin.play(twin.params, state, move)
        assert_same(state, reference)
        # No position repeats in Alternator, so every key along a game is new.
        new_key = twin.key(twin.params, state)
        assert new_key not in keys_seen
        keys_seen.add(new_key)
    assert state[game.cells + 2] == len(reference.history)  # the ply count
    while reference.history:
        reference.undo()
        twin.undo(twin.params, state)
        assert twin.position(state) == reference.position()
        assert twin.key(twin.params, state) == _full_key(twin.params, state)
    assert np.array_equal(state, start)


@pytest.mark.parametrize(("width", "height", "games"), BOARDS)
def test_random_games_match_the_reference(width: int, height: int, games: int) -> None:
    rng = random.Random(f"{SEED}-{width}x{height}")
    for _ in range(games):
        play_random_game(Alternator(width, height, rng.choice(KOMIS)), rng)


def test_equal_positions_have_equal_keys_whatever_the_move_order() -> None:
    """On small boards random games meet the same position by different paths often."""
    rng = random.Random(SEED)
    for width, height in ((2, 2), (3, 2), (3, 3)):
        game = Alternator(width, height)
        twin = fast_twin(game)
        key_by_position: dict[str, int] = {}
        paths_by_position: dict[str, set[tuple[int, ...]]] = {}
        for _ in range(300):
            reference = game.new_state()
            state = twin.new_state()
            while not reference.is_over:
                move = random_move(reference.legal_moves(), game.pass_move, rng)
                reference.play(move)
                twin.play(twin.params, state, move)
                text = reference.position()
                key_by_position.setdefault(text, twin.key(twin.params, state))
                assert key_by_position[text] == twin.key(twin.params, state)
                paths_by_position.setdefault(text, set()).add(tuple(reference.history))
        transpositions = sum(len(paths) > 1 for paths in paths_by_position.values())
        assert transpositions > 10
        # Different positions, different keys.
        assert len(set(key_by_position.values())) == len(key_by_position)


def test_from_reference_of_positions_read_mid_game() -> None:
    rng = random.Random(SEED + 1)
    for width, height in ((3, 3), (4, 4), (2, 5), (8, 8), (3, 7)):
        game = Alternator(width, height, 2.0)
        twin = fast_twin(game)
        for _ in range(40):
            played = game.new_state()
            for _ in range(rng.randrange(game.cells)):
                if played.is_over:
                    break
                played.play(random_move(played.legal_moves(), game.pass_move, rng))
            loaded = game.parse_position(played.position())
            loaded_array = twin.from_reference(loaded)
            assert_same(loaded_array, loaded)
            # A loaded state with moves played on it: its history comes along and can be undone.
            for _ in range(rng.randrange(4)):
                if loaded.is_over:
                    break
                loaded.play(random_move(loaded.legal_moves(), game.pass_move, rng))
            state = twin.from_reference(loaded)
            assert_same(state, loaded)
            assert state[game.cells + 2] == len(loaded.history)
            while loaded.history:
                loaded.undo()
                twin.undo(twin.params, state)
                assert_same(state, loaded)
            assert np.array_equal(state, loaded_array)


def test_the_longest_game_fits_the_undo_stack() -> None:
    """A pass before every placement and two at the end: 2 * cells moves."""
    game = Alternator(3, 3)
    twin = fast_twin(game)
    reference = game.new_state()
    state = twin.new_state()
    while not reference.is_over:
        moves = reference.legal_moves()
        move = moves[0] if reference.passes else game.pass_move
        reference.play(move)
        twin.play(twin.params, state, move)
    assert len(reference.history) == 2 * game.cells
    assert twin.position(state) == reference.position()
    for _ in reference.history:
        twin.undo(twin.params, state)
    assert np.array_equal(state, twin.new_state())


def test_the_twin_is_built_once_per_variant() -> None:
    assert fast_twin(Alternator(4, 4, 3.5)) is fast_twin(Alternator(4, 4, 3.5))
    assert fast_twin(Alternator(4, 4, 3.5)) is not fast_twin(Alternator(4, 4, 2.5))


def test_from_reference_refuses_a_state_of_another_game() -> None:
    twin = fast_twin(Alternator(3, 3))
    with pytest.raises(AgonError):
        twin.from_reference(Alternator(4, 4).new_state())
    with pytest.raises(AgonError):
        twin.from_reference(Alak(5).new_state())


def test_evaluate_of_settled_trees_is_the_margin() -> None:
    game = Alternator(4, 1, 0.5)
    twin = fast_twin(game)
    # a1 (Black's, with b1) and d1 (White's, with c1) are not adjacent: nothing can change.
    settled = twin.from_reference(game.parse_position("2 < > 2 : b"))
    assert twin.legal_list(settled) == [game.pass_move]
    assert twin.evaluate(twin.params, settled) == twin.margin(twin.params, settled) == -0.5


def test_evaluate_favours_the_side_that_can_take_a_tree() -> None:
    game = Alternator(2, 1, 0.0)
    twin = fast_twin(game)
    # Whoever moves first attaches the other's tree to their own cell and wins 2 - 0.
    black_to_move = twin.from_reference(game.parse_position("1 1 : b"))
    white_to_move = twin.from_reference(game.parse_position("1 1 : w"))
    assert twin.evaluate(twin.params, black_to_move) > 0 > twin.evaluate(twin.params, white_to_move)


def test_the_roots_term_counts_each_root_with_a_root_beside_it_for_its_owner() -> None:
    game = Alternator(5, 1, 0.0)
    twin = fast_twin(game)
    # a1, c1 and e1 are Black's; e1 has only a pit beside it, so nothing moves onto it again.
    state = twin.from_reference(game.parse_position("1 1 2 < 1 : b"))
    terms = np.zeros(len(TERMS.names), dtype=np.float64)
    TERMS.features(twin.params, state, terms)
    assert terms[TERMS.names.index("roots")] == 2 - 1


def test_move_order_tries_captures_first_and_pass_last() -> None:
    game = Alternator(3, 1, 0.0)
    twin = fast_twin(game)
    state = twin.from_reference(game.parse_position("1 1 1 : b"))
    captures = [game.parse_move("b1-a1"), game.parse_move("b1-c1")]
    give_aways = [game.parse_move("a1-b1"), game.parse_move("c1-b1")]
    priorities = {
        move: twin.move_order(twin.params, state, move) for move in twin.legal_list(state)
    }
    assert set(priorities) == {*captures, *give_aways, game.pass_move}
    assert min(priorities[m] for m in captures) > max(priorities[m] for m in give_aways)
    assert min(priorities[m] for m in give_aways) > priorities[game.pass_move]
