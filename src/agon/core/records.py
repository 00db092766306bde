"""Game records: JSON files that say which game was played, by whom, and every move.

A record stores moves in canonical notation so that people can read it, and replays them
through the rules engine when loaded, so a record that breaks the rules is refused.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agon.core.errors import AgonError, RecordError, quoted, shortened
from agon.core.files import read_text_limited, replace_file
from agon.core.game import MAX_POSITION_LENGTH, Game, State
from agon.core.player import Player

RECORD_FORMAT = "agon-record"
RECORD_VERSION = 1
READ_VERSIONS = (1,)
"""The record versions this Agon reads (a record without one is taken for the current)."""
MAX_RECORD_BYTES = 16 * 1024 * 1024
"""A record is a few kilobytes; a bigger file is not read (a game of this size would have
hundreds of thousands of moves)."""
MAX_JSON_DEPTH = 20
"""The deepest nesting of arrays and objects a JSON document read may have (a record's is
2): deeper ones are refused before they are parsed, which would take Python's stack."""

MAX_NAME_LENGTH = 100
MAX_RESULT_LENGTH = 32
MAX_REASON_LENGTH = 200
MAX_MOMENT_LENGTH = 64
"""The longest texts a record's fields hold (a player's name, the result, the reason the game
ended, a date): longer ones are refused, not shown."""
EARLY_END = re.compile(r"[BW]\+[RF]")
"""A result before the rules end the game: a resignation (``+R``) or a forfeit (``+F``), as SGF
writes them."""

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
        if self.start_position is not None and len(self.start_position) > MAX_POSITION_LENGTH:
            raise RecordError(
                f"the start position is {len(self.start_position):,} characters long: at most "
                f"{MAX_POSITION_LENGTH:,} are read"
            )
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
        version = data.get("version", RECORD_VERSION)
        if type(version) is not int or version not in READ_VERSIONS:
            readable = ", ".join(map(str, READ_VERSIONS))
            raise RecordError(
                f"a record of version {quoted(version)}: this Agon reads version {readable}"
            )
        name = data.get("game")
        if not isinstance(name, str):
            raise RecordError("the record does not say which game it is ('game' is missing)")
        variant = data.get("variant", {})
        if not isinstance(variant, dict):
            raise RecordError("'variant' must be an object of options")
        moves = data.get("moves", [])
        if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
            raise RecordError("'moves' must be a list of move texts")
        try:
            game = make_game(name, variant)
        except AgonError as error:
            raise RecordError(f"bad game in record: {error}") from None
        record = cls(
            game=game,
            moves=list(moves),
            players=_players(data.get("players")),
            start_position=_text_field(data, "start_position", MAX_POSITION_LENGTH),
            started=_moment_field(data, "started") or now_iso(),
            finished=_moment_field(data, "finished"),
            result=_text_field(data, "result", MAX_RESULT_LENGTH),
            reason=_text_field(data, "reason", MAX_REASON_LENGTH),
        )
        record._check_outcome(record.replay())  # refuse a record that breaks the rules
        return record

    def _check_outcome(self, final: State) -> None:
        """The record's result agrees with its moves: the rules' result where they ended the
        game, else none or a resignation; and a game with a result has ended, and the other
        way round. What is left out where the rules ended the game is theirs (and the game is
        taken to have finished when it started, so that it is not offered to go on with)."""
        if final.is_over:
            if self.result not in (None, final.result):
                raise RecordError(
                    f"'result' is {quoted(self.result)}, but the moves end the game "
                    f"{final.result} ({final.end_reason})"
                )
            self.result = final.result
            self.reason = self.reason or final.end_reason
            self.finished = self.finished or self.started
        elif self.result is not None and not EARLY_END.fullmatch(self.result):
            raise RecordError(
                f"'result' is {quoted(self.result)}, but the game is not over after its moves "
                "(only a resignation, B+R or W+R, or a forfeit, B+F or W+F, ends it early)"
            )
        if (self.result is None) != (self.finished is None):
            given, missing = ("result", "finished") if self.finished is None else (
                "finished", "result")
            raise RecordError(f"'{given}' is given but '{missing}' is not: has the game ended?")

    @classmethod
    def from_json(cls, text: str, make_game: GameFactory) -> GameRecord:
        try:
            data = parse_json(text)
        except AgonError as error:
            raise RecordError(str(error)) from None
        return cls.from_dict(data, make_game)

    @classmethod
    def load(cls, path: str | Path, make_game: GameFactory) -> GameRecord:
        """The record in the file ``path`` (a regular file of at most
        :data:`MAX_RECORD_BYTES`), every move checked; :class:`RecordError` naming what is
        wrong."""
        try:
            text = read_text_limited(Path(path), MAX_RECORD_BYTES, "a game record")
        except AgonError as error:
            raise RecordError(str(error)) from None
        return cls.from_json(text, make_game)


