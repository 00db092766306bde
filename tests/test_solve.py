"""The exact solver against plain minimax on the reference rules, its symmetries, its handling
of history-dependent rules, the published exercises, and the solve command."""

from __future__ import annotations

import json
from collections.abc import Generator
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tests.strategies import played_states
from typer.testing import CliRunner

from agon.cli import app
from agon.core.game import Game, Move, State
from agon.core.limits import Chunks, Limit
from agon.core.player import Player
from agon.games import make_game
from agon.games.alak import Alak
from agon.games.alak.results import HAYWARD_EXERCISES
from agon.games.alak.rules import AlakRules
from agon.games.alternator import Alternator
from agon.search.twins import twin_for
from agon.solve import kernels as K
from agon.solve import proof_numbers as P
from agon.solve.facts import Search, default_table_bits
from agon.solve.mtdf import _tests_near
from agon.solve.solution import ProvenValue, Solution, SolveInterrupted
from agon.solve.solver import (
    Solver,
    _MoveChecks,
    counts_setbacks,
    default_search,
    perfect_play,
    refines_proof_numbers,
    symmetries_for,
)

runner = CliRunner()

# --- plain minimax on the reference rules ----------------------------------------------------


def minimax(state: State, sign: int, alpha: float = -1e9, beta: float = 1e9) -> float:
    """Negamax alpha-beta on the reference rules, no table: the value for the side to move
    (``sign`` +1 when that is Black; it alternates with every move, passes included).

    Moves in the rules' order, except that a pass ending the game is tried first (an ordering
    only: every move is still searched unless a proven bound cuts it off).
    """
    if state.is_over:
        return sign * state.margin
    moves = state.legal_moves()
    if state.game.pass_move in moves:
        state.play(state.game.pass_move)
        ends = state.is_over
        state.undo()
        if ends:
            moves = [state.game.pass_move, *moves[:-1]]
    best = -1e9
    for move in moves:
        state.play(move)
        value = -minimax(state, -sign, -beta, -max(alpha, best))
        state.undo()
        best = max(best, value)
        if best >= beta:
            break
    return best


def reference(state: State) -> tuple[float, dict[Move, float]]:
    """Black's margin with perfect play, and after each legal move, by plain minimax."""
    view = -1 if state.to_move is Player.WHITE else 1
    values = {}
    for move in state.legal_moves():
        state.play(move)
        values[move] = view * -minimax(state, -view)
        state.undo()
    return view * minimax(state, view), values


def solved(state: State, solver: Solver | None = None, search: Search | None = None) -> Solution:
    return (solver or Solver(state.game, 14, search=search)).solve(state, openings=True)


def assert_matches_reference(
    state: State, solver: Solver | None = None, search: Search | None = None
) -> None:
    value, move_values = reference(state)
    solution = solved(state, solver, search)
    komi = state.game.komi if isinstance(state.game, Alternator) else 0.0
    assert solution.value - komi == value, state.position()
    assert solution.move_values is not None
    assert {m: v - komi for m, v in solution.move_values.items()} == move_values
    best = [m for m, v in move_values.items() if v == value]
    assert solution.best_moves == best


# --- values against minimax -------------------------------------------------------------------
# every test of values runs with both searches (proof numbers and alpha-beta)

searches = pytest.mark.parametrize("search", list(Search))


@searches
@pytest.mark.parametrize("size", ["1x2", "2x2", "2x3", "1x5", "3x2"])
def test_alternator_from_the_start_matches_minimax(size: str, search: Search) -> None:
    assert_matches_reference(make_game("alternator", {"size": size}).new_state(), search=search)


ALAK_STARTS = [
    *((AlakRules.BALJEU, n, edge) for n in range(1, 6) for edge in (True, False)),
    *((AlakRules.TROMP_TAYLOR, n, True) for n in range(1, 5)),
    *((AlakRules.TRADITIONAL, n, True) for n in range(1, 4)),
]


@searches
@pytest.mark.parametrize(("rules", "size", "edge"), ALAK_STARTS)
def test_alak_from_the_start_matches_minimax(
    rules: AlakRules, size: int, edge: bool, search: Search
) -> None:
    assert_matches_reference(Alak(size, rules, edge).new_state(), search=search)


ALAK_MIDGAMES = [
    (AlakRules.BALJEU, "x.o.x o seen=.....,x....,x.o.."),
    (AlakRules.BALJEU, ".xo.. x captured=5 seen=.....,.x...,.xo..,.xo.x"),
    (AlakRules.TROMP_TAYLOR, ".oox. x passes=1 seen=.....,.oo.o,.oox.,x....,x.o..,x.o.o,x.ox."),
    (AlakRules.TROMP_TAYLOR, ".xxxx o seen=.....,.x...,.x..o,.xx.o,.xxx."),
    (AlakRules.TRADITIONAL,
     ".xo. x prisoners=1,3 ko=.x.. seen=....:x,.x..:o,.x..:o,.x..:x,.xx.:o,.xx.:x,.xxx:o,o...:x"),
    (AlakRules.TRADITIONAL, "oo.o x prisoners=0,2 ko=oo.. seen=....:x,..x.:o,o.x.:x,o.xx:o,oo..:o"),
    (AlakRules.TRADITIONAL,
     ".xo. o passes=1 prisoners=1,1 ko=.xo. seen=....:x,...x:o,.x.x:o,.xo.:x,o..x:x"),
]


