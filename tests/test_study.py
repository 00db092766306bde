"""The study layer, for every registered game: values in words, judgements, the store of exact
values, analysis, reviews and puzzles (agon.study)."""

from __future__ import annotations

import random
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agon.core.errors import RecordError
from agon.core.game import Game, State
from agon.core.limits import Limit
from agon.core.player import Player
from agon.games import make_game, plugins
from agon.solve.solver import Solver
from agon.study.analysis import Analyst, PositionAnalysis, fill_store, review_game
from agon.study.puzzles import Puzzle, find_puzzles, load_collection, puzzle_of, save_puzzle
from agon.study.store import Entry, ExactValues, Store, build_store, compact, variant_key
from agon.study.values import Judgement, Value, describe, judge, judging, outcome_only, short

RAW_FLOAT = re.compile(r"\d\.\d{3,}")


def small_variants() -> list[Game]:
    """Each game's smallest example variant that its solver settles at once."""
    found = []
    for plugin in plugins().values():
        declared = plugin.tooling.variant_examples
        examples = [plugin.make(options) for options in declared] or [plugin.make()]
        small = [
            game for game in examples
            if plugin.solving is not None and plugin.solving.small(game)
            and not game.new_state().is_over and len(game.new_state().legal_moves()) > 1
        ]
        if small:
            found.append(min(small, key=lambda game: game.num_actions))
    return found


GAMES = small_variants()
IDS = [game.variant_id for game in GAMES]


def random_game(game: Game, seed: int) -> list[int]:
    rng = random.Random(seed)
    state = game.new_state()
    moves = []
    while not state.is_over and len(moves) < 200:
        move = rng.choice(state.legal_moves())
        state.play(move)
        moves.append(move)
    return moves


@pytest.fixture
def exact(tmp_path: Path) -> ExactValues:
    """The shipped store is left out: these tests solve what they look up."""
    return ExactValues(shipped=None, cache=tmp_path / "exact.sqlite")


def test_every_game_has_a_small_variant_to_study() -> None:
    assert len(GAMES) == len(plugins())


# --- values in words ----------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_values_are_said_in_words_never_raw_floats(game: Game) -> None:
    only = outcome_only(game)
    win = describe(game, Value(2.0 if not only else 1.0, True), Player.BLACK)
    assert win == ("best play wins" if only else "best play wins by 2")
    assert describe(game, Value(2.0 if not only else 1.0, True), Player.WHITE).startswith(
        "best play loses"
    )
    assert describe(game, Value(0.0, True), Player.WHITE) == "best play draws"
    assert describe(game, Value(-1.5, True)) == (
        "best play: White wins" if only else "best play: White wins by 1.5"
    )
    for estimate in (-1.60823, 3.14159, 0.0001, -0.4):
        for viewer in (None, Player.BLACK, Player.WHITE):
            words = describe(game, Value(estimate, False), viewer)
            assert not RAW_FLOAT.search(words), words
            assert not RAW_FLOAT.search(short(game, Value(estimate, False)))


def test_estimates_are_rounded_and_name_who_is_better() -> None:
    game = next(game for game in GAMES if not outcome_only(game))
    assert describe(game, Value(-1.60823, False), Player.WHITE) == "about +2, you are better"
    assert describe(game, Value(3.2, False)) == "about +3, Black is better"
    assert describe(game, Value(0.2, False)) == "about even"
    assert short(game, Value(-1.5, True)) == "−1.5"
    assert short(game, Value(2.6, False)) == "≈+3"


def test_judgements_follow_the_thresholds_and_the_results() -> None:
    game = next(game for game in GAMES if not outcome_only(game))
    inaccuracy, mistake, blunder = judging(game).thresholds
    assert judge(game, 5, 5, True, True) is Judgement.BEST
    assert judge(game, 5, 5 - inaccuracy / 2, False, False) is Judgement.GOOD
    assert judge(game, 5 + blunder, 5 + blunder - inaccuracy, False, False) is Judgement.INACCURACY
    assert judge(game, 9 + blunder, 9 + blunder - mistake, False, False) is Judgement.MISTAKE
    assert judge(game, 9 + blunder, 9, False, False) is Judgement.BLUNDER
    # a proven win given away is a blunder however few the points
    assert judge(game, 0.5, -0.5, True, False) is Judgement.BLUNDER
    assert judge(game, 0.5, 0.0, True, False) is Judgement.MISTAKE
    # the same points, estimated, are only what the thresholds say
    assert judge(game, 0.5, -0.5, False, False) is not Judgement.BLUNDER


