"""What every command shares: the game argument, variant options, and clean failure."""

from __future__ import annotations

import atexit
import functools
import inspect
import math
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from typer.models import OptionInfo

from agon.core.errors import AgonError, NotationError, quoted, shortened
from agon.core.game import MAX_MOVES_LENGTH, MAX_POSITION_LENGTH, Game, State
from agon.core.limits import MAX_SECONDS
from agon.core.options import Option
from agon.core.workers import came_from_stop, hear_stop, held_while_compiling, stop_asked
from agon.games import make_game, names, plugin, plugins

GameArg = Annotated[
    str, typer.Argument(help=f"The game: {' or '.join(names())}.", show_default=False)
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
GameOptions = dict[str, Any]
"""The game options given on the command line, by option name (text, or a bool for a flag):
a command's parameter that :func:`game_command` fills from one command-line option per option
any game declares."""


def _declared_options() -> dict[str, list[tuple[str, Option]]]:
    """Every option name a game declares, with each game (its title) that declares it."""
    declared: dict[str, list[tuple[str, Option]]] = {}
    for found in plugins().values():
        for option in found.game.option_specs:
            declared.setdefault(option.name, []).append((found.title, option))
    return declared


def _own_flags(signature: inspect.Signature) -> set[str]:
    """The flags of a command's own options (``--line``, ``--json``, …)."""
    flags: set[str] = set()
    for parameter in signature.parameters.values():
        for info in getattr(parameter.annotation, "__metadata__", ()):
            if not isinstance(info, OptionInfo):
                continue
            # (in Annotated, Typer takes an Option's first argument for its first flag)
            declared = [info.default, *(info.param_decls or ())]
            named = [
                part for text in declared if isinstance(text, str)
                for part in text.split("/") if part.startswith("--")
            ]
            flags.update(named or ["--" + parameter.name.replace("_", "-")])
    return flags


def _option_parameter(
    name: str, games: list[tuple[str, Option]], taken: set[str]
) -> inspect.Parameter:
    """The command-line option of game option ``name``: a flag pair where every game that
    declares it takes true or false, else a text its game reads. Where the command has an
    option of that name of its own (``agon solve --line``), the game's is ``--game-NAME``."""
    flag = games[0][1].flag
    parts = []
    for title, option in games:
        default = "" if option.shortcut else f" (default {option.text(option.default)})"
        choices = ", ".join(choice.value for choice in option.choices)
        parts.append(f"{title}: {option.help}{f' One of {choices}.' if choices else ''}{default}")
    if flag in taken:
        parts.append(f"(Here {flag} is this command's own option.)")
        flag = "--game-" + flag.removeprefix("--")
    help_text = " ".join(parts)
    if all(option.kind == "bool" for _, option in games):
        negative = "--no-" + flag.removeprefix("--")
        annotation: Any = Annotated[
            bool | None, typer.Option(f"{flag}/{negative}", help=help_text, show_default=False)
        ]
    else:
        annotation = Annotated[str | None, typer.Option(flag, help=help_text, show_default=False)]
    return inspect.Parameter(
        f"game_option_{name}", inspect.Parameter.KEYWORD_ONLY, default=None,
        annotation=annotation,
    )


def game_command(command: Callable[..., None]) -> Callable[..., None]:
    """``command``, whose parameter ``options: GameOptions`` is replaced on the command line by
    one option per game option (``--size``, ``--komi``, …, as the games declare them), which
    it receives gathered, those not given left out."""
    signature = inspect.signature(command, eval_str=True)
    declared = _declared_options()
    taken = _own_flags(signature)
    extra = [_option_parameter(name, games, taken) for name, games in declared.items()]
    parameters = []
    for parameter in signature.parameters.values():  # (Typer passes every one by keyword)
        if parameter.name == "options":
            parameters += extra
        else:
            parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))

    @functools.wraps(command)
    def with_options(**arguments: Any) -> None:
        given = {name: arguments.pop(f"game_option_{name}") for name in declared}
        command(**arguments, options={k: v for k, v in given.items() if v is not None})

    with_options.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    with_options.__annotations__ = {p.name: p.annotation for p in parameters}
    del with_options.__wrapped__
    return with_options


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one line naming what is wrong on stderr and exit (status 2 by default)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


INTERRUPTED = 130
"""The shell's status for a program ended by Ctrl-C."""
MAX_WORKERS = 256
"""The most worker processes a command starts (``--jobs``)."""
MAX_GAMES = 1_000_000
"""The most games a command plays or positions it judges (``--games``, ``--positions``)."""