@searches
@pytest.mark.parametrize(("rules", "text"), ALAK_MIDGAMES)
def test_alak_midgame_positions_match_minimax(rules: AlakRules, text: str, search: Search) -> None:
    game = Alak(len(text.split()[0]), rules)
    assert_matches_reference(game.parse_position(text), search=search)


@searches
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=played_states(Alak(4, AlakRules.TROMP_TAYLOR), max_plies=12))
def test_random_tromp_taylor_positions_match_minimax(state: State, search: Search) -> None:
    assert_matches_reference(state, shared_solver(state.game, search))


@searches
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=played_states(Alak(3, AlakRules.TRADITIONAL, komi_points=0.5), max_plies=10))
def test_random_traditional_positions_match_minimax(state: State, search: Search) -> None:
    assert_matches_reference(state, shared_solver(state.game, search))


@searches
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=played_states(Alak(5, AlakRules.BALJEU), max_plies=8))
def test_random_baljeu_positions_match_minimax(state: State, search: Search) -> None:
    assert_matches_reference(state, shared_solver(state.game, search))


@pytest.mark.parametrize("refined", [False, True])
@pytest.mark.parametrize(("rules", "size", "text"), [
    # (minimax on traditional 1 × 4 from the start takes a minute)
    *((r, n, None) for r in AlakRules for n in (3, 4) if (r, n) != (AlakRules.TRADITIONAL, 4)),
    *((r, len(t.split()[0]), t) for r, t in ALAK_MIDGAMES),
])
def test_proof_numbers_with_and_without_their_refinements_match_minimax(
    rules: AlakRules, size: int, text: str | None, refined: bool
) -> None:
    """Weak proof numbers and the estimated start are chosen per rule set
    (refines_proof_numbers); each choice must be exact under every rule set."""
    game = Alak(size, rules)
    solver = Solver(game, 14, search=Search.PROOF_NUMBERS)
    solver.control[K.C_WEAK_PROOFS] = solver.control[K.C_ESTIMATED_START] = int(refined)
    state = game.parse_position(text) if text else game.new_state()
    assert_matches_reference(state, solver)


def test_the_numbers_table_uses_every_bucket() -> None:
    """Numbers keys are odd (0 marks an empty row): a bucket's index must not rest on that bit,
    or half the table would never be used."""
    numbers = np.zeros((2 << 6, 3), dtype=np.int64)
    for position in range(1000):
        present_key = (position * 0x9E3779B97F4A7C15) & ((1 << 62) - 1)
        P._numbers_store(numbers, P._numbers_key(present_key, 1), 1, 1, 1)
    assert np.count_nonzero(numbers[:, 0]) > 0.9 * numbers.shape[0]


def test_proof_numbers_are_refined_where_the_rules_have_a_pass() -> None:
    assert refines_proof_numbers(Alak(5, AlakRules.TROMP_TAYLOR))
    assert refines_proof_numbers(Alak(5, AlakRules.TRADITIONAL))
    assert not refines_proof_numbers(Alak(5, AlakRules.BALJEU))
    assert refines_proof_numbers(Alternator(3, 3))


@searches
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=played_states(Alternator(2, 3, 0.5), max_plies=6))
def test_random_alternator_positions_match_minimax(state: State, search: Search) -> None:
    assert_matches_reference(state, shared_solver(state.game, search))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=st.one_of(
    played_states(Alak(4, AlakRules.TROMP_TAYLOR), max_plies=12),
    played_states(Alak(3, AlakRules.TRADITIONAL), max_plies=10),
    played_states(Alak(5, AlakRules.BALJEU), max_plies=8),
    played_states(Alternator(2, 3, 0.5), max_plies=6),
))
def test_one_best_move_keeps_the_value(state: State) -> None:
    assume(not state.is_over)
    value, move_values = reference(state)
    move = shared_solver(state.game, default_search(state.game)).one_best_move(state)
    assert move_values[move] == value, state.position()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=st.one_of(
    played_states(Alak(4, AlakRules.TROMP_TAYLOR), max_plies=12),
    played_states(Alak(5, AlakRules.BALJEU), max_plies=8),
    played_states(Alternator(2, 3, 0.5), max_plies=6),
))
def test_the_moves_keeping_a_known_value_are_the_best_moves(state: State) -> None:
    """Given the value (a store's), a solver with nothing in its table finds every best move
    without proving the value first."""
    assume(not state.is_over)
    value, move_values = reference(state)
    komi = state.game.komi if isinstance(state.game, Alternator) else 0.0
    kept = Solver(state.game, 12).moves_keeping(state, value + komi)
    assert kept == [move for move, after in move_values.items() if after == value]


