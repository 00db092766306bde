"""Exact solving from the command line: ``agon solve``, ``agon tables`` and ``agon quality``."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agon.cli.common import (
    INTERRUPTED,
    MAX_GAMES,
    MAX_WORKERS,
    GameArg,
    GameOptions,
    JsonOpt,
    build_game,
    check_count,
    check_seconds,
    fail,
    filtered_stop_signals,
    game_command,
    load_start,
    play_moves,
    terminate_as_interrupt,
)
from agon.core.errors import AgonError
from agon.core.game import Game, State, format_points, result_text
from agon.core.limits import Limit
from agon.core.memory import check_memory
from agon.core.results import Work
from agon.solve.facts import DEFAULT_SPLIT_AFTER, Search, is_small_board
from agon.solve.tables.catalogue import table_sizes
from agon.solve.tables.report import DEFAULT_OUT

if TYPE_CHECKING:
    from agon.solve.quality import QualityReport
    from agon.solve.session import PerfectLine, SolveReport
    from agon.solve.solution import Bounds, Solution, SolveInterrupted

# The solver's modules are imported by the commands that run it (and compile or load its
# kernels), not here: every other command starts without them.

TIMED_OUT = 124  # timeout(1)'s status for a command that ran past its limit

RayOpt = Annotated[
    bool,
    typer.Option(
        "--ray",
        help="Solve the moves apart on a Ray cluster (pip install 'agon[ray]'): a cluster of "
        "this machine's own with --jobs CPUs (default: all), or the one --ray-address names. "
        "A task whose worker dies is run again; Ctrl-C stops every task with its bounds.",
    ),
]
RayAddressOpt = Annotated[
    str,
    typer.Option(
        "--ray-address",
        help="With --ray: local (a cluster started for this run), auto (the one `ray start "
        "--head` started here), HOST:6379, or ray://HOST:10001. Every node needs Agon, and "
        "--tables-file or --checkpoints a path they all share.",
    ),
]
SplitAfterOpt = Annotated[
    str,
    typer.Option(
        "--split-after",
        help="With moves solved apart (--jobs, --move-jobs or --ray): a position whose solve "
        "has not ended within this budget (a time like 600s, or a count of nodes) is split: "
        "the positions after its replies are solved apart in turn, and split again where "
        "they too are large, so that a large opening keeps every CPU busy. Each split costs "
        "up to the budget's work. 'never': each move is solved whole.",
    ),
]
QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress lines on stderr during long solves.")
]


DEFAULT_SPLIT_TEXT = str(DEFAULT_SPLIT_AFTER)
NEVER_SPLIT = "never"


def split_budget(text: str) -> Limit | None:
    """The budget ``--split-after`` gives (None: ``never``); a clear failure where it is
    neither a budget nor ``never``."""
    if text.strip().lower() == NEVER_SPLIT:
        return None
    try:
        return Limit.parse(text)
    except AgonError as error:
        fail(f"--split-after: {error} (or '{NEVER_SPLIT}')")


def _start(game: Game, position: str | None, moves: str | None) -> State:
    if position is not None and moves is not None:
        fail("give --position or --moves, not both")
    state = load_start(game, position)
    play_moves(state, moves or "")
    return state


def solution_json(game: Game, solution: Solution) -> dict[str, Any]:
    from agon.solve.solution import json_number

    data: dict[str, Any] = {
        "value": json_number(solution.value),
        "best_moves": [game.format_move(m) for m in solution.best_moves],
    }
    if solution.move_values is not None:
        data["moves"] = {
            game.format_move(m): json_number(v) for m, v in solution.move_values.items()
        }
    data["nodes"] = solution.nodes
    data["seconds"] = round(solution.seconds, 3)
    if solution.komi is not None:
        data["komi"] = json_number(solution.komi)
        data["result"] = result_text(solution.result_margin)
    return data


def solution_text(game: Game, solution: Solution) -> str:
    value = format_points(solution.value)
    lines = [game.description]
    if solution.komi is not None:
        lines.append(f"value without komi: {result_text(solution.value)} (Black's margin {value})")
        lines.append(
            f"with komi {format_points(solution.komi)}: {result_text(solution.result_margin)}"
        )
    else:
        lines.append(f"value: {result_text(solution.value)} (Black's margin {value})")
    best = ", ".join(game.format_move(m) for m in solution.best_moves) or "none (the game is over)"
    lines.append(f"best moves: {best}")
    if solution.move_values is not None:
        lines.append("every move (Black's margin after it):")
        lines.extend(
            f"  {game.format_move(m):>8}  {format_points(v)}"
            for m, v in solution.move_values.items()
        )
    lines.append(f"nodes: {solution.nodes:,}   seconds: {solution.seconds:.2f}")
    return "\n".join(lines)


TableBitsOpt = Annotated[
    int | None,
    typer.Option(
        help="Transposition table of 2**BITS buckets of two entries (default: the size the "
        "game declares for the variant, by how many positions it has and how large an entry "
        "is; docs/solver.md).",
        show_default=False,
    ),
]


TABLE_ENTRY_BYTES = 32
"""Bytes of a bucket of the transposition table (two entries of two 64-bit words)."""


def _check_table_bits(table_bits: int | None, solvers: int = 1) -> None:
    """Refuse a --table-bits out of range, or whose transposition tables alone (one in each
    of ``solvers`` processes) need more memory than the machine has available."""
    if table_bits is None:
        return
    if not 10 <= table_bits <= 30:
        fail("--table-bits must be 10 to 30")
    each = f" in each of {solvers} processes" if solvers > 1 else ""
    try:
        check_memory(
            solvers * (TABLE_ENTRY_BYTES << table_bits),
            f"--table-bits {table_bits} (its transposition table alone{each})",
        )
    except AgonError as error:
        fail(str(error))


SMALL_BOARD_TABLE_BITS = 19
"""The largest transposition table a small board is solved with (2**19 buckets, a million
entries): its solve visits at most a few hundred thousand positions (the game's
``Solving.small``), so a larger table is never filled, only zeroed as the search touches its
pages (gigabytes and seconds with --table-bits 29)."""


def _fillable_table_bits(game: Game, table_bits: int | None) -> int | None:
    """The --table-bits ``game`` is solved with: as asked, but at most
    :data:`SMALL_BOARD_TABLE_BITS` on a small board (saying so on stderr)."""
    if table_bits is None or table_bits <= SMALL_BOARD_TABLE_BITS or not is_small_board(game):
        return table_bits
    typer.echo(
        f"--table-bits {table_bits}: {game.description} is solved in at most a few hundred "
        f"thousand nodes, which 2**{SMALL_BOARD_TABLE_BITS} buckets hold: its table has that "
        "many",
        err=True,
    )
    return SMALL_BOARD_TABLE_BITS


def solve(
    game_name: GameArg,
    options: GameOptions,
    position: Annotated[
        str | None,
        typer.Option("--position", help="Solve this position text.", show_default=False),
    ] = None,
    moves: Annotated[
        str | None,
        typer.Option("--moves", help='Solve after these moves from the start, e.g. "2 5".'),
    ] = None,
    openings: Annotated[
        bool, typer.Option("--openings", help="Also give the value of every legal move.")
    ] = False,
    table_bits: TableBitsOpt = None,
    search: Annotated[
        Search | None,
        typer.Option(
            help="How each MTD(f) test is searched: proof numbers and alpha-beta in turns, or "
            "either alone (default: the game's choice: both in turns where its proofs follow "
            "long forced lines, else alpha-beta).",
            show_default=False,
        ),
    ] = None,
    max_seconds: Annotated[
        float | None,
        typer.Option(help="Stop after this many seconds with the bounds proven so far."),
    ] = None,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs", min=1,
            help="Solve every move at once in this many worker processes, each with its own "
            "tables (memory grows with them); the value and best moves follow from the "
            "moves' values. More work than one solve, spread over cores.",
        ),
    ] = 1,
    ray: RayOpt = False,
    ray_address: RayAddressOpt = "local",
    split_after: SplitAfterOpt = DEFAULT_SPLIT_TEXT,
    line: Annotated[
        bool,
        typer.Option(
            "--line",
            help="Also give a line of perfect play to the end of the game (at each step a move "
            "that keeps the value).",
        ),
    ] = False,
    tables_file: Annotated[
        Path | None,
        typer.Option(
            "--tables-file",
            help="Go on from the solver's tables saved in this file, if it exists, and save "
            "them there every 30 minutes and when the solve ends or stops, so that a solve too "
            "long for one run goes on in the next. With --jobs, each move's solver keeps its "
            "own file beside it (FILE-after-MOVE), saved when it ends or runs out of time, "
            "and a solve that split positions (--split-after) keeps what it split and proved "
            "in FILE-split.json. "
            "The file holds the whole table, whatever it proved: its size is the table's "
            "(--table-bits; the game's default is hundreds of megabytes to gigabytes), not the "
            "work's.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Solve a position exactly: Black's margin with perfect play, and the moves that keep it.

    Where the komi only shifts every final margin, a game may be solved without it (its value is
    then the fair komi), the result under the komi shown beside it. Progress goes to stderr
    during long solves; Ctrl-C stops with the bounds proven so far.
    """
    with _stops(as_json):  # (loading takes a while)
        from agon.solve.session import SolveRequest, run
        from agon.solve.solution import stderr_progress
        from agon.solve.solver import warm_up_kernels

    game = build_game(game_name, options)
    state = _start(game, position, moves)
    check_count(jobs, "--jobs", 1, MAX_WORKERS)
    _check_table_bits(table_bits, jobs)
    table_bits = _fillable_table_bits(game, table_bits)
    check_seconds(max_seconds, "--max-seconds")
    if tables_file is not None and (
        tables_file.is_dir() or not os.access(tables_file.parent, os.W_OK)
    ):
        fail(f"--tables-file {tables_file}: not a file that can be written")
    request = SolveRequest(
        game, state, openings=openings, lines_after=("",) if line else (),
        limit=Limit(seconds=max_seconds), table_bits=table_bits, search=search,
        tables_file=tables_file, move_jobs=jobs, cluster=ray_address if ray else None,
        split_after=split_budget(split_after),
    )
    with _stops(as_json) as hold_stops:
        try:
            if jobs == 1 and not ray:
                warm_up_kernels(game.name)  # so that the solve's seconds do not count compiling
            report = run(request, None if quiet else stderr_progress)
        except AgonError as error:
            fail(str(error))
        hold_stops()  # (a stop now would cut the report short)
        _write_report(game, report, as_json)


