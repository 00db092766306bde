"""``agon train``: learn a game's evaluation weights (:mod:`agon.study.training`)."""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agon.cli.common import (
    INTERRUPTED,
    MAX_GAMES,
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
from agon.core.evaluation import WEIGHTS_ENV
from agon.core.files import folder_locked, replace_file, user_path
from agon.core.limits import MAX_COUNT

if TYPE_CHECKING:
    from agon.study.training import Measure, TrainReport, TrainRequest



def train_command(
    game_name: GameArg,
    options: GameOptions,
    games: Annotated[int, typer.Option(help="Self-play games to learn from.")] = 200,
    player: Annotated[
        str,
        typer.Option(
            help="The agent that plays them, with a count budget so that a game repeats "
            "from its seed."
        ),
    ] = "alphabeta:2000",
    random_plies: Annotated[
        int, typer.Option(help="Plies at random at the start of each game, so games differ.")
    ] = 4,
    lam: Annotated[
        float,
        typer.Option(
            "--lambda", help="TD(λ): 1 learns from final margins alone, 0 from the next "
            "position's estimate."
        ),
    ] = 0.7,
    exact_nodes: Annotated[
        int,
        typer.Option(
            help="Solver nodes a position may take to count as exactly known (0: learn from "
            "self-play alone)."
        ),
    ] = 100_000,
    ridge: Annotated[
        float, typer.Option(help="How strongly the fit keeps to the hand weights.")
    ] = 1.0,
    seed: Annotated[int, typer.Option(help="Seed of the games: a training repeats from it.")] = 1,
    out: Annotated[
        Path | None,
        typer.Option(
            help="The weights file to write the variant's entry into (other entries are kept). "
            "Default: the game's own, which ships with the package; a file elsewhere is used "
            f"where ${WEIGHTS_ENV} names it.",
            show_default=False,
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report, and write no weights.")
    ] = False,
    checkpoint: Annotated[
        Path | None,
        typer.Option(
            help="Where the games played are kept as they come, so that a stopped training "
            "goes on (default: in the user's cache, named after what decides the games).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    """Learn the weights of a game's evaluation from self-play and exact values
    (docs/evaluation.md, *Learned weights*), and write them where the game's twin reads them.

    Reports the weights, with the hand ones beside them, and how well each estimates the
    held-out games. Ctrl-C stops it, keeping the games played: run it again to go on.
    """
    from agon.core.evaluation import (
        TrainedEntry,
        package_file,
        read_entries,
        with_entry,
        write_entries,
    )
    from agon.solve.solution import SolveInterrupted
    from agon.study.training import TrainRequest, checkpoint_path, terms_of, train

    game = build_game(game_name, options)
    check_count(games, "--games", 1, MAX_GAMES)
    check_count(random_plies, "--random-plies", 0, MAX_GAMES)
    check_count(exact_nodes, "--exact-nodes", 0, MAX_COUNT)
    try:
        request = TrainRequest(
            game, games, player, random_plies, lam, exact_nodes, ridge, seed
        )
        terms = terms_of(game)
        target = user_path(out) if out is not None else package_file(terms)
        if target.exists():  # (a file it cannot read is refused before the games, not after)
            read_entries(target)
        kept = user_path(checkpoint) if checkpoint is not None else checkpoint_path(request)
    except AgonError as error:
        fail(str(error))
    try:
        with stoppable_work(), counted_progress(quiet) as bar:
            task = bar.add_task("self-play", total=games)
            report = train(
                request, kept, lambda done, wanted: bar.update(task, completed=done)
            )
    except AgonError as error:
        fail(str(error))
    except (KeyboardInterrupt, SolveInterrupted):
        typer.echo(f"interrupted: the games played are kept in {kept}; run again to go on",
                   err=True)
        raise typer.Exit(INTERRUPTED) from None
    report.provenance = _provenance(report, request, _command(game_name, options, request))
    written = None
    if not dry_run:
        entry = TrainedEntry(game.options(), report.weights(), report.provenance)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with folder_locked(target):
                # read again: another training may have written its entry since the start
                entries = read_entries(target) if target.exists() else []
                replace_file(target, write_entries(target, with_entry(entries, entry)))
        except AgonError as error:
            fail(f"{error}; the games are kept in {kept}")
        except OSError as error:
            fail(f"cannot write {target}: {error.strerror or error}; choose a file with --out "
                 f"and name it in ${WEIGHTS_ENV}")
        written = target
    typer.echo(json.dumps(_as_json(report, written)) if as_json else _text(report, written))


def _command(name: str, options: GameOptions, request: TrainRequest) -> str:
    """The command that plays the same games again: the game options given, and every setting
    (its defaults may change)."""
    words = ["agon", "train", name, *option_words(request.game, options)]
    words += [
        "--games", str(request.games), "--player", request.player,
        "--random-plies", str(request.random_plies), "--lambda", f"{request.lam:g}",
        "--exact-nodes", str(request.exact_nodes), "--ridge", f"{request.ridge:g}",
        "--seed", str(request.seed),
    ]
    return shlex.join(words)


def _provenance(report: TrainReport, request: TrainRequest, command: str) -> dict[str, Any]:
    """Where a set of weights came from: the command, the data, the time."""
    return {
        "command": command,
        "agon": version("agon"),
        "trained": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seconds": round(report.seconds, 1),
        "resumed_games": report.resumed_games,
        "player": request.player,
        "player_weights": dict(zip(report.names, report.player_weights.tolist(), strict=True)),
        "seed": request.seed, "lambda": request.lam,
        "random_plies": request.random_plies, "exact_nodes": request.exact_nodes,
        "ridge": request.ridge,
        "games": report.games, "positions": report.positions,
        "exact_positions": report.exact_positions, "held_out_games": report.held_out_games,
        "dropped_games": report.dropped_games,
        "hand": report.hand_measure.as_json(), "learned": report.learned_measure.as_json(),
    }


def _as_json(report: TrainReport, written: Path | None) -> dict[str, Any]:
    return {
        "game": report.game.name, "options": report.game.options(),
        "weights": report.weights(),
        "hand_weights": dict(zip(report.names, report.hand.tolist(), strict=True)),
        "rounds": report.rounds,
        "written": None if written is None else str(written),
        **{key: value for key, value in report.provenance.items() if key != "command"},
    }


def _measure_text(measure: Measure) -> str:
    parts = []
    if measure.exact_rmse is not None and measure.exact_sign is not None:
        parts.append(f"error {measure.exact_rmse:.2f} against exact values, "
                     f"winner right {measure.exact_sign:.0%}")
    if measure.final_rmse is not None:
        parts.append(f"error {measure.final_rmse:.2f} against final margins")
    return "; ".join(parts) or "nothing held out to measure on"


def _text(report: TrainReport, written: Path | None) -> str:
    weights = ", ".join(
        f"{name} {learned:+.3f} (hand {hand:+.3f})"
        for name, learned, hand in zip(report.names, report.learned, report.hand, strict=True)
    )
    lines = [
        f"{report.game.description}: {report.games} games ({report.resumed_games} from the "
        f"checkpoint, {report.dropped_games} dropped as too long), {report.positions} "
        f"positions, {report.exact_positions} of them exactly known",
        f"weights: {weights}",
        f"held-out games ({report.held_out_games}), hand weights: "
        + _measure_text(report.hand_measure),
        f"held-out games ({report.held_out_games}), learned weights: "
        + _measure_text(report.learned_measure),
    ]
    lines.append(f"wrote {written}" if written is not None else "no weights written (--dry-run)")
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    """Add this module's command to the app."""
    app.command("train")(game_command(train_command))