@pytest.mark.parametrize("game", [
    Alternator(3, 3, 0.5), Alak(7, AlakRules.TROMP_TAYLOR), Alak(6, AlakRules.TRADITIONAL),
    Alak(6, AlakRules.BALJEU), Alak(6, AlakRules.BALJEU, edge_capture=False),
])
def test_a_line_of_perfect_play_ends_the_game_with_the_value(game: Game) -> None:
    solver = Solver(game, 14)
    state = game.new_state()
    value = solver.solve(state).value
    line = list(perfect_play(solver, state, limit=Limit(seconds=600)))  # (played on state)
    komi = game.komi if isinstance(game, Alternator) else 0.0
    assert state.is_over and state.margin == value - komi, line


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state=st.one_of(
    played_states(Alak(7, AlakRules.TROMP_TAYLOR), max_plies=24),
    played_states(Alak(7, AlakRules.BALJEU), max_plies=16),
))
def test_history_free_results_agree_with_whole_situation_ones(state: State) -> None:
    """Boards too long for minimax: one table reusing history-free results across many
    positions (the summaries decide where they hold) against a table that keys every result
    by the whole situation, board and history, and so reuses nothing unsoundly."""
    assume(not state.is_over)
    whole_situation = Solver(state.game, 14)
    whole_situation.control[K.C_HISTORY] = 0  # (as for boards longer than 32 points)
    shared = shared_solver(state.game, default_search(state.game))
    assert shared.margin(state) == whole_situation.margin(state), state.position()


@cache
def shared_solver(game: Game, search: Search) -> Solver:
    """One solver (one table) per variant for all of a test's examples: entries must be
    reused soundly across positions with different histories."""
    return Solver(game, 16, search=search)


# --- history-dependent rules ---------------------------------------------------------------------

HISTORY_PAIRS = [
    # same board and side to move, different history, different values
    (Alak(3, AlakRules.TROMP_TAYLOR), ".xx x", ".xx x seen=.x.,xo.", 3, -3),
    (Alak(4, AlakRules.BALJEU), "..o. o", "..o. o seen=.x..", -2, -3),
    # after o's 2, both of x's placements recreate a board seen: the game ends there, better
    # for x (an upper bound proven with moves must rest on one of them staying allowed)
    (Alak(4, AlakRules.BALJEU), "x... o seen=....", "x... o seen=....,.ox.,.o.x", -2, -1),
    (Alak(3, AlakRules.TRADITIONAL), ".x. o", ".x. o seen=.x.:x,.x.:x", 3, 0),
]


@searches
@pytest.mark.parametrize("symmetry", [True, False])
@pytest.mark.parametrize(("game", "plain", "with_history", "plain_value", "history_value"),
                         HISTORY_PAIRS)
def test_history_is_part_of_what_the_table_shares(
    game: Game,
    plain: str,
    with_history: str,
    plain_value: float,
    history_value: float,
    symmetry: bool,
    search: Search,
) -> None:
    """Keys with symmetry are this package's hashes; without, the twin's key ^ history_key."""
    solver = Solver(game, 12, symmetry=symmetry, search=search)
    cases = [(plain, plain_value), (with_history, history_value), (plain, plain_value)]
    for text, expected in cases:
        state = game.parse_position(text)
        assert reference(state)[0] == expected
        assert solver.solve(state).value == expected


# --- symmetries ---------------------------------------------------------------------------------


def _image_moves(game: Game, moves: list[Move], symmetry: int) -> list[Move]:
    maps = symmetries_for(game).move_maps
    return [int(maps[symmetry, m]) for m in moves]


@pytest.mark.parametrize("size", ["4x4", "3x5", "5x5"])
def test_alternator_symmetric_positions_have_the_same_value(size: str) -> None:
    game = make_game("alternator", {"size": size})
    symmetries = symmetries_for(game)
    assert len(symmetries.names) == {"4x4": 4, "3x5": 4, "5x5": 8}[size]
    moves: list[Move] = []
    state = game.new_state()
    while len(moves) < game.cells - 6:
        legal = state.legal_moves()
        moves.append(legal[(7 * len(moves) + 3) % (len(legal) - 1)])
        state.play(moves[-1])
    solver = Solver(game, 16)
    values = set()
    for symmetry in range(len(symmetries.names)):
        image = game.new_state()
        image.play_all(_image_moves(game, moves, symmetry))
        values.add(Solver(game, 14, symmetry=False).solve(image).value)
        values.add(solver.solve(image).value)
    assert len(values) == 1


def test_transposed_boards_have_the_same_value() -> None:
    assert Solver(Alternator(2, 3)).solve(Alternator(2, 3).new_state()).value == (
        Solver(Alternator(3, 2)).solve(Alternator(3, 2).new_state()).value
    )


@searches
@pytest.mark.parametrize(
    ("rules", "text", "mirrored"),
    [
        (AlakRules.TROMP_TAYLOR, ".xx.. x seen=.x...,xo...", "..xx. x seen=...x.,...ox"),
        (AlakRules.BALJEU, "x.o.. o captured=2 seen=xxo..", "..o.x o captured=4 seen=..oxx"),
        (AlakRules.TRADITIONAL, ".x... o seen=.x...:x,.x...:x", "...x. o seen=...x.:x,...x.:x"),
    ],
)
def test_alak_mirror_images_have_the_same_value(
    rules: AlakRules, text: str, mirrored: str, search: Search
) -> None:
    game = Alak(5, rules)
    solver = Solver(game, 14, search=search)
    first = solver.solve(game.parse_position(text))
    second = solver.solve(game.parse_position(mirrored))
    plain = Solver(game, 14, symmetry=False, search=search).solve(game.parse_position(mirrored))
    assert first.value == second.value == plain.value
    assert sorted(game.size - 1 - m if m < game.size else m for m in first.best_moves) == sorted(
        second.best_moves
    )


