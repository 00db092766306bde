"""``agon loadtest`` against a real arena: games between remote players and against the
computer, with spectators, every stored game checked; bad arguments and an arena that does not
answer are reported in words (docs/web.md, *Load*)."""

from __future__ import annotations

import json
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agon.cli import app
from agon.web import config as config_module
from agon.web.loadtest import MAX_UPDATE_BYTES, UnreadableUpdate, _Game, read_update
from background import BackgroundServer
from web_fixtures import UNLIMITED

pytestmark = pytest.mark.xdist_group("web")
runner = CliRunner()


@pytest.fixture(autouse=True)
def collector_tunings(monkeypatch: pytest.MonkeyPatch) -> list[None]:
    """``agon loadtest`` tunes the garbage collector of its process: here, the test run's, so
    it is only counted."""
    tunings: list[None] = []
    monkeypatch.setattr(config_module, "collect_rarely", lambda: tunings.append(None))
    return tunings


def test_a_load_test_plays_watches_and_checks_every_game(
    tmp_path: Path, collector_tunings: list[None]
) -> None:
    limits = replace(UNLIMITED, sockets_per_address=1000)
    with BackgroundServer(tmp_path / "load.db", limits=limits) as server:
        result = runner.invoke(app, [
            "loadtest", server.url, "alak", "--size", "7", "--games", "3", "--computer", "1",
            "--spectators", "2", "--crowd", "5", "--seconds", "3", "--json",
        ])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["moves_over"] == "websocket"  # (as the game page sends them)
    assert collector_tunings == [None]  # (its own pauses would be timed as the arena's)
    assert report["errors"] == {} and report["mismatches"] == []
    assert report["games_played"] >= 3 and report["games_verified"] == report["games_played"]
    assert report["moves"] == report["move_latency"]["count"] > 0
    assert report["update_latency"]["count"] > 0  # (the spectators saw the moves)
    assert report["computer_latency"]["count"] > 0  # (the computer replied)
    # (the crowd watches the first slot's games: the others' moves are timed apart)
    assert 0 < report["other_games_move_latency"]["count"] < report["moves"]
    assert report["interrupted"] is False


def test_a_load_test_sends_moves_by_http_where_asked(tmp_path: Path) -> None:
    """With ``--moves-over http`` every player's move is a request, as another program's may
    be, against the computer too, and every stored game holds the moves those requests'
    answers acknowledged."""
    limits = replace(UNLIMITED, sockets_per_address=1000)
    with BackgroundServer(tmp_path / "requests.db", limits=limits) as server:
        result = runner.invoke(app, [
            "loadtest", server.url, "alak", "--size", "7", "--games", "3", "--computer", "1",
            "--seconds", "3", "--moves-over", "http", "--json",
        ])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["moves_over"] == "http" and report["ask_choices"] is False
    assert report["errors"] == {} and report["mismatches"] == []
    assert report["games_verified"] == report["games_played"] >= 3
    assert report["moves"] == report["move_latency"]["count"] > 0
    assert report["computer_latency"]["count"] > 0


