"""The arena's study through its API: hints in words, positions set up and records imported,
analyses (short, and refined over a WebSocket), reviews of games (shared, not made twice),
and every refusal in words. Small boards, so that the analyses are exact."""

from __future__ import annotations

import asyncio
import json
import re
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agon.core.records import GameRecord
from agon.games import make_game, plugin
from agon.web import arena as arena_module
from agon.web import study as study_module
from agon.web.app import create_app
from agon.web.config import ArenaLimits
from agon.web.thinking import SideWork
from web_fixtures import (
    Seat,
    TestClient,
    client,
    make_client,
    replayed,
    start_game,
)

__all__ = ["client", "make_client"]  # fixtures used by name

SMALL = {"game": "alak", "options": {"size": 5}}
"""Solved in a fraction of a second: Black wins by 2 (2 and 4 are the best first moves)."""
GRID = {"game": "alternator", "options": {"size": "3x3"}}
"""A game whose moves are two places (a pit, then a root)."""
RAW_FLOAT = re.compile(r"\d\.\d{3,}")


def small_variant(name: str) -> dict[str, Any]:
    """The registry's smallest example of the game (the conformance suite's variants)."""
    examples = plugin(name).tooling.variant_examples or ({},)
    return dict(min(examples, key=lambda options: len(make_game(name, options).new_state()
                                                        .legal_moves())))


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[TestClient]:
    """An arena whose study limits are low enough to reach."""
    limits = ArenaLimits(
        games_per_minute=10**6, hints_per_minute=10**6, analyses_per_minute=2,
        reviews_per_minute=1, reads_per_minute=10**6,
    )
    app = create_app(str(tmp_path / "l.db"), workers=1, executor="thread", warm=False,
                     limits=limits)
    with TestClient(app) as opened:
        yield opened


def finished_game(client: TestClient, moves: tuple[str, ...] = ("2", "4", "1", "5", "3")) -> Seat:
    """A game at one screen of the small board, played to its end (by default Black wins by 3:
White's 5 gives a point away)."""
    seat, _ = start_game(client, **SMALL, opponent="local")
    for move in moves:
        answer = seat.move(move)
        assert answer.status_code == 200, answer.text
    assert seat.view()["status"] == "over"
    return seat


def until_done(ask: Callable[[], Any], timeout: float = 120) -> dict[str, Any]:
    """Ask for a review until it is made."""
    deadline = time.monotonic() + timeout
    while True:
        answer = ask()
        assert answer.status_code == 200, answer.text
        found = dict(answer.json())
        if found["status"] != "running":
            return found
        assert time.monotonic() < deadline, "the review never ended"
        time.sleep(0.1)


# --- hints that teach ---------------------------------------------------------------------------


def test_a_hint_gives_the_best_move_and_its_value_in_words(client: TestClient) -> None:
    seat, _ = start_game(client, **SMALL, opponent="computer", level="beginner")
    hint = seat.get("/hint").json()
    assert hint["move"] in {"2", "4"} and hint["exact"] is True
    assert hint["value_text"] == "best play wins by 2"  # (the side to move's view)
    assert hint["value"] == 2 and hint["short"] == "+2"
    assert hint["pv"][0] == hint["move"] and "highlight" in hint["svg"]


def test_a_hint_for_white_speaks_from_white_s_view(client: TestClient) -> None:
    seat, _ = start_game(client, **SMALL, opponent="computer", level="beginner", colour="white")
    view = seat.wait_for_turn()
    hint = seat.get("/hint").json()
    state = replayed(view)
    assert state.is_legal(state.game.parse_move(hint["move"]))
    assert re.fullmatch(r"best play (wins|loses|draws)( by \d+)?", hint["value_text"])
    assert not RAW_FLOAT.search(hint["value_text"])


def test_a_hint_on_a_board_too_big_to_solve_is_an_estimate_in_words(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arena_module, "HINT_SECONDS", 0.3)
    seat, _ = start_game(client, game="alak", options={"size": 15}, opponent="computer",
                         level="beginner")
    hint = seat.get("/hint").json()
    assert hint["exact"] is False
    assert re.fullmatch(r"about (even|[+−]\d+(\.5)?, (you|your opponent) (is|are) better)",
                        hint["value_text"]), hint["value_text"]


# --- positions ----------------------------------------------------------------------------------


