"""Study at the terminal: `agon analyse` (a record's moves annotated, or one position), the
hints of `agon play` and its review at the end of a game. Every registered game, on its
smallest example variant, so that each position is solved in a moment."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner, Result

from agon.cli import app
from agon.cli.study_commands import hint_text, review_table
from agon.core.game import Game, State
from agon.core.limits import Limit
from agon.core.player import Player
from agon.core.records import GameRecord
from agon.games import make_game, plugins
from agon.study.analysis import Analyst, MoveReview, PositionAnalysis, Review
from agon.study.values import Judgement, Value, judge
from strategies import variant_args

runner = CliRunner()
JUDGEMENTS = {judgement.value for judgement in Judgement}
MOVE_KEYS = {
    "ply", "player", "move", "value_before", "best_moves", "best_value", "value_after", "loss",
    "exact", "judgement", "principal_variation",
}
RAW_FLOAT = re.compile(r"\d\.\d{3,}")
"""A number with more than two decimals: what a player should never be shown."""
LIMIT = "1s"


def agon(*args: str, input: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=input)


def smallest(game_name: str) -> Game:
    """The game's smallest example variant (fewest moves, then shortest games)."""
    found = plugins()[game_name]
    variants: list[Game] = [found.make(options) for options in found.tooling.variant_examples]
    variants = variants or [found.make()]
    return min(variants, key=lambda game: (game.num_actions, found.max_game_length(game)))


GAMES = sorted(plugins())
SMALLEST = {name: smallest(name) for name in GAMES}


def random_game(game: Game, seed: int = 3) -> State:
    state = game.new_state()
    rng = random.Random(seed)
    while not state.is_over:
        state.play(rng.choice(state.legal_moves()))
    return state


def write_record(path: Path, state: State) -> Path:
    GameRecord.from_state(state, {"black": "ann", "white": "bob"}).save(path)
    return path


