"""Alak's fast twin against the reference rules, move by move, in all three rule sets."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Hashable

import numpy as np
import pytest

from agon.core.errors import AgonError
from agon.core.fast import NO_REFERENCE, Array, FastTwin
from agon.games.alak import Alak, AlakRules, AlakState
from agon.games.alak.fast import (
    BLACK_STUCK,
    BOTH_PASSED,
    HEADER,
    NOT_OVER,
    RECORD,
    S_BLACK,
    S_CAPACITY,
    S_HISTORY_LENGTH,
    S_INDEX,
    S_SIDE,
    S_WHITE,
    THIRD_REPETITION,
    WHITE_STUCK,
    _latest_occurrence,
    _occurrences,
    fast_twin,
)
from agon.games.alak.rules import STONES
from agon.games.alternator import Alternator

SIZES = (1, 2, 3, 5, 7, 9, 11)
# Games per size: many on small boards, where they are cheap and end often.
BALJEU_GAMES = {1: 4, 2: 12, 3: 70, 5: 120, 7: 80, 9: 25, 11: 20}
PASSING_GAMES = {1: 6, 2: 20, 3: 100, 5: 100, 7: 30, 9: 12, 11: 10}
KOMIS = (0.0, 0.5, 2.0, 3.5, -1.0, 0.25)
MAX_PLIES = 120
"""Random games under the rules with a pass last hundreds of plies from 9 points on (see
fast.py); longer ones are cut here, the ends being covered on the smaller boards."""
PASS_CHANCE = 0.1
"""Half of the traditional and tromp-taylor games pass at random too, not only when forced."""


def variants() -> list[tuple[Alak, int]]:
    """Every rule set on every size, with the number of random games to play in it."""
    plan = []
    for size in SIZES:
        for edge in (True, False):
            plan.append((Alak(size, AlakRules.BALJEU, edge), BALJEU_GAMES[size]))
        for index, rules in enumerate((AlakRules.TRADITIONAL, AlakRules.TROMP_TAYLOR)):
            komi = KOMIS[(size + 3 * index) % len(KOMIS)]
            plan.append((Alak(size, rules, True, komi), PASSING_GAMES[size]))
    return plan


def position_key(state: AlakState) -> Hashable:
    """What ``key`` must tell apart: the present position as the rule set reads it."""
    now, rules = state.current, state.game.rules
    return (
        now.board,
        now.player,
        now.captured if rules is AlakRules.BALJEU else None,
        None if rules is AlakRules.BALJEU else now.passes,
        now.prisoners if rules is AlakRules.TRADITIONAL else None,
        now.ko_board if rules is AlakRules.TRADITIONAL and now.ko_board != now.board else None,
    )


def history_of(state: AlakState) -> Hashable:
    """What ``history_key`` must tell apart: the boards seen (a set), or under traditional
    rules the positions seen with their counts."""
    tokens = list(state.key()[1])
    if state.game.rules is AlakRules.TRADITIONAL:
        tokens.append(f"{state.board}:{STONES[state.current.player]}")
        return frozenset(Counter(tokens).items())
    return frozenset([*tokens, state.board])


class OneToOne:
    """Checks that a mapping seen piecewise is one-to-one (a key per position, and back)."""

    def __init__(self) -> None:
        self.forward: dict[Hashable, int] = {}
        self.backward: dict[int, Hashable] = {}

    def check(self, value: Hashable, code: int) -> None:
        assert self.forward.setdefault(value, code) == code, value
        assert self.backward.setdefault(code, value) == value, value


def assert_same(twin: FastTwin, array: Array, reference: AlakState) -> None:
    """Every question the contract answers gives the reference's answer."""
    params = twin.params
    assert twin.legal_list(array) == reference.legal_moves()
    assert twin.position(array) == reference.position()
    to_move = twin.to_move(params, array)
    assert to_move == (-1 if reference.to_move is None else int(reference.to_move))
    code = twin.end_code(params, array)
    assert (twin.end_reasons[code] if code else None) == reference.end_reason
    assert twin.margin(params, array) == reference.margin
    assert np.isfinite(twin.evaluate(params, array))