def test_players_may_ask_about_each_moves_first_place_as_the_page_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``--ask-choices`` each move's first place is asked about, and answered, before the
    move is sent (Alak's baljeu rules have no pass: every move has its place)."""
    answered: list[bool] = []
    real_ask = _Game._ask_choices

    async def counted(game: _Game, *arguments: Any) -> bool:
        answered.append(await real_ask(game, *arguments))
        return answered[-1]

    monkeypatch.setattr(_Game, "_ask_choices", counted)
    with BackgroundServer(tmp_path / "asking.db", limits=UNLIMITED) as server:
        result = runner.invoke(app, [
            "loadtest", server.url, "alak", "--size", "7", "--games", "2", "--seconds", "2",
            "--ask-choices", "--json",
        ])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ask_choices"] is True and report["errors"] == {}
    assert all(answered) and len(answered) == report["moves"] > 0


def test_moves_refused_on_the_games_socket_are_counted_in_the_arenas_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A player whose moves the arena refuses on the socket (here: a token no seat holds)
    counts each refusal, with its status and words, and the load test ends in time."""
    real_open_seats = _Game.open_seats

    async def open_with_a_wrong_token(game: _Game, url: str) -> bool:
        game.tokens = dict.fromkeys(game.tokens, "no-such-seat")
        return await real_open_seats(game, url)

    monkeypatch.setattr(_Game, "open_seats", open_with_a_wrong_token)
    with BackgroundServer(tmp_path / "refused.db", limits=UNLIMITED) as server:
        result = runner.invoke(app, [
            "loadtest", server.url, "alak", "--size", "5", "--games", "2", "--seconds", "1",
            "--json",
        ])
    assert result.exit_code == 1, result.output
    errors = json.loads(result.stdout)["errors"]
    assert list(errors) == ["move on the game's socket: 403 this link holds no seat in this game:"
                            " spectators watch, players move"], errors


def test_a_load_test_watches_through_another_server_of_the_arena(postgres_url: str) -> None:
    """Players on one server, spectators on another of the same arena (PostgreSQL): every
    update crosses processes, and each is timed."""
    limits = replace(UNLIMITED, sockets_per_address=1000)
    with BackgroundServer(postgres_url, limits=limits) as players, \
            BackgroundServer(postgres_url, limits=limits) as watchers:
        result = runner.invoke(app, [
            "loadtest", players.url, "alak", "--size", "7", "--games", "3", "--spectators", "1",
            "--seconds", "3", "--watch-url", watchers.url, "--json",
        ])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["errors"] == {} and report["mismatches"] == []
    assert report["update_latency"]["count"] > 0  # (the moves reached the other server's)


def test_a_load_test_counts_what_the_arena_refuses(tmp_path: Path) -> None:
    """Against an arena with the limits made for players, one client's games are refused
    after the first few: each refusal is counted with the arena's words, no traceback."""
    with BackgroundServer(tmp_path / "limited.db") as server:
        result = runner.invoke(app, [
            "loadtest", server.url, "alak", "--size", "5", "--games", "25", "--spectators", "0",
            "--seconds", "1",
        ])
    assert result.exit_code == 1, result.output
    assert "too many new games" in result.stdout and "Traceback" not in result.output


def test_players_who_think_before_each_move_offer_a_bounded_rate(tmp_path: Path) -> None:
    """With ``--pause`` each player waits at least half of it before each move, so the games
    cannot make more moves than that allows, whatever the arena's speed."""
    games, seconds, pause = 2, 3.0, 0.4
    with BackgroundServer(tmp_path / "paced.db", limits=UNLIMITED) as server:
        result = runner.invoke(app, [
            "loadtest", server.url, "alak", "--size", "9", "--games", str(games),
            "--seconds", str(seconds), "--pause", str(pause), "--json",
        ])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["pause"] == pause and report["errors"] == {} and report["mismatches"] == []
    assert 0 < report["moves"] <= games * (seconds / (pause / 2) + 1)


@pytest.mark.parametrize(("arguments", "words"), [
    (["ftp://arena", "alak"], "must start with http:// or https://"),
    (["http://[::1", "alak"], "the arena's URL 'http://[::1' is not a URL: Invalid port"),
    (["http://", "alak"], "the arena's URL 'http://' names no host"),
    (["http://:8000", "alak"], "names no host"),
    (["http://127.0.0.1:99999", "alak"], "has port 99999: a port is 1 to 65535"),
    (["http://127.0.0.1:1", "alak", "--watch-url", "http://x:1a"], "--watch-url 'http://x:1a' is"),
    (["http://127.0.0.1:1", "alak", "--watch-url", "ws://elsewhere"], "--watch-url must start"),
    (["http://127.0.0.1:1", "alak", "--games", "0"], "--games must be 1 to"),
    (["http://127.0.0.1:1", "alak", "--computer", "5", "--games", "2"], "--computer must be 0"),
    (["http://127.0.0.1:1", "alak", "--seconds", "-1"], "--seconds must be above 0"),
    (["http://127.0.0.1:1", "alak", "--pause", "-1"], "--pause must be at least 0"),
    (["http://127.0.0.1:1", "alak", "--moves-over", "pigeon"], "--moves-over is one of websocket"),
])
def test_bad_load_test_arguments_are_refused_in_words(arguments: list[str], words: str) -> None:
    result = runner.invoke(app, ["loadtest", *arguments])
    assert result.exit_code == 2 and words in result.output, result.output


def test_an_arena_that_does_not_answer_is_an_error_in_words() -> None:
    result = runner.invoke(app, [
        "loadtest", "http://127.0.0.1:1", "alak", "--games", "2", "--seconds", "1",
    ])
    assert result.exit_code == 1, result.output
    assert "POST /api/games: ConnectError" in result.stdout and "Traceback" not in result.output


@pytest.mark.parametrize(("message", "words"), [
    (b"not packed", "an update that does not unpack"),
    (zlib.compress(b"x" * (MAX_UPDATE_BYTES + 1)), f"an update over {MAX_UPDATE_BYTES} bytes"),
    (zlib.compress(b'{"view": {"revision": "7"}}'), "not a game's view"),
    ('{"type": "update"}', "not a game's view"),
    ("[1, 2]", "not a game's view"),
    ("not json", "not a game's view"),
])
def test_an_update_that_is_not_a_view_is_refused_in_words(
    message: str | bytes, words: str
) -> None:
    """A spectator reads what an arena sends it with a limit, and counts what is not a game's
    view as an error in words (a server that is not Agon's, or a broken one)."""
    with pytest.raises(UnreadableUpdate, match=words):
        read_update(message)
    view = {"revision": 3, "moves": []}
    assert read_update(zlib.compress(json.dumps({"view": view}).encode())) == view
    assert read_update(json.dumps({"view": view})) == view
