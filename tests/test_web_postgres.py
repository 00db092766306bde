"""The arena on PostgreSQL with many server processes sharing nothing but the database: changes
announced across processes (``LISTEN/NOTIFY``, no polling), a turn played once whichever process
takes it, the computer's turns queued in the database and taken up by another process when
the one thinking dies, and the schema's migrations (docs/web.md, *Many processes*)."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text
from websockets.sync.client import connect

from agon.cli import app as cli_app
from agon.web import arena as arena_module
from agon.web.app import create_app
from agon.web.config import database_url
from agon.web.store import THINKER_GRACE_S, GameRow, MoveRow, Outcome, Store
from web_fixtures import (
    ArenaProcess,
    Seat,
    TestClient,
    make_client,
    receive_within,
    replayed,
    start_game,
    wait_for,
)

__all__ = ["make_client"]  # fixtures used by name

DEADLINE = 60.0
"""Seconds a test waits for what must happen (the machine may be busy)."""


@pytest.fixture
def arena_url(postgres_url: str) -> str:
    return postgres_url


def test_a_change_on_another_process_is_announced_not_polled(
    make_client: Callable[..., TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arena_module, "REFRESH_SECONDS", 3600.0)  # (a poll would never come)
    here, elsewhere = make_client(), make_client()
    wait_for(lambda: all(
        client.app.state.arena.listener.listening.is_set()  # type: ignore[attr-defined]
        for client in (here, elsewhere)
    ), "listening")
    store = here.app.state.arena.store  # type: ignore[attr-defined]
    polls: list[list[str]] = []
    revisions = store.revisions

    def counted(game_ids: list[str]) -> dict[str, int]:
        polls.append(game_ids)
        return revisions(game_ids)  # type: ignore[no-any-return]

    monkeypatch.setattr(store, "revisions", counted)
    seat, created = start_game(here, game="alak", options={"size": 5}, opponent="friend")
    guest = Seat(elsewhere, seat.game_id, created["invite_token"])
    with here.websocket_connect(f"/ws/games/{seat.game_id}") as socket:
        assert socket.receive_json()["view"]["revision"] == 0
        seat.move("2")
        assert socket.receive_json()["view"]["revision"] == 1
        for ply, move in enumerate(["4", "1"], start=2):
            (guest if ply % 2 == 0 else seat).move(move)
            update = socket.receive_json()["view"]
            assert update["revision"] == ply and update["moves"][-1]["text"] == move
    assert polls == []


def test_one_turn_played_on_two_processes_at_once_is_stored_once(
    make_client: Callable[..., TestClient],
) -> None:
    """The player to move sends two different moves at once, one to each process: one is
    stored, the other refused (409: the game changed meanwhile, or it is no longer this
    player's turn), whichever order the two transactions take."""
    here, elsewhere = make_client(), make_client()
    host, created = start_game(here, game="alak", options={"size": 9}, opponent="friend",
                               colour="black")
    tokens = {"black": host.token, "white": created["invite_token"]}
    for ply in range(1, 7):
        view = host.view()
        state = replayed(view)
        first, second = (state.game.format_move(move) for move in state.legal_moves()[:2])
        token = tokens[view["to_move"]]
        players = [Seat(here, host.game_id, token), Seat(elsewhere, host.game_id, token)]
        start = threading.Barrier(2)
        answers: dict[str, int] = {}

        def play(
            player: Seat, move: str, start: threading.Barrier, answers: dict[str, int]
        ) -> None:
            start.wait()
            answers[move] = player.move(move).status_code

        racers = [threading.Thread(target=play, args=(players[0], first, start, answers)),
                  threading.Thread(target=play, args=(players[1], second, start, answers))]
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join()
        assert sorted(answers.values()) == [200, 409], answers
        view = host.view()
        assert len(view["moves"]) == ply and view["revision"] == ply
        won = next(move for move, status in answers.items() if status == 200)
        assert view["moves"][-1]["text"] == won


def test_the_computer_s_turns_wait_in_the_database_and_each_is_played_once(
    make_client: Callable[..., TestClient], arena_url: str
) -> None:
    first, second = make_client(), make_client()  # both take turns
    seats = [
        start_game(client, game="alak", options={"size": 7}, opponent="computer",
                   level="beginner", colour="white")[0]
        for client in (first, second) for _ in range(4)
    ]
    for seat in seats:
        for _ in range(3):
            view = seat.wait_for_turn(timeout=DEADLINE)
            if view["status"] != "active":
                break
            state = replayed(view)
            assert seat.move(state.game.format_move(state.legal_moves()[0])).status_code == 200
    for seat in seats:
        view = seat.wait_for_turn(timeout=DEADLINE)
        colours = [move["player"] for move in view["moves"]]
        assert all(a != b for a, b in itertools.pairwise(colours)), colours
    store = Store(database_url(arena_url))
    try:
        assert store.turns() == []  # (every turn taken, none left behind)
    finally:
        store.close()


def holder_of_the_turn(url: str) -> str | None:
    """The ``application_name`` of the connection that holds a computer's turn (its row
    locked), if one does."""
    engine = create_engine(database_url(url))
    try:
        with engine.connect() as connection:
            return connection.scalar(text(
                "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a "
                "ON a.pid = l.pid WHERE l.relation = 'turns'::regclass "
                "AND l.mode = 'RowShareLock' AND l.granted "
                "AND a.state = 'idle in transaction' LIMIT 1"
            ))
    finally:
        engine.dispose()


@contextmanager
def arena_processes(url: str, count: int) -> Iterator[list[ArenaProcess]]:
    """``count`` ``agon serve`` processes on the database ``url``, killed after the block."""
    servers = [ArenaProcess(url) for _ in range(count)]
    try:
        for server in servers:
            server.start()
        yield servers
    finally:
        for server in servers:
            server.kill()


def friend_game(server: ArenaProcess) -> tuple[str, dict[str, str]]:
    """A friend game of Alak on 9 points made on ``server``: its id, and each seat's token."""
    host = server.post("/api/games", {"game": "alak", "options": {"size": 9},
                                      "opponent": "friend", "colour": "black"})
    return host["id"], {"black": host["token"], "white": host["invite_token"]}


def test_a_friend_game_across_two_processes_is_watched_from_a_third(postgres_url: str) -> None:
    with arena_processes(postgres_url, 3) as servers:
        game_id, tokens = friend_game(servers[0])
        seen: list[int] = []
        with connect(f"ws://127.0.0.1:{servers[2].port}/ws/games/{game_id}") as socket:
            seen.append(json.loads(socket.recv(timeout=DEADLINE))["view"]["revision"])
            played = []
            for ply in range(6):  # black through the first process, white through the second
                colour = "black" if ply % 2 == 0 else "white"
                played.append(servers[ply % 2].play_any_move(game_id, tokens[colour]))
                update = json.loads(socket.recv(timeout=DEADLINE))["view"]
                seen.append(update["revision"])
                assert [move["text"] for move in update["moves"]] == played
        assert seen == list(range(7))


@pytest.mark.slow
def test_a_turn_whose_process_dies_is_taken_by_another_and_no_move_is_lost(
    postgres_url: str,
) -> None:
    """Two ``agon serve`` processes on one database, a friend game played through both; the
    computer thinks (for seconds) in another game; the process holding its turn is killed
    (SIGKILL): the other takes the turn, every acknowledged move is kept, and the friend game
    goes on through the process left."""
    with arena_processes(postgres_url, 2) as servers:
        game_id, tokens = friend_game(servers[0])
        acknowledged = [servers[ply].play_any_move(game_id, tokens[colour])
                        for ply, colour in enumerate(["black", "white"])]
        computer = servers[0].post("/api/games", {"game": "alternator", "options": {
            "width": 6, "height": 6}, "opponent": "computer", "level": "strongest",
            "colour": "white"})
        holder = wait_for(lambda: holder_of_the_turn(postgres_url), "turn taken")
        doomed = next(server for server in servers
                      if holder == f"agon serve {server.process.pid}")  # type: ignore[union-attr]
        doomed.kill()
        survivor = servers[1] if doomed is servers[0] else servers[0]
        view = wait_for(
            lambda: (v := survivor.view(computer["id"], computer["token"]))["moves"] and v,
            "computer's move after the kill",
        )
        assert len(view["moves"]) == 1 and not view["thinking"]
        acknowledged += [survivor.play_any_move(game_id, tokens[colour])
                         for colour in ["black", "white"]]
        final = survivor.view(game_id, tokens["black"])
        assert [move["text"] for move in final["moves"]] == acknowledged


def thinker_of(store: Store, game_id: str) -> str | None:
    with store.engine.connect() as connection:
        return connection.scalar(select(GameRow.thinker).where(GameRow.id == game_id))


def test_a_computer_turn_is_left_to_the_process_that_thinks_for_its_game(
    postgres_url: str,
) -> None:
    """The process that played the computer's last turn keeps its agent: another process
    leaves the next turn to it for a while (it may be busy, or gone), then takes it."""
    here, there = Store(database_url(postgres_url)), Store(database_url(postgres_url))
    try:
        here.create(game_id="kept", game="alak", options={"size": 5}, mode="computer", seats={
            "black": {"agent": "random", "level": "beginner", "token": None},
            "white": {"agent": None, "level": None, "token": "tok"},
        }, host="white", computer_first=True)
        first = there.claim_turn()  # (no process thinks for the game yet: any may take it)
        assert first is not None
        first.release()
        first = here.claim_turn()
        assert first is not None
        here.append_move("kept", 0, 1, "3", Outcome(), first)
        assert thinker_of(there, "kept") == here.process != there.process
        there.append_move("kept", 1, 2, "1", Outcome(computer_next=True))  # (the reply)
        assert there.claim_turn() is None
        later = datetime.now(UTC) + timedelta(seconds=THINKER_GRACE_S + 1)
        taken = there.claim_turn(now=later)
        assert taken is not None and taken.key == ("kept", 2)
        taken.release()
        mine = here.claim_turn()
        assert mine is not None and mine.key == ("kept", 2)
        mine.release()
    finally:
        here.close()
        there.close()


def test_the_computer_of_a_game_played_through_two_processes_thinks_in_one(
    postgres_url: str,
) -> None:
    """The player's moves reach either process; the computer's turns are all thought out by
    the one that took the first, where the game's agent is kept."""
    with arena_processes(postgres_url, 2) as servers:
        game = servers[0].post("/api/games", {"game": "alak", "options": {"size": 9},
                                              "opponent": "computer", "level": "beginner",
                                              "colour": "black"})
        game_id, token = game["id"], game["token"]
        store = Store(database_url(postgres_url))
        try:
            thinkers = set()
            for ply in range(6):
                view = servers[ply % 2].view(game_id, token)
                if view["status"] != "active":
                    break
                servers[ply % 2].play_any_move(game_id, token)
                wait_for(lambda: not servers[0].view(game_id, token)["thinking"],
                         "the computer's reply")
                thinkers.add(thinker_of(store, game_id))
            assert len(thinkers) == 1 and None not in thinkers, thinkers
        finally:
            store.close()


def test_a_database_made_before_migrations_is_upgraded_and_keeps_its_games(
    postgres_url: str, tmp_path: Path
) -> None:
    """The schema of the arena before migrations (its two tables, made directly), with a
    game whose computer was to move: opened, it is marked as at the first migration and
    upgraded; the game's turn is queued by the upgrade, then played."""
    for url in (postgres_url, str(tmp_path / "old.db")):
        engine = create_engine(database_url(url))
        GameRow.metadata.create_all(engine, tables=[GameRow.__table__, MoveRow.__table__])  # type: ignore[list-item]
        with engine.begin() as connection:
            # (the columns added by later migrations were not there)
            connection.execute(text("ALTER TABLE games DROP COLUMN thinker"))
            connection.execute(GameRow.__table__.insert().values(  # type: ignore[attr-defined]
                id="old", game="alak", options={"size": 5}, mode="computer",
                black_agent="random", black_level="beginner", white_token="tok",
                host="white", status="active", revision=0,
            ))
        engine.dispose()
        with TestClient(create_app(url, executor="thread", warm=False)) as client:
            view = Seat(client, "old", "tok").wait_for_turn(timeout=DEADLINE)
            assert len(view["moves"]) == 1 and view["to_move"] == "white"
        store = Store(database_url(url))
        assert store.schema[0] == store.schema[1]  # (nothing left to do)
        store.close()


def test_agon_db_upgrade_makes_and_then_keeps_the_schema(postgres_url: str) -> None:
    from typer.testing import CliRunner

    runner = CliRunner()
    made = runner.invoke(cli_app, ["db", "upgrade", "--database", postgres_url])
    assert made.exit_code == 0, made.output
    assert "none (empty) →" in made.output
    again = runner.invoke(cli_app, ["db", "upgrade", "--database", postgres_url])
    assert again.exit_code == 0 and "already at the newest schema" in again.output
    refused = runner.invoke(cli_app, ["db", "upgrade", "--database",
                                      "postgresql://nobody@127.0.0.1:1/none"])
    assert refused.exit_code != 0
    assert "cannot upgrade the database" in refused.output
    assert "Traceback" not in refused.output


def test_many_processes_upgrade_one_empty_database_at_once(postgres_url: str) -> None:
    """Servers started together on an empty database: one makes the schema, the others wait
    for it (an advisory lock) and find nothing left to do."""
    results: list[tuple[str | None, str]] = []
    errors: list[BaseException] = []

    def open_store() -> None:
        try:
            store = Store(database_url(postgres_url))
            results.append(store.schema)
            store.close()
        except BaseException as error:  # (reported below)
            errors.append(error)

    openers = [threading.Thread(target=open_store) for _ in range(4)]
    for opener in openers:
        opener.start()
    for opener in openers:
        opener.join()
    assert not errors, errors
    assert sorted(before or "" for before, _ in results)[:2] == ["", "0003"]
    assert {after for _, after in results} == {"0003"}


def test_the_listener_hears_again_after_its_connection_is_lost(
    make_client: Callable[..., TestClient], arena_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arena_module, "REFRESH_SECONDS", 3600.0)
    here, elsewhere = make_client(), make_client()
    listener = here.app.state.arena.listener  # type: ignore[attr-defined]
    wait_for(listener.listening.is_set, "listening")
    seat, created = start_game(here, game="alak", options={"size": 5}, opponent="friend")
    guest = Seat(elsewhere, seat.game_id, created["invite_token"])
    with here.websocket_connect(f"/ws/games/{seat.game_id}") as socket:
        assert socket.receive_json()["view"]["revision"] == 0
        engine = create_engine(database_url(arena_url))
        with engine.begin() as connection:  # (the listening connection cut by the server)
            connection.execute(text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()"
            ))
        engine.dispose()
        seat.move("2")  # (made here: broadcast at once)
        assert receive_within(socket, DEADLINE)["view"]["revision"] == 1
        guest.move("4")  # (made elsewhere: heard once the listener is back, or at its resync)
        assert receive_within(socket, DEADLINE)["view"]["revision"] == 2