# --- published exercises and claims -----------------------------------------------------------


@pytest.mark.parametrize(("board", "published"), HAYWARD_EXERCISES)
def test_the_rules_page_linear_go_exercises(board: str, published: int) -> None:
    game = Alak(5, AlakRules.TROMP_TAYLOR)
    assert Solver(game, 16).solve(game.parse_position(f"{board} x")).value == published


def test_superko_stops_the_retake_in_x_dot_o() -> None:
    """In ``x . o . .`` o answers x:4 with o:5, capturing at 4; x may not retake at 4 (the
    board ``x . o x .`` would recur), so the position is worth −5."""
    game = Alak(5, AlakRules.TROMP_TAYLOR)
    state = game.parse_position("x.o.. x")
    assert Solver(game, 16).solve(state).value == -5
    state.play_all([3, 4])
    assert state.board == "x.o.o"
    assert state.legal_moves() == [game.pass_move]


def test_alternator_reports_the_result_under_komi() -> None:
    solution = Solver(Alternator(2, 2, 3.5)).solve(Alternator(2, 2, 3.5).new_state())
    assert (solution.value, solution.komi, solution.result_margin) == (4, 3.5, 0.5)


def test_tromp_taylor_komi_shifts_the_value() -> None:
    game = Alak(3, AlakRules.TROMP_TAYLOR, komi_points=1.5)
    assert Solver(game).solve(game.new_state()).value == 3 - 1.5


@searches
@pytest.mark.parametrize(("game", "value"), [(Alternator(4, 4), 2), (Alak(9), 1)])
def test_a_solve_out_of_time_reports_proven_bounds(game: Game, value: int, search: Search) -> None:
    solver = Solver(game, 14, chunk_seconds=0.01, search=search)
    with pytest.raises(SolveInterrupted) as stopped:
        solver.solve(game.new_state(), limit=Limit(seconds=0.01))
    assert stopped.value.timed_out
    # (Alak 9 is worth 0 or 1: docs/results.md)
    assert stopped.value.lower <= value and value - 2 <= stopped.value.upper


@searches
def test_a_stop_that_compiled_code_lost_stops_the_solve_with_its_bounds(
    monkeypatch: pytest.MonkeyPatch, search: Search,
) -> None:
    """Ctrl-C landing where Numba unboxes a kernel argument came out of the kernel's call as a
    TypeError, the stop itself lost (CI, 2026-11-28): the solve must still stop as
    interrupted, with its bounds, not end with the TypeError."""
    from agon.core.workers import hear_stop

    game = Alak(9)
    solver = Solver(game, 14, chunk_seconds=0.01, search=search)
    calls = [0]
    run = Chunks.run

    def losing_a_stop(chunks: Chunks, step: Any, *arguments: Any) -> Any:
        def kernel_call(nodes: int) -> tuple[int, bool]:
            calls[0] += 1
            if calls[0] == 2:
                hear_stop()  # (as the signal handler does, before its interrupt is lost)
                raise TypeError("_get_wrapper_address() missing 1 required positional argument")
            return step(nodes)  # type: ignore[no-any-return]

        return run(chunks, kernel_call, *arguments)

    monkeypatch.setattr(Chunks, "run", losing_a_stop)
    try:
        with pytest.raises(SolveInterrupted) as stopped:
            solver.solve(game.new_state())
    finally:
        hear_stop(False)
    assert not stopped.value.timed_out
    assert stopped.value.lower <= 1 and stopped.value.upper >= 0  # (docs/results.md)


