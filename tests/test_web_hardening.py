"""The arena under attack: bodies refused before they are read, security headers on every
answer, rates of new games and hints limited, hints only against the computer, idle games
ending as abandoned, WebSocket messages limited and fuzzed, no undo once a game is over."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agon.web import arena as arena_module
from agon.web.config import ArenaLimits
from agon.web.guard import RateLimit, TooManyRequests
from background import BackgroundServer
from web_fixtures import TestClient, start_game

pytestmark = pytest.mark.xdist_group("web")


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[TestClient]:
    """An arena with small limits, to reach them."""
    from agon.web.app import create_app

    limits = ArenaLimits(
        body_bytes=1000, message_bytes=100, games_per_minute=3, hints_per_minute=2,
    )
    app = create_app(str(tmp_path / "a.db"), workers=1, executor="thread", warm=False,
                     limits=limits)
    with TestClient(app) as client:
        yield client


def test_a_body_over_the_limit_is_refused_413(limited: TestClient) -> None:
    answer = limited.post("/api/games", content=b"x" * 5000,
                          headers={"Content-Type": "application/json"})
    assert answer.status_code == 413 and "limit of 1,000 bytes" in answer.json()["detail"]


def test_a_chunked_body_is_counted_as_it_comes(limited: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(100):
            yield b" " * 100

    answer = limited.post("/api/games", content=chunks(),
                          headers={"Content-Type": "application/json"})
    assert answer.status_code == 413


def test_a_huge_declared_body_is_refused_before_it_is_sent(tmp_path: Path) -> None:
    """The server answers at once on the headers alone: it never waits for (nor holds) the
    300 MB the request says it will send."""
    with BackgroundServer(tmp_path / "b.db", workers=1) as server, socket.create_connection(
        ("127.0.0.1", server.port), timeout=10
    ) as connection:
        connection.sendall(
            b"POST /api/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 300000000\r\n\r\n"
        )
        answer = connection.recv(4096).decode()
    assert answer.startswith("HTTP/1.1 413")
    assert "content-security-policy" in answer.lower()


@pytest.mark.parametrize(
    "path", ["/", "/api/meta", "/static/game.js", "/api/games/nothing", "/no-page", "/api/docs"]
)
def test_every_answer_has_the_security_headers(limited: TestClient, path: str) -> None:
    headers = limited.get(path).headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    if path != "/api/docs":
        assert "script-src 'self'" in headers["content-security-policy"]


def test_new_games_are_limited_per_client_a_minute(limited: TestClient) -> None:
    for _ in range(3):
        start_game(limited, game="alak", opponent="local")
    answer = limited.post("/api/games", json={"game": "alak", "opponent": "local"})
    assert answer.status_code == 429
    assert 1 <= int(answer.headers["retry-after"]) <= 60
    assert "too many new games" in answer.json()["detail"]


def test_the_rate_limit_forgets_after_its_period_and_bounds_its_memory() -> None:
    now = [0.0]
    limit = RateLimit(2, 60, max_keys=3, clock=lambda: now[0])
    limit.take("a", "x")
    limit.take("a", "x")
    with pytest.raises(TooManyRequests) as refused:
        limit.take("a", "x")
    assert refused.value.retry_after == 60
    now[0] = 60.5
    limit.take("a", "x")  # the first two have left the window
    for key in "bcdef":
        limit.take(key, "x")
    assert len(limit._events) == 3


def test_hints_only_against_the_computer(limited: TestClient) -> None:
    seat, _ = start_game(limited, game="alak", opponent="local")
    answer = seat.get("/hint")
    assert answer.status_code == 403 and "against the computer" in answer.json()["detail"]


def test_hints_are_limited_per_game(
    limited: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arena_module, "HINT_SECONDS", 0.2)
    seat, _ = start_game(limited, game="alak", opponent="computer", level="beginner")
    assert seat.get("/hint").status_code == 200
    assert seat.get("/hint").status_code == 200
    answer = seat.get("/hint")
    assert answer.status_code == 429 and "retry-after" in answer.headers


def test_hints_at_once_are_limited_so_the_computer_keeps_a_worker(
    limited: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    arena = limited.app.state.arena  # type: ignore[attr-defined]
    seat, _ = start_game(limited, game="alak", opponent="computer", level="beginner")
    arena.side_work.running["hint"] = arena.limits.hints_at_once  # (one hint being thought out)
    answer = seat.get("/hint")
    assert answer.status_code == 429 and "busy" in answer.json()["detail"]


def test_idle_unfinished_games_end_as_abandoned_with_their_moves(tmp_path: Path) -> None:
    from agon.web.app import create_app

    limits = ArenaLimits(idle_days=1.5 / 86400)  # a second and a half
    app = create_app(str(tmp_path / "c.db"), workers=1, executor="thread", warm=False,
                     limits=limits)
    with TestClient(app) as client:
        seat, _ = start_game(client, game="alak", opponent="local")
        assert seat.move("1").status_code == 200
        time.sleep(2.5)  # (the store keeps whole seconds)
        view = seat.view()
        assert view["status"] == "over" and "abandoned" in view["reason"]
        assert [move["text"] for move in view["moves"]] == ["1"]
        assert seat.move("2").status_code == 409
        listed = client.get("/api/games", params={"status": "active"}).json()["games"]
        assert seat.game_id not in {game["id"] for game in listed}


def test_no_undo_once_a_game_against_the_computer_is_over(
    limited: TestClient,
) -> None:
    seat, _ = start_game(limited, game="alak", options={"size": 3}, opponent="computer",
                         level="beginner", colour="black")
    view = seat.wait_for_turn()
    while view["status"] == "active":
        state_moves = [m["text"] for m in view["moves"]]
        for point in ("1", "2", "3"):
            if seat.move(point).status_code == 200:
                break
        else:
            raise AssertionError(f"no legal point after {state_moves}")
        view = seat.wait_for_turn()
    assert not view["undo_available"]
    answer = seat.post("/undo")
    assert answer.status_code == 409 and "result stands" in answer.json()["detail"]


def test_a_websocket_message_over_the_limit_closes_the_socket(limited: TestClient) -> None:
    seat, _ = start_game(limited, game="alak", opponent="local")
    with limited.websocket_connect(f"/ws/games/{seat.game_id}") as watcher:
        assert watcher.receive_json()["type"] == "update"
        watcher.send_text("x" * 101)
        closed = watcher.receive()
    assert closed["type"] == "websocket.close" and closed["code"] == 1009


MESSAGES = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=200),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
        max_leaves=20,
    ).map(json.dumps),
)


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(messages=st.lists(MESSAGES, max_size=6), close_early=st.booleans())
def test_websocket_fuzz_never_breaks_the_game_for_others(
    limited_app_client: TestClient, messages: list[Any], close_early: bool
) -> None:
    """Whatever a watcher sends (text, binary, JSON, too much), and however soon it leaves,
    the server goes on: another watcher still gets the next move."""
    client = limited_app_client
    seat, _ = start_game(client, game="alak", opponent="local")
    with client.websocket_connect(f"/ws/games/{seat.game_id}") as other:
        assert other.receive_json()["type"] == "update"
        with client.websocket_connect(f"/ws/games/{seat.game_id}") as hostile:
            hostile.receive_json()
            for message in messages:
                if isinstance(message, bytes):
                    hostile.send_bytes(message)
                else:
                    hostile.send_text(message)
                if close_early:
                    break
        assert seat.move("1").status_code == 200
        update = other.receive_json()
        assert [move["text"] for move in update["view"]["moves"]] == ["1"]


SEAT = "the seat's token"
IDS = st.integers() | st.text(max_size=70) | st.none() | st.lists(st.integers())
ODD_CHANGES = st.fixed_dictionaries(
    {"type": st.sampled_from(["move", "undo", "resign", "choices", "draw", ""])},
    optional={
        "picked": st.lists(st.sampled_from(["1", "2", "9", "a1", ""]) | st.text(max_size=20),
                           max_size=18) | st.text(max_size=3) | st.none(),
        "move": st.sampled_from(["1", "2", "3", "pass", "0", "99", ""])
        | st.text(max_size=70) | st.integers() | st.none(),
        "revision": st.integers(-2, 6) | st.floats(allow_nan=False) | st.text(max_size=3)
        | st.booleans() | st.none(),
        "token": st.sampled_from([SEAT, "not a seat", ""]) | st.none() | st.integers(),
        "id": IDS,
    },
)
PLAYERS_CHANGES = st.fixed_dictionaries(
    {"type": st.just("move"), "move": st.sampled_from(["1", "2", "3", "4", "5", "pass"]),
     "token": st.just(SEAT)},
    optional={"id": IDS},
) | st.fixed_dictionaries(
    {"type": st.sampled_from(["undo", "resign"]), "token": st.just(SEAT)}, optional={"id": IDS}
) | st.fixed_dictionaries(
    {"type": st.just("choices"), "picked": st.lists(st.sampled_from(["1", "2", "3"]),
                                                    min_size=1, max_size=1)},
    optional={"id": IDS},
)
CHANGES = PLAYERS_CHANGES | ODD_CHANGES


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(changes=st.lists(CHANGES, min_size=1, max_size=6))
def test_whatever_change_a_socket_sends_it_is_answered_in_words_never_failed(
    app_client: TestClient, changes: list[dict[str, Any]]
) -> None:
    """Each change or question sent on a game's socket, however odd, is answered on it, in
    order: done (or the question's answer), or refused with a status of the API's refusals and
    words; its id comes back where it
    is one; the game holds exactly the moves answered done."""
    client = app_client
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    made: list[str] = []
    with client.websocket_connect(f"/ws/games/{seat.game_id}") as socket:
        assert socket.receive_json()["type"] == "update"
        for change in changes:
            sent = {**change, "token": seat.token} if change.get("token") == SEAT else change
            socket.send_text(json.dumps(sent))
            while (answer := socket.receive_json())["type"] == "update":
                pass
            given_id = change.get("id")
            readable = isinstance(given_id, int) or (
                isinstance(given_id, str) and len(given_id) <= 64)
            assert answer["id"] == (given_id if readable else None), (change, answer)
            if answer["type"] == "refused":
                assert answer["status"] in (400, 403, 409, 422), (change, answer)
                assert isinstance(answer["detail"], str) and answer["detail"], answer
            elif answer["type"] == "choices":
                assert change["type"] == "choices" and "svg" in answer["answer"], answer
            else:
                assert answer["type"] == "done", answer
                if change["type"] == "move":
                    made.append(change["move"])
                elif change["type"] == "undo":
                    made.pop()  # (at one screen, an undo takes back the last move)
    assert [move["text"] for move in seat.view()["moves"]] == made


def _module_client(
    tmp_path_factory: pytest.TempPathFactory, message_bytes: int
) -> Iterator[TestClient]:
    from agon.web.app import create_app
    from web_fixtures import UNLIMITED

    limits = ArenaLimits(message_bytes=message_bytes,
                         games_per_minute=UNLIMITED.games_per_minute)
    app = create_app(str(tmp_path_factory.mktemp("ws") / "w.db"), workers=1,
                     executor="thread", warm=False, limits=limits)
    with TestClient(app) as client:
        yield client


@pytest.fixture(scope="module")
def limited_app_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """A client of an arena that takes WebSocket messages of up to 100 bytes."""
    yield from _module_client(tmp_path_factory, 100)


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """A client of an arena with the default limits on WebSocket messages."""
    yield from _module_client(tmp_path_factory, ArenaLimits().message_bytes)


def test_limits_come_from_options_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from agon.core.errors import AgonError

    monkeypatch.setenv("AGON_GAMES_PER_MINUTE", "7")
    monkeypatch.setenv("AGON_IDLE_DAYS", "0.5")
    limits = ArenaLimits.from_environment(hints_per_minute=3)
    assert (limits.games_per_minute, limits.idle_days, limits.hints_per_minute) == (7, 0.5, 3)
    assert ArenaLimits.from_environment(games_per_minute=9).games_per_minute == 9
    monkeypatch.setenv("AGON_GAMES_PER_MINUTE", "abc")
    with pytest.raises(AgonError, match="AGON_GAMES_PER_MINUTE='abc' is not a number"):
        ArenaLimits.from_environment()
    with pytest.raises(AgonError, match="--idle-days must be a positive number"):
        ArenaLimits.from_environment(games_per_minute=1, idle_days=float("nan"))


def test_bodies_deep_or_wide_are_refused_cleanly(limited_app_client: TestClient) -> None:
    deep = '{"game": "alak", "options": {"size": ' + "[" * 20_000 + "]" * 20_000 + "}}"
    wide = {"game": "alak", "options": {f"option{number}": 1 for number in range(17)}}
    for answer in (
        limited_app_client.post("/api/games", content=deep,
                                headers={"Content-Type": "application/json"}),
        limited_app_client.post("/api/games", json=wide),
    ):
        assert answer.status_code == 400, answer.text
    assert "options" in answer.json()["detail"]


@pytest.mark.parametrize("path", ["/", "/analysis", "/rules/{game}", "/puzzles/{game}"])
def test_pages_answer_head_as_get_without_a_body(limited: TestClient, path: str) -> None:
    """(HEAD / answered 405: link checkers and monitors ask HEAD.)"""
    from agon.games import names

    path = path.format(game=names()[0])
    asked = limited.head(path)
    assert asked.status_code == 200 and asked.content == b""
    assert asked.headers["content-type"] == limited.get(path).headers["content-type"]
