"""``agon tables``: solving every job of the catalogue that is not solved yet, within a time
each, one family of growing boards at a time (in worker processes where asked), and keeping
every result in a JSON file beside the report as soon as it is known.

A run that is interrupted, or given a larger time limit, resumes: solved jobs are kept, jobs
that ran out of time are tried again only with more time.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agon.core.errors import AgonError, quoted
from agon.core.files import read_text_limited, replace_file
from agon.core.limits import Limit
from agon.core.records import parse_json
from agon.core.results import Job, Record
from agon.core.workers import WorkerResults, stop_and_wait, stop_signal, worker_pool
from agon.solve.parallel import kept_move_tables
from agon.solve.quality import measure_quality
from agon.solve.session import SolveReport, SolveRequest, run
from agon.solve.solver import Progress, labelled_progress, warm_up_kernels
from agon.solve.tables.catalogue import jobs, measurements, table_bits
from agon.solve.tables.report import BOUNDS_SECONDS, render


def solve_job(
    job: Job, max_seconds: float, progress: Progress | None, asked_bits: int | None = None,
    checkpoint: Path | None = None, resume: bool = True, move_jobs: int = 1,
) -> Record:
    """The job's record: its value and best moves within ``max_seconds``, then (for jobs
    with openings) every move's value in the time left, so that a board whose weaker openings
    take too long still gets its value and best moves. ``asked_bits`` overrides the
    transposition table's size (:func:`~agon.solve.tables.catalogue.table_bits`), and is
    recorded. With a ``checkpoint`` file, a job that stops before it is solved saves its
    solver's tables there, and (with ``resume``) one whose file exists goes on from it (the
    record then says what the earlier runs did); a solved job's file is deleted. With
    ``move_jobs`` above one, the job's moves are solved apart in that many processes.
    Ctrl-C raises ``KeyboardInterrupt``."""
    request = SolveRequest(
        job.game, job.state(), openings=job.openings, value_first=True,
        lines_after=job.lines_after, lines_only=job.lines_only, limit=Limit(seconds=max_seconds),
        table_bits=asked_bits, default_table_bits=table_bits(job.game), tables_file=checkpoint,
        resume=resume, keep_solved_tables=False, move_jobs=move_jobs,
    )
    report = run(request, progress)
    for note in report.notes:
        if progress is not None:
            progress(note)
    return record_of(job, report, max_seconds, asked_bits)


def record_of(
    job: Job, report: SolveReport, max_seconds: float, asked_bits: int | None
) -> Record:
    """What a solve session found, as the results file keeps it (an interrupted session is no
    result: ``KeyboardInterrupt``)."""
    stop = report.stop
    if stop is not None and not stop.timed_out:
        raise KeyboardInterrupt
    game = job.game
    record: Record
    if report.stopped is not None:
        stopped = report.stopped
        record = {
            "status": "timeout", "max_seconds": max_seconds, "lower": stopped.lower,
            "upper": stopped.upper, "nodes": stopped.nodes, **stopped.found(),
        }
    elif job.lines_only:
        record = {"status": "solved", "nodes": report.nodes, "seconds": round(report.seconds, 2)}
    else:
        solution = report.solution
        assert solution is not None
        record = {
            "status": "solved",
            "value": solution.value,
            "best_moves": [game.format_move(m) for m in solution.best_moves],
            "nodes": solution.nodes,
            "seconds": round(solution.seconds, 2),
        }
        if job.openings and report.openings_stopped is None:
            assert solution.move_values is not None
            record["moves"] = {game.format_move(m): v for m, v in solution.move_values.items()}
        elif job.openings and report.openings_stopped is not None:
            record["openings_max_seconds"] = round(report.openings_seconds or 0)
            found = report.openings_stopped.found()
            if "move_bounds" in found:
                record["move_bounds"] = found["move_bounds"]
    if report.lines:
        record["lines"] = {
            first: _line_record(line.as_json(game)) for first, line in report.lines.items()
        }
    if report.moves_apart is not None:
        record["moves_apart"] = report.moves_apart
    if asked_bits is not None:
        record["table_bits"] = asked_bits
    elif report.earlier.runs and report.table_bits is not None:
        record["table_bits"] = report.table_bits
    if report.earlier.runs:
        record["earlier"] = asdict(report.earlier)
    return record


def _line_record(line: dict[str, Any]) -> dict[str, Any]:
    """A line as the results file keeps it (its margin a float, as the rules count it)."""
    if "margin" in line:
        line["margin"] = float(line["margin"])
    return line


def _value_unknown(record: Record) -> bool:
    """Whether a job ran out of time before its value was proven (a job whose best moves or
    openings ran out of time does not make its family give up)."""
    return record["status"] != "solved" and bool(record["lower"] != record["upper"])


def generate_tables(
    out: Path,
    max_seconds: float,
    fresh: bool,
    progress: Progress | None,
    quality_positions: int = 0,
    only: tuple[str, ...] = (),
    table_bits: int | None = None,
    workers: int = 1,
    checkpoints: Path | None = None,
    move_jobs: int = 1,
) -> None:
    """Solve what is not solved yet (within ``max_seconds`` each) and write ``out``; with
    ``quality_positions``, also measure the agents' move quality on that many positions.
    With ``only`` (shell-style patterns of keys), just the jobs and measurements whose key
    matches one are done (``fresh``: again); the others' saved results are kept as they are.
    ``table_bits`` sets every solve's transposition table size (default: the size each game
    declares for the tables). With ``workers`` above one, that many
    processes solve jobs of different families at once (each with its own tables). With
    ``checkpoints``, a folder, each job given the full ``max_seconds`` keeps its solver's
    tables there while it is not solved (``KEY.npz``), and a job with such a file goes on from
    it, whatever time it had before (unless ``fresh``). With ``move_jobs`` above one, each
    job's moves are solved apart in that many processes (not with ``workers``), each move's
    tables kept beside ``KEY.npz``."""
    if workers > 1 and move_jobs > 1:
        raise AgonError(
            "--jobs and --move-jobs cannot be combined: spread either families or a job's moves"
        )
    if out.suffix.lower() != ".md":
        raise AgonError(
            f"--out {str(out) or quoted('')} must be a Markdown file (.md): the results are "
            "kept beside it, as a .json file of the same name"
        )
    store = out.with_suffix(".json")

    def checkpoint(job: Job) -> Path | None:
        return None if checkpoints is None else checkpoints / f"{job.key}.npz"

    def kept(path: Path) -> bool:
        """Whether a checkpoint is there to go on from (one per move, where moves are apart)."""
        return bool(kept_move_tables(path)) if move_jobs > 1 else path.exists()

    def selected(key: str) -> bool:
        return not only or any(fnmatch.fnmatchcase(key, pattern) for pattern in only)

    measured = measurements()
    keys = [job.key for job in jobs()] + list(measured)
    for pattern in only:
        if not any(fnmatch.fnmatchcase(key, pattern) for key in keys):
            raise AgonError(
                f"--only {quoted(pattern)} matches no job (keys look like "
                f"{', '.join(keys[:3]) or '(there are none)'})"
            )
    results = _load(store)
    if fresh:
        results = {key: record for key, record in results.items() if not selected(key)}
    for key, (agent, variant) in measured.items():
        if quality_positions and selected(key):
            if progress is not None:
                progress(f"measuring {agent} on {variant.game.description} …")
            report = measure_quality(variant.game, agent, quality_positions, 1, progress)
            results[key] = report.to_json()
            _save(store, results)
    warm_up_kernels()
    waiting = list(jobs())
    given_up: set[str] = set()
    running: set[str] = set()  # the families with a job being solved

    def next_job() -> tuple[Job, float] | None:
        """The first job, in order, of a family with none being solved, that is still to be
        solved, and its time, its family then counted as being solved: a family's jobs are
        taken in order, so each one's time can depend on how its smaller boards went."""
        for job in list(waiting):
            family = job.family_name
            if family in running:
                continue
            waiting.remove(job)
            saved = results.get(job.key)
            budget = max_seconds
            if family in given_up and job.grows:
                # a smaller board of this family ran out of time before its value was
                # proven: only bounds are hoped for
                budget = min(max_seconds, BOUNDS_SECONDS)
            path = checkpoint(job)
            goes_on = not fresh and path is not None and kept(path)
            done = saved is not None and (
                saved["status"] == "solved" or (saved["max_seconds"] >= budget and not goes_on)
            )
            if done or not selected(job.key):
                if saved and _value_unknown(saved):
                    given_up.add(family)
                continue
            running.add(family)
            if progress is not None:
                progress(f"solving {job.key} …")
            return job, budget
        return None

    def solving(job: Job, budget: float) -> tuple[Any, ...]:
        """:func:`solve_job`'s arguments after ``progress`` for ``job`` (a checkpoint only for jobs
        given the full time: the others only look for bounds)."""
        path = checkpoint(job) if budget >= max_seconds else None
        return table_bits, path, not fresh, move_jobs

    def finish(job: Job, record: Record) -> None:
        results[job.key] = record
        running.discard(job.family_name)
        if _value_unknown(record):
            given_up.add(job.family_name)
        _save(store, results)

    if workers <= 1:
        while (task := next_job()) is not None:
            job, budget = task
            finish(job, solve_job(job, budget, progress, *solving(job, budget)))
    else:
        _solve_in_workers(workers, next_job, finish, running, progress, solving)
    rendered = render(results)
    if not _only_the_date_changed(out, rendered):
        _write(out, rendered)


