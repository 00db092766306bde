"""Other programs as players: an engine that speaks GTP 2, started as a subprocess and refereed.

A player spec ``engine:COMMAND[@SECONDS]`` (``engine:agon engine GAME --agent random@2s``) names
the program and its arguments, split as a shell splits words (quotes group them; no shell runs),
and the seconds it has for each move (:data:`DEFAULT_MOVE_SECONDS` unless given). The program is
told the game (``agon-game NAME OPTION=VALUE…`` where it knows that command, else ``boardsize``,
``komi`` and ``clear_board`` as the game has them) and the clock (``time_settings 0 SECONDS 1``),
kept in step with ``play`` and asked ``genmove``. Each answer is checked against the reference
rules: a program that answers an illegal move or no move, refuses a legal one, ends, or is late
beyond a grace margin raises :class:`Forfeit`, and its side loses the game. docs/engine.md,
*Other programs as players*.
"""

from __future__ import annotations

import os
import queue
import re
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import IO, Any

from agon.core.errors import AgonError, quoted, shortened
from agon.core.game import Game, Move, State
from agon.core.limits import Limit
from agon.core.player import Player
from agon.search.agent import Agent, Analysis, Forfeit
from agon.search.registry import MAX_SPEC_LENGTH, make_agent, parse_spec
from agon.study.engine import (
    KOMI_OPTION,
    MAX_LINE_BYTES,
    SIZE_OPTION,
    SQUARE_OPTIONS,
    declares,
    move_text,
    read_move,
)

ENGINE_PREFIX = "engine:"
DEFAULT_MOVE_SECONDS = 10
ENGINE_SPEC_HELP = (
    'engine:"COMMAND ARGUMENTS"[@SECONDS]: another program that speaks GTP 2, with SECONDS '
    f"(whole, like @2s; {DEFAULT_MOVE_SECONDS}s unless given) for each move; see docs/engine.md."
)
GRACE_SHARE = 0.1
GRACE_SECONDS = 1.0
"""Beyond a move's seconds, the referee waits this share of them and this many seconds more
(the reply's way, a loaded machine) before the program loses on time."""
START_SECONDS = 120.0
"""How long each reply of the set-up may take: the program's start (and its loading, such as
compiling an agent's kernels after an upgrade) included."""
COMMAND_SECONDS = 10.0
"""How long the reply to any other command than ``genmove`` may take."""
QUIT_SECONDS = 2.0
"""How long a program that did nothing wrong has to end after ``quit``, before it is killed."""
MAX_REPLY_LINE_BYTES = MAX_LINE_BYTES
"""The longest line of a reply read (a line as long as ``agon engine`` reads)."""
MAX_REPLY_LINES = 1000
QUEUED_LINES = 16
"""Lines read ahead of the referee: more wait in the pipe, not in memory."""
KEPT_ERROR_LINES = 20
"""The last lines of the program's standard error kept (each cut at :data:`MAX_ERROR_LINE`
characters), to say why it ended; the rest is read and dropped, so that it never blocks."""
MAX_ERROR_LINE = 300
RESIGN = "resign"

_TIME_CONTROL = re.compile(r"@([0-9][0-9.]*(?:s|ms)?)\s*$")
_REPLY = re.compile(r"([=?])([0-9]*)(?:\s+(.*))?")


# --- the spec -------------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineSpec:
    """A program to start (``argv``, no shell) and the whole seconds it has for each move."""

    argv: tuple[str, ...]
    seconds: int

    @property
    def text(self) -> str:
        """The spec as written: ``engine:COMMAND@SECONDSs``."""
        return f"{ENGINE_PREFIX}{shlex.join(self.argv)}@{self.seconds}s"

    @property
    def waited_seconds(self) -> float:
        """How long the referee waits for a move: the move's seconds and the grace margin."""
        return self.seconds * (1 + GRACE_SHARE) + GRACE_SECONDS


def is_engine_spec(spec: str) -> bool:
    return spec.strip().lower().startswith(ENGINE_PREFIX)


