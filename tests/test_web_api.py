"""The web arena's HTTP and WebSocket API: seats, rules, persistence, and clean refusals."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import event, insert

from agon.core.records import GameRecord
from agon.games import make_game
from agon.web import arena as arena_module
from agon.web import seats as seats_module
from agon.web import store as store_module
from agon.web import thinking as thinking_module
from agon.web.app import create_app
from agon.web.config import database_url, default_db_path
from agon.web.store import Base, MoveRow, Outcome, StaleGame, Store
from agon.web.views import pick_places
from web_fixtures import (
    Seat,
    TestClient,
    arena_url_on_both_databases,
    client,
    make_client,
    receive_within,
    replayed,
    start_game,
    wait_for,
)

__all__ = ["arena_url_on_both_databases", "client", "make_client"]  # fixtures used by name
# (every test here runs on SQLite and on PostgreSQL)

GAME_KINDS = [
    ("alternator", {"width": 3, "height": 2}),
    ("alak", {"size": 5}),
    ("alak", {"size": 6, "rules": "traditional", "komi": 0.5}),
    ("alak", {"size": 5, "rules": "tromp-taylor"}),
]


def first_legal(view: dict[str, Any]) -> str:
    state = replayed(view)
    moves = [m for m in state.legal_moves() if m != state.game.pass_move]
    return state.game.format_move(moves[0])


# --- creating games ----------------------------------------------------------------------------


@pytest.mark.parametrize(("game", "options"), GAME_KINDS)
@pytest.mark.parametrize("opponent", ["computer", "local", "friend"])
def test_every_kind_of_game_can_be_created_and_played(
    client: TestClient, game: str, options: dict[str, Any], opponent: str
) -> None:
    seat, created = start_game(client, game=game, options=options, opponent=opponent,
                               level="beginner", colour="black")
    view = seat.view()
    assert view["game"] == game
    assert view["variant"] == make_game(game, options).options()
    assert view["status"] == "active" and view["to_move"] == "black"
    assert view["svg"].startswith("<svg") and 'class="board' in view["svg"]
    assert view["you"] == (["black", "white"] if opponent == "local" else ["black"])
    assert (created["invite_token"] is not None) == (opponent == "friend")
    assert created["token"] != created["invite_token"]
    answer = seat.move(first_legal(view))
    assert answer.status_code == 200, answer.text
    assert len(answer.json()["moves"]) == 1
    if opponent == "computer":
        assert answer.json()["thinking"] is True
        after = seat.wait_for_turn()
        assert [m["player"] for m in after["moves"]] == ["black", "white"]
        replayed(after)  # the computer's move obeys the rules


def test_computer_moves_first_when_the_person_takes_white(client: TestClient) -> None:
    seat, created = start_game(client, game="alak", options={"size": 5}, opponent="computer",
                               level="beginner", colour="white")
    assert created["colour"] == "white"
    view = seat.wait_for_turn()
    assert [m["player"] for m in view["moves"]] == ["black"]
    assert view["to_move"] == "white" and view["you"] == ["white"]


def test_meta_lists_games_levels_and_languages(client: TestClient) -> None:
    meta = client.get("/api/meta").json()
    assert {"alternator", "alak"} <= set(meta["games"])
    assert [level["key"] for level in meta["levels"]] == [
        "beginner", "easy", "medium", "hard", "strongest"]
    assert meta["levels"][0]["agent"] == "random"
    # how long each level thinks a move, from its agent's budget (None: at once)
    seconds = {level["key"]: level["seconds"] for level in meta["levels"]}
    assert seconds["beginner"] is None and seconds["medium"] is None and seconds["hard"] == 1.0
    assert set(meta["languages"]) == {"en", "es", "nl", "lt"}
    alak = meta["games"]["alak"]  # the lobby's words in each language of the rules
    assert set(alak["summary"]) == set(alak["click_help"]) == set(meta["languages"])


# --- moves and refusals ------------------------------------------------------------------------


def test_an_illegal_move_is_refused_with_the_rule(client: TestClient) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    assert seat.move("3").status_code == 200
    answer = seat.move("3")
    assert answer.status_code == 422
    assert answer.json()["detail"] == "3 is illegal: point 3 is occupied"
    assert len(seat.view()["moves"]) == 1


def test_unreadable_moves_and_a_pass_that_the_rules_lack_are_explained(client: TestClient) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    answer = seat.move("banana")
    assert answer.status_code == 400 and "is not a move" in answer.json()["detail"]
    answer = seat.post("/pass")
    assert answer.status_code == 400 and "no pass in the baljeu rules" in answer.json()["detail"]


def test_picked_places_name_the_places_that_can_follow_and_why_others_cannot(
    client: TestClient,
) -> None:
    seat, _ = start_game(client, game="alternator", options={"width": 3, "height": 2},
                         opponent="local")
    picked = seat.get("/choices?picked=a1").json()
    assert {c["place"]: c["legal"] for c in picked["choices"]} == {"a2": True, "b1": True}
    assert picked["reason"] is None and picked["move"] is None
    # each next place names the move it makes, so that a page can play it without asking
    assert {c["place"]: c["move"] for c in picked["choices"]} == {"a2": "a1-a2", "b1": "a1-b1"}
    assert picked["svg"].count("highlight") >= 2
    assert seat.get("/choices?picked=a1,b1").json()["move"] == "a1-b1"
    assert seat.move("a1-b1").status_code == 200
    pit = seat.get("/choices?picked=a1").json()
    assert pit["reason"] == "a1 has no legal move: a1 already has a dot (a pit)"
    big = seat.get("/choices?picked=a2").json()
    by_place = {c["place"]: c for c in big["choices"]}
    assert by_place["b2"]["legal"] and not by_place["a1"]["legal"]
    assert by_place["a1"]["move"] == "a2-a1"  # (an illegal one too: playing it says why not)
    # a move of one place is made at once, legal or not (playing it says why not)
    alak, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    assert alak.get("/choices?picked=3").json()["move"] == "3"
    answer = seat.move("c1-b1")  # a tree of size 1 may not take in one of size 2
    assert answer.status_code == 422
    assert "the larger tree must attach to the smaller" in answer.json()["detail"]


PLACES_OF_MOVES = {0: (0, 1), 1: (0, 1, 2), 2: (0, 2)}


class _PlacesGame:
    """Moves of two and three places, for :func:`pick_places` alone: a-b, a-b-c and a-c."""

    num_actions = len(PLACES_OF_MOVES)

    def move_places(self, move: int) -> tuple[int, ...]:
        return PLACES_OF_MOVES[move]

    def place_name(self, place: int) -> str:
        return "abc"[place]

    def illegal_reason(self, move: int) -> str | None:
        return None


def test_a_next_place_names_the_move_it_makes_only_where_no_longer_move_goes_on() -> None:
    places = _PlacesGame()
    first = pick_places(places, places, ["a"])  # type: ignore[arg-type]
    assert first.move is None and set(first.choices) == {1, 2}
    assert first.completed_by == {2: 2}  # (b may go on to c: picking it makes no move yet)
    second = pick_places(places, places, ["a", "b"])  # type: ignore[arg-type]
    assert second.move is None and second.completed_by == {2: 1}


def test_wrong_token_and_spectators_cannot_move(client: TestClient) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="friend",
                         colour="black")
    for token in ("not-a-token", None, ""):
        intruder = Seat(client, seat.game_id, token)
        for answer in (intruder.move("1"), intruder.post("/resign"), intruder.post("/undo"),
                       intruder.get("/hint")):
            assert answer.status_code == 403, answer.text
            assert "seat" in answer.json()["detail"] or "player" in answer.json()["detail"]
        assert intruder.view()["you"] == []
    assert seat.view()["moves"] == []


def test_friend_game_turns_and_invitation(client: TestClient) -> None:
    host, created = start_game(client, game="alternator", options={"width": 3, "height": 2},
                               opponent="friend", colour="white")
    guest = Seat(client, host.game_id, created["invite_token"])
    assert host.view()["invite_token"] == created["invite_token"]
    assert guest.view()["invite_token"] is None
    assert guest.view()["you"] == ["black"] and host.view()["you"] == ["white"]
    answer = host.move("a1-b1")
    assert answer.status_code == 409 and "Black's turn" in answer.json()["detail"]
    assert guest.move("a1-b1").status_code == 200
    assert host.move("c1-b1").status_code == 422
    assert host.move("c2-c1").status_code == 200
    answer = guest.post("/undo")
    assert answer.status_code == 409 and "cannot be taken back" in answer.json()["detail"]


def test_undo_against_the_computer_takes_back_its_answer_too(client: TestClient) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 7}, opponent="computer",
                         level="beginner", colour="black")
    assert seat.post("/undo").status_code == 409  # nothing of ours to take back
    seat.move("4")
    first = seat.wait_for_turn()
    seat.move(first_legal(first))
    second = seat.wait_for_turn()
    assert len(second["moves"]) == 4 and second["undo_available"]
    answer = seat.post("/undo")
    assert answer.status_code == 200
    assert answer.json()["moves"] == second["moves"][:2]
    assert answer.json()["to_move"] == "black"
    assert seat.post("/undo").json()["moves"] == []


def test_undo_at_one_screen_takes_back_one_move(client: TestClient) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    seat.move("1")
    seat.move("3")
    assert [m["text"] for m in seat.post("/undo").json()["moves"]] == ["1"]


def test_resignation_is_stored_and_ends_the_game(client: TestClient) -> None:
    seat, _ = start_game(client, game="alternator", options={"width": 3, "height": 2},
                         opponent="computer", level="beginner", colour="white")
    seat.wait_for_turn()
    view = seat.post("/resign").json()
    assert view["status"] == "over" and view["result"] == "B+R"
    assert view["reason"] == "White resigned" and view["headline"] == "Black wins by resignation"
    assert view["to_move"] is None and not view["undo_available"]
    for answer in (seat.move("pass"), seat.post("/resign"), seat.post("/undo")):
        assert answer.status_code == 409
    record = GameRecord.from_json(seat.get("/record").text, make_game)
    assert record.result == "B+R" and record.reason == "White resigned"


def test_the_end_of_a_game_is_stored_with_its_result_and_reason(client: TestClient) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 1}, opponent="local")
    view = seat.move("1").json()
    assert view["status"] == "over" and view["result"] == "B+1"
    assert view["reason"] == "White has no legal placement"
    assert view["headline"] == "Black wins by 1"
    assert seat.move("1").status_code == 409
    listed = client.get("/api/games?status=over").json()["games"]
    assert [(g["id"], g["result"]) for g in listed] == [(seat.game_id, "B+1")]


def test_hint_suggests_a_legal_move_to_the_player_on_turn(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arena_module, "HINT_SECONDS", 0.2)
    seat, _ = start_game(client, game="alternator", options={"width": 3, "height": 2},
                         opponent="computer", level="beginner", colour="black")
    hint = seat.get("/hint").json()
    state = replayed(seat.view())
    assert state.is_legal(state.game.parse_move(hint["move"]))
    assert "highlight" in hint["svg"]


def test_exported_record_loads_and_replays(client: TestClient, tmp_path: Path) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 5, "rules": "tromp-taylor"},
                         opponent="local")
    for move in ("2", "4", "pass"):
        assert seat.move(move).status_code == 200
    answer = seat.get("/record")
    assert answer.headers["content-type"].startswith("application/json")
    assert "attachment" in answer.headers["content-disposition"]
    path = tmp_path / "game.json"
    path.write_text(answer.text)
    record = GameRecord.load(path, make_game)
    assert record.moves == ["2", "4", "pass"]
    assert record.game == make_game("alak", {"size": 5, "rules": "tromp-taylor"})
    assert record.replay().history == replayed(seat.view()).history
    assert record.players == {"black": "human", "white": "human"}


# --- persistence -------------------------------------------------------------------------------


def test_games_survive_a_restart(arena_url: str) -> None:
    with TestClient(create_app(arena_url, executor="thread")) as first:
        seat, created = start_game(first, game="alternator", options={"width": 3, "height": 2},
                                   opponent="friend", colour="black")
        seat.move("a1-b1")
        over, _ = start_game(first, game="alak", options={"size": 5}, opponent="local")
        over.post("/resign")
    with TestClient(create_app(arena_url, executor="thread")) as second:
        again = Seat(second, seat.game_id, seat.token)
        view = again.view()
        assert [m["text"] for m in view["moves"]] == ["a1-b1"]
        assert view["you"] == ["black"] and view["to_move"] == "white"
        guest = Seat(second, seat.game_id, created["invite_token"])
        assert guest.move("c2-c1").status_code == 200
        resigned = Seat(second, over.game_id, over.token).view()
        assert resigned["status"] == "over" and resigned["result"] == "W+R"


def test_a_computer_turn_cut_off_by_a_restart_is_played_after_it(arena_url: str) -> None:
    store = Store(database_url(arena_url))
    store.create(game_id="cutoff", game="alak", options={"size": 5}, mode="computer",
                 seats={"black": {"agent": "random", "level": "beginner"},
                        "white": {"token": "tok"}}, host="white", computer_first=True)
    store.close()
    with TestClient(create_app(arena_url, executor="thread")) as restarted:
        view = Seat(restarted, "cutoff", "tok").wait_for_turn()
        assert len(view["moves"]) == 1 and view["to_move"] == "white"


def test_the_database_keeps_no_seat_token(
    client: TestClient, arena_url: str, web_db: Path
) -> None:
    host, created = start_game(client, game="alak", options={"size": 5}, opponent="friend")
    invite = created["invite_token"]
    store = Store(database_url(arena_url))
    stored = store.load(host.game_id)
    with store.engine.connect() as connection:
        rows = [connection.execute(table.select()).all() for table in Base.metadata.sorted_tables]
    store.close()
    assert stored is not None
    assert all(kept and kept.startswith(seats_module.HASHED) for kept in stored.tokens.values())
    contents = str(rows).encode()
    if arena_url == str(web_db):  # (and nowhere in SQLite's files, its log included)
        contents += b"".join(path.read_bytes() for path in web_db.parent.glob(web_db.name + "*"))
    assert host.token and host.token.encode() not in contents and invite.encode() not in contents
    # the host's page can still show the friend's link; each token holds only its own seat
    assert host.view()["invite_token"] == invite
    guest = Seat(client, host.game_id, invite)
    assert guest.view()["you"] == [colour for colour in ("black", "white")
                                   if colour != created["colour"]]
    assert guest.view()["invite_token"] is None
    wrong = invite[:-1] + ("B" if invite.endswith("A") else "A")
    assert Seat(client, host.game_id, wrong).view()["you"] == []


def test_games_stored_before_tokens_were_hashed_keep_their_seats(arena_url: str) -> None:
    store = Store(database_url(arena_url))
    store.create(game_id="older", game="alak", options={"size": 5}, mode="friend",
                 seats={"black": {"token": "host-token"}, "white": {"token": "guest-token"}},
                 host="black")
    store.close()
    with TestClient(create_app(arena_url, executor="thread", warm=False)) as client:
        host_view = Seat(client, "older", "host-token").view()
        assert host_view["you"] == ["black"] and host_view["invite_token"] == "guest-token"
        assert Seat(client, "older", "guest-token").view()["you"] == ["white"]
        assert Seat(client, "older", "guest").view()["you"] == []


def test_a_game_let_go_while_it_is_read_again_is_still_answered(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game kept here is checked against the database in a thread; meanwhile the arena may
    let it go to keep another (it keeps the latest used). It was answered 500 then."""
    monkeypatch.setattr(arena_module, "KEPT_GAMES", 1)
    first, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    second, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    assert first.move("3").status_code == 200  # (the first game kept, the second let go)
    store = client.app.state.arena.store  # type: ignore[attr-defined]
    checking, let_go = threading.Event(), threading.Event()
    load_changed = store.load_changed

    def slow_check(game_id: str, revision: int) -> Any:
        checking.set()
        assert let_go.wait(timeout=30)
        return load_changed(game_id, revision)

    monkeypatch.setattr(store, "load_changed", slow_check)
    answers: list[Any] = []
    reader = threading.Thread(target=lambda: answers.append(first.get("")))
    reader.start()
    try:
        assert checking.wait(timeout=30)
        monkeypatch.setattr(store, "load_changed", load_changed)
        assert second.get("").status_code == 200  # (read in full: kept instead of the first)
    finally:
        let_go.set()
        reader.join(timeout=30)
    assert answers[0].status_code == 200, answers[0].text
    assert [move["text"] for move in answers[0].json()["moves"]] == ["3"]


