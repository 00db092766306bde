"""The registry finds the games through their entry points, and nothing else names them."""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path
from typing import Any

import pytest

import agon.games as registry
from agon.core.errors import AgonError
from agon.core.options import Option
from agon.core.plugin import GamePlugin
from agon.games.alak import Alak

SOURCES = Path(__file__).parents[1] / "src" / "agon"


def test_the_built_in_games_register_through_entry_points() -> None:
    found = registry._load_entry_points()
    assert {"alternator", "alak"} <= set(found)
    assert found["alak"] is registry.plugin("alak")
    assert registry.names()[:2] == ["alternator", "alak"]  # (their declared order)


def test_games_are_found_by_name_in_any_case() -> None:
    assert registry.plugin(" ALAK ").game is Alak
    assert registry.plugin_of(Alak(5)).name == "alak"
    assert registry.make_game("alak", {"size": 5}) == Alak(5)
    with pytest.raises(AgonError, match="unknown game 'chess': choose one of alternator, alak"):
        registry.plugin("chess")


class _Point:
    """An entry point that loads what it is given (or raises it)."""

    def __init__(self, name: str, loaded: Any) -> None:
        self.name, self.value, self._loaded = name, f"somewhere:{name}", loaded

    def load(self) -> Any:
        if isinstance(self._loaded, BaseException):
            raise self._loaded
        return self._loaded


def test_a_game_that_does_not_load_is_left_out_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    alak = registry.plugin("alak")
    points = [
        _Point("broken", ImportError("no module named broken")),
        _Point("stranger", object()),
        _Point("impostor", alak),  # calls itself alak
        _Point("alak", alak),
    ]
    monkeypatch.setattr(registry, "entry_points", lambda group: points)
    with caplog.at_level(logging.WARNING):
        found = registry._load_entry_points()
    assert list(found) == ["alak"]
    warnings = " ".join(record.getMessage() for record in caplog.records)
    assert "broken" in warnings and "does not load" in warnings
    assert "stranger" in warnings and "is not a GamePlugin" in warnings
    assert "impostor" in warnings and "must have its name" in warnings


def test_a_game_registered_by_hand_joins_and_leaves() -> None:
    alak = registry.plugin("alak")
    copy: GamePlugin[Any, Any] = GamePlugin(
        game=type("Renamed", (Alak,), {"name": "renamed"}),
        credit="", texts=alak.texts, renderer=alak.renderer,
        max_game_length=alak.max_game_length,
    )
    registry.register(copy)
    try:
        assert registry.plugin("renamed") is copy
        assert registry.names()[-1] == "renamed"
    finally:
        registry.unregister("renamed")
    assert "renamed" not in registry.names()


def test_every_option_describes_itself_as_json() -> None:
    for found in registry.plugins().values():
        for option in found.game.option_specs:
            described = json.loads(json.dumps(option.describe()))
            assert described["name"] == option.name and described["label"]


def test_options_read_their_values_and_refuse_others_by_name() -> None:
    whole = Option("size", "whole", 3, "")
    assert whole.read("12") == 12 and whole.read(7.0) == 7
    for bad in (7.5, True, "x", None):
        with pytest.raises(AgonError, match="option size must be a whole number"):
            whole.read(bad)
    flag = Option("edge", "bool", True, "")
    assert flag.parse("off") is False and flag.parse("True") is True
    with pytest.raises(AgonError, match="edge must be true or false"):
        flag.parse("sideways")
    with pytest.raises(AgonError, match="edge must be true or false"):
        flag.read(1)


def test_no_code_outside_a_game_names_a_game() -> None:
    """Search, solvers and interfaces know the games only through their plugins (the
    import contracts in pyproject.toml check the imports; this checks the words too)."""
    named = subprocess.run(
        ["grep", "-rniEl", "alak|alternator", str(SOURCES), "--include=*.py", "--include=*.js",
         "--include=*.html", "--include=*.css"],
        capture_output=True, text=True, check=False,
    ).stdout.split()
    outside = [path for path in named if "/agon/games/" not in path]
    assert outside == []


def test_installed_agents_register_through_entry_points() -> None:
    """``openspiel-mcts`` is the adapters' agent: the search's registry finds it by its entry
    point, without importing the adapters (or OpenSpiel) until one is made."""
    from agon.search import registry as agents

    assert "openspiel-mcts" in agents.AGENTS
    assert agents.parse_spec("openspiel-mcts:2000") == ("openspiel-mcts", agents.Limit(count=2000))


def test_an_installed_agent_whose_package_is_missing_fails_in_words() -> None:
    from agon.search import registry as agents

    missing = _Point("elsewhere", ImportError("No module named 'pyspiel'"))
    make = agents._installed(missing)  # type: ignore[arg-type]
    with pytest.raises(AgonError, match="elsewhere needs a package that is not installed"):
        make(registry.make_game("alak", {"size": 5}), None, 1)