def parse_engine_spec(spec: str) -> EngineSpec:
    """``engine:COMMAND[@SECONDS]`` read; a bad one is an AgonError. COMMAND may itself be in
    quotes (as typed where no shell takes them off: ``engine:"prog --flag"@2s``)."""
    if len(spec) > MAX_SPEC_LENGTH:
        raise AgonError(f"player spec {quoted(spec)} is over {MAX_SPEC_LENGTH} characters")
    if not spec.isprintable():
        raise AgonError(f"player spec {quoted(spec)} holds a control character")
    command = spec.strip()[len(ENGINE_PREFIX):]
    seconds = DEFAULT_MOVE_SECONDS
    time_control = _TIME_CONTROL.search(command)
    if time_control:
        seconds = _whole_seconds(time_control.group(1))
        command = command[: time_control.start()]
    try:
        argv = shlex.split(command)
        if len(argv) == 1 and command.strip()[:1] in ("'", '"'):
            argv = shlex.split(argv[0])
    except ValueError as error:  # (an unclosed quote)
        raise AgonError(f"engine command {quoted(command)}: {error}") from None
    if not argv:
        raise AgonError('an engine spec names a program: engine:"COMMAND ARGUMENTS"[@SECONDS]')
    return EngineSpec(tuple(argv), seconds)


def _whole_seconds(text: str) -> int:
    seconds = Limit.parse(text).seconds
    if seconds is None or seconds != int(seconds):
        raise AgonError(
            f"an engine's time for a move is whole seconds, like @2s, not {quoted('@' + text)}"
        )
    return int(seconds)


def check_player_spec(spec: str) -> None:
    """Check an agent's or an engine's spec without making the player; AgonError if bad."""
    if is_engine_spec(spec):
        parse_engine_spec(spec)
    else:
        parse_spec(spec)


def make_player(spec: str, game: Game, seed: int | None = None) -> Agent:
    """An agent (:func:`agon.search.registry.make_agent`), or another program where ``spec``
    is ``engine:…``: started, and told the game (a program that cannot be is a Forfeit)."""
    if is_engine_spec(spec):
        return ExternalEngine(game, spec, seed)
    return make_agent(spec, game, seed)


# --- the program's output -------------------------------------------------------------------


def read_replies(stream: IO[bytes], lines: queue.Queue[bytes | None]) -> None:
    """Put each line of ``stream`` on ``lines`` (one over :data:`MAX_REPLY_LINE_BYTES` cut
    there, and the last read), then None at its end."""
    while True:
        try:
            line = stream.readline(MAX_REPLY_LINE_BYTES + 1)
        except (OSError, ValueError):
            line = b""
        if not line:
            break
        lines.put(line)
        if len(line) > MAX_REPLY_LINE_BYTES:
            break
    lines.put(None)


def keep_last_lines(stream: IO[bytes], kept: deque[str]) -> None:
    """Read ``stream`` to its end, keeping its last lines in ``kept`` (a bounded deque)."""
    while True:
        try:
            line = stream.readline(MAX_REPLY_LINE_BYTES)
        except (OSError, ValueError):
            return
        if not line:
            return
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        if text.strip():
            kept.append(text[:MAX_ERROR_LINE])


# --- the player -----------------------------------------------------------------------------


