"""``agon loadtest``: many games played against a running arena over HTTP and WebSockets, as
its players and spectators would, timed; then every stored game checked against what was sent.

Each game is played by two remote players (or one, against a computer level) who choose
uniformly among the legal moves, kept by a local copy of the rules engine, and send them each on
a socket of the game of its own, as the game page does (docs/web.md, *Moves on the game's
socket*), or by HTTP (``moves_over="http"``), as another program may; each game has its
spectators, WebSockets that receive its updates. It measures a move's latency (its request to
its answer), an update's (a move's request to the update reaching a spectator), the
computer's (a move's answer to the update with the computer's reply), the moves a second, and
every error by kind. The arena's per-address limits are made for players, not for one client
playing hundreds of games: raise them on the arena to load it from one address (docs/web.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import statistics
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosedError, WebSocketException
from websockets.typing import Subprotocol

from agon.core.game import Game, Move
from agon.web.hub import PACKED, SEAT_PROTOCOL

REQUEST_SECONDS = 60.0
"""A request or an update not answered within this long counts as an error."""
MAX_UPDATE_BYTES = 1 << 22
"""The largest update a spectator reads, as sent and unpacked."""
KEEPALIVE_SECONDS = 1.0
"""A connection idle this long is not used again: well under the arena's idle timeout (5 s), so
that no request is sent on a connection the arena is closing at that moment. That race (httpx
and the arena both at 5 s) was the moves that got no answer, the connection closed."""
UPDATE_GRACE_SECONDS = 0.5
"""How long a finished game's spectators wait for its last updates."""
COLOURS = ("black", "white")
MOVES_OVER = ("websocket", "http")
"""How the players may send their moves (:attr:`LoadPlan.moves_over`), the page's way first."""


class UnreadableUpdate(Exception):
    """A spectator's update that is not a game's view (said in a few words)."""


def read_update(message: str | bytes) -> dict[str, Any]:
    """The view an update carries, unpacked where it came packed (binary), read up to
    :data:`MAX_UPDATE_BYTES`; UnreadableUpdate where it is not such an update."""
    if isinstance(message, bytes):
        opener = zlib.decompressobj()
        try:
            message = opener.decompress(message, MAX_UPDATE_BYTES)
        except zlib.error:
            raise UnreadableUpdate("an update that does not unpack") from None
        if opener.unconsumed_tail:
            raise UnreadableUpdate(f"an update over {MAX_UPDATE_BYTES} bytes unpacked")
    try:
        view = json.loads(message)["view"]
        revision = view["revision"]
    except (ValueError, TypeError, KeyError, IndexError):
        revision = None
    if not isinstance(revision, int):
        raise UnreadableUpdate("an update that is not a game's view")
    read: dict[str, Any] = view
    return read


@dataclass
class LoadPlan:
    """What to play: ``games`` games at once of ``game`` (``computer`` of them against the
    ``level``), each with ``spectators`` watching, new ones as others end, for ``seconds``, and
    at most ``moves_per_game`` moves a game."""

    game: Game
    games: int
    seconds: float
    spectators: int = 1
    computer: int = 0
    level: str = "beginner"
    moves_per_game: int = 1000
    seed: int = 1
    crowd: int = 0
    """More spectators of one board, the first slot's game (a featured game a whole school
    watches); the other games' moves are then timed apart."""
    watch_url: str | None = None
    """Where the spectators watch, if not where the players play: another server process of
    the same arena, so that each update is timed across processes."""
    pause: float = 0.0
    """Seconds a player thinks before each move, on average (drawn from half to one and a
    half times it): with it the games offer a rate of moves (about ``games / pause``) and the
    latencies say how the arena answers that rate; without it every game moves as soon as it
    is answered, and the latencies are the queue of a saturated arena."""
    moves_over: str = "websocket"
    """How players send their moves: ``websocket`` (as the game page does, each player on a
    socket of the game of its own, which brings it the game's updates too) or ``http`` (a
    request each, as another program may)."""
    ask_choices: bool = False
    """Whether players ask the arena what the first place of each move makes before sending it
    (``GET …/choices``), as the game page does when the place is clicked."""