def assert_same_arrays(played: Array, converted: Array) -> None:
    """Arrays built by playing and by conversion agree on all they use (not on capacity)."""
    np.testing.assert_array_equal(played[:S_CAPACITY], converted[:S_CAPACITY])
    used = HEADER + RECORD * int(converted[S_HISTORY_LENGTH])
    np.testing.assert_array_equal(played[HEADER:used], converted[HEADER:used])


def random_move(moves: list[int], pass_move: int | None, rng: random.Random, chance: float) -> int:
    placements = [m for m in moves if m != pass_move]
    if not placements or (pass_move is not None and rng.random() < chance):
        assert pass_move in moves
        return pass_move
    return rng.choice(placements)


def play_random_games(game: Alak, games: int, seed: str) -> set[int]:
    """Random games compared ply by ply with the reference; returns the end codes reached."""
    twin = fast_twin(game)
    params, pass_move = twin.params, game.pass_move
    keys, history_keys = OneToOne(), OneToOne()
    ends = set()
    for index in range(games):
        rng = random.Random(f"{seed}-{index}")
        chance = PASS_CHANCE if index % 2 else 0.0
        reference, array = game.new_state(), twin.new_state()
        while True:
            assert_same(twin, array, reference)
            keys.check(position_key(reference), twin.key(params, array))
            history_keys.check(history_of(reference), twin.history_key(params, array))
            if len(reference.history) % 9 == 4:
                assert_same_arrays(array, twin.from_reference(reference))
            moves = reference.legal_moves()
            if not moves:
                ends.add(twin.end_code(params, array))
                break
            if len(reference.history) >= MAX_PLIES:
                break
            move = random_move(moves, pass_move, rng, chance)
            before = array.copy()
            twin.play(params, array, move)
            twin.undo(params, array)
            np.testing.assert_array_equal(array, before)
            assert twin.key(params, array) == twin.key(params, before)
            twin.play(params, array, move)
            reference.play(move)
    return ends


@pytest.mark.slow
@pytest.mark.parametrize("rules", list(AlakRules), ids=str)
def test_random_games_agree_with_the_reference(rules: AlakRules) -> None:
    plan = [(game, games) for game, games in variants() if game.rules is rules]
    ends: set[int] = set()
    for game, games in plan:
        ends |= play_random_games(game, games, game.variant_id)
    expected = {
        AlakRules.BALJEU: {BLACK_STUCK, WHITE_STUCK},
        AlakRules.TRADITIONAL: {BOTH_PASSED, THIRD_REPETITION},
        AlakRules.TROMP_TAYLOR: {BOTH_PASSED},
    }
    assert ends == expected[rules]


def test_the_plan_plays_enough_games() -> None:
    assert sum(games for _, games in variants()) >= 1200


def follow_random_moves(reference: AlakState, plies: int, seed: str) -> None:
    """Convert a reference state, then play on in both, comparing at every ply."""
    twin = fast_twin(reference.game)
    array = twin.from_reference(reference)
    rng = random.Random(seed)
    for _ in range(plies):
        assert_same(twin, array, reference)
        assert_same_arrays(array, twin.from_reference(reference))
        moves = reference.legal_moves()
        if not moves:
            break
        move = random_move(moves, reference.game.pass_move, rng, PASS_CHANCE)
        twin.play(twin.params, array, move)
        reference.play(move)