class ExternalEngine(Agent):
    """Another program as a player, refereed: see the module's description. ``close`` ends the
    program (and whatever it started); a context manager closes it too."""

    def __init__(self, game: Game, spec: str | EngineSpec, seed: int | None = None) -> None:
        super().__init__(game, seed)
        self.engine = parse_engine_spec(spec) if isinstance(spec, str) else spec
        self._spec = spec.strip() if isinstance(spec, str) else spec.text
        self.usual_start = game.new_state().position()
        self.told_start: str | None = None
        """The position text the program was set to, where it is not the usual start."""
        self.told: list[Move] = []
        """The moves the program has, in order."""
        self.known: dict[str, bool] = {}
        self.healthy = True
        self.closed = False
        self.next_id = 1
        try:
            self.process = subprocess.Popen(
                self.engine.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # (its own process group: close ends what it started)
            )
        except OSError as error:
            raise Forfeit(
                f"cannot start {quoted(self.engine.argv[0])}: {error.strerror or error}"
            ) from None
        assert self.process.stdout is not None and self.process.stderr is not None
        self.lines: queue.Queue[bytes | None] = queue.Queue(QUEUED_LINES)
        self.reader = _reading(read_replies, self.process.stdout, self.lines, "engine-output")
        self.error_lines: deque[str] = deque(maxlen=KEPT_ERROR_LINES)
        """The last lines the program wrote to its standard error."""
        self.error_reader = _reading(
            keep_last_lines, self.process.stderr, self.error_lines, "engine-errors"
        )
        try:
            self._set_up()
        except BaseException:
            self.close()
            raise

    @property
    def spec(self) -> str:
        return self._spec

    def __enter__(self) -> ExternalEngine:
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()

    def analyse(self, state: State, limit: Limit | None = None) -> Analysis:
        """The program's move (``genmove``), checked; the spec's seconds are its limit."""
        self._bring_up_to(state)
        mover = state.to_move
        if mover is None:
            raise AgonError("the game is over: there is no move to choose")
        command = f"genmove {_colour(mover)}"
        started = time.monotonic()
        answer = self._ask(command, self.engine.waited_seconds)
        seconds = time.monotonic() - started
        if answer.lower() == RESIGN:
            raise self._forfeit("resigned")
        try:
            move = read_move(self.game, answer)
        except AgonError as error:
            raise self._forfeit(
                f"answered {quoted(answer)} to {command}, which is no move: {error}"
            ) from None
        reason = state.illegal_reason(move)
        if reason is not None:
            raise self._forfeit(f"answered the illegal move {shortened(answer)}: {reason}")
        self.told.append(move)
        return Analysis(best_move=move, seconds=seconds)

    def close(self) -> None:
        """End the program: ``quit`` where it did nothing wrong, then a kill of its process
        group whatever it did (before its status is collected, so that the group's number
        cannot be another's yet); no zombie is left."""
        if self.closed:
            return
        self.closed = True
        if self.healthy:
            with suppress(Forfeit):
                self._send("quit")
                self._end(QUIT_SECONDS)
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        with suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        self._drain()

    # --- the game and the position -----------------------------------------------------------

    def _set_up(self) -> None:
        """Tell the program the game, and the clock (which it may refuse: the referee keeps
        the time all the same)."""
        if self._knows("agon-game", START_SECONDS):
            values = self.game.options()
            options = " ".join(
                f"{option.name}={option.text(values[option.name])}"
                for option in type(self.game).option_specs
                if option.name in values
            )
            self._ask(f"agon-game {self.game.name} {options}".rstrip(), START_SECONDS)
        else:
            for command in self._standard_set_up():
                self._ask(command, START_SECONDS)
        self._exchange(f"time_settings 0 {self.engine.seconds} 1", START_SECONDS)

    def _standard_set_up(self) -> list[str]:
        """The standard commands that tell a program the game, as far as they can."""
        values = self.game.options()
        commands = []
        width, height = (values.get(name) for name in SQUARE_OPTIONS)
        if declares(self.game, *SQUARE_OPTIONS) and width == height:
            commands.append(f"boardsize {width}")
        elif declares(self.game, SIZE_OPTION):
            commands.append(f"boardsize {values[SIZE_OPTION]}")
        if declares(self.game, KOMI_OPTION):
            commands.append(f"komi {values[KOMI_OPTION]}")
        return [*commands, "clear_board"]

    def _bring_up_to(self, state: State) -> None:
        """Play on the program the moves of ``state`` it lacks; where it went another way (an
        undo, a new game), set it to the start again first."""
        start = state.copy()
        for _ in state.history:
            start.undo()
        position = start.position()
        start_position = None if position == self.usual_start else position
        if start_position != self.told_start or state.history[: len(self.told)] != self.told:
            self._set_start(start_position)
        for index, move in enumerate(state.history):
            if index >= len(self.told):
                assert start.to_move is not None
                self._ask(f"play {_colour(start.to_move)} {move_text(self.game, move)}")
                self.told.append(move)
            start.play(move)

    def _set_start(self, start_position: str | None) -> None:
        self.told, self.told_start = [], None
        if start_position is None:
            self._ask("clear_board")
        elif self._knows("agon-position"):
            self._ask(f"agon-position {start_position}")
        else:
            raise self._forfeit("cannot be set to this position: it has no agon-position")
        self.told_start = start_position

    # --- the protocol ------------------------------------------------------------------------

    def _knows(self, command: str, seconds: float = COMMAND_SECONDS) -> bool:
        if command not in self.known:
            success, answer = self._exchange(f"known_command {command}", seconds)
            self.known[command] = success and answer.lower() == "true"
        return self.known[command]

    def _ask(self, command: str, seconds: float = COMMAND_SECONDS) -> str:
        """The result of ``command``; a refusal is a Forfeit."""
        success, answer = self._exchange(command, seconds)
        if not success:
            raise self._forfeit(f"refused {quoted(command)}: {shortened(answer)}")
        return answer

    def _exchange(self, command: str, seconds: float) -> tuple[bool, str]:
        """Send ``command``, and read its reply within ``seconds``: success and result."""
        command_id = str(self.next_id)
        self.next_id += 1
        self._send(f"{command_id} {command}")
        opening, lines = self._reply_lines(command, seconds)
        status, answer_id, first = opening.groups()
        if answer_id and answer_id != command_id:
            raise self._forfeit(
                f"answered command {command_id} ({quoted(command)}) with id {quoted(answer_id)}"
            )
        return status == "=", "\n".join([first or "", *lines]).strip()

    def _send(self, line: str) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(line.encode() + b"\n")
            self.process.stdin.flush()
        except OSError:
            raise self._forfeit(self._ended()) from None

    def _reply_lines(self, command: str, seconds: float) -> tuple[re.Match[str], list[str]]:
        """One reply, up to its blank line (blank lines before it skipped): its first line
        read as ``=id result`` or ``?id error``, then the others."""
        deadline = time.monotonic() + seconds
        opening: re.Match[str] | None = None
        lines: list[str] = []
        while True:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                raise self._forfeit(
                    f"no answer to {quoted(command)} within {seconds:g} s"
                ) from None
            if line is None:
                raise self._forfeit(f"{self._ended()} (asked {quoted(command)})")
            if len(line) > MAX_REPLY_LINE_BYTES:
                raise self._forfeit(
                    f"answered a line of over {MAX_REPLY_LINE_BYTES:,} bytes to {quoted(command)}"
                )
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            if not text.strip():
                if opening is not None:
                    return opening, lines
            elif opening is None:
                opening = _REPLY.fullmatch(text)
                if opening is None:
                    raise self._forfeit(
                        f"answered {quoted(text)} to {quoted(command)}, which is no GTP reply"
                    )
            else:
                lines.append(text)
            if len(lines) > MAX_REPLY_LINES:
                raise self._forfeit(
                    f"answered over {MAX_REPLY_LINES:,} lines to {quoted(command)}"
                )

    def _end(self, seconds: float) -> os.waitid_result | None:
        """How the program ended, waited for up to ``seconds`` (None: it goes on). Its status
        is left to collect (``close`` does)."""
        deadline = time.monotonic() + seconds
        while True:
            ended = os.waitid(
                os.P_PID, self.process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT
            )
            if ended is not None or time.monotonic() >= deadline:
                return ended
            time.sleep(0.01)

    def _ended(self) -> str:
        """How the program ended, in words (its output ends a moment before it does)."""
        ended = self._end(QUIT_SECONDS)
        if ended is None:
            how = "closed its output"
        elif ended.si_code == os.CLD_EXITED:
            how = f"ended (exit status {ended.si_status})"
        else:
            how = f"ended by signal {ended.si_status}"
        self.error_reader.join(QUIT_SECONDS if ended is not None else 0)
        if self.error_lines:
            how += f"; its last words: {quoted(self.error_lines[-1])}"
        return how

    def _forfeit(self, reason: str) -> Forfeit:
        self.healthy = False
        return Forfeit(reason)

    def _drain(self) -> None:
        """Empty the queue of lines until the reader ends (the program is gone, so its output
        ends), within a bound: a reader left blocked on a full queue would never end."""
        deadline = time.monotonic() + QUIT_SECONDS
        while self.reader.is_alive() and time.monotonic() < deadline:
            with suppress(queue.Empty):
                self.lines.get(timeout=0.05)
        if not self.reader.is_alive():
            assert self.process.stdout is not None
            self.process.stdout.close()
        self.error_reader.join(QUIT_SECONDS)
        if not self.error_reader.is_alive():
            assert self.process.stderr is not None
            self.process.stderr.close()


def _reading(
    reader: Callable[[IO[bytes], Any], None], stream: IO[bytes], into: Any, name: str
) -> threading.Thread:
    """A thread started to run ``reader(stream, into)`` until the stream ends."""
    thread = threading.Thread(target=reader, args=(stream, into), name=name, daemon=True)
    thread.start()
    return thread


def _colour(player: Player) -> str:
    return player.letter.lower()