def _write_report(game: Game, report: SolveReport, as_json: bool) -> None:
    """Write what a solve found, or what it proved before it stopped (then ending with the
    status of its stop: out of time or interrupted)."""
    from agon.solve.solution import json_number

    for note in report.notes:
        typer.echo(note, err=True)
    if report.stopped is not None:
        stop = report.stopped
        typer.echo(f"{stop} (Black's margin), after {stop.nodes:,} nodes", err=True)
        if stop.move_bounds:
            typer.echo(f"moves so far: {_move_bounds_text(stop.move_bounds)}", err=True)
        if as_json:
            stopped: dict[str, object] = {
                "stopped": stop.reason,
                # a side with no bound proven yet is null
                "lower": json_number(stop.lower), "upper": json_number(stop.upper),
                "nodes": stop.nodes, "seconds": round(stop.seconds, 3),
            }
            stopped.update(stop.found())
            typer.echo(json.dumps(_with_earlier_work(stopped, stop.earlier)))
        raise typer.Exit(_exit_status(stop))
    solution = report.solution
    assert solution is not None
    perfect = report.lines.get("")
    if as_json:
        data = solution_json(game, solution)
        if perfect is not None:
            data["line"] = perfect.as_json(game)
        typer.echo(json.dumps(_with_earlier_work(data, solution.earlier)))
    else:
        text = solution_text(game, solution)
        if solution.earlier.runs:
            text += f"\nbefore this run: {solution.earlier}"
        if perfect is not None:
            text += "\n" + _line_text(game, perfect)
        typer.echo(text)
    if perfect is not None and perfect.stopped is not None:
        raise typer.Exit(_exit_status(perfect.stopped))


