"""The study in real headless Chromium: a finished game reviewed from its page and stepped
through by keyboard, the graph followed, a position set up by hand, a record imported, every
move's exact value read and played, and puzzles solved and missed. Small boards, so that every
analysis is exact; waits have generous deadlines and nothing asserts a speed."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from background import BackgroundServer, SocketsSeen

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("web-browser")]

TIMEOUT_MS = 60_000
SMALL = {"game": "alak", "options": {"size": 5}}
"""Solved at once: Black wins by 2; 2 and 4 are the best first moves."""
GAME = ("2", "4", "1", "5", "3")
"""A game of the small board: White's 5 gives a point away (an inaccuracy); Black wins by 3."""


@pytest.fixture(scope="module", autouse=True)
def patient_expectations() -> Iterator[None]:
    """Expectations wait as long as the pages' actions (the workers may be starting)."""
    expect.set_options(timeout=TIMEOUT_MS)
    yield
    expect.set_options(timeout=5_000)  # (Playwright's default)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundServer]:
    folder = tmp_path_factory.mktemp("study-arena")
    with pytest.MonkeyPatch.context() as patch:
        # (the thinking workers keep their exact values, and the arena its puzzles, here)
        patch.setenv("AGON_HOME", str(folder / "home"))
        with BackgroundServer(folder / "study.db", workers=1) as running:
            yield running




def finished_game(server: BackgroundServer, moves: tuple[str, ...] = GAME) -> dict[str, Any]:
    created = httpx.post(f"{server.url}/api/games", json={**SMALL, "opponent": "local"}).json()
    for move in moves:
        httpx.post(f"{server.url}/api/games/{created['id']}/moves", json={"move": move},
                   headers={"X-Agon-Token": created["token"]}).raise_for_status()
    return dict(created)


def ply_label(page: Page) -> str:
    return page.locator("#ply-label").inner_text()


def test_a_finished_game_is_reviewed_and_stepped_through_by_keyboard(
    page: Page, server: BackgroundServer
) -> None:
    created = finished_game(server)
    page.goto(server.url + created["url"])
    page.wait_for_selector("#game[data-ready=true]")
    page.click("#game-over button[value=close]")
    review = page.locator("#review-link")
    expect(review).to_be_visible()
    review.click()
    page.wait_for_url(re.compile(rf"/analysis/{created['id']}"))
    page.wait_for_selector("#analysis[data-review=done]", state="attached")
    expect(page.locator("#study-title")).to_have_text("Alak 5, baljeu rules, edge capture")
    expect(page.locator("#ply-label")).to_contain_text("Start")
    expect(page.locator("#eval-words")).to_have_text("Best play: Black wins by 2")
    expect(page.locator("#eval-badge")).to_have_text("exact")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#ply-label")).to_have_text("Move 2 of 5")
    expect(page.locator('#moves [data-ply="2"]')).to_have_attribute("aria-current", "true")
    page.keyboard.press("End")
    expect(page.locator("#ply-label")).to_have_text("Move 5 of 5")
    expect(page.locator("#eval-words")).to_contain_text("Black wins by 3")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#ply-label")).to_have_text("Move 4 of 5")
    # the move that gave a point away is marked, in the list and on the graph
    expect(page.locator('#moves [data-ply="4"].inaccuracy')).to_have_count(1)
    expect(page.locator("#graph circle.mark.inaccuracy")).to_have_count(1)
    expect(page.locator("#summary")).to_contain_text("1 inaccuracy")
    page.keyboard.press("Home")
    expect(page.locator("#ply-label")).to_contain_text("Start")
    # the shared link opens at the same move
    page.locator('#graph rect.column[data-ply="3"]').click()
    expect(page.locator("#ply-label")).to_have_text("Move 3 of 5")
    assert page.url.endswith("#ply=3")
    other = page.context.new_page()
    other.goto(page.url)
    other.wait_for_selector("#analysis[data-review=done]", state="attached")
    expect(other.locator("#ply-label")).to_have_text("Move 3 of 5")
    expect(other.locator("#eval-played")).to_contain_text("In the game: 5, an inaccuracy")


def test_a_game_being_played_gets_no_analysis(page: Page, server: BackgroundServer) -> None:
    created = finished_game(server, GAME[:2])
    page.goto(f"{server.url}/analysis/{created['id']}")
    page.wait_for_selector("#analysis[data-ready=true]", state="attached")
    expect(page.locator("#message")).to_contain_text("still being played")
    expect(page.locator("#eval-words")).to_have_text("No analysis while the game is being played.")
    expect(page.locator("#move-values .move-value")).to_have_count(0)
    page.keyboard.press("End")
    expect(page.locator("#ply-label")).to_have_text("Move 2 of 2")


