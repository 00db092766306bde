"""Game records: JSON files that say which game was played, by whom, and every move.

A record stores moves in canonical notation so that people can read it, and replays them
through the rules engine when loaded, so a record that breaks the rules is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agon.core.errors import AgonError, RecordError, quoted
from agon.core.files import replace_file
from agon.core.game import Game, State

RECORD_FORMAT = "agon-record"
RECORD_VERSION = 1

GameFactory = Callable[[str, Mapping[str, Any]], Game]
"""Builds a game from its registry name and options (``agon.games.make_game``)."""


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


@dataclass
class GameRecord:
    game: Game
    moves: list[str]
    players: dict[str, str] = field(default_factory=lambda: {"black": "?", "white": "?"})
    start_position: str | None = None
    started: str = field(default_factory=now_iso)
    finished: str | None = None
    result: str | None = None
    reason: str | None = None

    @classmethod
    def from_state(
        cls,
        state: State,
        players: Mapping[str, str] | None = None,
        start_position: str | None = None,
        started: str | None = None,
    ) -> GameRecord:
        """Record the moves played on ``state`` (from ``start_position`` if it was loaded)."""
        return cls(
            game=state.game,
            moves=[state.game.format_move(move) for move in state.history],
            players=dict(players or {"black": "?", "white": "?"}),
            start_position=start_position,
            started=started or now_iso(),
            finished=now_iso() if state.is_over else None,
            result=state.result,
            reason=state.end_reason,
        )

    def replay(self) -> State:
        """The final state, every move checked by the rules."""
        try:
            state = (
                self.game.parse_position(self.start_position)
                if self.start_position
                else self.game.new_state()
            )
        except AgonError as error:
            raise RecordError(f"the start position does not load: {error}") from None
        for index, text in enumerate(self.moves, start=1):
            try:
                state.play_text(text)
            except AgonError as error:
                message = f"move {index} ({quoted(text)}) does not replay: {error}"
                raise RecordError(message) from None
        return state

    def states(self) -> list[State]:
        """The position before the first move and after each move."""
        final = self.replay()
        snapshots = [final.copy()]
        while final.history:
            final.undo()
            snapshots.append(final.copy())
        return snapshots[::-1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "game": self.game.name,
            "variant": self.game.options(),
            "players": self.players,
            "start_position": self.start_position,
            "moves": self.moves,
            "result": self.result,
            "reason": self.reason,
            "started": self.started,
            "finished": self.finished,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    def save(self, path: str | Path) -> None:
        """Write the record; the file is replaced only once the new text is complete."""
        target = Path(path)
        try:
            replace_file(target, self.to_json())
        except OSError as error:
            raise RecordError(f"cannot write {target}: {error.strerror or error}") from None

    @classmethod
    def from_dict(cls, data: Any, make_game: GameFactory) -> GameRecord:
        if not isinstance(data, dict):
            raise RecordError("a record must be a JSON object")
        if data.get("format", RECORD_FORMAT) != RECORD_FORMAT:
            raise RecordError(f"not an Agon record (format {quoted(data.get('format'))})")
        name = data.get("game")
        if not isinstance(name, str):
            raise RecordError("the record does not say which game it is ('game' is missing)")
        variant = data.get("variant", {})
        if not isinstance(variant, dict):
            raise RecordError("'variant' must be an object of options")
        moves = data.get("moves", [])
        if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
            raise RecordError("'moves' must be a list of move texts")
        players = data.get("players") or {"black": "?", "white": "?"}
        if not isinstance(players, dict):
            raise RecordError("'players' must be an object with 'black' and 'white'")
        try:
            game = make_game(name, variant)
        except AgonError as error:
            raise RecordError(f"bad game in record: {error}") from None
        record = cls(
            game=game,
            moves=list(moves),
            players={str(k): str(v) for k, v in players.items()},
            start_position=_optional_str(data, "start_position"),
            started=_optional_str(data, "started") or now_iso(),
            finished=_optional_str(data, "finished"),
            result=_optional_str(data, "result"),
            reason=_optional_str(data, "reason"),
        )
        record.replay()  # refuse a record that breaks the rules, at load time
        return record

    @classmethod
    def from_json(cls, text: str, make_game: GameFactory) -> GameRecord:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise RecordError(f"not valid JSON: {error.msg} at line {error.lineno}") from None
        return cls.from_dict(data, make_game)

    @classmethod
    def load(cls, path: str | Path, make_game: GameFactory) -> GameRecord:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as error:
            raise RecordError(f"cannot read {path}: {error.strerror or error}") from None
        except UnicodeDecodeError:
            raise RecordError(f"{path} is not a text file") from None
        return cls.from_json(text, make_game)


def _optional_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise RecordError(f"'{key}' must be a string")
    return value
