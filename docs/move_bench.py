"""The arena's path for a move, measured in one process: CPU time a move, and where it goes.

    .venv/bin/python docs/move_bench.py [--games 40] [--at-once 20] [--profile FILE]

Plays ``--games`` friend games of Alternator 8×8 by random moves, ``--at-once`` at a time,
through the arena's ASGI app with ``httpx`` (no sockets, no server: the client's work is in
the figure too), on a throw-away SQLite file, with no one watching (a move's broadcast is
built and offered to no socket). Prints moves, CPU seconds, CPU a move, moves a second (of
the wall clock) and the database's commits.
With ``--profile``, the run is profiled (cProfile) and the functions that took the most time,
with what they called, are printed; the stats are kept in FILE. Run it on two checkouts in
turns (``PYTHONPATH=CHECKOUT/src``) to compare them: figures from one run are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import event

from agon.games import make_game
from agon.web.app import create_app
from agon.web.config import ArenaLimits


def random_game(seed: int) -> list[str]:
    """The moves of a random game of Alternator 8×8, as text (chosen before the clock starts,
    so that the client's own rules are not in the figure)."""
    game = make_game("alternator", {"width": 8, "height": 8})
    state = game.new_state()
    chooser = random.Random(seed)
    moves = []
    while not state.is_over:
        move = chooser.choice(state.legal_moves())
        moves.append(game.format_move(move))
        state.play(move)
    return moves


async def play_one(client: httpx.AsyncClient, moves: list[str]) -> int:
    body = {"game": "alternator", "options": {"width": 8, "height": 8, "komi": 3.5},
            "opponent": "friend", "colour": "black"}
    answer = await client.post("/api/games", json=body)
    answer.raise_for_status()
    created = answer.json()
    tokens = [created["token"], created["invite_token"]]
    for ply, move in enumerate(moves):
        answer = await client.post(
            f"/api/games/{created['id']}/moves", json={"move": move, "revision": ply},
            headers={"X-Agon-Token": tokens[ply % 2]},
        )
        answer.raise_for_status()
    return len(moves)


async def play_all(database: Path, games: int, at_once: int) -> tuple[int, float, float, int]:
    limits = ArenaLimits(games_per_minute=1_000_000, reads_per_minute=1_000_000)
    app = create_app(str(database), executor="thread", workers=1, warm=False, limits=limits)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://arena") as client:
            await play_one(client, random_game(-1))  # (unmeasured: imports, first views)
            games_moves = [random_game(seed) for seed in range(games)]
            gate = asyncio.Semaphore(at_once)

            async def gated(moves: list[str]) -> int:
                async with gate:
                    return await play_one(client, moves)

            commits = [0]
            event.listen(app.state.arena.store.engine, "commit", lambda _: commits.__setitem__(
                0, commits[0] + 1))
            started, wall = time.process_time(), time.perf_counter()
            moves = sum(await asyncio.gather(*(gated(moves) for moves in games_moves)))
            return moves, time.process_time() - started, time.perf_counter() - wall, commits[0]


async def _inline(function: Any, /, *arguments: Any, **keywords: Any) -> Any:
    """``asyncio.to_thread`` run in the event loop's thread, where the profile sees it (the
    arena's database work runs in threads)."""
    return function(*arguments, **keywords)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--at-once", type=int, default=20)
    parser.add_argument("--profile", type=Path)
    arguments = parser.parse_args()
    # httpx's ASGI transport asks sniffio whether trio runs, on every request: where sniffio is
    # not installed, each failed import searches the path again (the client's largest cost)
    sys.modules.setdefault("sniffio", None)  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory() as folder:
        database = Path(folder) / "arena.db"
        profile = cProfile.Profile() if arguments.profile else None
        if profile is not None:
            asyncio.to_thread = _inline  # type: ignore[assignment]
            profile.enable()
        moves, seconds, wall, commits = asyncio.run(
            play_all(database, arguments.games, arguments.at_once)
        )
        if profile is not None:
            profile.disable()
            profile.dump_stats(arguments.profile)
            stats = pstats.Stats(str(arguments.profile)).sort_stats("tottime")
            stats.print_stats(40)
    print(f"{moves} moves, {seconds:.2f} CPU s, {1000 * seconds / moves:.3f} ms a move, "
          f"{moves / wall:.0f} moves a second, {commits} commits")


if __name__ == "__main__":
    main()
