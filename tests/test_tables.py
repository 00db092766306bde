"""`agon tables`: the Markdown it writes from the saved results, resuming, and only a short
run for bounds on the larger boards of a family once one runs out of time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agon.cli import app
from agon.core.errors import AgonError
from agon.core.results import Job
from agon.games.alak import Alak, AlakRules
from agon.games.alak.results import DRANGE_LINES
from agon.games.alternator import Alternator
from agon.solve.quality import QualityReport
from agon.solve.tables import runner as tables_runner
from agon.solve.tables.report import render
from agon.solve.tables.runner import generate_tables

ENOUGH_SECONDS = 600.0
"""The time limit of a test's real solves: these boards are solved in milliseconds, but a
loaded machine whose workers first load their kernels must not turn them into timeouts."""

runner = CliRunner()

RESULTS: dict[str, Any] = {
    "alternator-2x2": {"status": "solved", "value": 4.0, "best_moves": ["b1-b2"],
                       "nodes": 30, "seconds": 0.01},
    "alternator-2x10": {"status": "solved", "value": 2.0, "best_moves": ["b1-a1"],
                        "nodes": 3_222_117_324, "seconds": 2695.16, "table_bits": 26},
    "alternator-4x5": {"status": "timeout", "max_seconds": 300, "lower": -20.0, "upper": 20.0,
                       "nodes": 10},
    "alak-baljeu-3": {"status": "solved", "value": 1.0, "best_moves": ["2"],
                      "moves": {"1": -1.0, "2": 1.0, "3": -1.0}, "nodes": 26, "seconds": 0.0},
    "alak-baljeu-4": {"status": "solved", "value": -2.0, "best_moves": ["1", "4"],
                      "openings_max_seconds": 60, "nodes": 57, "seconds": 0.01},
    "alak-baljeu-5": {"status": "timeout", "max_seconds": 30, "lower": -5.0, "upper": 5.0,
                      "nodes": 99},
    "alak-baljeu-10": {"status": "solved", "value": 0.0, "best_moves": ["1", "10"],
                       "moves": {"1": 0.0, "10": 0.0, "2": -1.0, "3": -1.0, "4": -1.0,
                                 "5": -1.0, "6": -1.0, "7": -1.0, "8": -1.0, "9": -1.0},
                       "nodes": 9, "seconds": 0.1},
    "alak-traditional-9": {"status": "timeout", "max_seconds": 60, "lower": float("-inf"),
                           "upper": float("inf"), "nodes": 99},
    "alak-tromp-taylor-8": {"status": "timeout", "max_seconds": 30, "lower": 3.0, "upper": 3.0,
                            "nodes": 99},
    "claim-traditional-6": {"status": "solved", "value": 0.0, "best_moves": ["2"],
                            "nodes": 9, "seconds": 0.1},
}


def test_the_markdown_shows_values_openings_bounds_and_claims() -> None:
    text = render(RESULTS)
    assert "| 2×2 | +4 | 4 | 3.5 | 4.5 | b1-b2 | 30 | 0.01 |" in text
    assert "| 2×10 | +2 | 2 | 1.5 | 2.5 | b1-a1 | 3,222,117,324 | 2695.16 (table 2^26) |" in text
    assert "| 4×5 | not solved in 300 s (value in [-20, 20]) |" in text
    assert "| 3 | +1 | 1:-1 **2:+1** 3:-1 | 26 | 0.00 |" in text
    assert "**1** **4** best (the other openings' values not solved in 60 s)" in text
    assert "| 5 | not solved in 30 s (value in [-5, 5]) |" in text
    assert "| 6 | not attempted |" in text
    assert "**1:0** 2:-1 3:-1 4:-1 5:-1 6:-1 7:-1 8:-1 9:-1 **10:0** |" in text  # board order
    assert "| 9 | not solved in 60 s (no bound proven) |" in text
    # a value proven before the time ran out counts against a published table
    assert "| 8 | 3 / 1 / -1 | +3 | yes |" in text  # (its openings not known)
    assert "| 9 | 0 / 0 / -2 | not solved | |" in text
    assert "| 10 | 1 | in [1, 10] | not contradicted |" in render(
        {"alak-tromp-taylor-10": {"status": "timeout", "max_seconds": 9, "lower": 1.0,
                                  "upper": 10.0, "nodes": 9}}
    )
    assert "value 0; the openings not all solved" in text
    # openings out of time: what was proven of each, the best worth the value, the rest "?"
    assert (
        "| 6 | 0 | **1:0** 2:-2 3:≤-1 4:≥-4 5:-3…-1 **6:0** (not all solved in 60 s) | 9 | 0.10 |"
    ) in render({"alak-baljeu-6": {
        "status": "solved", "value": 0.0, "best_moves": ["1", "6"], "openings_max_seconds": 60,
        "move_bounds": {"1": [0.0, 0.0], "2": [-2.0, -2.0], "3": [None, -1.0], "4": [-4.0, None],
                        "5": [-3.0, -1.0]},
        "nodes": 9, "seconds": 0.1,
    }})
    # a value proven before its best moves ran out of time is shown with its own cost
    assert "| 8 | value +3; its moves not all solved in 30 s |" in text
    assert (
        "value +3 (proven in 12.5 s, 4,000 nodes); its moves not all solved in 30 s "
        "(best so far: 2, 7; not best: 1)"
    ) in render({"alak-tromp-taylor-8": {
        **RESULTS["alak-tromp-taylor-8"], "value_seconds": 12.5, "value_nodes": 4000,
        "best_so_far": ["2", "7"], "not_best": ["1"],
    }})
    # going on from earlier runs' tables, that cost is this run's (the earlier work beside it)
    assert (
        "value +3 (proven in 0.0 s, 2 nodes of this run); its moves not all solved in 30 s "
        "(going on from 9 nodes, 5 s over 1 run before)"
    ) in render({"alak-tromp-taylor-8": {
        **RESULTS["alak-tromp-taylor-8"], "value_seconds": 0.0, "value_nodes": 2,
        "earlier": {"nodes": 9, "runs": 1, "seconds": 5.0},
    }})
    # and so are the moves' bounds, where the job stopped while searching them
    assert "(value in [1, 2]; moves so far: 1:≤-3 2:+1…+2 3:-2 pass:≥-2) |" in render({
        "alak-tromp-taylor-12": {
            "status": "timeout", "max_seconds": 30, "lower": 1.0, "upper": 2.0, "nodes": 9,
            "move_bounds": {"pass": [-2.0, None], "3": [-2.0, -2.0], "2": [1.0, 2.0],
                            "1": [None, -3.0]},
        }
    })
    assert "not measured yet" in text


def test_drange_s_second_and_third_openings_are_compared_and_a_disagreement_shown() -> None:
    def solved(moves: dict[str, float]) -> dict[str, Any]:
        best = max(moves.values())
        return {"status": "solved", "value": best, "nodes": 9, "seconds": 0.1, "moves": moves,
                "best_moves": [move for move, value in moves.items() if value == best]}

    line = {"moves": ["5", "2", "pass", "pass"], "end": "both players passed", "margin": 0.0}
    text = render({
        # docs/results.md: mirror images count once, a pass ranks after a placement its equal
        "alak-tromp-taylor-6": solved({"1": -6.0, "2": 1.0, "3": -1.0, "4": -1.0, "5": 1.0,
                                       "6": -6.0, "pass": -1.0}),
        "alak-tromp-taylor-9": solved({"1": -4.0, "2": 0.0, "3": -1.0, "4": 0.0, "5": 0.0,
                                       "6": 0.0, "7": -1.0, "8": 0.0, "9": -4.0, "pass": 0.0}),
        "claim-drange-9": {"status": "solved", "lines": {"5": line}},
    })
    assert "| 6 | 1 / -1 / -1 | +1 / -1 / (-1) | yes |" in text
    assert "| 9 | 0 / 0 / -2 | 0 / 0 / 0 | **no**: third-best |" in text
    assert (
        "1 × 9: Drange's third-best opening is worth -2, here 0 (after 5). The openings here: "
        "2: 0, 4: 0, 5: 0, pass: 0, 3: -1, 1: -4."
    ) in text
    assert "- after 5: `5 2 pass pass` — both players passed, Black's margin 0" in text


def test_the_drange_claim_job_plays_lines_after_the_disputed_openings() -> None:
    job = next(job for job in tables_runner.jobs() if job.key == "claim-drange-9")
    assert job.game == Alak(9, AlakRules.TROMP_TAYLOR)
    assert job.lines_after == DRANGE_LINES[9] and job.lines_only
    # (with moves solved apart too: the lines need no solve of the position itself)
    record = tables_runner.solve_job(job, ENOUGH_SECONDS, None, 12, move_jobs=2)
    assert record["status"] == "solved" and "value" not in record
    assert "moves_apart" not in record
    assert {first: line["margin"] for first, line in record["lines"].items()} == {
        "2": 0.0, "4": 0.0, "5": 0.0
    }


def test_a_value_that_disagrees_with_drange_s_is_shown_with_its_line() -> None:
    line = {"moves": ["4", "2", "pass", "pass"], "end": "both players passed", "margin": 2.0}
    text = render({
        "alak-tromp-taylor-12": {"status": "solved", "value": 2.0, "best_moves": ["4"],
                                 "nodes": 9, "seconds": 0.1, "openings_max_seconds": 9},
        "claim-drange-12": {"status": "solved", "lines": {"4": line}},
    })
    assert "| 12 | 1 | +2 | **no** |" in text
    assert "1 × 12: Drange gives +1, here the value is +2." in text
    assert "- after 4: `4 2 pass pass` — both players passed, Black's margin +2" in text


def _jobs() -> list[Job]:
    return [
        Job("alternator-1x2", Alternator(1, 2)),
        Job("alak-baljeu-2", Alak(2), openings=True),
        Job("alak-baljeu-3", Alak(3), openings=True),
        Job("alak-tromp-taylor-2", Alak(2, AlakRules.TROMP_TAYLOR), openings=True),
    ]


def test_tables_are_solved_saved_and_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tables_runner, "jobs", _jobs)
    out = tmp_path / "results.md"
    generate_tables(out, ENOUGH_SECONDS, fresh=False, progress=None)
    saved = json.loads(out.with_suffix(".json").read_text())["jobs"]
    assert saved["alternator-1x2"]["value"] == 2
    assert saved["alak-baljeu-3"]["moves"] == {"1": -1, "2": 1, "3": -1}
    assert saved["alak-tromp-taylor-2"]["best_moves"] == ["pass"]
    assert "| 3 | +1 | 1:-1 **2:+1** 3:-1 |" in out.read_text()

    def no_solving(*_: object) -> dict[str, Any]:
        raise AssertionError("a saved result was solved again")

    monkeypatch.setattr(tables_runner, "solve_job", no_solving)
    out.unlink()
    generate_tables(out, ENOUGH_SECONDS, fresh=False, progress=None)
    assert "| 3 | +1 | 1:-1 **2:+1** 3:-1 |" in out.read_text()


@pytest.mark.parametrize(
    ("lower", "upper", "shown"),
    [(0.0, float("inf"), "value ≥ 0"), (float("-inf"), -2.0, "value ≤ -2"),
     (-1.0, 1.0, "value in [-1, 1]"), (float("-inf"), float("inf"), "no bound proven")],
)
def test_a_board_out_of_time_shows_the_sides_proven(lower: float, upper: float, shown: str) -> None:
    record = {"status": "timeout", "max_seconds": 30, "lower": lower, "upper": upper, "nodes": 9}
    assert f"| 5 | not solved in 30 s ({shown}) |" in render({"alak-baljeu-5": record})


def test_a_side_with_no_bound_is_saved_as_null_and_read_back_as_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tables_runner, "jobs", lambda: iter([Job("alak-baljeu-3", Alak(3))]))

    def unbounded(job: Job, max_seconds: float, *_: object) -> dict[str, Any]:
        return {"status": "timeout", "max_seconds": max_seconds, "lower": float("-inf"),
                "upper": float("inf"), "nodes": 1}

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    monkeypatch.setattr(tables_runner, "solve_job", unbounded)
    out = tmp_path / "results.md"
    generate_tables(out, 5.0, fresh=False, progress=None)
    saved = json.loads(out.with_suffix(".json").read_text(), parse_constant=refuse)["jobs"]
    assert saved["alak-baljeu-3"]["lower"] is None and saved["alak-baljeu-3"]["upper"] is None
    assert "| 3 | not solved in 5 s (no bound proven) |" in out.read_text()
    out.unlink()
    # (no more time: it is read back, not rerun)
    monkeypatch.setattr(tables_runner, "solve_job", refuse)
    generate_tables(out, 5.0, fresh=False, progress=None)
    assert "| 3 | not solved in 5 s (no bound proven) |" in out.read_text()


def test_after_a_timeout_the_larger_boards_of_its_family_get_a_short_run_for_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tables_runner, "jobs", _jobs)
    monkeypatch.setattr(tables_runner, "BOUNDS_SECONDS", 2.0)
    runs: list[tuple[str, float]] = []

    def out_of_time(job: Job, max_seconds: float, *_: object) -> dict[str, Any]:
        runs.append((job.key, max_seconds))
        return {"status": "timeout", "max_seconds": max_seconds, "lower": -1.0, "upper": 1.0,
                "nodes": 1}

    monkeypatch.setattr(tables_runner, "solve_job", out_of_time)
    generate_tables(tmp_path / "results.md", 5.0, fresh=False, progress=None)
    assert runs == [("alternator-1x2", 5.0), ("alak-baljeu-2", 5.0), ("alak-baljeu-3", 2.0),
                    ("alak-tromp-taylor-2", 5.0)]
    assert "| 3 | not solved in 2 s (value in [-1, 1]) |" in (tmp_path / "results.md").read_text()
    runs.clear()
    generate_tables(tmp_path / "results.md", 5.0, fresh=False, progress=None)
    assert runs == []  # no more time than last time: nothing to try again
    generate_tables(tmp_path / "results.md", 10.0, fresh=False, progress=None)
    # the bounds run had all the time a bounds run gets
    assert runs == [("alternator-1x2", 10.0), ("alak-baljeu-2", 10.0),
                    ("alak-tromp-taylor-2", 10.0)]


def test_a_board_whose_value_is_proven_but_not_its_best_moves_does_not_give_up_its_family(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tables_runner, "jobs", _jobs)
    runs: list[tuple[str, float]] = []

    def value_only(job: Job, max_seconds: float, *_: object) -> dict[str, Any]:
        runs.append((job.key, max_seconds))
        return {"status": "timeout", "max_seconds": max_seconds, "lower": 0.0, "upper": 0.0,
                "nodes": 1}

    monkeypatch.setattr(tables_runner, "solve_job", value_only)
    generate_tables(tmp_path / "results.md", 5.0, fresh=False, progress=None)
    assert ("alak-baljeu-3", 5.0) in runs


def test_only_the_selected_jobs_are_solved_and_fresh_drops_only_theirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tables_runner, "jobs", _jobs)
    runs: list[str] = []

    def solved(job: Job, max_seconds: float, *_: object) -> dict[str, Any]:
        runs.append(job.key)
        return {"status": "solved", "value": 0.0, "best_moves": [], "moves": {}, "nodes": 1,
                "seconds": 0.0}

    monkeypatch.setattr(tables_runner, "solve_job", solved)
    out = tmp_path / "results.md"
    generate_tables(out, 5.0, fresh=False, progress=None, only=("alak-baljeu-*",))
    assert runs == ["alak-baljeu-2", "alak-baljeu-3"]
    generate_tables(out, 5.0, fresh=False, progress=None)
    assert runs[2:] == ["alternator-1x2", "alak-tromp-taylor-2"]
    runs.clear()
    generate_tables(out, 5.0, fresh=True, progress=None, only=("alak-baljeu-3", "alternator*"))
    assert runs == ["alternator-1x2", "alak-baljeu-3"]
    saved = json.loads(out.with_suffix(".json").read_text())["jobs"]
    assert sorted(saved) == ["alak-baljeu-2", "alak-baljeu-3", "alak-tromp-taylor-2",
                             "alternator-1x2"]


def _values(out: Path) -> dict[str, Any]:
    """Each job's value, best moves and openings, as saved beside ``out``."""
    saved = json.loads(out.with_suffix(".json").read_text())["jobs"]
    return {key: (record["value"], record["best_moves"], record.get("moves"))
            for key, record in saved.items()}


