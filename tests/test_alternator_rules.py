"""Alternator's reference rules against RULES.md and the seeds' own examples."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agon.core.errors import AgonError, IllegalMove, PositionError
from agon.core.player import Player
from agon.games import make_game
from agon.games.alternator import Alternator, AlternatorState
from strategies import alternator_variants, played_states, replay_states

SETTINGS = settings(max_examples=100, deadline=None)


def alternator(width: int = 8, height: int = 8, komi: float = 3.5) -> Alternator:
    game = make_game("alternator", {"width": width, "height": height, "komi": komi})
    assert isinstance(game, Alternator)
    return game


def played(game: Alternator, moves: str) -> AlternatorState:
    state = game.new_state()
    for text in moves.split():
        state.play_text(text)
    return state


def cell(game: Alternator, name: str) -> int:
    return game.cell_index(name)


# --- the board ---------------------------------------------------------------------------------


@pytest.mark.parametrize("width, height", [(1, 2), (2, 1), (26, 26), (26, 1), (8, 8)])
def test_board_sizes_allowed(width: int, height: int) -> None:
    game = alternator(width, height)
    assert game.new_state().legal_moves()[-1] == game.pass_move
    assert game.num_actions == 4 * width * height + 1


@pytest.mark.parametrize(
    "options",
    [
        {"width": 1, "height": 1},
        {"width": 27, "height": 8},
        {"width": 8, "height": 27},
        {"width": 0, "height": 5},
        {"size": "1x1"},
        {"size": "27x27"},
        {"size": "eight"},
        {"width": "wide"},
        {"komi": "lots"},
        {"colour": "red"},
    ],
)
def test_board_sizes_and_options_refused(options: dict[str, object]) -> None:
    with pytest.raises(AgonError):
        make_game("alternator", options)


def test_size_option_and_default() -> None:
    assert make_game("alternator", {"size": "5x3"}) == Alternator(5, 3, 3.5)
    assert make_game("alternator") == Alternator(8, 8, 3.5)
    assert make_game("alternator", {"komi": 0}).komi == 0


def test_a1_is_dark_and_black_owns_the_dark_cells() -> None:
    game = alternator()
    assert game.is_dark(cell(game, "a1"))
    assert not game.is_dark(cell(game, "b1"))
    assert not game.is_dark(cell(game, "a2"))
    assert game.is_dark(cell(game, "b2"))
    assert not game.is_dark(cell(game, "h1"))
    assert game.is_dark(cell(game, "h8"))
    assert game.owner_of_cell(cell(game, "a1")) is Player.BLACK
    assert game.owner_of_cell(cell(game, "a8")) is Player.WHITE


def test_black_moves_first_then_turns_alternate() -> None:
    game = alternator()
    state = game.new_state()
    players = [state.to_move]
    for move in (game.parse_move("d4-d5"), game.pass_move):
        state.play(move)
        players.append(state.to_move)
    assert players == [Player.BLACK, Player.WHITE, Player.BLACK]


# --- each condition of a move ---------------------------------------------------------------


def test_new_cherry_on_two_blank_cells() -> None:
    game = alternator()
    state = played(game, "d4-d5")
    assert state.is_pit(cell(game, "d4"))
    assert state.stem_target(cell(game, "d4")) == cell(game, "d5")
    assert state.size(cell(game, "d5")) == 2
    expected = {c: 1 for c in range(game.cells) if c != cell(game, "d4")}
    expected[cell(game, "d5")] = 2
    assert state.roots() == expected


def test_stem_must_reach_an_adjacent_cell_of_the_board() -> None:
    game = alternator()
    state = game.new_state()
    west_of_a1 = 4 * cell(game, "a1") + 3
    with pytest.raises(IllegalMove, match="adjacent cell of the board"):
        state.play(west_of_a1)
    assert state.illegal_reason(4 * cell(game, "h8") + 0) is not None  # north off the board
    for move in state.legal_moves()[:-1]:
        pit, root = game.move_cells(move)
        assert root is not None
        assert game.is_dark(pit) != game.is_dark(root)  # adjacent cells differ in colour


def test_a_pit_cannot_get_a_second_dot() -> None:
    state = played(alternator(), "d4-d5")
    with pytest.raises(IllegalMove, match="d4 already has a dot"):
        state.play_text("d4-d3")


def test_a_root_may_never_be_drawn_on_a_pit() -> None:
    state = played(alternator(), "d4-d5")
    with pytest.raises(IllegalMove, match="a root may never be drawn on a pit"):
        state.play_text("e4-d4")
    with pytest.raises(IllegalMove, match="a root may never be drawn on a pit"):
        state.play_text("c4-d4")


def test_a_new_pit_on_an_existing_root_moves_the_root() -> None:
    game = alternator()
    state = played(game, "d4-d5 d5-d6")
    assert state.size(cell(game, "d6")) == 3
    assert state.tree_root(cell(game, "d4")) == cell(game, "d6")
    assert state.tree_root(cell(game, "d5")) == cell(game, "d6")


def test_pit_tree_must_be_at_least_as_large_as_root_tree() -> None:
    state = played(alternator(), "d4-d5")
    with pytest.raises(IllegalMove, match="larger tree must attach to the smaller"):
        state.play_text("d6-d5")
    with pytest.raises(IllegalMove, match="size 1, smaller than the tree of size 2"):
        state.play_text("c5-d5")


def test_equal_trees_merge_either_way() -> None:
    game = alternator()
    state = played(game, "a1-a2 b1-b2")
    for move, root in (("a2-b2", "b2"), ("b2-a2", "a2")):
        merged = state.copy()
        merged.play_text(move)
        assert merged.size(cell(game, root)) == 4
        assert {merged.tree_root(cell(game, name)) for name in ("a1", "a2", "b1", "b2")} == {
            cell(game, root)
        }


def test_merging_attaches_the_larger_tree_to_the_smaller() -> None:
    game = alternator()
    state = played(game, "a1-a2 a3-a4 a2-b2 c1-c2")  # b2 size 3 (dark), c2 size 2 (light)
    assert state.size(cell(game, "b2")) == 3 and state.size(cell(game, "c2")) == 2
    with pytest.raises(IllegalMove, match="larger tree must attach to the smaller"):
        state.copy().play_text("c2-b2")
    state.play_text("b2-c2")
    assert state.size(cell(game, "c2")) == 5
    assert state.tree_root(cell(game, "a1")) == cell(game, "c2")
    assert state.tree_root(cell(game, "c1")) == cell(game, "c2")


def test_seed_example_blank_cell_cannot_attach_to_a_tree_of_size_four() -> None:
    game = alternator()
    state = played(game, "a1-a2 b1-b2 a2-b2")  # a tree of size 4 rooted at b2
    assert state.size(cell(game, "b2")) == 4
    for blank in ("c2", "b3"):
        with pytest.raises(IllegalMove, match="size 1, smaller than the tree of size 4"):
            state.copy().play_text(f"{blank}-b2")
    state.play_text("b2-c2")  # the other way round is fine: the larger attaches to the blank
    assert state.size(cell(game, "c2")) == 5


def test_out_of_range_move_numbers_are_refused() -> None:
    game = alternator(2, 2)
    state = game.new_state()
    for move in (-1, game.num_actions, 10**6):
        with pytest.raises(IllegalMove, match="no such move"):
            state.play(move)


# --- passing and the end -------------------------------------------------------------------------


def test_pass_is_always_legal_and_the_only_choice_when_no_move_exists() -> None:
    game = alternator(1, 2)
    state = game.new_state()
    assert state.legal_moves() == [game.move_between(0, 1), game.move_between(1, 0), 8]
    state.play_text("a1-a2")
    assert state.legal_moves() == [game.pass_move]
    assert not state.is_over


def test_two_passes_end_the_game() -> None:
    game = alternator()
    state = game.new_state()
    state.play(game.pass_move)
    assert not state.is_over and state.to_move is Player.WHITE
    state.play(game.pass_move)
    assert state.is_over
    assert state.end_reason == "both players passed"
    assert state.to_move is None
    assert state.legal_moves() == []
    with pytest.raises(IllegalMove, match="game is over"):
        state.play_text("d4-d5")
    with pytest.raises(IllegalMove, match="game is over"):
        state.play(game.pass_move)


def test_a_move_between_passes_resets_the_count() -> None:
    game = alternator()
    state = game.new_state()
    state.play(game.pass_move)
    state.play_text("d4-d5")
    state.play(game.pass_move)
    assert not state.is_over
    state.play(game.pass_move)
    assert state.is_over


# --- score and result ----------------------------------------------------------------------------


def test_score_counts_root_sizes_by_colour_plus_komi() -> None:
    game = alternator(komi=3.5)
    state = game.new_state()
    assert (state.score().black, state.score().white) == (32, 35.5)
    state.play_text("d4-d5")  # d4 dark becomes a pit, d5 light gets size 2
    assert (state.score().black, state.score().white) == (31, 36.5)
    state.play_text("d5-e5")  # e5 dark: the tree changes owner
    assert (state.score().black, state.score().white) == (33, 34.5)
    assert state.margin == -1.5
    assert state.result is None  # only a finished game has a result


@pytest.mark.parametrize(
    "width, height, komi, moves, result",
    [
        (3, 1, 0.5, "b1-a1", "B+2.5"),  # a1 size 2 + c1 against 0 + 0.5
        (2, 1, 0.5, "", "W+0.5"),
        (2, 2, 0.0, "", "draw"),
        (8, 8, 2.0, "d4-d5 d5-e5 e5-f5", "W+6"),  # f5 light, size 4: 30 against 34 + 2
        (1, 2, 3.5, "a1-a2", "W+5.5"),
        (1, 2, 0.0, "a2-a1", "B+2"),
    ],
)
def test_result_strings(width: int, height: int, komi: float, moves: str, result: str) -> None:
    game = alternator(width, height, komi)
    state = played(game, moves)
    state.play(game.pass_move)
    state.play(game.pass_move)
    assert state.result == result
    assert state.winner is {"B": Player.BLACK, "W": Player.WHITE, "d": None}[result[0]]


# --- invariants over random games -------------------------------------------------------------


def tree_sizes_by_following_stems(state: AlternatorState) -> dict[int, int]:
    """Each root's cell count, found by walking every stem to its root (no loops allowed)."""
    game = state.game
    counts = dict.fromkeys(state.roots(), 0)
    for start in range(game.cells):
        current, steps = start, 0
        while state.is_pit(current):
            target = state.stem_target(current)
            assert target is not None, f"stem of {game.cell_name(current)} leaves the board"
            current, steps = target, steps + 1
            assert steps <= game.cells, "stems go round in a loop"
        counts[current] += 1
    return counts