@dataclass
class LoadReport:
    """What a load test measured (seconds throughout)."""

    plan: LoadPlan
    started: float | None = None
    """When the first moves were asked for (:func:`time.monotonic`)."""
    seconds: float = 0.0
    moves: int = 0
    move_latencies: list[float] = field(default_factory=list)
    other_move_latencies: list[float] = field(default_factory=list)
    """With a crowd: the moves of the games the crowd does not watch."""
    update_latencies: list[float] = field(default_factory=list)
    computer_latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    games_played: int = 0
    games_verified: int = 0
    mismatches: list[str] = field(default_factory=list)
    """Games whose stored moves differ from those the players' answers acknowledged."""
    interrupted: bool = False
    """Stopped by Ctrl-C: the figures so far, and no game checked."""

    def stopped(self) -> None:
        """Mark the load test stopped now (Ctrl-C)."""
        self.interrupted = True
        if self.started is not None:
            self.seconds = time.monotonic() - self.started

    def to_json(self) -> dict[str, Any]:
        plan = self.plan
        return {
            "game": plan.game.variant_id,
            "games_at_once": plan.games,
            "computer_games_at_once": plan.computer,
            "games_played": self.games_played,
            "spectators_per_game": plan.spectators,
            "seconds": round(self.seconds, 3),
            "moves": self.moves,
            "moves_per_second": round(self.moves / self.seconds, 1) if self.seconds else 0.0,
            "move_latency": _percentiles(self.move_latencies),
            "crowd": plan.crowd,
            "pause": plan.pause,
            "moves_over": plan.moves_over,
            "ask_choices": plan.ask_choices,
            "other_games_move_latency": _percentiles(self.other_move_latencies),
            "update_latency": _percentiles(self.update_latencies),
            "computer_latency": _percentiles(self.computer_latencies),
            "errors": dict(self.errors),
            "games_verified": self.games_verified,
            "mismatches": self.mismatches,
            "interrupted": self.interrupted,
        }


def _percentiles(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"count": 0, "p50": None, "p99": None, "max": None}
    ordered = sorted(values)
    return {
        "count": len(values),
        "p50": round(statistics.median(ordered), 4),
        "p99": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 4),
        "max": round(ordered[-1], 4),
    }


