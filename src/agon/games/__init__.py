"""The registry of games: every game is a plugin found through the entry-point group
``agon.games``, and everything outside a game's own package asks its plugin here.

Alternator and Alak register exactly as a third-party game does, in ``pyproject.toml``::

    [project.entry-points."agon.games"]
    alak = "agon.games.alak:PLUGIN"

:func:`register` adds a plugin by hand (a game under development, a test).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any

from agon.core.errors import AgonError, quoted
from agon.core.game import Game
from agon.core.plugin import BoardRenderer, GamePlugin
from agon.core.texts import Words, game_words
from agon.core.texts import rules_text as _rules_text

ENTRY_POINT_GROUP = "agon.games"

log = logging.getLogger(__name__)
_found: dict[str, GamePlugin[Any, Any]] | None = None
_added: dict[str, GamePlugin[Any, Any]] = {}


def plugins() -> dict[str, GamePlugin[Any, Any]]:
    """Every game's plugin by name, in the order games are listed (``Tooling.order``)."""
    global _found
    if _found is None:
        _found = _load_entry_points()
    every = {**_found, **_added}
    return dict(sorted(every.items(), key=lambda item: (item[1].tooling.order, item[0])))


def names() -> list[str]:
    return list(plugins())


def plugin(name: str) -> GamePlugin[Any, Any]:
    """The plugin of the game called ``name`` (any case); :class:`AgonError` if none is."""
    found = plugins()
    try:
        return found[name.strip().lower()]
    except KeyError:
        raise AgonError(
            f"unknown game {quoted(name)}: choose one of {', '.join(found) or '(none installed)'}"
        ) from None


def plugin_of(game: Game) -> GamePlugin[Any, Any]:
    """The plugin of a variant's game."""
    return plugin(game.name)


def make_game(name: str, options: Mapping[str, Any] | None = None) -> Game:
    """The variant of game ``name`` with these options; unknown names and options are errors."""
    made: Game = plugin(name).make(options)
    return made


def renderer(game: Game) -> BoardRenderer:
    """The renderer of a variant's game (imported on first use: renderers import Rich)."""
    return plugin_of(game).load_renderer()


def rules_text(game: Game, lang: str = "en") -> str:
    """The rules of a variant in Markdown, in one of the languages its game is written in."""
    found = plugin_of(game)
    return _rules_text(game, found.texts, found.languages, lang)


def words(name: str) -> dict[str, Words]:
    """What the lobby and the game page say of game ``name``, by language (in the order of
    its plugin's ``languages``)."""
    found = plugin(name)
    return game_words(found.texts, found.languages)


def register(added: GamePlugin[Any, Any]) -> None:
    """Add a game that no entry point names (it replaces one of the same name)."""
    _added[added.name] = added


def unregister(name: str) -> None:
    """Take back a game :func:`register` added."""
    _added.pop(name, None)


def _load_entry_points() -> dict[str, GamePlugin[Any, Any]]:
    """The plugins the installed packages name. One that does not load is left out with a
    warning, so that a broken game does not take the others down."""
    found: dict[str, GamePlugin[Any, Any]] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = point.load()
        except Exception as error:  # a third party's package: any failure is possible
            log.warning("game %s (%s) does not load: %s", point.name, point.value, error)
            continue
        if not isinstance(loaded, GamePlugin):
            log.warning("game %s (%s) is not a GamePlugin", point.name, point.value)
            continue
        if loaded.name != point.name:
            log.warning(
                "game %s (%s) calls itself %r: its entry point must have its name",
                point.name, point.value, loaded.name,
            )
            continue
        found.setdefault(loaded.name, loaded)
    return found
