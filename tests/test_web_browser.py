"""The arena in real headless Chromium: games played by clicking, live updates, rules languages."""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from agon.core.records import GameRecord
from agon.games import make_game, words
from agon.study import calibration
from agon.study.calibration import CalibratedEntry, Pairing, write_calibrations
from agon.web.config import ArenaLimits
from agon.web.engines import read_engine_levels
from agon.web.levels import LEVELS_BY_KEY
from background import BackgroundServer, SocketsSeen
from web_fixtures import replayed

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("web-browser")]

TIMEOUT_MS = 20_000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundServer]:
    database = tmp_path_factory.mktemp("arena") / "browser.db"
    with BackgroundServer(database, workers=1) as running:
        yield running




def seat_of(page: Page) -> tuple[str, str | None]:
    """The game id and seat token of the page's URL."""
    match = re.search(r"/game/([^#?]+)(?:#token=(.+))?$", page.url)
    assert match, page.url
    return match.group(1), match.group(2)


def view_of(server: BackgroundServer, page: Page) -> dict[str, Any]:
    game_id, token = seat_of(page)
    headers = {"X-Agon-Token": token} if token else {}
    answer = httpx.get(f"{server.url}/api/games/{game_id}", headers=headers)
    answer.raise_for_status()
    return dict(answer.json())


def create(server: BackgroundServer, **body: Any) -> dict[str, Any]:
    answer = httpx.post(f"{server.url}/api/games", json=body)
    answer.raise_for_status()
    return dict(answer.json())


def wait_for_my_turn_or_end(page: Page) -> None:
    # Functions, not bare expressions: Playwright evaluates those with eval(), which the
    # page's Content-Security-Policy forbids.
    page.wait_for_function(
        "() => document.querySelector('#board.interactive')"
        " || document.querySelector('#game-over[open]')"
    )


def wait_for_moves(page: Page, at_least: int) -> None:
    page.wait_for_function(
        f"() => document.querySelectorAll('#moves .move-text').length >= {at_least}"
    )


def click_move(page: Page, pit: str, root: str) -> None:
    """An Alternator move as a player makes it: the pit, then its highlighted root."""
    page.click(f'[data-place="{pit}"]')
    expect(page.locator(f'[data-place="{root}"].highlight')).to_have_count(1)
    page.click(f'[data-place="{root}"]')


def moves_shown(page: Page) -> list[str]:
    return page.locator("#moves .move-text").all_inner_texts()


def start_from_lobby(page: Page, server: BackgroundServer, game: str, **fields: str) -> None:
    page.goto(server.url + "/")
    page.wait_for_selector("#new-game[data-ready=true]")
    page.check(f"input[name=game][value={game}]")
    for name, value in fields.items():
        if name in ("opponent", "colour"):
            page.check(f"input[name={name}][value={value}]")
        elif name in ("level", "rules"):
            page.select_option(f"select[name={name}]", value)
        else:
            page.fill(f"input[name={name}]", value)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/game/"))
    page.wait_for_selector("#game[data-ready=true]")


def test_whole_game_against_the_computer_by_clicking_with_a_reload(
    page: Page, server: BackgroundServer, tmp_path: Path
) -> None:
    start_from_lobby(page, server, "alak", size="5", opponent="computer", level="beginner",
                     colour="black")
    expect(page.locator("#game-title")).to_have_text("Alak 5, baljeu rules, edge capture")
    expect(page.locator("#player-black .player-label")).to_have_text("You")
    expect(page.locator("#hint-button")).to_be_visible()
    rng = random.Random(3)
    my_moves = 0
    while True:
        wait_for_my_turn_or_end(page)
        view = view_of(server, page)
        if view["status"] == "over":
            break
        state = replayed(view)
        point = state.game.format_move(rng.choice(state.legal_moves()))
        page.click(f'[data-place="{point}"]')
        wait_for_moves(page, len(view["moves"]) + 1)
        my_moves += 1
        if my_moves == 2:  # a reload in the middle: the game goes on where it was
            shown = moves_shown(page)
            page.reload()
            page.wait_for_selector("#game[data-ready=true]")
            assert moves_shown(page)[: len(shown)] == shown
    final = view_of(server, page)
    assert my_moves >= 2
    assert final["undo_available"] is False
    expect(page.locator("#undo-button")).to_be_disabled()  # the result stands
    dialog = page.locator("#game-over")
    expect(dialog).to_be_visible()
    expect(page.locator("#game-over-title")).to_have_text(final["headline"])
    expect(page.locator("#game-over-reason")).to_contain_text(final["reason"])
    assert moves_shown(page) == [move["text"] for move in final["moves"]]
    with page.expect_download() as download_info:
        page.click("#game-over-export")
    path = tmp_path / "record.json"
    download_info.value.save_as(path)
    record = GameRecord.load(path, make_game)
    assert record.moves == [move["text"] for move in final["moves"]]
    assert record.result == final["result"]
    page.click("#game-over button[value=close]")
    expect(dialog).to_be_hidden()