def test_published_examples_of_baljeu() -> None:
    game = Alak(7, AlakRules.BALJEU)
    twin = fast_twin(game)
    # x may capture at b or at e, and may not play g, just captured
    array = twin.from_reference(game.parse_position("o.xo.o. x captured=7"))
    assert twin.legal_list(array) == [1, 4]
    # o at c captures four stones; after o at g instead, x must play c and wins 5-2
    array = twin.from_reference(game.parse_position("xx.xxo. o"))
    twin.play(twin.params, array, 2)
    assert twin.position(array) == "..o..o. x captured=1,2,4,5 prisoners=0,4 seen=xx.xxo."
    array = twin.from_reference(game.parse_position("xx.xxo. o"))
    twin.play(twin.params, array, 6)
    assert twin.legal_list(array) == [2]
    twin.play(twin.params, array, 2)
    assert twin.end_code(twin.params, array) == WHITE_STUCK
    assert twin.margin(twin.params, array) == 3.0


@pytest.mark.parametrize(
    ("game", "text", "legal"),
    [
        (Alak(7), "o.xo.o. x captured=7 seen=xx.xx..,o.xooo.", [1, 4]),
        (Alak(7, edge_capture=False), "o.xo.o. x captured=7 prisoners=3,1", [1, 4]),
        (
            Alak(4, AlakRules.TRADITIONAL),
            ".x.x o captured=3 prisoners=1,0 ko=.xo. seen=....:x,.x..:o,.xo.:x",
            [4],
        ),
        (
            Alak(4, AlakRules.TRADITIONAL, komi_points=0.5),
            "x.o. x passes=1 ko=x.o. seen=x.o.:x,x.o.:o,x.o.:x",
            [],
        ),
        (Alak(3, AlakRules.TROMP_TAYLOR, komi_points=1.0), "x.. o captured=3 seen=...,.o.", [2, 3]),
        (Alak(3, AlakRules.TROMP_TAYLOR), "x.. o passes=1 prisoners=2,0 seen=...,x..", [1, 2, 3]),
    ],
    ids=["baljeu", "baljeu-noedge", "ko", "third-repetition", "superko", "passed"],
)
def test_positions_read_from_text(game: Alak, text: str, legal: list[int]) -> None:
    reference = game.parse_position(text)
    twin = fast_twin(game)
    array = twin.from_reference(reference)
    assert twin.position(array) == reference.position()
    assert twin.legal_list(array) == legal
    with pytest.raises(ValueError, match="no move to undo"):
        twin.undo(twin.params, array)
    follow_random_moves(reference, 40, text)


@pytest.mark.parametrize("rules", list(AlakRules), ids=str)
def test_loaded_histories_from_random_games(rules: AlakRules) -> None:
    """Positions written mid-game and read back (so with a seen= history) play on alike."""
    for size in (3, 5, 7):
        game = Alak(size, rules, komi_points=0.0 if rules is AlakRules.BALJEU else 1.5)
        for index in range(12):
            rng = random.Random(f"{game.variant_id}-{index}")
            reference = game.new_state()
            for _ in range(rng.randrange(1, 3 * size)):
                moves = reference.legal_moves()
                if not moves:
                    break
                reference.play(random_move(moves, game.pass_move, rng, PASS_CHANCE))
            loaded = game.parse_position(reference.position())
            follow_random_moves(loaded, 30, f"{game.variant_id}-{index}-loaded")


def _history_from(game: Alak, array: Array, start: int) -> str:
    """The array's position text with its history cut to the records from ``start`` on, in
    the array's order (a position text lists its seen boards sorted)."""
    size, length = game.size, int(array[S_HISTORY_LENGTH])
    tokens = []
    for index in range(start, length):
        base = HEADER + RECORD * index
        board = "".join(
            STONES[0] if array[base] >> p & 1 else STONES[1] if array[base + 1] >> p & 1 else "."
            for p in range(size)
        )
        side = f":{STONES[int(array[base + 2])]}" if game.rules is AlakRules.TRADITIONAL else ""
        tokens.append(board + side)
    fields = [f for f in fast_twin(game).position(array).split() if not f.startswith("seen=")]
    return " ".join([*fields, *(["seen=" + ",".join(tokens)] if tokens else [])])


