"""The arena's game service: seats, moves, undo, resignation, hints and the computer's turns.

Every request rebuilds the position by replaying the stored moves through the rules engine and
checks the new move against it; a move is committed to the database before anyone is told of
it. The computer thinks in a worker pool, so the event loop stays free for other games.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import hmac
import logging
import multiprocessing
import secrets
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import BrokenExecutor, Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

from agon.core.errors import AgonError, quoted
from agon.core.game import Game, Move, State, format_points
from agon.core.player import Player
from agon.core.records import GameRecord
from agon.games import make_game, plugin_of, renderer
from agon.search.registry import make_agent
from agon.web.hub import Hub
from agon.web.levels import (
    HINT_SPECS,
    LEVELS_BY_KEY,
    first_available,
    level_spec,
    think,
    warm_up,
)
from agon.web.pages import variant_query
from agon.web.store import Outcome, StaleGame, Store, StoredGame

log = logging.getLogger(__name__)

Mode = Literal["computer", "local", "friend"]
COLOURS = ("black", "white")
THINKING_TIMEOUT_S = 120.0
REFRESH_SECONDS = 2.0
"""How often a watched game is read again, for the changes other server processes make."""


class ArenaError(AgonError):
    """A request the arena refuses; ``status`` is the HTTP status that says why."""

    status = 400


class NotFound(ArenaError):
    status = 404


class Forbidden(ArenaError):
    status = 403


class Conflict(ArenaError):
    status = 409


@dataclass
class Loaded:
    """A stored game with its position rebuilt by the rules engine."""

    stored: StoredGame
    game: Game
    state: State
    movers: list[Player]
    """Who played each stored move."""

    @property
    def active(self) -> bool:
        return self.stored.status == "active"

    @property
    def to_move(self) -> str | None:
        player = self.state.to_move
        return player.label if player is not None and self.active else None

    @property
    def computer_to_move(self) -> bool:
        colour = self.to_move
        return colour is not None and self.stored.agents[colour] is not None


@dataclass(frozen=True)
class NewGame:
    game: str
    options: dict[str, Any]
    opponent: Mode
    level: str
    colour: Literal["black", "white", "random"]


@dataclass(frozen=True)
class Created:
    game_id: str
    token: str
    invite_token: str | None
    colour: str | None


def replay(stored: StoredGame) -> Loaded:
    game = make_game(stored.game, stored.options)
    state = game.new_state()
    movers: list[Player] = []
    for text in stored.moves:
        mover = state.to_move
        assert mover is not None, "a stored move after the end of the game"
        state.play_text(text)
        movers.append(mover)
    return Loaded(stored, game, state, movers)


def outcome_of(state: State) -> Outcome:
    if state.is_over:
        return Outcome("over", state.result, state.end_reason)
    return Outcome()


@dataclass(frozen=True)
class Picking:
    """What places picked on the board make (see :func:`pick_places`)."""

    move: Move | None
    choices: dict[int, str | None]
    """The places that can come next, each with why no legal move goes through it (None: one
    does)."""
    reason: str | None


def pick_places(game: Game, state: State, picked: list[str]) -> Picking:
    """The moves made of the places ``picked`` (names) and more: where exactly one move is made
    of these places alone, that move; else the next places of the moves that start with them,
    and, where none of those moves is legal, why not."""
    places = _places_by_name(game)
    unknown = [name for name in picked if name not in places]
    if unknown:
        raise ArenaError(f"{quoted(unknown[0])} is not a place of this board")
    prefix = tuple(places[name] for name in picked)
    if not prefix:
        raise ArenaError("pick at least one place")
    moves = [
        move for move in range(game.num_actions)
        if game.move_places(move)[: len(prefix)] == prefix
    ]
    complete = [move for move in moves if len(game.move_places(move)) == len(prefix)]
    if len(complete) == 1 and len(moves) == 1:
        return Picking(complete[0], {}, None)
    choices: dict[int, str | None] = {}
    for move in moves:
        made_of = game.move_places(move)
        if len(made_of) > len(prefix):
            why = state.illegal_reason(move)
            following = made_of[len(prefix)]
            if choices.get(following, "") is not None:
                choices[following] = why
    if any(why is None for why in choices.values()):
        return Picking(None, choices, None)
    distinct = sorted({str(why) for why in choices.values()}) or ["no move starts there"]
    return Picking(None, choices, f"{' '.join(picked)} has no legal move: " + "; ".join(distinct))


@functools.lru_cache(maxsize=64)
def _places_by_name(game: Game) -> dict[str, int]:
    """The board's places by name: every place some move is made of."""
    return {
        game.place_name(place): place
        for move in range(game.num_actions) for place in game.move_places(move)
    }


