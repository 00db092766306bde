"""A solver's tables saved to a file and gone on from in a later run (`agon solve --tables-file`,
`agon tables --checkpoints`): the same values, the earlier work counted, and a file that does
not fit refused with its reason and left as it was."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from agon.cli import app
from agon.core.errors import AgonError
from agon.core.game import Game
from agon.core.limits import Limit
from agon.core.results import Job, Work
from agon.games.alak import Alak
from agon.games.alak.rules import AlakRules
from agon.solve import checkpoint, mtdf
from agon.solve import kernels as K
from agon.solve.checkpoint import load_tables
from agon.solve.facts import Search
from agon.solve.parallel import move_tables_file
from agon.solve.session import SolveRequest, run
from agon.solve.solution import SolveInterrupted
from agon.solve.solver import Solver
from agon.solve.tables import runner as tables_runner
from agon.solve.tables.report import render
from agon.solve.tables.runner import generate_tables

runner = CliRunner()
# value 0 in about 120,000 nodes: more than a first chunk, a few seconds with a small table
GAME = Alak(7, AlakRules.TRADITIONAL)
BITS = 12


def _stopped_at_once(path: Path) -> Solver:
    """A solver stopped by its time limit after its first chunk, its tables saved to path."""
    solver = Solver(GAME, BITS)
    with pytest.raises(SolveInterrupted):
        solver.margin(GAME.new_state(), Limit(seconds=1e-9))
    solver.save_tables(path)
    return solver


def _saved_work(path: Path, game: Game = GAME) -> Work:
    """The work a file of ``game``'s tables records."""
    return load_tables(path, Solver(game, BITS).tables_header())[0].work


def test_a_solve_cut_short_goes_on_from_its_saved_tables(tmp_path: Path) -> None:
    path = tmp_path / "tables.npz"
    first = _stopped_at_once(path)
    second = Solver(GAME, BITS)
    second.load_tables(path)
    assert (second.earlier.nodes, second.earlier.runs) == (first.nodes, 1)
    assert second.margin(GAME.new_state()) == 0.0
    second.save_tables(path)
    # a solved position's tables settle it again at once
    third = Solver(GAME, BITS)
    third.load_tables(path)
    assert third.margin(GAME.new_state()) == 0.0
    assert third.nodes <= 2
    assert third.earlier.runs == 2
    assert third.earlier.nodes == first.nodes + second.nodes


def test_a_solve_going_on_from_saved_tables_starts_from_the_bounds_they_prove(
    tmp_path: Path,
) -> None:
    # tromp-taylor 1 x 9 (value 0), first guessed at +5: stopped once a test has proven a
    # bound; the next run's first test (its guess: 0) is not settled by that bound
    game = Alak(9, AlakRules.TROMP_TAYLOR)
    first = Solver(game, BITS)
    array = first.state_array(game.new_state())
    rounds = first._value_rounds(array, 1, 5)
    largest = int(first.control[K.C_MAX_VALUE])
    bounds = next(rounds)
    while bounds == (-largest, largest):
        bounds = next(rounds)
    assert bounds[0] < bounds[1]
    rounds.close()
    path = tmp_path / "tables.npz"
    first.save_tables(path)
    # the next run stops in its first chunk, with those bounds (not the game's own)
    second = Solver(game, BITS)
    second.load_tables(path)
    for chunks in second._chunks.values():
        chunks.size = chunks.minimum = 10
    second.stop_requested = lambda: True
    with pytest.raises(SolveInterrupted) as stopped:
        second.margin(game.new_state())
    # (Black's margin, a side at the game's own limits unbounded)
    assert (stopped.value.lower, stopped.value.upper) == first._black_bounds(
        1, first._proven(bounds)
    )
    assert stopped.value.nodes < 100


def test_tables_are_saved_while_the_search_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mtdf, "CHECKPOINT_SECONDS", 0.0)
    solver = Solver(GAME, BITS)
    solver.checkpoint = tmp_path / "tables.npz"
    solver.margin(GAME.new_state())
    assert 0 < _saved_work(solver.checkpoint).nodes < solver.nodes


