"""Screenshots of the arena's main screens for the README: ``.venv/bin/python
docs/screenshots/take.py [OUT_DIR]`` (default: this folder).

Starts a real server on a temporary database, plays some games through the API (moves chosen
with the rules engine), and photographs the pages in headless Chromium (Playwright). Needs the
``test`` extra and Debian's ``chromium``.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from agon.core.game import State
from agon.games import make_game

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from background import BackgroundServer, launch_chromium

VIEWPORT = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}


class Player:
    """Plays one seat of a game through the HTTP API."""

    def __init__(self, client: httpx.Client, created: dict[str, Any]) -> None:
        self.client = client
        self.id = created["id"]
        self.token = created["token"]
        self.url = created["url"]

    def view(self) -> dict[str, Any]:
        answer = self.client.get(f"/api/games/{self.id}", headers={"X-Agon-Token": self.token})
        answer.raise_for_status()
        return dict(answer.json())

    def state(self, view: dict[str, Any]) -> State:
        state = make_game(view["game"], view["variant"]).new_state()
        for move in view["moves"]:
            state.play_text(move["text"])
        return state

    def wait_for_turn(self) -> dict[str, Any]:
        for _ in range(600):
            view = self.view()
            if view["status"] != "active" or view["to_move"] in view["you"]:
                return view
            time.sleep(0.05)
        raise TimeoutError("the computer did not answer")

    def play(self, move: str) -> None:
        answer = self.client.post(
            f"/api/games/{self.id}/moves", json={"move": move}, headers={"X-Agon-Token": self.token}
        )
        answer.raise_for_status()

    def play_some(self, count: int, rng: random.Random) -> dict[str, Any]:
        """Play ``count`` moves of ours (the computer answers), preferring to grow trees."""
        for _ in range(count):
            view = self.wait_for_turn()
            if view["status"] != "active":
                return view
            state = self.state(view)
            moves = [m for m in state.legal_moves() if m != state.game.pass_move]
            moves = moves or state.legal_moves()  # passing is all that is left
            move = max(moves, key=lambda m: rng.random() + 0.3 * _growth(state, m))
            self.play(state.game.format_move(move))
        return self.wait_for_turn()


def _growth(state: State, move: int) -> int:
    """Alternator: the size of the tree a move makes (a taste for big trees looks like play)."""
    sizes = getattr(state, "cells", None)
    if sizes is None or move == state.game.pass_move:
        return 0
    pit, root = state.game.move_cells(move)  # type: ignore[attr-defined]
    return int(sizes[pit] + sizes[root]) if root is not None else 0


def create(client: httpx.Client, **body: Any) -> Player:
    answer = client.post("/api/games", json=body)
    answer.raise_for_status()
    return Player(client, answer.json())


def take(out: Path, page: Any, name: str) -> Path:
    path = out / f"{name}.png"
    page.screenshot(path=str(path))
    print(f"wrote {path}")
    return path


def make_screenshots(out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    shots: list[Path] = []
    with (
        tempfile.TemporaryDirectory() as folder,
        BackgroundServer(Path(folder) / "shots.db", workers=2, warm=True) as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
        sync_playwright() as playwright,
    ):
        alternator = create(client, game="alternator", options={"width": 8, "height": 8},
                            opponent="computer", level="medium", colour="black")
        alternator.play_some(14, rng)
        alak = create(client, game="alak", options={"size": 11}, opponent="computer",
                      level="easy", colour="black")
        alak.play_some(5, rng)
        finished = create(client, game="alak", options={"size": 7}, opponent="computer",
                          level="beginner", colour="black")
        finished.play_some(20, rng)
        watched = create(client, game="alternator", options={"width": 6, "height": 6},
                         opponent="local")
        watched.play_some(6, rng)

        browser = launch_chromium(playwright)
        context = browser.new_context(viewport=VIEWPORT, color_scheme="light")
        page = context.new_page()
        page.goto(server.url + "/")
        seats = {game.id: {"token": game.token, "saved": index}
                 for index, game in enumerate((finished, alak, alternator))}
        page.evaluate(f"localStorage.setItem('agon.seats', {json.dumps(json.dumps(seats))})")
        page.reload()
        page.wait_for_selector("#my-games a")
        page.wait_for_selector("#live-games a")
        shots.append(take(out, page, "lobby"))

        page.goto(server.url + alternator.url)
        page.wait_for_selector("#game[data-ready=true]")
        pit = _pit_with_roots(client, alternator)
        page.click(f'[data-place="{pit}"]')
        page.wait_for_selector("[data-place].highlight")
        shots.append(take(out, page, "alternator-game"))

        page.goto(server.url + alak.url)
        page.wait_for_selector("#game[data-ready=true]")
        shots.append(take(out, page, "alak-game"))

        page.goto(server.url + finished.url)
        page.wait_for_selector("#game-over[open]")
        shots.append(take(out, page, "game-over"))

        page.goto(server.url + "/rules/alternator?lang=es")
        shots.append(take(out, page, "rules-es"))

        phone = browser.new_context(viewport=PHONE, device_scale_factor=2, color_scheme="dark")
        mobile = phone.new_page()
        mobile.goto(server.url + alternator.url)
        mobile.wait_for_selector("#game[data-ready=true]")
        shots.append(take(out, mobile, "alternator-phone-dark"))
        browser.close()
    return shots


def _pit_with_roots(client: httpx.Client, player: Player) -> str:
    """A cell whose tree can move somewhere: the biggest such tree, for a telling picture."""
    view = player.wait_for_turn()
    state = player.state(view)
    game = state.game
    best: tuple[int, str] | None = None
    for move in state.legal_moves():
        if move == game.pass_move:
            continue
        pit = game.move_places(move)[0]
        size = state.size(pit)  # type: ignore[attr-defined]
        if best is None or size > best[0]:
            best = (size, game.place_name(pit))
    assert best is not None, "no legal move to show"
    return best[1]


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    make_screenshots(out)


if __name__ == "__main__":
    main()