def board_svg(state: State, highlight: Iterable[int] = (), last_move: Move | None = None) -> str:
    return renderer(state.game).render_svg(state, highlight=list(highlight), last_move=last_move)


HASHED = "sha256:"
"""Prefix of a seat token's hash as the database keeps it. Games stored before tokens were
hashed keep their tokens as they were, and those still work."""


def token_digest(token: str) -> str:
    """What the database keeps of a seat token: its hash, so that reading the database does
    not give anyone a seat."""
    digest = hashlib.sha256(token.encode()).digest()
    return HASHED + base64.urlsafe_b64encode(digest).decode().rstrip("=")


def invite_for(host_token: str, game_id: str) -> str:
    """The guest's token of a friend game, derived from the host's: the host's page can show
    the guest's link again though the database keeps neither token."""
    mac = hmac.new(host_token.encode(), f"invite:{game_id}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:18]).decode()


def holds_seat(stored_token: str | None, token: str) -> bool:
    """Whether ``token`` is the one a seat's stored token (hashed or, in older games, not)
    stands for."""
    if stored_token is None:
        return False
    presented = token_digest(token) if stored_token.startswith(HASHED) else token
    return secrets.compare_digest(stored_token.encode(), presented.encode())


def seed_for(game_id: str, ply: int) -> int:
    digest = hashlib.sha256(f"{game_id}:{ply}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


class Arena:
    def __init__(
        self, store: Store, *, workers: int = 2, executor: str = "process", warm: bool = True
    ) -> None:
        self.store = store
        self._warm = warm
        self.hub = Hub()
        self._workers = workers
        self._executor_kind = executor
        self._executor: Executor | None = None
        self._locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._thinking: dict[str, asyncio.Task[None]] = {}

    # --- lifecycle ----------------------------------------------------------------------------

    @property
    def executor(self) -> Executor:
        if self._executor is None:
            if self._executor_kind == "thread":
                self._executor = ThreadPoolExecutor(self._workers, thread_name_prefix="agent")
            else:
                # spawn, not fork: the server process has threads, and forking those is unsafe
                context = multiprocessing.get_context("spawn")
                self._executor = ProcessPoolExecutor(
                    self._workers, mp_context=context, initializer=warm_up if self._warm else None
                )
        return self._executor

    def start(self) -> None:
        """Start the worker processes now, so that they are ready before the first game."""
        if self._executor_kind == "process":
            for _ in range(self._workers):
                self.executor.submit(int)

    async def close(self) -> None:
        for task in list(self._thinking.values()):
            task.cancel()
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
        self.store.close()

    # --- reading --------------------------------------------------------------------------------

    async def load(self, game_id: str) -> Loaded:
        stored = await asyncio.to_thread(self.store.load, game_id)
        if stored is None:
            raise NotFound(f"there is no game {quoted(game_id)}")
        return replay(stored)

    @staticmethod
    def seats_of(stored: StoredGame, token: str | None) -> list[str]:
        if not token:
            return []
        return [colour for colour in COLOURS if holds_seat(stored.tokens[colour], token)]

    def view(self, loaded: Loaded, token: str | None = None) -> dict[str, Any]:
        """What a browser shows; with a token, also what that seat may do."""
        stored = loaded.stored
        view = self.public_view(loaded)
        seats = self.seats_of(stored, token)
        view["you"] = seats
        view["invite_token"] = None
        if token and stored.mode == "friend" and stored.host in seats:
            guest = stored.tokens["white" if stored.host == "black" else "black"]
            hashed = guest is not None and guest.startswith(HASHED)
            view["invite_token"] = invite_for(token, stored.id) if hashed else guest
        return view

    def public_view(self, loaded: Loaded) -> dict[str, Any]:
        stored, game, state = loaded.stored, loaded.game, loaded.state
        last = state.history[-1] if state.history else None
        score = state.score()
        return {
            "id": stored.id,
            "game": game.name,
            "title": game.title,
            "description": game.description,
            "variant": game.options(),
            "mode": stored.mode,
            "players": {colour: self._player(stored, colour) for colour in COLOURS},
            "moves": [
                {"ply": ply, "player": mover.label, "text": text}
                for ply, (mover, text) in enumerate(
                    zip(loaded.movers, stored.moves, strict=True), start=1
                )
            ],
            "last_move": game.format_move(last) if last is not None else None,
            "to_move": loaded.to_move,
            "thinking": loaded.computer_to_move,
            "status": stored.status,
            "result": stored.result,
            "reason": stored.reason,
            "headline": headline(stored),
            "score": {"black": score.black, "white": score.white},
            "score_text": {
                "black": format_points(score.black),
                "white": format_points(score.white),
            },
            "komi": game.komi,
            "click_help": plugin_of(game).click_help,
            "rules_query": variant_query(game),
            "has_pass": game.pass_move is not None,
            "undo_available": self._undo_keep(loaded) is not None,
            "can_pass": loaded.active
            and game.pass_move is not None
            and state.is_legal(game.pass_move),
            "revision": stored.revision,
            "created": stored.created.isoformat(),
            "updated": stored.updated.isoformat(),
            "svg": board_svg(state, last_move=last),
        }

    def summary(self, loaded: Loaded) -> dict[str, Any]:
        """A line in the lobby's lists."""
        stored = loaded.stored
        return {
            "id": stored.id,
            "game": loaded.game.name,
            "description": loaded.game.description,
            "mode": stored.mode,
            "players": {colour: self._player(stored, colour) for colour in COLOURS},
            "plies": len(stored.moves),
            "to_move": loaded.to_move,
            "status": stored.status,
            "result": stored.result,
            "headline": headline(stored),
            "updated": stored.updated.isoformat(),
            "watchers": self.hub.watchers(stored.id),
        }

    @staticmethod
    def _player(stored: StoredGame, colour: str) -> dict[str, Any]:
        agent, level_key = stored.agents[colour], stored.levels[colour]
        if agent is None:
            label = "Friend" if stored.mode == "friend" and colour != stored.host else "Player"
            return {"kind": "human", "label": label}
        level = LEVELS_BY_KEY.get(level_key or "")
        name = level.label if level else agent
        label = f"Computer · {name}"
        return {"kind": "computer", "label": label, "agent": agent, "level": level_key}

    async def recent(self, status: str | None, limit: int) -> list[dict[str, Any]]:
        stored_games = await asyncio.to_thread(self.store.recent, status, limit)
        return [self.summary(replay(stored)) for stored in stored_games]

    async def many(self, game_ids: list[str]) -> list[dict[str, Any]]:
        stored_games = await asyncio.to_thread(self.store.many, game_ids)
        return [self.summary(replay(stored)) for stored in stored_games]

    # --- creating -------------------------------------------------------------------------------

    async def create(self, request: NewGame) -> Created:
        game = make_game(request.game, request.options)
        colour: str = request.colour
        if colour == "random":
            colour = secrets.choice(COLOURS)
        other = "white" if colour == "black" else "black"
        game_id = secrets.token_urlsafe(6)
        token = secrets.token_urlsafe(18)
        kept = token_digest(token)
        seats: dict[str, dict[str, str | None]] = {}
        invite: str | None = None
        if request.opponent == "computer":
            spec = level_spec(request.level)
            seats[colour] = {"token": kept}
            seats[other] = {"agent": spec, "level": request.level}
        elif request.opponent == "local":
            seats = {"black": {"token": kept}, "white": {"token": kept}}
        elif request.opponent == "friend":
            invite = invite_for(token, game_id)
            seats = {colour: {"token": kept}, other: {"token": token_digest(invite)}}
        else:
            raise ArenaError(
                f"unknown opponent {quoted(request.opponent)}: computer, local or friend"
            )
        stored = await asyncio.to_thread(
            self.store.create,
            game_id=game_id,
            game=game.name,
            options=game.options(),
            mode=request.opponent,
            seats=seats,
            host=None if request.opponent == "local" else colour,
        )
        self.ensure_thinking(replay(stored))
        host_colour = None if request.opponent == "local" else colour
        return Created(game_id, token, invite, host_colour)

    # --- playing --------------------------------------------------------------------------------

    async def play(self, game_id: str, token: str | None, text: str) -> dict[str, Any]:
        async with self._locks[game_id]:
            loaded = await self.load(game_id)
            self._require_turn(loaded, token)
            move = loaded.state.play_text(text)
            await self._store_move(loaded, move)
        return await self._announce(game_id, token)

    async def undo(self, game_id: str, token: str | None) -> dict[str, Any]:
        async with self._locks[game_id]:
            loaded = await self.load(game_id)
            if not self.seats_of(loaded.stored, token):
                raise Forbidden("only a player of this game can take a move back")
            keep = self._undo_keep(loaded)
            if keep is None:
                raise Conflict(self._undo_refusal(loaded))
            state = loaded.state
            while len(state.history) > keep:
                state.undo()
            await asyncio.to_thread(
                self.store.truncate,
                game_id,
                loaded.stored.revision,
                keep,
                outcome_of(state),
            )
        return await self._announce(game_id, token)

    async def resign(self, game_id: str, token: str | None) -> dict[str, Any]:
        async with self._locks[game_id]:
            loaded = await self.load(game_id)
            seats = self.seats_of(loaded.stored, token)
            if not seats:
                raise Forbidden("only a player of this game can resign")
            if not loaded.active:
                raise Conflict("the game is already over")
            loser = loaded.to_move if len(seats) == 2 else seats[0]
            assert loser is not None
            winner = "W" if loser == "black" else "B"
            outcome = Outcome("over", f"{winner}+R", f"{loser.capitalize()} resigned", loser)
            await asyncio.to_thread(
                self.store.finish, game_id, loaded.stored.revision, outcome
            )
        return await self._announce(game_id, token)

    async def choices(self, game_id: str, token: str | None, picked: list[str]) -> dict[str, Any]:
        """What the board places picked so far (by name, in order) make: one move (``move``,
        legal or not: playing it explains the rule it breaks), or the places that can come
        next, each legal or not and why (``choices``), or nothing legal (``reason``)."""
        loaded = await self.load(game_id)
        game, state = loaded.game, loaded.state
        picking = pick_places(game, state, picked)
        last = state.history[-1] if state.history else None
        legal_next = [place for place, why in picking.choices.items() if why is None]
        return {
            "picked": picked,
            "move": None if picking.move is None else game.format_move(picking.move),
            "choices": [
                {"place": game.place_name(place), "legal": why is None, "reason": why}
                for place, why in picking.choices.items()
            ],
            "reason": picking.reason,
            "svg": board_svg(state, highlight=legal_next, last_move=last),
        }

    async def hint(self, game_id: str, token: str | None) -> dict[str, Any]:
        loaded = await self.load(game_id)
        self._require_turn(loaded, token)
        game, state = loaded.game, loaded.state
        spec = first_available(HINT_SPECS)
        analysis = await self._think(loaded, spec)
        move = game.parse_move(analysis["move"])
        last = state.history[-1] if state.history else None
        value = analysis["value"]
        return {
            "move": analysis["move"],
            "value": value,
            "value_text": None if value is None else f"{value:+.1f}",
            "pv": analysis["pv"],
            "spec": spec,
            "svg": board_svg(state, highlight=game.move_places(move), last_move=last),
        }

    async def record(self, game_id: str) -> GameRecord:
        loaded = await self.load(game_id)
        stored = loaded.stored
        players = {colour: stored.agents[colour] or "human" for colour in COLOURS}
        record = GameRecord.from_state(
            loaded.state, players=players, started=stored.created.isoformat()
        )
        if stored.resigned:
            record.result, record.reason = stored.result, stored.reason
            record.finished = stored.updated.isoformat()
        return record

    # --- the rules of the arena -----------------------------------------------------------------

    def _require_turn(self, loaded: Loaded, token: str | None) -> None:
        seats = self.seats_of(loaded.stored, token)
        if not seats:
            raise Forbidden(
                "this link holds no seat in this game: spectators watch, players move"
            )
        if not loaded.active:
            raise Conflict(f"the game is over: {loaded.stored.reason}")
        colour = loaded.to_move
        if colour not in seats:
            raise Conflict(f"it is {str(colour).capitalize()}'s turn, not yours")

    @staticmethod
    def _undo_keep(loaded: Loaded) -> int | None:
        """How many moves remain after an undo: up to just before the last person's move."""
        stored = loaded.stored
        if stored.mode == "friend" or stored.resigned:
            return None
        people = {Player.parse(c) for c in COLOURS if stored.agents[c] is None}
        for index in range(len(loaded.movers) - 1, -1, -1):
            if loaded.movers[index] in people:
                return index
        return None

    @staticmethod
    def _undo_refusal(loaded: Loaded) -> str:
        if loaded.stored.mode == "friend":
            return "moves cannot be taken back in a game between two links"
        if loaded.stored.resigned:
            return "a resigned game cannot be taken back"
        return "there is no move of yours to take back"

    async def _store_move(self, loaded: Loaded, move: Move) -> None:
        """Store the move just played on ``loaded.state`` (committed before this returns)."""
        stored = loaded.stored
        try:
            await asyncio.to_thread(
                self.store.append_move,
                stored.id,
                stored.revision,
                len(loaded.state.history),
                loaded.game.format_move(move),
                outcome_of(loaded.state),
            )
        except StaleGame as error:
            raise Conflict(str(error)) from None

    async def _announce(self, game_id: str, token: str | None) -> dict[str, Any]:
        """Tell every watcher of the game's new state; returns the requester's view."""
        loaded = await self.load(game_id)
        await self._broadcast(loaded)
        self.ensure_thinking(loaded)
        return self.view(loaded, token)

    async def _broadcast(self, loaded: Loaded) -> None:
        update = {"type": "update", "view": self.public_view(loaded)}
        await self.hub.broadcast(loaded.stored.id, update, loaded.stored.revision)

    async def follow(self, game_id: str, seen: int) -> None:
        """Broadcast the changes to the game that this process did not make (another server
        process on the same database did), polling every :data:`REFRESH_SECONDS`; ``seen``
        is the revision its watcher was sent. Runs until cancelled."""
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            revision = await asyncio.to_thread(self.store.revision, game_id)
            if revision is None or revision <= max(seen, self.hub.announced(game_id)):
                continue
            loaded = await self.load(game_id)
            seen = loaded.stored.revision
            await self._broadcast(loaded)

    # --- the computer -------------------------------------------------------------------------

    def ensure_thinking(self, loaded: Loaded) -> None:
        """Start the computer's turn if it is to move and not already thinking."""
        game_id = loaded.stored.id
        task = self._thinking.get(game_id)
        if loaded.computer_to_move and (task is None or task.done()):
            self._thinking[game_id] = asyncio.create_task(self._computer_turns(game_id))

    async def _computer_turns(self, game_id: str) -> None:
        try:
            while True:
                loaded = await self.load(game_id)
                if not loaded.computer_to_move:
                    return
                colour = loaded.to_move
                assert colour is not None
                spec = loaded.stored.agents[colour] or "random"
                analysis = await self._think(loaded, spec)
                async with self._locks[game_id]:
                    now = await self.load(game_id)
                    if now.stored.revision != loaded.stored.revision:
                        continue  # undone or resigned meanwhile: think again about the new state
                    try:
                        move = now.state.play_text(analysis["move"])
                    except AgonError:
                        log.exception("agent %s chose an illegal move in game %s", spec, game_id)
                        move = make_agent("random", now.game).choose(now.state)
                        now.state.play(move)
                    await self._store_move(now, move)
                await self._broadcast(await self.load(game_id))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("the computer's turn failed in game %s", game_id)
        finally:
            if self._thinking.get(game_id) is asyncio.current_task():
                del self._thinking[game_id]

    async def _think(self, loaded: Loaded, spec: str) -> dict[str, Any]:
        stored = loaded.stored
        seed = seed_for(stored.id, len(stored.moves))
        arguments = (stored.game, stored.options, list(stored.moves), spec, seed)
        loop = asyncio.get_running_loop()
        for _attempt in range(2):
            executor = self.executor
            try:
                return await asyncio.wait_for(
                    loop.run_in_executor(executor, think, *arguments), THINKING_TIMEOUT_S
                )
            except BrokenExecutor:
                # A worker died (killed, out of memory): start a fresh pool and think again.
                log.warning("the agents' worker pool broke; starting a new one")
                if self._executor is executor:
                    self._executor = None
                    executor.shutdown(wait=False, cancel_futures=True)
            except Exception:
                log.exception("agent %s failed in game %s", spec, stored.id)
                break
        log.warning("playing a random move for the computer in game %s", stored.id)
        agent = make_agent("random", loaded.game, seed=seed)
        move = loaded.game.format_move(agent.choose(loaded.state))
        return {"move": move, "value": None, "pv": [], "proven": False, "spec": "random"}


def headline(stored: StoredGame) -> str | None:
    """The result in words: "Black wins by 2.5", "White wins by resignation", "Draw"."""
    if stored.status != "over" or stored.result is None:
        return None
    if stored.result == "draw":
        return "Draw"
    winner = "Black" if stored.result.startswith("B") else "White"
    margin = stored.result.partition("+")[2]
    if margin == "R":
        return f"{winner} wins by resignation"
    return f"{winner} wins by {margin}"

