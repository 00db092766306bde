"""``agon engine``: a game engine on standard input and output, speaking GTP 2
(:mod:`agon.study.engine`; docs/engine.md).

A thread reads the input, a line at a time, into a short queue, and the main thread answers
each line: so a streaming analysis stops as soon as a next line comes, and input that comes
faster than it is answered waits in the pipe, not in memory.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from agon.cli.common import (
    INTERRUPTED,
    GameArg,
    GameOptions,
    build_game,
    fail,
    game_command,
    terminate_as_interrupt,
)
from agon.cli.play_commands import MAX_DROPPED_BYTES, strongest_agent_spec
from agon.core.errors import AgonError
from agon.core.game import Game
from agon.search.registry import AGENTS
from agon.study.engine import MAX_LINE_BYTES, Engine, Reply

if TYPE_CHECKING:
    from agon.study.analysis import Analyst

STANDARD_INPUT = 0
"""The descriptor of standard input (read even where Python has no ``sys.stdin``: closed, it
reads as the end of the input)."""
READ_BYTES = 64 * 1024
QUEUED_LINES = 16
"""Lines read ahead of the one being answered."""


@dataclass(frozen=True)
class OverLong:
    """A line of input over :data:`MAX_LINE_BYTES`, read and dropped (``endless``: one over
    ``MAX_DROPPED_BYTES`` without its end, taken for the end of the input)."""

    length: int
    endless: bool = False


Line = str | OverLong | None
"""A line of input, without its end; None: the end of the input."""


def read_lines(descriptor: int, lines: queue.Queue[Line]) -> None:
    """Put each line of the file ``descriptor`` on ``lines``, then None at its end. The file is
    read with ``os.read``, not through Python's buffered standard input, whose lock the reading
    thread would hold while the program ends."""
    kept = bytearray()
    length = 0
    while True:
        try:
            chunk = os.read(descriptor, READ_BYTES)
        except OSError:
            chunk = b""
        if not chunk:
            break
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            length += len(piece)
            if length <= MAX_LINE_BYTES:
                kept += piece
            elif length > MAX_DROPPED_BYTES:
                lines.put(OverLong(length, endless=True))
                lines.put(None)
                return
            if end < 0:
                break
            lines.put(_line(kept, length))
            kept, length, start = bytearray(), 0, end + 1
    if length:
        lines.put(_line(kept, length))  # (the last line, without its end)
    lines.put(None)


def _line(kept: bytearray, length: int) -> str | OverLong:
    if length > MAX_LINE_BYTES:
        return OverLong(length)
    return kept.decode("utf-8", "replace").rstrip("\r")


def _over_long(line: OverLong) -> Reply:
    if line.endless:
        return Reply.failure(
            f"a line of over {MAX_DROPPED_BYTES:,} bytes without its end: taken for the end "
            "of the input"
        )
    return Reply.failure(f"a line of {line.length:,} bytes: at most {MAX_LINE_BYTES:,} are read")


def write(text: str) -> None:
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()


def serve(engine: Engine, lines: queue.Queue[Line]) -> None:
    """Answer each line until ``quit`` or the end of the input."""
    waiting: list[Line] = []  # (the line that ended a stream, to answer next)
    while True:
        line = waiting.pop() if waiting else lines.get()
        if line is None:
            return
        reply = _over_long(line) if isinstance(line, OverLong) else engine.reply(line)
        if reply is None:
            continue
        if reply.stream is None:
            write(reply.framed())
            if reply.ends_session:
                return
            continue
        write(reply.opening)
        for info in reply.stream(lambda: not lines.empty()):
            write(info + "\n")
        waiting.append(lines.get())
        write("\n")


def warmed_analyst(game: Game) -> Analyst:
    """An analyst over the store of exact values, its solver loaded before any clock runs."""
    from agon.cli.study_commands import new_analyst, warm_up

    warm_up(game)
    return new_analyst(game)


def engine_command(
    game: GameArg,
    options: GameOptions,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help=f"The agent that chooses genmove's moves: NAME[:BUDGET], one of "
            f"{', '.join(AGENTS)}; a budget like 2s, 500ms or 20000 (iterations or nodes) is a "
            f"move's limit unless the clock leaves less. Default: {strongest_agent_spec()}.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """An engine on standard input and output, speaking GTP 2 (the Go Text Protocol), for
    programs and scripts that speak it. `list_commands` lists its commands; docs/engine.md
    describes each."""
    variant = build_game(game, options)
    try:
        engine = Engine(variant, agent or strongest_agent_spec(), warmed_analyst)
    except AgonError as error:
        fail(f"--agent: {error}")
    lines: queue.Queue[Line] = queue.Queue(QUEUED_LINES)
    reader = threading.Thread(
        target=read_lines, args=(STANDARD_INPUT, lines), name="gtp-input", daemon=True
    )
    reader.start()
    try:
        with terminate_as_interrupt():
            serve(engine, lines)
    except KeyboardInterrupt:
        raise typer.Exit(INTERRUPTED) from None
    except BrokenPipeError:
        # the controller has gone: nothing more can be said to it (nor at exit)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    finally:
        engine.close()


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("engine")(game_command(engine_command))
