"""Tic-tac-toe passes Agon's conformance suite, and plays, ends and solves as the rules say."""

from __future__ import annotations

import random

import pytest

from agon.conformance import suite
from agon.core.errors import AgonError, PositionError
from agon.core.player import Player
from agon.games import make_game
from agon.search.bench import verify_game
from agon.solve.solver import Solver
from agon_tictactoe import TicTacToe
from agon_tictactoe.fast import fast_twin
from agon_tictactoe.results import CATALOGUE, PUBLISHED

TestTicTacToe = suite("tictactoe")


def game(width: int = 3, height: int = 3, line: int = 3) -> TicTacToe:
    made = make_game("tictactoe", {"width": width, "height": height, "line": line})
    assert isinstance(made, TicTacToe)
    return made


def played(moves: str, variant: TicTacToe | None = None) -> tuple[str | None, str | None]:
    """The end reason and result after ``moves`` from the start."""
    state = (variant or game()).new_state()
    for text in moves.split():
        state.play_text(text)
    return state.end_reason, state.result


# --- the rules ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("moves", "reason", "result"),
    [
        ("a1 a2 b1 b2 c1", "Black completed a line of 3", "B+1"),  # a rank
        ("a1 b1 a2 b2 c3 b3", "White completed a line of 3", "W+1"),  # a file
        ("a1 b1 b2 c1 c3", "Black completed a line of 3", "B+1"),  # a diagonal
        ("a3 a1 b2 b1 c1", "Black completed a line of 3", "B+1"),  # the other diagonal
        ("b2 a1 c1 a3 a2 c2 b1 b3 c3", "the board is full", "draw"),  # nobody has a line
    ],
)
def test_a_line_wins_and_a_full_board_is_a_draw(moves: str, reason: str, result: str) -> None:
    assert played(moves) == (reason, result)


def test_the_game_goes_on_until_a_line_or_a_full_board() -> None:
    state = game().new_state()
    state.play_all([0, 4, 8])  # a1 b2 c3: two in a row is not yet a line
    assert state.to_move is Player.WHITE and not state.is_over
    assert state.score().margin == 0 and state.legal_moves() == [1, 2, 3, 5, 6, 7]


def test_the_winner_scores_one_point() -> None:
    state = game(2, 2, 2).new_state()
    state.play_all([0, 3, 1])  # a1 b2 b1
    assert (state.score().black, state.score().white) == (1, 0)
    assert state.winner is Player.BLACK and state.legal_moves() == []


def test_lines_of_other_lengths() -> None:
    assert played("a1", game(1, 1, 1)) == ("Black completed a line of 1", "B+1")
    assert played("a1 a2 b1 b2 c1 c2", game(4, 3, 4)) == (None, None)
    assert played("a1 a2 b1 b2 c1 c2 d1", game(4, 3, 4))[1] == "B+1"
    # a line longer than the board cannot be made
    assert played("a1 b1 a2 b2", game(2, 2, 3)) == ("the board is full", "draw")


def test_illegal_moves_say_why() -> None:
    state = game().new_state()
    state.play_text("c3")
    assert state.illegal_reason(8) == "c3 is occupied"
    assert state.illegal_reason(9) == "there is no such cell"
    state.play_all([0, 7, 3, 6])  # a1 b3 a2 a3: Black has a3 b3 c3
    assert state.is_over and state.illegal_reason(4) == "the game is over"


# --- notation, positions, options ----------------------------------------------------------------


def test_cells_are_named_like_chess_squares() -> None:
    variant = game(4, 3)
    assert [variant.format_move(cell) for cell in (0, 3, 4, 11)] == ["a1", "d1", "a2", "d3"]
    assert variant.parse_move(" B2 ") == 5 and variant.move_places(5) == (5,)
    for bad in ("e1", "a4", "pass", "b", ""):
        with pytest.raises(AgonError):
            variant.parse_move(bad)