def test_a_stale_revision_cannot_store_a_second_move(arena_url: str) -> None:
    store = Store(database_url(arena_url))
    stored = store.create(game_id="race", game="alak", options={"size": 5}, mode="local",
                          seats={"black": {"token": "t"}, "white": {"token": "t"}}, host=None)
    store.append_move("race", stored.revision, 1, "1", Outcome())
    with pytest.raises(StaleGame):
        store.append_move("race", stored.revision, 1, "2", Outcome())
    loaded = store.load("race")
    assert loaded is not None and loaded.moves == ["1"]
    store.close()


def test_the_revisions_of_many_games_are_read_together(
    arena_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "REVISIONS_A_READ", 2)  # (so three statements)
    store = Store(database_url(arena_url))
    game_ids = [f"many{number}" for number in range(5)]
    for game_id in game_ids:
        store.create(game_id=game_id, game="alak", options={"size": 5}, mode="local",
                     seats={"black": {"token": "t"}, "white": {"token": "t"}}, host=None)
    store.append_move("many3", 0, 1, "1", Outcome())
    asked = [*game_ids, "nothing"]
    assert store.revisions(asked) == {**dict.fromkeys(game_ids, 0), "many3": 1}
    assert store.revisions([]) == {}
    store.close()


def test_one_process_s_writers_take_turns_before_they_reach_sqlite(tmp_path: Path) -> None:
    """SQLite's busy handler is unfair (a waiting writer sleeps up to 100 ms between tries
    while later ones get in; one waited seconds): the store's writers wait for each other
    instead, so that they never meet in SQLite, even where it would not wait at all."""
    store = Store(database_url(str(tmp_path / "turns.db")))

    @event.listens_for(store.engine, "connect")
    def _no_waiting(connection: Any, _record: Any) -> None:
        connection.execute("PRAGMA busy_timeout=0")

    store.engine.dispose()  # (the connections opened from now on do not wait)
    failures: list[BaseException] = []

    def play(game_id: str) -> None:
        try:
            store.create(game_id=game_id, game="alak", options={"size": 5}, mode="local",
                         seats={"black": {"token": "t"}, "white": {"token": "t"}}, host=None)
            revision = 0
            for ply in range(1, 41):
                revision = store.append_move(game_id, revision, ply, str(ply), Outcome())
        except BaseException as error:  # (a thread's failure, reported below)
            failures.append(error)

    players = [threading.Thread(target=play, args=(f"game{index}",)) for index in range(8)]
    for player in players:
        player.start()
    for player in players:
        player.join()
    store.close()
    assert failures == []


