"""The games: each one's rules, notation, rendering and fast twin; and a registry by name."""

from collections.abc import Mapping
from typing import Any

from agon.core.errors import AgonError, quoted
from agon.core.game import Game
from agon.games.alak import Alak
from agon.games.alternator import Alternator

GAMES: dict[str, type[Game]] = {"alternator": Alternator, "alak": Alak}


def make_game(name: str, options: Mapping[str, Any] | None = None) -> Game:
    """The variant of game ``name`` with these options; unknown names and options are errors."""
    try:
        game_class = GAMES[name.strip().lower()]
    except KeyError:
        raise AgonError(f"unknown game {quoted(name)}: choose one of {', '.join(GAMES)}") from None
    return game_class.from_options(options or {})


__all__ = ["GAMES", "Alak", "Alternator", "make_game"]
