"""Alak's fast twin: the rules of :mod:`agon.games.alak.rules` over int64 arrays.

The contract is :mod:`agon.core.fast`; ``tests/test_alak_fast.py`` checks it against the
reference rules move by move. A board is two bitmasks, Black's and White's stones, bit ``p``
for point ``p`` (N ≤ 40 points fit one int64), so comparing boards is exact.

``params`` (int64, read only):

====================  =================================================================
``[0]``               N, the number of points
``[1]`` … ``[5]``     the rule set's fields (:class:`~agon.games.alak.rules.RuleSet`): 1 where
                      a player may pass, 1 where suicide is allowed, 1 where a point just
                      captured is banned, the repetition rule (0 any earlier board, 1 ko),
                      the scoring (0 stones, 1 area, 2 area and prisoners)
``[6]``               1 when a board end encloses a chain, else 0
``[7]``               komi, as the bit pattern of its float64 (exact for any komi)
``[8 …]``             Zobrist keys: 2N for stones (``2*p + colour``), N for just-captured
                      points, 2N for the ko board's stones, then one each for White to move,
                      0/1/2 passes (three), "a ko board is set", the prisoners' salt, and the
                      history's salts for Black and for White to move
====================  =================================================================

``state`` (int64, mutated in place): a *position record* of eleven fields, then bookkeeping,
then the history as position records, then the index of the history's boards.

================  ========================================================================
``[0]``, ``[1]``  Black's and White's stones (bitmasks)
``[2]``           side to move: 0 Black, 1 White
``[3]``           passes just played in a row
``[4]``           points vacated by the last move's capture (bitmask)
``[5]``, ``[6]``  prisoners taken by Black and by White
``[7]``, ``[8]``  the ko board (under ko): Black's and White's stones before the last move
``[9]``           1 when a ko board is set, else 0
``[10]``          ``history_key``: the sum of a hash of every board in the history and the
                  present one, each distinct board once (where no earlier board may
                  return); of every ``board:side`` position, repeats counted (under ko); kept
                  up to date by ``play``
``[11]``          history length H: earlier positions, loaded ones included
``[12]``          how many of them were loaded (from a position text's ``seen=``): ``undo``
                  stops there
``[13]``          capacity: how many records the array holds
``[14]``          where the *index* of the history's boards starts (below)
``[15 + 11*i …]`` history record ``i`` (oldest first), in the layout of ``[0:11]``
================  ========================================================================

The *index* finds a board in the history without scanning it: the records are chained by a
hash of their board into ``BUCKETS`` lists, newest first. The index holds the head of each
list (record number + 1, 0 for none), then, per record, the next older record of its list. The
history is a stack, so ``play`` pushes a record on its list and ``undo`` pops it off again, and
``play`` then ``undo`` restores the array bit for bit. The lists are short, and their heads
stay in cache (why an index, and why this one: docs/changelog.md).

A loaded history entry knows only its board, and its side to move under ko
(``board:x``); its side is -1 otherwise and its other fields are 0. Every move pushes the
whole current record, so the history is also the undo stack: ``undo`` pops the last record
back into ``[0:11]``.

The rules bound a game only by the number of distinct boards, and random games are long where
one may pass (thousands of plies on 11 points: docs/search.md). The capacity is therefore the
history already there plus ``64*N*N + 64`` more plies (7,808 on 11 points), and ``play``
raises rather than write past it.
``state[13] - state[11]`` is the room left: a search that plays long random games on boards
of more than about 11 points must cut them short (or create a new array).

``key`` hashes what the rules read from the present position: the board and the side to move;
the just-captured points (where they are banned); the passes (where one may pass); the prisoners
(where they count) and the ko board (under ko; a ko board equal to the present board forbids
nothing and is left out). It does NOT cover the history (no-repetition, superko, third
repetition): ``history_key`` does, and a search may share a result only where both keys match.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import numpy.typing as npt
from numba import njit

from agon.core.errors import AgonError
from agon.core.evaluation import Terms, set_weights, weights_for
from agon.core.fast import NO_REFERENCE, Array, FastTwin, kernels_in, popcount
from agon.core.game import State
from agon.core.player import Player
from agon.games.alak.rules import (
    EMPTY,
    REASON_NO_PLACEMENT,
    REASON_PASSES,
    REASON_REPETITION,
    STONES,
    Alak,
    AlakPosition,
    AlakState,
    Repetition,
    RuleSet,
    Scoring,
)

ANY_EARLIER_BOARD, KO = 0, 1
REPETITION_CODES = {Repetition.ANY_EARLIER_BOARD: ANY_EARLIER_BOARD, Repetition.KO: KO}
STONES_ONLY, AREA, AREA_AND_PRISONERS = 0, 1, 2
SCORING_CODES = {
    Scoring.STONES: STONES_ONLY, Scoring.AREA: AREA, Scoring.AREA_AND_PRISONERS: AREA_AND_PRISONERS
}

P_SIZE, P_PASSING, P_SUICIDE, P_CAPTURE_BAN, P_REPETITION, P_SCORING = 0, 1, 2, 3, 4, 5
P_EDGE, P_KOMI, P_WEIGHTS = 6, 7, 8  # the evaluation's weights: one slot a term (float64 bits)

S_BLACK, S_WHITE, S_SIDE, S_PASSES, S_CAPTURED, S_PRISONERS = 0, 1, 2, 3, 4, 5
S_KO_BLACK, S_KO_WHITE, S_KO_SET, S_HISTORY_KEY = 7, 8, 9, 10
RECORD = 11
S_HISTORY_LENGTH, S_LOADED, S_CAPACITY, S_INDEX = 11, 12, 13, 14
HEADER = 15

BUCKETS = 1024
"""The index's number of lists (a power of two)."""
# odd 64-bit multipliers (the golden ratio's and one of xxHash's primes), for the index's hash
INDEX_MULTIPLIERS = (-7046029254386353131, -4417276706812531889)