@pytest.mark.parametrize(
    ("rules", "edge"),
    [
        (AlakRules.BALJEU, True),
        (AlakRules.BALJEU, False),
        (AlakRules.TRADITIONAL, True),
        (AlakRules.TROMP_TAYLOR, True),
    ],
    ids=["baljeu", "baljeu-noedge", "traditional", "tromp-taylor"],
)
def test_history_reference_names_the_earliest_record_that_matters(
    rules: AlakRules, edge: bool
) -> None:
    """Cutting the history before the reference changes nothing the rules allow now (moves,
    end); cutting the referenced record too changes something; with no reference, the whole
    history can go. Checked on the reference rules, with random games long enough to repeat."""
    references = 0
    for size in (3, 4, 5, 6):
        game = Alak(size, rules, edge, komi_points=0.0)
        twin = fast_twin(game)
        for index in range(40):
            rng = random.Random(f"reference-{game.variant_id}-{index}")
            state = game.new_state()
            # (baljeu games end after about 2N plies; the others pass and fight kos)
            for _ in range(rng.randrange(1, (2 if rules is AlakRules.BALJEU else 12) * size)):
                if not state.legal_moves():
                    break
                state.play(random_move(state.legal_moves(), game.pass_move, rng, PASS_CHANCE))
            array = twin.from_reference(state)
            placements = [m for m in state.legal_moves() if m != game.pass_move]
            if rules is AlakRules.BALJEU and placements and index % 2:
                # random baljeu games seldom repeat: load one of the boards a placement makes
                state.play(rng.choice(placements))
                made = state.position().split()[0]
                state.undo()
                fields = _history_from(game, array, 0).split()
                seen = [t for f in fields if f.startswith("seen=") for t in f[5:].split(",")]
                seen.insert(rng.randrange(len(seen) + 1), made)
                kept = [f for f in fields if not f.startswith("seen=")]
                state = game.parse_position(" ".join([*kept, "seen=" + ",".join(seen)]))
                array = twin.from_reference(state)
            text, length = twin.position(array), int(array[S_HISTORY_LENGTH])
            found = twin.history_reference(twin.params, array)

            def allowed(
                start: int, array: Array = array, game: Alak = game
            ) -> tuple[list[int], str | None]:
                cut = game.parse_position(_history_from(game, array, start))
                return cut.legal_moves(), cut.end_reason

            now = (state.legal_moves(), state.end_reason)
            assert allowed(0) == now
            if found == NO_REFERENCE:
                assert allowed(length) == now, text
                continue
            references += 1
            assert 0 <= found < length
            assert allowed(found) == now, text
            assert allowed(found + 1) != now, text
    assert references >= 10


def test_moves_played_before_conversion_can_be_undone() -> None:
    game = Alak(6, AlakRules.TRADITIONAL, komi_points=0.5)
    reference = game.parse_position("x..o.. o prisoners=1,0 seen=......:x,x.....:o,x..o..:x")
    rng = random.Random(7)
    for _ in range(8):
        reference.play(random_move(reference.legal_moves(), game.pass_move, rng, PASS_CHANCE))
    twin = fast_twin(game)
    array = twin.from_reference(reference)
    while reference.history:
        reference.undo()
        twin.undo(twin.params, array)
        assert_same(twin, array, reference)
        assert_same_arrays(array, twin.from_reference(reference))
    with pytest.raises(ValueError, match="no move to undo"):
        twin.undo(twin.params, array)


def test_keys_of_transposed_moves() -> None:
    game = Alak(7, AlakRules.TROMP_TAYLOR)
    twin = fast_twin(game)
    first, second = twin.new_state(), twin.new_state()
    for move in (0, 4, 2):
        twin.play(twin.params, first, move)
    for move in (2, 4, 0):
        twin.play(twin.params, second, move)
    assert twin.key(twin.params, first) == twin.key(twin.params, second)
    # the boards seen on the way differ, and superko reads them
    assert twin.history_key(twin.params, first) != twin.history_key(twin.params, second)
    twin.play(twin.params, first, 7)
    assert twin.key(twin.params, first) != twin.key(twin.params, second)