def test_a_failed_save_is_reported_and_the_search_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mtdf, "CHECKPOINT_SECONDS", 0.0)
    lines: list[str] = []
    solver = Solver(GAME, BITS, progress=lines.append)
    solver.checkpoint = tmp_path / "no such folder" / "tables.npz"
    assert solver.margin(GAME.new_state()) == 0.0
    assert any(line.startswith("the tables were not saved: cannot save") for line in lines)


def test_another_search_may_go_on_from_the_proofs(tmp_path: Path) -> None:
    path = tmp_path / "tables.npz"
    solver = Solver(GAME, BITS)
    solver.margin(GAME.new_state())
    solver.save_tables(path)
    alpha_beta = Solver(GAME, BITS, search=Search.ALPHA_BETA)
    alpha_beta.load_tables(path)
    assert alpha_beta.margin(GAME.new_state()) == 0.0
    assert alpha_beta.nodes <= 2


@pytest.mark.parametrize(
    ("other", "message"),
    [
        (lambda: Solver(Alak(7, AlakRules.TROMP_TAYLOR), BITS),
         "tables of Alak 7, traditional rules, komi 0, not of Alak 7, tromp-taylor rules"),
        (lambda: Solver(Alak(7, AlakRules.TRADITIONAL, komi_points=1.0), BITS), "not of Alak 7"),
        (lambda: Solver(GAME, BITS, symmetry=False), "other symmetry settings"),
    ],
)
def test_tables_of_another_solve_are_refused(
    tmp_path: Path, other: Any, message: str
) -> None:
    path = tmp_path / "tables.npz"
    _stopped_at_once(path)
    with pytest.raises(AgonError, match=message):
        other().load_tables(path)


def test_tables_of_other_kernels_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tables.npz"
    _stopped_at_once(path)
    monkeypatch.setattr(checkpoint, "kernels_fingerprint", lambda: "an edited version")
    with pytest.raises(AgonError, match="another version of Agon's kernels"):
        Solver(GAME, BITS).load_tables(path)


def test_files_that_are_not_tables_are_named(tmp_path: Path) -> None:
    junk = tmp_path / "junk.npz"
    junk.write_text("not tables")
    with pytest.raises(AgonError, match=r"junk\.npz is not a file of a solver's tables"):
        Solver(GAME, BITS).load_tables(junk)
    truncated = tmp_path / "truncated.npz"
    _stopped_at_once(truncated)
    truncated.write_bytes(truncated.read_bytes()[:5000])
    with pytest.raises(AgonError, match="is not a file of a solver's tables"):
        Solver(GAME, BITS).load_tables(truncated)
    other = tmp_path / "other.npz"
    np.savez(other, table=np.zeros((4, 2), dtype=np.int64))
    with pytest.raises(AgonError, match=r"other\.npz is not a file of a solver's tables"):
        Solver(GAME, BITS).load_tables(other)
    with pytest.raises(AgonError, match="cannot read"):
        Solver(GAME, BITS).load_tables(tmp_path / "missing.npz")


# --- the command line --------------------------------------------------------------------------

SOLVE = ["solve", "alak", "--size", "7", "--rules", "traditional", "--table-bits", str(BITS)]


def test_solve_goes_on_from_its_tables_file(tmp_path: Path) -> None:
    path = tmp_path / "tables.npz"
    first = runner.invoke(app, [*SOLVE, "--tables-file", str(path), "--json", "-q"])
    assert first.exit_code == 0, first.output
    assert "earlier" not in json.loads(first.stdout)
    again = runner.invoke(app, [*SOLVE, "--tables-file", str(path), "--json"])
    assert again.exit_code == 0, again.output
    data = json.loads(again.stdout)
    assert data["value"] == 0
    assert data["earlier"]["runs"] == 1
    assert data["earlier"]["nodes"] == json.loads(first.stdout)["nodes"]
    assert "going on from" in again.stderr
    text = runner.invoke(app, [*SOLVE, "--tables-file", str(path), "-q"])
    assert "before this run: " in text.stdout and "over 2 runs" in text.stdout


