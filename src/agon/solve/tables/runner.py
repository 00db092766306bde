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

from agon.core.errors import AgonError, quoted, shortened
from agon.core.files import read_text_limited, replace_file
from agon.core.limits import MAX_SECONDS, Limit
from agon.core.records import parse_json
from agon.core.results import Job, Record
from agon.core.workers import WorkerResults, stop_and_wait, stop_signal, worker_pool
from agon.solve.checkpoint import MAX_COUNT
from agon.solve.facts import DEFAULT_SPLIT_AFTER
from agon.solve.parallel import kept_move_tables
from agon.solve.quality import measure_quality
from agon.solve.session import SolveReport, SolveRequest, run
from agon.solve.solution import Progress, labelled_progress
from agon.solve.solver import warm_up_kernels
from agon.solve.tables.catalogue import jobs, measurements, table_bits
from agon.solve.tables.report import BOUNDS_SECONDS, render


def solve_job(
    job: Job, max_seconds: float, progress: Progress | None, asked_bits: int | None = None,
    checkpoint: Path | None = None, resume: bool = True, move_jobs: int = 1,
    cluster: str | None = None, split_after: Limit | None = DEFAULT_SPLIT_AFTER,
) -> Record:
    """The job's record: its value and best moves within ``max_seconds``, then (for jobs
    with openings) every move's value in the time left, so that a board whose weaker openings
    take too long still gets its value and best moves. ``asked_bits`` overrides the
    transposition table's size (:func:`~agon.solve.tables.catalogue.table_bits`), and is
    recorded. With a ``checkpoint`` file, a job that stops before it is solved saves its
    solver's tables there, and (with ``resume``) one whose file exists goes on from it (the
    record then says what the earlier runs did); a solved job's file is deleted. With
    ``move_jobs`` above one, the job's moves are solved apart in that many processes; with a
    ``cluster`` (a Ray address), on it, a move not solved within ``split_after`` split
    (:mod:`agon.solve.parallel`). Ctrl-C raises ``KeyboardInterrupt``."""
    request = SolveRequest(
        job.game, job.state(), openings=job.openings, value_first=True,
        lines_after=job.lines_after, lines_only=job.lines_only, limit=Limit(seconds=max_seconds),
        table_bits=asked_bits, default_table_bits=table_bits(job.game), tables_file=checkpoint,
        resume=resume, keep_solved_tables=False, move_jobs=move_jobs, cluster=cluster,
        split_after=split_after,
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
    cluster: str | None = None,
    split_after: Limit | None = DEFAULT_SPLIT_AFTER,
) -> None:
    """Solve what is not solved yet (within ``max_seconds`` each) and write ``out``; with
    ``quality_positions``, also measure the agents' move quality on that many positions.
    With ``only`` (shell-style patterns of keys), just the jobs and measurements whose key
    matches one are done (``fresh``: again); the others' saved results are kept as they are.
    ``table_bits`` sets every solve's transposition table size (default: the size each game
    declares for the tables). With ``workers`` above one, that many
    processes solve jobs of different families at once (each with its own tables), and
    measure the agents' move quality. With
    ``checkpoints``, a folder, each job given the full ``max_seconds`` keeps its solver's
    tables there while it is not solved (``KEY.npz``), and a job with such a file goes on from
    it, whatever time it had before (unless ``fresh``). With ``move_jobs`` above one, each
    job's moves are solved apart in that many processes (not with ``workers``), each move's
    tables kept beside ``KEY.npz``; with a ``cluster`` (a Ray address, see
    :mod:`agon.solve.on_ray`), on it, joined once for the whole run; either way, a move not
    solved within ``split_after`` is split."""
    apart = move_jobs > 1 or cluster is not None
    if workers > 1 and apart:
        raise AgonError(
            "--jobs cannot be combined with --move-jobs or --ray: spread either families or a "
            "job's moves"
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
        return bool(kept_move_tables(path)) if apart else path.exists()

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
    results = _load(store, kept=lambda key: not (fresh and selected(key)))
    for key, (agent, variant) in measured.items():
        if quality_positions and selected(key):
            if progress is not None:
                progress(f"measuring {agent} on {variant.game.description} …")
            report = measure_quality(
                variant.game, agent, quality_positions, 1, progress, jobs=workers
            )
            if report.not_reached:  # (stopped: a part of a measurement is not kept)
                raise KeyboardInterrupt
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
        return table_bits, path, not fresh, move_jobs, cluster, split_after

    def finish(job: Job, record: Record) -> None:
        results[job.key] = record
        running.discard(job.family_name)
        if _value_unknown(record):
            given_up.add(job.family_name)
        _save(store, results)

    def solve_each() -> None:
        while (task := next_job()) is not None:
            job, budget = task
            finish(job, solve_job(job, budget, progress, *solving(job, budget)))

    if cluster is not None:
        from agon.solve.on_ray import connected

        with connected(cluster, move_jobs):
            solve_each()
    elif workers <= 1:
        solve_each()
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


def _load(path: Path, kept: Callable[[str], bool]) -> dict[str, Record]:
    """The results saved in ``path`` (none where there is none yet) whose key is ``kept``, each
    checked to be what agon tables writes for its job or measurement (a record under a key
    neither has is kept as it is); :class:`AgonError` naming the file and what is wrong in it
    (an entry not ``kept``, to be done again, may be wrong)."""
    if not path.exists():
        return {}
    try:
        data = parse_json(read_text_limited(path, MAX_RESULTS_BYTES, "saved results"))
    except AgonError as error:
        raise AgonError(f"cannot read saved results {path}: {error}") from None
    # (a file Agon did not write is never taken for empty results and replaced, nor one with
    # more in it than the results, which saving them would drop)
    if not isinstance(data, dict) or data.keys() != {"jobs"} or not isinstance(data["jobs"], dict):
        raise AgonError(
            f"{path} is not a file of results that agon tables wrote, and it is not replaced: "
            "give --out another name, or move it"
        )
    results = {key: record for key, record in data["jobs"].items() if kept(key)}
    known = {job.key: job for job in jobs()}
    measured = measurements()
    for key, record in results.items():
        where = f"jobs[{json.dumps(key)}]"
        try:
            if key in known:
                _check_job_record(record, known[key], where)
            elif key in measured:
                _fields(_QUALITY_FIELDS, required=_QUALITY_REQUIRED)(record, where)
            else:  # (no job's any more: kept as it is)
                _fields({})(record, where)
        except _BadField as error:
            again = (
                f", or solve it again: --fresh --only {quoted(key)}" if key in known
                else f", or measure it again: --fresh --only {quoted(key)} --quality-positions N"
                if key in measured else ""
            )
            raise AgonError(
                f"saved results {path}: {error}; correct or delete that entry{again}"
            ) from None
    return {key: _with_infinite_bounds(record) for key, record in results.items()}


# --- what agon tables writes in a record, checked where one is read ------------------------------


class _BadField(Exception):
    """A field of a saved record that is missing, or not what agon tables writes there (the
    message names it, as ``jobs["KEY"]["FIELD"]``)."""


_Check = Callable[[Any, str], None]
"""Raises :class:`_BadField` naming ``where`` (the value's place in the file) unless the value
is one agon tables writes there."""


def _shown(value: Any) -> str:
    """A JSON value as a message shows it (cut short)."""
    return shortened(json.dumps(value))


def _numbers(wanted: str, lowest: float, highest: float, whole: bool = False) -> _Check:
    """Numbers from ``lowest`` to ``highest`` (NaN never is; true and false are no numbers)."""

    def check(value: Any, where: str) -> None:
        kinds = (int,) if whole else (int, float)
        number = isinstance(value, kinds) and not isinstance(value, bool)
        if not (number and lowest <= value <= highest):
            raise _BadField(f"{where} must be {wanted}, not {_shown(value)}")

    return check


_count = _numbers("a whole number, 0 or more", 0, MAX_COUNT, whole=True)
_seconds = _numbers(f"a number of seconds, 0 to {MAX_SECONDS:,.0f}", 0, MAX_SECONDS)
_points = _numbers("a finite number of points", -MAX_COUNT, MAX_COUNT)
_share = _numbers("a share, 0 to 1", 0, 1)


def _text(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise _BadField(f"{where} must be a text, not {_shown(value)}")


def _one_of(*choices: str) -> _Check:
    def check(value: Any, where: str) -> None:
        if value not in choices:
            wanted = " or ".join(map(json.dumps, choices))
            raise _BadField(f"{where} must be {wanted}, not {_shown(value)}")

    return check


def _or_null(check: _Check) -> _Check:
    """``check``'s values, or null (an unbounded side, no limit)."""

    def either(value: Any, where: str) -> None:
        if value is not None:
            check(value, where)

    return either


def _list_of(check: _Check, length: int | None = None) -> _Check:
    def each(value: Any, where: str) -> None:
        if not isinstance(value, list) or length not in (None, len(value)):
            size = "a list" if length is None else f"a list of {length}"
            raise _BadField(f"{where} must be {size}, not {_shown(value)}")
        for index, item in enumerate(value):
            check(item, f"{where}[{index}]")

    return each


def _object_of(check: _Check) -> _Check:
    """A JSON object of any keys, each value one ``check`` passes."""

    def each(value: Any, where: str) -> None:
        _fields({})(value, where)
        for key, item in value.items():
            check(item, f"{where}[{json.dumps(key)}]")

    return each


def _fields(
    checks: dict[str, _Check], required: tuple[str, ...] = (), closed: bool = False
) -> _Check:
    """A JSON object with the ``required`` fields, each field named in ``checks`` one its check
    passes (others are kept as they are, unless ``closed``)."""

    def each(value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise _BadField(f"{where} must be a JSON object, not {_shown(value)}")
        _require(value, where, required)
        for name, item in value.items():
            if name in checks:
                checks[name](item, f"{where}[{json.dumps(name)}]")
            elif closed:
                raise _BadField(f"{where} has a field {json.dumps(name)} agon tables never writes")

    return each


def _require(record: Record, where: str, names: tuple[str, ...]) -> None:
    for name in names:
        if name not in record:
            raise _BadField(f"{where} has no {json.dumps(name)}")


def _line(value: Any, where: str) -> None:
    """A line of perfect play: its moves, and how the game ended or why the line stopped."""
    _fields(_LINE_FIELDS, required=("moves",))(value, where)
    if "stopped" not in value:
        _require(value, where, ("end", "margin"))


_LINE_FIELDS: dict[str, _Check] = {
    "moves": _list_of(_text), "end": _text, "margin": _points, "stopped": _text,
}
_JOB_FIELDS: dict[str, _Check] = {
    "status": _one_of("solved", "timeout"),
    "value": _points, "best_moves": _list_of(_text), "moves": _object_of(_points),
    "nodes": _count, "seconds": _seconds, "openings_max_seconds": _seconds,
    "max_seconds": _seconds, "lower": _or_null(_points), "upper": _or_null(_points),
    "value_nodes": _count, "value_seconds": _seconds,
    "best_so_far": _list_of(_text), "not_best": _list_of(_text),
    "move_bounds": _object_of(_list_of(_or_null(_points), length=2)),
    "lines": _object_of(_line),
    "moves_apart": _count, "table_bits": _count,
    "earlier": _fields(
        {"nodes": _count, "seconds": _seconds, "runs": _count},
        required=("nodes", "seconds", "runs"), closed=True,
    ),
}
_QUALITY_FIELDS: dict[str, _Check] = {
    "game": _text, "agent": _text, "positions": _count, "from_random": _count,
    "from_self_play": _count, "self_play_distinct": _count, "unsettled": _count,
    "max_seconds": _or_null(_seconds),
    "optimal_share": _share, "mean_loss": _points, "agent_seconds_per_move": _seconds,
}
_QUALITY_REQUIRED = ("positions", "optimal_share", "mean_loss", "agent_seconds_per_move")


def _check_job_record(record: Any, job: Job, where: str) -> None:
    """Refuse (:class:`_BadField`) a record that is not what :func:`record_of` writes for
    ``job``: the fields its status needs (the report reads them), each of its kind, and its
    moves named as the job's game names them."""
    _fields(_JOB_FIELDS, required=("status",))(record, where)
    if record["status"] == "timeout":
        _require(record, where, ("max_seconds", "lower", "upper", "nodes"))
    else:
        _require(record, where, ("nodes", "seconds") if job.lines_only else (
            "value", "best_moves", "nodes", "seconds"
        ))
        if job.openings and not job.lines_only and "moves" not in record:
            _require(record, where, ("openings_max_seconds",))
        for first in job.lines_after:
            if first not in record.get("lines", {}):
                raise _BadField(f"{where} has no line after {json.dumps(first)}")
    # what is proven of the value comes with its cost, the moves found best with the others
    for field, needed in (("value_seconds", "value_nodes"), ("best_so_far", "not_best")):
        if field in record:
            _require(record, where, (needed,))
    named = [
        (field, move) for field in ("best_moves", "moves", "move_bounds")
        for move in record.get(field, ())
    ]
    for field, move in named:
        try:
            job.game.parse_move(move)
        except AgonError:
            raise _BadField(
                f"{where}[{json.dumps(field)}] names {_shown(move)}, not a move of "
                f"{job.game.description}"
            ) from None


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
