"""Commands to look at and play games: ``agon play``, ``state``, ``rules`` and ``replay``."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from agon.cli.common import (
    INTERRUPTED,
    GameArg,
    GameOptions,
    Terminated,
    build_game,
    fail,
    game_command,
    load_start,
    play_moves,
    terminate_as_interrupt,
    terminated,
)
from agon.cli.saved_games import (
    Autosave,
    SavedGame,
    game_files,
    games_folder,
    latest_unfinished,
    load_record,
    save_record,
)
from agon.core.errors import AgonError, NotationError, quoted
from agon.core.files import user_path
from agon.core.game import Game, Move, State, format_points, read_count
from agon.core.limits import Limit
from agon.core.player import Player
from agon.core.records import GameRecord, now_iso
from agon.core.render import player_name
from agon.games import names, renderer, rules_text
from agon.search.agent import Agent, Forfeit
from agon.search.registry import AGENTS
from agon.study.external import ENGINE_SPEC_HELP, is_engine_spec, make_player
from agon.study.values import outcome_only

if TYPE_CHECKING:
    from agon.study.analysis import Analyst, Review

HUMAN = "human"
HINT_SECONDS = 2.0
"""How long a hint thinks."""
REVIEW_SECONDS = 1.0
"""How long the review at the end of a game spends on each position (`agon analyse --limit`
spends more)."""

PlainOpt = Annotated[
    bool,
    typer.Option(
        "--plain", help="Plain text without colours (also when NO_COLOR is set or not a terminal)."
    ),
]
PositionOpt = Annotated[
    str | None,
    typer.Option(
        "--position",
        help="Start from this position text (as `agon state --json` prints it).",
        show_default=False,
    ),
]


def strongest_agent_spec() -> str:
    """The default opponent: the strongest agent (agon.study.strongest) where it exists."""
    return next(
        (spec for spec in ("strongest:1s", "mcts:1s") if spec.partition(":")[0] in AGENTS),
        "random",
    )


def _agent_help(colour: str) -> str:
    return (
        f"Who plays {colour}: 'human', or an agent spec NAME[:BUDGET]; agents: "
        f"{', '.join(AGENTS)}; budgets like 2s, 500ms or 20000 (iterations or nodes). Or "
        + ENGINE_SPEC_HELP
    )


# --- output: Rich in a capable terminal, plain text elsewhere ------------------------------------


@dataclass
class Screen:
    """Where boards and messages go: a Rich console, or plain (possibly ASCII-only) text."""

    rich: bool
    ascii: bool
    console: Console = field(default_factory=lambda: Console(highlight=False))

    @classmethod
    def choose(cls, plain: bool) -> Screen:
        capable = (
            not plain
            and sys.stdout.isatty()
            and not os.environ.get("NO_COLOR")
            and os.environ.get("TERM") != "dumb"
        )
        encoding = sys.stdout.encoding or "ascii"
        try:
            "↑→↓←·─●○×".encode(encoding)
            ascii_only = False
        except (UnicodeEncodeError, LookupError):
            ascii_only = True
        return cls(rich=capable, ascii=ascii_only)

    def board(self, state: State) -> None:
        drawing = renderer(state.game)
        if self.rich:
            self.console.print(drawing.render_rich(state))
        else:
            typer.echo(drawing.render_text(state, ascii=self.ascii))

    def say(self, text: str) -> None:
        typer.echo(text)

    def markdown(self, text: str) -> None:
        if self.rich:
            from rich.markdown import Markdown  # (its parser is slow to import: only when shown)

            self.console.print(Markdown(text))
        else:
            typer.echo(text.rstrip("\n"))


def _wrapped_moves(state: State, moves: list[Move]) -> str:
    text = " ".join(state.game.format_move(move) for move in moves) or "(none)"
    return textwrap.fill(text, width=78, initial_indent="  ", subsequent_indent="  ")


def result_sentence(state: State) -> str:
    """``"Black wins by 2.5 points (both players passed)."``; in a game of wins and losses
    without points, ``"Black wins (Black completed a line of 3)."``"""
    margin, reason = state.margin, state.end_reason
    if margin == 0:
        return f"The game is a draw ({reason})."
    winner = player_name(Player.BLACK if margin > 0 else Player.WHITE)
    if outcome_only(state.game):
        return f"{winner} wins ({reason})."
    points = format_points(abs(margin))
    return f"{winner} wins by {points} point{'' if abs(margin) == 1 else 's'} ({reason})."


# --- agon state -----------------------------------------------------------------------------------


def state_command(
    game: GameArg,
    options: GameOptions,
    position: PositionOpt = None,
    moves: Annotated[
        str | None,
        typer.Option(
            "--moves", help='Moves to play first, e.g. "d4-d5 e5-e4".', show_default=False
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    plain: PlainOpt = False,
) -> None:
    """Show a position (after --moves) with its legal moves, score and result."""
    variant = build_game(game, options)
    state = load_start(variant, position)
    play_moves(state, moves or "")
    if as_json:
        typer.echo(json.dumps(state_summary(state), ensure_ascii=False))
        return
    screen = Screen.choose(plain)
    screen.say(variant.description)
    screen.board(state)
    if state.history:
        screen.say("Moves played:\n" + _wrapped_moves(state, state.history))
    if state.is_over:
        screen.say(result_sentence(state))
    else:
        legal = state.legal_moves()
        screen.say(f"Legal moves ({len(legal)}):\n" + _wrapped_moves(state, legal))
    screen.say(f"Position: {state.position()}")


def state_summary(state: State) -> dict[str, Any]:
    """Everything ``agon state --json`` reports about a state."""
    game, score = state.game, state.score()
    return {
        "game": game.name,
        "variant": game.options(),
        "moves": [game.format_move(move) for move in state.history],
        "position": state.position(),
        "to_move": state.to_move.label if state.to_move is not None else None,
        "legal_moves": [game.format_move(move) for move in state.legal_moves()],
        "over": state.is_over,
        "reason": state.end_reason,
        "score": {"black": score.black, "white": score.white},
        "margin": state.margin,
        "result": state.result,
    }


# --- agon rules -----------------------------------------------------------------------------------


def rules_command(
    game: GameArg,
    options: GameOptions,
    lang: Annotated[
        str,
        typer.Option("--lang", help="Language: en, es, nl or lt, as the game's rules are written."),
    ] = "en",
    plain: PlainOpt = False,
) -> None:
    """Print the rules of the game (of this variant), in English, Spanish, Dutch or Lithuanian."""
    variant = build_game(game, options)
    try:
        text = rules_text(variant, lang)
    except AgonError as error:
        fail(str(error))
    Screen.choose(plain).markdown(text)


# --- reading the terminal -------------------------------------------------------------------------

MAX_LINE_BYTES = 4096
"""The longest line of input read (a move or a command is a few bytes; a file name a few
hundred)."""


class LineTooLong(Exception):
    """A line of input over :data:`MAX_LINE_BYTES`, read to its end and dropped."""


MAX_DROPPED_BYTES = 1 << 30
"""A line this long is no line a person typed (``< /dev/zero``): it ends the input (a second
or two of reading, in pieces: the memory of a short line)."""


class EndlessLine(EOFError):
    """A line of input over :data:`MAX_DROPPED_BYTES`, taken for the end of the input (it may
    never end)."""


def read_line(prompt: str) -> str:
    """One line of standard input, of at most :data:`MAX_LINE_BYTES` bytes. Raises EOFError at
    the end of the input, and LineTooLong for a longer line, whose rest is read a piece at a
    time and dropped: an endless line takes no more memory than a short one."""
    if sys.stdin.isatty():
        line = input(prompt)  # (line editing; a terminal's line is what a person typed)
        if len(line.encode("utf-8", "replace")) > MAX_LINE_BYTES:
            raise LineTooLong
        return line
    sys.stdout.write(prompt)
    sys.stdout.flush()
    stream = sys.stdin.buffer
    data = stream.readline(MAX_LINE_BYTES + 1)
    if not data:
        raise EOFError
    if len(data) > MAX_LINE_BYTES and not data.endswith(b"\n"):
        dropped = len(data)
        while (rest := stream.readline(64 * 1024)) and not rest.endswith(b"\n"):
            dropped += len(rest)
            if dropped > MAX_DROPPED_BYTES:
                raise EndlessLine
        raise LineTooLong
    return data.decode("utf-8", "replace").rstrip("\r\n")


def read_command(screen: Screen, prompt: str, echo: bool) -> str:
    """A line read with :func:`read_line`, asked again after a line too long; ``echo`` shows
    the line after the prompt (when the input is not a terminal, which shows it itself)."""
    while True:
        try:
            line = read_line(prompt)
        except LineTooLong:
            if echo:
                screen.say("")
            screen.say(f"That line is over {MAX_LINE_BYTES} bytes: ignored.")
            continue
        if echo:
            screen.say(line)
        return line


# --- agon replay, and review in agon play ---------------------------------------------------------


def replay_step(index: int, command: str, last: int) -> int | None:
    """The position to show after ``command`` at position ``index`` of 0..last; None: stop.

    Enter goes forward (and stops after the last position), ``b`` back, ``q`` stops, a number
    jumps to the position after that many moves.
    """
    command = command.strip().lower()
    if command in ("q", "quit"):
        return None
    if command in ("b", "back"):
        return max(index - 1, 0)
    number = read_count(command)
    if number is not None:
        return min(number, last)
    return index + 1 if index < last else None


REVIEW_PROMPT = "[Enter] next, b back, q quit, N go to move N> "


def step_through(screen: Screen, record: GameRecord, ask: Callable[[str], str] | None) -> None:
    """Show a game's positions: all in turn where ``ask`` is None, else as the answers it reads
    direct (:func:`replay_step`). EOFError from ``ask`` stops."""
    states = record.states()

    def show(index: int) -> None:
        if index == 0:
            screen.say("Start")
        else:
            mover = states[index - 1].to_move
            who = player_name(mover) if mover is not None else ""
            screen.say(f"Move {index}/{len(record.moves)}: {who} {record.moves[index - 1]}")
        screen.board(states[index])

    last = len(states) - 1
    if ask is None:
        for index in range(last + 1):
            show(index)
        return
    shown: int | None = 0
    while shown is not None:
        show(shown)
        shown = replay_step(shown, ask(REVIEW_PROMPT), last)


def replay_command(
    record_file: Annotated[
        Path, typer.Argument(help="A game record (JSON) saved by `agon play` or the web arena.")
    ],
    show_all: Annotated[
        bool, typer.Option("--all", help="Print every position, without stopping.")
    ] = False,
    plain: PlainOpt = False,
) -> None:
    """Step through a saved game: Enter next, b back, q quit, a number jumps to that move.
    Where the input is not a terminal (a pipe, a file), every position is printed, and what
    the input holds is not read as keys."""
    try:
        record = load_record(record_file)
    except AgonError as error:
        fail(str(error))
    screen = Screen.choose(plain)
    players = record.players
    screen.say(
        f"{record.game.description}. Black: {players.get('black', '?')}, "
        f"White: {players.get('white', '?')}. {len(record.moves)} moves."
    )
    stepping = not show_all and sys.stdin.isatty()
    ask = partial(read_command, screen, echo=False) if stepping else None
    try:
        step_through(screen, record, ask)
    except (EOFError, KeyboardInterrupt):
        screen.say("")


# --- agon play ------------------------------------------------------------------------------------


class Leave(Exception):
    """The player leaves the game (quit, end of input), which stays saved as it is."""


@dataclass
class Session:
    """Games at the terminal between humans and agents, each kept in its file as it goes."""

    state: State
    agents: dict[Player, Agent | None]
    screen: Screen
    seed: int | None
    autosave: Autosave
    start: State
    start_position: str | None
    echo_input: bool = False
    movers: list[Player] = field(default_factory=list)
    started: str = field(default_factory=now_iso)
    unannounced: bool = False
    _analyst: Analyst | None = None
    _reviewed: tuple[tuple[Move, ...], Review] | None = None
    """The last complete review, with the moves it reviewed."""

    @property
    def game(self) -> Game:
        return self.state.game

    def run(self) -> None:
        """Play, and after each game's end offer to save, undo, review or start again, until
        the player leaves (:class:`Leave`)."""
        self.screen.board(self.state)
        while True:
            while not self.state.is_over:
                player = self.state.to_move
                assert player is not None
                agent = self.agents[player]
                if agent is None:
                    self.human_turn(player)
                else:
                    self.computer_turn(player, agent)
            self.screen.say(result_sentence(self.state))
            self.announce()
            while not self.command(self.ask("Game over> "), None):
                pass

    def record(self) -> GameRecord:
        players = {
            player.label: agent.spec if agent else HUMAN for player, agent in self.agents.items()
        }
        return GameRecord.from_state(self.state, players, self.start_position, self.started)

    def keep(self) -> None:
        """Save the game in its file as it is now: after every move, undo and new game, so
        that nothing shown on the screen is lost, whatever ends the program."""
        failure = self.autosave.keep(self.record())
        if failure:
            self.screen.say(failure)
        self.unannounced = True

    def announce(self) -> None:
        """Say where the game is saved, if it changed since last said. (The game as last kept,
        not the state, which an interrupt may have left in the middle of a change.)"""
        failure = self.autosave.flush()
        if failure:
            self.screen.say(failure)
        kept = self.autosave.record
        if not self.unannounced or not self.autosave.written or kept is None:
            return
        self.unannounced = False
        going_on = "" if kept.finished else " (`agon play --resume` goes on)"
        self.screen.say(f"Game saved to {self.autosave.path}{going_on}")

    def play(self, player: Player, move: Move) -> None:
        self.state.play(move)
        self.movers.append(player)
        self.keep()
        self.screen.board(self.state)

    def computer_turn(self, player: Player, agent: Agent) -> None:
        try:
            move = agent.choose(self.state)
        except Forfeit as forfeit:
            raise Leave(
                f"{player_name(player)} ({agent.spec}) forfeits: {forfeit}; the game is left "
                "unfinished"
            ) from None
        self.screen.say(f"{player_name(player)} ({agent.spec}) plays {self.game.format_move(move)}")
        self.play(player, move)

    def human_turn(self, player: Player) -> None:
        """Read commands until the human has moved (or undone, or started a new game)."""
        while not self.command(self.ask(f"{player_name(player)} to move> "), player):
            pass

    def ask(self, prompt: str) -> str:
        try:
            return read_command(self.screen, prompt, self.echo_input)
        except EOFError as end:
            self.screen.say("")
            if isinstance(end, EndlessLine):
                self.screen.say(
                    f"A line of over {MAX_DROPPED_BYTES:,} bytes without its end: taken for the "
                    "end of the input."
                )
            over = self.state.is_over
            raise Leave("" if over else "end of input: the game is left unfinished") from None

    def command(self, line: str, player: Player | None) -> bool:
        """Do what ``line`` says, at ``player``'s turn (None: after the end); whether the turn
        is over (a move, an undo, a new game)."""
        command, _, argument = line.strip().partition(" ")
        command = command.lower()
        if not command:
            return False
        if command in ("quit", "exit"):
            raise Leave("" if self.state.is_over else "game left unfinished")
        if command in ("help", "?"):
            self.show_help(player)
        elif command == "undo":
            return self.undo()
        elif command == "new":
            self.new_game()
            return True
        elif command == "save":
            self.save(argument.strip())
        elif command == "review":
            self.review()
        elif player is None:
            self.screen.say("The game is over. Type 'help' for what you can do now.")
        elif command == "hint":
            self.hint()
        else:
            return self.try_move(player, line)
        return False

    def try_move(self, player: Player, text: str) -> bool:
        try:
            move = self.game.parse_move(text)
        except NotationError as error:
            self.screen.say(f"{error}. Type 'help' for the commands and the legal moves.")
            return False
        reason = self.state.illegal_reason(move)
        if reason is not None:
            self.screen.say(f"{self.game.format_move(move)} is not allowed: {reason}.")
            return False
        self.play(player, move)
        return True

    def undo(self) -> bool:
        """Take back the last human move and every computer move after it."""
        humans = {player for player, agent in self.agents.items() if agent is None}
        if not any(mover in humans for mover in self.movers):
            self.screen.say("There is no move of yours to take back.")
            return False
        taken_back = []
        while True:
            taken_back.append(self.game.format_move(self.state.undo()))
            if self.movers.pop() in humans:
                break
        self.keep()
        self.screen.say(f"Took back: {', '.join(reversed(taken_back))}")
        self.screen.board(self.state)
        return True

    def new_game(self) -> None:
        """Start again from the same position, with the same players, in a file of its own."""
        self.announce()
        self.state = self.start.copy()
        self.movers = []
        self.started = now_iso()
        self.autosave.release()
        self.autosave = Autosave(self.autosave.folder)
        self.unannounced = False
        self.screen.say("New game.")
        self.screen.board(self.state)

    @property
    def analyst(self) -> Analyst:
        """The analyst of hints and reviews (one a session: what its solver learns stays; its
        tables a player's, beside the computer's own)."""
        if self._analyst is None:
            from agon.cli.study_commands import new_analyst, warm_up

            warm_up(self.game)  # (so that a hint's seconds do not count loading the solver)
            self._analyst = new_analyst(self.game, Limit(seconds=HINT_SECONDS))
        return self._analyst

    def review(self) -> None:
        """After the end: every move annotated, then a step through the game. During the game:
        the step through. Ctrl-C stops either and goes back to the game."""
        try:
            if self.state.is_over:
                self.annotate()
            step_through(self.screen, self.record(), self.ask)
        except KeyboardInterrupt:
            if terminated():
                raise
            self.screen.say("")
        self.screen.say("Back to the game." if not self.state.is_over else "Back to the end.")
        self.screen.board(self.state)

    def annotate(self) -> None:
        """Show every move of the game annotated, as `agon analyse` does."""
        from agon.cli.study_commands import render_review, run_review, table_console

        moves = tuple(self.state.history)
        if self._reviewed is not None and self._reviewed[0] == moves:
            review = self._reviewed[1]
        else:
            self.screen.say(
                f"Reviewing {len(moves)} moves, up to {REVIEW_SECONDS:g}s each (Ctrl-C stops)..."
            )
            players = {
                player.label: agent.spec if agent else HUMAN
                for player, agent in self.agents.items()
            }
            review = run_review(
                self.analyst, self.start, list(moves), Limit(seconds=REVIEW_SECONDS), players,
                progress_bar=sys.stderr.isatty(),
            )
            if terminated():
                raise Terminated
            if review.complete:
                self._reviewed = (moves, review)
        render_review(table_console(self.screen), review, self.screen.ascii)

    def show_help(self, player: Player | None) -> None:
        common = (
            "  save FILE  save the game as a JSON record (see `agon replay`)\n"
            "  review     step through the game, move by move; after the end, every move\n"
            "             annotated first (values, best moves, mistakes)\n"
            "  new        start a new game (this one stays saved)\n"
            "  help       this text\n"
            "  quit       leave (the game stays saved: `agon play --resume` goes on)"
        )
        if player is None:
            self.screen.say(
                "The game is over. Type one of:\n"
                "  undo       take back your last move (and the computer's reply) and go on\n"
                + common
            )
            return
        legal = self.state.legal_moves()
        example = self.game.format_move(legal[0]) if legal else "pass"
        passing = ", pass" if self.game.pass_move is not None else ""
        self.screen.say(
            f"Type a move (e.g. {example}){passing}, or one of:\n"
            "  undo       take back your last move (and the computer's reply)\n"
            "  hint       the best move, and what it is worth\n"
            + common
            + f"\nLegal moves ({len(legal)}):\n{_wrapped_moves(self.state, legal)}"
        )

    def hint(self) -> None:
        """The best move, and the value in words from the side to move's view: exact where the
        solver proves it in a couple of seconds, else the engine's estimate. Ctrl-C stops."""
        from agon.cli.study_commands import hint_text

        try:
            analysis = self.analyst.analyse(self.state.copy(), Limit(seconds=HINT_SECONDS))
        except KeyboardInterrupt:
            if terminated():
                raise
            self.screen.say("\nNo hint: stopped.")
            return
        self.screen.say(hint_text(self.state, analysis, self.screen.ascii))

    def save(self, path: str) -> None:
        if not path:
            self.screen.say("Say where to save: save FILE")
            return
        try:
            save_record(self.record(), user_path(path))
        except AgonError as error:
            self.screen.say(f"Not saved: {error}")
            return
        self.screen.say(f"Saved {len(self.state.history)} moves to {path}")


