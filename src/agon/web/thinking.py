"""The computer's side of the arena's games: it thinks in worker processes, so that the event
loop stays free for other games, and plays its turns as they come.

Each game has a home worker (by its id): its turns are thought out there, by the agent that
worker keeps for the game (:func:`agon.web.levels.kept_agent`), and after each of the computer's
moves that agent goes on thinking on the opponent's time (:func:`agon.web.levels.ponder`), until
the opponent moves or other work comes to the worker. Work of no game (hints, analyses) goes
to the worker with the least to do.

The turns wait in the database (:meth:`agon.web.store.Store.claim_turn`), queued by the change
that made them, oldest first, so that every game waits its turn; a few takers in each server
process take them. On PostgreSQL a turn being thought about is locked to its taker's process:
if that process dies, another takes the turn, and a turn is never played twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import multiprocessing
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from concurrent.futures import BrokenExecutor, Executor, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import asynccontextmanager, suppress
from typing import Any, Protocol, TypeVar

from agon.core.errors import AgonError
from agon.core.game import Move
from agon.core.workers import die_with_parent
from agon.search.agent import Forfeit
from agon.search.registry import make_agent
from agon.web.engines import EngineSeats, level_key_of
from agon.web.errors import Conflict
from agon.web.guard import TooManyRequests
from agon.web.levels import (
    as_work,
    listen_for_stops,
    ponder,
    seconds_a_move,
    think,
    warm_up,
)
from agon.web.replay import Loaded
from agon.web.store import Store, StoredGame, TurnClaim

log = logging.getLogger(__name__)

THINKING_TIMEOUT_S = 120.0
FAILED_TURN_S = 30.0
"""How long a turn whose playing failed here (it is logged) is left to other processes before
this one tries it again."""
LOOK_AGAIN_S = 1.0
"""How often an idle taker looks at the queue unasked: for the turns that a process which
died was thinking about (nothing announces those), and, on SQLite, those that another process
queued."""
KEPT_PONDERED = 1000
SIDE_WORK_POLL_S = 0.1
"""How often work waiting for a worker (a review's next position) asks again."""

T = TypeVar("T")


class GameAccess(Protocol):
    """What the computer needs of the arena to play its turns."""

    store: Store

    def lock(self, game_id: str) -> asyncio.Lock: ...

    async def load(self, game_id: str) -> Loaded: ...

    async def store_move(
        self, loaded: Loaded, move: Move, claim: TurnClaim | None = None
    ) -> Loaded: ...

    async def announce(self, game_id: str, stored: Loaded | None = None) -> Loaded: ...

    async def forfeit(
        self, loaded: Loaded, colour: str, reason: str, claim: TurnClaim | None = None
    ) -> None: ...


def start_thinker(server: int, warm: bool, stop: Any) -> None:
    """Run first in each worker process: end with the ``server`` process, however it ends (a
    server killed by SIGKILL must not leave its thinkers running); listen for ``stop``
    (:func:`agon.web.levels.listen_for_stops`); and, if ``warm``, load the agents' compiled
    kernels before a game needs them."""
    die_with_parent(server)
    listen_for_stops(stop)
    if warm:
        warm_up()


def _thinking_about(stored: StoredGame, spec: str) -> tuple[Any, ...]:
    """What a worker is sent to think about the game's position with agent ``spec``
    (:func:`agon.web.levels.think`'s arguments, and :func:`~agon.web.levels.ponder`'s first)."""
    seed = seed_for(stored.id, len(stored.moves))
    return stored.game, stored.options, list(stored.moves), spec, seed, stored.id


def seed_for(game_id: str, ply: int) -> int:
    """The agent's seed for one turn of one game."""
    digest = hashlib.sha256(f"{game_id}:{ply}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


class Computer:
    """The computer's seat in every game: its thinking, in ``workers`` processes (or threads,
    where ``kind`` is ``thread``), or by the configured programs of ``engines``; and its turns,
    each played as soon as it comes."""

    def __init__(
        self,
        games: GameAccess,
        *,
        workers: int,
        kind: str,
        warm: bool,
        engines: EngineSeats | None = None,
        ponder_seconds: float = 0.0,
    ) -> None:
        self._games = games
        self.engines = engines or EngineSeats((), 1)
        self._workers = workers
        self._kind = kind
        self._warm = warm
        self._ponder_seconds = ponder_seconds
        self._executors: list[Executor | None] = [None] * workers
        self._stops: list[Any] = [None] * workers
        """Each worker's Event, set when work is given to it: a ponder there gives way."""
        self._busy = [0] * workers
        """Each worker's work given and not done (ponders left out)."""
        self._ponders: set[asyncio.Task[None]] = set()
        self.pondered: OrderedDict[str, int] = OrderedDict()
        """The work of the latest ponder (iterations, nodes) of the games pondered last
        (:data:`KEPT_PONDERED`), as it ended."""
        self._takers: list[asyncio.Task[None]] = []
        self._held: set[tuple[str, int]] = set()
        """The turns this process's takers hold."""
        self._failed: dict[tuple[str, int], float] = {}
        """The turns whose playing failed here lately, and when (:data:`FAILED_TURN_S`)."""
        self._asked = 0
        """How many times the takers were told of new turns (:meth:`look_at_queue`)."""
        self._wake: asyncio.Event | None = None
        self._claiming: asyncio.Lock | None = None
        """Taken to claim a turn and hold it, so that no two takers here take the same one."""

    def executor(self, index: int) -> Executor:
        """Worker ``index``, started where it is not running."""
        executor = self._executors[index]
        if executor is None:
            if self._kind == "thread":
                stop: Any = threading.Event()
                executor = ThreadPoolExecutor(
                    1, thread_name_prefix=f"agent-{index}", initializer=listen_for_stops,
                    initargs=(stop,),
                )
            else:
                # spawn, not fork: the server process has threads, and forking those is unsafe
                context = multiprocessing.get_context("spawn")
                stop = context.Event()
                executor = ProcessPoolExecutor(
                    1, mp_context=context, initializer=start_thinker,
                    initargs=(os.getpid(), self._warm, stop),
                )
            self._executors[index], self._stops[index] = executor, stop
        return executor

    def home_of(self, game_id: str) -> int:
        """The worker where game ``game_id`` is thought about."""
        digest = hashlib.sha256(game_id.encode()).digest()
        return int.from_bytes(digest[:4], "big") % self._workers

    def _least_busy(self) -> int:
        return min(range(self._workers), key=lambda index: self._busy[index])

    def start(self) -> None:
        """Start the worker processes now, so that they are ready before the first game, and
        the takers of the computer's turns: two for each worker (one thinks while the other
        reads or stores), and one for each configured program that may run."""
        if self._kind == "process":
            for index in range(self._workers):
                self.executor(index).submit(int)
        self._wake = asyncio.Event()
        self._claiming = asyncio.Lock()
        takers = 2 * self._workers + (self.engines.at_once if self.engines.levels else 0)
        self._takers = [asyncio.create_task(self._take_turns()) for _ in range(takers)]

    async def close(self) -> None:
        """Stop taking turns (those held are left queued, for the next start or another
        process) and shut the worker pool down."""
        for task in [*self._takers, *self._ponders]:
            task.cancel()
        await asyncio.gather(*self._takers, *self._ponders, return_exceptions=True)
        self.engines.close()
        for index, executor in enumerate(self._executors):
            if executor is not None:
                self._stops[index].set()
                executor.shutdown(wait=True, cancel_futures=True)
        # let go of the workers' events now: a process's semaphores are released as they are
        # collected (the server's exit does not run multiprocessing's finalizers, so the
        # resource tracker reported them leaked)
        self._executors = [None] * self._workers
        self._stops = [None] * self._workers

    def look_at_queue(self) -> None:
        """Tell the takers that a turn was queued (here, or announced by another process)."""
        self._asked += 1
        if self._wake is not None:
            self._wake.set()

    def ensure_thinking(self, loaded: Loaded) -> None:
        """Where the computer is to move, make sure its turn is being taken: its turn was
        queued with the change that made it, so the takers need only be told."""
        if loaded.computer_to_move:
            self.look_at_queue()

    async def _take_turns(self) -> None:
        """One taker: the oldest turn queued that no one holds, played; again, until
        cancelled."""
        assert self._wake is not None and self._claiming is not None
        while True:
            asked = self._asked
            async with self._claiming:
                claim = await self._claim()
                if claim is not None:
                    self._held.add(claim.key)
            if claim is None:
                if self._asked == asked:  # (else a turn came while it looked: look again)
                    self._wake.clear()
                    with suppress(TimeoutError):
                        async with asyncio.timeout(LOOK_AGAIN_S):
                            await self._wake.wait()
                continue
            try:
                await self._play_turn(claim)
            except Exception:
                log.exception("the computer's turn failed in game %s", claim.game_id)
                self._failed[claim.key] = time.monotonic()
            finally:
                self._held.discard(claim.key)
                # (after a cancellation too: the turn stays queued for another taker)
                await asyncio.shield(asyncio.to_thread(claim.release))

    async def _claim(self) -> TurnClaim | None:
        now = time.monotonic()
        self._failed = {
            key: when for key, when in self._failed.items() if now - when < FAILED_TURN_S
        }
        try:
            return await asyncio.to_thread(
                self._games.store.claim_turn, self._held | set(self._failed)
            )
        except Exception:
            log.exception("the computer's turns could not be read")
            return None

    async def _play_turn(self, claim: TurnClaim) -> None:
        """Think about the claimed turn and play it, or drop it where it is no longer the
        computer's (the game changed, or it was queued for a game whose turn the queue could
        not tell, see the migration ``0002``)."""
        game_id = claim.game_id
        loaded = await self._games.load(game_id)
        if loaded.stored.revision != claim.revision or not loaded.computer_to_move:
            await asyncio.to_thread(claim.drop)
            if not loaded.active:
                await self.engines.release(game_id)
            return
        colour = loaded.to_move
        assert colour is not None
        spec = loaded.stored.agents[colour] or "random"
        choice = await self._choose(loaded, spec)
        stored = None
        try:
            async with self._games.lock(game_id):
                if isinstance(choice, Forfeit):
                    await self._games.forfeit(loaded, colour, str(choice), claim)
                else:
                    move = self._checked(loaded, choice, spec)
                    stored = await self._games.store_move(loaded, move, claim)
        except Conflict:
            return  # undone or resigned meanwhile: the turn was dropped, and any new one queued
        after = await self._games.announce(game_id, stored)
        self._start_pondering(after, spec)

    def _start_pondering(self, loaded: Loaded, spec: str) -> None:
        """Where the opponent of the computer's agent ``spec`` is to move, let the agent think
        on their time in the game's home worker (agents that think for a time: one that
        answers at once, or counts, would find nothing; programs are their own business)."""
        if (
            self._ponder_seconds <= 0 or not loaded.active or loaded.computer_to_move
            or level_key_of(spec) is not None or not seconds_a_move(spec)
        ):
            return
        stored = loaded.stored
        index = self.home_of(stored.id)
        arguments = (*_thinking_about(stored, spec), self._ponder_seconds)

        async def pondering() -> None:
            loop = asyncio.get_running_loop()
            try:
                work = await loop.run_in_executor(self.executor(index), ponder, *arguments)
            except Exception:
                log.exception("pondering failed in game %s", stored.id)
                return
            self.pondered[stored.id] = work
            self.pondered.move_to_end(stored.id)
            while len(self.pondered) > KEPT_PONDERED:
                self.pondered.popitem(last=False)

        task = asyncio.create_task(pondering())
        self._ponders.add(task)
        task.add_done_callback(self._ponders.discard)

    async def _choose(self, loaded: Loaded, spec: str) -> str | Forfeit:
        """The move of the seat's agent (an agent's spec, or a configured program's level),
        as text; a program that cannot give one forfeits."""
        key = level_key_of(spec)
        if key is None:
            return str((await self.analyse(loaded, spec))["move"])
        try:
            move = await self.engines.move(loaded.stored.id, key, loaded.game, loaded.state)
        except Forfeit as forfeit:
            return forfeit
        return loaded.game.format_move(move)

    @staticmethod
    def _checked(loaded: Loaded, text: str, spec: str) -> Move:
        """The agent's move played on ``loaded.state``; a random one where it is illegal (an
        agent of Agon's own with a bug: logged)."""
        try:
            return loaded.state.play_text(text)
        except AgonError:
            log.exception("agent %s chose an illegal move in game %s", spec, loaded.stored.id)
            move = make_agent("random", loaded.game).choose(loaded.state)
            loaded.state.play(move)
            return move

    async def run(
        self, function: Callable[..., T], *arguments: Any, timeout: float = THINKING_TIMEOUT_S,
        home: str | None = None,
    ) -> T:
        """``function(*arguments)`` thought out by a worker (a plain top-level function of
        plain values): game ``home``'s worker, unless it has work and another has none; else
        the one with the least to do. A ponder there gives way to it. A worker that died
        (killed, out of memory) is started afresh and the call made once more; a second death
        is raised."""
        loop = asyncio.get_running_loop()
        index = self._least_busy()
        if home is not None and (self._busy[index] > 0 or self._busy[self.home_of(home)] == 0):
            index = self.home_of(home)
        self._busy[index] += 1
        try:
            for attempt in range(2):
                executor = self.executor(index)
                self._stops[index].set()
                try:
                    return await asyncio.wait_for(
                        loop.run_in_executor(executor, as_work, function, *arguments), timeout
                    )
                except BrokenExecutor:
                    log.warning("an agents' worker died; starting a new one")
                    if self._executors[index] is executor:
                        self._executors[index] = None
                        executor.shutdown(wait=False, cancel_futures=True)
                    if attempt:
                        raise
        finally:
            self._busy[index] -= 1
        raise AssertionError("unreachable")

    async def analyse(self, loaded: Loaded, spec: str) -> dict[str, Any]:
        """The agent ``spec``'s analysis of the position, thought out in the worker pool; a
        random move where the agent fails."""
        stored = loaded.stored
        seed = seed_for(stored.id, len(stored.moves))
        try:
            return await self.run(think, *_thinking_about(stored, spec), home=stored.id)
        except Exception:
            log.exception("agent %s failed in game %s", spec, stored.id)
        log.warning("playing a random move for the computer in game %s", stored.id)
        agent = make_agent("random", loaded.game, seed=seed)
        move = loaded.game.format_move(agent.choose(loaded.state))
        return {"move": move, "value": None, "pv": [], "proven": False, "spec": "random"}


class SideWork:
    """What the workers think out besides the computer's turns (hints, analyses): at most
    ``at_once[kind]`` of each kind at a time, and all kinds together at most one fewer than
    the ``workers`` (where there are two or more), so that the computer's own turns always
    find a worker. Work that waits for a worker gets one in the order it came."""

    def __init__(self, workers: int, at_once: dict[str, int]) -> None:
        self.total = max(1, workers - 1)
        self.at_once = dict(at_once)
        self.running = dict.fromkeys(at_once, 0)
        self._waiting: deque[object] = deque()

    def busy(self, kind: str) -> bool:
        return (
            self.running[kind] >= self.at_once[kind]
            or sum(self.running.values()) >= self.total
        )

    @asynccontextmanager
    async def slot(
        self, kind: str, refusal: str | None = None, stop: Callable[[], bool] | None = None
    ) -> AsyncIterator[bool]:
        """Hold a worker for work of ``kind``: at once, or :class:`TooManyRequests` saying
        ``refusal`` where one is given; else waits for one, after the work that waited before
        (yielding False, and taking none, where ``stop`` says to stop waiting)."""
        if refusal is not None and self.busy(kind):
            raise TooManyRequests(refusal, 2)
        if refusal is None:
            turn = object()
            self._waiting.append(turn)
            try:
                while self.busy(kind) or self._waiting[0] is not turn:
                    if stop is not None and stop():
                        yield False
                        return
                    await asyncio.sleep(SIDE_WORK_POLL_S)
            finally:
                self._waiting.remove(turn)
        self.running[kind] += 1
        try:
            yield True
        finally:
            self.running[kind] -= 1
