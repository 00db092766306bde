"""``agon loadtest``: many games played against a running arena, timed (agon.web.loadtest)."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress, TextColumn, TimeElapsedColumn

from agon.cli.common import (
    INTERRUPTED,
    GameArg,
    GameOptions,
    JsonOpt,
    build_game,
    check_count,
    fail,
    game_command,
)
from agon.core.errors import AgonError, quoted
from agon.core.limits import MAX_SECONDS

MAX_LOAD_GAMES = 10_000
MAX_SPECTATORS = 10_000


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("loadtest")(game_command(loadtest))


def loadtest(
    url: Annotated[
        str, typer.Argument(help="The arena, like http://127.0.0.1:8000.", show_default=False)
    ],
    game_name: GameArg,
    options: GameOptions,
    games: Annotated[int, typer.Option(help="Games played at once.")] = 20,
    seconds: Annotated[float, typer.Option(help="Stop making moves after this long.")] = 30.0,
    spectators: Annotated[int, typer.Option(help="WebSockets watching each game.")] = 1,
    computer: Annotated[
        int, typer.Option(help="How many of the games are against the computer.")
    ] = 0,
    level: Annotated[str, typer.Option(help="The computer's level in those games.")] = "beginner",
    moves_per_game: Annotated[int, typer.Option(help="At most this many moves a game.")] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the players' random moves.")] = 1,
    crowd: Annotated[
        int,
        typer.Option(
            help="More spectators of one game (the first's, then the next in its place); the "
            "other games' moves are then timed apart."
        ),
    ] = 0,
    watch_url: Annotated[
        str | None,
        typer.Option(
            help="Where the spectators watch, if not at URL: another server process of the same "
            "arena (on the same database), to time updates across processes.",
            show_default=False,
        ),
    ] = None,
    pause: Annotated[
        float,
        typer.Option(
            help="Seconds a player thinks before each move, on average: the games then offer "
            "about GAMES / PAUSE moves a second, and the latencies say how the arena answers "
            "that rate (0: each game moves as soon as it is answered, saturating the arena)."
        ),
    ] = 0.0,
    moves_over: Annotated[
        str,
        typer.Option(
            help="How players send their moves: websocket (each on a socket of its game, as "
            "the game page does) or http (a request each, as another program may)."
        ),
    ] = "websocket",
    ask_choices: Annotated[
        bool,
        typer.Option(
            "--ask-choices/--no-ask-choices",
            help="Ask the arena what the first place of each move makes before sending it "
            "(GET …/choices), as the game page does when a place is clicked.",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Play many games against a running arena over HTTP and WebSockets, as remote players and
    spectators would (random legal moves), for a bounded time; report moves a second, p50 and
    p99 latencies of moves, updates and the computer's replies, and every error; then check
    that every stored game holds exactly the moves acknowledged. The arena's per-address
    limits are made for players: raise them on the arena to load it from one address
    (docs/web.md, *Load*). Ctrl-C stops it and reports what was measured."""
    from agon.web.config import collect_rarely
    from agon.web.loadtest import MOVES_OVER, LoadPlan, LoadReport, run_load

    game = build_game(game_name, options)
    check_count(games, "--games", 1, MAX_LOAD_GAMES)
    check_count(spectators, "--spectators", 0, MAX_SPECTATORS)
    check_count(computer, "--computer", 0, games)
    check_count(moves_per_game, "--moves-per-game", 1, 1_000_000)
    check_count(crowd, "--crowd", 0, MAX_SPECTATORS)
    if not 0 < seconds <= MAX_SECONDS:
        fail(f"--seconds must be above 0 and at most {MAX_SECONDS:g}, not {seconds:g}")
    if not 0 <= pause <= MAX_SECONDS:
        fail(f"--pause must be at least 0 and at most {MAX_SECONDS:g}, not {pause:g}")
    if moves_over not in MOVES_OVER:
        fail(f"--moves-over is one of {', '.join(MOVES_OVER)}, not {quoted(moves_over)}")
    for given, name in ((url, "the arena's URL"), (watch_url, "--watch-url")):
        if given is not None:
            _check_arena_url(given, name)
    plan = LoadPlan(
        game, games, seconds, spectators, computer, level, moves_per_game, seed, crowd,
        watch_url, pause, moves_over, ask_choices,
    )
    progress = Progress(
        TextColumn("{task.description}"), TimeElapsedColumn(),
        console=Console(stderr=True), transient=True,
    )
    with progress:
        task = progress.add_task("starting the games", total=None)
        played = 0

        def on_move() -> None:
            nonlocal played
            played += 1
            if played % 50 == 0:
                progress.update(task, description=f"{played:,} moves")

        report = LoadReport(plan)
        collect_rarely()  # (its own pauses would be measured as the arena's)
        try:
            asyncio.run(run_load(url, plan, on_move, report))
        except KeyboardInterrupt:
            report.stopped()
        except AgonError as error:
            fail(str(error))
    figures = report.to_json()
    typer.echo(json.dumps(figures) if as_json else _text(figures))
    if report.interrupted:
        raise typer.Exit(INTERRUPTED)
    if figures["errors"] or figures["mismatches"]:
        raise typer.Exit(1)


def _check_arena_url(given: str, name: str) -> None:
    """Refuse in words, naming ``name``, a URL no arena can be reached at."""
    import httpx

    if not given.startswith(("http://", "https://")):
        fail(f"{name} must start with http:// or https://, not {quoted(given)}")
    try:
        parsed = httpx.URL(given)
    except httpx.InvalidURL as problem:
        fail(f"{name} {quoted(given)} is not a URL: {problem}")
    if not parsed.host:
        fail(f"{name} {quoted(given)} names no host")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        fail(f"{name} {quoted(given)} has port {parsed.port}: a port is 1 to 65535")


def _text(figures: dict[str, Any]) -> str:
    lines = [
        f"{figures['game']}: {figures['games_at_once']} games at once "
        f"({figures['computer_games_at_once']} against the computer), "
        f"{figures['spectators_per_game']} spectators each"
        + (f" and a crowd of {figures['crowd']} on one" if figures["crowd"] else "")
        + (f", {figures['pause']:g} s before each move" if figures["pause"] else "")
        + (", moves sent on the game's socket" if figures["moves_over"] == "websocket" else "")
        + (", each move's first place asked about first" if figures["ask_choices"] else "")
        + f"; {figures['games_played']} played",
        f"{figures['moves']:,} moves in {figures['seconds']:.1f} s: "
        f"{figures['moves_per_second']:,.1f} moves a second",
    ]
    for key, label in (
        ("move_latency", "a move's answer"),
        ("other_games_move_latency", "a move's answer in the games the crowd does not watch"),
        ("update_latency", "an update reaching a spectator"),
        ("computer_latency", "the computer's reply"),
    ):
        found = figures[key]
        if found["count"]:
            lines.append(
                f"{label}: p50 {found['p50'] * 1000:.1f} ms, p99 {found['p99'] * 1000:.1f} ms, "
                f"max {found['max'] * 1000:.1f} ms ({found['count']:,})"
            )
    if figures["interrupted"]:
        lines.append("interrupted: no game checked against the store")
    else:
        lines.append(f"games checked against the store: {figures['games_verified']} equal")
    lines += [f"MISMATCH {mismatch}" for mismatch in figures["mismatches"]]
    errors = figures["errors"]
    lines.append("errors: none" if not errors else "errors:")
    lines += [f"  {count:,} × {kind}" for kind, count in sorted(errors.items())]
    return "\n".join(lines)