def test_a_picked_pit_highlights_its_legal_roots_and_the_computer_answers(
    page: Page, server: BackgroundServer
) -> None:
    created = create(server, game="alternator", options={"width": 2, "height": 3},
                     opponent="computer", level="beginner", colour="black")
    page.goto(server.url + created["url"])
    wait_for_my_turn_or_end(page)
    page.click('[data-place="a2"]')
    expect(page.locator('[data-place="a2"].selected')).to_have_count(1)
    highlighted = page.locator("[data-place].highlight")
    expect(highlighted).to_have_count(3)
    cells = {highlighted.nth(i).get_attribute("data-place") for i in range(3)}
    state = replayed(view_of(server, page))
    game = state.game
    legal_roots = {game.format_move(m).split("-")[1] for m in state.legal_moves()
                   if m != game.pass_move and game.format_move(m).startswith("a2-")}
    assert cells == legal_roots == {"a1", "a3", "b2"}
    expect(page.locator("#message")).to_contain_text("a2: pick a highlighted place")
    page.click('[data-place="b2"]')
    expect(page.locator("#moves .move-text").first).to_have_text("a2-b2")
    expect(page.locator("#moves .move-text")).to_have_count(2)  # the computer's answer
    expect(page.locator("[data-place].highlight")).to_have_count(0)


def test_illegal_attempts_are_explained(page: Page, server: BackgroundServer) -> None:
    created = create(server, game="alternator", options={"width": 3, "height": 2},
                     opponent="local")
    httpx.post(f"{server.url}/api/games/{created['id']}/moves", json={"move": "a1-b1"},
               headers={"X-Agon-Token": created["token"]}).raise_for_status()
    seen = SocketsSeen(page)
    page.goto(server.url + created["url"])
    wait_for_my_turn_or_end(page)
    expect(page.locator("#hint-button")).to_be_hidden()  # (no help against a person)
    message = page.locator("#message")
    page.click('[data-place="a1"]')
    expect(message).to_have_text("a1 has no legal move: a1 already has a dot (a pit)")
    expect(message).to_have_class(re.compile("error"))
    asked: list[str] = []
    page.on("request", lambda request: "/choices" in request.url and asked.append(request.url))
    questions_before = len(seen.sent)
    page.click('[data-place="c1"]')
    expect(page.locator('[data-place="c2"].highlight')).to_have_count(1)
    page.click('[data-place="b1"]')  # size 1 may not take in size 2: the server says why
    expect(message).to_contain_text("c1-b1 is illegal: the larger tree must attach")
    assert moves_shown(page) == ["a1-b1"]
    # asked on the game's socket, not by request, and once: the answer named the move b1 makes
    questions = [frame for frame in seen.sent[questions_before:] if '"choices"' in str(frame)]
    assert asked == [] and len(questions) == 1, (asked, questions)

    alak = create(server, game="alak", options={"size": 5}, opponent="local")
    page.goto(server.url + alak["url"])
    wait_for_my_turn_or_end(page)
    page.click('[data-place="3"]')
    expect(page.locator("#moves .move-text")).to_have_count(1)
    wait_for_my_turn_or_end(page)
    point = page.locator('[data-place="3"]')
    expect(point).to_have_attribute("aria-label", re.compile(r"point 3, black stone"))
    point.focus()  # the keyboard works too: Enter on a focused point
    page.keyboard.press("Enter")
    expect(message).to_have_text("3 is illegal: point 3 is occupied")