def test_a_position_is_read_from_its_line(client: TestClient) -> None:
    answer = client.post("/api/study/position", json={**SMALL, "moves": ["2", "4"]})
    assert answer.status_code == 200, answer.text
    view = answer.json()
    assert view["to_move"] == "black" and view["status"] == "active"
    assert [move["text"] for move in view["moves"]] == ["2", "4"]
    assert [move["player"] for move in view["moves"]] == ["black", "white"]
    assert view["legal_moves"] == ["1", "3", "5"]
    assert view["svg"].startswith("<svg") and re.search(r'class="[^"]*\blast\b', view["svg"])
    again = client.post("/api/study/position", json={**SMALL, "position": view["position"]})
    assert again.json()["position"] == view["position"] and again.json()["moves"] == []


@pytest.mark.parametrize("name", ["alternator", "alak"])
def test_every_game_s_start_position_round_trips(client: TestClient, name: str) -> None:
    options = small_variant(name)
    start = client.post("/api/study/position", json={"game": name, "options": options}).json()
    again = client.post("/api/study/position",
                        json={"game": name, "options": options, "position": start["position"]})
    assert again.status_code == 200 and again.json()["svg"] == start["svg"]


@pytest.mark.parametrize(("body", "status", "words"), [
    ({"game": "chess"}, 404, "there is no game 'chess'"),
    ({"game": "alak", "options": {"size": 0}}, 400, "not 0"),
    ({"game": "alak", "options": {"size": 5}, "position": "xx"}, 400, "the position does not load"),
    ({**SMALL, "moves": ["2", "2"]}, 422, "move 2 ('2')"),
    ({**SMALL, "moves": ["2", "nowhere"]}, 400, "move 2 ('nowhere')"),
    ({**SMALL, "moves": ["1"] * 1001}, 400, "moves"),
    ({**SMALL, "position": "x" * 20_001}, 400, "position"),
    ({"options": {}}, 400, "game"),
])
def test_bad_lines_are_refused_in_words(
    client: TestClient, body: dict[str, Any], status: int, words: str
) -> None:
    answer = client.post("/api/study/position", json=body)
    assert answer.status_code == status, answer.text
    assert words in answer.json()["detail"]


def test_choices_of_a_bare_position_make_a_move_of_several_places(client: TestClient) -> None:
    first = client.post("/api/study/choices", json={**GRID, "picked": ["b1"]})
    assert first.status_code == 200, first.text
    assert {choice["place"] for choice in first.json()["choices"]} == {"a1", "b2", "c1"}
    assert "highlight" in first.json()["svg"]
    made = client.post("/api/study/choices", json={**GRID, "picked": ["b1", "b2"]}).json()
    assert made["move"] == "b1-b2"
    wrong = client.post("/api/study/choices", json={**GRID, "picked": ["z9"]})
    assert wrong.status_code == 400 and "not a place" in wrong.json()["detail"]
    empty = client.post("/api/study/choices", json={**GRID, "picked": []})
    assert empty.status_code == 400


def test_no_choices_once_the_game_is_over(client: TestClient) -> None:
    answer = client.post("/api/study/choices",
                         json={**SMALL, "moves": ["2", "4", "1", "5", "3"], "picked": ["1"]})
    assert answer.status_code == 409 and "over" in answer.json()["detail"]


# --- analyses -----------------------------------------------------------------------------------


def test_a_short_analysis_gives_exact_values_of_every_move(client: TestClient) -> None:
    answer = client.post("/api/study/analysis", json=SMALL)
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["exact"] is True and found["value"] == 2 and found["value_text"] == "+2"
    assert found["words"] == "best play: Black wins by 2"
    assert set(found["best_moves"]) == {"2", "4"}
    assert found["move_values"] == {"1": -2, "2": 2, "3": 1, "4": 2, "5": -2}
    listed = found["moves"]
    assert [item["move"] for item in listed[:2]] in (["2", "4"], ["4", "2"])
    assert [item["best"] for item in listed] == [True, True, False, False, False]
    assert [item["value_text"] for item in listed[2:]] == ["+1", "−2", "−2"]
    assert found["principal_variation"][0] in {"2", "4"}


def test_an_analysis_speaks_from_the_position_s_side(client: TestClient) -> None:
    found = client.post("/api/study/analysis", json={**SMALL, "moves": ["1"]}).json()
    assert found["to_move"] == "white" and found["exact"] is True
    best = [item for item in found["moves"] if item["best"]]
    assert best and all(item["outcome"] == 1 for item in best)  # (White's view: winning)


def test_analyses_are_limited_per_client(limited: TestClient) -> None:
    assert limited.post("/api/study/analysis", json=SMALL).status_code == 200
    assert limited.post("/api/study/analysis", json=SMALL).status_code == 200
    answer = limited.post("/api/study/analysis", json=SMALL)
    assert answer.status_code == 429 and "retry-after" in answer.headers
    assert "too many analyses" in answer.json()["detail"]


