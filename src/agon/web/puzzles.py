"""Puzzles in the arena: each game's puzzles from the collection (:mod:`agon.study.puzzles`:
a folder of records), and, for a game the collection has none of, some found on the arena's
workers (as side work, within a time limit) and added to it.

A page is sent a puzzle's position and goal, never its answer: the move a player tries is
judged here, and answered with the line that follows it (the answer's line to the end, or the
refutation of a wrong move), each position of it as a board.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agon.core.errors import AgonError, quoted
from agon.core.game import Game, Move
from agon.games import make_game, plugin
from agon.solve.facts import is_small_board
from agon.study.puzzles import Puzzle, collection_folder, load_collection, save_puzzle
from agon.study.values import Value, describe
from agon.web import analysts, views
from agon.web.errors import NotFound
from agon.web.thinking import Computer, SideWork

log = logging.getLogger(__name__)

RELOAD_SECONDS = 60.0
"""The collection is read again at most this often."""
FIND_COUNT = 6
"""Puzzles the arena looks for at once, for a game the collection has none of."""
FIND_SECONDS = 30.0
"""How long the arena looks for them."""
FIND_AGAIN_SECONDS = 300.0
"""A search that found nothing is not tried again for this long."""


def puzzle_variant(game_name: str) -> Game:
    """The variant the arena finds puzzles in: of the game's small examples (the ones its
    solver solves in a moment), the one with the most moves at the start; else its default."""
    found = plugin(game_name)
    examples = [make_game(game_name, options) for options in found.tooling.variant_examples]
    small = [game for game in examples if is_small_board(game)]
    if not small:
        default: Game = found.make()
        return default
    return max(small, key=lambda game: len(game.new_state().legal_moves()))


@dataclass
class Search:
    """A search for a game's puzzles: under way, or ended (and when)."""

    task: asyncio.Task[None] | None = None
    ended: float = 0.0
    found: int = 0


class Puzzles:
    """The puzzles the arena serves, game by game."""

    def __init__(self, computer: Computer, side_work: SideWork,
                 folder: Path | None = None) -> None:
        self.computer = computer
        self.side_work = side_work
        self._folder = folder
        self._read: dict[str, tuple[float, list[Puzzle]]] = {}
        self._kept: dict[str, list[Puzzle]] = {}
        """Puzzles found here that could not be saved to the collection."""
        self._searches: dict[str, Search] = {}

    @property
    def folder(self) -> Path:
        return self._folder or collection_folder()

    def close(self) -> None:
        for search in self._searches.values():
            if search.task is not None:
                search.task.cancel()

    async def of_game(self, game_name: str) -> list[Puzzle]:
        """The game's puzzles, by difficulty then key (read again at most every
        :data:`RELOAD_SECONDS`)."""
        read = self._read.get(game_name)
        if read is None or time.monotonic() - read[0] > RELOAD_SECONDS:
            listed = await asyncio.to_thread(load_collection, self.folder, make_game, game_name)
            read = (time.monotonic(), listed)
            self._read[game_name] = read
        keys = {puzzle.key for puzzle in read[1]}
        extra = [puzzle for puzzle in self._kept.get(game_name, []) if puzzle.key not in keys]
        return read[1] + extra

    async def find(self, game_name: str, key: str) -> Puzzle:
        for puzzle in await self.of_game(game_name):
            if puzzle.key == key:
                return puzzle
        raise NotFound(f"there is no puzzle {quoted(key)}")

    async def next(self, game_name: str, after: str | None) -> dict[str, Any]:
        """The puzzle after ``after`` (by key; the first where None or unknown, and again
        the first after the last), or, where the game has none, the state of the search for
        some (``finding``, or ``none``)."""
        listed = await self.of_game(game_name)
        if not listed:
            return self._search_state(game_name)
        keys = [puzzle.key for puzzle in listed]
        index = (keys.index(after) + 1) % len(keys) if after in keys else 0
        puzzle = listed[index]
        return {
            "status": "ready", "index": index + 1, "count": len(listed),
            "puzzle": public_json(puzzle),
        }

    def _search_state(self, game_name: str) -> dict[str, Any]:
        search = self._searches.get(game_name)
        if search is None or (
            search.task is not None and search.task.done()
            and time.monotonic() - search.ended > FIND_AGAIN_SECONDS
        ):
            search = Search()
            search.task = asyncio.create_task(self._search(game_name, search))
            self._searches[game_name] = search
        if search.task is not None and not search.task.done():
            return {"status": "finding", "seconds": FIND_SECONDS}
        return {
            "status": "none",
            "detail": "no puzzle of this game has been found yet: try again later",
        }

    async def _search(self, game_name: str, search: Search) -> None:
        try:
            game = puzzle_variant(game_name)
            async with self.side_work.slot("analysis"):
                records = await self.computer.run(
                    analysts.find_puzzles, game.name, game.options(), FIND_COUNT,
                    FIND_SECONDS, random.randrange(2**31), timeout=FIND_SECONDS + 60,
                )
            found = []
            for record in records:
                try:
                    found.append(Puzzle.from_record(record, make_game))
                except AgonError:
                    log.warning("a puzzle found does not read back; left out")
            await asyncio.to_thread(self._keep, game_name, found)
            search.found = len(found)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("the search for puzzles failed")
        finally:
            search.ended = time.monotonic()

    def _keep(self, game_name: str, found: list[Puzzle]) -> None:
        """Add puzzles found to the collection (where it can be written; else keep them here)."""
        for puzzle in found:
            try:
                save_puzzle(puzzle, self.folder)
            except (AgonError, OSError) as error:
                log.warning("a puzzle could not be saved: %s", error)
                self._kept.setdefault(game_name, []).append(puzzle)
        self._read.pop(game_name, None)

    async def attempt(self, game_name: str, key: str, text: str) -> dict[str, Any]:
        """The move ``text`` tried in the puzzle ``key``: right or wrong, what it is worth
        (exactly, in words, from the mover's view), and the line that follows it played out."""
        puzzle = await self.find(game_name, key)
        game = puzzle.game
        state = puzzle.state()
        move = game.parse_move(text)
        reason = state.illegal_reason(move)
        if reason is not None:
            state.play(move)  # (raises IllegalMove naming the rule)
        correct = move == puzzle.answer
        line = puzzle.line if correct else puzzle.refutations.get(move, [move])
        value = Value(puzzle.move_values[move], True)
        words = describe(game, value, puzzle.to_move)
        return {
            "move": game.format_move(move),
            "correct": correct,
            "words": words,
            "answer": game.format_move(puzzle.answer) if correct else None,
            "line": [game.format_move(played) for played in line],
            "boards": _boards(puzzle, line),
            "goal": puzzle.goal,
        }


def _boards(puzzle: Puzzle, line: list[Move]) -> list[str]:
    """The board after each move of ``line`` from the puzzle's position."""
    state = puzzle.state()
    boards = []
    for move in line:
        state.play(move)
        boards.append(views.board_svg(state))
    return boards


def public_json(puzzle: Puzzle) -> dict[str, Any]:
    """What a page is sent of a puzzle: its position and goal, not its answer."""
    game = puzzle.game
    state = puzzle.state()
    return {
        "key": puzzle.key,
        "game": game.name,
        "title": game.title,
        "variant": game.options(),
        "description": game.description,
        "position": puzzle.position,
        "to_move": puzzle.to_move.label,
        "goal": puzzle.goal,
        "difficulty": puzzle.difficulty,
        "click_help": views.click_help(game.name),
        "has_pass": game.pass_move is not None,
        "svg": views.board_svg(state),
    }
