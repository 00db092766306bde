"""Placeholder until its owner writes it."""

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