def _in_threads(
    calls: list[Callable[[], object]],
) -> tuple[list[threading.Thread], dict[int, BaseException]]:
    """Each call started in a thread of its own; the errors they raise, by call."""
    errors: dict[int, BaseException] = {}

    def run(index: int) -> None:
        try:
            calls[index]()
        except BaseException as error:  # (a thread's failure, looked at by the test)
            errors[index] = error

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(calls))]
    for thread in threads:
        thread.start()
    return threads, errors


@pytest.mark.parametrize("trouble", ["none", "stale", "played"])
def test_moves_that_come_while_one_commits_are_committed_together_each_refused_alone(
    tmp_path: Path, trouble: str
) -> None:
    """On SQLite a process's changes wait while one commits, and are then committed in one
    transaction; one whose game changed meanwhile (``stale``), or whose turn a row already
    holds (``played``), is refused as it would be alone, and the others are stored."""
    store = Store(database_url(str(tmp_path / "group.db")))
    seats: dict[str, dict[str, str | None]] = {"black": {"token": "t"}, "white": {"token": "t"}}
    games = [f"game{index}" for index in range(5)]
    for game_id in games:
        store.create(game_id=game_id, game="alak", options={"size": 5}, mode="local",
                     seats=seats, host=None)
    if trouble == "played":  # (a move row that the game's revision does not count)
        with store.engine.begin() as connection:
            connection.execute(insert(MoveRow).values(game_id="game4", ply=1, text="2"))
    commits: list[int] = []
    event.listen(store.engine, "commit", lambda connection: commits.append(1))
    revision_of_last = 7 if trouble == "stale" else 0
    calls: list[Callable[[], object]] = [
        partial(store.append_move, game_id, revision_of_last if game_id == "game4" else 0, 1,
                "1", Outcome())
        for game_id in games
    ]
    group = store._group
    assert group is not None
    with store._writing:  # (the first change waits here, the others behind it)
        threads, errors = _in_threads(calls[:1])
        wait_for(lambda: group._committing, "first change, taking its group alone")
        more, more_errors = _in_threads(calls[1:])
        wait_for(lambda: len(group._waiting) == 4, "four changes waiting behind it")
    for thread in [*threads, *more]:
        thread.join(timeout=30)
    refused = {games[1 + index]: error for index, error in more_errors.items()}
    assert not errors
    if trouble == "none":
        assert refused == {}
    else:
        assert list(refused) == ["game4"] and isinstance(refused["game4"], StaleGame)
    stored = {game_id: store.load(game_id) for game_id in games}
    for game_id, game in stored.items():
        assert game is not None
        if game_id in refused:
            assert game.revision == 0 and game.moves == (["2"] if trouble == "played" else [])
        else:
            assert game.revision == 1 and game.moves == ["1"]
    # the first alone, then the four together; where one of them failed there, the others
    # each alone again
    assert len(commits) == (4 if trouble == "played" else 2)
    store.close()