def _scanned_occurrences(array: Array, black: int, white: int, side: int | None) -> list[int]:
    """The history records with this board (and side, unless None), found by a plain scan."""
    return [
        index
        for index in range(int(array[S_HISTORY_LENGTH]))
        if (array[HEADER + RECORD * index + S_BLACK], array[HEADER + RECORD * index + S_WHITE])
        == (black, white)
        and (side is None or array[HEADER + RECORD * index + S_SIDE] == side)
    ]


def _index_agrees_with_a_scan(game: Alak, array: Array, rng: random.Random) -> int:
    """Check the index's answers against a scan, for the boards one placement away (mostly
    never seen) and for some boards of the history (seen, some many times); how many of them
    the history holds."""
    black, white = int(array[S_BLACK]), int(array[S_WHITE])
    positions = [
        (black | 1 << point, white & ~(1 << point), int(array[S_SIDE]))
        for point in range(game.size)
    ]
    for index in rng.sample(range(int(array[S_HISTORY_LENGTH])), 10):
        base = HEADER + RECORD * index
        positions.append(tuple(int(array[base + field]) for field in (S_BLACK, S_WHITE, S_SIDE)))
    found = 0
    for board_black, board_white, side in positions:
        if game.rules is AlakRules.TRADITIONAL:
            seen = _scanned_occurrences(array, board_black, board_white, side)
            present = array.copy()  # the index counts the present position's repeats
            present[S_BLACK], present[S_WHITE], present[S_SIDE] = board_black, board_white, side
            assert _occurrences(present) == (len(seen) + 1, seen[0] if seen else -1)
        else:
            seen = _scanned_occurrences(array, board_black, board_white, None)
            assert _latest_occurrence(array, board_black, board_white) == (seen[-1] if seen else -1)
        found += len(seen) > 1
    return found


@pytest.mark.parametrize("rules", list(AlakRules), ids=str)
def test_the_index_finds_what_a_scan_of_the_history_finds(rules: AlakRules) -> None:
    """The index of the history's boards (hash lists, fast.py) answers as a scan would, for
    boards seen once, many times or never, after a long loaded history and over the moves
    played on it; and taking every move back leaves it as it was loaded."""
    game = Alak(6, rules)
    twin, moves = fast_twin(game), np.empty(game.num_actions, dtype=np.int64)
    found = 0
    for seed in range(6):
        rng = random.Random(f"index-{rules}-{seed}")
        seen = ["".join(rng.choice("xo.") for _ in range(game.size)) for _ in range(300)]
        if rules is AlakRules.TRADITIONAL:  # with repeats, and sides to move
            seen = [f"{board}:{rng.choice('xo')}" for board in seen[:150] * 2]
        text = f"...... x seen={','.join(board for board in seen if board[:6] != '......')}"
        array = twin.from_reference(game.parse_position(text))
        loaded_index = array[int(array[S_INDEX]) :].copy()
        found += _index_agrees_with_a_scan(game, array, rng)
        played = 0
        while played < 300 and (count := twin.legal_moves(twin.params, array, moves)):
            twin.play(
                twin.params, array, random_move(list(moves[:count]), game.pass_move, rng, 0.2)
            )
            played += 1
            found += _index_agrees_with_a_scan(game, array, rng)
        for _ in range(played):
            twin.undo(twin.params, array)
        np.testing.assert_array_equal(array[int(array[S_INDEX]) :], loaded_index)
    assert found > 100  # boards seen more than once


def test_a_full_array_refuses_to_play() -> None:
    twin = fast_twin(Alak(5))
    array = twin.new_state()
    array[S_CAPACITY] = array[S_HISTORY_LENGTH]
    with pytest.raises(ValueError, match="full"):
        twin.play(twin.params, array, 0)