def analyse_json(*args: str) -> dict[str, Any]:
    result = agon("analyse", *args, "--limit", LIMIT, "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def assert_refused(result: Result, *fragments: str) -> None:
    """A non-zero exit status, nothing on stdout, one line on stderr saying what is wrong."""
    assert result.exit_code in (1, 2), result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for fragment in fragments:
        assert fragment in lines[0]
    assert "Traceback" not in result.output


# --- agon analyse RECORD ----------------------------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
def test_analyse_a_record_as_json(name: str, tmp_path: Path) -> None:
    game = SMALLEST[name]
    final = random_game(game)
    data = analyse_json(str(write_record(tmp_path / "game.json", final)))
    assert data["game"] == game.name and data["variant"] == game.options()
    assert data["complete"] is True
    moves = data["moves"]
    assert [move["ply"] for move in moves] == list(range(1, len(final.history) + 1))
    assert [move["move"] for move in moves] == [game.format_move(m) for m in final.history]
    for move in moves:
        assert set(move) >= MOVE_KEYS
        assert move["player"] in ("black", "white")
        assert move["judgement"] in JUDGEMENTS
        assert move["best_value"] == move["value_before"]
        assert move["loss"] >= 0
        assert move["exact"] is True  # (a tiny board is solved within the limit)
        assert move["best_moves"] and move["principal_variation"]
        assert move["principal_variation"][0] in move["best_moves"]
        if move["judgement"] == "best":
            assert move["loss"] == 0 and move["move"] in move["best_moves"]
    # the last move leaves the game's own result
    assert moves[-1]["value_after"] == final.margin
    players = data["players"]
    assert players["black"]["name"] == "ann" and players["white"]["name"] == "bob"
    assert players["black"]["moves"] + players["white"]["moves"] == len(moves)
    for summary in players.values():
        counted = ("best", "good", "inaccuracies", "mistakes", "blunders")
        assert sum(summary[key] for key in counted) == summary["moves"]
        assert 0 <= summary["accuracy"] <= 100


def test_a_known_blunder_is_judged_a_blunder(tmp_path: Path) -> None:
    """Alternator 2×3, komi 3.5: Black wins by 2.5 with best play (b1-a1 or b3-a3); a1-b1
    throws it away (White then wins by 9.5)."""
    game = make_game("alternator", {"size": "2x3"})
    state = game.new_state()
    for text in ("a1-b1", "b2-a2", "pass", "pass"):
        state.play_text(text)
    data = analyse_json(str(write_record(tmp_path / "blunder.json", state)))
    first = data["moves"][0]
    assert (first["move"], first["player"]) == ("a1-b1", "black")
    assert (first["value_before"], first["value_after"]) == (2.5, -9.5)
    assert first["loss"] == 12 and first["exact"] is True
    assert first["judgement"] == "blunder"
    assert sorted(first["best_moves"]) == ["b1-a1", "b3-a3"]
    assert data["players"]["black"]["blunders"] == 1


@pytest.mark.parametrize("name", GAMES)
def test_the_worst_first_move_is_judged_by_what_it_gives_away(name: str, tmp_path: Path) -> None:
    game = SMALLEST[name]
    start = game.new_state()
    known = Analyst(game).analyse(start, Limit(seconds=30))
    values = known.move_values
    mover = start.to_move
    assert known.value.exact and values is not None and mover is not None
    worst = min(values, key=lambda move: Value(values[move], True).for_player(mover))
    before = known.value.for_player(mover)
    after = Value(values[worst], True).for_player(mover)
    expected = judge(game, before, after, True, before == after)
    state = start.copy()
    state.play(worst)
    data = analyse_json(str(write_record(tmp_path / "worst.json", state)))
    [move] = data["moves"]
    assert move["judgement"] == expected.value and move["exact"] is True
    assert move["loss"] == pytest.approx(max(0.0, before - after))


@pytest.mark.parametrize("name", GAMES)
def test_analyse_a_record_for_people(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                     ) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    game = SMALLEST[name]
    final = random_game(game, seed=5)
    result = agon("analyse", str(write_record(tmp_path / "game.json", final)), "--limit", LIMIT)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert game.description in out
    assert "Judgement" in out and "Accuracy" in out and "Blunders" in out
    assert any(judgement in out for judgement in JUDGEMENTS)
    assert not RAW_FLOAT.search(out)
    assert max(cell_len(line) for line in out.splitlines()) <= 80


def test_the_table_marks_judgements_and_estimates() -> None:
    game = SMALLEST["alternator"]
    start = game.new_state()
    [first, second] = start.legal_moves()[:2]
    after = start.copy()
    after.play(first)
    estimate = PositionAnalysis(Value(3.4567, False), [second], principal_variation=[second],
                                source="engine")
    worse = PositionAnalysis(Value(-6.25, False), [], source="engine")
    review = Review(game, start, [first], {"black": "ann", "white": "bob"})
    review.reviewed.append(MoveReview(1, Player.BLACK, first, estimate, worse, 9.7067,
                                      Judgement.BLUNDER))
    review.complete = True
    from rich.console import Console

    console = Console(width=80, record=True, no_color=True)
    console.print(review_table(review))
    text = console.export_text()
    assert f"{game.format_move(first)}??" in text
    assert "≈+3" in text and "≈−6" in text and "≈10" in text
    assert "blunder" in text and not RAW_FLOAT.search(text)


def test_an_interrupted_review_prints_what_is_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = SMALLEST["alternator"]
    path = write_record(tmp_path / "game.json", random_game(game))
    analyse = Analyst.analyse
    calls = []

    def interrupted_on_the_third(self: Analyst, *args: Any, **kwargs: Any) -> PositionAnalysis:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return analyse(self, *args, **kwargs)

    monkeypatch.setattr(Analyst, "analyse", interrupted_on_the_third)
    result = agon("analyse", str(path), "--limit", LIMIT)
    assert result.exit_code == 130
    assert "Interrupted: 1 of " in result.stdout and "Traceback" not in result.output

    calls.clear()
    result = agon("analyse", str(path), "--limit", LIMIT, "--json")
    assert result.exit_code == 130
    data = json.loads(result.stdout)
    assert data["complete"] is False and len(data["moves"]) == 1
    assert "Interrupted: 1 of " in result.stderr


# --- agon analyse GAME (one position) -----------------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
def test_analyse_a_position(name: str) -> None:
    game = SMALLEST[name]
    start = game.new_state()
    first = game.format_move(start.legal_moves()[0])
    data = analyse_json(*variant_args(game), "--moves", first)
    after = start.copy()
    after.play_text(first)
    assert data["game"] == game.name and data["position"] == after.position()
    assert data["moves"] == [first]
    assert data["exact"] is True and data["source"] in ("store", "solver", "final")
    assert isinstance(data["value_words"], str) and data["value_words"]
    if not after.is_over:
        assert data["best_moves"] and data["principal_variation"]
        assert set(data["move_values"]) == {game.format_move(m) for m in after.legal_moves()}

    again = analyse_json(*variant_args(game), "--position", after.position())
    assert again["value"] == data["value"]

    people = agon("analyse", *variant_args(game), "--moves", first, "--limit", LIMIT)
    assert people.exit_code == 0, people.output
    if not after.is_over:
        assert "Value: best play" in people.stdout and "Best move" in people.stdout
        assert "Line of best play: " in people.stdout
    assert not RAW_FLOAT.search(people.stdout)


# --- bad input ---------------------------------------------------------------------------------


def test_bad_names_and_options_with_a_record_are_refused_in_one_line(tmp_path: Path) -> None:
    """(Records that are not records: tests/test_cli.py, for every command that reads them.)"""
    assert_refused(agon("analyse", "nosuchgame"), "neither a game", "nor a record")
    good = write_record(tmp_path / "good.json", random_game(SMALLEST["alak"]))
    assert_refused(agon("analyse", str(good), "--size", "5"), "is a record")
    assert_refused(agon("analyse", str(good), "--moves", "1"), "is a record")


@pytest.mark.parametrize("name", GAMES)
def test_bad_positions_and_moves_are_refused_in_one_line(name: str) -> None:
    args = variant_args(SMALLEST[name])
    assert_refused(agon("analyse", *args, "--position", "no such position ]["), "bad position")
    assert_refused(agon("analyse", *args, "--moves", "zz-zz9"), "move 1")


@pytest.mark.parametrize(
    "limit", ["2", "fast", "0s", "-1s", "601s", "1000000s", "nan", "1e3s", "5ms", ""]
)
def test_bad_limits_are_refused_in_one_line(limit: str, tmp_path: Path) -> None:
    args = variant_args(SMALLEST["alak"])
    assert_refused(agon("analyse", *args, "--limit", limit), "--limit")
    good = write_record(tmp_path / "good.json", random_game(SMALLEST["alak"]))
    assert_refused(agon("analyse", str(good), "--limit", limit), "--limit")


# --- agon play: hints and the review at the end ------------------------------------------------


def test_a_hint_is_words_never_a_raw_float() -> None:
    game = SMALLEST["alternator"]
    state = game.new_state()
    move = state.legal_moves()[0]
    for black, words in ((-1.60823, "your opponent is better"), (2.71828, "you are better")):
        estimate = PositionAnalysis(Value(black, False), [move], source="engine")
        text = hint_text(state, estimate)
        assert text.startswith(f"Hint: {game.format_move(move)} — about ")
        assert words in text and "estimate" in text
        assert not RAW_FLOAT.search(text)
    exact = PositionAnalysis(Value(2.5, True), [move], source="solver")
    assert hint_text(state, exact).endswith("— best play wins by 2.5 (exact)")
    assert "-" in hint_text(state, exact, ascii_only=True).replace(game.format_move(move), "")


@pytest.mark.parametrize("name", GAMES)
def test_play_hints_say_the_value_in_words(name: str) -> None:
    game = SMALLEST[name]
    result = agon("play", *variant_args(game), "--white", "random", "--seed", "1", "--plain",
                  input="hint\nquit\n")
    assert result.exit_code == 0, result.output
    [hint] = [line for line in result.stdout.splitlines() if "Hint: " in line]
    assert re.search(r"— (best play|about)", hint), hint
    assert hint.endswith(("(exact)", "alpha-beta)"))
    assert not RAW_FLOAT.search(hint)


def test_review_at_the_end_shows_judgements_then_steps_through() -> None:
    moves = ["a1-b1", "b2-a2", "pass", "pass"]
    result = agon("play", "alternator", "--size", "2x3", "--white", "human", "--plain",
                  input="\n".join([*moves, "review", "q", "review", "q", "quit"]) + "\n")
    assert result.exit_code == 0, result.output
    review = result.stdout.split("Game over> review")[1]
    assert "Judgement" in review and "a1-b1??" in review and "blunder" in review
    assert "Accuracy" in review
    assert review.index("Judgement") < review.index("Start")  # then the step through
    assert "Back to the end." in review
    assert "Reviewing 4 moves" in review
    # a second review is the first one again, not analysed anew
    assert result.stdout.count("Reviewing 4 moves") == 1
    assert result.stdout.count("a1-b1??") == 2


@pytest.mark.parametrize("name", GAMES)
def test_review_at_the_end_of_any_game(name: str) -> None:
    game = SMALLEST[name]
    result = agon("play", *variant_args(game), "--black", "random", "--white", "random",
                  "--seed", "2", "--plain", input="review\nq\nquit\n")
    assert result.exit_code == 0, result.output
    review = result.stdout.split("Game over> review")[1]
    assert "Judgement" in review and "Accuracy" in review
    assert any(f"  {judgement} " in review for judgement in JUDGEMENTS)
    assert not RAW_FLOAT.search(review)


def test_ctrl_c_stops_a_hint_or_a_review_not_the_game(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(self: Analyst, *args: Any, **kwargs: Any) -> PositionAnalysis:
        raise KeyboardInterrupt

    monkeypatch.setattr(Analyst, "analyse", interrupted)
    result = agon("play", "alternator", "--size", "2x3", "--white", "human", "--plain",
                  input="hint\na1-b1\nb2-a2\npass\npass\nreview\nq\nquit\n")
    assert result.exit_code == 0, result.output
    assert "No hint: stopped." in result.stdout
    assert "Interrupted: no move of 4 reviewed." in result.stdout
    assert "Back to the end." in result.stdout


def test_a_terminal_game_s_hints_keep_a_player_s_tables_and_an_analysis_the_solver_s(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Beside the computer's own solver, a terminal game's hints had tables of a gigabyte on
    a long board; `agon analyse`, which may think as long as the user likes, keeps its own."""
    from agon.cli.play_commands import Session
    from agon.cli.study_commands import new_analyst
    from agon.solve.facts import default_table_bits
    from agon.solve.solver import PLAYER_TABLE_BYTES

    monkeypatch.setenv("AGON_HOME", str(tmp_path))
    game = make_game("alak", {"size": 15, "rules": "baljeu"})
    state = game.new_state()
    session = Session(state, {}, None, None, None, state, None)  # type: ignore[arg-type]
    solver = session.analyst.solver
    tables = (solver.table, solver.summaries, solver.hints, solver.numbers)
    assert sum(table.nbytes for table in tables) <= PLAYER_TABLE_BYTES
    assert new_analyst(game).solver.table.shape[0] == 2 << default_table_bits(game)