class _Game:
    """One game of the load: its players' seats, the moves acknowledged, and when each
    revision was asked for (to time its update)."""

    def __init__(
        self, number: int, slot: int, plan: LoadPlan, report: LoadReport
    ) -> None:
        self.number, self.plan, self.report = number, plan, report
        self.against_computer = slot < plan.computer
        self.featured = slot == 0
        """Watched by the crowd too."""
        self.state = plan.game.new_state()
        self.random = random.Random(plan.seed * 1_000_003 + number)
        self.game_id = ""
        self.tokens: dict[str, str] = {}
        self.acknowledged: list[str] = []
        self.asked_at: dict[int, float] = {}
        """When the move that made each revision was asked for."""
        self.revision = 0
        self.updated = asyncio.Condition()
        self.seen_revision = 0
        self.last_view: dict[str, Any] = {}
        """The newest view the first spectator was sent."""
        self.answered_at = 0.0
        """When the latest move of this game's players was answered."""
        self.seat_sockets: dict[str, _SeatSocket] = {}
        """Each player's socket, where moves go over WebSockets."""

    async def create(self, client: httpx.AsyncClient) -> bool:
        body: dict[str, Any] = {
            "game": self.plan.game.name,
            "options": self.plan.game.options(),
            "opponent": "computer" if self.against_computer else "friend",
            "level": self.plan.level,
            "colour": "black",
        }
        answer = await _request(client, self.report, "POST", "/api/games", json=body)
        if answer is None:
            return False
        created = answer.json()
        self.game_id = created["id"]
        self.tokens["black"] = created["token"]
        if created.get("invite_token"):
            self.tokens["white"] = created["invite_token"]
        return True

    async def play(
        self, client: httpx.AsyncClient, deadline: float, on_move: Callable[[], None]
    ) -> None:
        game, report = self.plan.game, self.report
        while (
            not self.state.is_over
            and time.monotonic() < deadline
            and len(self.acknowledged) < self.plan.moves_per_game
        ):
            mover = COLOURS[int(self.state.to_move)]  # type: ignore[arg-type]
            if mover not in self.tokens:  # (the computer's turn)
                if not await self._await_computer():
                    return
                continue
            if self.plan.pause:
                await asyncio.sleep(self.plan.pause * self.random.uniform(0.5, 1.5))
                if time.monotonic() >= deadline:
                    return
            move = self.random.choice(self.state.legal_moves())
            text = game.format_move(move)
            if self.plan.ask_choices and not await self._ask_choices(client, mover, move):
                return
            asked = time.monotonic()
            self.asked_at[self.revision + 1] = asked
            revision = await self._send(client, mover, text)
            if revision is None:
                return
            answered = time.monotonic()
            report.move_latencies.append(answered - asked)
            if self.plan.crowd and not self.featured:
                report.other_move_latencies.append(answered - asked)
            report.moves += 1
            on_move()
            self.state.play(move)
            self.acknowledged.append(text)
            self.revision = revision
            self.answered_at = answered

    async def _ask_choices(self, client: httpx.AsyncClient, mover: str, move: Move) -> bool:
        """Ask what the move's first place makes, as the page does when it is clicked (on the
        player's socket where moves go there): whether it was answered (else the error is
        counted)."""
        game = self.plan.game
        places = game.move_places(move)
        if not places:  # (a move of no place, the pass: a button, asked about by no page)
            return True
        seat_socket = self.seat_sockets.get(mover)
        if seat_socket is not None:
            return await seat_socket.choices([game.place_name(places[0])], self.report)
        answer = await _request(
            client, self.report, "GET", f"/api/games/{self.game_id}/choices",
            params={"picked": game.place_name(places[0])},
            headers={"X-Agon-Token": self.tokens[mover]},
        )
        return answer is not None

    async def _send(self, client: httpx.AsyncClient, mover: str, text: str) -> int | None:
        """Send the move of ``mover``: the game's revision it made, or None after counting the
        error."""
        seat_socket = self.seat_sockets.get(mover)
        if seat_socket is not None:
            return await seat_socket.move(text, self.revision, self.tokens[mover], self.report)
        answer = await _request(
            client, self.report, "POST", f"/api/games/{self.game_id}/moves",
            json={"move": text, "revision": self.revision},
            headers={"X-Agon-Token": self.tokens[mover]},
        )
        return None if answer is None else int(answer.json()["revision"])

    async def open_seats(self, url: str) -> bool:
        """Each player's socket of the game (where moves go over WebSockets); False after
        counting the error where one cannot be opened."""
        for colour in self.tokens:
            try:
                self.seat_sockets[colour] = await _SeatSocket.open(
                    url, self.game_id, self.tokens[colour])
            except (OSError, WebSocketException, TimeoutError) as error:
                self.report.errors[f"player's socket: {type(error).__name__}"] += 1
                return False
        return True

    async def close_seats(self) -> None:
        for seat_socket in self.seat_sockets.values():
            await seat_socket.close()

    async def _await_computer(self) -> bool:
        """Wait for the update with the computer's move (seen by the first spectator), as long
        as for any answer: a game's last reply may come after the time is up."""
        waited_from = self.answered_at or time.monotonic()
        async with self.updated:
            try:
                async with asyncio.timeout(REQUEST_SECONDS):
                    await self.updated.wait_for(lambda: self.seen_revision > self.revision)
            except TimeoutError:
                self.report.errors["the computer's move did not come"] += 1
                return False
        view = self.last_view
        for entry in view["moves"][len(self.acknowledged) :]:
            self.state.play_text(entry["text"])
            self.acknowledged.append(entry["text"])
        self.revision = view["revision"]
        self.report.computer_latencies.append(time.monotonic() - waited_from)
        return True

    async def watch(self, url: str, first: bool, ready: asyncio.Event) -> None:
        """A spectator: times each update from its move's request; the first one also tells
        the players of the computer's moves. Its updates come packed, as a browser's do."""
        address = _socket_address(url, self.game_id)
        try:
            async with connect(
                address, open_timeout=REQUEST_SECONDS, max_size=MAX_UPDATE_BYTES
            ) as socket:
                ready.set()
                await self._receive(socket, first)
        except (OSError, WebSocketException, TimeoutError) as error:
            self.report.errors[f"spectator: {type(error).__name__}"] += 1
        except UnreadableUpdate as error:
            self.report.errors[f"spectator: {error}"] += 1
        finally:
            ready.set()

    async def _receive(self, socket: ClientConnection, first: bool) -> None:
        async for message in socket:
            arrived = time.monotonic()
            view = read_update(message)
            revision = view["revision"]
            asked = self.asked_at.get(revision)
            if asked is not None:
                self.report.update_latencies.append(arrived - asked)
            if first:
                async with self.updated:
                    if revision > self.seen_revision:
                        self.seen_revision, self.last_view = revision, view
                    self.updated.notify_all()

    async def verify(self, client: httpx.AsyncClient) -> None:
        """The stored game's moves are those acknowledged, in order (a move applied once)."""
        answer = await _request(client, self.report, "GET", f"/api/games/{self.game_id}")
        if answer is None:
            return
        stored = [entry["text"] for entry in answer.json()["moves"]]
        if stored[: len(self.acknowledged)] != self.acknowledged or (
            len(stored) > len(self.acknowledged) and not self.against_computer
        ):
            self.report.mismatches.append(
                f"game {self.game_id}: stored {len(stored)} moves, "
                f"acknowledged {len(self.acknowledged)}"
            )
        else:
            self.report.games_verified += 1