def test_the_page_s_moves_name_the_revision_they_answer(
    page: Page, server: BackgroundServer
) -> None:
    """So that a change made on a view the game has left is refused, not made (the API's
    tests show the refusal). They go on the game's socket, with the seat's token, not as
    requests."""
    created = create(server, game="alak", options={"size": 5, "rules": "tromp-taylor"},
                     opponent="local")
    seen = SocketsSeen(page)
    posted: list[str] = []
    page.on("request", lambda request: request.method == "POST" and posted.append(request.url))
    page.goto(server.url + created["url"])
    wait_for_my_turn_or_end(page)
    page.click('[data-place="3"]')
    expect(page.locator("#moves .move-text")).to_have_count(1)
    wait_for_my_turn_or_end(page)
    page.click("#pass-button")
    expect(page.locator("#moves .move-text")).to_have_count(2)
    wait_for_my_turn_or_end(page)
    page.click("#undo-button")
    expect(page.locator("#moves .move-text")).to_have_count(1)
    changes = [change for frame in seen.sent if (change := json.loads(frame))["type"] != "choices"]
    assert [{name: value for name, value in change.items() if name not in ("token", "id")}
            for change in changes] == [
        {"type": "move", "move": "3", "revision": 0},
        {"type": "move", "move": "pass", "revision": 1},
        {"type": "undo", "revision": 2},
    ]
    assert {change["token"] for change in changes} == {created["token"]}
    assert len({change["id"] for change in changes}) == 3
    assert posted == []


def test_friend_game_in_two_browsers_with_a_spectator(
    browser: Browser, context: BrowserContext, page: Page, server: BackgroundServer
) -> None:
    start_from_lobby(page, server, "alternator", width="3", height="2", opponent="friend",
                     colour="black")
    invite = page.locator("#invite-link")
    expect(invite).to_be_visible()
    link = invite.input_value()
    assert "#token=" in link
    friend_context = browser.new_context()
    watcher_context = browser.new_context()
    try:
        friend = friend_context.new_page()
        friend.set_default_timeout(TIMEOUT_MS)
        friend.goto(link)
        friend.wait_for_selector("#game[data-live=true]")
        expect(friend.locator("#game-mode")).to_have_text("You play White against a friend")
        expect(friend.locator("#turn")).to_have_text("Waiting for Black")
        watcher = watcher_context.new_page()
        watcher.set_default_timeout(TIMEOUT_MS)
        seen = SocketsSeen(watcher)
        watcher.goto(link.split("#")[0])
        watcher.wait_for_selector("#game[data-live=true]")
        expect(watcher.locator(".spectator-note")).to_be_visible()
        expect(watcher.locator("#resign-button")).to_be_hidden()

        page.wait_for_selector("#game[data-live=true]")
        click_move(page, "a1", "a2")
        for other in (friend, watcher):  # over the WebSocket, no reload
            expect(other.locator("#moves .move-text")).to_have_text(["a1-a2"])
        expect(friend.locator("#turn")).to_have_text("Your turn (White)")
        click_move(friend, "c2", "c1")
        for other in (page, watcher):
            expect(other.locator("#moves .move-text")).to_have_text(["a1-a2", "c2-c1"])
        expect(page.locator("#turn")).to_have_text("Your turn (Black)")
        watcher.click('[data-place="b1"]')  # a spectator's click does nothing
        expect(watcher.locator("[data-place].highlight")).to_have_count(0)
        # the updates came packed: binary, one a revision (docs/web.md, Packed updates)
        game_id = link.split("#")[0].rsplit("/", 1)[1]
        assert seen.all_packed(f"ws://127.0.0.1:{server.port}/ws/games/{game_id}")
        assert len(seen.frames) >= 3
    finally:
        friend_context.close()
        watcher_context.close()


def test_a_crowd_at_the_games_cap_does_not_keep_its_players_out(
    browser: Browser, page: Page, tmp_path: Path
) -> None:
    """A watcher takes the game's one place for watchers; the players' pages still go live and
    play (their sockets offer their seats), and the watcher sees their moves."""
    limits = ArenaLimits(watchers_per_game=1)
    with BackgroundServer(tmp_path / "crowded.db", workers=1, limits=limits) as crowded:
        created = create(crowded, game="alak", options={"size": 5}, opponent="friend")
        watcher = browser.new_page()
        try:
            watcher.set_default_timeout(TIMEOUT_MS)
            watcher.goto(crowded.url + created["watch_url"])
            watcher.wait_for_selector("#game[data-live=true]")
            page.goto(crowded.url + created["url"])
            page.wait_for_selector("#game[data-live=true]")
            expect(page.locator("#connection")).to_have_text("")
            page.click('[data-place="3"]')
            expect(watcher.locator("#moves .move-text")).to_have_text(["3"])
        finally:
            watcher.close()


