"""Screenshots of the arena's study pages for docs/web.md: ``.venv/bin/python
docs/screenshots/take_study.py [OUT_DIR]`` (default: this folder).

Starts a real server on a temporary database (and a temporary ``AGON_HOME``, where the puzzles
it finds are kept), plays a game at one screen through the API, and photographs, in headless
Chromium (Playwright), its review on the analysis board (``analysis-board.png``) and a puzzle
missed, its refutation shown (``puzzle.png``). Needs the ``test`` extra and Debian's
``chromium``.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
from pathlib import Path

import httpx

from agon.games import make_game

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from background import BackgroundServer, launch_chromium

VIEWPORT = {"width": 1280, "height": 800}
GAME = {"game": "alak", "options": {"size": 9}}
SEED = 22
TIMEOUT_MS = 120_000


def play_a_game(client: httpx.Client) -> str:
    """A game at one screen, its moves drawn at random (with a taste for the middle); its id."""
    created = client.post("/api/games", json={**GAME, "opponent": "local"}).json()
    headers = {"X-Agon-Token": created["token"]}
    state = make_game(GAME["game"], GAME["options"]).new_state()
    rng = random.Random(SEED)
    while not state.is_over:
        move = rng.choice(state.legal_moves())
        state.play(move)
        answer = client.post(f"/api/games/{created['id']}/moves",
                             json={"move": state.game.format_move(move)}, headers=headers)
        answer.raise_for_status()
    return str(created["id"])


def main(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="agon-shots-") as folder:
        os.environ["AGON_HOME"] = str(Path(folder) / "home")
        with BackgroundServer(Path(folder) / "shots.db", workers=1) as server, \
                sync_playwright() as playwright:
            client = httpx.Client(base_url=server.url, timeout=60)
            game_id = play_a_game(client)
            browser = launch_chromium(playwright)
            page = browser.new_page(viewport=VIEWPORT)
            page.set_default_timeout(TIMEOUT_MS)

            page.goto(f"{server.url}/analysis/{game_id}")
            page.wait_for_selector("#analysis[data-review=done]", state="attached")
            marked = page.locator(
                "#moves .move.blunder, #moves .move.mistake, #moves .move.inaccuracy"
            )
            count = page.locator("#moves .move").count()
            plies = [int(marked.nth(i).get_attribute("data-ply") or "1")
                     for i in range(marked.count())]
            ply = (plies[-1] if plies else count) - 1  # (before the last one: solved)
            page.locator(f'#graph rect.column[data-ply="{ply}"]').click()
            page.wait_for_function(
                "() => document.querySelector('#eval-badge').textContent !== ''"
                " && document.querySelector('#move-values .value')"
            )
            page.wait_for_function("() => document.querySelector('#stop-button').disabled")
            page.mouse.move(0, 0)
            page.screenshot(path=str(out / "analysis-board.png"))

            page.goto(f"{server.url}/puzzles/{GAME['game']}")
            page.wait_for_selector("#puzzle[data-state=solving]", state="attached")
            key = page.locator("#puzzle").get_attribute("data-key")
            puzzle = client.get(f"/api/puzzles/{GAME['game']}").json()["puzzle"]
            while puzzle["key"] != key:
                puzzle = client.get(f"/api/puzzles/{GAME['game']}",
                                    params={"after": puzzle["key"]}).json()["puzzle"]
            body = {"game": puzzle["game"], "options": puzzle["variant"],
                    "position": puzzle["position"]}
            while (answer := client.post("/api/study/analysis", json=body)).status_code == 429:
                time.sleep(0.5)  # (the analysts busy meanwhile)
            found = answer.json()
            wrong = next(item["move"] for item in found["moves"] if not item["best"])
            page.locator(f'#board [data-place="{wrong}"]').click()
            page.wait_for_selector("#puzzle[data-playing=done]", state="attached")
            page.mouse.move(0, 0)
            page.screenshot(path=str(out / "puzzle.png"))
            browser.close()
    print(f"screenshots in {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent)