def _move_bounds_text(move_bounds: dict[str, Bounds]) -> str:
    """What a stopped solve proved of each move, as Black's margin."""

    def proven(lower: float, upper: float) -> str:
        if lower == upper:
            return format_points(lower)
        if math.isinf(lower):
            return "at most " + format_points(upper)
        if math.isinf(upper):
            return "at least " + format_points(lower)
        return f"{format_points(lower)} to {format_points(upper)}"

    return ", ".join(f"{move}: {proven(*bounds)}" for move, bounds in move_bounds.items())


def _with_earlier_work(data: dict[str, Any], earlier: Work) -> dict[str, Any]:
    """``data`` with the work of the runs before this one (``"earlier"``: nodes, seconds,
    runs), where the solve went on from saved tables."""
    if earlier.runs:
        data["earlier"] = asdict(earlier)
    return data


def _exit_status(stop: SolveInterrupted) -> int:
    return TIMED_OUT if stop.timed_out else INTERRUPTED


@contextmanager
def _stops(as_json: bool) -> Iterator[Callable[[], None]]:
    """Within the block, SIGTERM and SIGHUP stop the solve as Ctrl-C does
    (:func:`terminate_as_interrupt`), and a stop signalled twice at once is one stop (the
    second would cut short the wait for what the first keeps: the workers' bounds, the tables
    being saved); after the ``hold`` it gives, no signal stops anything. A stop before the
    solve has proven anything (while it loads, compiles its kernels or starts its workers: a
    solve under way stops with its bounds) ends the command saying so, in JSON too, with the
    status of an interrupted one."""
    with terminate_as_interrupt(), filtered_stop_signals() as hold:
        try:
            yield hold
        except KeyboardInterrupt:
            typer.echo("interrupted: no bound proven (the solve had not begun)", err=True)
            if as_json:
                nothing: dict[str, object] = {
                    "stopped": "interrupted", "lower": None, "upper": None, "nodes": 0,
                    "seconds": 0,
                }
                typer.echo(json.dumps(nothing))
            raise typer.Exit(INTERRUPTED) from None