@SETTINGS
@given(played_states(alternator_variants(max_side=6), max_plies=40, to_the_end=True))
def test_trees_are_consistent_at_every_ply(final: AlternatorState) -> None:
    game = final.game
    placements = 0
    snapshots = replay_states(final)
    for before, after in itertools.pairwise(snapshots):
        move = after.history[-1]
        roots = after.roots()
        assert sum(roots.values()) == game.cells
        assert tree_sizes_by_following_stems(after) == roots
        score = after.score()
        assert score.black + score.white - game.komi == game.cells
        if move != game.pass_move:
            placements += 1
            pit, root = game.move_cells(move)
            assert root is not None
            assert before.size(pit) >= before.size(root) > 0
            # The pit's tree now has its root on the other colour: its owner alternates.
            assert after.tree_root(pit) == root
            assert game.is_dark(root) != game.is_dark(pit)
            assert after.size(root) == before.size(pit) + before.size(root)
    pits = sum(final.is_pit(c) for c in range(game.cells))
    assert pits == placements <= game.cells - 1


@SETTINGS
@given(played_states(alternator_variants(max_side=4), max_plies=40, to_the_end=True))
def test_a_game_has_at_most_cells_minus_one_placements(final: AlternatorState) -> None:
    game = final.game
    placements = [move for move in final.history if move != game.pass_move]
    assert len(placements) <= game.cells - 1
    assert len(set(placements)) == len(placements)