def test_a_solve_out_of_time_saves_its_tables(tmp_path: Path) -> None:
    path = tmp_path / "tables.npz"
    result = runner.invoke(
        app, [*SOLVE, "--tables-file", str(path), "--max-seconds", "1e-9", "--json"]
    )
    assert result.exit_code == 124
    assert _saved_work(path).nodes == json.loads(result.stdout)["nodes"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--size", "6"], "cannot go on from"),
        (["--table-bits", "11"], "they have a table of 2**12 buckets"),
    ],
)
def test_a_tables_file_that_does_not_fit_is_refused_and_kept(
    tmp_path: Path, arguments: list[str], message: str
) -> None:
    path = tmp_path / "tables.npz"
    _stopped_at_once(path)
    before = path.read_bytes()
    result = runner.invoke(app, [*SOLVE, *arguments, "--tables-file", str(path), "-q"])
    assert result.exit_code == 2
    assert message in result.output
    assert path.read_bytes() == before


@pytest.mark.slow
def test_a_parallel_solve_keeps_each_moves_tables_and_goes_on_from_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tables.npz"
    options = [*SOLVE, "--jobs", "2", "--tables-file", str(path), "--json", "-q"]
    first = runner.invoke(app, options)
    assert first.exit_code == 0, first.output
    # one file per class of symmetric moves: 1-4 (5-7 are their mirror images) and the pass
    kept = sorted(file.name for file in tmp_path.iterdir())
    assert kept == [f"tables-after-{move}.npz" for move in ("1", "2", "3", "4", "pass")]
    assert _saved_work(tmp_path / "tables-after-pass.npz").runs == 1
    again = runner.invoke(app, options)
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["value"] == json.loads(first.stdout)["value"]
    # each move's value is settled again from its saved bounds, at the cost of a few nodes
    assert json.loads(again.stdout)["nodes"] * 100 < json.loads(first.stdout)["nodes"]
    assert _saved_work(tmp_path / "tables-after-pass.npz").runs == 2
    # the earlier run's work, all moves together (symmetric moves were not solved)
    assert json.loads(again.stdout)["earlier"]["nodes"] == json.loads(first.stdout)["nodes"]
    assert json.loads(again.stdout)["earlier"]["runs"] == 1


@pytest.mark.slow
def test_a_parallel_solve_refuses_a_moves_tables_file_that_does_not_fit(tmp_path: Path) -> None:
    other = Solver(Alak(6, AlakRules.TRADITIONAL), BITS)
    foreign = tmp_path / "tables-after-2.npz"
    other.save_tables(foreign)
    before = foreign.read_bytes()
    result = runner.invoke(
        app, [*SOLVE, "--jobs", "2", "--tables-file", str(tmp_path / "tables.npz"), "-q"]
    )
    assert result.exit_code == 2
    assert f"cannot go on from {foreign}" in result.output
    assert foreign.read_bytes() == before


def test_a_tables_file_where_none_can_be_written_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, [*SOLVE, "--tables-file", str(tmp_path / "no" / "t.npz")])
    assert result.exit_code == 2
    assert "not a file that can be written" in result.output


def test_a_solve_stopped_by_sigterm_saves_its_tables_as_on_ctrl_c(tmp_path: Path) -> None:
    path = tmp_path / "tables.npz"
    command = [sys.executable, "-c", "from agon.cli import main; main()", "solve", "alak",
               "--size", "9", "--table-bits", str(BITS), "--tables-file", str(path), "--json"]
    pipe = subprocess.PIPE
    with subprocess.Popen(command, stdout=pipe, stderr=pipe, text=True) as run:
        assert run.stderr is not None
        for line in run.stderr:  # the first progress line: the search is under way
            if "nodes in" in line:
                break
        run.terminate()
        out, err = run.communicate(timeout=120)
    assert run.returncode == 130, err
    assert json.loads(out)["stopped"] == "interrupted"
    assert _saved_work(path, Alak(9)).runs == 1


