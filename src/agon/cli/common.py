"""What every command shares: the game argument, variant options, and clean failure."""

from __future__ import annotations

import math
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Annotated, Any, NoReturn

import typer

from agon.core.errors import AgonError, NotationError, quoted, shortened
from agon.core.game import Game, State
from agon.games import GAMES, make_game

GameArg = Annotated[
    str, typer.Argument(help=f"The game: {' or '.join(GAMES)}.", show_default=False)
]
SizeOpt = Annotated[
    str | None,
    typer.Option(
        "--size",
        help="Board size: Alternator files x ranks (default 8x8); Alak number of points (11).",
        show_default=False,
    ),
]
KomiOpt = Annotated[
    float | None,
    typer.Option(
        help="Points added to White: Alternator default 3.5; Alak traditional and "
        "tromp-taylor default 0 (baljeu has none).",
        show_default=False,
    ),
]
RulesOpt = Annotated[
    str | None,
    typer.Option(
        help="Alak rule set: baljeu (default), traditional or tromp-taylor.", show_default=False
    ),
]
EdgeOpt = Annotated[
    bool | None,
    typer.Option(
        "--edge-capture/--no-edge-capture",
        help="Alak baljeu: whether a board end encloses a chain (default on).",
        show_default=False,
    ),
]


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one line naming what is wrong on stderr and exit (status 2 by default)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def check_seconds(seconds: float | None, option: str) -> None:
    """Refuse a duration that is not a positive, finite number of seconds (``nan`` and ``inf``
    parse as floats); None (no limit) passes."""
    if seconds is not None and not (math.isfinite(seconds) and seconds > 0):
        fail(f"{option} must be a positive number of seconds, not {seconds:g}")


def build_game(
    name: str,
    size: str | None = None,
    komi: float | None = None,
    rules: str | None = None,
    edge_capture: bool | None = None,
) -> Game:
    """The variant the options describe; options that do not fit the game are refused."""
    key = name.strip().lower()
    options: dict[str, Any] = {}
    try:
        if key == "alternator":
            if rules is not None or edge_capture is not None:
                fail("--rules and --edge-capture are Alak options; Alternator has neither")
            if size is not None:
                options["size"] = size
        elif key == "alak":
            if size is not None:
                if not size.strip().isdigit():
                    fail(f"Alak --size is a number of points, like 11, not {quoted(size)}")
                options["size"] = size
            if rules is not None:
                options["rules"] = rules
            if edge_capture is not None:
                options["edge_capture"] = edge_capture
        if komi is not None:
            options["komi"] = komi
        return make_game(key, options)
    except AgonError as error:
        fail(str(error))


def load_start(game: Game, position: str | None) -> State:
    """The starting position, or the one a position text describes; a bad text fails cleanly."""
    if position is None:
        return game.new_state()
    try:
        return game.parse_position(position)
    except AgonError as error:
        fail(f"bad position: {error}")


def play_moves(state: State, moves_text: str) -> None:
    """Play a list of moves, refusing the first bad one with its 1-based index and the rule."""
    for index, token in enumerate(moves_text.replace(",", " ").split(), start=1):
        try:
            move = state.game.parse_move(token)
        except NotationError as error:
            fail(f"move {index} ({shortened(token)}): {error}")
        reason = state.illegal_reason(move)
        if reason is not None:
            fail(f"move {index} ({shortened(token)}): {reason}")
        state.play(move)


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, stop on SIGTERM (``kill``, a job scheduler's stop) as on Ctrl-C, so
    that long work reports what it found and saves what it keeps before it ends."""
    if threading.current_thread() is not threading.main_thread():
        yield  # (only the main thread may set signal handlers)
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)

