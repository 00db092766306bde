"""Everything ``agon tables`` solves and measures: each game's catalogue, gathered."""

from __future__ import annotations

from collections.abc import Iterator

from agon.core.game import Game
from agon.core.results import Catalogue, Job, QualityGame
from agon.games import plugin_of, plugins

QUALITY_AGENTS = ("mcts:1s", "alphabeta:1s")
"""The agents whose move quality is measured on each game's quality variants."""


def catalogues() -> dict[str, Catalogue]:
    """The catalogue of each game that has one, by the game's title, in the games' order."""
    found = {each.title: each.tooling.load_catalogue() for each in plugins().values()}
    return {title: catalogue for title, catalogue in found.items() if catalogue is not None}


def jobs() -> Iterator[Job]:
    """Every game's jobs, game after game, the cheap ones of each first."""
    for catalogue in catalogues().values():
        yield from catalogue.jobs()


def quality_games() -> list[QualityGame]:
    return [variant for catalogue in catalogues().values() for variant in catalogue.quality]


def measurements() -> dict[str, tuple[str, QualityGame]]:
    """Every move-quality measurement, by key: (agent, variant)."""
    return {
        quality_key(agent, variant): (agent, variant)
        for agent in QUALITY_AGENTS for variant in quality_games()
    }


def quality_key(agent: str, variant: QualityGame) -> str:
    return f"quality-{agent}-{variant.label}"


def quality_command(agent: str, variant: QualityGame, positions: int) -> str:
    return (
        f"agon quality {variant.game.name} {agent} {variant.options} --positions {positions} "
        "--seed 1"
    )


def table_bits(game: Game) -> int:
    """The transposition table's size in the tables, as the game declares it."""
    return plugin_of(game).tooling.catalogue_table_bits


def table_sizes() -> dict[str, int]:
    """Each game's table size in the tables, by title (the games with a catalogue)."""
    return {
        found.title: found.tooling.catalogue_table_bits
        for found in plugins().values() if found.tooling.catalogue is not None
    }