def test_rules_language_switch_is_remembered(page: Page, server: BackgroundServer) -> None:
    page.goto(server.url + "/rules/alak")
    article = page.locator("article.rules-text")
    expect(article).to_have_attribute("lang", "en")
    english = article.inner_text()
    page.click(".lang[data-lang=lt]")
    expect(article).to_have_attribute("lang", "lt")
    assert article.inner_text() != english
    page.goto(server.url + "/rules/alak")
    expect(article).to_have_attribute("lang", "lt")
    page.reload()
    expect(article).to_have_attribute("lang", "lt")
    expect(page.locator(".lang[aria-current]")).to_have_text("Lietuvių")
    page.click(".lang[data-lang=nl]")
    expect(article).to_have_attribute("lang", "nl")
    page.goto(server.url + "/rules/alternator")
    expect(article).to_have_attribute("lang", "nl")
    page.goto(server.url + "/")  # the lobby speaks the language chosen for the rules
    page.wait_for_selector("#new-game[data-ready=true]")
    dutch = words("alak")["nl"].summary
    expect(page.locator("label.choice", has_text="Alak")).to_contain_text(dutch)


def test_a_configured_program_is_a_level_of_its_games_only(
    page: Page, tmp_path: Path
) -> None:
    agon = Path(sys.executable).parent / "agon"
    config = tmp_path / "engines.toml"
    config.write_text(
        f'[engines.agon-random]\nlabel = "Random program"\n'
        f'command = "{agon} engine alak --agent random"\nseconds = 5\ngames = ["alak"]\n'
    )
    levels = read_engine_levels(config, LEVELS_BY_KEY)
    with BackgroundServer(tmp_path / "engines.db", engine_levels=levels) as server:
        page.goto(server.url + "/")
        page.wait_for_selector("#new-game[data-ready=true]")
        page.check("input[name=game][value=alternator]")
        options = page.locator("select[name=level] option")
        expect(options).to_have_count(len(LEVELS_BY_KEY))
        start_from_lobby(page, server, "alak", opponent="computer", level="agon-random",
                         colour="white")
        wait_for_moves(page, 1)
        expect(page.locator("body")).to_contain_text("Random program")
        assert view_of(server, page)["players"]["black"]["level"] == "agon-random"


def test_the_lobby_rates_a_calibrated_variants_levels(
    page: Page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    times = {"moves": 10, "mean": 0.004, "p99": 0.01, "max": 0.01}
    pairings = (Pairing("random", "greedy", 20, 2, 0, 18, 3.0, times, times),
                Pairing("greedy", "mcts:30", 20, 4, 0, 16, 2.0, times, times))
    levels_file = tmp_path / "levels.json"
    # on 6 points, sweeps both ways: the top's rating is open on either side
    swept = (Pairing("random", "greedy", 20, 0, 0, 20, 3.0, times, times),
             Pairing("greedy", "mcts:30", 20, 0, 0, 20, 3.0, times, times),
             Pairing("mcts:30", "mcts:60", 20, 20, 0, 0, -3.0, times, times))
    levels_file.write_text(write_calibrations([
        CalibratedEntry("alak", make_game("alak", {"size": 5}).options(), pairings),
        CalibratedEntry("alak", make_game("alak", {"size": 6}).options(), swept)]))
    monkeypatch.setenv(calibration.LEVELS_ENV, str(levels_file))
    calibration._calibrations_in.cache_clear()
    try:
        with BackgroundServer(tmp_path / "levels.db") as server:
            page.goto(server.url + "/")
            page.wait_for_selector("#new-game[data-ready=true]")
            page.check("input[name=game][value=alak]")
            page.fill("input[name=size]", "5")
            page.press("input[name=size]", "Tab")
            options = page.locator("select[name=level] option")
            expect(options).to_have_count(3)
            expect(options.first).to_have_text(
                "Beginner: Elo 0 over random, about 0.01 s a move (random)")
            expect(options.last).to_contain_text("Strongest: Elo ")
            expect(options.last).to_contain_text("(mcts:30)")
            page.fill("input[name=size]", "6")
            page.press("input[name=size]", "Tab")
            expect(options.last).to_contain_text("Strongest: Elo about 636 over random")
            page.fill("input[name=size]", "7")
            page.press("input[name=size]", "Tab")
            expect(options).to_have_count(len(LEVELS_BY_KEY))
            expect(options.first).to_contain_text("not rated on this board")
    finally:
        calibration._calibrations_in.cache_clear()
