"""What every test shares: games that `agon play` saves go to a temporary folder, never the
home folder of whoever runs the tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def saved_games_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """``$AGON_HOME`` for the test: a new empty folder."""
    home = tmp_path_factory.mktemp("agon-home")
    monkeypatch.setenv("AGON_HOME", str(home))
    return home
