"""The game page when its server dies and comes back: it says it is offline, reconnects by
itself, and catches up with the moves made meanwhile, without a reload."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect, sync_playwright

from background import launch_chromium
from web_fixtures import ArenaProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("web-browser")]

OFFLINE_TEXT = "Connection lost — reconnecting…"
TIMEOUT_MS = 20_000
BACK_WITHIN_MS = 10_000  # generous: the page retries every second at most


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[ArenaProcess]:
    running = ArenaProcess(tmp_path / "arena.db")
    running.start()
    yield running
    running.kill()


@pytest.fixture
def page() -> Iterator[Page]:
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        opened = browser.new_page()
        opened.set_default_timeout(TIMEOUT_MS)
        yield opened
        browser.close()


def test_the_page_says_it_is_offline_and_catches_up_when_the_server_returns(
    arena: ArenaProcess, page: Page, tmp_path: Path
) -> None:
    first_game = next(iter(httpx.get(f"{arena.url}/api/meta").json()["games"]))
    created = arena.post("/api/games", {"game": first_game, "opponent": "local"})
    game_id, token = created["id"], created["token"]
    page.goto(arena.url + created["url"])
    page.wait_for_selector("#game[data-live=true]")
    banner = page.locator("#connection")
    expect(banner).to_have_attribute("aria-live", "assertive")
    expect(banner).to_be_empty()
    expect(page.locator("#undo-button")).to_be_disabled()  # nothing to take back yet

    arena.kill()
    expect(banner).to_have_text(OFFLINE_TEXT)
    expect(banner).to_be_visible()
    expect(page.locator("#board.interactive")).to_have_count(0)  # no move can be sent

    # A move made while the page is away (through another server on the same database,
    # which the page does not know of).
    elsewhere = ArenaProcess(arena.database)
    elsewhere.start()
    try:
        made_while_away = elsewhere.play_any_move(game_id, token)
    finally:
        elsewhere.kill()
    expect(banner).to_have_text(OFFLINE_TEXT)

    arena.start()
    answered = time.monotonic()
    # Polled on every animation frame (expect() polls far more coarsely), for the measure.
    page.wait_for_function("() => document.getElementById('connection').textContent === ''",
                           timeout=BACK_WITHIN_MS)
    back = time.monotonic()
    print(f"\npage back {back - answered:.2f} s after the server answered again")
    expect(page.locator("#moves .move-text")).to_have_text([made_while_away])
    expect(page.locator("#board.interactive")).to_have_count(1)
    expect(page.locator("#undo-button")).to_be_enabled()  # this seat's own view is back too

    made_after = arena.play_any_move(game_id, token)  # live again, over the new socket
    expect(page.locator("#moves .move-text")).to_have_text([made_while_away, made_after])
    expect(banner).to_be_empty()


def test_a_request_that_finds_no_server_shows_the_banner_until_one_answers(
    arena: ArenaProcess, page: Page
) -> None:
    first_game = next(iter(httpx.get(f"{arena.url}/api/meta").json()["games"]))
    created = arena.post("/api/games", {"game": first_game, "opponent": "computer",
                                        "level": "beginner", "colour": "black"})
    page.goto(arena.url + created["url"])
    page.wait_for_selector("#game[data-live=true]")
    page.wait_for_selector("#board.interactive")
    # The requests fail as with no server, while the WebSocket is still open (moves and the
    # questions about places go on the socket: a hint is a request).
    page.route("**/api/games/**", lambda route: route.abort("connectionrefused"))
    page.click("#hint-button")
    banner = page.locator("#connection")
    expect(banner).to_have_text(OFFLINE_TEXT)
    expect(page.locator("#message")).to_contain_text("The server cannot be reached")
    page.unroute("**/api/games/**")
    expect(banner).to_be_empty()
    expect(page.locator("#board.interactive")).to_have_count(1)
