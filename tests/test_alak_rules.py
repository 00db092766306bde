"""Alak's reference rules, all three rule sets, against RULES.md and its published examples."""

from __future__ import annotations

import itertools
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agon.core.errors import AgonError, IllegalMove, PositionError
from agon.core.game import Score
from agon.core.player import Player
from agon.games import make_game
from agon.games.alak import Alak, AlakState
from agon.games.alak.rules import REASON_PASSES, REASON_REPETITION, AlakRules
from strategies import alak_variants, played_states, replay_states

SETTINGS = settings(max_examples=100, deadline=None)
BALJEU, TRADITIONAL, TROMP_TAYLOR = AlakRules


def alak(size: int, rules: str = "baljeu", **options: object) -> Alak:
    game = make_game("alak", {"size": size, "rules": rules, **options})
    assert isinstance(game, Alak)
    return game


def at(game: Alak, text: str) -> AlakState:
    return game.parse_position(text)


def played(game: Alak, moves: str) -> AlakState:
    state = game.new_state()
    for text in moves.split():
        state.play_text(text)
    return state


def after(state: AlakState, moves: str) -> AlakState:
    """A copy of ``state`` with these moves played on it."""
    following = state.copy()
    for text in moves.split():
        following.play_text(text)
    return following


# --- variants ------------------------------------------------------------------------------


def test_default_variant_is_eleven_points_baljeu_with_edge_capture() -> None:
    game = make_game("alak")
    assert game == Alak(11, AlakRules.BALJEU, True, 0.0)
    assert game.new_state().to_move is Player.BLACK


@pytest.mark.parametrize(
    "options",
    [
        {"size": 0},
        {"size": "big"},
        {"rules": "japanese"},
        {"rules": "baljeu", "komi": 0.5},
        {"rules": "traditional", "edge_capture": False},
        {"edge_capture": "yes"},
        {"colour": "red"},
    ],
)
def test_bad_options_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(AgonError):
        make_game("alak", options)


# --- baljeu ------------------------------------------------------------------------------------


def test_published_example_capture_at_b_or_e_but_not_at_g() -> None:
    game = alak(7)
    state = at(game, "o.xo.o. x captured=7")
    assert state.legal_moves() == [game.parse_move("b"), game.parse_move("e")]
    with pytest.raises(IllegalMove, match="where one was just captured"):
        after(state, "g")
    assert after(state, "b").board == ".xxo.o."
    assert after(state, "e").board == "o.x.xo."


def test_published_example_o_captures_four_or_x_wins_five_to_two() -> None:
    game = alak(7)
    state = at(game, "xx.xxo. o")
    capture = after(state, "c")
    assert capture.board == "..o..o."
    assert capture.just_captured == {0, 1, 3, 4}
    assert capture.prisoners == (0, 4)

    state.play_text("g")
    assert state.board == "xx.xxoo"  # White's chain has no liberty, and stays
    assert state.legal_moves() == [game.parse_move("c")]
    state.play_text("c")
    assert state.board == "xxxxxoo"  # a chain already without liberty is not captured
    assert state.is_over
    assert state.end_reason == "White has no legal placement"
    assert (state.score().black, state.score().white) == (5, 2)
    assert state.margin == 3
    assert state.result == "B+3"
    assert state.winner is Player.BLACK


def test_baljeu_has_no_pass() -> None:
    game = alak(5)
    assert game.pass_move is None
    state = game.new_state()
    assert game.size not in state.legal_moves()
    with pytest.raises(IllegalMove, match="no pass in the baljeu rules"):
        state.play(game.size)


def test_own_stones_are_never_removed() -> None:
    state = at(alak(5), "xo.x. o")
    state.play_text("c")  # fills the last liberty of White's own chain
    assert state.board == "xoox."
    state.play_text("e")
    assert state.board == "xooxx"


def test_only_chains_touching_the_placed_stone_are_captured() -> None:
    state = at(alak(6), "xoox.. x")
    state.play_text("e")
    assert state.board == "xooxx."
    assert state.just_captured == frozenset()


