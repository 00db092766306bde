"""``agon calibrate``: rate the computer's agents in Elo and choose its levels by the ratings
(:mod:`agon.study.calibration`)."""

from __future__ import annotations

import json
import os
import shlex
from datetime import UTC, datetime
from importlib.metadata import version
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
    counted_progress,
    fail,
    game_command,
    option_words,
    stoppable_work,
)
from agon.core.errors import AgonError
from agon.core.files import folder_locked, replace_file, user_path

if TYPE_CHECKING:
    from agon.study.calibration import Calibration, CalibrationRequest

MAX_POOL = 32


def calibrate_command(
    game_name: GameArg,
    options: GameOptions,
    pool: Annotated[
        str | None,
        typer.Option(
            help="The agents to rate, weakest meant first, separated by commas; the first is "
            "the anchor, rated 0, and the last the strongest level. Default: random, greedy, "
            "MCTS from 8 to 8,192 simulations, strongest:2s.",
            show_default=False,
        ),
    ] = None,
    games: Annotated[int, typer.Option(help="Games each pair of neighbours plays.")] = 20,
    jobs: Annotated[int, typer.Option(help="Worker processes playing games at once.")] = 1,
    seed: Annotated[int, typer.Option(help="Seed of the matches.")] = 1,
    random_plies: Annotated[
        int, typer.Option(help="Plies at random opening each pair of games, so games differ.")
    ] = 2,
    out: Annotated[
        Path | None,
        typer.Option(
            help="The levels file to write the variant's entry into (other entries are kept). "
            "Default: the game's own, which ships with the package; a file elsewhere is used "
            "where $AGON_LEVELS names it.",
            show_default=False,
        ),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report, and write nothing.")] = False,
    checkpoint: Annotated[
        Path | None,
        typer.Option(
            help="Where each finished pairing is kept, so that a stopped calibration goes on "
            "(default: in the user's cache, named after what decides the games).",
            show_default=False,
        ),
    ] = None,
    again: Annotated[
        str | None,
        typer.Option(
            help="Agents of the pool, separated by commas, whose pairings are played again "
            "(after a change to them); the checkpoint's other pairings are kept.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    """Rate a ladder of agents in Elo against a fixed anchor (each pair of neighbours plays a
    match), choose the arena's levels by the ratings, and write them where the arena reads
    them (docs/search.md, *Calibrated levels*).

    Ctrl-C stops it, keeping the pairings finished and the games of the one under way: run it
    again (without --again) to go on.
    """
    from agon.core.compiled import user_cache
    from agon.games import plugin_of
    from agon.study.calibration import (
        DEFAULT_POOL,
        LEVELS_ENV,
        CalibratedEntry,
        CalibrationRequest,
        calibrate,
        package_levels_file,
        read_calibrations,
        write_calibrations,
    )
    from agon.study.external import check_player_spec

    game = build_game(game_name, options)
    check_count(games, "--games", 1, MAX_GAMES)
    check_count(jobs, "--jobs", 1, MAX_WORKERS)
    check_count(random_plies, "--random-plies", 0, MAX_GAMES)
    specs = DEFAULT_POOL if pool is None else _specs(pool)
    played_again = () if again is None else _specs(again)
    if not 2 <= len(specs) <= MAX_POOL:
        fail(f"--pool needs 2 to {MAX_POOL} agents separated by commas, not {len(specs)}")
    named_twice = sorted({spec for spec in specs if specs.count(spec) > 1})
    if named_twice:
        fail(f"--pool names {', '.join(named_twice)} twice: each agent is one rung of the ladder")
    try:
        for spec in specs:
            check_player_spec(spec)
        request = CalibrationRequest(game, specs, games, seed, random_plies, jobs)
        target = user_path(out) if out is not None else package_levels_file(plugin_of(game))
        if target.exists():  # (a file it cannot read is refused before the games, not after)
            read_calibrations(target)
    except AgonError as error:
        fail(str(error))
    kept = user_path(checkpoint) if checkpoint is not None else (
        user_cache() / "calibration" / f"{game.name}-{request.fingerprint()}.json"
    )
    total = games * (len(specs) - 1)
    try:
        with stoppable_work(), counted_progress(quiet) as bar:
            task = bar.add_task("calibrating", total=total)
            calibration = calibrate(
                request, kept,
                lambda pairing, summary: bar.update(
                    task, advance=pairing.games if pairing is not None else 1
                ),
                played_again,
            )
    except AgonError as error:
        fail(str(error))
    except KeyboardInterrupt:
        how = "run again without --again" if played_again else "run again"
        typer.echo(
            f"interrupted: the pairings finished are kept in {kept}, and the games of the one "
            f"under way beside it; {how} to go on",
            err=True,
        )
        raise typer.Exit(INTERRUPTED) from None
    entry = CalibratedEntry(
        game.name, game.options(), tuple(calibration.pairings),
        _provenance(calibration, _command(game_name, options, request), played_again),
    )
    written = None
    if not dry_run:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with folder_locked(target):
                # read again: another calibration may have written its entry since the start
                entries = read_calibrations(target) if target.exists() else []
                kept_entries = [other for other in entries
                                if (other.game, other.options) != (entry.game, entry.options)]
                replace_file(target, write_calibrations([*kept_entries, entry]))
        except AgonError as error:
            fail(f"{error}; the pairings are kept in {kept}")
        except OSError as error:
            fail(f"cannot write {target}: {error.strerror or error}; choose a file with --out "
                 f"and name it in ${LEVELS_ENV}")
        written = target
    if as_json:
        typer.echo(json.dumps({
            **entry.as_json(), "written": written and str(written),
        }))
    else:
        typer.echo(_text(game.description, entry, written))


def _command(name: str, options: GameOptions, request: CalibrationRequest) -> str:
    """The command that plays the same games again."""
    words = ["agon", "calibrate", name, *option_words(request.game, options)]
    words += [
        "--pool", ",".join(request.pool), "--games", str(request.games),
        "--random-plies", str(request.random_plies), "--seed", str(request.seed),
    ]
    return shlex.join(words)


def _specs(text: str) -> tuple[str, ...]:
    """The agent specs of a list separated by commas."""
    return tuple(spec.strip() for spec in text.split(",") if spec.strip())


def _provenance(
    calibration: Calibration, command: str, played_again: tuple[str, ...]
) -> dict[str, Any]:
    """How a calibration was measured: the command, the machine, the time, and which agents'
    pairings were played again on a checkpoint's others."""
    return {
        "command": command,
        "agon": version("agon"),
        "calibrated": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "jobs": calibration.request.jobs,
        "cpus": os.cpu_count(),
        "resumed_pairings": calibration.resumed,
        "played_again": list(played_again),
        "anchor": calibration.request.pool[0],
    }


def _text(description: str, entry: Any, written: Path | None) -> str:
    from agon.study.calibration import chosen_ladder

    lines = [f"{description}: ratings (Elo, the anchor {entry.pairings[0].a} at 0)"]
    for pairing, rating in zip((None, *entry.pairings), entry.ratings(), strict=True):
        low = "-inf" if rating.low is None else f"{rating.low:.0f}"
        high = "+inf" if rating.high is None else f"{rating.high:.0f}"
        record = "" if pairing is None else (
            f"; against {pairing.a}: +{pairing.losses} ={pairing.draws} -{pairing.wins}"
        )
        thinks = "" if rating.seconds_mean is None else (
            f", {rating.seconds_mean:.3f} s a move (p99 {rating.seconds_p99:.3f} s)"
        )
        lines.append(f"  {rating.spec:>16}  {rating.elo:6.0f}  [{low} … {high}]{thinks}{record}")
    ladder = chosen_ladder(entry.ratings())
    lines.append("levels: " + ", ".join(rating.spec for rating in ladder))
    lines.append(f"wrote {written}" if written is not None else "nothing written (--dry-run)")
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    """Add this module's command to the app."""
    app.command("calibrate")(game_command(calibrate_command))