def test_positions_read_ranks_from_the_top() -> None:
    state = game().parse_position("x../.o./... x")
    assert state.board == "....o.x.." and state.to_move is Player.BLACK
    assert state.position() == "x../.o./... x"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x../.o. x", "2 ranks"),
        ("x../.o../... x", "4 cells"),
        ("x../.q./... x", "'q'"),
        ("xx./.../... o", "not 2 against 0"),
        ("x../.o./... o", "Black's turn"),
        ("xxx/ooo/... x", "both sides"),
        ("xxx/oo./o.. x", "has a line, yet"),
        ("x../.o./...", "side to move"),
    ],
)
def test_impossible_positions_are_refused(text: str, message: str) -> None:
    with pytest.raises(PositionError, match=message):
        game().parse_position(text)


def test_options_are_checked() -> None:
    assert game(4, 2, 2).options() == {"width": 4, "height": 2, "line": 2}
    for bad in ({"width": 6}, {"height": 0}, {"line": 7}, {"depth": 3}):
        with pytest.raises(AgonError):
            make_game("tictactoe", bad)


# --- solved values (m,n,k-games: Uiterwijk and van den Herik, 2000) ---------------------------


def value(variant: TicTacToe, moves: str = "") -> float:
    state = variant.new_state()
    for text in moves.split():
        state.play_text(text)
    return Solver(variant).solve(state).value


def test_three_by_three_is_a_draw() -> None:
    solution = Solver(game()).solve(game().new_state())
    assert solution.value == 0 and len(solution.best_moves) == 9


def test_the_answers_that_keep_the_draw() -> None:
    """The rules text: White answers a corner with the centre, the centre with a corner."""
    variant = game()
    corner = Solver(variant).solve(variant.parse_position(".../.../x.. o"))
    assert corner.value == 0 and [variant.format_move(m) for m in corner.best_moves] == ["b2"]
    centre = Solver(variant).solve(variant.parse_position(".../.x./... o"))
    assert [variant.format_move(m) for m in centre.best_moves] == ["a1", "c1", "a3", "c3"]


def test_two_by_two_with_two_in_a_row_is_a_first_player_win() -> None:
    assert value(game(2, 2, 2)) == 1


def test_four_by_three_with_three_in_a_row_is_a_first_player_win() -> None:
    assert value(game(4, 3, 3)) == 1
    assert value(game(3, 4, 3)) == 1


# --- the fast twin and the catalogue ------------------------------------------------------------


@pytest.mark.parametrize(
    ("width", "height", "line"), [(3, 3, 3), (5, 5, 4), (4, 2, 2), (1, 5, 3), (1, 1, 1)]
)
def test_the_fast_twin_plays_as_the_rules_say(width: int, height: int, line: int) -> None:
    """Random games on the twin and the rules in lock-step, as ``agon bench --verify``
    plays them (the conformance suite plays the plugin's examples)."""
    twin = fast_twin(game(width, height, line))
    rng = random.Random(f"{width}x{height}-{line}")
    for _ in range(30):
        assert verify_game(twin, rng) is None


def test_the_twin_undoes_to_the_very_same_array() -> None:
    twin = fast_twin(game())
    state = twin.new_state()
    start = state.copy()
    for move in (0, 3, 4, 6, 8):  # a1 a2 b2 a3 c3: Black's diagonal
        twin.play(twin.params, state, move)
    assert twin.end_reasons[twin.end_code(twin.params, state)] == "Black completed a line of 3"
    assert twin.to_move(twin.params, state) == -1 and twin.margin(twin.params, state) == 1.0
    assert twin.legal_list(state) == []
    for _ in range(5):
        twin.undo(twin.params, state)
    assert (state == start).all()


def test_the_catalogue_agrees_with_the_published_values() -> None:
    keys = [job.key for job in CATALOGUE.jobs()]
    assert keys[0] == "tictactoe-1x1-1" and "tictactoe-4x4-4" in keys
    assert len(keys) == len(set(keys)) == 45
    for (width, height, line), known in PUBLISHED.items():
        if width * height <= 12:  # (4 × 4 with four takes seconds)
            assert value(game(width, height, line)) == known
    solved = {"status": "solved", "value": 0, "best_moves": ["b2"], "nodes": 9, "seconds": 0.5}
    section = "\n".join(CATALOGUE.sections({"tictactoe-3x3-3": solved}))
    assert "| 3×3 | 3 | draw | draw | b2 | 9 | 0.50 |" in section
    assert "| 4×4 | 4 | not attempted | draw |" in section