def test_the_graph_jumps_to_the_move_clicked(page: Page, server: BackgroundServer) -> None:
    created = finished_game(server)
    page.goto(f"{server.url}/analysis/{created['id']}")
    page.wait_for_selector("#analysis[data-review=done]", state="attached")
    columns = page.locator("#graph rect.column")
    expect(columns).to_have_count(len(GAME) + 1)
    for ply in (5, 1, 4):
        page.locator(f'#graph rect.column[data-ply="{ply}"]').click()
        expect(page.locator("#ply-label")).to_have_text(f"Move {ply} of 5")
        expect(page.locator("#graph line.here")).to_have_count(1)
    mark = page.locator("#graph circle.mark.inaccuracy")
    box = mark.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(page.locator("#ply-label")).to_have_text("Move 4 of 5")


def test_every_move_s_exact_value_is_read_and_played(page: Page, server: BackgroundServer) -> None:
    created = finished_game(server)
    seen = SocketsSeen(page)
    page.goto(f"{server.url}/analysis/{created['id']}")
    page.wait_for_selector("#analysis[data-ready=true]", state="attached")
    best = page.locator('#move-values [data-move="2"]')
    expect(best).to_contain_text("+2")
    expect(best).to_contain_text("best")
    expect(page.locator('#move-values [data-move="1"]')).to_contain_text("−2")
    expect(page.locator('#move-values [data-move="3"]')).to_contain_text("+1")
    expect(page.locator("#move-values .best")).to_have_count(2)
    # the game's own next move steps forward; another starts a variation
    best.click()
    expect(page.locator("#ply-label")).to_have_text("Move 1 of 5")
    page.locator('#move-values [data-move="3"]').click()
    expect(page.locator("#variation")).to_contain_text("A variation after move 1: 3")
    expect(page.locator("#ply-label")).to_have_text("Move 1 of 5 + 1")
    expect(page.locator("#eval-words")).to_contain_text("Black wins by 3")  # (3 gave one away)
    # a move made on the board goes on with the variation
    page.locator('#board [data-place="5"]').click()
    expect(page.locator("#variation")).to_contain_text("3 5")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#variation")).to_contain_text("A variation after move 1: 3")
    page.click("#leave-variation")
    expect(page.locator("#variation")).to_be_hidden()
    expect(page.locator("#ply-label")).to_have_text("Move 1 of 5")
    # the analyses came packed, as the game's updates do (docs/web.md, Packed updates)
    assert seen.all_packed(server.url.replace("http://", "ws://") + "/ws/analysis")


def test_a_position_is_set_up_by_hand(page: Page, server: BackgroundServer) -> None:
    page.goto(server.url + "/analysis")
    page.wait_for_selector("#analysis[data-ready=true]", state="attached")
    page.select_option("#setup-game", "alak")
    page.fill('#setup-variants .variant[data-game="alak"] input[name=size]', "5")
    page.locator('#setup-variants .variant[data-game="alak"] input[name=size]').dispatch_event(
        "change"
    )
    expect(page.locator("#position-text")).to_have_value("..... x")
    page.fill("#position-text", "..x.. z")
    expect(page.locator("#setup-error")).to_contain_text("the position does not load")
    expect(page.locator("#setup-submit")).to_be_disabled()
    page.fill("#position-text", "..x.. o")
    expect(page.locator("#setup-error")).to_have_text("")
    expect(page.locator("#setup-board svg")).to_have_count(1)
    expect(page.locator('#setup-board [data-place="3"]')).to_have_count(1)
    page.click("#setup-submit")
    expect(page.locator("#study")).to_be_visible()
    expect(page.locator("#study-sub")).to_contain_text("White to play")
    expect(page.locator("#eval-badge")).to_have_text("exact")
    expect(page.locator("#move-values .move-value")).to_have_count(4)
    assert "position=" in page.url and "game=alak" in page.url
    # the address holds the position: opened again, it is the same
    other = page.context.new_page()
    other.goto(page.url)
    expect(other.locator("#study-sub")).to_contain_text("White to play")
    expect(other.locator("#move-values .move-value")).to_have_count(4)