_STRINGS = re.compile(r'"(?:[^"\\]++|\\[\s\S]?)*+"?')
"""A JSON string; one left open runs to the end (so that no text makes the search go back)."""
_NOT_BRACKETS = re.compile(r"[^][{}]+")


def nests_deeper(text: str, limit: int) -> bool:
    """Whether arrays and objects nest more than ``limit`` deep somewhere in the JSON text
    ``text`` (brackets in strings not counted; a text that is not JSON gets some answer, and
    is the parser's to refuse)."""
    depth = 0
    for bracket in _NOT_BRACKETS.sub("", _STRINGS.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > limit:
            return True
    return False


def parse_json(text: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The JSON document ``text``, nested at most ``max_depth`` deep (checked before parsing:
    Python's parser recurses); :class:`AgonError` naming what is wrong, a number of more
    digits than Python converts included."""
    if nests_deeper(text, max_depth):
        raise AgonError(f"the JSON nests arrays or objects over {max_depth} deep")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise AgonError(f"not valid JSON: {error.msg} at line {error.lineno}") from None
    except ValueError as error:  # (an integer of more than 4,300 digits)
        raise AgonError(f"not JSON Agon reads: {shortened(str(error))}") from None


def _text_field(data: Mapping[str, Any], key: str, max_length: int) -> str | None:
    """The record's text ``key`` (None if absent): one line of printable characters, of at
    most ``max_length``, so that showing it cannot rewrite the player's terminal."""
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise RecordError(f"'{key}' must be a string, not {quoted(value)}")
    return _checked_text(value, f"'{key}'", max_length)


def _checked_text(text: str, what: str, max_length: int) -> str:
    """``text``, refused where longer than ``max_length`` or holding a control character."""
    if len(text) > max_length:
        raise RecordError(f"{what} is {len(text):,} characters long: at most {max_length:,}")
    control = next((char for char in text if _is_control(char)), None)
    if control is not None:
        raise RecordError(f"{what} holds a control character ({control!r}): {quoted(text)}")
    return text


def _is_control(char: str) -> bool:
    """Terminal controls (escape sequences, line breaks, NUL) and the marks that reorder text
    on screen (bidirectional overrides and isolates)."""
    return unicodedata.category(char) == "Cc" or char in _BIDI_CONTROLS


_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _moment_field(data: Mapping[str, Any], key: str) -> str | None:
    """The record's date and time ``key`` (None if absent), in ISO 8601."""
    text = _text_field(data, key, MAX_MOMENT_LENGTH)
    if text is not None:
        try:
            datetime.fromisoformat(text)
        except ValueError:
            raise RecordError(
                f"'{key}' must be a date and time in ISO 8601 (2026-11-27T10:00:00+00:00), "
                f"not {quoted(text)}"
            ) from None
    return text


def _players(value: Any) -> dict[str, str]:
    """The record's players: a name for black and for white (each '?' where unknown)."""
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise RecordError("'players' must be an object with 'black' and 'white'")
    seats = {player.label for player in Player}
    unknown = sorted(set(value) - seats)
    if unknown:
        raise RecordError(f"'players' names an unknown seat {quoted(unknown[0])}: "
                          "only 'black' and 'white'")
    players = {}
    for seat in sorted(seats):
        name = value.get(seat, "?")
        if not isinstance(name, str):
            raise RecordError(f"the {seat} player's name must be a string, not {quoted(name)}")
        players[seat] = _checked_text(name, f"the {seat} player's name", MAX_NAME_LENGTH)
    return players