NOT_OVER, BLACK_STUCK, WHITE_STUCK, BOTH_PASSED, THIRD_REPETITION = 0, 1, 2, 3, 4
"""End codes; ``BLACK_STUCK + side`` is the code of the side that has no placement."""

ZOBRIST_SEED = 0xA1A4

# What capturing a stone is worth to ``evaluate`` (docs/evaluation.md, "## Alak"): where stones
# are counted it leaves the board; where area is, its point also turns to the captor's area.
STONE_CAPTURE_VALUE = 1.0
AREA_CAPTURE_VALUE = 2.0

# The evaluation's terms and the weights set by hand (docs/evaluation.md, "## Alak")
TERM_NAMES = ("exchange", "parity")
"""the capture exchange (in points: stones, or stones and the territory they leave); the
parity of the points left to fill"""
HAND_WEIGHTS = (1.0, 1.0)
P_ZOBRIST = P_WEIGHTS + len(TERM_NAMES)


def history_margin(size: int) -> int:
    """Plies a state array can take beyond the history it was created with."""
    return 64 * size * size + 64


# --- bit helpers -----------------------------------------------------------------------------


@njit(cache=True)
def _bit(mask: int, point: int) -> bool:
    return ((mask >> point) & 1) != 0


@njit(cache=True)
def _span(start: int, end: int) -> int:
    """The bitmask of points ``start..end``."""
    return ((1 << (end - start + 1)) - 1) << start


@njit(cache=True)
def mix(value: int) -> int:
    """SplitMix64's finaliser in wrapping int64 arithmetic (shifts made logical by masking)."""
    value ^= (value >> 30) & 0x3FFFFFFFF
    value *= -4658895280553007687  # 0xbf58476d1ce4e5b9
    value ^= (value >> 27) & 0x1FFFFFFFFF
    value *= -7723592293110705685  # 0x94d049bb133111eb
    value ^= (value >> 31) & 0x1FFFFFFFF
    return value


# --- the rules -------------------------------------------------------------------------------


@njit(cache=True)
def _chain_start(stones: int, point: int) -> int:
    """The first point of the chain of ``stones`` through ``point``."""
    while point > 0 and _bit(stones, point - 1):
        point -= 1
    return point


@njit(cache=True)
def _chain_end(stones: int, point: int, n: int) -> int:
    """The last point of the chain of ``stones`` through ``point``."""
    while point < n - 1 and _bit(stones, point + 1):
        point += 1
    return point


@njit(cache=True)
def _encloses(params: Array, stones: int, beyond: int) -> bool:
    """Whether the point ``beyond`` a chain's end closes that end: one of ``stones``, or an
    edge (``beyond`` is -1 or N) where edges enclose."""
    if beyond < 0 or beyond >= params[P_SIZE]:
        return params[P_EDGE] != 0  # type: ignore[no-any-return]
    return _bit(stones, beyond)


