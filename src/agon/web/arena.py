"""The arena's game service: creating games, moves, undo, resignation, hints and records.

Every request checks a move against the game's position as the database holds it: the
position kept here from the game's last request where its revision is still the database's
(each change bumps it), else rebuilt by replaying the stored moves through the rules engine. A
move is committed to the database before anyone is told of it. The computer's turns are played
by :class:`~agon.web.thinking.Computer`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
import time
from collections import OrderedDict, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from agon.core.errors import quoted
from agon.core.game import Game, Move
from agon.core.records import MAX_REASON_LENGTH, GameRecord
from agon.games import make_game, plugins
from agon.study.calibration import calibrated_variants
from agon.web import analysts, views
from agon.web.changes import Listener
from agon.web.config import ArenaLimits
from agon.web.engines import EngineLevel, EngineSeats, level_key_of
from agon.web.errors import ArenaError, Conflict, Forbidden, NotFound
from agon.web.guard import OpenSockets, RateLimit, TooManyRequests
from agon.web.hub import Hub, Update
from agon.web.levels import LEVELS, first_available, level_spec, offered_levels
from agon.web.puzzles import Puzzles
from agon.web.replay import Loaded, computer_seat_to_move, replay
from agon.web.seats import (
    COLOURS,
    invite_for,
    other_colour,
    require_turn,
    seats_of,
    token_digest,
    undo_keeps,
    undo_refusal,
)
from agon.web.store import Outcome, StaleGame, Store, StoredGame, TurnClaim, stored_now
from agon.web.study import MAX_STUDY_MOVES, Line, Study
from agon.web.thinking import Computer, SideWork

log = logging.getLogger(__name__)

Mode = Literal["computer", "local", "friend"]
HINT_SECONDS = 1.0
"""How long the analyst looks for a hint."""
REFRESH_SECONDS = 2.0
"""How often a watched game is read again, for the changes other server processes make, on a
database that does not announce them (SQLite)."""
KEPT_OWN_CHANGES = 10_000
"""The latest revisions this process stored, one a game: their announcements are not news."""
KEPT_GAMES = 1024
"""Games whose position is kept between requests (:meth:`Arena.load`): the latest used."""
KEPT_UPDATES = 256
"""Updates kept (:meth:`Arena.update`): a few of each game being played."""
SWEEP_SECONDS = 60.0
"""Listing the games first marks idle unfinished ones abandoned, at most this often."""


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


def outcome_of(loaded: Loaded) -> Outcome:
    """What the rules say of the game's position (``loaded.state``, as changed), and whether
    the computer is to move next."""
    state = loaded.state
    if state.is_over:
        return Outcome("over", state.result, state.end_reason)
    return Outcome(computer_next=computer_seat_to_move(loaded.stored, state))


def _first_is(game: Game, colour: str) -> bool:
    """The player of ``colour`` moves first in the game."""
    first = game.new_state().to_move
    return first is not None and first.label == colour


class Arena:
    """The games of the arena, as the FastAPI app serves them."""

    def __init__(
        self,
        store: Store,
        *,
        workers: int = 2,
        executor: str = "process",
        warm: bool = True,
        limits: ArenaLimits | None = None,
        engine_levels: tuple[EngineLevel, ...] = (),
    ) -> None:
        self.store = store
        self.hub = Hub()
        self._following: dict[str, tuple[int, int]] = {}
        """Each game watched here: the revision its first watcher here was sent, and how many
        watchers it has here."""
        self._poll: asyncio.Task[None] | None = None
        """Where changes are not announced, the one poll of every game watched here
        (:meth:`_poll_followed`)."""
        self._kept: OrderedDict[str, Loaded] = OrderedDict()
        """The latest games loaded or stored here (:data:`KEPT_GAMES`), never changed."""
        self._updates: OrderedDict[tuple[str, int], Update] = OrderedDict()
        """The latest updates made (:meth:`update`), by game and revision."""
        self._own_changes: OrderedDict[str, int] = OrderedDict()
        """The revision of each game that this process stored last (:data:`KEPT_OWN_CHANGES`)."""
        self._refreshing: dict[str, asyncio.Task[None]] = {}
        """The game being read again after another process's change, one task a game."""
        self._read_after: set[str] = set()
        """Games changed again while being read again: read once more after."""
        self.listener: Listener | None = None
        self.limits = limits or ArenaLimits()
        self.engine_levels = {level.key: level for level in engine_levels}
        self.level_labels = {
            **{level.key: level.label for level in LEVELS},
            **{level.key: level.label for level in engine_levels},
        }
        """Each computer level's name, Agon's own and the configured programs'."""
        engines = EngineSeats(engine_levels, self.limits.engines_at_once)
        self.computer = Computer(
            self, workers=workers, kind=executor, warm=warm, engines=engines,
            ponder_seconds=self.limits.ponder_seconds,
        )
        self._locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._hints = RateLimit(self.limits.hints_per_minute)
        self.reads = RateLimit(self.limits.reads_per_minute)
        """Reads of the API for each client address, asked by request or on a game's socket
        (:class:`~agon.web.guard.ReadLimit`)."""
        self.sockets = OpenSockets(self.limits.sockets_per_address, self.limits.watchers_per_game)
        self.side_work = SideWork(workers, {
            "hint": self.limits.hints_at_once, "analysis": self.limits.analyses_at_once,
        })
        self.study = Study(self.computer, self.side_work, self.limits)
        self.puzzles = Puzzles(self.computer, self.side_work)
        self._swept = -math.inf

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the computer's worker processes now, so that they are ready before the first
        game, its takers of turns, and the listening to other processes' changes (PostgreSQL;
        call within the event loop)."""
        self.computer.start()
        if self.store.notifies:
            self.listener = Listener(
                self.store.engine.url, asyncio.get_running_loop(),
                changed=self._changed_elsewhere, turn=self.computer.look_at_queue,
                resync=self._resync,
            )
            self.listener.start()

    async def close(self) -> None:
        if self.listener is not None:
            await asyncio.to_thread(self.listener.close)
        self.study.close()
        self.puzzles.close()
        await self.computer.close()
        self.store.close()

    # --- reading --------------------------------------------------------------------------------

    async def load(self, game_id: str) -> Loaded:
        """The game as the database holds it now (a copy of its own for the caller)."""
        loaded = await self._read(game_id)
        if self._abandoned(loaded):
            await self._expire_idle()
            loaded = await self._read(game_id)
        return loaded

    async def holds_a_seat(self, game_id: str, token: str) -> bool:
        """Whether ``token`` holds a seat of the game (False where there is no such game). A
        game's seats never change, so the game kept here answers without a read (the socket
        asking reads the game as it joins)."""
        found = self._kept.get(game_id)
        if found is None:
            try:
                found = await self.load(game_id)
            except NotFound:
                return False
        return bool(seats_of(found.stored, token))

    async def load_at(self, game_id: str, revision: int | None) -> Loaded:
        """The game, for a change made at ``revision`` (None: at the revision the database
        holds now). Where this process keeps the game at that revision, the kept copy, unread:
        the change's own transaction checks that the revision is still the database's, and
        refuses it if not. Else the game is read, and refused if it is at another revision."""
        kept = self._kept_at(game_id, revision)
        if kept is not None and not self._abandoned(kept):
            self._kept.move_to_end(game_id)
            return kept.copy()
        loaded = await self.load(game_id)
        if revision is not None and loaded.stored.revision != revision:
            raise Conflict(
                f"the game has moved on: it is at revision {loaded.stored.revision}, not "
                f"{revision}: look again"
            )
        return loaded

    def _kept_at(self, game_id: str, revision: int | None) -> Loaded | None:
        """The game as this process keeps it, where that is at ``revision`` (never changed:
        copy it to change it)."""
        kept = self._kept.get(game_id)
        return kept if kept is not None and kept.stored.revision == revision else None

    def _abandoned(self, loaded: Loaded) -> bool:
        """Unfinished and unchanged for longer than games are kept open (then over, as
        abandoned: :meth:`_expire_idle`)."""
        return loaded.active and loaded.stored.updated < self._idle_since()

    async def _read(self, game_id: str) -> Loaded:
        """The game kept here if the database's revision is still its own (one small read),
        else read in full and replayed."""
        kept = self._kept.get(game_id)
        if kept is None:
            stored = await asyncio.to_thread(self.store.load, game_id)
        else:
            stored = await asyncio.to_thread(
                self.store.load_changed, game_id, kept.stored.revision
            )
            if stored is None:
                if self._kept.get(game_id) is kept:  # (else let go, or replaced, meanwhile)
                    self._kept.move_to_end(game_id)
                return kept.copy()
        if stored is None:
            raise NotFound(f"there is no game {quoted(game_id)}")
        loaded = replay(stored)
        self._keep(loaded.copy())
        return loaded

    def _keep(self, loaded: Loaded) -> None:
        self._kept[loaded.stored.id] = loaded
        self._kept.move_to_end(loaded.stored.id)
        while len(self._kept) > KEPT_GAMES:
            self._kept.popitem(last=False)

    def _idle_since(self) -> datetime:
        """Unfinished games with no change since this moment are over, as abandoned."""
        return datetime.now(UTC) - timedelta(days=self.limits.idle_days)

    async def _expire_idle(self) -> None:
        days = f"{self.limits.idle_days:g}"
        outcome = Outcome("over", None, f"abandoned: no move for {days} days")
        await asyncio.to_thread(self.store.expire_idle, self._idle_since(), outcome)
        self._swept = time.monotonic()

    async def recent(self, status: str | None, limit: int) -> list[dict[str, Any]]:
        if time.monotonic() - self._swept > SWEEP_SECONDS:
            await self._expire_idle()
        stored_games = await asyncio.to_thread(self.store.recent, status, limit)
        return [self._summary(stored) for stored in stored_games]

    async def many(self, game_ids: list[str]) -> list[dict[str, Any]]:
        stored_games = await asyncio.to_thread(self.store.many, game_ids)
        return [self._summary(stored) for stored in stored_games]

    def _summary(self, stored: StoredGame) -> dict[str, Any]:
        """The game's summary, from the position kept here where it is the one read (a lobby's
        lists would replay every game they name, each time)."""
        loaded = self._kept_at(stored.id, stored.revision) or replay(stored)
        return views.summary(loaded, self.hub.watchers(stored.id), self.level_labels)

    def levels(self) -> list[dict[str, Any]]:
        """The computer's levels as the lobby lists them: Agon's own where a variant is not
        calibrated, then the configured programs (each with the games it plays)."""
        own = [views.offered_level(level) for level in offered_levels()]
        return own + [level.describe() for level in self.engine_levels.values()]

    def calibrated_levels(self) -> dict[str, list[dict[str, Any]]]:
        """For each game, its calibrated variants' levels as the lobby lists them: each with
        the agent, its rating and its time a move (docs/search.md, *Calibrated levels*)."""
        return {
            name: [
                {"options": game.options(), "anchor": anchor,
                 "levels": [views.offered_level(level) for level in offered_levels(game)]}
                for game, anchor in calibrated_variants(found)
            ]
            for name, found in plugins().items()
        }

    def _computer_seat(self, level_key: str, game: Game) -> dict[str, str | None]:
        """The computer's seat at ``level_key``: an agent's spec, or a configured program."""
        engine_level = self.engine_levels.get(level_key)
        if engine_level is None:
            return {"agent": level_spec(level_key, game), "level": level_key}
        if not engine_level.plays(game.name):
            games = ", ".join(engine_level.games or ())
            raise ArenaError(
                f"the level {quoted(level_key)} ({engine_level.label}) plays {games} only"
            )
        return {"agent": engine_level.stored_agent, "level": level_key}

    # --- creating -------------------------------------------------------------------------------

    async def create(self, request: NewGame) -> Created:
        game = make_game(request.game, request.options)
        colour: str = request.colour
        if colour == "random":
            colour = secrets.choice(COLOURS)
        other = other_colour(colour)
        game_id = secrets.token_urlsafe(6)
        token = secrets.token_urlsafe(18)
        kept = token_digest(token)
        seats: dict[str, dict[str, str | None]] = {}
        invite: str | None = None
        if request.opponent == "computer":
            seats[colour] = {"token": kept}
            seats[other] = self._computer_seat(request.level, game)
        elif request.opponent == "local":
            seats = {"black": {"token": kept}, "white": {"token": kept}}
        elif request.opponent == "friend":
            invite = invite_for(token, game_id)
            seats = {colour: {"token": kept}, other: {"token": token_digest(invite)}}
        else:
            raise ArenaError(
                f"unknown opponent {quoted(request.opponent)}: computer, local or friend"
            )
        computer_first = request.opponent == "computer" and _first_is(game, other)
        stored = await asyncio.to_thread(
            self.store.create,
            game_id=game_id,
            game=game.name,
            options=game.options(),
            mode=request.opponent,
            seats=seats,
            host=None if request.opponent == "local" else colour,
            computer_first=computer_first,
        )
        self._keep(replay(stored))  # (its first views, the page's and its watchers', unread)
        if computer_first:
            self.computer.look_at_queue()
        host_colour = None if request.opponent == "local" else colour
        return Created(game_id, token, invite, host_colour)

    # --- playing --------------------------------------------------------------------------------

    async def play(
        self, game_id: str, token: str | None, text: str, revision: int | None = None
    ) -> Loaded:
        """Play the move ``text`` for the holder of ``token``; ``revision``: the game's
        revision it answers (see :meth:`load_at`). Returns the game after it."""
        async with self.lock(game_id):
            loaded = await self.load_at(game_id, revision)
            require_turn(loaded, token)
            move = loaded.state.play_text(text)
            stored = await self.store_move(loaded, move)
        return await self.announce(game_id, stored)

    async def undo(
        self, game_id: str, token: str | None, revision: int | None = None
    ) -> Loaded:
        async with self.lock(game_id):
            loaded = await self.load_at(game_id, revision)
            if not seats_of(loaded.stored, token):
                raise Forbidden("only a player of this game can take a move back")
            keep = undo_keeps(loaded)
            if keep is None:
                raise Conflict(undo_refusal(loaded))
            state = loaded.state
            while len(state.history) > keep:
                state.undo()
            self._own_change(game_id, loaded.stored.revision + 1)
            await asyncio.to_thread(
                self.store.truncate,
                game_id,
                loaded.stored.revision,
                keep,
                outcome_of(loaded),
            )
        return await self.announce(game_id)

    async def resign(
        self, game_id: str, token: str | None, revision: int | None = None
    ) -> Loaded:
        async with self.lock(game_id):
            loaded = await self.load_at(game_id, revision)
            seats = seats_of(loaded.stored, token)
            if not seats:
                raise Forbidden("only a player of this game can resign")
            if not loaded.active:
                raise Conflict("the game is already over")
            loser = loaded.to_move if len(seats) == 2 else seats[0]
            assert loser is not None
            winner = "W" if loser == "black" else "B"
            outcome = Outcome("over", f"{winner}+R", f"{loser.capitalize()} resigned", loser)
            self._own_change(game_id, loaded.stored.revision + 1)
            await asyncio.to_thread(
                self.store.finish, game_id, loaded.stored.revision, outcome
            )
        return await self.announce(game_id)

    async def forfeit(
        self, loaded: Loaded, colour: str, reason: str, claim: TurnClaim | None = None
    ) -> None:
        """End the game: the player of ``colour`` (a configured program) forfeits it
        (``claim``: the computer's turn it forfeits)."""
        winner = "W" if colour == "black" else "B"
        who = views.player_label(loaded.stored, colour, self.level_labels)
        said = f"{colour.capitalize()} ({who}) forfeits: {reason}"
        if len(said) > MAX_REASON_LENGTH:
            said = said[: MAX_REASON_LENGTH - 1] + "…"
        outcome = Outcome("over", f"{winner}+F", said, colour)
        self._own_change(loaded.stored.id, loaded.stored.revision + 1)
        try:
            await asyncio.to_thread(
                self.store.finish, loaded.stored.id, loaded.stored.revision, outcome, claim
            )
        except StaleGame as error:
            raise Conflict(str(error)) from None

    async def choices(self, game_id: str, picked: list[str]) -> dict[str, Any]:
        """What the board places picked so far (by name, in order) make: see
        :func:`~agon.web.views.choices_view`."""
        return views.choices_view(await self.load(game_id), picked)

    async def hint(self, game_id: str, token: str | None) -> dict[str, Any]:
        """The best move the analyst finds in :data:`HINT_SECONDS` (exact where the store or
        the solver has it) and its value in words, in games against the computer only (never
        help against a person), a few a minute for each game, and
        :attr:`ArenaLimits.hints_at_once` at a time in the whole arena (with the analyses, never
        the last worker), so that hints never keep the computer from its own turns."""
        loaded = await self.load(game_id)
        require_turn(loaded, token)
        if loaded.stored.mode != "computer":
            raise Forbidden("hints are given only in games against the computer")
        busy = "the computer is busy with other hints: try again soon"
        if self.side_work.busy("hint"):
            raise TooManyRequests(busy, 2)
        self._hints.take(game_id, "hints for this game")
        stored = loaded.stored
        async with self.side_work.slot("hint", refusal=busy):
            try:
                found = await self.computer.run(
                    analysts.hint, stored.game, stored.options, list(stored.moves), HINT_SECONDS
                )
            except Exception:
                log.exception("a hint failed in game %s", game_id)
                found = await self._plain_hint(loaded)
        return views.hint_view(loaded, found)

    async def _plain_hint(self, loaded: Loaded) -> dict[str, Any]:
        """A hint where the analyst failed: the first level's agent's move, of no known value."""
        spec = first_available(("greedy", "random"))
        move = (await self.computer.analyse(loaded, spec))["move"]
        return {
            "move": move, "value": None, "exact": False, "value_text": "no value known",
            "short": "?", "pv": [move], "source": spec,
        }

    async def review(self, game_id: str, client: str) -> dict[str, Any]:
        """The review of a game that is over (its players' and its watchers' alike): made, being
        made, or started now (see :meth:`Study.review`)."""
        loaded = await self.load(game_id)
        if loaded.active:
            raise Conflict("the game is still being played: it can be reviewed once it is over")
        state = loaded.state
        line = Line(loaded.game, None, loaded.game.new_state(), list(state.history))
        if len(line.moves) > MAX_STUDY_MOVES:
            raise ArenaError(
                f"the game has {len(line.moves):,} moves: reviews take at most "
                f"{MAX_STUDY_MOVES:,}"
            )
        players = {
            colour: views.player_label(loaded.stored, colour, self.level_labels)
            for colour in COLOURS
        }
        found = self.study.review(line, players, client)
        found["game_id"] = game_id
        return found

    async def record(self, game_id: str) -> GameRecord:
        loaded = await self.load(game_id)
        stored = loaded.stored
        players = {colour: self._player_name(stored, colour) for colour in COLOURS}
        record = GameRecord.from_state(
            loaded.state, players=players, started=stored.created.isoformat()
        )
        if stored.resigned:
            record.result, record.reason = stored.result, stored.reason
            record.finished = stored.updated.isoformat()
        return record

    def _player_name(self, stored: StoredGame, colour: str) -> str:
        """A seat's player as a record names it: the agent's spec, the configured program's
        name, or ``human``."""
        agent = stored.agents[colour]
        engine_level = self.engine_levels.get(level_key_of(agent) or "")
        if engine_level is not None:
            return f"{engine_level.label} (engine)"
        return agent or "human"

    # --- storing and announcing -----------------------------------------------------------------

    def lock(self, game_id: str) -> asyncio.Lock:
        """The lock that this process's changes to a game take in turn."""
        return self._locks[game_id]

    async def store_move(
        self, loaded: Loaded, move: Move, claim: TurnClaim | None = None
    ) -> Loaded:
        """Store the move just played on ``loaded.state`` (committed before this returns;
        ``claim``: the computer's turn it plays); returns the game as stored (a copy of its
        own for the caller)."""
        stored = loaded.stored
        self._own_change(stored.id, stored.revision + 1)
        text, outcome, at = loaded.game.format_move(move), outcome_of(loaded), stored_now()
        try:
            await asyncio.to_thread(
                self.store.append_move, stored.id, stored.revision,
                len(loaded.state.history), text, outcome, claim, at,
            )
        except StaleGame as error:
            raise Conflict(str(error)) from None
        after = loaded.with_move_stored(stored.changed(outcome, [*stored.moves, text], at))
        self._keep(after)
        return after.copy()

    def _own_change(self, game_id: str, revision: int) -> None:
        """This process is storing ``revision`` of the game: when it is announced, it is no
        news here (:meth:`announce` broadcasts it)."""
        self._own_changes[game_id] = revision
        self._own_changes.move_to_end(game_id)
        while len(self._own_changes) > KEPT_OWN_CHANGES:
            self._own_changes.popitem(last=False)

    async def announce(self, game_id: str, stored: Loaded | None = None) -> Loaded:
        """Tell every watcher of the game's new state (and the computer, where it is to move);
        returns the game. ``stored``: the game as this process has just stored it, announced
        as it is (else the game is read: another process's change made meanwhile reaches the
        watchers as its own news, and the hub never sends a revision older than one sent)."""
        loaded = stored or await self.load(game_id)
        self.broadcast(loaded)
        self.computer.ensure_thinking(loaded)
        if not loaded.active:
            await self.computer.engines.release(game_id)
        return loaded

    def seat_view(self, loaded: Loaded, token: str | None) -> dict[str, Any]:
        """The game's view for the holder of ``token`` (:func:`views.seat_view`)."""
        return views.seat_view(self.public_view(loaded), loaded, token)

    def update(self, loaded: Loaded) -> Update:
        """The watchers' update of the game (its public view, :func:`views.public_view`), made
        once a revision: a move's answer, its broadcast and the first views of watchers who
        join then share it, the view, its text and its packing (the board's SVG costs
        milliseconds; a crowd joining at once, each socket's text and packing more)."""
        key = (loaded.stored.id, loaded.stored.revision)
        update = self._updates.pop(key, None) or Update(
            {"type": "update", "view": views.public_view(loaded, self.level_labels)}
        )
        self._updates[key] = update
        while len(self._updates) > KEPT_UPDATES:
            self._updates.popitem(last=False)
        return update

    def public_view(self, loaded: Loaded) -> dict[str, Any]:
        """The game's public view, that of :meth:`update`. Do not change it."""
        view: dict[str, Any] = self.update(loaded).message["view"]
        return view

    def broadcast(self, loaded: Loaded) -> None:
        """Send the game's public view to everyone watching it (without waiting for them)."""
        self.hub.broadcast(loaded.stored.id, self.update(loaded), loaded.stored.revision)

    @contextmanager
    def following(self, game_id: str, seen: int) -> Iterator[None]:
        """While the block runs, the changes to the game that this process did not make
        (another server process on the same database did) are broadcast: as PostgreSQL
        announces them (:meth:`_changed_elsewhere`), or else found by one poll of every game
        watched here (:meth:`_poll_followed`), however many games and watchers this process
        holds; ``seen`` is the revision the watcher entering was sent."""
        first_seen, watchers = self._following.get(game_id, (seen, 0))
        if not watchers and self.store.notifies:  # (a change announced before it joined: look)
            self._refresh(game_id, seen)
        self._following[game_id] = (first_seen, watchers + 1)
        if not self.store.notifies and self._poll is None:
            self._poll = asyncio.create_task(self._poll_followed())
        try:
            yield
        finally:
            first_seen, watchers = self._following.pop(game_id)
            if watchers > 1:
                self._following[game_id] = (first_seen, watchers - 1)
            elif not self._following and self._poll is not None:
                self._poll.cancel()
                self._poll = None

    def _changed_elsewhere(self, game_id: str, revision: int) -> None:
        """PostgreSQL announced a change of the game: broadcast it, where the game is watched
        here and the change is news."""
        news = max(self.hub.announced(game_id), self._own_changes.get(game_id, -1))
        if game_id in self._following and revision > news:
            self._refresh(game_id, news)

    def _resync(self) -> None:
        """Announcements were lost (the listening connection was): look at every game watched
        here, and at the computer's turns."""
        for game_id in self._following:
            self._refresh(game_id, self.hub.announced(game_id))
        self.computer.look_at_queue()

    def _refresh(self, game_id: str, seen: int) -> None:
        """Read the game again and broadcast it, if newer than ``seen``: one read at a time a
        game, and changes announced during a read make one more read after it (a read started
        after the latest change sees it)."""
        if game_id in self._refreshing:
            self._read_after.add(game_id)
            return
        self._refreshing[game_id] = asyncio.create_task(self._read_again(game_id, seen))

    async def _read_again(self, game_id: str, seen: int) -> None:
        try:
            loaded = await self.load(game_id)
            if loaded.stored.revision > seen:
                self.broadcast(loaded)
        except NotFound:
            pass
        except Exception:
            log.exception("reading game %s again failed", game_id)
        finally:
            del self._refreshing[game_id]
            if game_id in self._read_after:
                self._read_after.discard(game_id)
                self._refresh(game_id, self.hub.announced(game_id))

    async def _poll_followed(self) -> None:
        """Every :data:`REFRESH_SECONDS`, read the revisions of all the games watched here in
        one statement, and read again and broadcast each game whose revision is newer than
        its watchers were sent. Runs until cancelled."""
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            try:
                revisions = await asyncio.to_thread(self.store.revisions, list(self._following))
            except Exception:  # (the next poll tries again: one failure must not end them)
                log.exception("reading the revisions of the games watched here failed")
                continue
            for game_id, revision in revisions.items():
                followed = self._following.get(game_id)  # (its watchers may have left)
                if followed is None:
                    continue
                seen = max(followed[0], self.hub.announced(game_id))
                if revision > seen:
                    self._refresh(game_id, seen)