def test_an_exported_record_is_imported_and_reviewed(
    page: Page, server: BackgroundServer
) -> None:
    created = finished_game(server, ("4", "2", "5", "1", "3"))
    record = httpx.get(f"{server.url}/api/games/{created['id']}/record").text
    page.goto(server.url + "/analysis")
    page.wait_for_selector("#analysis[data-ready=true]", state="attached")
    page.fill("#record-text", "{ not a record")
    page.click("#import-submit")
    expect(page.locator("#import-error")).to_contain_text("the record does not load")
    page.fill("#record-text", record)
    page.click("#import-submit")
    expect(page.locator("#study")).to_be_visible()
    expect(page.locator("#moves .move")).to_have_count(5)
    expect(page.locator("#ply-label")).to_contain_text("Start")
    page.click("#review-button")
    page.wait_for_selector("#analysis[data-review=done]", state="attached")
    expect(page.locator("#graph rect.column")).to_have_count(6)
    page.keyboard.press("End")
    expect(page.locator("#ply-label")).to_have_text("Move 5 of 5")


def test_the_engine_thinks_on_until_stopped(page: Page, server: BackgroundServer) -> None:
    page.goto(f"{server.url}/analysis#game=alak&options=%7B%22size%22%3A15%7D&ply=0")
    page.wait_for_selector("#analysis[data-ready=true]", state="attached")
    expect(page.locator("#eval-badge")).to_have_text("estimate")
    stop = page.locator("#stop-button")
    expect(stop).to_be_enabled()
    stop.click()
    expect(stop).to_be_disabled()
    expect(page.locator("#go-on-button")).to_be_visible()
    expect(page.locator("#eval-words")).to_contain_text("About")


def puzzle_answer(server: BackgroundServer, page: Page) -> tuple[str, str, dict[str, Any]]:
    """The puzzle shown: its one best move (solved through the API), a wrong one, and the
    analysis."""
    key = page.locator("#puzzle").get_attribute("data-key")
    puzzle = httpx.get(f"{server.url}/api/puzzles/alak").json()["puzzle"]
    while puzzle["key"] != key:
        puzzle = httpx.get(f"{server.url}/api/puzzles/alak?after={puzzle['key']}").json()["puzzle"]
    body = {"game": "alak", "options": puzzle["variant"], "position": puzzle["position"]}
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while (answer := httpx.post(f"{server.url}/api/study/analysis", json=body)).status_code == 429:
        assert time.monotonic() < deadline, answer.text  # (the analysts busy meanwhile)
        time.sleep(0.5)
    found = answer.json()
    (answer,) = found["best_moves"]
    wrong = next(item["move"] for item in found["moves"] if not item["best"])
    return answer, wrong, puzzle


@pytest.mark.slow
def test_a_puzzle_is_missed_then_solved(page: Page, server: BackgroundServer) -> None:
    page.goto(server.url + "/")
    page.click("#puzzles-link")
    page.wait_for_url(re.compile("/puzzles/"))
    page.click('.variant-switch a[href="/puzzles/alak"]')
    page.wait_for_selector("#puzzle[data-state=solving]", state="attached")
    expect(page.locator("#puzzle-goal")).to_have_text(
        re.compile(r"(Black|White) to play and (win by \d+|draw)")
    )
    answer, wrong, puzzle = puzzle_answer(server, page)
    page.locator(f'#board [data-place="{wrong}"]').click()
    expect(page.locator("#verdict")).to_have_attribute("data-correct", "false")
    expect(page.locator("#verdict-title")).to_have_text(f"Not {wrong}")
    expect(page.locator("#verdict-words")).to_contain_text(f"After {wrong}, best play")
    expect(page.locator("#verdict-line")).to_contain_text(wrong)
    page.wait_for_selector("#puzzle[data-playing=done]", state="attached")
    expect(page.locator("#verdict-line span").last).to_have_class("current")  # (played out)
    page.click("#again-button")
    page.locator(f'#board [data-place="{answer}"]').click()
    expect(page.locator("#verdict")).to_have_attribute("data-correct", "true")
    expect(page.locator("#verdict-title")).to_have_text(f"Right: {answer}")
    expect(page.locator("#verdict-words")).to_contain_text("Best play")
    page.click("#next-button")
    expect(page.locator("#puzzle")).not_to_have_attribute("data-key", puzzle["key"])
    expect(page.locator("#verdict")).to_be_hidden()


def test_the_study_pages_are_linked(page: Page, server: BackgroundServer) -> None:
    page.goto(server.url + "/")
    expect(page.locator(".site-nav a[href='/analysis']")).to_be_visible()
    expect(page.locator("#analysis-link")).to_be_visible()
    missing = page.goto(server.url + "/puzzles/chess")
    assert missing is not None and missing.status == 404