@njit(cache=True)
def _place(params: Array, state: Array, point: int) -> tuple[int, int, int]:
    """Black's and White's stones after the mover places on empty ``point``, and the captured
    points. Only enemy chains touching the new stone are examined."""
    n = params[P_SIZE]
    side = state[S_SIDE]
    own = state[S_BLACK + side] | (1 << point)
    enemy = state[S_BLACK + 1 - side]
    captured = 0
    # a neighbouring enemy chain is closed by the new stone on one side; check its far side
    if point > 0 and _bit(enemy, point - 1):
        start = _chain_start(enemy, point - 1)
        if _encloses(params, own, start - 1):
            captured |= _span(start, point - 1)
    if point < n - 1 and _bit(enemy, point + 1):
        end = _chain_end(enemy, point + 1, n)
        if _encloses(params, own, end + 1):
            captured |= _span(point + 1, end)
    enemy &= ~captured
    if side == 0:
        return own, enemy, captured
    return enemy, own, captured


@njit(cache=True)
def _chain_has_liberty(own: int, occupied: int, point: int, n: int) -> bool:
    """Whether the chain of ``own`` through ``point`` has an empty neighbour."""
    start, end = _chain_start(own, point), _chain_end(own, point, n)
    return (start > 0 and not _bit(occupied, start - 1)) or (
        end < n - 1 and not _bit(occupied, end + 1)
    )


@njit(cache=True)
def _index_head(state: Array, black: int, white: int) -> int:
    """The offset of the head of the index's list for this board."""
    hashed = black * INDEX_MULTIPLIERS[0] + white * INDEX_MULTIPLIERS[1]
    return state[S_INDEX] + ((hashed >> 32) & (BUCKETS - 1))  # type: ignore[no-any-return]


@njit(cache=True)
def _index_link(state: Array, index: int) -> int:
    """The offset where record ``index`` keeps the next older record of its list (+ 1)."""
    return state[S_INDEX] + BUCKETS + index  # type: ignore[no-any-return]


@njit(cache=True)
def _record_head(state: Array, index: int) -> int:
    base = HEADER + RECORD * index
    return _index_head(state, state[base + S_BLACK], state[base + S_WHITE])


@njit(cache=True)
def _index_push(state: Array, index: int) -> None:
    """Put history record ``index``, the latest, at the head of its list."""
    head = _record_head(state, index)
    state[_index_link(state, index)] = state[head]
    state[head] = index + 1


@njit(cache=True)
def _index_pop(state: Array, index: int) -> None:
    """Take history record ``index``, the latest, off its list again."""
    link = _index_link(state, index)
    state[_record_head(state, index)] = state[link]
    state[link] = 0


@njit(cache=True)
def _latest_occurrence(state: Array, black: int, white: int) -> int:
    """The index of the last history record with this board, or -1."""
    entry = state[_index_head(state, black, white)]
    while entry:
        base = HEADER + RECORD * (entry - 1)
        if state[base + S_BLACK] == black and state[base + S_WHITE] == white:
            return entry - 1  # type: ignore[no-any-return]
        entry = state[_index_link(state, entry - 1)]
    return -1


@njit(cache=True)
def _occurrences(state: Array) -> tuple[int, int]:
    """How often the present board with the present side to move has occurred, now included,
    and the index of its first earlier occurrence, -1 if none (under ko)."""
    black, white, side = state[S_BLACK], state[S_WHITE], state[S_SIDE]
    count, first = 1, -1
    entry = state[_index_head(state, black, white)]
    while entry:
        base = HEADER + RECORD * (entry - 1)
        if (
            state[base + S_BLACK] == black
            and state[base + S_WHITE] == white
            and state[base + S_SIDE] == side
        ):
            count += 1
            first = entry - 1  # the list runs newest first
        entry = state[_index_link(state, entry - 1)]
    return count, first