def test_just_captured_points_are_forbidden_for_one_move_only() -> None:
    game = alak(5)
    state = at(game, "o.... x")
    state.play_text("b")
    assert state.board == ".x..."
    assert state.just_captured == {0}
    assert state.legal_moves() == [2, 3, 4]
    with pytest.raises(IllegalMove, match=r"just captured \(point 1\)"):
        after(state, "a")
    state.play_text("e")
    assert 0 in state.legal_moves()  # the capturer may play there
    state.play_text("c")
    assert state.board == ".xx.o"
    assert 0 in state.legal_moves()  # and so may the loser, one move later


def test_no_repetition_of_an_earlier_arrangement() -> None:
    game = alak(7)
    state = played(game, "1 5 3 4 6 2 7 5")
    assert state.board == ".ox.o.." and state.to_move is Player.BLACK
    # Playing 1 would capture at 2 and recreate x.x.o.., the board after the fourth move.
    assert "x.x.o.." in state.position()
    with pytest.raises(IllegalMove, match="no repetition"):
        after(state, "1")
    fresh = at(game, ".ox.o.. x captured=6,7")  # the same board with no history
    assert after(fresh, "1").board == "x.x.o.."


def test_no_repetition_reads_earlier_boards_from_the_position_text() -> None:
    state = at(alak(3), "... x seen=x..")
    assert state.legal_moves() == [1, 2]


@pytest.mark.parametrize("edge_capture, board", [(True, ".x..."), (False, "ox...")])
def test_edge_capture_option(edge_capture: bool, board: str) -> None:
    state = at(alak(5, edge_capture=edge_capture), "o.... x")
    state.play_text("b")
    assert state.board == board


@pytest.mark.parametrize("edge_capture", [True, False])
def test_capture_between_two_stones_does_not_depend_on_the_edge_option(
    edge_capture: bool,
) -> None:
    state = at(alak(5, edge_capture=edge_capture), "xoo.. x")
    state.play_text("d")
    assert state.board == "x..x."


def test_game_ends_when_every_empty_point_is_forbidden() -> None:
    state = played(alak(2), "a b")
    assert state.board == ".o"
    assert state.is_over
    assert state.end_reason == "Black has no legal placement"
    assert state.to_move is None
    assert state.legal_moves() == []
    assert state.result == "W+1"
    with pytest.raises(IllegalMove, match="game is over"):
        state.play(0)


def test_equal_stone_counts_are_a_draw() -> None:
    state = played(alak(2, edge_capture=False), "a b")
    assert state.board == "xo"
    assert state.end_reason == "Black has no legal placement"
    assert state.margin == 0
    assert state.result == "draw"
    assert state.winner is None


# --- traditional ---------------------------------------------------------------------------


def test_traditional_pass_and_capture_with_prisoners() -> None:
    game = alak(4, "traditional")
    state = at(game, "xo.. x")
    assert state.legal_moves()[-1] == game.pass_move
    state.play_text("c")
    assert state.board == "x.x."
    assert state.prisoners == (1, 0)
    # Stones 2 + territory b and d + 1 prisoner; White nothing.
    assert (state.score().black, state.score().white) == (5, 0)
    assert 1 in state.legal_moves()  # no just-captured rule here: b captures a in return


@pytest.mark.parametrize("rules", ["traditional", "tromp-taylor"])
def test_no_suicide_unless_capturing(rules: str) -> None:
    game = alak(5, rules)
    with pytest.raises(IllegalMove, match="suicide"):
        after(at(game, "ox.xo x"), "c")
    with pytest.raises(IllegalMove, match="suicide"):
        after(at(game, ".x... o"), "a")  # the edge is not a liberty
    capture = after(at(game, "ox.xo o"), "c")  # captures first, so it is not suicide
    assert capture.board == "o.o.o"
    assert capture.prisoners == (0, 2)


def test_baljeu_allows_what_the_others_call_suicide() -> None:
    assert after(at(alak(5), "ox.xo x"), "c").board == "oxxxo"
    assert after(at(alak(5), ".x... o"), "a").board == "ox..."