PlayGameArg = Annotated[
    str | None,
    typer.Argument(
        help=f"The game: {' or '.join(names())}. With --resume: a game (its latest unfinished "
        "game) or a record file; with --list, the game whose saved games to list.",
        show_default=False,
    ),
]
LIST_LENGTH = 20


def play_command(
    game: PlayGameArg = None,
    *,
    options: GameOptions,
    black: Annotated[
        str | None,
        typer.Option("--black", help=_agent_help("Black") + " Default: human.", show_default=False),
    ] = None,
    white: Annotated[
        str | None,
        typer.Option(
            "--white",
            help=_agent_help("White") + f" Default: {strongest_agent_spec()}.",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed for the agents' random choices.")
    ] = None,
    position: PositionOpt = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Go on with a saved game: the latest unfinished one (of GAME if given), or "
            "the record file given as GAME. Its variant, moves and players are the record's "
            "(--black and --white change the players).",
        ),
    ] = False,
    list_games: Annotated[
        bool, typer.Option("--list", help="List the saved games, the latest first.")
    ] = False,
    plain: PlainOpt = False,
) -> None:
    """Play a game at the terminal: humans against agents, or agents against each other.

    At your turn type a move in the game's notation, pass, undo, hint, review, save FILE, new
    or quit; after the end, undo, review, save FILE, new or quit. Every game is saved as it
    goes, in $AGON_HOME/games if AGON_HOME is set, else in $XDG_STATE_HOME/agon/games
    (~/.local/state/agon/games); --resume goes on with one.
    """
    screen = Screen.choose(plain)
    if list_games:
        if resume or options or position or black or white:
            fail("--list takes no other option (a game's name lists only its games)")
        list_saved_games(screen, game)
        return
    if resume:
        if options or position:
            fail(
                "--resume goes on with the record's variant and position: leave out the "
                "game's options and --position"
            )
        opening = resumed_opening(game, screen)
    else:
        if game is None:
            fail(f"say which game to play: {' or '.join(names())} (or --resume, or --list)")
        opening = new_opening(build_game(game, options), position)
    try:
        run_session(opening, screen, {Player.BLACK: black, Player.WHITE: white}, seed)
    finally:
        opening.autosave.release()  # (and the game's lock with it, however the session ends)


