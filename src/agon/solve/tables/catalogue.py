"""Everything ``agon tables`` solves and measures: each game's catalogue, gathered."""

from __future__ import annotations

from collections.abc import Iterator

from agon.core.game import Game
from agon.core.results import Job, QualityGame
from agon.games import plugins
from agon.solve.facts import solving_facts

QUALITY_AGENTS = ("mcts:1s", "alphabeta:1s")
"""The agents whose move quality is measured on each game's quality variants."""


def jobs() -> Iterator[Job]:
    """Every game's jobs, game after game, the cheap ones of each first."""
    for found in plugins().values():
        if found.catalogue is not None:
            yield from found.catalogue().jobs()


def quality_games() -> list[QualityGame]:
    return [
        variant for found in plugins().values() if found.catalogue is not None
        for variant in found.catalogue().quality
    ]


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
    return solving_facts(game).tables_bits


def table_sizes() -> dict[str, int]:
    """Each game's table size in the tables, by title (the games with a catalogue)."""
    return {
        found.title: table_bits(found.make())
        for found in plugins().values() if found.catalogue is not None
    }