@pytest.mark.slow
def test_a_parallel_solve_stopped_by_sigterm_saves_each_running_moves_tables(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tables.npz"
    command = [sys.executable, "-c", "from agon.cli import main; main()", "solve", "alak",
               "--size", "9", "--table-bits", str(BITS), "--jobs", "2", "--tables-file",
               str(path), "--json"]
    pipe = subprocess.PIPE
    with subprocess.Popen(command, stdout=pipe, stderr=pipe, text=True) as run:
        assert run.stderr is not None
        for line in run.stderr:  # a move's first progress line: its search is under way
            if line.startswith("after ") and "nodes in" in line:
                break
        run.terminate()
        out, err = run.communicate(timeout=120)
    assert run.returncode == 130, err
    assert json.loads(out)["stopped"] == "interrupted"
    assert "stopping: each move's solve ends its chunk and saves its tables" in err
    # the moves under way were stopped by their parent, not killed: their tables are saved
    kept = list(tmp_path.iterdir())
    assert kept and all(file.name.startswith("tables-after-") for file in kept)
    for file in kept:
        work = _saved_work(file, Alak(9))
        assert work.runs == 1 and work.nodes > 0


@pytest.mark.slow
def test_tables_in_workers_stopped_by_sigterm_save_the_running_jobs_tables(
    tmp_path: Path,
) -> None:
    keys = ["alak-baljeu-9", "alak-tromp-taylor-12"]  # two families: one in each worker
    command = [sys.executable, "-c", "from agon.cli import main; main()", "tables", "--out",
               str(tmp_path / "results.md"), "--only", keys[0], "--only", keys[1], "--jobs",
               "2", "--table-bits", str(BITS), "--max-seconds", "600", "--checkpoints",
               str(tmp_path / "tables")]
    pipe = subprocess.PIPE
    with subprocess.Popen(command, stdout=pipe, stderr=pipe, text=True) as run:
        assert run.stderr is not None
        for line in run.stderr:  # a job's first progress line: its search is under way
            if line.startswith(tuple(keys)) and "nodes in" in line:
                break
        run.terminate()
        _, err = run.communicate(timeout=120)
    assert run.returncode == 130, err
    assert "stopping: each job ends its chunk and saves its tables" in err
    kept = list((tmp_path / "tables").iterdir())
    assert kept and {file.stem for file in kept} <= set(keys)
    for file in kept:
        game = Alak(9) if file.stem == keys[0] else Alak(12, AlakRules.TROMP_TAYLOR)
        work = _saved_work(file, game)
        assert work.runs == 1 and work.nodes > 0


# --- the tables ------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_job_out_of_time_keeps_its_tables_and_goes_on_from_them(tmp_path: Path) -> None:
    job = Job("alak-traditional-7", GAME)
    path = tmp_path / f"{job.key}.npz"
    stopped = tables_runner.solve_job(job, 1e-9, None, BITS, path)
    assert stopped["status"] == "timeout"
    assert _saved_work(path).nodes == stopped["nodes"]
    with pytest.raises(AgonError, match=r"they have a table of 2\*\*12 buckets"):
        tables_runner.solve_job(job, 600.0, None, BITS + 1, path)
    solved = tables_runner.solve_job(job, 600.0, None, None, path)
    assert solved["value"] == 0.0
    assert solved["table_bits"] == BITS  # the saved table's size
    assert solved["earlier"]["nodes"] == stopped["nodes"]
    assert not path.exists()  # a solved job's tables are not kept
    shown = render({job.key: {**solved, "moves": {"4": 0.0}}})
    assert f"going on from {stopped['nodes']:,} nodes" in shown


def _jobs_out_of_time(
    monkeypatch: pytest.MonkeyPatch,
) -> list[tuple[float, Path | None, bool, int]]:
    """Make the tables hold one small job that always runs out of time, leaving a file where
    given a checkpoint (one per move where moves are solved apart): the runs asked for, as
    (seconds, checkpoint, resume, move jobs)."""

    def only_one_job() -> list[Job]:
        return [Job("alak-baljeu-2", Alak(2))]

    runs: list[tuple[float, Path | None, bool, int]] = []

    def out_of_time(
        job: Job, max_seconds: float, progress: object, table_bits: object,
        checkpoint: Path | None, resume: bool, move_jobs: int, cluster: str | None,
        split_after: object,
    ) -> dict[str, Any]:
        runs.append((max_seconds, checkpoint, resume, move_jobs))
        if checkpoint is not None:
            kept = checkpoint if move_jobs == 1 else move_tables_file(checkpoint, "1")
            kept.write_text("tables")
        return {"status": "timeout", "max_seconds": max_seconds, "lower": -1.0, "upper": 1.0,
                "nodes": 1}

    monkeypatch.setattr(tables_runner, "jobs", only_one_job)
    monkeypatch.setattr(tables_runner, "solve_job", out_of_time)
    return runs


def test_tables_give_a_job_with_saved_tables_another_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = _jobs_out_of_time(monkeypatch)
    out, kept = tmp_path / "results.md", tmp_path / "kept"
    generate_tables(out, 5.0, fresh=False, progress=None)
    generate_tables(out, 5.0, fresh=False, progress=None)  # no more time: not tried again
    assert runs == [(5.0, None, True, 1)]
    kept.mkdir()
    generate_tables(out, 10.0, fresh=False, progress=None, checkpoints=kept)
    # with its tables kept, no more time than last time: it goes on from them (or, with
    # fresh, starts again)
    generate_tables(out, 10.0, fresh=False, progress=None, checkpoints=kept)
    generate_tables(out, 10.0, fresh=True, progress=None, checkpoints=kept)
    path = kept / "alak-baljeu-2.npz"
    assert runs[1:] == [(10.0, path, True, 1), (10.0, path, True, 1), (10.0, path, False, 1)]


def test_tables_give_a_job_with_its_moves_tables_kept_another_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = _jobs_out_of_time(monkeypatch)
    out, kept = tmp_path / "results.md", tmp_path / "kept"
    kept.mkdir()
    for _ in range(2):  # the second run finds the move's file: it goes on from it
        generate_tables(out, 5.0, fresh=False, progress=None, checkpoints=kept, move_jobs=2)
    assert runs == [(5.0, kept / "alak-baljeu-2.npz", True, 2)] * 2
    # one process at a time would look for the job's own file, which is not there
    generate_tables(out, 5.0, fresh=False, progress=None, checkpoints=kept)
    assert len(runs) == 2
    with pytest.raises(AgonError, match="--jobs cannot be combined with --move-jobs or --ray"):
        generate_tables(out, 5.0, fresh=False, progress=None, workers=2, move_jobs=2)
    with pytest.raises(AgonError, match="--jobs cannot be combined with --move-jobs or --ray"):
        generate_tables(out, 5.0, fresh=False, progress=None, workers=2, cluster="local")


@pytest.mark.slow
def test_a_job_solved_move_by_move_goes_on_from_each_moves_tables_and_drops_them(
    tmp_path: Path,
) -> None:
    job = Job("alak-traditional-7", GAME, openings=True)
    path = tmp_path / f"{job.key}.npz"
    apart = SolveRequest(GAME, openings=True, table_bits=BITS, tables_file=path, move_jobs=2)
    first = run(apart).solution
    assert first is not None and first.move_values is not None
    files = sorted(path.parent.iterdir())
    assert len(files) == 5  # moves 1-4 (5-7 are their mirror images) and the pass
    # no table size asked for: each move goes on with its file's (not the tables' default)
    solved = tables_runner.solve_job(job, 600.0, None, None, path, True, 2)
    assert (solved["value"], solved["moves_apart"]) == (first.value, 2)
    assert solved["moves"] == {GAME.format_move(m): v for m, v in first.move_values.items()}
    assert solved["earlier"]["nodes"] == first.nodes  # every move went on from its file
    assert not any(path.parent.iterdir())  # a solved job's tables are not kept
    # and without resume, a move's file is not gone on from
    run(apart)
    again = tables_runner.solve_job(job, 600.0, None, BITS, path, False, 2)
    assert "earlier" not in again and again["nodes"] >= first.nodes // 2