def run_session(
    opening: Opening, screen: Screen, given: dict[Player, str | None], seed: int | None
) -> None:
    """Play from ``opening`` until the players leave (or a signal ends the session)."""
    agents = choose_agents(opening.state.game, opening.seats, given, seed, screen)
    if sys.stdin.isatty():
        import readline  # noqa: F401  (line editing and history for input())
    state = opening.state
    session = Session(
        state,
        agents,
        screen,
        seed,
        opening.autosave,
        start=opening.start,
        start_position=opening.start_position,
        echo_input=not sys.stdin.isatty(),
        movers=opening.movers,
        started=opening.started,
    )
    names_ = {player: agent.spec if agent else HUMAN for player, agent in agents.items()}
    screen.say(
        f"{state.game.description}. Black: {names_[Player.BLACK]}, White: {names_[Player.WHITE]}."
    )
    try:
        with terminate_as_interrupt():
            session.run()
    except Leave as leaving:
        if str(leaving):
            screen.say(f"{leaving}.")
        session.announce()
    except KeyboardInterrupt:
        # The last move's record is written unless its save was cut short: then write it now.
        # (The state is not read again: the interrupt may have come in the middle of a move.)
        session.autosave.flush()
        with suppress(OSError):  # (after a hangup the terminal is gone)
            screen.say("\nInterrupted.")
            session.announce()
        raise typer.Exit(INTERRUPTED) from None
    finally:
        session.autosave.release()  # (a new game of the session has a file of its own)
        for agent in agents.values():
            if agent is not None:
                agent.close()