def _line_text(game: Game, line: PerfectLine) -> str:
    moves = " ".join(game.format_move(m) for m in line.moves) or "(none)"
    if line.stopped is not None:
        return (
            f"a line of perfect play ({line.stopped.reason} after {len(line.moves)} moves): "
            f"{moves}"
        )
    if not line.end.is_over:
        return f"a line of perfect play (its first {len(line.moves)} moves): {moves}"
    return (
        f"a line of perfect play: {moves}; {line.end.end_reason}, {result_text(line.end.margin)}"
    )


def tables(
    max_seconds: Annotated[
        float, typer.Option(help="Give up on one variant after this many seconds.")
    ] = 60.0,
    out: Annotated[Path, typer.Option(help="The Markdown file to write.")] = DEFAULT_OUT,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Solve everything again, ignoring saved results.")
    ] = False,
    quality_positions: Annotated[
        int,
        typer.Option(
            help="Also measure mcts:1s and alphabeta:1s on the variants each game names for it, "
            "over this many positions each (0: keep the saved figures)."
        ),
    ] = 0,
    only: Annotated[
        list[str] | None,
        typer.Option(
            help="Do only the jobs (and, with --quality-positions, the measurements) whose key "
            "matches this shell-style pattern (repeatable), e.g. 'GAME-*' or 'quality-*'; the "
            "others' saved results are kept. Keys are in the .json file beside the Markdown.",
            show_default=False,
        ),
    ] = None,
    table_bits: Annotated[
        int | None,
        typer.Option(
            help="Transposition table of 2**BITS buckets of two entries for every solve "
            "(default: "
            + ", ".join(f"{bits} for {title}" for title, bits in table_sizes().items())
            + "); a result records a size set here.",
            show_default=False,
        ),
    ] = None,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs", min=1,
            help="Worker processes solving at once, each a different family of growing "
            "boards, each with its own tables: memory grows with them (and measuring the "
            "move quality).",
        ),
    ] = 1,
    move_jobs: Annotated[
        int,
        typer.Option(
            "--move-jobs", min=1,
            help="Solve each job's moves at once in this many worker processes, as agon solve "
            "--jobs does (each move with its own tables: more work, spread over cores; for "
            "the largest boards). Not with --jobs.",
        ),
    ] = 1,
    ray: RayOpt = False,
    ray_address: RayAddressOpt = "local",
    split_after: SplitAfterOpt = DEFAULT_SPLIT_TEXT,
    checkpoints: Annotated[
        Path | None,
        typer.Option(
            help="Keep each job's solver tables in this folder while it is not solved "
            "(KEY.npz, as large as its table: gigabytes for the largest), saved "
            "every 30 minutes and when it stops; a job with a file there goes on from it, "
            "whatever time it had before (unless --fresh). Jobs given only a minute for "
            "bounds keep none. With --move-jobs, each move's tables are kept beside KEY.npz "
            "(KEY-after-MOVE.npz).",
            show_default=False,
        ),
    ] = None,
    quiet: QuietOpt = False,
) -> None:
    """Solve every small variant and write the tables of values (docs/results.md).

    Results are saved beside the Markdown file (same name, .json) as they come, so an
    interrupted run resumes where it stopped; variants that ran out of time are tried again
    only with a larger --max-seconds. Once a board runs out of time before its value is proven,
    the larger boards of its kind get at most a minute each, for bounds on their values.
    """
    from agon.solve.solution import stderr_progress
    from agon.solve.tables.runner import generate_tables

    check_seconds(max_seconds, "--max-seconds")
    check_count(quality_positions, "--quality-positions", 0, MAX_GAMES)
    check_count(jobs, "--jobs", 1, MAX_WORKERS)
    check_count(move_jobs, "--move-jobs", 1, MAX_WORKERS)
    _check_table_bits(table_bits, max(jobs, move_jobs))
    split_budget_limit = split_budget(split_after)
    if checkpoints is not None:
        try:
            checkpoints.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            fail(f"--checkpoints {checkpoints}: {error.strerror or error}")
    try:
        with terminate_as_interrupt():
            generate_tables(
                out, max_seconds, fresh, None if quiet else stderr_progress, quality_positions,
                tuple(only or ()), table_bits, jobs, checkpoints, move_jobs,
                ray_address if ray else None, split_budget_limit,
            )
    except AgonError as error:
        fail(str(error))
    except KeyboardInterrupt:
        typer.echo("interrupted: the results so far are saved; run again to resume", err=True)
        raise typer.Exit(INTERRUPTED) from None
    typer.echo(f"wrote {out}")


