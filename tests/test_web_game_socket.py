"""A player's changes sent on the game's WebSocket (agon.web.game_socket): made as the HTTP API
makes them, answered on the socket, refused in the API's words."""

from __future__ import annotations

import json
from typing import Any

import pytest

from web_fixtures import (
    Seat,
    TestClient,
    arena_url_on_both_databases,
    client,
    make_client,
    receive_within,
    start_game,
)

__all__ = ["arena_url_on_both_databases", "client", "make_client"]  # fixtures used by name
# (every test here runs on SQLite and on PostgreSQL)


def answer_to(socket: Any, message_id: object) -> dict[str, Any]:
    """The socket's answer to the message ``message_id`` (updates before it are passed over)."""
    while True:
        message = receive_within(socket, 30)
        if message["type"] != "update" and message["id"] == message_id:
            return dict(message)
        assert message["type"] == "update", message


def next_update(socket: Any) -> dict[str, Any]:
    """The next update's view (an answer before it is passed over)."""
    while True:
        message = receive_within(socket, 30)
        if message["type"] == "update":
            return dict(message["view"])


def test_players_move_on_the_games_socket_and_every_watcher_sees_it(client: TestClient) -> None:
    seat, created = start_game(client, game="alak", options={"size": 5}, opponent="friend")
    guest = Seat(client, seat.game_id, created["invite_token"])
    path = f"/ws/games/{seat.game_id}"
    with client.websocket_connect(path) as host_socket, \
            client.websocket_connect(path) as guest_socket, \
            client.websocket_connect(path) as watcher:
        for socket in (host_socket, guest_socket, watcher):
            assert next_update(socket)["moves"] == []
        host_socket.send_json(
            {"type": "move", "move": "2", "revision": 0, "token": seat.token, "id": 1}
        )
        assert answer_to(host_socket, 1) == {"type": "done", "id": 1, "revision": 1}
        assert [m["text"] for m in next_update(watcher)["moves"]] == ["2"]
        guest_socket.send_json({"type": "move", "move": "4", "token": guest.token, "id": "g-1"})
        assert answer_to(guest_socket, "g-1")["revision"] == 2
        assert [m["text"] for m in next_update(watcher)["moves"]] == ["2", "4"]
    assert [m["text"] for m in seat.view()["moves"]] == ["2", "4"]


def test_undo_and_resign_on_the_games_socket(client: TestClient) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    assert seat.move("1").status_code == 200
    with client.websocket_connect(f"/ws/games/{seat.game_id}") as socket:
        next_update(socket)
        socket.send_json({"type": "move", "move": "1", "token": seat.token, "id": 0})
        occupied = answer_to(socket, 0)
        by_http = seat.move("1")
        assert (occupied["status"], occupied["detail"]) == (422, by_http.json()["detail"])
        socket.send_json({"type": "undo", "revision": 1, "token": seat.token, "id": 1})
        assert answer_to(socket, 1)["type"] == "done"
        socket.send_json({"type": "resign", "token": seat.token, "id": 2})
        assert answer_to(socket, 2)["type"] == "done"
    view = seat.view()
    assert view["moves"] == [] and view["status"] == "over"


REFUSALS = [
    ("a stranger's move", {"type": "move", "move": "1", "token": "not-a-seat"}, 403,
     "holds no seat"),
    ("a move on a revision not shown", {"type": "move", "move": "1", "revision": 5}, 409,
     "revision"),
    ("a point off the board", {"type": "move", "move": "9"}, 400, "off the board"),
    ("an overlong move", {"type": "move", "move": "1" * 65}, 400, "move"),
    ("a revision as text", {"type": "move", "move": "1", "revision": "0"}, 400, "revision"),
    ("a move without its text", {"type": "move"}, 400, "a move needs its text"),
    ("an undo with a move", {"type": "undo", "move": "1"}, 400, "undo takes no move"),
    ("an unknown change", {"type": "draw"}, 400, "type"),
]
SAID_AS_THE_API_SAYS = 5
"""The first refusals, of moves the API can be sent: the socket answers them as it does."""


@pytest.mark.parametrize(
    ("sent", "status", "words"), [case[1:] for case in REFUSALS], ids=[c[0] for c in REFUSALS]
)
def test_the_games_socket_refuses_a_change_as_the_api_would_and_stays_open(
    client: TestClient, sent: dict[str, Any], status: int, words: str
) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    change = {"token": seat.token, **sent}
    with client.websocket_connect(f"/ws/games/{seat.game_id}") as socket:
        next_update(socket)
        socket.send_json({**change, "id": "x"})
        refused = answer_to(socket, "x")
        assert refused["type"] == "refused" and refused["status"] == status, refused
        assert words in refused["detail"], refused
        if REFUSALS.index(next(c for c in REFUSALS if c[1] == sent)) < SAID_AS_THE_API_SAYS:
            body = {name: value for name, value in sent.items() if name in ("move", "revision")}
            by_http = Seat(client, seat.game_id, change["token"]).post("/moves", body)
            assert (by_http.status_code, by_http.json()["detail"]) == (status, refused["detail"])
        socket.send_json({"type": "move", "move": "1", "token": seat.token, "id": "after"})
        assert answer_to(socket, "after")["type"] == "done"
    assert [m["text"] for m in seat.view()["moves"]] == ["1"]


@pytest.mark.parametrize(
    ("message", "detail"),
    [
        ("not json", "is JSON text"),
        (json.dumps([1, 2]), "bad request"),
        (json.dumps({"type": "move", "move": "1", "id": ["a list"]}), "id"),
        (b"binary", "not binary"),
    ],
)
def test_a_message_that_is_no_change_is_refused_in_words_without_an_id(
    client: TestClient, message: str | bytes, detail: str
) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    with client.websocket_connect(f"/ws/games/{seat.game_id}") as socket:
        next_update(socket)
        if isinstance(message, bytes):
            socket.send_bytes(message)
        else:
            socket.send_text(message)
        refused = answer_to(socket, None)
        assert refused["status"] == 400 and detail in refused["detail"], refused
    assert seat.view()["moves"] == []


def test_a_question_on_the_games_socket_is_answered_as_the_api_answers_it(
    client: TestClient,
) -> None:
    seat, _ = start_game(client, game="alternator", options={"width": 3, "height": 2},
                         opponent="local")
    with client.websocket_connect(f"/ws/games/{seat.game_id}") as socket:
        next_update(socket)
        for picked in (["a1"], ["a1", "b1"], ["c2"]):
            socket.send_json({"type": "choices", "picked": picked, "id": "q"})
            answer = answer_to(socket, "q")
            assert answer["type"] == "choices"
            assert answer["answer"] == seat.get(f"/choices?picked={','.join(picked)}").json()
        socket.send_json({"type": "choices", "picked": ["z9"], "id": "bad"})
        refused = answer_to(socket, "bad")
        by_http = seat.get("/choices?picked=z9")
        assert (refused["status"], refused["detail"]) == (400, by_http.json()["detail"])
        socket.send_json({"type": "choices", "picked": ["a1"], "move": "a1-b1", "id": "both"})
        assert "no move" in answer_to(socket, "both")["detail"]
        socket.send_json({"type": "move", "move": "a1-b1", "picked": ["a1"], "id": "picks"})
        assert "picks no places" in answer_to(socket, "picks")["detail"]
    assert seat.view()["moves"] == []