# A single stone taken in a ko: ".oox.xx....." with o to play at 5 takes the x at 4.
KO_BOARD = ".oox.xx..... o"


def test_ko_forbids_retaking_a_single_stone_at_once() -> None:
    state = after(at(alak(12, "traditional"), KO_BOARD), "5")
    assert state.board == ".oo.oxx....."
    with pytest.raises(IllegalMove, match="ko: playing 4 would recreate the board"):
        after(state, "4")
    later = after(state, "11 9 4")  # one exchange elsewhere, then the retake is fine
    assert later.board == ".oox.xx.o.x."


def test_traditional_ko_after_a_pass_does_not_forbid_anything() -> None:
    state = after(at(alak(12, "traditional"), KO_BOARD), "5 pass pass")
    assert state.is_over  # two passes end the game; the ko board is the current one
    state = after(at(alak(12, "traditional"), KO_BOARD), "5 pass 12")
    assert after(state, "4").board == ".oox.xx....o"


def test_snapback_of_two_stones_is_allowed() -> None:
    state = after(at(alak(8, "traditional"), ".oxx.xx. o"), "5")
    assert state.board == ".o..oxx."
    state.play_text("4")  # takes back the capturing stone at once: not a ko
    assert state.board == ".o.x.xx."


def test_two_passes_end_a_traditional_game() -> None:
    game = alak(5, "traditional", komi=0.5)
    state = played(game, "pass 1 pass")  # White's move between the passes resets the count
    assert not state.is_over
    state.play(game.size)
    assert state.end_reason == "both players passed"
    assert state.to_move is None
    assert state.legal_moves() == []
    assert state.result == "W+5.5"  # o . . . . : the stone, four points of territory, komi


def test_third_repetition_ends_as_a_draw() -> None:
    # 4 points: x2 o4 x1, o3 takes two stones, x2 takes two back, and round again.
    state = played(alak(4, "traditional"), "2 4 1 3 2 4 1 3")
    assert not state.is_over
    state.play_text("2")
    assert state.board == ".x.." and state.to_move is None
    assert state.end_reason == "the same position occurred for the third time (a draw)"
    assert state.score().margin != 0  # the points would favour Black...
    assert state.margin == 0  # ...but the rules declare a draw
    assert state.result == "draw"
    assert state.winner is None


def test_third_repetition_counts_positions_listed_in_the_text() -> None:
    game = alak(3, "traditional")
    state = at(game, "... x seen=x..:o,x..:o")
    state.play_text("1")
    assert state.end_reason == "the same position occurred for the third time (a draw)"
    assert not after(at(game, "... x seen=x..:o,x..:x"), "1").is_over  # seen twice: goes on


def test_traditional_score_is_territory_stones_and_prisoners_plus_komi() -> None:
    game = alak(5, "traditional", komi=0.5)
    assert game.new_state().score() == Score(0.0, 0.5)  # an empty board is nobody's
    state = at(game, "x..o. x prisoners=2,1")
    # Black: 1 stone + 2 prisoners; White: 1 stone + e + 1 prisoner + 0.5. b-c is nobody's.
    assert (state.score().black, state.score().white) == (3, 3.5)
    state = at(game, "x.x.o x")
    assert (state.score().black, state.score().white) == (3, 1.5)


def test_traditional_komi_is_zero_by_default() -> None:
    assert alak(5, "traditional").komi == 0
    assert alak(5, "tromp-taylor").komi == 0


# --- tromp-taylor -------------------------------------------------------------------------------


def test_positional_superko_forbids_the_ko_retake() -> None:
    state = after(at(alak(12, "tromp-taylor"), KO_BOARD), "5")
    with pytest.raises(IllegalMove, match="positional superko"):
        after(state, "4")


def test_positional_superko_looks_back_over_the_whole_game() -> None:
    game = alak(5, "tromp-taylor")
    assert after(at(game, "o.x.. x seen=.....,..x.."), "2").board == ".xx.."
    # Not only the board before the opponent's last move: any earlier one.
    state = at(game, "o.x.. x seen=.....,.xx..,..x..,o.x.o")
    with pytest.raises(IllegalMove, match="positional superko"):
        after(state, "2")