@njit(cache=True)
def _placement_before_history(
    params: Array, state: Array, point: int
) -> tuple[bool, int, int, int]:
    """What the rules say of placing on ``point`` before they look at earlier boards (an
    empty point, not just captured where that is banned, no suicide where that is forbidden),
    and if allowed so far the board after it and the captures."""
    black, white = state[S_BLACK], state[S_WHITE]
    banned = params[P_CAPTURE_BAN] != 0 and _bit(state[S_CAPTURED], point)
    if _bit(black | white, point) or banned:
        return False, 0, 0, 0
    black, white, captured = _place(params, state, point)
    if params[P_SUICIDE] == 0 and captured == 0:
        own = black if state[S_SIDE] == 0 else white
        if not _chain_has_liberty(own, black | white, point, params[P_SIZE]):
            return False, 0, 0, 0
    return True, black, white, captured


@njit(cache=True)
def _placement(params: Array, state: Array, point: int) -> tuple[bool, int, int, int]:
    """Whether placing on ``point`` is legal, and if so the board after it and the captures."""
    allowed, black, white, captured = _placement_before_history(params, state, point)
    if not allowed:
        return False, 0, 0, 0
    if params[P_REPETITION] == KO:
        if state[S_KO_SET] and black == state[S_KO_BLACK] and white == state[S_KO_WHITE]:
            return False, 0, 0, 0
    elif _latest_occurrence(state, black, white) >= 0:
        # (a placement never recreates the present board, so the history is enough)
        return False, 0, 0, 0
    return True, black, white, captured


@njit(cache=True)
def _over_before_placements(params: Array, state: Array) -> int:
    """The end code that does not depend on the placements (passes, third repetition)."""
    if params[P_PASSING] and state[S_PASSES] >= 2:
        return BOTH_PASSED
    if params[P_REPETITION] == KO and _occurrences(state)[0] >= 3:
        return THIRD_REPETITION
    return NOT_OVER


@njit(cache=True)
def _territory(params: Array, state: Array) -> tuple[int, int]:
    """Empty points in runs bordered by one colour only (an edge borders nothing)."""
    n = params[P_SIZE]
    black, white = state[S_BLACK], state[S_WHITE]
    occupied = black | white
    black_area, white_area = 0, 0
    point = 0
    while point < n:
        if _bit(occupied, point):
            point += 1
            continue
        start = point
        while point < n and not _bit(occupied, point):
            point += 1
        left = -1 if start == 0 else (0 if _bit(black, start - 1) else 1)
        right = -1 if point == n else (0 if _bit(black, point) else 1)
        owner = right if left == -1 else (left if right == -1 or right == left else -1)
        if owner == 0:
            black_area += point - start
        elif owner == 1:
            white_area += point - start
    return black_area, white_area


@njit(cache=True)
def _position_hash(params: Array, black: int, white: int, side: int) -> int:
    """A hash of one history entry: a board, with its side to move (where positions repeat,
    under ko) or 0."""
    salt = params[P_ZOBRIST + 5 * params[P_SIZE] + 6 + side]
    return mix(black ^ mix(white ^ salt))


@njit(cache=True)
def _index_history(params: Array, state: Array) -> None:
    """Fill the index and the history key of every record and of the present position from
    the history records (an array just written from a reference state), as ``play`` would
    have, one record after another."""
    length = state[S_HISTORY_LENGTH]
    positions = params[P_REPETITION] == KO
    running = 0
    for index in range(length + 1):
        state[S_HISTORY_LENGTH] = index  # the records before this one
        base = HEADER + RECORD * index if index < length else 0
        black, white = state[base + S_BLACK], state[base + S_WHITE]
        if positions:
            running += _position_hash(params, black, white, state[base + S_SIDE])
        elif _latest_occurrence(state, black, white) < 0:
            running += _position_hash(params, black, white, 0)
        state[base + S_HISTORY_KEY] = running
        if index < length:
            _index_push(state, index)


@njit(cache=True)
def _komi(params: Array) -> float:
    return params[P_KOMI : P_KOMI + 1].view(np.float64)[0]  # type: ignore[no-any-return]


# --- kernels ---------------------------------------------------------------------------------


@njit(cache=True)
def legal_moves(params: Array, state: Array, out: Array) -> int:
    """The legal moves, sorted (the pass, number N, last); 0 when the game is over."""
    if _over_before_placements(params, state) != NOT_OVER:
        return 0
    n = params[P_SIZE]
    count = 0
    for point in range(n):
        if _placement(params, state, point)[0]:
            out[count] = point
            count += 1
    if params[P_PASSING]:
        out[count] = n
        count += 1
    return count


