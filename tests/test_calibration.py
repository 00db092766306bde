"""Calibrated levels: ratings chained from an anchor, the levels chosen by them, the files that
hold them, ``agon calibrate``, and the arena's lobby and seats that use them."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agon.cli import app
from agon.core.errors import AgonError
from agon.games import make_game
from agon.search.match import MoveTimes, run_match
from agon.study import calibration
from agon.study.calibration import (
    MIN_STEP,
    CalibratedEntry,
    CalibrationRequest,
    Pairing,
    Rating,
    calibrate,
    calibration_for,
    chosen_ladder,
    pairing_games_file,
    ratings_of,
    read_calibrations,
    write_calibrations,
)
from agon.web import levels

SMALL = {"size": "3x3"}
NO_TIMES = {"moves": 0, "mean": None, "p99": None, "max": None}


def pairing(a: str, b: str, wins: int, draws: int, losses: int) -> Pairing:
    """A's wins, draws and losses against B."""
    times = {"moves": 10, "mean": 0.5, "p99": 0.9, "max": 1.0}
    return Pairing(a, b, wins + draws + losses, wins, draws, losses, 0.0, times, times)


def rating(spec: str, elo: float) -> Rating:
    return Rating(spec, elo, elo - 50, elo + 50, None, None)


@pytest.fixture
def levels_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A levels file named by $AGON_LEVELS, read afresh by each test."""
    path = tmp_path / "levels.json"
    monkeypatch.setenv(calibration.LEVELS_ENV, str(path))
    calibration._calibrations_in.cache_clear()
    yield path
    calibration._calibrations_in.cache_clear()


def write_entry(path: Path, game: str, options: dict[str, Any], *pairings: Pairing) -> None:
    path.write_text(write_calibrations([CalibratedEntry(game, options, pairings, {})]))


# --- ratings ------------------------------------------------------------------------------------


def test_an_even_match_is_no_step_and_a_lost_one_a_step_down() -> None:
    even = pairing("a", "b", 5, 10, 5).b_over_a()
    assert even[0] == pytest.approx(0.0) and 0 < even[1] == pytest.approx(even[2])
    assert pairing("a", "b", 15, 0, 5).b_over_a()[0] == pytest.approx(-190.8, abs=0.1)


def test_a_sweep_is_half_a_game_short_and_open_on_its_side() -> None:
    estimate, below, above = pairing("a", "b", 0, 0, 20).b_over_a()
    assert estimate == pytest.approx(-400 * math.log10(1 / 0.975 - 1))
    assert above == math.inf and 0 < below < estimate
    estimate, below, above = pairing("a", "b", 20, 0, 0).b_over_a()
    assert estimate < 0 and below == math.inf and above > 0


def test_ratings_chain_from_the_anchor_and_their_intervals_widen() -> None:
    ratings = ratings_of([pairing("random", "greedy", 5, 0, 15),
                          pairing("greedy", "mcts:8", 5, 10, 5)])
    assert [r.spec for r in ratings] == ["random", "greedy", "mcts:8"]
    assert ratings[0].elo == 0 and ratings[0].low == ratings[0].high == 0
    assert ratings[1].elo == pytest.approx(190.8, abs=0.1)
    assert ratings[2].elo == pytest.approx(ratings[1].elo)
    width = [r.high - r.low for r in ratings if r.high is not None and r.low is not None]
    assert width[0] < width[1] < width[2]
    # the time a move: the mean over its matches, the longest p99
    assert ratings[1].seconds_mean == 0.5 and ratings[1].seconds_p99 == 0.9


def test_a_sweep_below_leaves_every_rating_above_it_open() -> None:
    ratings = ratings_of([pairing("random", "greedy", 0, 0, 20),
                          pairing("greedy", "mcts:8", 10, 0, 10)])
    assert ratings[1].high is None and ratings[2].high is None
    assert ratings[2].low is not None and ratings[2].low < ratings[2].elo


# --- choosing the levels ------------------------------------------------------------------------


def test_the_levels_are_the_anchor_the_top_and_even_steps_between() -> None:
    ladder = [rating(spec, elo) for spec, elo in (
        ("random", 0), ("greedy", 100), ("m8", 250), ("m32", 420), ("m128", 500),
        ("m512", 760), ("m2048", 900), ("top", 1000))]
    chosen = [r.spec for r in chosen_ladder(ladder)]
    assert chosen == ["random", "m8", "m128", "m512", "top"]


def test_levels_not_measurably_apart_are_left_out() -> None:
    ladder = [rating(spec, elo) for spec, elo in (
        ("random", 0), ("greedy", 20), ("m8", 500), ("m32", 520), ("top", 640))]
    chosen = chosen_ladder(ladder)
    assert [r.spec for r in chosen] == ["random", "m8", "top"]
    assert all(upper.elo - lower.elo >= MIN_STEP for lower, upper in itertools.pairwise(chosen))
    # nothing measurably stronger than the anchor: the strongest alone
    flat = [rating("random", 0), rating("greedy", 10), rating("top", 20)]
    assert [r.spec for r in chosen_ladder(flat)] == ["top"]


def test_the_levels_keep_the_pools_order() -> None:
    # a weaker agent later in the pool is never chosen above a stronger one before it
    ladder = [rating(spec, elo) for spec, elo in (
        ("random", 0), ("mid", 700), ("odd", 300), ("top", 1000))]
    chosen = chosen_ladder(ladder)
    assert {"mid", "odd"} - {r.spec for r in chosen}  # not both: odd is below mid
    assert [ladder.index(r) for r in chosen] == sorted(ladder.index(r) for r in chosen)
    assert [r.elo for r in chosen] == sorted(r.elo for r in chosen)


# --- playing a calibration ----------------------------------------------------------------------


def test_a_match_reports_how_long_each_side_took_a_move() -> None:
    report = run_match(make_game("alternator", SMALL), "random", "greedy", 2, seed=1)
    for summary in report.games:
        a_moves, b_moves = len(summary.a_seconds), len(summary.b_seconds)
        assert a_moves + b_moves == summary.moves and abs(a_moves - b_moves) <= 1
        assert all(seconds >= 0 for seconds in (*summary.a_seconds, *summary.b_seconds))
    times = report.to_json()["a_seconds"]
    assert times["moves"] == sum(len(g.a_seconds) for g in report.games)
    assert times["mean"] <= times["p99"] <= times["max"]


def test_move_times_take_the_99th_percentile_by_nearest_rank() -> None:
    times = MoveTimes.of([float(n) for n in range(1, 201)])
    assert (times.moves, times.mean, times.p99, times.longest) == (200, 100.5, 198.0, 200.0)
    assert MoveTimes.of([]).to_json() == NO_TIMES


def test_a_calibration_plays_each_pair_of_neighbours_and_resumes(tmp_path: Path) -> None:
    kept = tmp_path / "checkpoint.json"
    request = CalibrationRequest(make_game("alternator", SMALL), ("random", "greedy", "mcts:30"),
                                 games=2, seed=3)
    played: list[Any] = []
    done = calibrate(request, kept, lambda pairing, game: played.append(game or pairing))
    assert done.complete and done.resumed == 0 and len(played) == 4
    assert [(p.a, p.b, p.games) for p in done.pairings] == [
        ("random", "greedy", 2), ("greedy", "mcts:30", 2)]
    again: list[Any] = []
    resumed = calibrate(request, kept, lambda pairing, game: again.append(game or pairing))
    assert resumed.resumed == 2 and again == resumed.pairings == done.pairings
    other = CalibrationRequest(request.game, request.pool, games=2, seed=4)
    assert calibrate(other, kept, None).resumed == 0  # another calibration's checkpoint


def test_a_stopped_calibration_keeps_the_pairings_finished(tmp_path: Path) -> None:
    kept = tmp_path / "checkpoint.json"
    request = CalibrationRequest(make_game("alternator", SMALL), ("random", "greedy", "mcts:30"),
                                 games=2, seed=3)
    games = 0

    def stop_in_the_second_pairing(pairing: Pairing | None, game: Any) -> None:
        nonlocal games
        games += 1
        if games == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        calibrate(request, kept, stop_in_the_second_pairing)
    assert [p["b"] for p in json.loads(kept.read_text())["pairings"]] == ["greedy"]
    assert calibrate(request, kept, None).resumed == 1


def test_a_stopped_calibration_goes_on_from_the_games_of_the_pairing_under_way(
    tmp_path: Path,
) -> None:
    kept = tmp_path / "checkpoint.json"
    request = CalibrationRequest(make_game("alternator", SMALL), ("random", "greedy", "mcts:30"),
                                 games=3, seed=3)
    whole = calibrate(request, tmp_path / "whole.json")
    heard: list[Any] = []

    def stop_in_the_second_pairing(pairing: Pairing | None, game: Any) -> None:
        heard.append(game)
        if len(heard) == 5:  # (two games of the second pairing played)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        calibrate(request, kept, stop_in_the_second_pairing)
    games_file = pairing_games_file(kept, request, 1)
    assert len(games_file.read_text().splitlines()) == 1 + 2
    played: list[Any] = []
    done = calibrate(request, kept, lambda pairing, game: played.append(game or pairing))
    def results(pairings: list[Pairing]) -> list[tuple[Any, ...]]:
        return [(p.a, p.b, p.wins, p.draws, p.losses, p.mean_margin, p.b_seconds["moves"])
                for p in pairings]

    assert done.complete and results(done.pairings) == results(whole.pairings)
    # the first pairing taken whole, the second's two games from its file, one game played
    assert [type(item).__name__ for item in played] == ["Pairing", *["GameSummary"] * 3]
    assert [item.number for item in played[1:]] == [1, 2, 3]
    assert not games_file.exists()
    games_file.write_text("games of mcts:30 before a change to it\n")
    again: list[Any] = []
    calibrate(request, kept, lambda pairing, game: again.append(game or pairing),
              again=("mcts:30",))
    assert [type(item).__name__ for item in again] == ["Pairing", *["GameSummary"] * 3]
    assert not games_file.exists()  # (a pairing played again starts from no games)


def test_a_calibration_plays_again_the_pairings_of_the_agents_named(tmp_path: Path) -> None:
    kept = tmp_path / "checkpoint.json"
    request = CalibrationRequest(make_game("alternator", SMALL),
                                 ("random", "greedy", "mcts:30", "mcts:60", "mcts:90"), games=2,
                                 seed=3)
    first = calibrate(request, kept)
    stored = json.loads(kept.read_text())["pairings"]
    stored[0]["mean_margin"] = stored[3]["mean_margin"] = 99.0  # (marks those kept)
    kept.write_text(json.dumps({**json.loads(kept.read_text()), "pairings": stored}))
    played: list[Any] = []
    again = calibrate(request, kept, lambda pairing, game: played.append(game or pairing),
                      again=("mcts:30",))
    # mcts:30's two pairings played again, in the ladder's order between the two kept
    assert again.resumed == 2 and again.complete
    assert [p.mean_margin for p in again.pairings][::3] == [99.0, 99.0]
    def results(pairings: list[Pairing]) -> list[tuple[Any, ...]]:
        return [(p.a, p.b, p.wins, p.draws, p.losses, p.mean_margin) for p in pairings]

    assert results(again.pairings[1:3]) == results(first.pairings[1:3])  # (the same games)
    assert [type(item).__name__ for item in played] == [
        "Pairing", *["GameSummary"] * 4, "Pairing"]
    with pytest.raises(AgonError, match=r"mcts:9 is not in it \(random, greedy, mcts:30"):
        calibrate(request, kept, again=("mcts:9",))


def test_a_calibration_stopped_while_played_again_goes_on_without_it(tmp_path: Path) -> None:
    kept = tmp_path / "checkpoint.json"
    request = CalibrationRequest(make_game("alternator", SMALL), ("random", "greedy", "mcts:30"),
                                 games=2, seed=3)
    calibrate(request, kept)

    def stop(pairing: Pairing | None, game: Any) -> None:
        if game is not None:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        calibrate(request, kept, stop, again=("Random",))  # (in any case, as agents are named)
    # the pairing of the agent played again is gone, the other kept in its place
    assert [p and p["b"] for p in json.loads(kept.read_text())["pairings"]] == [None, "mcts:30"]
    played: list[Any] = []
    done = calibrate(request, kept, lambda pairing, game: played.append(game or pairing))
    assert done.resumed == 1 and done.complete and len(played) == 3


def test_a_calibration_needs_two_agents(tmp_path: Path) -> None:
    request = CalibrationRequest(make_game("alternator", SMALL), ("random",), games=2)
    with pytest.raises(AgonError, match="at least two agents"):
        calibrate(request, tmp_path / "checkpoint.json")


# --- files ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "words"), [
    ("not json", "is not a file of calibrated levels"),
    ('{"format": 2, "entries": []}', "of format 1"),
    ('{"format": 1, "entries": [{"game": "alak", "options": {}, "pairings": []}]}',
     "not a calibration"),
    ('{"format": 1, "entries": [{"game": "alak", "options": {}, "pairings": [{"a": "x", '
     '"b": "y", "games": 3, "wins": 1, "draws": 0, "losses": 1, "mean_margin": 0, '
     '"a_seconds": {}, "b_seconds": {}}]}]}', "do not add up"),
])
def test_a_bad_levels_file_is_refused_by_name(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "levels.json"
    path.write_text(text)
    with pytest.raises(AgonError, match=words) as refused:
        read_calibrations(path)
    assert str(path) in str(refused.value)


def test_a_levels_file_is_read_with_a_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "levels.json"
    path.write_text(" " * (calibration.MAX_LEVELS_BYTES + 1))
    with pytest.raises(AgonError, match=r"larger|at most|too"):
        read_calibrations(path)


def test_a_written_file_reads_back_with_its_ratings_and_levels(tmp_path: Path) -> None:
    entry = CalibratedEntry("alak", {"size": 5}, (pairing("random", "greedy", 2, 0, 8),),
                            {"command": "agon calibrate alak --size 5"})
    text = write_calibrations([entry])
    shown = json.loads(text)["entries"][0]
    assert shown["levels"] == ["random", "greedy"]
    assert shown["ratings"][1]["spec"] == "greedy" and shown["ratings"][1]["elo"] > 0
    path = tmp_path / "levels.json"
    path.write_text(text)
    assert read_calibrations(path) == [entry]


# --- the arena's levels ---------------------------------------------------------------------------


def test_a_calibrated_variant_offers_its_levels_by_rating(levels_file: Path) -> None:
    write_entry(levels_file, "alak", {"size": 5, "rules": "baljeu", "edge_capture": True,
                                      "komi": 0.0},
                pairing("random", "greedy", 2, 0, 18), pairing("greedy", "mcts:30", 4, 0, 16))
    game = make_game("alak", {"size": 5})
    offered = levels.offered_levels(game)
    assert [(level.key, level.spec) for level in offered] == [
        ("beginner", "random"), ("easy", "greedy"), ("strongest", "mcts:30")]
    assert all(level.rating is not None for level in offered)
    assert levels.level_spec("easy", game) == "greedy"
    with pytest.raises(AgonError, match=r"not offered on Alak 5.*beginner, easy, strongest"):
        levels.level_spec("medium", game)
    # another variant: the levels that are not rated
    other = make_game("alak", {"size": 7})
    assert calibration_for(other) is None
    assert [level.spec for level in levels.offered_levels(other)] == [
        levels.first_available(level.specs) for level in levels.LEVELS]
    assert all(level.rating is None for level in levels.offered_levels(other))


def test_the_lobby_shows_each_calibrated_levels_rating_and_time(
    levels_file: Path, tmp_path: Path
) -> None:
    from web_fixtures import TestClient, create_app, start_game

    write_entry(levels_file, "alak", make_game("alak", {"size": 5}).options(),
                pairing("random", "greedy", 2, 0, 18), pairing("greedy", "mcts:30", 4, 0, 16))
    with TestClient(create_app(f"sqlite:///{tmp_path / 'arena.db'}", workers=1,
                               executor="thread", warm=False)) as client:
        meta = client.get("/api/meta").json()
        (entry,) = [found for found in meta["calibrated_levels"]["alak"]
                    if found["options"]["size"] == 5]
        assert entry["anchor"] == "random"
        top = entry["levels"][-1]
        assert top["key"] == "strongest" and top["agent"] == "mcts:30"
        assert top["rating"]["elo"] > entry["levels"][1]["rating"]["elo"] > 0
        assert top["seconds"] is None and top["measured_seconds"] == 0.5
        seat, _ = start_game(client, game="alak", options={"size": 5},
                                   opponent="computer", level="strongest", colour="black")
        view = seat.view()
        assert view["players"]["white"]["agent"] == "mcts:30"
        refused = client.post("/api/games", json={
            "game": "alak", "options": {"size": 5}, "opponent": "computer", "level": "hard"})
        assert refused.status_code == 400 and "not offered" in refused.text


# --- the command ----------------------------------------------------------------------------------


def test_agon_calibrate_writes_the_variants_entry(tmp_path: Path) -> None:
    out = tmp_path / "levels.json"
    arguments = ["calibrate", "alternator", "--size", "3x3", "--pool", "random,greedy",
                 "--games", "2", "--out", str(out), "--checkpoint", str(tmp_path / "c.json")]
    result = CliRunner().invoke(app, [*arguments, "--json", "--quiet"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["game"] == "alternator" and shown["written"] == str(out)
    assert shown["provenance"]["command"].startswith("agon calibrate alternator --size 3x3")
    (entry,) = read_calibrations(out)
    assert entry.options == make_game("alternator", SMALL).options()
    text = CliRunner().invoke(app, [*arguments, "--dry-run", "--quiet"])
    assert "ratings (Elo, the anchor random at 0)" in text.stdout
    assert "nothing written" in text.stdout
    again = CliRunner().invoke(app, [*arguments, "--again", "greedy", "--json", "--quiet"])
    assert again.exit_code == 0, again.output
    provenance = json.loads(again.stdout)["provenance"]
    assert provenance["played_again"] == ["greedy"] and provenance["resumed_pairings"] == 0


@pytest.mark.parametrize(("pool", "words"), [
    ("random", "2 to 32 agents"),
    ("random,godlike", "godlike"),
    ("random,greedy --again mcts:8", "mcts:8 is not in it"),
    ("random,greedy,random", "--pool names random twice"),
])
def test_agon_calibrate_refuses_a_bad_pool(tmp_path: Path, pool: str, words: str) -> None:
    result = CliRunner().invoke(app, ["calibrate", "alak", "--size", "3", "--pool", *pool.split(),
                                      "--out", str(tmp_path / "l.json"),
                                      "--checkpoint", str(tmp_path / "c.json")])
    assert result.exit_code == 2 and words in result.output
    assert "Traceback" not in result.output and not (tmp_path / "l.json").exists()