# --- the store ------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_the_store_keeps_and_checks_entries(game: Game, tmp_path: Path) -> None:
    state = game.new_state()
    moves = state.legal_moves()
    store = Store(tmp_path / "s.sqlite", writable=True)
    entry = Entry(1.0, (moves[0],), dict.fromkeys(moves, 1.0), 10, 0.5)
    assert store.put(game, state, entry)
    assert store.get(game, state) == entry
    # a value-only entry does not replace one with the moves' values
    store.put(game, state, Entry(1.0, (moves[0],), None))
    assert store.get(game, state) == entry
    # an entry whose moves do not fit the position is not trusted
    with sqlite3.connect(tmp_path / "s.sqlite") as connection:
        connection.execute("UPDATE positions SET moves = ?", ('{"nonsense": 1}',))
    assert store.get(game, state) is None
    store.close()


def test_a_store_that_is_not_a_database_is_passed_over(tmp_path: Path) -> None:
    game = GAMES[0]
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"not a database" * 100)
    values = ExactValues(shipped=broken, cache=tmp_path / "folder-is-a-file" / "x.sqlite")
    (tmp_path / "folder-is-a-file").write_text("")
    assert values.get(game.new_state()) is None
    values.keep(game.new_state(), Entry(0.0, (), None, 0, 10.0))  # (not kept, no error)


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_a_built_store_serves_the_start_and_its_moves(game: Game, tmp_path: Path) -> None:
    path = tmp_path / "built.sqlite"
    store = build_store(path)
    kept, unsolved = fill_store(Analyst(game), store, 1, Limit(seconds=60))
    store.close()
    compact(path)
    assert unsolved == 0
    assert kept == 1 + len({_after(game.new_state(), m).position() for m in
                            game.new_state().legal_moves()
                            if not _after(game.new_state(), m).is_over})
    shipped = ExactValues(shipped=path, cache=tmp_path / "cache.sqlite")
    analyst = Analyst(game, shipped)
    found = analyst.analyse(game.new_state(), Limit(seconds=5))
    assert found.source == "store" and found.value.exact
    assert found.value.black == _solved(game, game.new_state())
    assert variant_key(game) in {variant for variant, _ in Store(path, False).variants()}
    # two moves in: the value is the entry's of the position before it
    walk = game.new_state()
    walk.play(walk.legal_moves()[0])
    if not walk.is_over:
        walk.play(walk.legal_moves()[-1])
        assert analyst.stored_value(walk) == (
            walk.margin if walk.is_over else _solved(game, walk)
        )
        assert analyst.value(walk, Limit(seconds=5)) == Value(analyst.stored_value(walk), True)
        if not walk.is_over:  # (the solver finds the moves that keep the stored value)
            found = analyst.analyse(walk, Limit(seconds=5), moves=False)
            assert (found.source, found.value) == ("store", Value(analyst.stored_value(walk), True))
            assert found.best_moves == Solver(game).solve(walk).best_moves


def _after(state: State, move: int) -> State:
    following = state.copy()
    following.play(move)
    return following


def _solved(game: Game, state: State) -> float:
    return Solver(game).solve(state).result_margin