def test_analyses_at_once_leave_the_computer_a_worker(client: TestClient) -> None:
    arena = client.app.state.arena  # type: ignore[attr-defined]
    arena.side_work.running["analysis"] = 1  # (one being thought out)
    answer = client.post("/api/study/analysis", json=SMALL)
    assert answer.status_code == 429 and "busy" in answer.json()["detail"]
    hint_seat, _ = start_game(client, **SMALL, opponent="computer", level="beginner")
    assert hint_seat.get("/hint").status_code == 429  # (one worker: none left for a hint)


def test_side_work_never_takes_the_last_worker() -> None:
    work = SideWork(4, {"hint": 1, "analysis": 5})
    assert work.total == 3
    work.running.update(hint=1, analysis=1)
    assert work.busy("hint") and not work.busy("analysis")
    work.running["analysis"] = 2
    assert work.busy("analysis")
    assert SideWork(1, {"hint": 1}).total == 1


def test_side_work_waits_in_turn_or_stops_waiting() -> None:
    async def scenario() -> tuple[list[str], bool]:
        work = SideWork(2, {"analysis": 1})
        order: list[str] = []

        async def job(name: str, hold: float) -> None:
            async with work.slot("analysis") as held:
                assert held
                order.append(name)
                await asyncio.sleep(hold)

        async def given_up() -> bool:
            async with work.slot("analysis", stop=lambda: True) as held:
                return held

        first = asyncio.create_task(job("first", 0.3))
        await asyncio.sleep(0.05)
        second = asyncio.create_task(job("second", 0.0))
        await asyncio.sleep(0.05)
        third = asyncio.create_task(job("third", 0.0))
        gave_up = await given_up()
        await asyncio.gather(first, second, third)
        return order, gave_up

    order, gave_up = asyncio.run(scenario())
    assert order == ["first", "second", "third"] and gave_up is False


@pytest.mark.parametrize("packed", [False, True])
def test_refinement_over_a_websocket_ends_exact(client: TestClient, packed: bool) -> None:
    """The same with its messages packed (``?compress=deflate``, as the page asks)."""
    query = "?compress=deflate" if packed else ""
    with client.websocket_connect(f"/ws/analysis{query}") as socket:
        socket.send_json({"type": "analyse", "id": 7, "game": "alak", "options": {"size": 5}})
        while True:
            message = (json.loads(zlib.decompress(socket.receive_bytes())) if packed
                       else socket.receive_json())
            assert message["type"] == "analysis" and message["id"] == 7
            if not message["thinking"]:
                break
        assert message["analysis"]["exact"] is True
        assert message["analysis"]["words"] == "best play: Black wins by 2"


def test_refinement_rounds_go_on_until_stopped(client: TestClient) -> None:
    with client.websocket_connect("/ws/analysis") as socket:
        socket.send_json({"type": "analyse", "id": "big", "game": "alak",
                          "options": {"size": 15}})
        first = socket.receive_json()
        assert first["type"] == "analysis" and first["thinking"] is True
        assert first["analysis"]["exact"] is False and first["round"] == 1
        assert first["analysis"]["words"].startswith("about")
        socket.send_json({"type": "stop", "id": "big"})
        while (message := socket.receive_json())["type"] == "analysis":
            pass  # (a round under way when the stop came)
        assert message == {"type": "stopped", "id": "big"}


@pytest.mark.parametrize(("sent", "words"), [
    ("not json", "not valid JSON"),
    ("[1, 2]", "a JSON object"),
    ('{"type": "think"}', "'type' is 'analyse' or 'stop'"),
    ('{"type": "analyse", "game": "chess"}', "there is no game"),
    ('{"type": "analyse", "game": "alak", "position": "??"}', "the position does not load"),
    ('{"type": "analyse", "game": "alak", "options": {"size": 99}}', "not 99"),
    ('{"type": "analyse", "id": [1], "game": "alak"}', "'id'"),
])
def test_a_bad_analysis_request_is_answered_in_words(
    client: TestClient, sent: str, words: str
) -> None:
    with client.websocket_connect("/ws/analysis") as socket:
        socket.send_text(sent)
        message = socket.receive_json()
        assert message["type"] == "error" and words in message["detail"], message
        socket.send_json({"type": "analyse", "id": 1, **SMALL})  # (the socket still serves)
        assert socket.receive_json()["type"] == "analysis"


def test_an_analysis_message_over_the_limit_closes_the_socket(client: TestClient) -> None:
    with client.websocket_connect("/ws/analysis") as socket:
        socket.send_text("x" * 5000)
        message = socket.receive()
        assert message["type"] == "websocket.close" and message["code"] == 1009