class _SeatSocket:
    """A player's socket of its game: it sends the player's moves and reads their answers,
    passing over the game's updates."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.numbers = itertools.count()
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, url: str, game_id: str, token: str) -> _SeatSocket:
        """The socket of the holder of ``token``, offering its seat, as the page does."""
        socket = await connect(
            _socket_address(url, game_id), open_timeout=REQUEST_SECONDS,
            max_size=MAX_UPDATE_BYTES, subprotocols=[Subprotocol(SEAT_PROTOCOL + token)],
        )
        return cls(socket)

    async def move(
        self, text: str, revision: int, token: str, report: LoadReport
    ) -> int | None:
        """Send a move: the game's revision it made, or None after counting the error."""
        change = {"type": "move", "move": text, "revision": revision, "token": token}
        said = await self._ask(change, "done", "move", report)
        return None if said is None else int(said["revision"])

    async def choices(self, picked: list[str], report: LoadReport) -> bool:
        """Ask what the places picked make: whether it was answered (else the error is
        counted)."""
        question = {"type": "choices", "picked": picked}
        return await self._ask(question, "choices", "choices", report) is not None

    async def _ask(
        self, message: dict[str, Any], answered: str, what: str, report: LoadReport
    ) -> dict[str, Any] | None:
        """Send ``message`` and await its answer, of type ``answered``: the answer, or None
        after counting the error (named by ``what``)."""
        number = next(self.numbers)
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[number] = answer
        try:
            await self.socket.send(json.dumps({**message, "id": number}))
            async with asyncio.timeout(REQUEST_SECONDS):
                said = await answer
        except (OSError, WebSocketException, TimeoutError) as error:
            report.errors[f"{what} on the game's socket: {type(error).__name__}"] += 1
            return None
        finally:
            self.waiting.pop(number, None)
        if said.get("type") != answered:
            detail = str(said.get("detail", ""))[:80]
            report.errors[f"{what} on the game's socket: {said.get('status')} {detail}"] += 1
            return None
        return said

    async def _read(self) -> None:
        """Hand each answer to the message waiting for it (an update, packed, is binary); once
        the socket is closed, fail the message still waiting."""
        with contextlib.suppress(WebSocketException):
            async for message in self.socket:
                said = _json_object(message) if isinstance(message, str) else {}
                waiting = self.waiting.get(said.get("id", -1))
                if said.get("type") != "update" and waiting is not None:
                    waiting.set_result(said)
        for waiting in self.waiting.values():
            waiting.set_exception(ConnectionClosedError(None, None))

    async def close(self) -> None:
        self.reader.cancel()
        await self.socket.close()