# --- analysis and reviews -----------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_analysis_is_exact_and_agrees_with_the_solver(game: Game, exact: ExactValues) -> None:
    analyst = Analyst(game, exact)
    start = game.new_state()
    found = analyst.analyse(start, Limit(seconds=30))
    assert found.value.exact and found.source == "solver"
    assert found.value.black == _solved(game, start)
    assert Analyst(game).value(start, Limit(seconds=30)) == found.value
    assert found.move_values is not None
    assert set(found.move_values) == set(start.legal_moves())
    assert {m for m, v in found.move_values.items() if v == found.value.black} >= set(
        found.best_moves
    )
    assert found.principal_variation[:1] == found.best_moves[:1]
    # asked again, from the cache, by a new analyst (a new process would find it the same)
    again = Analyst(game, exact).known(start)
    if again is not None:  # (kept only where the solve took long enough)
        assert again.value == found.value
    data = found.to_json(game)
    assert data["exact"] is True and isinstance(data["best_moves"], list)


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_a_review_judges_every_move_exactly(game: Game, exact: ExactValues) -> None:
    moves = random_game(game, 7)
    start = game.new_state()
    seen: list[tuple[int, int]] = []
    review = review_game(
        Analyst(game, exact), start, moves, Limit(seconds=30),
        {"black": "Ann", "white": "Bo"}, lambda done, total: seen.append((done, total)),
    )
    assert review.complete and len(review.reviewed) == len(moves)
    assert seen[-1] == (len(moves) + 1, len(moves) + 1)
    state = start.copy()
    for annotated, move in zip(review.reviewed, moves, strict=True):
        assert annotated.move == move and annotated.exact
        mover = state.to_move
        assert mover is not None and annotated.player is mover
        before = _solved(game, state)
        state.play(move)
        after = state.margin if state.is_over else _solved(game, state)
        loss = max(0.0, (before - after) * (1 if mover is Player.BLACK else -1))
        assert annotated.loss == loss
        assert (annotated.judgement is Judgement.BEST) == (loss == 0)
    data = review.to_json()
    assert set(data["moves"][0]) >= {
        "ply", "player", "move", "value_before", "best_moves", "best_value", "value_after",
        "loss", "exact", "judgement", "principal_variation",
    }
    black = data["players"]["black"]
    assert black["name"] == "Ann" and black["moves"] == len(moves[::2])


def _unequal_moves(game: Game, analyst: Analyst) -> tuple[State, PositionAnalysis] | None:
    """The first position of a random game of ``game`` whose moves are not all as good."""
    walk = game.new_state()
    for move in [*random_game(game, 11), None]:
        found = analyst.analyse(walk, Limit(seconds=30))
        if found.move_values and len(set(found.move_values.values())) > 1:
            return walk, found
        if move is None:
            return None
        walk.play(move)
    return None


@pytest.mark.parametrize("name", sorted(plugins()))
def test_the_worst_move_is_judged_worse_than_best(name: str, exact: ExactValues) -> None:
    """In the first position of a random game where the moves are not all as good (on the
    game's smallest example variant that has one: on some, every move is as good), the worst
    move is judged by what it gives away, exactly."""
    plugin = plugins()[name]
    examples = sorted(
        (plugin.make(options) for options in plugin.tooling.variant_examples or ({},)),
        key=lambda game: game.num_actions,
    )
    found = next(
        (
            unequal for game in examples
            if plugin.solving is not None and plugin.solving.small(game)
            and (unequal := _unequal_moves(game, Analyst(game, exact))) is not None
        ),
        None,
    )
    assert found is not None, f"no small example of {name} has a move worse than another"
    walk, analysis = found
    mover = walk.to_move
    assert mover is not None and analysis.move_values is not None
    sign = 1 if mover is Player.BLACK else -1
    values = analysis.move_values
    worst = min(values, key=lambda move: sign * values[move])
    review = review_game(Analyst(walk.game, exact), walk, [worst], Limit(seconds=30))
    assert review.reviewed[0].judgement is not Judgement.BEST
    assert review.reviewed[0].loss == sign * (analysis.value.black - values[worst]) > 0


def test_ctrl_c_keeps_the_moves_reviewed(exact: ExactValues) -> None:
    game = GAMES[0]
    moves = random_game(game, 3)

    def interrupt(done: int, total: int) -> None:
        if done == 3:
            raise KeyboardInterrupt

    review = review_game(Analyst(game, exact), game.new_state(), moves, Limit(seconds=30),
                         progress=interrupt)
    assert not review.complete
    # from the end back: the last two moves had both their positions analysed
    assert [m.ply for m in review.reviewed] == [len(moves) - 1, len(moves)]