@pytest.mark.slow
@pytest.mark.parametrize("spread", [{"workers": 2}, {"move_jobs": 2}])
def test_work_spread_over_processes_gives_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spread: dict[str, int]
) -> None:
    """Families at once (--jobs), or each job's moves at once (--move-jobs)."""
    monkeypatch.setattr(tables_runner, "jobs", _jobs)
    alone, spread_out = tmp_path / "alone.md", tmp_path / "spread.md"
    generate_tables(alone, ENOUGH_SECONDS, fresh=False, progress=None)
    lines: list[str] = []
    generate_tables(spread_out, ENOUGH_SECONDS, fresh=False, progress=lines.append, **spread)
    assert len(_values(spread_out)) == 4
    assert _values(spread_out) == _values(alone)
    # each job is announced as it starts
    assert sorted(line for line in lines if line.startswith("solving")) == [
        f"solving {job.key} …" for job in sorted(_jobs(), key=lambda job: job.key)
    ]


@pytest.mark.slow
def test_a_job_whose_moves_were_solved_apart_says_so(tmp_path: Path) -> None:
    out = tmp_path / "results.md"
    generate_tables(
        out, ENOUGH_SECONDS, fresh=False, progress=None, only=("alak-baljeu-3",), move_jobs=2
    )
    assert json.loads(out.with_suffix(".json").read_text())["jobs"]["alak-baljeu-3"][
        "moves_apart"
    ] == 2
    assert "| 3 | +1 | 1:-1 **2:+1** 3:-1 | " in out.read_text()
    assert " (each move solved apart, 2 at once) |" in out.read_text()