@SETTINGS
@given(played_states(alternator_variants(max_side=6), max_plies=40, to_the_end=True))
def test_undo_and_position_text_restore_the_state(final: AlternatorState) -> None:
    game = final.game
    state = final.copy()
    texts = [s.position() for s in replay_states(final)]
    for snapshot in replay_states(final):
        reread = game.parse_position(snapshot.position())
        assert reread.position() == snapshot.position()
        assert reread.legal_moves() == snapshot.legal_moves()
        assert reread.key() == snapshot.key()
        assert reread.end_reason == snapshot.end_reason
        assert reread.score() == snapshot.score()
    for text in reversed(texts[:-1]):
        state.undo()
        assert state.position() == text
    with pytest.raises(IllegalMove, match="no move to undo"):
        state.undo()


def test_position_text_of_a_known_position() -> None:
    game = alternator(3, 2)
    state = played(game, "a1-a2 b2-c2")
    assert state.position() == "2 > 2 / ^ 1 1 : b"
    state.play(game.pass_move)
    assert state.position() == "2 > 2 / ^ 1 1 : w pass"
    state.play(game.pass_move)
    assert state.position() == "2 > 2 / ^ 1 1 : b pass pass"
    # Black: c1 only; White: a2 (2) + b1 + c2 (2) + komi 3.5.
    assert game.parse_position(state.position()).result == state.result == "W+7.5"