def test_tromp_taylor_area_scoring_ignores_prisoners() -> None:
    state = at(alak(4, "tromp-taylor", komi=0.5), "x.x. o prisoners=1,0")
    assert (state.score().black, state.score().white) == (4, 0.5)
    state = after(at(alak(5, "tromp-taylor", komi=0.5), "x..o. x"), "pass pass")
    assert state.result == "W+1.5"  # 1 against 1 + e + 0.5; b-c borders both colours


# --- invariants over random games --------------------------------------------------------------


def stone_chains(board: str) -> list[tuple[int, int]]:
    """(first, last) point of every chain."""
    return [(m.start(), m.end() - 1) for m in re.finditer(r"x+|o+", board)]


def breathes(board: str, first: int, last: int, edge_encloses: bool) -> bool:
    if not edge_encloses and (first == 0 or last == len(board) - 1):
        return True
    return (first > 0 and board[first - 1] == ".") or (
        last < len(board) - 1 and board[last + 1] == "."
    )


def breathless(board: str, edge_encloses: bool) -> set[tuple[int, int, str]]:
    return {
        (first, last, board[first])
        for first, last in stone_chains(board)
        if not breathes(board, first, last, edge_encloses)
    }


def edge_encloses(game: Alak) -> bool:
    return game.edge_capture or game.rules is not BALJEU


def placement(board: str, point: int, stone: str, edge: bool) -> tuple[str, set[int]]:
    """The board after placing ``stone`` at ``point``, and the points it captures."""
    placed = board[:point] + stone + board[point + 1 :]
    captures: set[int] = set()
    for first, last, chain_stone in breathless(placed, edge):
        if chain_stone != stone and point in (first - 1, last + 1):
            captures.update(range(first, last + 1))
    return "".join("." if i in captures else s for i, s in enumerate(placed)), captures


def check_placement(before: AlakState, now: AlakState, point: int) -> None:
    """What a placement at ``point`` must have done, derived from RULES.md alone."""
    game = before.game
    player = before.current.player
    mover = "xo"[player]
    edge = edge_encloses(game)
    assert before.board[point] == "."
    board, captures = placement(before.board, point, mover, edge)
    assert now.board == board
    assert now.just_captured == captures
    assert now.prisoners[player] - before.prisoners[player] == len(captures)
    assert now.prisoners[1 - player] == before.prisoners[1 - player]
    for first, last, stone in breathless(now.board, edge):
        assert game.rules is BALJEU, f"chain {first + 1}-{last + 1} has no liberty"
        own_fill = stone == mover and first <= point <= last
        assert own_fill or (first, last, stone) in breathless(before.board, edge)
    if game.rules is BALJEU:
        assert point not in before.just_captured


def baljeu_has_a_placement(state: AlakState, earlier_boards: list[str]) -> bool:
    stone = "xo"[state.current.player]
    return any(
        state.board[point] == "."
        and point not in state.just_captured
        and placement(state.board, point, stone, edge_encloses(state.game))[0]
        not in earlier_boards
        for point in range(state.game.size)
    )


@SETTINGS
@given(played_states(alak_variants(max_size=9), max_plies=60, to_the_end=True))
def test_every_ply_follows_the_rules(final: AlakState) -> None:
    game = final.game
    snapshots = replay_states(final)
    boards = [snapshots[0].board]
    positions = [(snapshots[0].board, snapshots[0].current.player)]
    for ply, (before, now) in enumerate(itertools.pairwise(snapshots), start=1):
        move = final.history[ply - 1]
        assert before.legal_moves() == [
            m for m in range(game.num_actions) if before.illegal_reason(m) is None
        ]
        if move == game.pass_move:
            assert now.board == before.board
            assert now.current.passes == before.current.passes + 1
        else:
            check_placement(before, now, move)
            if game.rules is not TRADITIONAL:
                assert now.board not in boards  # no repetition / positional superko
            elif ply >= 2:
                assert now.board != boards[ply - 2]  # ko
        boards.append(now.board)
        positions.append((now.board, now.current.player))
        occurrences = positions.count(positions[-1])
        if game.rules is BALJEU:
            assert now.is_over != baljeu_has_a_placement(now, boards)
        elif game.rules is TROMP_TAYLOR:
            assert now.is_over == (now.current.passes == 2)
        elif occurrences == 3:  # traditional: over, as a draw unless two passes ended it
            assert now.is_over
            assert now.end_reason == REASON_PASSES or now.margin == 0
        else:
            assert occurrences < 3
            assert now.is_over == (now.current.passes == 2)
            assert now.end_reason != REASON_REPETITION