def test_one_twin_per_variant_and_only_its_states() -> None:
    assert fast_twin(Alak(5, AlakRules.TRADITIONAL)) is fast_twin(Alak(5, "traditional"))
    twin = fast_twin(Alak(5))
    with pytest.raises(AgonError):
        twin.from_reference(Alak(6).new_state())
    with pytest.raises(AgonError):
        twin.from_reference(Alternator(3, 3).new_state())
    assert set(twin.end_reasons) == {BLACK_STUCK, WHITE_STUCK}
    assert NOT_OVER not in fast_twin(Alak(5, AlakRules.TROMP_TAYLOR)).end_reasons


def swap_colours(text: str) -> str:
    return text.translate(str.maketrans("xo", "ox"))


@pytest.mark.parametrize(
    ("game", "text"),
    [
        (Alak(9), "x.oo.xx.o o"),
        (Alak(9), ".xo.xx.o. x captured=1"),
        (Alak(9, edge_capture=False), "oo.x..x.x x"),
        (Alak(9, AlakRules.TRADITIONAL), "x.o.oxx.. o prisoners=3,1"),
        (Alak(9, AlakRules.TROMP_TAYLOR), "..xo.x.o. x"),
    ],
)
def test_evaluation_is_colour_blind(game: Alak, text: str) -> None:
    """Swapping the colours (and who moves) negates the estimate, without komi."""
    twin = fast_twin(game)
    swapped = swap_colours(text.split(" prisoners=")[0])
    if " prisoners=" in text:
        black, white = text.split(" prisoners=")[1].split(",")
        swapped += f" prisoners={white},{black}"
    value = twin.evaluate(twin.params, twin.from_reference(game.parse_position(text)))
    mirror = twin.evaluate(twin.params, twin.from_reference(game.parse_position(swapped)))
    assert value == -mirror != 0.0


def test_evaluation_sees_material_and_threats() -> None:
    game = Alak(9, AlakRules.TROMP_TAYLOR, komi_points=0.5)
    twin = fast_twin(game)

    def value(text: str) -> float:
        return float(twin.evaluate(twin.params, twin.from_reference(game.parse_position(text))))

    # Black's two-stone chain at the edge is in atari: better for White to move than Black
    assert value("xx.o..... o") < value("xx.o..... x")
    # more stones and territory, better estimate
    assert value(".x.x.o.o. o") > value(".x...o.o. o")
    # the side to move gets the odd point of an empty board of 9
    assert value("......... x") == 1 - 0.5
    # a capture that superko forbids is no threat
    assert value("x.oooox.. x seen=xx....x..") < value("x.oooox.. x")
    # after a pass the side to move can end the game: never worse for it than the count now
    position = "x.ox...xx x passes=1"
    array = twin.from_reference(game.parse_position(position))
    assert value(position) == twin.margin(twin.params, array) > value("x.ox...xx x")
    position = "xo.x.x.ox o passes=1"
    array = twin.from_reference(game.parse_position(position))
    assert value(position) == twin.margin(twin.params, array) < value("xo.x.x.ox o")


def test_move_order_prefers_captures_then_rescues_then_placements_then_pass() -> None:
    game = Alak(9, AlakRules.TRADITIONAL)
    twin = fast_twin(game)
    array = twin.from_reference(game.parse_position("oxx.....o x"))
    priority = {move: twin.move_order(twin.params, array, move) for move in twin.legal_list(array)}
    # 7 captures the o at 8; 3 saves x's chain in atari; 5 does neither; 9 passes
    assert priority[7] > priority[3] > priority[5] > priority[9]


def test_a_pass_under_tromp_taylor_leaves_no_ko_board_behind() -> None:
    """Regression (reference rules): a pass set a ko board outside the traditional rules, so
    a position read back from its own text had another key."""
    game = Alak(3, AlakRules.TROMP_TAYLOR)
    reference = game.new_state()
    reference.play_all([0, 3])
    assert game.parse_position(reference.position()).key() == reference.key()
