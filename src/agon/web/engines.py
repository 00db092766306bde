"""Other programs as the arena's computer levels: configured in a TOML file (``agon serve
--engines FILE``, else ``$AGON_ENGINES``), each offered in the lobby beside Agon's own levels.

::

    [engines.my-engine]              # the level's key: a-z, 0-9 and -, at most 24 characters
    label = "My engine"              # its name in the lobby ("Computer · My engine")
    command = "bin/my-engine --gtp"  # or a list of words; no shell runs
    seconds = 2                      # its time for each move, whole seconds (default 10)
    games = ["GAME"]                 # the games it plays, by name (default: every game)

A program's path with a ``/`` in it that is not absolute is taken from the file's folder. Each
game against such a level has a process of the program of its own, started at the computer's
first turn and kept until the game ends (or until :attr:`ArenaLimits.engines_at_once` others
need the room: it is started again, and told the game's moves, when its turn comes). Agon
referees it as ``agon match`` does (:mod:`agon.study.external`): a move that is illegal, late or
missing, a crash or garbage, forfeits the game, with the reason kept in its record.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shlex
import shutil
import time
import tomllib
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agon.core.errors import AgonError, quoted
from agon.core.files import read_text_limited, user_path
from agon.core.game import Game, Move, State
from agon.games import names
from agon.search.agent import Forfeit
from agon.study.external import DEFAULT_MOVE_SECONDS, EngineSpec, ExternalEngine

log = logging.getLogger(__name__)

ENGINES_ENV = "AGON_ENGINES"
MAX_CONFIG_BYTES = 64 * 1024
MAX_LEVELS = 32
MAX_LABEL_LENGTH = 40
MAX_COMMAND_WORDS = 64
MAX_WORD_LENGTH = 4096
MAX_MOVE_SECONDS = 3600
IDLE_SECONDS = 600.0
"""A game's program that has had no turn for this long is ended (it is started again, and told
the game's moves, if the game goes on)."""
STORED_PREFIX = "engine-level:"
"""The computer's seat of a game against a configured program holds this and the level's key
(not the command, which the configuration may change)."""
_KEY = re.compile(r"[a-z0-9][a-z0-9-]{0,23}")
_FIELDS = ("label", "command", "seconds", "games")


@dataclass(frozen=True)
class EngineLevel:
    """A configured program as a computer level: its key, its name in the lobby, the program and
    its time for a move, and the games it plays (None: every game)."""

    key: str
    label: str
    engine: EngineSpec
    games: tuple[str, ...] | None = None

    def plays(self, game_name: str) -> bool:
        return self.games is None or game_name in self.games

    @property
    def stored_agent(self) -> str:
        return STORED_PREFIX + self.key

    def describe(self) -> dict[str, Any]:
        """The level as the lobby lists it."""
        return {
            "key": self.key,
            "label": self.label,
            "agent": "another program",
            "seconds": self.engine.seconds,
            "games": list(self.games) if self.games is not None else None,
        }


def level_key_of(agent: str | None) -> str | None:
    """The configured level's key where a seat's stored agent is a configured program."""
    if agent is not None and agent.startswith(STORED_PREFIX):
        return agent[len(STORED_PREFIX):]
    return None


def read_engine_levels(
    path: str | Path, reserved: Iterable[str] = ()
) -> tuple[EngineLevel, ...]:
    """The levels of the configuration file ``path``; anything wrong in it is an AgonError that
    names the file and the level. ``reserved``: keys that are taken (Agon's own levels)."""
    file = user_path(path)
    text = read_text_limited(file, MAX_CONFIG_BYTES, "a configuration of engines")
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise AgonError(f"{file} is not TOML: {error}") from None
    unknown = set(document) - {"engines"}
    if unknown:
        raise AgonError(f"{file}: unknown table {quoted(sorted(unknown)[0])}: only [engines.KEY]")
    tables = document.get("engines", {})
    if not isinstance(tables, dict) or not tables:
        raise AgonError(f"{file} configures no engine: add a table [engines.KEY]")
    if len(tables) > MAX_LEVELS:
        raise AgonError(f"{file} configures {len(tables)} engines: at most {MAX_LEVELS}")
    taken = set(reserved)
    levels = []
    for key, table in tables.items():
        where = f"{file}, [engines.{key}]"
        if not _KEY.fullmatch(key):
            raise AgonError(
                f"{where}: a level's key is at most 24 of a-z, 0-9 and -, starting with a "
                "letter or digit"
            )
        if key in taken:
            raise AgonError(f"{where}: {quoted(key)} is already a level of the arena")
        if not isinstance(table, dict):
            raise AgonError(f"{where}: must be a table of {', '.join(_FIELDS)}")
        try:
            levels.append(_level(key, table, file.parent))
        except AgonError as error:
            raise AgonError(f"{where}: {error}") from None
    return tuple(levels)