@pytest.mark.parametrize(
    "text, problem",
    [
        ("1 1 / 1 1", "side to move"),
        ("1 1 / 1 1 : x", "'b' or 'w'"),
        ("1 1 / 1 1 : b pass pass pass", "unexpected"),
        ("1 1 1 / 1 1 : b", "2 wide"),
        ("1 1 : b", "1 ranks, the board 2"),
        ("1 1 / 1 0 : b", "neither a tree size nor a pit"),
        ("> < / 1 1 : b", "loop"),
        ("^ 1 / 1 1 : b", "points off the board"),
        ("v 1 / 1 1 : b", "marked size 1"),
        ("v 1 / 3 1 : b", "marked size 3"),
    ],
)
def test_impossible_position_texts_are_refused(text: str, problem: str) -> None:
    with pytest.raises(PositionError, match=problem):
        alternator(2, 2).parse_position(text)


# --- symmetries ---------------------------------------------------------------------------------

CellMap = Callable[[Alternator, int, int], tuple[int, int]]


def half_turn(game: Alternator, file: int, rank: int) -> tuple[int, int]:
    return game.width - 1 - file, game.height - 1 - rank


def diagonal(game: Alternator, file: int, rank: int) -> tuple[int, int]:
    return rank, file


def anti_diagonal(game: Alternator, file: int, rank: int) -> tuple[int, int]:
    return game.height - 1 - rank, game.width - 1 - file


def left_right(game: Alternator, file: int, rank: int) -> tuple[int, int]:
    return game.width - 1 - file, rank


def map_cell(game: Alternator, symmetry: CellMap, index: int) -> int:
    file, rank = symmetry(game, index % game.width, index // game.width)
    return rank * game.width + file


def map_move(game: Alternator, symmetry: CellMap, move: int) -> int:
    if move == game.pass_move:
        return move
    pit, root = game.move_cells(move)
    assert root is not None
    return game.move_between(map_cell(game, symmetry, pit), map_cell(game, symmetry, root))


def transformed(state: AlternatorState, symmetry: CellMap) -> AlternatorState:
    game = state.game
    cells = [0] * game.cells
    for index, value in enumerate(state.cells):
        target = state.stem_target(index)
        if target is None:
            cells[map_cell(game, symmetry, index)] = value
        else:
            move = map_move(game, symmetry, game.move_between(index, target))
            cells[move // 4] = -1 - move % 4
    return AlternatorState(game, tuple(cells), state.player, state.passes)


@SETTINGS
@given(
    played_states(alternator_variants(max_side=4, square=True), max_plies=20, to_the_end=True),
    st.sampled_from([half_turn, diagonal, anti_diagonal, left_right]),
)
def test_symmetries_map_legal_moves_to_legal_moves(
    final: AlternatorState, symmetry: CellMap
) -> None:
    game = final.game
    keeps_colours = all(
        game.is_dark(map_cell(game, symmetry, c)) == game.is_dark(c) for c in range(game.cells)
    )
    for state in replay_states(final):
        image = transformed(state, symmetry)
        assert sorted(map_move(game, symmetry, m) for m in state.legal_moves()) == (
            image.legal_moves()
        )
        raw = state.score().black, state.score().white - game.komi
        image_raw = image.score().black, image.score().white - game.komi
        assert image_raw == (raw if keeps_colours else raw[::-1])


def test_half_turn_keeps_colours_on_even_boards_and_mirror_swaps_them() -> None:
    game = alternator(8, 8)
    for index in range(game.cells):
        assert game.is_dark(map_cell(game, half_turn, index)) == game.is_dark(index)
        assert game.is_dark(map_cell(game, diagonal, index)) == game.is_dark(index)
        assert game.is_dark(map_cell(game, left_right, index)) != game.is_dark(index)