def test_refinements_over_the_rate_are_answered_busy(limited: TestClient) -> None:
    with limited.websocket_connect("/ws/analysis") as socket:
        for request in range(3):
            socket.send_json({"type": "analyse", "id": request, **SMALL})
            while True:
                message = socket.receive_json()
                if message["type"] != "analysis" or not message["thinking"]:
                    break
        assert message["type"] == "busy" and message["id"] == 2
        assert message["retry_after"] >= 1 and "too many analyses" in message["detail"]


# --- records --------------------------------------------------------------------------------------


def test_an_exported_record_is_read_back(client: TestClient) -> None:
    seat = finished_game(client)
    text = seat.get("/record").text
    answer = client.post("/api/study/record", json={"record": text})
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["game"] == "alak" and found["variant"]["size"] == 5
    assert found["moves"] == ["2", "4", "1", "5", "3"] and found["position"] is None
    assert found["players"] == {"black": "human", "white": "human"}
    assert found["result"] == "B+3"


def test_a_record_from_a_position_keeps_its_start(client: TestClient) -> None:
    game = make_game("alak", {"size": 5})
    start = game.new_state()
    start.play_text("3")
    state = game.parse_position(start.position())
    state.play_text("1")
    record = GameRecord.from_state(state, start_position=start.position())
    found = client.post("/api/study/record", json={"record": record.to_json()}).json()
    assert found["position"] == start.position() and found["moves"] == ["1"]


@pytest.mark.parametrize(("text", "words"), [
    ("{", "not valid JSON"),
    ("[]", "a record must be a JSON object"),
    ('{"game": "alak", "variant": {"size": 5}, "moves": ["2", "2"]}', "move 2"),
    ('{"game": "chess", "moves": []}', "bad game"),
    ("[" * 50 + "]" * 50, "nests"),
    ('{"game": "alak", "variant": {"size": 3}, "moves": ' + str(["1", "3", "2"] * 400)
     .replace("'", '"') + "}", "1,200 moves: the study reads at most 1,000"),
])
def test_bad_records_are_refused_in_words(client: TestClient, text: str, words: str) -> None:
    answer = client.post("/api/study/record", json={"record": text})
    assert answer.status_code == 400, answer.text
    assert answer.json()["detail"].startswith("the record does not load")
    assert words in answer.json()["detail"]


def test_a_record_over_the_limit_is_refused(client: TestClient) -> None:
    answer = client.post("/api/study/record", json={"record": " " * 60_001})
    assert answer.status_code == 400 and "record" in answer.json()["detail"]


# --- reviews --------------------------------------------------------------------------------------


def test_a_finished_game_is_reviewed_move_by_move(client: TestClient) -> None:
    seat = finished_game(client)
    found = until_done(lambda: client.get(f"/api/games/{seat.game_id}/review"))
    assert found["status"] == "done" and found["done"] == found["total"] == 6
    review = found["review"]
    assert review["complete"] is True and review["game"] == "alak"
    moves = review["moves"]
    assert [move["move"] for move in moves] == ["2", "4", "1", "5", "3"]
    assert all(move["exact"] for move in moves)
    assert moves[0]["judgement"] == "best" and moves[0]["words_before"] == (
        "best play: Black wins by 2"
    )
    assert {move["judgement"] for move in moves} <= {
        "best", "good", "inaccuracy", "mistake", "blunder"
    }
    assert moves[3]["judgement"] == "inaccuracy" and moves[3]["loss"] == 1  # (5 gave away 1)
    assert moves[3]["value_before"] == 2 and moves[3]["value_after"] == 3
    assert [point["ply"] for point in review["points"]] == [0, 1, 2, 3, 4, 5]
    assert [point["value"] for point in review["points"]] == [2, 2, 2, 2, 3, 3]
    assert review["final"] == {"value": 3, "exact": True, "words": "best play: Black wins by 3"}
    assert review["players"]["black"]["name"] == "Player"
    assert review["players"]["black"]["moves"] == 3
    assert review["players"]["white"]["inaccuracies"] == 1


def test_a_review_is_shared_not_made_again(limited: TestClient) -> None:
    seat = finished_game(limited)
    first = until_done(lambda: limited.get(f"/api/games/{seat.game_id}/review"))
    # (one review a minute: asking again, from anyone, is no new review)
    for _ in range(3):
        again = limited.get(f"/api/games/{seat.game_id}/review")
        assert again.status_code == 200 and again.json()["review"] == first["review"]
    other = finished_game(limited, ("4", "2", "5", "1", "3"))
    answer = limited.get(f"/api/games/{other.game_id}/review")
    assert answer.status_code == 429 and "too many reviews" in answer.json()["detail"]