@njit(cache=True)
def play(params: Array, state: Array, move: int) -> None:
    """Play a legal move: push the present record onto the history, then change it."""
    length = state[S_HISTORY_LENGTH]
    if length >= state[S_CAPACITY]:
        raise ValueError("this Alak state array is full: create it again to play on")
    base = HEADER + RECORD * length
    for field in range(RECORD):
        state[base + field] = state[field]
    state[S_HISTORY_LENGTH] = length + 1
    _index_push(state, length)
    side = state[S_SIDE]
    ko = params[P_REPETITION] == KO
    if ko:
        # the board before this move, which the next placement may not recreate
        state[S_KO_BLACK], state[S_KO_WHITE], state[S_KO_SET] = state[S_BLACK], state[S_WHITE], 1
    is_pass = move == params[P_SIZE]
    if is_pass:
        state[S_PASSES] += 1
        state[S_CAPTURED] = 0
    else:
        black, white, captured = _place(params, state, move)
        state[S_BLACK], state[S_WHITE], state[S_CAPTURED] = black, white, captured
        state[S_PRISONERS + side] += popcount(captured)
        state[S_PASSES] = 0
    state[S_SIDE] = 1 - side
    # every position counts towards third repetition; only a placement makes a new board
    if ko:
        state[S_HISTORY_KEY] += _position_hash(params, state[S_BLACK], state[S_WHITE], 1 - side)
    elif not is_pass:
        state[S_HISTORY_KEY] += _position_hash(params, state[S_BLACK], state[S_WHITE], 0)


@njit(cache=True)
def undo(params: Array, state: Array) -> None:
    """Take back the last move: pop the last history record into the present one (and clear
    its slot, so that the whole array is as it was)."""
    length = state[S_HISTORY_LENGTH] - 1
    if length < state[S_LOADED]:
        raise ValueError("there is no move to undo")
    _index_pop(state, length)
    base = HEADER + RECORD * length
    for field in range(RECORD):
        state[field] = state[base + field]
        state[base + field] = 0
    state[S_HISTORY_LENGTH] = length


@njit(cache=True)
def end_code(params: Array, state: Array) -> int:
    """0 while the game goes on; else BLACK_STUCK/WHITE_STUCK (no pass: the side to move has
    no placement), BOTH_PASSED, or THIRD_REPETITION (ko)."""
    code = _over_before_placements(params, state)
    if code != NOT_OVER or params[P_PASSING]:
        return code
    for point in range(params[P_SIZE]):
        if _placement(params, state, point)[0]:
            return NOT_OVER
    return BLACK_STUCK + state[S_SIDE]  # type: ignore[no-any-return]


@njit(cache=True)
def to_move(params: Array, state: Array) -> int:
    """0 Black, 1 White, -1 when the game is over."""
    if end_code(params, state) != NOT_OVER:
        return -1
    return state[S_SIDE]  # type: ignore[no-any-return]


@njit(cache=True)
def margin(params: Array, state: Array) -> float:
    """Black's points minus White's as the rules count them now, komi included; 0 for a
    third-repetition draw."""
    scoring = params[P_SCORING]
    if _over_before_placements(params, state) == THIRD_REPETITION:
        return 0.0
    black = popcount(state[S_BLACK])
    white = popcount(state[S_WHITE])
    if scoring == STONES_ONLY:
        return float(black - white)
    black_area, white_area = _territory(params, state)
    black += black_area
    white += white_area
    if scoring == AREA_AND_PRISONERS:
        black += state[S_PRISONERS]
        white += state[S_PRISONERS + 1]
    return float(black) - (float(white) + _komi(params))


