"""Commands that pit agents against each other and measure speed: ``agon match``, ``agon bench``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

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
    game_command,
    stoppable_work,
)
from agon.core.errors import AgonError, quoted
from agon.core.files import user_path
from agon.search.match import GameSummary, MatchReport, run_match
from agon.search.registry import AGENTS
from agon.search.variants import MEASURES, bench_variants, verify_variants
from agon.study.external import ENGINE_SPEC_HELP, check_player_spec, make_player

AGENT_HELP = (
    f"Agent spec NAME[:BUDGET]; agents: {', '.join(AGENTS)}; budgets like 2s, 500ms (per move) "
    f"or 20000 (MCTS iterations, alpha-beta nodes). Or {ENGINE_SPEC_HELP}"
)


def _progress(shown: bool = True) -> Progress:
    """A progress bar on stderr, so that stdout keeps only the report."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not shown,
    )


def _signed(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "?"
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value:+.{digits}f}"


def match_text(report: MatchReport) -> str:
    """The report for people."""
    played = len(report.games)
    lines = [
        f"{report.game.description}: A = {report.agent_a}, B = {report.agent_b}; "
        f"{played} of {report.requested} games"
        + (f" ({report.resumed} kept from before)" if report.resumed else "")
        + (" (interrupted)" if report.interrupted else "")
        + f", A is Black in odd games; seed {report.seed}"
    ]
    if not played:
        return lines[0]
    lines.extend(
        f"game {summary.number}: {summary.result}, {summary.end_reason}"
        for summary in sorted(report.games, key=lambda summary: summary.number)
        if summary.forfeit
    )
    score = report.score or 0.0
    lines.append(
        f"A: {report.wins} wins, {report.draws} draws, {report.losses} losses; "
        f"score {100 * score:.1f}% (a draw counts half)"
    )
    lines.append(f"mean margin, A's view: {_signed(report.mean_margin, 2)}")
    elo = report.elo
    low = _signed(elo.low) if elo.low is not None else "-inf"
    high = _signed(elo.high) if elo.high is not None else "+inf"
    if elo.difference is None:
        difference = "+inf (A won every game)" if score == 1.0 else "-inf (A lost every game)"
        lines.append(f"Elo A - B: {difference}; 95% bound {low} … {high}")
    else:
        lines.append(f"Elo A - B: {_signed(elo.difference)} (95% interval {low} … {high})")
    for which, spec in (("a", report.agent_a), ("b", report.agent_b)):
        times = report.move_times(which)
        if times.mean is not None and times.p99 is not None and times.longest is not None:
            lines.append(
                f"{which.upper()} ({spec}) took a move: {times.mean:.3f} s on average, "
                f"{times.p99:.3f} s at p99, {times.longest:.3f} s at most"
            )
    return "\n".join(lines)


def match(
    game_name: GameArg,
    agent_a: Annotated[str, typer.Argument(help="Agent A. " + AGENT_HELP, show_default=False)],
    agent_b: Annotated[str, typer.Argument(help="Agent B (same form).", show_default=False)],
    options: GameOptions,
    games: Annotated[
        int, typer.Option("--games", min=1, help="Number of games.")
    ] = 10,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs", min=1, help="Worker processes playing games at once."
        ),
    ] = 1,
    seed: Annotated[
        int | None,
        typer.Option(help="Seed: with count budgets a match repeats exactly.", show_default=False),
    ] = None,
    random_plies: Annotated[
        int,
        typer.Option(
            help="Open each game with this many plies at random, the same for both games of a "
            "pair (A as Black, then as White): agents that always play the same move in the "
            "same position otherwise play the same two games again and again."
        ),
    ] = 0,
    checkpoint: Annotated[
        Path | None,
        typer.Option(
            help="Keep each finished game in this file (JSON lines) and play only the games it "
            "does not hold yet: a match stopped (Ctrl-C, SIGTERM, a crash) goes on with the "
            "same command, as though never stopped; --games may grow. The file names the "
            "match (variant, agents, seed, openings): another match's is refused. Without "
            "--seed, the file's seed is taken (a new file draws one).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress on stderr.")
    ] = False,
) -> None:
    """Play a match of A against B, colours alternating; report A's wins, draws and losses,
    mean margin and Elo difference. Progress goes to stderr: a bar on a terminal, else a line
    a game (for a log). Ctrl-C (or SIGTERM) stops it and reports the games finished so far;
    with --checkpoint, the same command then goes on from them."""
    game = build_game(game_name, options)
    check_count(games, "--games", 1, MAX_GAMES)
    check_count(jobs, "--jobs", 1, MAX_WORKERS)
    check_count(random_plies, "--random-plies", 0, MAX_GAMES)
    for spec in (agent_a, agent_b):
        try:
            check_player_spec(spec)
        except AgonError as error:
            fail(str(error))
    terminal = Console(stderr=True).is_terminal
    lines = not quiet and not terminal
    with _progress(shown=terminal and not quiet) as progress:
        task = progress.add_task(f"{agent_a} vs {agent_b}", total=games)
        tally = {1.0: 0, 0.5: 0, 0.0: 0}  # A's wins, draws and losses so far

        def on_resumed(kept_games: list[GameSummary]) -> None:
            count = len(kept_games)
            for summary in kept_games:
                tally[summary.a_score] += 1
            progress.update(task, advance=count)
            if lines:
                typer.echo(f"{count}/{games} games kept in {kept}: going on from them", err=True)

        def on_game(summary: GameSummary) -> None:
            tally[summary.a_score] += 1
            description = f"{agent_a} vs {agent_b}  +{tally[1.0]} ={tally[0.5]} -{tally[0.0]}"
            progress.update(task, advance=1, description=description)
            if lines:
                typer.echo(
                    f"{sum(tally.values())}/{games} games: game {summary.number} "
                    f"{summary.result} in {summary.moves} moves, A {summary.a_colour.label}; "
                    f"{description}",
                    err=True,
                )

        try:
            kept = None if checkpoint is None else user_path(checkpoint)
            with stoppable_work():
                report = run_match(
                    game, agent_a, agent_b, games, jobs, seed, on_game, make_player, random_plies,
                    checkpoint=kept, on_resumed=on_resumed,
                )
        except AgonError as error:
            fail(str(error))
    typer.echo(json.dumps(report.to_json()) if as_json else match_text(report))
    if report.interrupted:
        if kept is not None:
            typer.echo(
                f"{len(report.games)} of {games} games kept in {kept}: the same command goes on",
                err=True,
            )
        raise typer.Exit(INTERRUPTED)


