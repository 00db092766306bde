"""An engine for every registered game, speaking the Go Text Protocol, version 2 (GTP 2).

A command line ``[id] command arguments`` is answered ``=[id] result`` or ``?[id] error``, a
blank line ending every reply; the id is echoed where one is given, and comments (``#`` to the
end of the line) and blank lines get no reply, as GTP 2 frames them. The standard commands act
where the game has what they need (``boardsize``: an option of the board's size; ``komi``: a
komi option; ``pass``: a pass), and Agon's own begin with ``agon-``: docs/engine.md lists every
one, with sessions of each game.

Nothing here reads or writes a stream: :meth:`Engine.reply` takes one line and returns its
:class:`Reply` (``agon engine`` reads the lines and writes the replies). The reply of a
streaming analysis (``agon-analyse-stream``, in the manner of Leela Zero's ``lz-analyze``) holds
a generator of ``info`` lines, which its caller runs until the next line of input comes.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from agon import __version__
from agon.core.errors import AgonError, quoted
from agon.core.files import user_path
from agon.core.game import MAX_POSITION_LENGTH, Game, Move, State, format_points, read_count
from agon.core.limits import Limit
from agon.core.player import Player
from agon.core.records import GameRecord
from agon.core.render import player_name
from agon.games import make_game, plugin, renderer
from agon.search.registry import make_agent, parse_spec
from agon.study.values import describe, json_value

if TYPE_CHECKING:
    from agon.search.agent import Agent
    from agon.study.analysis import Analyst, PositionAnalysis

NAME = "Agon"
MAX_LINE_BYTES = MAX_POSITION_LENGTH + 4096
"""The longest command line read: ``agon-position`` with the longest position text read."""
ANALYSE_SECONDS = 2.0
"""How long ``agon-analyse`` thinks where it is not told."""
MAX_ANALYSE_SECONDS = 600.0
MAX_PATH_BYTES = 4096
"""The longest path of a record read (Linux's own limit)."""
MAX_STREAM_INTERVAL = 60_000
"""The longest interval of ``agon-analyse-stream``, in centiseconds (ten minutes)."""
MOVES_PLANNED = 30
"""In main time, a move is given this many-th part of what is left (and a byo-yomi stone's
share): the clock is spent as a geometric series, never all at once."""
SAFETY_SHARE = 0.1
SAFETY_SECONDS = 0.1
"""Kept back from each move's share of the clock, for the replies' way to the controller."""
FASTEST_MOVE_SECONDS = 0.01
"""The least time a move is given, however short the clock."""
SQUARE_OPTIONS = ("width", "height")
SIZE_OPTION = "size"
"""The options ``boardsize N`` sets: both sides of a board to N where a game has both, else its
size."""
KOMI_OPTION = "komi"
PASS = "pass"

Stream = Callable[[Callable[[], bool]], Iterator[str]]
"""A streaming analysis: given what says to stop, it yields ``info`` lines until it does."""

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_DECIMAL = re.compile(r"[0-9]{1,9}(?:\.[0-9]{1,9})?")


# --- replies --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """The answer to one command line."""

    success: bool
    text: str = ""
    command_id: str | None = None
    stream: Stream | None = None
    """A streaming analysis's ``info`` lines, to run after :attr:`opening` until the next line
    of input comes; then a blank line ends the reply."""
    ends_session: bool = False
    """``quit``: the engine stops after this reply."""

    @classmethod
    def failure(cls, message: str, command_id: str | None = None) -> Reply:
        return cls(False, message, command_id)

    @property
    def opening(self) -> str:
        """``=id`` or ``?id`` and the first line of the result, with its line end."""
        return f"{'=' if self.success else '?'}{self.command_id or ''} {self._lines()[0]}\n"

    def framed(self) -> str:
        """The whole reply as GTP writes it: its lines, then a blank line."""
        lines = self._lines()
        return self.opening + "".join(f"{line}\n" for line in lines[1:]) + "\n"

    def _lines(self) -> list[str]:
        # (an empty line inside would end the reply early: the text's are left out)
        first, *rest = self.text.split("\n")
        return [first.rstrip(), *(line.rstrip() for line in rest if line.strip())]


@dataclass(frozen=True)
class Command:
    """A command's usage, and what runs it: given its arguments split and as written, it
    returns the result (or a streaming analysis), or raises :class:`AgonError` saying why
    not."""

    usage: str
    run: Callable[[list[str], str], str | Stream]
    least: int = 0
    most: float | None = None
    """The arguments it takes: ``least`` to ``most`` (``least`` where ``most`` is None)."""


# --- the clock ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TimeSettings:
    """GTP's clock (Canadian byo-yomi): ``main`` seconds, then ``byo_stones`` moves in each
    period of ``byo_time`` seconds; no byo-yomi where ``byo_stones`` is 0."""

    main: float
    byo_time: float
    byo_stones: int

    def first_clock(self) -> Clock:
        if self.main > 0 or self.byo_stones == 0:
            return Clock(self.main, 0)
        return Clock(self.byo_time, self.byo_stones)


@dataclass
class Clock:
    """What a player has left: seconds, and the moves to play in them (0: main time)."""

    seconds: float
    stones: int

    def allotment(self, settings: TimeSettings | None) -> float:
        """The seconds the next move may take: in byo-yomi the period's share a stone, in main
        time :data:`MOVES_PLANNED`'s share of what is left (and a byo-yomi stone's share, which
        is there when main time runs out), less a margin."""
        if self.stones > 0:
            share = self.seconds / self.stones
        else:
            share = self.seconds / MOVES_PLANNED
            if settings is not None and settings.byo_stones > 0:
                share += settings.byo_time / settings.byo_stones
        return max(share * (1 - SAFETY_SHARE) - SAFETY_SECONDS, FASTEST_MOVE_SECONDS)

    def spend(self, seconds: float, settings: TimeSettings | None) -> None:
        """Take a move's ``seconds`` off the clock (for controllers that send no
        ``time_left``): main time runs into byo-yomi, and a period whose stones are played
        starts again."""
        self.seconds -= seconds
        if self.stones > 0:
            self.stones -= 1
            period_over = self.stones == 0
        else:
            period_over = self.seconds <= 0
        if period_over and settings is not None and settings.byo_stones > 0:
            self.seconds, self.stones = settings.byo_time, settings.byo_stones


def move_limit(budget: Limit | None, seconds: float | None) -> Limit | None:
    """The limit of a move: the agent's own ``budget`` and the clock's ``seconds``, whichever
    comes first (None: the agent's own)."""
    if seconds is None:
        return budget
    if budget is None:
        return Limit(seconds=seconds)
    own = budget.seconds
    return Limit(seconds=seconds if own is None else min(own, seconds), count=budget.count)


# --- reading arguments ----------------------------------------------------------------------


def _colour(text: str) -> Player:
    try:
        return Player.parse(text)
    except ValueError:
        raise AgonError(
            f"syntax error: a colour is b, w, black or white, not {quoted(text)}"
        ) from None


def _count(text: str, what: str) -> int:
    number = read_count(text)
    if number is None:
        raise AgonError(f"syntax error: {what} must be a whole number, not {quoted(text)}")
    return number


def _seconds(text: str, most: float) -> float:
    seconds = float(text) if _DECIMAL.fullmatch(text) else 0.0
    if not 0 < seconds <= most:
        raise AgonError(
            f"syntax error: seconds must be a positive number up to {most:g}, not {quoted(text)}"
        )
    return seconds


def _signed(value: float) -> str:
    """Black's margin as a signed number: ``+2``, ``-1.5``, ``0``; estimates to two decimals."""
    shown = json_value(value) or 0
    return "0" if shown == 0 else f"{'+' if shown > 0 else '-'}{format_points(abs(shown))}"


def move_text(game: Game, move: Move) -> str:
    """A move as GTP writes it: the game's notation, ``pass`` for a pass."""
    return PASS if move == game.pass_move else game.format_move(move)


def read_move(game: Game, text: str) -> Move:
    """A move as GTP writes it (``pass`` where the game has one); NotationError if none."""
    if text.lower() == PASS and game.pass_move is not None:
        return game.pass_move
    return game.parse_move(text)


def declares(game: Game, *names: str) -> bool:
    """Whether ``game`` has every option of ``names``."""
    return set(names) <= {option.name for option in type(game).option_specs}


def clean(line: str) -> str:
    """A line as GTP 2 reads it: control characters but tabs taken out, tabs made spaces, and
    a comment (from ``#``) left out."""
    return _CONTROL.sub("", line).replace("\t", " ").partition("#")[0]


# --- the engine -----------------------------------------------------------------------------


class Engine:
    """One game at a time, played and analysed through GTP commands."""

    def __init__(
        self, game: Game, agent_spec: str, analysts: Callable[[Game], Analyst]
    ) -> None:
        """``agent_spec`` chooses the moves of ``genmove`` (its budget is a move's limit unless
        the clock's share is shorter); ``analysts`` makes the analyst of a variant for
        ``agon-analyse``."""
        self.agent_spec = agent_spec
        self.budget = parse_spec(agent_spec)[1]
        self._analysts = analysts
        self._analyst: Analyst | None = None
        self._stop_analysis: Callable[[], bool] = _never
        self.time_settings: TimeSettings | None = None
        self.clocks: dict[Player, Clock] = {}
        self.game = game
        self.agent: Agent = make_agent(agent_spec, game)
        self.state = game.new_state()
        self.start_position: str | None = None
        """The position text the game started from, where it was not the usual start."""
        self.passes_put_in: list[int] = []
        """The plies of passes played for the side to move so that the other could play."""
        self.commands: dict[str, Command] = {
            "protocol_version": Command("protocol_version", lambda words, rest: "2"),
            "name": Command("name", lambda words, rest: NAME),
            "version": Command("version", lambda words, rest: __version__),
            "known_command": Command("known_command COMMAND", self._known_command, 1),
            "list_commands": Command(
                "list_commands", lambda words, rest: "\n".join(self.commands)
            ),
            "quit": Command("quit", lambda words, rest: ""),
            "boardsize": Command("boardsize SIZE", self._boardsize, 1),
            "clear_board": Command("clear_board", self._clear_board),
            "komi": Command("komi POINTS", self._komi, 1),
            "play": Command("play COLOUR MOVE", self._play, 2),
            "genmove": Command("genmove COLOUR", self._genmove, 1),
            "reg_genmove": Command("reg_genmove COLOUR", self._reg_genmove, 1),
            "undo": Command("undo", self._undo),
            "showboard": Command("showboard", self._showboard),
            "final_score": Command("final_score", self._final_score),
            "time_settings": Command(
                "time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES", self._time_settings, 3
            ),
            "time_left": Command("time_left COLOUR SECONDS STONES", self._time_left, 3),
            "agon-game": Command(
                "agon-game NAME [OPTION=VALUE ...]", self._agon_game, 1, math.inf
            ),
            "agon-options": Command("agon-options", self._agon_options),
            "agon-position": Command("agon-position TEXT", self._agon_position, 1, math.inf),
            "agon-load-record": Command(
                "agon-load-record PATH", self._agon_load_record, 1, math.inf
            ),
            "agon-legal": Command("agon-legal", self._agon_legal),
            "agon-analyse": Command("agon-analyse [SECONDS]", self._agon_analyse, 0, 1),
            "agon-analyse-stream": Command(
                "agon-analyse-stream CENTISECONDS", self._analyse_stream, 1
            ),
        }

    # --- the protocol ------------------------------------------------------------------------

    def reply(self, line: str) -> Reply | None:
        """The reply to one line of input; None for a blank line or a comment."""
        text = clean(line)
        words = text.split(maxsplit=1)
        if not words:
            return None
        command_id = None
        if words[0].isascii() and words[0].isdigit():
            command_id = words[0]
            words = words[1].split(maxsplit=1) if len(words) > 1 else []
        if not words:
            return Reply.failure("syntax error: no command after the id", command_id)
        name, rest = words[0].lower(), words[1].strip() if len(words) > 1 else ""
        if name not in self.commands:
            return Reply.failure("unknown command", command_id)
        command = self.commands[name]
        words = rest.split()
        most = command.least if command.most is None else command.most
        if not command.least <= len(words) <= most:
            return Reply.failure(f"syntax error: usage: {command.usage}", command_id)
        try:
            result = command.run(words, rest)
        except AgonError as error:
            return Reply.failure(str(error), command_id)
        if isinstance(result, str):
            return Reply(True, result, command_id, ends_session=name == "quit")
        return Reply(True, "", command_id, stream=result)

    def close(self) -> None:
        """Let go of the analyst's store of exact values."""
        self._drop_analyst()

    def _known_command(self, words: list[str], rest: str) -> str:
        return "true" if words[0].lower() in self.commands else "false"

    # --- the variant and the position --------------------------------------------------------

    def _switch(
        self, game: Game, state: State, start_position: str | None,
        passes_put_in: tuple[int, ...] = (),
    ) -> None:
        """Go on with ``state`` of ``game``: the agent and the analyst are made for a new
        variant (the agent's kernels load now, not on a move's clock)."""
        if game != self.game:
            agent = make_agent(self.agent_spec, game)
            self._drop_analyst()
            self.game, self.agent = game, agent
        else:
            self.agent.reset()
        self.state, self.start_position = state, start_position
        self.passes_put_in = list(passes_put_in)

    def _variant(self, changes: dict[str, Any]) -> Game:
        return make_game(self.game.name, {**self.game.options(), **changes})

    def _boardsize(self, words: list[str], rest: str) -> str:
        size = _count(words[0], "the size")
        if declares(self.game, *SQUARE_OPTIONS):
            changes = dict.fromkeys(SQUARE_OPTIONS, size)
        elif declares(self.game, SIZE_OPTION):
            changes = {SIZE_OPTION: size}
        else:
            raise AgonError(f"unacceptable size: {self.game.title} has no board size option")
        try:
            game = self._variant(changes)
        except AgonError as error:
            raise AgonError(f"unacceptable size: {error}") from None
        self._switch(game, game.new_state(), None)
        return ""

    def _clear_board(self, words: list[str], rest: str) -> str:
        self._switch(self.game, self.game.new_state(), None)
        return ""

    def _komi(self, words: list[str], rest: str) -> str:
        if not declares(self.game, KOMI_OPTION):
            raise AgonError(f"{self.game.title} has no komi")
        game = self._variant({KOMI_OPTION: words[0]})
        # the position stays: its moves are played again under the new komi
        start = self.start_position
        state = game.new_state() if start is None else game.parse_position(start)
        state.play_all(self.state.history)
        self._switch(game, state, start, tuple(self.passes_put_in))
        return ""

    def _agon_game(self, words: list[str], rest: str) -> str:
        found = plugin(words[0])
        specs = {option.name: option for option in found.game.option_specs}
        values: dict[str, Any] = {}
        for word in words[1:]:
            key, equals, value = word.partition("=")
            if not equals:
                raise AgonError(f"syntax error: an option is NAME=VALUE, not {quoted(word)}")
            key = key.lower().replace("-", "_")
            values[key] = specs[key].parse(value) if key in specs else value
        game = make_game(found.name, values)
        self._switch(game, game.new_state(), None)
        return ""

    def _agon_options(self, words: list[str], rest: str) -> str:
        values = self.game.options()
        lines = [self.game.description]
        for option in type(self.game).option_specs:
            choices = ", ".join(choice.value for choice in option.choices)
            about = option.help + (f" One of {choices}." if choices else "")
            if option.shortcut:
                lines.append(f"{option.name} (sets others)  {about}")
            else:
                lines.append(f"{option.name}={option.text(values[option.name])}  {about}")
        return "\n".join(lines)

    def _agon_position(self, words: list[str], rest: str) -> str:
        if len(rest) > MAX_POSITION_LENGTH:
            raise AgonError(f"the position is over {MAX_POSITION_LENGTH:,} characters")
        self._switch(self.game, self.game.parse_position(rest), rest)
        return ""

    def _agon_load_record(self, words: list[str], rest: str) -> str:
        if len(rest.encode()) > MAX_PATH_BYTES:
            raise AgonError(f"a path is at most {MAX_PATH_BYTES} bytes")
        record = GameRecord.load(user_path(rest), make_game)
        self._switch(record.game, record.replay(), record.start_position)
        return f"{record.game.description}: {len(record.moves)} moves"

    def _agon_legal(self, words: list[str], rest: str) -> str:
        return self._moves_text(self.state.legal_moves())

    def _showboard(self, words: list[str], rest: str) -> str:
        return "\n" + renderer(self.game).render_text(self.state, ascii=True)

    # --- moves -------------------------------------------------------------------------------

    def _move_text(self, move: Move) -> str:
        return move_text(self.game, move)

    def _moves_text(self, moves: list[Move]) -> str:
        return " ".join(self._move_text(move) for move in moves)

    def _going_on(self, state: State) -> None:
        if state.is_over:
            raise AgonError(f"the game is over: {state.result} ({state.end_reason})")

    def _give_turn(self, state: State, player: Player) -> bool:
        """Make it ``player``'s turn in ``state``: where the other is to move, that side passes
        (GTP lets either colour play; this game's moves alternate). Whether it passed."""
        if state.to_move is player:
            return False
        pass_move = self.game.pass_move
        mover = player_name(player.other)
        if pass_move is None:
            raise AgonError(
                f"it is {mover}'s turn, and {self.game.title} has no pass to give "
                f"{player_name(player)} the move"
            )
        reason = state.illegal_reason(pass_move)
        if reason is not None:
            raise AgonError(f"it is {mover}'s turn, and {mover} may not pass: {reason}")
        state.play(pass_move)
        if state.is_over:
            state.undo()
            raise AgonError(f"it is {mover}'s turn, and a pass by {mover} would end the game")
        return True

    def _played(self, move: Move, passed: bool) -> None:
        """Play ``move`` in the game, after a pass put in for it where ``passed``."""
        self.state.play(move)
        if passed:
            self.passes_put_in.append(len(self.state.history) - 2)

    def _play(self, words: list[str], rest: str) -> str:
        player = _colour(words[0])
        self._going_on(self.state)
        try:
            move = read_move(self.game, words[1])
        except AgonError as error:
            raise AgonError(f"illegal move: {error}") from None
        passed = self._give_turn(self.state, player)
        reason = self.state.illegal_reason(move)
        if reason is not None:
            if passed:
                self.state.undo()
            raise AgonError(f"illegal move: {self._move_text(move)}: {reason}")
        self._played(move, passed)
        return ""

    def _choose(self, state: State, player: Player) -> Move:
        clock = self.clocks.get(player)
        seconds = None if clock is None else clock.allotment(self.time_settings)
        return self.agent.choose(state, move_limit(self.budget, seconds))

    def _genmove(self, words: list[str], rest: str) -> str:
        """The agent's move, played. It never resigns: no game declares resignation."""
        player = _colour(words[0])
        self._going_on(self.state)
        passed = self._give_turn(self.state, player)
        started = time.monotonic()
        move = self._choose(self.state, player)
        if player in self.clocks:
            self.clocks[player].spend(time.monotonic() - started, self.time_settings)
        self._played(move, passed)
        return self._move_text(move)

    def _reg_genmove(self, words: list[str], rest: str) -> str:
        player = _colour(words[0])
        self._going_on(self.state)
        state = self.state.copy()
        self._give_turn(state, player)
        return self._move_text(self._choose(state, player))

    def _undo(self, words: list[str], rest: str) -> str:
        if not self.state.history:
            raise AgonError("cannot undo: there is no move to take back")
        self.state.undo()
        if self.passes_put_in and self.passes_put_in[-1] == len(self.state.history) - 1:
            self.state.undo()
            self.passes_put_in.pop()
        return ""

    def _final_score(self, words: list[str], rest: str) -> str:
        result = self.state.result
        if result is None:
            raise AgonError("cannot score: the game is not over")
        return result if self.state.margin else "0"

    def _time_settings(self, words: list[str], rest: str) -> str:
        main, byo_time, byo_stones = (_count(word, "a time setting") for word in words)
        if byo_time > 0 and byo_stones == 0:  # (GTP's way of saying: no time limits)
            self.time_settings, self.clocks = None, {}
            return ""
        self.time_settings = TimeSettings(main, byo_time, byo_stones)
        self.clocks = {player: self.time_settings.first_clock() for player in Player}
        return ""

    def _time_left(self, words: list[str], rest: str) -> str:
        player = _colour(words[0])
        self.clocks[player] = Clock(_count(words[1], "time"), _count(words[2], "stones"))
        return ""

    # --- analysis ----------------------------------------------------------------------------

    def analyst(self) -> Analyst:
        """The current variant's analyst (made on first use; it stops when a stream is told
        to)."""
        if self._analyst is None:
            self._analyst = self._analysts(self.game)
            self._analyst.stop_requested = lambda: self._stop_analysis()
        return self._analyst

    def _drop_analyst(self) -> None:
        if self._analyst is not None and self._analyst.exact is not None:
            self._analyst.exact.close()
        self._analyst = None

    def _agon_analyse(self, words: list[str], rest: str) -> str:
        seconds = _seconds(words[0], MAX_ANALYSE_SECONDS) if words else ANALYSE_SECONDS
        analysis = self.analyst().analyse(self.state.copy(), Limit(seconds=seconds))
        value = analysis.value
        return "\n".join([
            f"value {_signed(value.black)}",
            f"exact {_yes(value.exact)}",
            f"words {describe(self.game, value)}",
            f"best {self._moves_text(analysis.best_moves)}",
            f"pv {self._moves_text(analysis.principal_variation)}",
            f"source {analysis.source}",
        ])

    def _analyse_stream(self, words: list[str], rest: str) -> Stream:
        interval = _count(words[0], "the interval")
        if not 1 <= interval <= MAX_STREAM_INTERVAL:
            raise AgonError(
                f"syntax error: the interval is 1 to {MAX_STREAM_INTERVAL} centiseconds, "
                f"not {interval}"
            )
        self._going_on(self.state)
        return partial(self._stream, self.state.copy(), interval / 100)

    def _stream(self, state: State, seconds: float, stop: Callable[[], bool]) -> Iterator[str]:
        """An ``info`` line every ``seconds``, each analysis of ``state`` going deeper (the
        solver's table keeps what it proved), until ``stop`` says or the value is exact."""
        analyst = self.analyst()
        self._stop_analysis = stop
        try:
            while not stop():
                found = analyst.analyse(state, Limit(seconds=seconds))
                yield self._info(found)
                if found.value.exact:
                    return
        finally:
            self._stop_analysis = _never

    def _info(self, analysis: PositionAnalysis) -> str:
        return " ".join([
            "info", "move", self._move_text(analysis.best_moves[0]),
            "value", _signed(analysis.value.black), "exact", _yes(analysis.value.exact),
            "pv", *map(self._move_text, analysis.principal_variation),
        ])


def _never() -> bool:
    return False


def _yes(true: bool) -> str:
    return "yes" if true else "no"