@pytest.mark.slow
def test_a_job_with_lines_gets_them_with_its_moves_solved_apart() -> None:
    job = Job("claim-traditional-6", Alak(6, AlakRules.TRADITIONAL), openings=True,
              lines_after=("3",))
    record = tables_runner.solve_job(job, ENOUGH_SECONDS, None, 14, move_jobs=2)
    # the seed's 6-point claim: opening on 3 is a draw (docs/results.md)
    assert record["value"] == 0 and record["moves"]["3"] == 0
    assert record["lines"]["3"]["moves"][0] == "3" and record["lines"]["3"]["margin"] == 0


def test_a_table_size_set_for_the_run_is_recorded_and_shown(tmp_path: Path) -> None:
    out = tmp_path / "results.md"
    generate_tables(out, ENOUGH_SECONDS, fresh=False, progress=None, only=("alak-baljeu-2",),
                    table_bits=12)
    saved = json.loads(out.with_suffix(".json").read_text())["jobs"]
    assert saved["alak-baljeu-2"]["table_bits"] == 12
    assert "| 2 | -1 | **1:-1** **2:-1** | " in out.read_text()
    assert " (table 2^12) |" in out.read_text()
    assert "not solved in 9 s (table 2^24) (value in [1, 2])" in render(
        {"alak-tromp-taylor-12": {"status": "timeout", "max_seconds": 9, "lower": 1.0,
                                  "upper": 2.0, "nodes": 9, "table_bits": 24}}
    )