@njit(cache=True)
def key(params: Array, state: Array) -> int:
    """Zobrist hash of what the rules read from the present position (not the history)."""
    n = params[P_SIZE]
    stones = P_ZOBRIST
    captured = stones + 2 * n
    ko = captured + n
    side_key = ko + 2 * n
    passes = side_key + 1
    ko_set, prisoners = passes + 3, passes + 4
    black, white = state[S_BLACK], state[S_WHITE]
    value = 0
    for point in range(n):
        if _bit(black, point):
            value ^= params[stones + 2 * point]
        elif _bit(white, point):
            value ^= params[stones + 2 * point + 1]
    if state[S_SIDE]:
        value ^= params[side_key]
    if params[P_CAPTURE_BAN]:
        for point in range(n):
            if _bit(state[S_CAPTURED], point):
                value ^= params[captured + point]
    if params[P_PASSING]:
        value ^= params[passes + min(state[S_PASSES], 2)]
    if params[P_SCORING] == AREA_AND_PRISONERS:
        value ^= mix(params[prisoners] + (state[S_PRISONERS] << 32) + state[S_PRISONERS + 1])
    if params[P_REPETITION] == KO:
        ko_black, ko_white = state[S_KO_BLACK], state[S_KO_WHITE]
        if state[S_KO_SET] and (ko_black != black or ko_white != white):
            value ^= params[ko_set]
            for point in range(n):
                if _bit(ko_black, point):
                    value ^= params[ko + 2 * point]
                elif _bit(ko_white, point):
                    value ^= params[ko + 2 * point + 1]
    return value


@njit(cache=True)
def history_key(params: Array, state: Array) -> int:
    """A hash of the history the rules still read: the set of boards seen (where no earlier
    board may come again), the multiset of positions seen (under ko, for third repetition)."""
    return state[S_HISTORY_KEY]  # type: ignore[no-any-return]


@njit(cache=True)
def history_length(params: Array, state: Array) -> int:
    return state[S_HISTORY_LENGTH]  # type: ignore[no-any-return]


@njit(cache=True)
def history_board(params: Array, state: Array, index: int) -> int:
    """Record ``index``'s stones (the present ones at the history length), Black's in the low
    32 bits, White's in the high 32."""
    base = 0 if index == state[S_HISTORY_LENGTH] else HEADER + RECORD * index
    return state[base + S_BLACK] | (state[base + S_WHITE] << 32)  # type: ignore[no-any-return]


@njit(cache=True)
def history_reference(params: Array, state: Array) -> int:
    """The earliest history record that decides something now (see :mod:`agon.core.fast`):
    placements refused because their board was seen before, and a third repetition."""
    if _over_before_placements(params, state) == BOTH_PASSED:
        return NO_REFERENCE
    if params[P_REPETITION] == KO:
        # ko reads the ko board, part of the present position; only the third repetition
        # reads the history
        count, first = _occurrences(state)
        return first if count >= 3 else NO_REFERENCE
    reference = NO_REFERENCE
    for point in range(params[P_SIZE]):
        allowed, black, white, _ = _placement_before_history(params, state, point)
        if allowed:
            latest = _latest_occurrence(state, black, white)
            if latest >= 0:
                reference = min(reference, latest)
    return reference


@njit(cache=True)
def _terms(params: Array, state: Array) -> tuple[float, float, float]:
    """The count now and the evaluation's terms (:data:`TERM_NAMES`), from the point of view
    of the side to move; see docs/evaluation.md, "Alak"."""
    n = params[P_SIZE]
    scoring = params[P_SCORING]
    side = state[S_SIDE]
    own, enemy = state[S_BLACK + side], state[S_BLACK + 1 - side]
    occupied = own | enemy
    # the count as it would stand if the game ended now
    value = float(popcount(own) - popcount(enemy))
    territory = 0
    if scoring != STONES_ONLY:
        black_area, white_area = _territory(params, state)
        territory = black_area + white_area
        value += (black_area - white_area) * (1 - 2 * side)
        value -= _komi(params) * (1 - 2 * side)
        if scoring == AREA_AND_PRISONERS:
            value += state[S_PRISONERS + side] - state[S_PRISONERS + 1 - side]
    # chains one placement can capture: the mover's best target, the mover's two largest
    # chains in atari (the mover can save one of them, or capture and lose the largest)
    best_target, threatened, second_threatened = 0, 0, 0
    start = 0
    while start < n:
        if not _bit(occupied, start):
            start += 1
            continue
        mine = _bit(own, start)
        end = _chain_end(own if mine else enemy, start, n)
        size = end - start + 1
        left_free = start > 0 and not _bit(occupied, start - 1)
        right_free = end < n - 1 and not _bit(occupied, end + 1)
        liberty, closed_end = (start - 1, end + 1) if left_free else (end + 1, start - 1)
        start = end + 1
        # in atari: one liberty, and the other end closed (by a stone, or an enclosing edge)
        if left_free == right_free or not _encloses(params, occupied, closed_end):
            continue
        if not mine:
            # a target only if the rules let the mover play there now (ko, repetition, ...)
            if _placement(params, state, liberty)[0]:
                best_target = max(best_target, size)
        elif size > threatened:
            threatened, second_threatened = size, threatened
        else:
            second_threatened = max(second_threatened, size)
    stone_value = STONE_CAPTURE_VALUE if scoring == STONES_ONLY else AREA_CAPTURE_VALUE
    exchange = stone_value * max(best_target - threatened, -second_threatened)
    # the side to move gets the odd point of those still to be filled: every empty point
    # (where stones are counted), the empty points outside territory (where area is)
    open_points = popcount(_span(0, n - 1) & ~occupied) - territory
    return value, float(exchange), float(open_points % 2)


