"""The game page when its server dies and comes back: it says it is offline, reconnects by
itself, and catches up with the moves made meanwhile, without a reload."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect, sync_playwright

from agon.web.background import free_port, launch_chromium
from web_fixtures import replayed

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("web-browser")]

OFFLINE_TEXT = "Connection lost — reconnecting…"
TIMEOUT_MS = 20_000
BACK_WITHIN_MS = 10_000  # generous: the page retries every second at most


class ArenaProcess:
    """``agon serve`` in a process of its own, so that it can be SIGKILLed like a crash."""

    def __init__(self, port: int, database: Path) -> None:
        self.port = port
        self.database = database
        self.url = f"http://127.0.0.1:{port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        """Starts the server; returns the moment it first answered (time.monotonic)."""
        command = [sys.executable, "-c", "from agon.cli import main; main()", "serve",
                   "--port", str(self.port), "--db", str(self.database), "--workers", "1"]
        # A session of its own: the kill takes its thinking workers down with it.
        self.process = subprocess.Popen(command, start_new_session=True,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{self.url}/api/meta", timeout=1).raise_for_status()
                return time.monotonic()
            except httpx.HTTPError:
                pass
            assert self.process.poll() is None, "the arena server exited at start"
            assert time.monotonic() < deadline, "the arena server never answered"
            time.sleep(0.05)

    def kill(self) -> None:
        if self.process is None:
            return
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.process = None

    def post(self, path: str, body: Any, token: str | None = None) -> dict[str, Any]:
        headers = {"X-Agon-Token": token} if token else {}
        answer = httpx.post(f"{self.url}{path}", json=body, headers=headers)
        answer.raise_for_status()
        return dict(answer.json())

    def view(self, game_id: str, token: str) -> dict[str, Any]:
        answer = httpx.get(f"{self.url}/api/games/{game_id}", headers={"X-Agon-Token": token})
        answer.raise_for_status()
        return dict(answer.json())

    def play_any_move(self, game_id: str, token: str) -> str:
        """Plays the first legal move of the game's position; returns it as written."""
        state = replayed(self.view(game_id, token))
        move = state.game.format_move(state.legal_moves()[0])
        self.post(f"/api/games/{game_id}/moves", {"move": move}, token)
        return move


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[ArenaProcess]:
    running = ArenaProcess(free_port(), tmp_path / "arena.db")
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
    elsewhere = ArenaProcess(free_port(), arena.database)
    elsewhere.start()
    try:
        made_while_away = elsewhere.play_any_move(game_id, token)
    finally:
        elsewhere.kill()
    expect(banner).to_have_text(OFFLINE_TEXT)

    answered = arena.start()
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
    created = arena.post("/api/games", {"game": first_game, "opponent": "local"})
    page.goto(arena.url + created["url"])
    page.wait_for_selector("#game[data-live=true]")
    # The requests fail as with no server, while the WebSocket is still open.
    page.route("**/api/games/**", lambda route: route.abort("connectionrefused"))
    page.locator("#board [data-place]").first.click()
    banner = page.locator("#connection")
    expect(banner).to_have_text(OFFLINE_TEXT)
    expect(page.locator("#message")).to_contain_text("The server cannot be reached")
    page.unroute("**/api/games/**")
    expect(banner).to_be_empty()
    expect(page.locator("#board.interactive")).to_have_count(1)