def test_only_measures_the_selected_agents_on_the_selected_games(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tables_runner, "jobs", list)  # no solving
    measured: list[tuple[str, str, int]] = []

    def measure(game: Any, agent: str, positions: int, *_: object, jobs: int) -> QualityReport:
        measured.append((agent, game.description, positions))
        return QualityReport(game.description, agent, positions, positions, 0, positions, 0.0,
                             0.5)

    monkeypatch.setattr(tables_runner, "measure_quality", measure)
    out = tmp_path / "results.md"
    generate_tables(out, 5.0, fresh=False, progress=None, quality_positions=3,
                    only=("quality-*-alak-7",))
    assert measured == [("mcts:1s", Alak(7).description, 3),
                        ("alphabeta:1s", Alak(7).description, 3)]
    assert "| alphabeta:1s | Alak 7, baljeu rules, edge capture | 3 | 100% |" in out.read_text()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--max-seconds", "0"], "--max-seconds must be a positive number of seconds, not 0"),
        (["--max-seconds", "inf"], "--max-seconds must be a positive number of seconds, not inf"),
        (["--quality-positions", "-1"], "--quality-positions must be 0 to"),
        (["--only", "alak-go-*"], "--only 'alak-go-*' matches no job"),
        (["--table-bits", "40"], "--table-bits must be 10 to 30"),
        (["--split-after", "soon"], "--split-after: budget 'soon' must be a time like '2s'"),
        (["--split-after", "0s"], "--split-after: budget '0s' must be positive"),
    ],
)
def test_bad_tables_options_are_named(arguments: list[str], message: str) -> None:
    result = runner.invoke(app, ["tables", *arguments])
    assert result.exit_code == 2
    assert message in result.output