def check_seconds(seconds: float | None, option: str) -> None:
    """Refuse a duration that is not a positive, finite number of seconds (``nan`` and ``inf``
    parse as floats) of at most :data:`~agon.core.limits.MAX_SECONDS`; None (no limit)
    passes."""
    if seconds is not None and not (math.isfinite(seconds) and 0 < seconds <= MAX_SECONDS):
        fail(
            f"{option} must be a positive number of seconds, not {seconds:g} "
            f"(at most {MAX_SECONDS:,.0f})"
        )


def check_count(value: int, option: str, lowest: int, highest: int) -> None:
    """Refuse a whole number option outside ``lowest`` to ``highest``."""
    if not lowest <= value <= highest:
        fail(f"{option} must be {lowest} to {highest:,}, not {shortened(f'{value:,}')}")


def check_length(text: str | None, limit: int, option: str) -> None:
    """Refuse a text option longer than ``limit`` characters, before anything reads it."""
    if text is not None and len(text) > limit:
        fail(f"{option} is {len(text):,} characters long: at most {limit:,} are read")


def build_game(name: str, options: GameOptions) -> Game:
    """The variant of game ``name`` the command-line options describe; an option its game does
    not have is refused, naming the ones it has."""
    try:
        found = plugin(name)
        specs = {option.name: option for option in found.game.option_specs}
        values: dict[str, Any] = {}
        for option_name, given in options.items():
            if option_name not in specs:
                fail(
                    f"{quoted(option_name)} is not an option of {found.title} "
                    f"(its options: {', '.join(specs)})"
                )
            spec = specs[option_name]
            values[option_name] = spec.parse(given) if isinstance(given, str) else given
        return make_game(found.name, values)
    except AgonError as error:
        fail(str(error))


def counted_progress(quiet: bool) -> Progress:
    """A progress bar on stderr counting a long command's pieces of work (none where
    ``quiet``)."""
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), console=Console(stderr=True), transient=True, disable=quiet,
    )


def option_words(game: Game, options: GameOptions) -> list[str]:
    """The command-line words that give ``options`` again (those given, as given), for a
    command that a report names so that it can be run again."""
    words: list[str] = []
    for spec in game.option_specs:
        if spec.name in options:
            given = options[spec.name]
            if isinstance(given, bool):
                words.append(spec.flag if given else "--no-" + spec.flag.removeprefix("--"))
            else:
                words += [spec.flag, str(given)]
    return words


def load_start(game: Game, position: str | None) -> State:
    """The starting position, or the one a position text describes; a bad text fails cleanly."""
    if position is None:
        return game.new_state()
    check_length(position, MAX_POSITION_LENGTH, "the position")
    try:
        return game.parse_position(position)
    except AgonError as error:
        fail(f"bad position: {error}")


def play_moves(state: State, moves_text: str) -> None:
    """Play a list of moves, refusing the first bad one with its 1-based index and the rule."""
    check_length(moves_text, MAX_MOVES_LENGTH, "the moves")
    for index, token in enumerate(moves_text.replace(",", " ").split(), start=1):
        try:
            move = state.game.parse_move(token)
        except NotationError as error:
            fail(f"move {index} ({shortened(token)}): {error}")
        reason = state.illegal_reason(move)
        if reason is not None:
            fail(f"move {index} ({shortened(token)}): {reason}")
        state.play(move)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP within :func:`terminate_as_interrupt`: work stops as on Ctrl-C, but
    where Ctrl-C only stops one piece of work of an interactive session (a hint, a review), this
    ends the session."""


_terminations: list[int] = []


def terminated() -> bool:
    """Whether SIGTERM or SIGHUP came within the current :func:`terminate_as_interrupt` block
    (also where the :class:`Terminated` it raised was caught as a Ctrl-C by code that stops
    on either)."""
    return bool(_terminations)


def _stopping_already(signum: int, frame: FrameType | None) -> None:
    """A stop signal after a stop: the program is already on its way out. (A handler, not
    SIG_IGN, which the programs it starts would inherit.)"""


_STOP_SIGNALS = (signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else []))


def _block_stop_signals_at_exit() -> None:
    """At the end of a program that was stopped: Python puts back the default handlers (which
    end the program) as it tears itself down, after the exit handlers; a repeated stop signal
    arriving then would kill it with its report written but its own status lost. Ignored
    (which Python's teardown leaves as it is, and which holds in every thread: a signal mask is
    the calling thread's alone, and a worker pool's threads may still be running), and blocked
    here besides, it is dropped when the program ends. (No program is started from here on, so
    none inherits the ignoring.)"""
    for stop in _STOP_SIGNALS:
        signal.signal(stop, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, stop on SIGTERM (``kill``, a job scheduler's stop) and SIGHUP (the
    terminal closed) as on Ctrl-C (raising :class:`Terminated`, a ``KeyboardInterrupt``), so
    that long work reports what it found and saves what it keeps before it ends. A signal
    ignored (``nohup``) stays ignored; after a stop, both do nothing until the program ends."""
    if threading.current_thread() is not threading.main_thread():
        yield  # (only the main thread may set signal handlers)
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        _terminations.append(signum)
        raise Terminated

    stops = list(_STOP_SIGNALS)
    _terminations.clear()
    previous = {
        stop: signal.signal(stop, held_while_compiling(interrupt))
        for stop in stops
        if signal.getsignal(stop) is not signal.SIG_IGN
    }
    stopping = False
    try:
        yield
    except KeyboardInterrupt:
        stopping = True
        raise
    finally:
        # once stopped, the program is on its way out: a repeat of the signal (``timeout``
        # sends one to the program, then one to its group) must not kill it while it reports
        stopping = stopping or bool(_terminations)
        for stop, handler in previous.items():
            signal.signal(stop, _stopping_already if stopping else handler)
        if stopping:
            atexit.unregister(_block_stop_signals_at_exit)  # (once, however many stops)
            atexit.register(_block_stop_signals_at_exit)