def quality(
    game_name: GameArg,
    agent: Annotated[str, typer.Argument(help="Agent spec, e.g. mcts:1s or alphabeta:1s.")],
    options: GameOptions,
    positions: Annotated[
        int, typer.Option(help="How many positions to judge.")
    ] = 100,
    seed: Annotated[int, typer.Option(help="Random seed for sampling and the agent.")] = 1,
    max_seconds: Annotated[
        float | None,
        typer.Option(
            help="Leave out (and count) positions the solver cannot settle within this many "
            "seconds per solve; without it every position is solved, however long it takes."
        ),
    ] = None,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs", min=1,
            help="Worker processes playing the self-play games and judging the positions at "
            "once (the positions are the same whatever their number; give the agent a core "
            "of its own).",
        ),
    ] = 1,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Judge an agent against the solver on positions from random and self-play games.

    Reports the share of positions where the agent's move is optimal (keeps the solved
    value) and the mean margin it gives away per move. Ctrl-C while the positions are judged
    reports on those judged so far.
    """
    from agon.solve.quality import measure_quality
    from agon.solve.solution import SolveInterrupted, stderr_progress
    from agon.study.external import make_player

    game = build_game(game_name, options)
    check_count(positions, "--positions", 1, MAX_GAMES)
    check_seconds(max_seconds, "--max-seconds")
    check_count(jobs, "--jobs", 1, MAX_WORKERS)
    try:
        with terminate_as_interrupt():
            report = measure_quality(
                game, agent, positions, seed, None if quiet else stderr_progress, max_seconds,
                jobs=jobs, make_player=make_player,
            )
    except AgonError as error:
        fail(str(error))
    except (SolveInterrupted, KeyboardInterrupt):
        typer.echo("interrupted before any position was judged", err=True)
        raise typer.Exit(INTERRUPTED) from None
    typer.echo(json.dumps(report.to_json()) if as_json else quality_text(report))
    if report.not_reached:
        typer.echo("interrupted", err=True)
        raise typer.Exit(INTERRUPTED)


def quality_text(report: QualityReport) -> str:
    from agon.solve.quality import span_text

    repeated = report.self_play_distinct < report.from_self_play
    lines = [
        f"{report.agent} on {report.game}: {report.positions} positions "
        f"({report.from_random} from random games, {report.from_self_play} from self-play"
        + (f", {report.self_play_distinct} of them distinct: its own games repeat"
           if repeated else "")
        + ")"
    ]
    if report.not_reached:
        lines.append(
            f"stopped: {report.not_reached} positions were not reached; the figures describe "
            "those judged before the stop"
        )
    if report.unsettled:
        lines.append(
            f"left out: {report.unsettled} the solver did not settle within "
            f"{report.max_seconds:g}s a solve; the figures describe the other {report.judged}"
        )
    if report.optimal_share is None or report.mean_loss is None:
        lines.append(
            "no position was judged before the stop, so there are no figures"
            if report.positions == report.not_reached
            else "no position was settled, so there are no figures: allow more --max-seconds"
        )
    else:
        lines += [
            f"optimal moves: {report.optimal_share:.1%}",
            f"mean margin given away per move: {report.mean_loss:.3f} points",
        ]
    lines.append(f"agent seconds per move: {report.agent_seconds:.2f}")
    lost = [(span, tally) for span, tally in sorted(report.breakdown.items()) if tally.given_away]
    if lost:
        lines.append("where points were given away (by source, then ply):")
        lines += [
            f"  {source}, ply {span_text(first)}: {tally.given_away:g} in {tally.judged} "
            f"positions ({tally.judged - tally.optimal} not optimal)"
            for (source, first), tally in lost
        ]
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("solve")(game_command(solve))
    app.command("tables")(tables)
    app.command("quality")(game_command(quality))