def test_unreadable_saved_results_are_named_and_kept(tmp_path: Path) -> None:
    store = tmp_path / "results.json"
    store.write_text("{not json")
    result = runner.invoke(app, ["tables", "--out", str(tmp_path / "results.md"), "-q"])
    assert result.exit_code == 2
    assert "cannot read saved results" in result.output
    assert store.read_text() == "{not json"


def test_a_json_file_agon_did_not_write_is_never_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tables_runner, "jobs", _jobs)
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": "seventeen megabytes of notes"}')
    with pytest.raises(AgonError, match="is not a file of results that agon tables wrote"):
        generate_tables(tmp_path / "notes.md", ENOUGH_SECONDS, fresh=False, progress=None)
    assert notes.read_text() == '{"mine": "seventeen megabytes of notes"}'
    # the Markdown would replace its own results
    with pytest.raises(AgonError, match="must be a Markdown file"):
        generate_tables(tmp_path / "r.json", ENOUGH_SECONDS, fresh=False, progress=None)
    assert not (tmp_path / "r.json").exists()


def test_a_report_whose_only_change_is_the_date_is_left_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tables_runner, "jobs", _jobs)
    out = tmp_path / "results.md"
    generate_tables(out, ENOUGH_SECONDS, fresh=False, progress=None)
    dated = out.read_text().replace("generated 20", "generated 19", 1)
    out.write_text(dated)
    generate_tables(out, ENOUGH_SECONDS, fresh=False, progress=None)
    assert out.read_text() == dated  # (a tracked docs/results.md is not rewritten for a date)
    out.write_text(dated.replace("| 2 |", "| two |", 1))
    generate_tables(out, ENOUGH_SECONDS, fresh=False, progress=None)
    assert "| two |" not in out.read_text()