def test_a_game_being_played_is_not_reviewed(client: TestClient) -> None:
    seat, _ = start_game(client, **SMALL, opponent="local")
    answer = client.get(f"/api/games/{seat.game_id}/review")
    assert answer.status_code == 409 and "still being played" in answer.json()["detail"]
    assert client.get("/api/games/nothing/review").status_code == 404


def test_an_imported_line_is_reviewed(client: TestClient) -> None:
    body = {**SMALL, "moves": ["2", "4", "1", "5", "3"], "players": {"black": "Ann"}}
    found = until_done(lambda: client.post("/api/study/review", json=body))
    assert found["status"] == "done"
    review = found["review"]
    assert review["players"]["black"]["name"] == "Ann"
    assert review["players"]["white"]["name"] == "?"
    assert len(review["moves"]) == 5


def test_a_review_of_a_position_set_up(client: TestClient) -> None:
    start = client.post("/api/study/position", json={**SMALL, "moves": ["3"]}).json()
    body = {**SMALL, "position": start["position"], "moves": ["1"]}
    review = until_done(lambda: client.post("/api/study/review", json=body))["review"]
    assert review["start_position"] == start["position"]
    assert review["moves"][0]["player"] == "white" and review["moves"][0]["ply"] == 1


@pytest.mark.slow
def test_a_review_of_a_big_board_thinks_within_its_seconds(tmp_path: Path) -> None:
    limits = ArenaLimits(review_seconds=0.5, reads_per_minute=10**6)
    app = create_app(str(tmp_path / "r.db"), workers=1, executor="thread", warm=False,
                     limits=limits)
    body = {"game": "alak", "options": {"size": 15}, "moves": ["3", "5", "7"]}
    with TestClient(app) as opened:
        found = until_done(lambda: opened.post("/api/study/review", json=body))
    review = found["review"]
    assert len(review["moves"]) == 3 and not review["moves"][0]["exact"]
    assert all(not RAW_FLOAT.search(move["words_before"]) for move in review["moves"])


def test_review_failures_are_said(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_arguments: Any) -> None:
        raise RuntimeError("the worker fell over")

    monkeypatch.setattr(study_module.analysts, "analyse_for_review", broken)
    body = {**SMALL, "moves": ["2"]}
    found = until_done(lambda: client.post("/api/study/review", json=body))
    assert found["status"] == "failed" and "the review failed" in found["error"]


# --- limits and pages -----------------------------------------------------------------------------


def test_study_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGON_ANALYSES_PER_MINUTE", "7")
    monkeypatch.setenv("AGON_REVIEW_SECONDS", "2.5")
    limits = ArenaLimits.from_environment(reviews_per_minute=3)
    assert (limits.analyses_per_minute, limits.review_seconds, limits.reviews_per_minute) == (
        7, 2.5, 3
    )
    assert limits.analyses_at_once == 1 and limits.analysis_seconds == 30


def test_the_analysis_pages(client: TestClient) -> None:
    seat = finished_game(client)
    for path in ("/analysis", f"/analysis/{seat.game_id}"):
        page = client.get(path)
        assert page.status_code == 200 and "/static/analysis.js" in page.text
    missing = client.get("/analysis/nothing")
    assert missing.status_code == 404 and "text/html" in missing.headers["content-type"]
    game_page = client.get(f"/game/{seat.game_id}").text
    assert 'id="review-link"' in game_page


def test_the_study_routes_are_documented(client: TestClient) -> None:
    paths = client.get("/api/openapi.json").json()["paths"]
    for path in ("/api/study/position", "/api/study/choices", "/api/study/analysis",
                 "/api/study/record", "/api/study/review", "/api/games/{game_id}/review"):
        assert path in paths, path
    refusals = paths["/api/study/analysis"]["post"]["responses"]
    assert {"400", "404", "422", "429"} <= set(refusals)


def test_a_worker_s_analyst_keeps_small_tables_on_a_long_board(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from agon.solve.solver import PLAYER_TABLE_BYTES
    from agon.web.analysts import TABLE_BITS, analyst_for

    monkeypatch.setenv("AGON_HOME", str(tmp_path))
    solver = analyst_for(make_game("alak", {"size": 15, "rules": "baljeu"})).solver
    tables = (solver.table, solver.summaries, solver.hints, solver.numbers)
    assert sum(table.nbytes for table in tables) <= PLAYER_TABLE_BYTES
    assert solver.numbers.shape[0] <= 2 << TABLE_BITS  # (not the long solves' 200 MB)