@dataclass
class Opening:
    """Where a session begins: a new game, or a saved one going on."""

    start: State
    state: State
    movers: list[Player]
    seats: dict[Player, str]
    """Who plays each side unless the command line says: 'human' or an agent spec."""
    started: str
    start_position: str | None
    autosave: Autosave


def new_opening(variant: Game, position: str | None) -> Opening:
    start = load_start(variant, position)
    return Opening(
        start=start,
        state=start.copy(),
        movers=[],
        seats={Player.BLACK: HUMAN, Player.WHITE: strongest_agent_spec()},
        started=now_iso(),
        start_position=start.position() if position is not None else None,
        autosave=Autosave(games_folder_or_fail()),
    )


def resumed_opening(target: str | None, screen: Screen) -> Opening:
    """The saved game ``--resume`` goes on with (see :func:`resumed_record`). A game of the
    games folder goes on in its file; a record from elsewhere is not written over, the game
    goes on in a new file of the folder."""
    record, path = resumed_record(target)
    folder = games_folder_or_fail()
    in_folder = path.resolve().parent == folder.resolve()
    autosave = _autosave(folder, path if in_folder else None)
    screen.say(f"Resuming {path}: {len(record.moves)} moves played.")
    states = record.states()
    return Opening(
        start=states[0],
        state=states[-1],
        movers=[mover for before in states[:-1] if (mover := before.to_move) is not None],
        seats={player: record.players.get(player.label, "?") for player in Player},
        started=record.started,
        start_position=record.start_position,
        autosave=autosave,
    )