SIGNAL_ECHO_SECONDS = 0.5
"""A stop signal this soon after the last one is the same stop: ``timeout`` signals the program
and then its whole process group, which holds the program too."""


@contextmanager
def filtered_stop_signals() -> Iterator[Callable[[], None]]:
    """Within the block, Ctrl-C, SIGTERM and SIGHUP reach their handlers at most once in
    :data:`SIGNAL_ECHO_SECONDS`, and not at all once the ``hold`` it gives is called (a
    signal ignored, or left to the system, stays so). A stop's ``KeyboardInterrupt`` that
    lands in a callback from C is lost there and answered between the work's pieces (a
    search's chunks, a game's moves: :func:`agon.core.workers.stop_asked`), so Python's
    report of it ("Exception ignored ...") is not printed; nor, once a stop was heard, the
    report of a finalizer failing on an object the stop left half-built (LLVM's modules, where
    it lands as Numba compiles), even after the block."""
    held = False
    stopped = False

    def hold() -> None:
        nonlocal held
        held = True

    if threading.current_thread() is not threading.main_thread():
        yield hold  # (only the main thread may set signal handlers)
        return
    last_heard = -math.inf

    def filtered(handler: Callable[[int, FrameType | None], Any]) -> Callable[..., Any]:
        def heard(signum: int, frame: FrameType | None) -> Any:
            nonlocal last_heard
            now = time.monotonic()
            if held or now - last_heard < SIGNAL_ECHO_SECONDS:
                return None
            last_heard = now
            hear_stop()  # (asked again between chunks, where its interrupt was lost)
            return handler(signum, frame)

        return heard

    def unraisable(report: Any) -> None:
        after_stop = stopped or stop_asked()
        if after_stop and issubclass(report.exc_type, KeyboardInterrupt):
            return  # (a stop lost in a callback from C: heard, and answered between chunks)
        if after_stop and getattr(report.object, "__name__", None) == "__del__":
            return  # (a finalizer of an object the stop interrupted as it was being made)
        previous_unraisable(report)

    stops = [signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    handled = {stop: handler for stop in stops if callable(handler := signal.getsignal(stop))}
    for stop, handler in handled.items():
        signal.signal(stop, filtered(handler))
    previous_unraisable, sys.unraisablehook = sys.unraisablehook, unraisable
    hear_stop(False)
    try:
        yield hold
    finally:
        for stop, handler in handled.items():
            signal.signal(stop, handler)
        stopped = stop_asked()
        if not stopped:  # (after a stop, the half-built objects are collected later)
            sys.unraisablehook = previous_unraisable
        hear_stop(False)


@contextmanager
def stoppable_work() -> Iterator[None]:
    """For long work that plays game after game (training, calibrating): SIGTERM and SIGHUP
    stop it as Ctrl-C does (:func:`terminate_as_interrupt`), a stop is asked again between
    its moves where its interrupt was lost (:func:`filtered_stop_signals`), and an error that
    a stop caused, landing while compiled code called back into Python, is raised as that
    stop (a ``KeyboardInterrupt``)."""
    with terminate_as_interrupt(), filtered_stop_signals():
        try:
            yield
        except Exception as error:
            if not came_from_stop(error):
                raise
            raise KeyboardInterrupt from error