_GENERATED = re.compile(r"generated [0-9]{4}-[0-9]{2}-[0-9]{2}")


def _only_the_date_changed(path: Path, report: str) -> bool:
    """Whether ``path`` holds ``report`` already but for the day it was generated on (a
    tracked report is then left as it is)."""
    try:
        old = read_text_limited(path, MAX_RESULTS_BYTES, "a report")
    except AgonError:
        return False
    return old != report and _GENERATED.sub("", old) == _GENERATED.sub("", report)


def _solve_in_workers(
    workers: int,
    next_job: Callable[[], tuple[Job, float] | None],
    finish: Callable[[Job, Record], None],
    running: set[str],
    progress: Progress | None,
    solving: Callable[[Job, float], tuple[Any, ...]],
) -> None:
    """Solve the jobs ``next_job`` gives in ``workers`` processes (``solving``: the rest of
    :func:`solve_job`'s arguments for a job), one family in each at a time (``running``: the
    families being solved), handing each result to ``finish`` as it comes. Ctrl-C asks the
    workers to stop at the end of their chunks: the jobs being solved are lost (their
    checkpoints saved), the finished ones were saved; a second Ctrl-C stops them at once."""
    stop = stop_signal()
    with worker_pool(workers, warm_up_kernels, stop) as pool:
        results: WorkerResults[Job, Record | None] = WorkerResults(pool)

        def start_jobs() -> None:
            while len(running) < workers and (task := next_job()) is not None:
                job, budget = task
                label = None if progress is None else labelled_progress(progress, job.key)
                results.submit(
                    job, _solve_unless_stopped, job, budget, label, *solving(job, budget)
                )

        def take_result() -> None:
            job, record = results.next()
            running.discard(job.family_name)
            if record is not None:
                finish(job, record)

        start_jobs()
        try:
            while running:
                take_result()
                start_jobs()
        except KeyboardInterrupt:
            if progress is not None:
                progress("stopping: each job ends its chunk and saves its tables …")

            def take_the_running() -> None:
                while running:
                    take_result()

            stop_and_wait(stop, take_the_running)
            raise