def _socket_address(url: str, game_id: str) -> str:
    """The game's WebSocket at the arena ``url``, asking for packed updates, as a page does."""
    return url.replace("http", "ws", 1) + f"/ws/games/{game_id}?compress={PACKED}"


def _json_object(text: str) -> dict[str, Any]:
    """The JSON object ``text`` holds (empty where it holds none)."""
    try:
        found = json.loads(text)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


async def _request(
    client: httpx.AsyncClient, report: LoadReport, method: str, path: str, **sent: Any
) -> httpx.Response | None:
    """The answer, or None after counting the error (its status and words, or its kind)."""
    try:
        answer = await client.request(method, path, timeout=REQUEST_SECONDS, **sent)
    except httpx.HTTPError as error:
        report.errors[f"{method} {_route(path)}: {type(error).__name__}"] += 1
        return None
    if answer.status_code >= 400:
        try:
            detail = str(answer.json().get("detail", ""))[:80]
        except ValueError:
            detail = answer.text[:80]
        report.errors[f"{method} {_route(path)}: {answer.status_code} {detail}"] += 1
        return None
    return answer


def _cancel(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()


def _route(path: str) -> str:
    parts = path.split("/")
    return "/".join("{id}" if index == 3 else part for index, part in enumerate(parts))


async def run_load(
    url: str, plan: LoadPlan, on_move: Callable[[], None] = lambda: None,
    report: LoadReport | None = None,
) -> LoadReport:
    """Play the plan against the arena at ``url`` and report, into ``report`` where given (so
    that a load test stopped by Ctrl-C still has what it measured). ``plan.games`` games are
    under way at once until the time is up: a game that ends makes room for a new one."""
    report = report or LoadReport(plan)
    url = url.rstrip("/")
    watch_url = (plan.watch_url or url).rstrip("/")
    limits = httpx.Limits(
        max_connections=min(2 * plan.games, 200), max_keepalive_connections=200,
        keepalive_expiry=KEEPALIVE_SECONDS,
    )
    played: list[_Game] = []
    numbers = itertools.count()
    report.started = time.monotonic()
    deadline = report.started + plan.seconds

    async def keep_playing(slot: int, client: httpx.AsyncClient) -> None:
        # (each slot's first game is asked for however late it starts: on a busy machine the
        # time can be up before a slot's turn comes, and the test would then have asked nothing)
        for rounds in itertools.count():
            if rounds and time.monotonic() >= deadline:
                return
            game = _Game(next(numbers), slot, plan, report)
            if not await game.create(client):
                return
            played.append(game)
            watching: list[asyncio.Task[None]] = []
            ready: list[asyncio.Event] = []
            # (a game against the computer learns of its moves from its first spectator)
            spectators = max(plan.spectators, 1 if game.against_computer else 0)
            for index in range(spectators + (plan.crowd if game.featured else 0)):
                ready.append(asyncio.Event())
                watching.append(asyncio.create_task(game.watch(watch_url, index == 0, ready[-1])))
            await asyncio.gather(*(event.wait() for event in ready))
            if plan.moves_over == "websocket" and not await game.open_seats(url):
                _cancel(watching)
                return
            try:
                await game.play(client, deadline, on_move)
            finally:
                await game.close_seats()
            # (the last updates reach the spectators, then they leave)
            asyncio.get_running_loop().call_later(UPDATE_GRACE_SECONDS, _cancel, watching)

    async with httpx.AsyncClient(base_url=url, limits=limits) as client:
        await asyncio.gather(*(keep_playing(slot, client) for slot in range(plan.games)))
        report.seconds = time.monotonic() - report.started
        await asyncio.sleep(UPDATE_GRACE_SECONDS)
        await asyncio.gather(*(game.verify(client) for game in played))
    report.games_played = len(played)
    return report