def test_a_solve_whose_best_moves_run_out_of_time_reports_its_value_and_moves_so_far(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game = Alak(5, AlakRules.TROMP_TAYLOR)
    solver = Solver(game, 14)

    largest = int(solver.control[K.C_MAX_VALUE])  # (units)

    def out_of_time(array: object, black_view: int, value: int, checks: _MoveChecks) -> None:
        # points 1 and 3 checked (after them White reaches at least 1 unit, and 0), 4 under
        # way with nothing proven yet beyond the game's own bounds, and (made up) a value of
        # the largest margin after 2
        checks.keeps.update({0: False, 2: True})
        checks.bounds.update(
            {0: (1, largest), 1: (-largest, -largest), 2: (0, 0), 3: (-largest, largest)}
        )
        assert checks.values is None  # not asked for
        raise SolveInterrupted(-5, 5, 1, 0.1, timed_out=True)

    monkeypatch.setattr(solver, "_moves", out_of_time)
    with pytest.raises(SolveInterrupted) as stopped:
        solver.solve(game.new_state())
    # the root's value (0, docs/results.md) is reported with its own cost and the moves so far
    assert stopped.value.lower == stopped.value.upper == 0
    proven = stopped.value.proven
    assert proven is not None and proven.nodes > 0
    assert (proven.best, proven.not_best) == (["3"], ["1"])
    # as Black's margins, with nothing shown where nothing beyond the game's bounds is known
    assert stopped.value.move_bounds == {
        "1": (float("-inf"), -1 / solver.scale), "2": (5, 5), "3": (0, 0)
    }
    assert "the value is 0 (proven in" in str(stopped.value)
    assert "best moves were not all checked (best so far: 3; not best: 1)" in str(stopped.value)


def _rounds_until(solver: Solver, limit: int | None, counted: list[int]) -> None:
    """Make ``solver``'s MTD(f) rounds count into ``counted[0]``, and the round after
    ``limit`` run out of time."""
    real = solver._value_rounds

    def rounds(*arguments: Any) -> Generator[tuple[int, int], None, int]:
        inner = real(*arguments)
        while True:
            counted[0] += 1
            if limit is not None and counted[0] > limit:
                raise SolveInterrupted(-7, 7, 1, 0.1, timed_out=True)
            try:
                bounds = next(inner)
            except StopIteration as solved:
                return int(solved.value)
            yield bounds

    solver._value_rounds = rounds  # type: ignore[method-assign]


def test_openings_out_of_time_report_what_they_proved_so_far() -> None:
    game = Alak(6, AlakRules.TRADITIONAL)
    counted = [0]
    whole = Solver(game, 14)
    _rounds_until(whole, None, counted)
    whole.solve(game.new_state(), openings=True)
    # docs/results.md: 1:-7 2:0 3:0 4:0 5:0 6:-7 pass:0
    exact = {"1": -7, "2": 0, "3": 0, "4": 0, "5": 0, "6": -7, "pass": 0}
    # again, out of time ever earlier, until some move is only bounded
    for limit in range(counted[0] - 1, 0, -1):
        solver = Solver(game, 14)
        _rounds_until(solver, limit, [0])
        with pytest.raises(SolveInterrupted) as stopped:
            solver.solve(game.new_state(), openings=True)
        proven, bounds = stopped.value.proven, stopped.value.move_bounds
        # every bound holds, and the best so far are the moves proven to keep the value
        assert all(low <= exact[move] <= high for move, (low, high) in bounds.items())
        values = {move: low for move, (low, high) in bounds.items() if low == high}
        assert proven is not None
        assert proven.best == [move for move in values if exact[move] == 0]
        if len(values) < len(bounds):
            break
    assert values and len(values) < len(exact)


@pytest.mark.parametrize("openings", [False, True])
def test_one_move_of_each_class_of_symmetric_moves_is_searched(openings: bool) -> None:
    game = Alak(5, AlakRules.TROMP_TAYLOR)
    solver = Solver(game, 14)
    searched = [0]
    searches = "_value_rounds" if openings else "_probe_rounds"
    real = getattr(solver, searches)

    def counted(*arguments: Any) -> Any:
        searched[0] += 1
        return real(*arguments)

    setattr(solver, searches, counted)
    solution = solver.solve(game.new_state(), openings=openings)
    # six moves, four classes (1 and 5, 2 and 4, 3, the pass), and with openings the root's
    # own value before them; the mirrored moves are valued as docs/results.md lists them
    assert searched[0] == (1 + 4 if openings else 4)
    pass_move = game.parse_move("pass")
    assert solution.best_moves == [1, 2, 3, pass_move]
    if openings:
        assert solution.move_values == {0: -5, 1: 0, 2: 0, 3: 0, 4: -5, pass_move: 0}


def test_the_default_search() -> None:
    assert default_search(Alak(5)) is Search.BOTH
    assert default_search(Alternator(3, 3)) is Search.ALPHA_BETA
    assert Solver(Alak(5, AlakRules.TROMP_TAYLOR)).search is Search.BOTH


def test_a_proof_number_search_resumes_after_its_chunks() -> None:
    """Chunks of 10,000 nodes: each test restarts many times from the root, finding its
    proof and disproof numbers in their table; the values stay exact."""
    game = Alak(7, AlakRules.TRADITIONAL)
    solver = Solver(game, 16, chunk_seconds=0.01, search=Search.PROOF_NUMBERS)
    solution = solver.solve(game.new_state())
    assert solver.nodes > 5 * 10_000
    assert np.count_nonzero(solver.numbers[:, 0]) > 1000
    assert solution.value == 0


def test_restarted_chunks_find_their_unknown_subtrees_in_the_hints() -> None:
    """Chunks of 10,000 nodes: every depth-limited iteration restarts many times, and the
    restarts meet the subtrees already found unknown as hints; the value stays exact."""
    game = Alak(6, AlakRules.TRADITIONAL)
    solver = Solver(game, 16, chunk_seconds=0.01, search=Search.ALPHA_BETA)
    solution = solver.solve(game.new_state(), openings=True)
    assert solver.control[K.C_NODES] > 5 * 10_000
    assert solver.control[K.C_HINT_HITS] > 0
    assert solver.control[K.C_FREE_HITS] > 0
    # as docs/results.md lists it (and the claim section explains)
    assert solution.value == 0
    assert solution.move_values == {0: -7, 1: 0, 2: 0, 3: 0, 4: 0, 5: -7, 6: 0}


def test_mtdf_tries_the_tests_beside_the_one_it_asks_for() -> None:
    assert _tests_near(0, -8, 8) == [0, -1, 1, -2, 2]
    # only tests that can still move the bounds (lower < value <= upper)
    assert _tests_near(1, 0, 1) == [1]
    assert _tests_near(-7, -8, 8) == [-7, -6, -5]


def test_baljeu_depth_limits_count_only_setbacks() -> None:
    """Limited to one setback, the search follows every capture-free line to its end; under
    baljeu without edge capture on 4 points that proves the value (0, as docs/results.md
    lists), while one ply proves nothing under the rules where plies count."""
    baljeu = Solver(Alak(4, AlakRules.BALJEU, edge_capture=False), search=Search.ALPHA_BETA)
    assert baljeu.control[K.C_DEPTH_IN_SETBACKS]
    array = baljeu.state_array(baljeu.game.new_state())
    assert baljeu._probe_at(array, 1, -1, 0, 1, baljeu._buffers(array)) == 0
    assert baljeu._probe_at(array, 1, 0, 1, 1, baljeu._buffers(array)) == 0
    tromp_taylor = Solver(Alak(4, AlakRules.TROMP_TAYLOR), search=Search.ALPHA_BETA)
    assert not tromp_taylor.control[K.C_DEPTH_IN_SETBACKS]
    array = tromp_taylor.state_array(tromp_taylor.game.new_state())
    assert tromp_taylor._probe_at(array, 1, 3, 4, 1, tromp_taylor._buffers(array)) == K.UNKNOWN
    assert not counts_setbacks(twin_for(Alak(4, AlakRules.TRADITIONAL)))
    assert not counts_setbacks(twin_for(Alternator(3, 3)))


# --- the command --------------------------------------------------------------------------------


def test_solve_json_keys() -> None:
    result = runner.invoke(app, ["solve", "alternator", "--size", "2x2", "--openings", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"value", "best_moves", "moves", "nodes", "seconds", "komi", "result"}
    assert (data["value"], data["komi"], data["result"]) == (4, 3.5, "B+0.5")
    assert data["best_moves"] == [m for m, v in data["moves"].items() if v == 4]

    result = runner.invoke(
        app, ["solve", "alak", "--size", "5", "--rules", "tromp-taylor", "--json", "-q",
              "--position", "o..x. x"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"value", "best_moves", "nodes", "seconds"}
    assert data["value"] == 5


def test_solve_gives_a_line_of_perfect_play() -> None:
    options = ["solve", "alak", "--size", "7", "--rules", "tromp-taylor", "-q", "--line"]
    result = runner.invoke(app, [*options, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["line"]["moves"][0] in data["best_moves"]
    assert (data["line"]["end"], data["line"]["margin"]) == ("both players passed", data["value"])
    text = runner.invoke(app, options).stdout
    assert f"a line of perfect play: {' '.join(data['line']['moves'])}; both players passed" in text
    with_jobs = runner.invoke(app, [*options, "--json", "--jobs", "2"])
    assert json.loads(with_jobs.stdout)["line"]["margin"] == data["value"]


def test_a_line_cut_short_keeps_the_solution_and_the_moves_so_far(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def out_of_time(
        solver: Solver, state: State, max_plies: int, limit: Limit | None
    ) -> Generator[Move]:
        move = state.legal_moves()[1]
        state.play(move)
        yield move
        raise SolveInterrupted(-1, 1, 10, 0.5, timed_out=True)

    monkeypatch.setattr("agon.solve.session.perfect_play", out_of_time)
    options = ["solve", "alak", "--size", "4", "-q", "--line"]
    result = runner.invoke(app, [*options, "--json"])
    assert result.exit_code == 124
    data = json.loads(result.stdout)
    assert data["value"] == -2 and data["line"] == {"moves": ["2"], "stopped": "out of time"}
    result = runner.invoke(app, options)
    assert "a line of perfect play (out of time after 1 moves): 2" in result.stdout


def test_solve_text_after_moves() -> None:
    result = runner.invoke(app, ["solve", "alak", "--size", "4", "--moves", "2"])
    assert result.exit_code == 0, result.output
    assert "value: W+2" in result.stdout or "value:" in result.stdout


@pytest.mark.parametrize("search", list(Search))
def test_solve_takes_the_search_to_use(search: Search) -> None:
    result = runner.invoke(
        app, ["solve", "alak", "--size", "6", "--rules", "traditional", "--json", "-q",
              "--search", search.value]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["value"] == 0  # the seed's 6-point claim


def test_solve_out_of_time_gives_the_bounds_so_far() -> None:
    result = runner.invoke(
        app, ["solve", "alak", "--size", "12", "--rules", "tromp-taylor", "--json", "-q",
              "--max-seconds", "0.01"]
    )
    assert result.exit_code == 124
    data = json.loads(result.stdout)
    assert data["stopped"] == "out of time"
    # no bound yet is null (JSON has no infinity); any bound proven lies within the margins
    for bound in (data["lower"], data["upper"]):
        assert bound is None or -12 <= bound <= 12
    assert "out of time: " in result.stderr


INF = float("inf")


@pytest.mark.parametrize(
    ("lower", "upper", "said"),
    [(-INF, INF, "no bound proven"), (-1.0, INF, "the value is at least -1"),
     (-INF, 2.0, "the value is at most 2"), (-1.0, 2.0, "the value lies between -1 and 2")],
)
def test_a_stop_says_what_was_proven(lower: float, upper: float, said: str) -> None:
    assert str(SolveInterrupted(lower, upper, 1, 0.1, True)) == f"out of time: {said}"


def test_solve_stopped_among_the_moves_gives_what_it_proved_of_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proven = ProvenValue(5, 0.5, best=["2"], not_best=["1"])
    bounds = {"1": (float("-inf"), -3.0), "2": (1.0, 1.0), "3": (-1.0, float("inf"))}

    def stopped(
        self: Solver, state: State, openings: bool = False, limit: Limit | None = None
    ) -> Solution:
        raise SolveInterrupted(1.0, 1.0, 9, 0.9, True, proven, move_bounds=bounds)

    monkeypatch.setattr(Solver, "solve", stopped)
    monkeypatch.setattr("agon.solve.solver.warm_up_kernels", lambda name: None)
    result = runner.invoke(app, ["solve", "alak", "--size", "3", "--json", "-q"])
    assert result.exit_code == 124
    data = json.loads(result.stdout)
    # null: no bound on that side (JSON has no infinity)
    assert data["move_bounds"] == {"1": [None, -3], "2": [1, 1], "3": [-1, None]}
    assert "moves so far: 1: at most -3, 2: 1, 3: at least -1" in result.stderr


def test_solve_names_an_unknown_search() -> None:
    result = runner.invoke(app, ["solve", "alak", "--search", "minimax"])
    assert result.exit_code == 2
    message = " ".join(result.stderr.replace("│", " ").split())
    assert "'minimax' is not one of 'both', 'proof-numbers', 'alpha-beta'" in message


@pytest.mark.parametrize(
    "arguments",
    [
        ["solve", "alak", "--size", "5", "--max-seconds", "0"],
        ["solve", "alak", "--size", "5", "--max-seconds", "nan"],
        ["solve", "alak", "--size", "5", "--table-bits", "9"],
        ["solve", "alak", "--size", "5", "--moves", "9"],
        ["solve", "alak", "--size", "5", "--position", "xx"],
        ["solve", "alak", "--position", "..... x", "--moves", "1"],
        ["solve", "chess"],
        ["solve", "alternator", "--rules", "baljeu"],
        ["solve", "alak", "--size", "3", "--rules", "traditional", "--komi", "0.3"],
    ],
)
def test_solve_refuses_bad_input(arguments: list[str]) -> None:
    result = runner.invoke(app, arguments)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1


# --- the summaries of history-free results --------------------------------------------------


def _summary_of(boards: list[int], points: int) -> np.ndarray:
    """The summary of ``boards`` as the search builds it: each node's trace starts empty and
    gains boards, and traces merge."""
    summaries = np.zeros((len(boards), K.TRACE_HEAD + 3 * K.summary_size(points + 1)),
                         dtype=np.int64)
    for row, board in zip(summaries, boards, strict=True):
        K.start_trace(row)
        K.add_board(K.trace_summary(row, K.LOW), board)
        K.rest_on(summaries[0], K.HIGH, row[K.LOW], K.trace_summary(row, K.LOW), False)
    return K.trace_summary(summaries[0], K.HIGH)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, (1 << 20) - 1), min_size=1, max_size=30))
def test_a_summary_admits_every_board_it_met(masks: list[int]) -> None:
    # ten points: Black's stones in the low bits, White's from bit 32, never both on one point
    boards = [(mask & 0x3FF) & ~(mask >> 10) | ((mask >> 10) & ~mask & 0x3FF) << 32
              for mask in masks]
    summary = _summary_of(boards, 10)
    assert all(K.may_be_among(board, summary) for board in boards)


def test_the_bloom_filter_rules_out_boards_the_masks_cannot() -> None:
    """Two boards of two stones whose masks admit every two-stone board on four points: the
    filter still refuses most of the boards that were not met (none met are refused)."""
    met = [0b0011, 0b1100]
    summary = _summary_of(met, 4)
    others = [0b0101, 0b1001, 0b0110, 0b1010]
    assert summary[2 * 2] == 0 and summary[2 * 2 + 1] == 0b1111  # the masks rule nothing out
    assert sum(K.may_be_among(board, summary) for board in others) <= 1


def test_boards_set_bits_all_over_the_bloom_filter() -> None:
    """Every hash of a board may land anywhere in the filter: a filter whose boards crowd into
    part of it fills up sooner and throws away more proven bounds."""
    rng = np.random.default_rng(1)
    boards = [int(board) for board in rng.integers(0, 1 << 24, 5_000)]
    size = 64 * K.BLOOM_WORDS
    for which in range(K.BLOOM_HASHES):
        places = {K._bloom_position(board, which) for board in boards}
        assert min(places) >= 0 and max(places) < size
        assert len(places) > 0.65 * size  # (5,000 throws into 4,096 places fill about 70 %)


def test_small_boards_get_small_tables() -> None:
    # a large table costs a small solve more in page zeroing than its whole search
    assert [default_table_bits(Alak(size)) for size in (7, 8, 12, 13, 17)] == [15, 19, 19, 18, 17]
    assert [default_table_bits(Alternator(*side)) for side in ((3, 4), (4, 4))] == [18, 22]
    small, large = Solver(Alak(7)), Solver(Alak(8), 12)
    assert small.numbers.shape[0] == small.table.shape[0] == 2 << 15
    assert large.numbers.shape[0] == 2 << 22  # the proof-number search's own minimum


def _nodes_to_value(game: Game, chunk_nodes: int) -> tuple[float, int]:
    """The value of ``game``'s start and the nodes it took, alpha-beta stopped and started
    again from the root every ``chunk_nodes`` nodes (chunks of a fixed size, whatever the
    machine's speed)."""
    solver = Solver(game, 18)
    solver._chunks["alpha-beta"] = Chunks(chunk_nodes, 1e9, minimum=chunk_nodes, growth=1)
    value = solver.margin(game.new_state())
    return value, solver.nodes


def test_a_search_cut_into_chunks_goes_on_where_it_stopped() -> None:
    """A chunk's end leaves, at every node it passes through, the move under way as the
    table's move: the next chunk comes back down the same line instead of trying another
    first, so a player's short chunks cost few more nodes than one search (the search it
    had been in the middle of was lost before: docs/solver.md)."""
    game = Alternator(3, 4)
    whole_value, whole = _nodes_to_value(game, 10**9)
    chunked_value, chunked = _nodes_to_value(game, 2_000)
    assert chunked_value == whole_value
    assert whole > 20 * 2_000  # (many restarts)
    assert chunked < 1.1 * whole


def test_a_move_whose_position_the_table_proves_cuts_off_before_any_search() -> None:
    """Near a search's root a node first looks its moves' positions up: a move the table
    already proves worth the window's top settles the node with no search below it."""
    game = Alternator(3, 3)
    solver = Solver(game, 16)
    state = game.new_state()
    solution = solver.solve(state)  # (its best moves' positions are in the table now)
    array = solver.state_array(state)
    moves = np.array(solver.legal_moves(array), dtype=np.int64)
    kernels = solver._kernels
    arguments = (
        kernels[1], kernels[2], kernels[5], kernels[6], kernels[7], solver.twin.params,
        solver.symmetries.data, array, solver.image, solver.control, solver.table, moves,
        len(moves),
    )
    value = solver._units(solution.value)  # (Black moves first)
    bound, move = K.transposition_cutoff(*arguments, value)
    assert bound == value and move in solution.best_moves
    assert K.transposition_cutoff(*arguments, value + 1) == (-K.INFINITY, -1)


def test_a_solve_stopped_among_its_moves_still_gives_the_value_and_a_best_move() -> None:
    """The moves of a proven position are checked the table's move first (the value's proof
    found it), and where the time runs out among the others, the analysis keeps the value
    and the moves found to keep it, rather than falling back on an estimate."""
    from agon.study.analysis import Analyst  # (the study layer, over the solver)

    game = Alternator(3, 4)
    state = game.new_state()
    whole = Solver(game, 18).solve(state)
    analyst = Analyst(game, None, table_bits=18)
    analyst.solver._chunks["alpha-beta"] = Chunks(200, 1e9, minimum=200, growth=1)
    # (stopped between two chunks once the moves are being checked)
    analyst.stop_requested = lambda: "keep" in analyst.solver._target
    found = analyst.analyse(state, Limit(seconds=600), moves=False, exact_share=1.0)
    assert found.source == "solver" and found.value.exact
    assert found.value.black == whole.result_margin
    assert found.best_moves and set(found.best_moves) <= set(whole.best_moves)


def test_a_solve_stopped_with_a_bound_proven_plays_the_move_that_reaches_it() -> None:
    """Where the time runs out after a test of MTD(f) has proven the side to move reaches at
    least something, the analysis plays the move that reaches it rather than the engine's
    choice, and an estimate short of the bound is raised to it (an engine here that always
    chooses another move, and thinks it loses by 100)."""
    from agon.search.agent import Agent, Analysis
    from agon.study.analysis import Analyst  # (the study layer, over the solver)
    from agon.study.values import Value

    game = Alternator(3, 4)
    state = game.new_state()
    analyst = Analyst(game, None, table_bits=18)
    solver = analyst.solver

    class Elsewhere(Agent):
        name = spec = "elsewhere"

        def analyse(self, state: State, limit: Limit | None = None) -> Analysis:
            move = next(m for m in state.legal_moves() if m != solver.lower_bound_move)
            return Analysis(best_move=move, value=-100.0, principal_variation=[move])

    solver._chunks["alpha-beta"] = Chunks(200, 1e9, minimum=200, growth=1)
    analyst.stop_requested = lambda: solver.lower_bound_move is not None
    analyst._engine = Elsewhere(game)
    found = analyst.analyse(state, Limit(seconds=60), moves=False)
    assert analyst._floor is not None
    bound, move = analyst._floor
    assert found.best_moves == [move] and found.principal_variation == [move]
    assert found.value == Value(bound, False)  # (Black moves: her margin, raised to the bound)
    after = state.copy()
    after.play(move)
    assert Solver(game, 18).solve(after).result_margin >= bound