def _solve_unless_stopped(*arguments: Any) -> Record | None:
    """:func:`solve_job` in a worker, or None where its parent asked it to stop."""
    try:
        return solve_job(*arguments)
    except KeyboardInterrupt:  # (the parent's stop signal, which solve_job turns into this)
        return None


MAX_RESULTS_BYTES = 64 * 1024 * 1024
"""The saved results are some hundred kilobytes; a larger file is not read."""


def _load(path: Path) -> dict[str, Record]:
    if not path.exists():
        return {}
    try:
        data = parse_json(read_text_limited(path, MAX_RESULTS_BYTES, "saved results"))
    except AgonError as error:
        raise AgonError(f"cannot read saved results {path}: {error}") from None
    # (a file Agon did not write is never taken for empty results and replaced)
    jobs = data.get("jobs") if isinstance(data, dict) else None
    if not isinstance(jobs, dict) or not all(isinstance(r, dict) for r in jobs.values()):
        raise AgonError(
            f"{path} is not a file of results that agon tables wrote, and it is not replaced: "
            "give --out another name, or move it"
        )
    return {key: _with_infinite_bounds(record) for key, record in jobs.items()}


def _write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` whole (Ctrl-C during the write keeps the old file)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, text)
    except OSError as error:
        raise AgonError(f"cannot write {path}: {error.strerror or error}") from None


def _save(path: Path, results: dict[str, Record]) -> None:
    jobs = {key: _with_json_bounds(record) for key, record in results.items()}
    _write(path, json.dumps({"jobs": jobs}, indent=1, sort_keys=True) + "\n")


_UNBOUNDED = {"lower": float("-inf"), "upper": float("inf")}
"""A record's bounds where nothing was proven on that side (saved as null: JSON has no
infinity)."""


def _with_infinite_bounds(record: Record) -> Record:
    """A saved record with its null bounds read as infinite."""
    unbounded = [side for side in _UNBOUNDED if side in record and record[side] is None]
    return record | {side: _UNBOUNDED[side] for side in unbounded}


def _with_json_bounds(record: Record) -> Record:
    """A record with its infinite bounds as null, to be saved."""
    return record | {side: None for side in _UNBOUNDED if record.get(side) in _UNBOUNDED.values()}