def test_a_game_is_read_as_one_moment_while_moves_are_stored(arena_url: str) -> None:
    """Each read sees a game's row and its moves as they were together: never a move whose
    revision (and so whose outcome) is not yet there. Reads race a writer for many moves."""
    store = Store(database_url(arena_url))
    stored = store.create(game_id="moment", game="alak", options={"size": 5}, mode="local",
                          seats={"black": {"token": "t"}, "white": {"token": "t"}}, host=None)
    plies = 400
    seen: list[tuple[int, int]] = []

    def write() -> None:
        revision = stored.revision
        for ply in range(1, plies + 1):
            revision = store.append_move("moment", revision, ply, str(ply), Outcome())

    writer = threading.Thread(target=write)
    writer.start()
    while writer.is_alive():
        for read in (store.load("moment"), *store.recent(None, 5), *store.many(["moment"])):
            assert read is not None
            seen.append((read.revision - stored.revision, len(read.moves)))
    writer.join()
    store.close()
    assert all(revisions == moves for revisions, moves in seen), [
        pair for pair in seen if pair[0] != pair[1]][:5]
    assert len(seen) > 3  # (the reads did overlap the writes)


def test_database_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("AGON_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_db_path() == tmp_path / "data" / "agon" / "agon.db"
    url = database_url()
    assert url.database == str(tmp_path / "data" / "agon" / "agon.db")
    assert (tmp_path / "data" / "agon").is_dir()
    monkeypatch.setenv("AGON_DB", str(tmp_path / "elsewhere" / "games.db"))
    assert database_url().database == str(tmp_path / "elsewhere" / "games.db")
    assert database_url("sqlite:///" + str(tmp_path / "x.db")).drivername == "sqlite"


def test_a_game_s_position_is_kept_between_requests_not_replayed(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move and the reads after it start from the position kept since the game's last
    request; only a game the arena has not seen at its stored revision is replayed."""
    replays: list[int] = []
    replay = arena_module.replay

    def counted(stored: Any) -> Any:
        replays.append(stored.revision)
        return replay(stored)

    monkeypatch.setattr(arena_module, "replay", counted)
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    assert seat.view()["revision"] == 0
    assert replays == [0]
    for move in ("1", "3", "5"):
        assert seat.move(move).status_code == 200
    view = seat.view()
    assert view["revision"] == 3 and [m["text"] for m in view["moves"]] == ["1", "3", "5"]
    assert replays == [0]


def test_the_lobby_s_lists_sum_up_the_positions_kept_and_replay_only_the_rest(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    other, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    for move in ("1", "3"):
        assert seat.move(move).status_code == 200
    store = client.app.state.arena.store  # type: ignore[attr-defined]
    store.append_move(other.game_id, 0, 1, "2", Outcome())  # (another process's move)
    replays: list[str] = []
    replay = arena_module.replay
    monkeypatch.setattr(
        arena_module, "replay", lambda stored: replays.append(stored.id) or replay(stored)
    )
    for query in ("status=all", f"ids={seat.game_id},{other.game_id}"):
        listed = {game["id"]: game for game in client.get(f"/api/games?{query}").json()["games"]}
        assert listed[seat.game_id]["plies"] == 2 and listed[other.game_id]["plies"] == 1
        assert listed[other.game_id]["to_move"] == "white"
    assert replays == [other.game_id] * 2


def counted(calls: list[str], read: Callable[[str], Any]) -> Callable[[str], Any]:
    """``read``, each call's game appended to ``calls``."""
    return lambda game_id: calls.append(game_id) or read(game_id)


def test_a_move_reads_its_game_once_and_answers_with_it_as_stored(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move checks the kept position's revision once, before it is played; its answer and
    its broadcast are the game as this process stored it, not read again."""
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    assert seat.view()["revision"] == 0
    store = client.app.state.arena.store  # type: ignore[attr-defined]
    checks: list[str] = []
    monkeypatch.setattr(store, "_revision", counted(checks, store._revision))
    for ply, move in enumerate(("1", "3", "5"), start=1):
        answer = seat.move(move)
        assert answer.status_code == 200
        assert answer.json()["revision"] == ply and answer.json()["moves"][-1]["text"] == move
        assert checks == [seat.game_id] * ply


def test_a_move_for_the_revision_kept_is_stored_without_reading_the_game(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move that names the revision this process keeps the game at is not checked by a
    read: the transaction that stores it checks the revision (the next test)."""
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    assert seat.view()["revision"] == 0
    store = client.app.state.arena.store  # type: ignore[attr-defined]
    reads: list[str] = []
    for name in ("_revision", "load"):
        monkeypatch.setattr(store, name, counted(reads, getattr(store, name)))
    for revision, move in enumerate(("1", "3", "5")):
        answer = seat.post("/moves", {"move": move, "revision": revision})
        assert answer.status_code == 200, answer.text
        assert answer.json()["revision"] == revision + 1
    assert reads == []
    assert [m["text"] for m in seat.view()["moves"]] == ["1", "3", "5"]


def test_a_new_game_is_kept_as_created_so_its_first_views_read_no_moves(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crowd that comes to a new game would each read it in full and replay it otherwise."""
    store = client.app.state.arena.store  # type: ignore[attr-defined]
    load = store.load
    read_in_full: list[str] = []
    monkeypatch.setattr(store, "load", counted(read_in_full, load))
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    assert read_in_full == [seat.game_id]  # (the store's own, as it creates the game)
    for _ in range(3):
        assert seat.view()["revision"] == 0
    assert seat.move("1").status_code == 200
    assert read_in_full == [seat.game_id]


def test_a_move_for_a_revision_the_game_has_left_is_refused_saying_so(
    client: TestClient,
) -> None:
    """Made on a view the game has left (a second tab, a second click, another process's
    change), the move is refused rather than played on a position its player has not seen."""
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    assert seat.post("/moves", {"move": "1", "revision": 0}).status_code == 200
    stale = seat.post("/moves", {"move": "3", "revision": 0})  # (this process saw 1)
    assert stale.status_code == 409
    assert stale.json()["detail"] == "the game has moved on: it is at revision 1, not 0: look again"
    store = client.app.state.arena.store  # type: ignore[attr-defined]
    store.append_move(seat.game_id, 1, 2, "3", Outcome())  # (another process's, unseen here)
    passed = seat.post("/moves", {"move": "4", "revision": 1})
    assert passed.status_code == 409 and "changed meanwhile" in passed.text
    assert [m["text"] for m in seat.view()["moves"]] == ["1", "3"]
    assert seat.post("/moves", {"move": "5", "revision": 2}).status_code == 200
    assert [m["text"] for m in seat.view()["moves"]] == ["1", "3", "5"]


def test_a_pass_an_undo_and_a_resignation_may_name_their_revision_too(
    client: TestClient,
) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 5, "rules": "tromp-taylor"},
                         opponent="local")
    assert seat.post("/moves", {"move": "1", "revision": 0}).status_code == 200
    for change in ("/pass", "/undo", "/resign"):
        refused = seat.post(change, {"revision": 0})
        assert refused.status_code == 409 and "moved on" in refused.text, change
    view = seat.view()
    assert view["revision"] == 1 and view["status"] == "active"
    assert seat.post("/pass", {"revision": 1}).json()["moves"][-1]["text"] == "pass"
    assert seat.post("/undo", {"revision": 2}).json()["revision"] == 3
    assert seat.post("/resign", {"revision": 3.0}).json()["status"] == "over"  # (JSON's 3)


@pytest.mark.parametrize("revision", [-1, 2**31, "one", "0", 1.5, False, [1]])
def test_a_revision_that_is_no_revision_is_refused(client: TestClient, revision: Any) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    for change, body in (("/moves", {"move": "1"}), ("/pass", {}), ("/resign", {})):
        answer = seat.post(change, {**body, "revision": revision})
        assert answer.status_code == 400 and "revision" in answer.json()["detail"], change
    view = seat.view()
    assert view["moves"] == [] and view["status"] == "active"


def test_a_change_another_process_made_is_seen_though_a_position_is_kept(
    client: TestClient,
) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    assert seat.move("1").status_code == 200
    store = client.app.state.arena.store  # type: ignore[attr-defined]
    store.append_move(seat.game_id, 1, 2, "3", Outcome())  # (the other process's move)
    view = seat.view()
    assert view["revision"] == 2 and [m["text"] for m in view["moves"]] == ["1", "3"]
    assert seat.move("5").status_code == 200
    assert [m["text"] for m in seat.view()["moves"]] == ["1", "3", "5"]


def test_a_move_that_loses_the_race_leaves_the_kept_position_as_stored(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The move was played on the position kept at revision 1, but another process stored
    its own move first: the refused move is in no later position."""
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    assert seat.move("1").status_code == 200
    store = client.app.state.arena.store  # type: ignore[attr-defined]
    append_move = store.append_move

    def beaten(game_id: str, revision: int, ply: int, *rest: Any) -> int:
        append_move(game_id, revision, ply, "3", Outcome())  # (the other process's, first)
        return append_move(game_id, revision, ply, *rest)  # type: ignore[no-any-return]

    monkeypatch.setattr(store, "append_move", beaten)
    assert seat.move("4").status_code == 409
    monkeypatch.undo()
    view = seat.view()
    assert view["revision"] == 2 and [m["text"] for m in view["moves"]] == ["1", "3"]
    assert seat.move("5").status_code == 200
    assert [m["text"] for m in seat.view()["moves"]] == ["1", "3", "5"]


# --- live updates and responsiveness ------------------------------------------------------------


def test_moves_reach_watchers_over_websocket(client: TestClient) -> None:
    seat, created = start_game(client, game="alak", options={"size": 5}, opponent="friend")
    guest = Seat(client, seat.game_id, created["invite_token"])
    with client.websocket_connect(f"/ws/games/{seat.game_id}") as socket:
        first = socket.receive_json()
        assert first["type"] == "update" and first["view"]["moves"] == []
        assert "you" not in first["view"]
        seat.move("2")
        update = socket.receive_json()
        assert [m["text"] for m in update["view"]["moves"]] == ["2"]
        guest.move("4")
        assert [m["text"] for m in socket.receive_json()["view"]["moves"]] == ["2", "4"]


def test_moves_made_by_another_server_process_reach_watchers(
    make_client: Callable[..., TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arena_module, "REFRESH_SECONDS", 0.05)
    here, elsewhere = make_client(), make_client()  # two servers on one database
    seat, created = start_game(here, game="alak", options={"size": 5}, opponent="friend")
    guest = Seat(elsewhere, seat.game_id, created["invite_token"])
    with here.websocket_connect(f"/ws/games/{seat.game_id}") as socket:
        assert socket.receive_json()["view"]["moves"] == []
        seat.move("2")
        assert [m["text"] for m in socket.receive_json()["view"]["moves"]] == ["2"]
        time.sleep(0.3)  # polls that must not announce this process's own move again
        guest.move("4")
        update = receive_within(socket, 10)["view"]
        assert [m["text"] for m in update["moves"]] == ["2", "4"]
        assert update["revision"] == 2


def test_websocket_for_an_unknown_game_closes(client: TestClient) -> None:
    with client.websocket_connect("/ws/games/nothing") as socket:
        message = socket.receive()
        assert message["type"] == "websocket.close" and message["code"] == 4404


def test_the_server_answers_other_games_while_the_computer_thinks(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    real_think = thinking_module.think

    def slow_think(*arguments: Any) -> dict[str, Any]:
        assert release.wait(timeout=30)
        return real_think(*arguments)

    monkeypatch.setattr(thinking_module, "think", slow_think)
    thinking, _ = start_game(client, game="alak", options={"size": 5}, opponent="computer",
                             level="beginner", colour="white")
    assert thinking.view()["thinking"]
    other, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    assert other.move("3").status_code == 200  # served while the agent is still blocked
    assert thinking.view()["thinking"]
    release.set()
    assert len(thinking.wait_for_turn()["moves"]) == 1


def test_computer_in_a_worker_process(make_client: Any) -> None:
    process_client = make_client(executor="process")
    seat, _ = start_game(process_client, game="alternator", options={"width": 2, "height": 2},
                         opponent="computer", level="beginner", colour="white")
    view = seat.wait_for_turn(timeout=60)
    assert len(view["moves"]) == 1


def test_a_broken_worker_pool_is_replaced(make_client: Any) -> None:
    process_client = make_client(executor="process")
    arena = process_client.app.state.arena
    seat, _ = start_game(process_client, game="alak", options={"size": 7}, opponent="computer",
                         level="beginner", colour="white")
    view = seat.wait_for_turn(timeout=60)
    broken = arena.computer.executor(0)
    for process in list(broken._processes.values()):
        process.kill()
        process.join()
    seat.move(first_legal(view))
    view = seat.wait_for_turn(timeout=60)
    assert len(view["moves"]) == 3
    assert arena.computer.executor(0) is not broken


# --- pages -------------------------------------------------------------------------------------


def test_pages_render(client: TestClient) -> None:
    seat, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    for path in ("/", f"/game/{seat.game_id}", "/rules/alternator", "/rules/alak"):
        answer = client.get(path)
        assert answer.status_code == 200 and answer.text.startswith("<!doctype html>"), path
    assert client.get("/static/game.js").status_code == 200
    missing = client.get("/game/nowhere")
    assert missing.status_code == 404 and "no game" in missing.text


def test_rules_pages_in_four_languages_and_the_choice_is_remembered(client: TestClient) -> None:
    texts = {}
    for lang in ("en", "es", "nl", "lt"):
        page = client.get(f"/rules/alternator?lang={lang}")
        assert f'lang="{lang}" data-game="alternator"' in page.text
        texts[lang] = client.get(f"/api/rules/alternator?lang={lang}").json()["html"]
    assert len(set(texts.values())) == 4
    assert "<script" not in "".join(texts.values())
    client.get("/rules/alak?lang=nl")
    assert client.cookies.get("agon_lang") == "nl"
    assert 'lang="nl" data-game="alak"' in client.get("/rules/alak").text
    traditional = client.get("/rules/alak?rules=traditional").text
    assert "Ko" in traditional and "Baljeu" in traditional  # the rule set's text, and the tabs


BAD_REQUESTS: list[tuple[str, str, Any]] = [
    ("post", "/api/games", {"game": "chess"}),
    ("post", "/api/games", {"game": "alternator", "options": {"width": 0}}),
    ("post", "/api/games", {"game": "alternator", "options": {"width": "wide"}}),
    ("post", "/api/games", {"game": "alternator", "options": {"colour": "x"}}),
    ("post", "/api/games", {"game": "alak", "options": {"size": 1000}}),
    ("post", "/api/games", {"game": "alak", "options": {"rules": "calvinball"}}),
    ("post", "/api/games", {"game": "alak", "options": {"komi": 2}}),
    ("post", "/api/games", {"game": "alak", "options": {"edge_capture": "maybe"}}),
    ("post", "/api/games", {"game": "alak", "opponent": "martian"}),
    ("post", "/api/games", {"game": "alak", "level": "godlike"}),
    ("post", "/api/games", {"game": "alak", "colour": "green"}),
    ("post", "/api/games", {"game": ["alak"]}),
    ("post", "/api/games", "not an object"),
    ("post", "/api/games", None),
    ("post", "/api/games/none/moves", {"move": "1"}),
    ("post", "/api/games/none/undo", None),
    ("post", "/api/games/none/resign", None),
    ("get", "/api/games/none", None),
    ("get", "/api/games/none/choices?picked=a1", None),
    ("get", "/api/games/none/hint", None),
    ("get", "/api/games/none/record", None),
    ("get", "/api/games?limit=0", None),
    ("get", "/api/games?status=sideways", None),
    ("get", "/api/rules/chess", None),
    ("get", "/api/rules/alak?rules=calvinball", None),
    ("get", "/rules/chess", None),
    ("get", "/rules/alak?edge_capture=sideways", None),
]


@pytest.mark.parametrize(("method", "path", "body"), BAD_REQUESTS)
def test_bad_requests_are_refused_in_words(
    client: TestClient, method: str, path: str, body: Any
) -> None:
    answer = client.request(method.upper(), path, json=body)
    assert 400 <= answer.status_code < 500, (answer.status_code, answer.text)
    if path.startswith("/api"):
        assert isinstance(answer.json()["detail"], str) and answer.json()["detail"]


def test_bad_bodies_on_a_real_game(client: TestClient) -> None:
    seat, _ = start_game(client, game="alternator", options={"width": 3, "height": 2},
                         opponent="local")
    for body in (None, {}, {"move": 3}, {"move": "a1-b1" * 20}, [1, 2]):
        answer = seat.post("/moves", body)
        assert 400 <= answer.status_code < 500, answer.text
    raw = client.post(f"/api/games/{seat.game_id}/moves", content=b"{not json",
                      headers={**seat.headers, "content-type": "application/json"})
    assert raw.status_code == 400
    for picked in ("z9", "", ",", "a1-b1", "a0", "a1,z9"):
        assert seat.get(f"/choices?picked={picked}").status_code == 400
    alak, _ = start_game(client, game="alak", options={"size": 5}, opponent="local")
    assert alak.get("/choices?picked=a1").status_code == 400


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=12))
def test_any_move_text_gets_an_answer_not_a_crash(client: TestClient, text: str) -> None:
    seat, _ = start_game(client, game="alternator", options={"width": 2, "height": 2},
                         opponent="local")
    answer = seat.move(text)
    assert answer.status_code in (200, 400, 422), answer.text
    detail = answer.json().get("detail")
    assert answer.status_code == 200 or (isinstance(detail, str) and detail)
    json.dumps(answer.json())


def test_a_worker_keeps_its_agents_between_moves() -> None:
    """The computer's tables are not thrown away after each move: a worker keeps an agent for
    each game it played last; where it keeps as many as it may, a new game takes over the
    agent of its variant and spec used longest ago, else the oldest is let go of."""
    from agon.web import levels

    small, other, third = (make_game("alak", {"size": size}) for size in (5, 6, 7))
    first = levels.kept_agent(small, "greedy", seed=1, owner="g1")
    assert levels.kept_agent(small, "greedy", seed=2, owner="g1") is first
    assert levels.kept_agent(small, "greedy", seed=1, owner="g2") is not first
    assert levels.kept_agent(small, "random", seed=1, owner="g1") is not first
    assert levels.KEPT_AGENTS == 3  # (g1, g2 and g1's random are kept)
    assert levels.kept_agent(small, "greedy", seed=1, owner="g3") is first  # taken over
    assert levels.kept_agent(small, "greedy", seed=1, owner="g1") is not first
    levels.kept_agent(other, "greedy", seed=1, owner="g4")
    levels.kept_agent(third, "greedy", seed=1, owner="g5")
    assert levels.kept_agent(small, "greedy", seed=1, owner="g3") is not first  # let go of
    answer = levels.think("alak", {"size": 5}, ["3"], "greedy", seed=1)
    state = small.new_state()
    state.play_text("3")
    assert state.is_legal(small.parse_move(answer["move"]))
