"""Move notation of both games: what is read, what is refused, and format/parse round trips."""

from __future__ import annotations

import pytest

from agon.core.errors import NotationError
from agon.games import make_game
from agon.games.alak import Alak
from agon.games.alternator import Alternator


def alternator(width: int = 8, height: int = 8) -> Alternator:
    game = make_game("alternator", {"width": width, "height": height})
    assert isinstance(game, Alternator)
    return game


def alak(size: int = 11, rules: str = "baljeu") -> Alak:
    game = make_game("alak", {"size": size, "rules": rules})
    assert isinstance(game, Alak)
    return game


# --- Alternator ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["d4-d5", "d4d5", "D4-D5", "D4d5", " d4 - d5 ", "d4 d5"])
def test_alternator_move_spellings(text: str) -> None:
    game = alternator()
    move = game.parse_move(text)
    assert game.move_cells(move) == (game.cell_index("d4"), game.cell_index("d5"))
    assert game.format_move(move) == "d4-d5"


@pytest.mark.parametrize("text", ["pass", "PASS", " Pass ", "p"])
def test_alternator_pass(text: str) -> None:
    game = alternator()
    assert game.parse_move(text) == game.pass_move
    assert game.format_move(game.pass_move) == "pass"


def test_alternator_two_digit_ranks() -> None:
    game = alternator(3, 26)
    assert game.format_move(game.parse_move("c25c26")) == "c25-c26"
    assert game.format_move(game.parse_move("b10-a10")) == "b10-a10"


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "not a move"),
        ("d4", "not a move"),
        ("d4-", "not a move"),
        ("4d-5d", "not a move"),
        ("d4-d5-d6", "not a move"),
        ("hello", "not a move"),
        ("d4-e5", "not orthogonally adjacent"),
        ("d4-d6", "not orthogonally adjacent"),
        ("d4-d4", "not orthogonally adjacent"),
        ("i1-h1", "off the 8×8 board"),
        ("h8-h9", "off the 8×8 board"),
        ("a0-a1", "off the 8×8 board"),
    ],
)
def test_alternator_unreadable_moves(text: str, message: str) -> None:
    with pytest.raises(NotationError, match=message):
        alternator().parse_move(text)


def test_alternator_error_messages_show_the_text_and_the_expected_form() -> None:
    with pytest.raises(NotationError, match=r"'hello' is not a move: write .* like 'd4-d5'"):
        alternator().parse_move("hello")


def test_alternator_cell_names() -> None:
    game = alternator(8, 8)
    assert game.cell_index("a1") == 0
    assert game.cell_index("H8") == 63
    assert game.cell_name(9) == "b2"
    with pytest.raises(NotationError, match="not a cell name"):
        game.cell_index("a")
    with pytest.raises(NotationError, match="off the"):
        game.cell_index("z1")


@pytest.mark.parametrize("width, height", [(1, 2), (3, 2), (8, 8), (26, 26)])
def test_alternator_format_parse_round_trip_for_every_action(width: int, height: int) -> None:
    game = alternator(width, height)
    for move in range(game.num_actions):
        text = game.format_move(move)
        if move != game.pass_move and game.move_cells(move)[1] is None:
            # A stem off the board has a name for messages but is never a move.
            assert "off-board" in text
            with pytest.raises(NotationError):
                game.parse_move(text)
        else:
            assert game.parse_move(text) == move
    for move in (-1, game.num_actions):
        with pytest.raises(NotationError, match="out of range"):
            game.format_move(move)


# --- Alak ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, point", [("3", 2), ("c", 2), ("C", 2), (" 11 ", 10), ("k", 10)])
def test_alak_points_by_number_or_letter(text: str, point: int) -> None:
    game = alak(11)
    assert game.parse_move(text) == point
    assert game.format_move(point) == str(point + 1)


@pytest.mark.parametrize("rules", ["traditional", "tromp-taylor"])
def test_alak_pass_where_the_rules_have_one(rules: str) -> None:
    game = alak(5, rules)
    assert game.parse_move("pass") == game.parse_move("PASS") == game.pass_move == 5
    assert game.format_move(5) == "pass"


def test_alak_p_is_always_the_sixteenth_point_never_a_pass() -> None:
    assert alak(16, "traditional").parse_move("p") == 15
    assert alak(16, "baljeu").parse_move("P") == 15
    with pytest.raises(NotationError, match=r"off the board .*a pass is written 'pass'"):
        alak(15, "traditional").parse_move("p")


def test_alak_pass_is_refused_under_baljeu() -> None:
    game = alak(5)
    with pytest.raises(NotationError, match="no pass in the baljeu rules"):
        game.parse_move("pass")
    with pytest.raises(NotationError, match="out of range"):
        game.format_move(5)


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "not a move"),
        ("ab", "not a move"),
        ("-1", "not a move"),
        ("3.5", "not a move"),
        ("²", "not a move"),
        ("0", "off the board"),
        ("6", "off the board"),
        ("f", "off the board"),
        ("z", "off the board"),
    ],
)
def test_alak_unreadable_moves(text: str, message: str) -> None:
    with pytest.raises(NotationError, match=message):
        alak(5).parse_move(text)


def test_alak_error_message_names_the_range() -> None:
    with pytest.raises(NotationError, match=r"point number 1–5 \(or a letter\), or 'pass'"):
        alak(5, "traditional").parse_move("xy")


@pytest.mark.parametrize("rules", ["baljeu", "traditional", "tromp-taylor"])
@pytest.mark.parametrize("size", [1, 11, 26])
def test_alak_format_parse_round_trip_for_every_action(size: int, rules: str) -> None:
    game = alak(size, rules)
    for move in range(game.num_actions):
        if move == size and game.pass_move is None:
            with pytest.raises(NotationError):
                game.format_move(move)
        else:
            assert game.parse_move(game.format_move(move)) == move
    for point in range(size):  # letters a… name the same points
        assert game.parse_move(chr(ord("a") + point)) == point


def test_parse_moves_reads_a_list() -> None:
    assert alak(5).parse_moves("1, c 5") == [0, 2, 4]
    game = alternator()
    assert game.parse_moves("d4-d5 d5d6,pass") == [
        game.parse_move("d4-d5"),
        game.parse_move("d5-d6"),
        game.pass_move,
    ]