@njit(cache=True)
def evaluate(params: Array, state: Array) -> float:
    """Heuristic final margin (Black minus White) of an ongoing position; see
    docs/evaluation.md, "Alak"."""
    count_now, exchange, parity = _terms(params, state)
    weights = params[P_WEIGHTS:P_ZOBRIST].view(np.float64)
    value = count_now + weights[0] * exchange + weights[1] * parity
    if params[P_PASSING] and state[S_PASSES] == 1:
        value = max(value, count_now)  # a pass ends the game with the count as it stands
    return float(value if state[S_SIDE] == 0 else -value)


@njit(cache=True)
def features(params: Array, state: Array, out: npt.NDArray[np.float64]) -> float:
    """The terms of :func:`evaluate`, Black's view, in ``out``; returns their base, the count
    now. Right after a pass, where one more ends the game, the estimate is kept at least the
    count now: there the base is the whole estimate, and the terms are 0."""
    if params[P_PASSING] and state[S_PASSES] == 1:
        out[0], out[1] = 0.0, 0.0
        return evaluate(params, state)
    count_now, exchange, parity = _terms(params, state)
    sign = 1.0 if state[S_SIDE] == 0 else -1.0
    out[0], out[1] = sign * exchange, sign * parity
    return sign * count_now


@njit(cache=True)
def move_order(params: Array, state: Array, move: int) -> float:
    """Priority for search: captures first (the more stones the better), then moves that save
    own chains in atari, then other placements; the pass last."""
    n = params[P_SIZE]
    if move >= n:
        return 0.0
    side = state[S_SIDE]
    own = state[S_BLACK + side]
    occupied = state[S_BLACK] | state[S_WHITE]
    captured = _place(params, state, move)[2]
    saved = 0
    # an own neighbour chain whose only liberty is ``move`` (its far side closed) is in atari
    if move > 0 and _bit(own, move - 1):
        start = _chain_start(own, move - 1)
        if _encloses(params, occupied, start - 1):
            saved += move - start
    if move < n - 1 and _bit(own, move + 1):
        end = _chain_end(own, move + 1, n)
        if _encloses(params, occupied, end + 1):
            saved += end - move
    # lexicographic: stones captured, then stones saved (fewer than 40, so below 64)
    return 1.0 + 64.0 * popcount(captured) + saved


TERMS = Terms(
    TERM_NAMES, HAND_WEIGHTS, features, P_WEIGHTS, __name__.rpartition(".")[0],
    carries_over=("size", "komi"),
)


# --- the twin --------------------------------------------------------------------------------


def _board_masks(board: str) -> tuple[int, int]:
    black = sum(1 << point for point, stone in enumerate(board) if stone == STONES[0])
    white = sum(1 << point for point, stone in enumerate(board) if stone == STONES[1])
    return black, white


def _board_text(black: int, white: int, size: int) -> str:
    return "".join(
        STONES[0] if black >> point & 1 else STONES[1] if white >> point & 1 else EMPTY
        for point in range(size)
    )


def _write_position(array: Array, offset: int, position: AlakPosition, rules: RuleSet) -> None:
    black, white = _board_masks(position.board)
    array[offset + S_BLACK], array[offset + S_WHITE] = black, white
    array[offset + S_SIDE] = int(position.player)
    array[offset + S_PASSES] = position.passes
    array[offset + S_CAPTURED] = sum(1 << point for point in position.captured)
    array[offset + S_PRISONERS], array[offset + S_PRISONERS + 1] = position.prisoners
    if rules.repetition is Repetition.KO and position.ko_board is not None:
        ko_black, ko_white = _board_masks(position.ko_board)
        array[offset + S_KO_BLACK], array[offset + S_KO_WHITE] = ko_black, ko_white
        array[offset + S_KO_SET] = 1