def _autosave(folder: Path, path: Path | None) -> Autosave:
    """The autosave of a game going on in ``path``, or a one-line refusal where another
    ``agon play`` is playing it."""
    try:
        return Autosave(folder, path)
    except AgonError as error:
        fail(str(error))


def choose_agents(
    game: Game,
    seats: dict[Player, str],
    given: dict[Player, str | None],
    seed: int | None,
    screen: Screen,
) -> dict[Player, Agent | None]:
    """Who plays each side (None: a human): as ``given`` on the command line, else as
    ``seats`` say (the defaults, or a record's players, where a name that is no agent here is
    a human). Another program is started only where the command line names it, never as a
    record says."""
    agents: dict[Player, Agent | None] = {}
    for player in Player:
        spec = given[player] or seats[player]
        if spec.strip().lower() == HUMAN:
            agents[player] = None
            continue
        if given[player] is None and is_engine_spec(spec):
            screen.say(
                f"{player_name(player)} was {quoted(spec)}: a program is started only where "
                f"--{player.label} names it, so a human plays."
            )
            agents[player] = None
            continue
        try:
            agents[player] = make_player(spec, game, None if seed is None else seed + player)
        except AgonError as error:
            if given[player] is not None:
                for made in agents.values():
                    if made is not None:
                        made.close()
                fail(f"--{player.label}: {error}")
            screen.say(f"{player_name(player)} was {quoted(spec)}, no agent here: a human plays.")
            agents[player] = None
    return agents


