"""What every test shares: games that `agon play` saves go to a temporary folder, never the
home folder of whoever runs the tests; a headless browser; a throw-away PostgreSQL server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def saved_games_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """``$AGON_HOME`` for the test: a new empty folder."""
    home = tmp_path_factory.mktemp("agon-home")
    monkeypatch.setenv("AGON_HOME", str(home))
    return home


BROWSER_TIMEOUT_MS = 60_000
"""How long a browser test's page actions wait (a loaded machine is slow, not wrong)."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium, for a browser test module (``background.launch_chromium``)."""
    from playwright.sync_api import sync_playwright

    from background import launch_chromium

    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    """A browser context whose pages must break no rule of the arena's Content-Security-Policy
    (Chromium reports each violation on the console)."""
    opened = browser.new_context(viewport={"width": 1280, "height": 900})
    opened.set_default_timeout(BROWSER_TIMEOUT_MS)
    violations: list[str] = []
    opened.on(
        "console",
        lambda message: violations.append(message.text)
        if "Content Security Policy" in message.text else None,
    )
    yield opened
    opened.close()
    assert not violations, violations


@pytest.fixture
def page(context: Any) -> Any:
    return context.new_page()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """A throw-away PostgreSQL server of this test process's own (each pytest-xdist worker
    starts one): a started ``postgres_cluster.ThrowawayPostgres``. With no PostgreSQL on the
    machine, each test that needs it fails (`make test` installs it)."""
    from postgres_cluster import PostgresNotFound, ThrowawayPostgres

    missing: str | None = None
    try:
        cluster = ThrowawayPostgres()
    except PostgresNotFound as error:
        missing = str(error)
    if missing is not None:  # (raised outside the except: one message, not two)
        pytest.fail(missing, pytrace=False)
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture
def postgres_url(postgres_server: Any) -> Iterator[str]:
    """The URL (``postgresql://agon@127.0.0.1:PORT/NAME``) of a new empty database for the
    test alone, on :func:`postgres_server`; dropped after the test."""
    url: str = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


@pytest.fixture
def web_db(tmp_path: Path) -> Path:
    """The arena's SQLite file for a test."""
    return tmp_path / "arena.db"


@pytest.fixture
def arena_url(web_db: Path) -> str:
    """The test's arena database (``web_fixtures.make_client``): an SQLite file here; a module
    whose tests run on PostgreSQL too overrides it with
    ``web_fixtures.arena_url_on_both_databases``."""
    return str(web_db)