def _read_position(array: Array, size: int) -> AlakPosition:
    ko_board = None
    if array[S_KO_SET]:
        ko_board = _board_text(int(array[S_KO_BLACK]), int(array[S_KO_WHITE]), size)
    return AlakPosition(
        board=_board_text(int(array[S_BLACK]), int(array[S_WHITE]), size),
        player=Player(int(array[S_SIDE])),
        passes=int(array[S_PASSES]),
        captured=frozenset(p for p in range(size) if int(array[S_CAPTURED]) >> p & 1),
        prisoners=(int(array[S_PRISONERS]), int(array[S_PRISONERS + 1])),
        ko_board=ko_board,
    )


def _params(game: Alak) -> Array:
    rng = np.random.default_rng(ZOBRIST_SEED + game.size)
    zobrist = rng.integers(-(2**63), 2**63 - 1, size=5 * game.size + 8, dtype=np.int64)
    komi_bits = np.array([game.komi], dtype=np.float64).view(np.int64)
    rules = game.rule_set
    head = [
        game.size, int(rules.passing), int(rules.suicide), int(rules.capture_ban),
        REPETITION_CODES[rules.repetition], SCORING_CODES[rules.scoring], int(game.edge_encloses),
        int(komi_bits[0]), 0, 0,
    ]
    params = np.concatenate([np.array(head, dtype=np.int64), zobrist])
    set_weights(params, TERMS, weights_for(game, TERMS))
    return params


def _end_reasons(game: Alak) -> dict[int, str]:
    rules = game.rule_set
    reasons = {}
    if rules.passing:
        reasons[BOTH_PASSED] = REASON_PASSES
    else:
        for player in Player:
            reasons[BLACK_STUCK + player] = REASON_NO_PLACEMENT.format(
                player=player.name.capitalize()
            )
    if rules.repetition is Repetition.KO:
        reasons[THIRD_REPETITION] = REASON_REPETITION
    return reasons


@cache
def fast_twin(game: Alak) -> FastTwin:
    """The fast twin of an Alak variant (one per variant)."""
    size, rules = game.size, game.rule_set
    positions = rules.repetition is Repetition.KO  # (the history lists positions, not boards)
    params = _params(game)

    def from_reference(reference: State) -> Array:
        if not isinstance(reference, AlakState) or reference.game != game:
            raise AgonError(f"not a state of {game.description}")
        loaded = reference._loaded_history
        played = reference._stack
        length = len(loaded) + len(played)
        capacity = length + history_margin(size)
        index_start = HEADER + RECORD * capacity
        array = np.zeros(index_start + BUCKETS + capacity, dtype=np.int64)
        array[S_INDEX] = index_start
        for index, token in enumerate(loaded):
            board, _, stone = token.partition(":")
            base = HEADER + RECORD * index
            array[base + S_BLACK], array[base + S_WHITE] = _board_masks(board)
            array[base + S_SIDE] = STONES.index(stone) if stone else -1
        for index, position in enumerate(played, start=len(loaded)):
            _write_position(array, HEADER + RECORD * index, position, rules)
        _write_position(array, 0, reference.current, rules)
        array[S_HISTORY_LENGTH], array[S_LOADED], array[S_CAPACITY] = length, len(loaded), capacity
        _index_history(params, array)
        return array

    def new_state() -> Array:
        return from_reference(game.new_state())

    def position(array: Array) -> str:
        tokens = []
        for index in range(int(array[S_HISTORY_LENGTH])):
            base = HEADER + RECORD * index
            token = _board_text(int(array[base + S_BLACK]), int(array[base + S_WHITE]), size)
            if positions:
                token += ":" + STONES[int(array[base + S_SIDE])]
            tokens.append(token)
        return AlakState(game, _read_position(array, size), tokens).position()

    return FastTwin(
        game=game,
        params=params,
        num_actions=game.num_actions,
        end_reasons=_end_reasons(game),
        new_state=new_state,
        from_reference=from_reference,
        position=position,
        room=lambda array: int(array[S_CAPACITY] - array[S_HISTORY_LENGTH]),
        kernels=kernels_in(globals()),
        terms=TERMS,
        repeats_count=positions,
        board_points=size,
    )