def _level(key: str, table: dict[str, Any], folder: Path) -> EngineLevel:
    unknown = sorted(set(table) - set(_FIELDS))
    if unknown:
        raise AgonError(f"unknown field {quoted(unknown[0])}: the fields are {', '.join(_FIELDS)}")
    label = table.get("label", key)
    if not isinstance(label, str) or not 0 < len(label) <= MAX_LABEL_LENGTH:
        raise AgonError(f"'label' must be a text of 1 to {MAX_LABEL_LENGTH} characters")
    if not label.isprintable():
        raise AgonError("'label' holds a control character")
    seconds = table.get("seconds", DEFAULT_MOVE_SECONDS)
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        raise AgonError("'seconds' must be a whole number of seconds, like 2")
    if not 0 < seconds <= MAX_MOVE_SECONDS:
        raise AgonError(f"'seconds' must be from 1 to {MAX_MOVE_SECONDS}, not {seconds}")
    games = table.get("games")
    if games is not None:
        if not isinstance(games, list) or not games or not all(
            isinstance(game, str) for game in games
        ):
            raise AgonError(f"'games' must be a list of game names: {', '.join(names())}")
        for game in games:
            if game not in names():
                raise AgonError(
                    f"'games': there is no game {quoted(game)}: {', '.join(names())}"
                )
    argv = _command(table.get("command"), folder)
    return EngineLevel(
        key, label, EngineSpec(argv, seconds), tuple(games) if games is not None else None
    )


def _command(command: object, folder: Path) -> tuple[str, ...]:
    """The command's words (a text split as a shell splits words, or a list of them), its
    program's path taken from ``folder`` where it is relative and has a ``/``."""
    if isinstance(command, str):
        try:
            words = shlex.split(command)
        except ValueError as error:
            raise AgonError(f"'command': {error}") from None
    elif isinstance(command, list) and all(isinstance(word, str) for word in command):
        words = list(command)
    else:
        raise AgonError("'command' must be the program and its arguments: a text or a list")
    if not words or not words[0]:
        raise AgonError("'command' names no program")
    if len(words) > MAX_COMMAND_WORDS or any(len(word) > MAX_WORD_LENGTH for word in words):
        raise AgonError(f"'command' is too long: at most {MAX_COMMAND_WORDS} words")
    if any("\0" in word for word in words):
        raise AgonError("'command' holds a NUL byte")
    if "/" not in words[0]:
        if shutil.which(words[0]) is None:
            raise AgonError(f"'command': there is no program {quoted(words[0])} on the PATH")
        return tuple(words)
    program = Path(words[0]).expanduser()
    if not program.is_absolute():
        program = folder / program
    if not program.is_file() or not os.access(program, os.X_OK):
        raise AgonError(f"'command': {program} is not a program (an executable file)")
    return (str(program), *words[1:])


def configured_levels(option: str | None, reserved: Iterable[str]) -> tuple[EngineLevel, ...]:
    """The levels of ``--engines``, else of ``$AGON_ENGINES``, else none."""
    path = option or os.environ.get(ENGINES_ENV)
    return read_engine_levels(path, reserved) if path else ()


class EngineSeats:
    """The configured programs at the games they play: one process for each game, at most
    ``at_once`` running (the one unused longest ended to make room, and any that has had no
    turn for :data:`IDLE_SECONDS`)."""

    def __init__(self, levels: Iterable[EngineLevel], at_once: int) -> None:
        self.levels: Mapping[str, EngineLevel] = {level.key: level for level in levels}
        self.at_once = at_once
        self._running: OrderedDict[str, ExternalEngine] = OrderedDict()
        """Each game's program, the one used longest ago first."""
        self._used: dict[str, float] = {}
        self._busy: set[str] = set()
        self._turns = asyncio.Semaphore(at_once)

    def running(self) -> int:
        return len(self._running)

    async def move(self, game_id: str, key: str, game: Game, state: State) -> Move:
        """The move of the program of level ``key`` in the game's position, checked by the
        rules; a :class:`Forfeit` (its program ended) where it cannot give one."""
        level = self.levels.get(key)
        if level is None:
            raise Forfeit(f"the engine level {quoted(key)} is no longer configured on this server")
        async with self._turns:
            self._busy.add(game_id)
            try:
                await self._make_room(game_id)
                engine = self._running.get(game_id)
                if engine is None:
                    engine = await asyncio.to_thread(ExternalEngine, game, level.engine)
                    self._running[game_id] = engine
                self._running.move_to_end(game_id)
                analysis = await asyncio.to_thread(engine.analyse, state.copy())
                self._used[game_id] = time.monotonic()
                return analysis.best_move
            except Forfeit as forfeit:
                engine = self._running.get(game_id)
                said = " | ".join(engine.error_lines) if engine is not None else ""
                log.warning(
                    "engine level %s forfeits game %s: %s (its standard error ended: %s)",
                    key, game_id, forfeit, said or "nothing",
                )
                await self.release(game_id)
                raise
            finally:
                self._busy.discard(game_id)

    async def release(self, game_id: str) -> None:
        """End the game's program, if it has one running."""
        engine = self._running.pop(game_id, None)
        self._used.pop(game_id, None)
        if engine is not None:
            await asyncio.to_thread(engine.close)

    async def _make_room(self, for_game: str) -> None:
        """End the programs idle too long, and, where ``for_game`` has none running and there
        is no room for it, the longest unused."""
        now = time.monotonic()
        idle = [game_id for game_id in self._running if game_id not in self._busy]
        for game_id in idle:
            crowded = for_game not in self._running and len(self._running) >= self.at_once
            if crowded or now - self._used.get(game_id, now) > IDLE_SECONDS:
                await self.release(game_id)

    def close(self) -> None:
        """End every program (the server is stopping)."""
        while self._running:
            _, engine = self._running.popitem()
            with suppress(Exception):
                engine.close()