def test_a_position_too_hard_for_the_limit_gets_an_estimate(exact: ExactValues) -> None:
    plugin = min(
        (p for p in plugins().values() if p.fast_twin is not None), key=lambda p: p.tooling.order
    )
    game = plugin.make()
    state = game.new_state()
    found = Analyst(game, exact).analyse(state, Limit(seconds=0.2))
    assert not found.value.exact, "the default board solved in 0.2 s: choose a harder one"
    assert found.source == "engine" and len(found.best_moves) == 1
    assert found.principal_variation


# --- puzzles --------------------------------------------------------------------------------


def _a_puzzle(exact: ExactValues) -> Puzzle | None:
    for game in GAMES:
        analyst = Analyst(game, exact)
        for puzzle in find_puzzles(analyst, 1, seed=2, limit=Limit(seconds=10), max_games=20):
            return puzzle
    return None


def test_puzzles_have_one_answer_and_refute_every_other_move(
    exact: ExactValues, tmp_path: Path
) -> None:
    puzzle = _a_puzzle(exact)
    assert puzzle is not None, "no puzzle in 20 games of any small variant"
    state = puzzle.state()
    mover = state.to_move
    assert mover is puzzle.to_move and mover is not None
    sign = 1 if mover is Player.BLACK else -1
    best = max(sign * value for value in puzzle.move_values.values())
    assert [m for m, v in puzzle.move_values.items() if sign * v == best] == [puzzle.answer]
    assert sign * puzzle.value >= 0 and puzzle.goal.startswith(mover.name.title() + " to play")
    assert set(puzzle.refutations) == set(state.legal_moves()) - {puzzle.answer}
    assert 1 <= puzzle.difficulty <= 5
    path = save_puzzle(puzzle, tmp_path)
    (tmp_path / "not-a-puzzle.json").write_text("{}")
    loaded = load_collection(tmp_path, make_game)
    assert [p.to_json() for p in loaded] == [puzzle.to_json()]
    assert path.stem == puzzle.key


def test_a_puzzle_record_that_lies_is_refused(exact: ExactValues, tmp_path: Path) -> None:
    puzzle = _a_puzzle(exact)
    assert puzzle is not None
    record: dict[str, Any] = puzzle.to_record()
    wrong = next(iter(puzzle.refutations))
    record["puzzle"]["refutations"] = {
        puzzle.game.format_move(wrong): [puzzle.game.format_move(puzzle.answer)]
    }
    with pytest.raises(RecordError):
        Puzzle.from_record(record, make_game)
    record = puzzle.to_record()
    record["puzzle"]["difficulty"] = 99
    with pytest.raises(RecordError):
        Puzzle.from_record(record, make_game)


def test_no_puzzle_where_there_is_no_choice(exact: ExactValues) -> None:
    game = GAMES[0]
    analyst = Analyst(game, exact)
    state = game.new_state()
    found = analyst.analyse(state, Limit(seconds=30))
    found.best_moves = found.best_moves[:1] * 2
    assert puzzle_of(analyst, state, found, Limit(seconds=5)) is None


def test_where_the_komi_only_shifts_margins_one_entry_serves_every_komi(tmp_path: Path) -> None:
    from agon.core.plugin import KomiRule

    shifting = [
        (plugin, game) for plugin in plugins().values() for game in GAMES
        if game.name == plugin.name and plugin.solving is not None
        and plugin.solving.without_komi is not None
        and plugin.solving.komi_rule(game) is not KomiRule.SEARCHED
        and any(option.name == "komi" for option in plugin.game.option_specs)
    ]
    assert shifting, "no registered game's komi only shifts margins"
    for plugin, game in shifting:
        with_komi = plugin.make({**game.options(), "komi": game.komi + 2})
        store = Store(tmp_path / f"{plugin.name}.sqlite", writable=True)
        state = with_komi.new_state()
        moves = state.legal_moves()
        store.put(with_komi, state, Entry(1.0, (moves[0],), dict.fromkeys(moves, 1.0)))
        other = game.parse_position(state.position())
        found = store.get(game, other)
        assert found is not None and found.value == 3.0
        assert found.move_values == dict.fromkeys(moves, 3.0)
        store.close()
