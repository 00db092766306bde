"""``agon puzzles`` (puzzles from solved positions) and ``agon store`` (the store of exact
values: what it holds, and building it for a variant)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Annotated

import typer

from agon.cli.common import (
    INTERRUPTED,
    MAX_GAMES,
    GameArg,
    GameOptions,
    build_game,
    check_count,
    check_seconds,
    fail,
    game_command,
    terminate_as_interrupt,
)
from agon.core.errors import AgonError
from agon.core.limits import Limit

MAX_PUZZLES = 10_000
"""The most puzzles one command looks for."""
MAX_STORE_PLIES = 6
"""The deepest ``agon store build`` goes (positions grow as the moves to the power of it)."""


def puzzles(
    game_name: GameArg,
    options: GameOptions,
    count: Annotated[int, typer.Option("--count", help="How many puzzles to find.")] = 5,
    seconds: Annotated[
        float, typer.Option("--limit", help="Seconds a position may take to solve.")
    ] = 1.0,
    games: Annotated[
        int | None,
        typer.Option(help="The most games the agents play (default: 50 for each puzzle)."),
    ] = None,
    seed: Annotated[
        int, typer.Option(help="The agents' games (the same seed, the same puzzles).")
    ] = 1,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="The folder the puzzles are saved in, as records (default: the collection the "
            "arena's puzzle page reads: $AGON_HOME/puzzles, else $XDG_DATA_HOME/agon/puzzles).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the puzzles as JSON lines.")
    ] = False,
) -> None:
    """Find puzzles: positions of the agents' games where exactly one move keeps the best
    result, proven by the solver; each is saved as a record (`agon replay` steps through its
    answer) and rated 1 to 5 (docs/study.md). Ctrl-C stops, keeping those found."""
    from agon.study.analysis import Analyst
    from agon.study.puzzles import collection_folder, find_puzzles, save_puzzle
    from agon.study.store import ExactValues

    check_count(count, "--count", 1, MAX_PUZZLES)
    check_seconds(seconds, "--limit")
    if games is not None:
        check_count(games, "--games", 1, MAX_GAMES)
    game = build_game(game_name, options)
    folder = out if out is not None else collection_folder()
    if folder.exists() and not folder.is_dir():
        fail(f"--out {folder} is not a folder")
    analyst = Analyst(game, ExactValues())
    started = time.monotonic()
    found = 0

    def progress(message: str) -> None:
        typer.echo(f"… {message}", err=True)

    try:
        with terminate_as_interrupt():
            for puzzle in find_puzzles(
                analyst, count, seed, Limit(seconds=seconds), progress, games
            ):
                path = save_puzzle(puzzle, folder)
                found += 1
                if as_json:
                    typer.echo(json.dumps(puzzle.to_json(), ensure_ascii=False))
                else:
                    answer = game.format_move(puzzle.answer)
                    typer.echo(
                        f"{puzzle.goal} (difficulty {puzzle.difficulty}; answer {answer}): {path}"
                    )
    except KeyboardInterrupt:
        typer.echo(f"interrupted: {found} puzzles kept in {folder}", err=True)
        raise typer.Exit(INTERRUPTED) from None
    except AgonError as error:
        fail(str(error), 1)
    minutes = (time.monotonic() - started) / 60
    typer.echo(f"{found} puzzles in {minutes * 60:.0f} s ({found / max(minutes, 1e-9):.1f} a "
               f"minute), saved in {folder}", err=True)


store_app = typer.Typer(
    help="The store of exact values that analysis, hints, the arena and the agents read.",
    no_args_is_help=True,
)


@store_app.command("show")
def store_show() -> None:
    """The stores read (the one Agon ships, then this user's cache), and the positions each
    holds for each variant."""
    from agon.study.store import SHIPPED_STORE, Store, cache_path

    for label, path, writable in (
        ("shipped", SHIPPED_STORE, False), ("cache", cache_path(), True),
    ):
        if not path.is_file():
            typer.echo(f"{label}: {path} (none yet)")
            continue
        typer.echo(f"{label}: {path}")
        store = Store(path, writable=writable)
        try:
            for variant, positions in store.variants():
                typer.echo(f"  {positions:>8,} positions  {variant}")
        except sqlite3.Error as error:
            typer.echo(f"  unreadable: {error}")
        finally:
            store.close()


def store_build(
    game_name: GameArg,
    options: GameOptions,
    out: Annotated[Path, typer.Option("--out", help="The store file to fill (made if missing).")],
    plies: Annotated[
        int, typer.Option(help="Every position up to this many moves from the start.")
    ] = 1,
    seconds: Annotated[
        float, typer.Option("--limit", help="Seconds one position may take to solve.")
    ] = 600.0,
    table_bits: Annotated[
        int | None, typer.Option(help="The solver's table: 2**bits buckets.")
    ] = None,
) -> None:
    """Solve the start of a variant and every position up to --plies moves after it, each
    with every move's value, into a store (positions it holds already are passed over). Ctrl-C
    stops it, keeping what is done; run it again to go on."""
    from agon.study.analysis import Analyst, fill_store
    from agon.study.store import build_store, compact

    check_count(plies, "--plies", 0, MAX_STORE_PLIES)
    check_seconds(seconds, "--limit")
    game = build_game(game_name, options)
    if out.exists() and not out.is_file():
        fail(f"--out {out} is not a regular file")
    try:
        store = build_store(out)
    except (OSError, sqlite3.Error) as error:
        fail(f"cannot open {out}: {error}", 1)
    analyst = Analyst(game, None, table_bits=table_bits)
    started = time.monotonic()
    shown = [0.0]

    def progress(message: str) -> None:
        if time.monotonic() - shown[0] >= 2:
            typer.echo(f"… {message}", err=True)
            shown[0] = time.monotonic()

    try:
        with terminate_as_interrupt():
            kept, unsolved = fill_store(analyst, store, plies, Limit(seconds=seconds), progress)
    except AgonError as error:
        fail(str(error), 1)
    finally:
        store.close()
        compact(out)
    typer.echo(
        f"{kept} positions kept in {out} ({unsolved} not solved within {seconds:g} s) in "
        f"{time.monotonic() - started:.0f} s"
    )


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("puzzles")(game_command(puzzles))
    store_app.command("build")(game_command(store_build))
    app.add_typer(store_app, name="store")
