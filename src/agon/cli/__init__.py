"""The ``agon`` command. Each module below adds its commands to the one Typer app."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="agon",
    help="Abstract strategy games: play, analyse, search, solve and serve.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)


def _register_commands() -> None:
    from agon.cli import (
        calibrate_command,
        engine_command,
        loadtest_command,
        play_commands,
        puzzle_commands,
        search_commands,
        serve_command,
        solve_commands,
        study_commands,
        train_command,
    )

    for module in (
        play_commands, study_commands, puzzle_commands, search_commands, solve_commands,
        serve_command, loadtest_command, engine_command, train_command,
        calibrate_command,
    ):
        module.register(app)


_register_commands()


def main() -> None:
    app()