def _bench_text(results: dict[str, Any]) -> str:
    header = ["variant", *MEASURES, "fast_speedup"]
    rows = [header]
    for name, figures in results.items():
        if name != "compile_s":
            rows.append([name, *(f"{figures[m]:,.0f}" for m in header[1:])])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True))
             for row in rows]
    lines.append(f"compile_s (Numba compile or cache load, before timing): "
                 f"{results['compile_s']:.2f}")
    return "\n".join(lines)


def bench_command(
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only",
            help=f"Only this variant (repeatable): {', '.join(bench_variants())}; with --verify "
            f"also {', '.join(n for n in verify_variants() if n not in bench_variants())}.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
    verify_twins: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="Instead of timing, play random games on the fast twin and the reference "
            "rules side by side and report every difference (exit status 1 if any).",
        ),
    ] = False,
    seconds: Annotated[
        float, typer.Option("--seconds", help="Seconds for each measurement.")
    ] = 2.0,
    games: Annotated[
        int, typer.Option(
            "--games", min=1, help="With --verify: random games per variant."
        )
    ] = 200,
    seed: Annotated[int, typer.Option(help="With --verify: seed of the random games.")] = 1,
) -> None:
    """Measure playouts, MCTS iterations and alpha-beta nodes per second, reference rules and
    fast twins side by side; or, with --verify, check the fast twins against the reference."""
    from agon.search.bench import bench, verify

    check_seconds(seconds, "--seconds")
    check_count(games, "--games", 1, MAX_GAMES)
    known = verify_variants() if verify_twins else bench_variants()
    names = list(only or known)
    for name in names:
        if name not in known:
            fail(f"unknown variant {quoted(name)}: choose among {', '.join(known)}")
    try:
        with _progress() as progress:
            if verify_twins:
                task = progress.add_task("verifying", total=games * len(names))
                mismatches = verify(
                    names, games, seed, lambda name: progress.update(
                        task, advance=1, description=f"verifying {name}"
                    )
                )
            else:
                task = progress.add_task("compiling", total=len(names) * len(MEASURES))
                steps = iter(range(len(names) * len(MEASURES)))

                def on_step(name: str, measure: str) -> None:
                    progress.update(task, completed=next(steps), description=f"{name}: {measure}")

                results = bench(names, seconds, on_step)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        raise typer.Exit(INTERRUPTED) from None
    if verify_twins:
        report = {"variants": names, "games_per_variant": games, "mismatches": mismatches}
        if as_json:
            typer.echo(json.dumps(report))
        else:
            typer.echo("\n".join(mismatches) if mismatches else
                       f"no differences in {games} games of each of {len(names)} variants")
        if mismatches:
            raise typer.Exit(1)
        return
    typer.echo(json.dumps(results) if as_json else _bench_text(results))


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("match")(game_command(match))
    app.command("bench")(bench_command)