def games_folder_or_fail() -> Path:
    """The saved games' folder, or a one-line refusal where ``AGON_HOME`` cannot be one."""
    try:
        return games_folder()
    except AgonError as error:
        fail(f"AGON_HOME: {error}")


def resumed_record(target: str | None) -> tuple[GameRecord, Path]:
    """The record ``--resume`` goes on with, and its file: the file ``target`` names, or the
    latest unfinished game (of the game ``target`` names, if it names one)."""
    try:
        folder = games_folder()
        if target is not None and target.lower() not in names():
            path = user_path(target)
            return load_record(path), path
        saved = latest_unfinished(folder, target and target.lower())
    except AgonError as error:
        fail(str(error))
    if saved is None or saved.record is None:
        of = f"{target.lower()} " if target else ""
        fail(f"no unfinished {of}game in {folder} (`agon play --list` lists the saved games)")
    return saved.record, saved.path


def list_saved_games(screen: Screen, game: str | None) -> None:
    """The saved games (of ``game`` only, if given), the latest first, one a line."""
    if game is not None and game.lower() not in names():
        fail(f"unknown game {quoted(game)}: {' or '.join(names())}")
    folder = games_folder_or_fail()
    try:
        files = game_files(folder)
    except AgonError as error:
        fail(str(error))
    lines = []
    for path in files:
        saved = SavedGame.load(path)
        if saved.record is None:
            if game is None:
                lines.append(f"  {path.name}  (unreadable: {saved.problem})")
        elif game is None or saved.record.game.name == game.lower():
            lines.append(f"  {path.name}  {_saved_game_summary(saved.record)}")
        if len(lines) == LIST_LENGTH:
            break
    if not lines:
        of = f"{game.lower()} " if game else ""
        screen.say(f"No saved {of}games in {folder}.")
        return
    screen.say(f"Saved games in {folder}, the latest first:")
    screen.say("\n".join(lines))
    if len(lines) == LIST_LENGTH:
        screen.say(f"(the latest {LIST_LENGTH} only: the folder holds {len(files)} files)")
    screen.say("`agon play --resume FILE` goes on with one; `agon replay FILE` shows one.")


def _saved_game_summary(record: GameRecord) -> str:
    count = len(record.moves)
    status = f"{record.result} ({record.reason})" if record.finished else "unfinished"
    players = f"{record.players.get('black', '?')} v {record.players.get('white', '?')}"
    moves = f"{count} move{'' if count == 1 else 's'}"
    return f"{record.game.description}; {players}; {moves}, {status}"


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("play")(game_command(play_command))
    app.command("state")(game_command(state_command))
    app.command("rules")(game_command(rules_command))
    app.command("replay")(replay_command)