@SETTINGS
@given(played_states(alak_variants(max_size=9), max_plies=60, to_the_end=True))
def test_undo_and_position_text_restore_the_state(final: AlakState) -> None:
    game = final.game
    snapshots = replay_states(final)
    for snapshot in snapshots:
        reread = game.parse_position(snapshot.position())
        assert reread.position() == snapshot.position()
        assert reread.legal_moves() == snapshot.legal_moves()
        assert reread.key() == snapshot.key()
        assert reread.end_reason == snapshot.end_reason
        assert reread.margin == snapshot.margin
        assert reread.score() == snapshot.score()
        for move in reread.legal_moves():  # the history in the text still decides legality
            assert after(reread, game.format_move(move)).position() == after(
                snapshot, game.format_move(move)
            ).position()
    state = final.copy()
    for snapshot in reversed(snapshots[:-1]):
        state.undo()
        assert state.position() == snapshot.position()
        assert state.key() == snapshot.key()
        # (what the rules keep counted as moves are played and taken back agrees too)
        assert state.legal_moves() == snapshot.legal_moves()
        assert state.end_reason == snapshot.end_reason


@settings(max_examples=30, deadline=None)
@given(alak_variants(), st.randoms(use_true_random=False))
def test_every_random_game_ends_within_the_bound(game: Alak, rng: random.Random) -> None:
    boards = 3**game.size
    # Every placement makes a new board (baljeu, tromp-taylor; at most one pass between two
    # placements), or each (board, side to move) occurs at most three times (traditional).
    bound = {BALJEU: boards, TROMP_TAYLOR: 2 * boards + 1, TRADITIONAL: 6 * boards}[game.rules]
    state = game.new_state()
    while not state.is_over:
        assert len(state.history) < bound
        state.play(rng.choice(state.legal_moves()))
    assert state.result is not None


# --- position texts --------------------------------------------------------------------------


def test_position_text_carries_every_field() -> None:
    game = alak(5, "traditional")
    text = "x.x.. o captured=2 passes=1 prisoners=1,0 ko=xox.. seen=.....:x,x....:o"
    state = at(game, text)
    assert state.position() == text
    assert state.just_captured == {1}
    assert state.prisoners == (1, 0)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("x.x..", "side to move"),
        ("x.x.. z", "'x' or 'o'"),
        ("x.x. x", "has 4 points"),
        ("x.y.. x", "use x, o and ."),
        ("x.x.. x colour=red", "unknown field"),
        ("x.x.. x captured=1", "not empty"),
        ("x.x.. x captured=9", "points 1–5"),
        ("x.x.. x passes=3", "passes="),
        ("x.x.. x prisoners=1", "prisoners="),
        ("x.x.. x ko=xx", "the ko board"),
        ("x.x.. x seen=.....", "traditional rules list 'board:x'"),
    ],
)
def test_bad_position_texts_are_refused(text: str, problem: str) -> None:
    with pytest.raises(PositionError, match=problem):
        alak(5, "traditional").parse_position(text)


def test_finished_games_round_trip_through_the_position_text() -> None:
    for rules in ("traditional", "tromp-taylor"):
        state = played(alak(3, rules), "1 pass pass")
        reread = state.game.parse_position(state.position())
        assert reread.is_over and reread.result == state.result == "B+3"
