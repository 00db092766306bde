"""Commands to look at and play games: ``agon play``, ``state``, ``rules`` and ``replay``."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from agon.cli.common import (
    GameArg,
    GameOptions,
    build_game,
    fail,
    game_command,
    load_start,
    play_moves,
)
from agon.core.errors import AgonError, NotationError
from agon.core.game import Game, Move, State, format_points
from agon.core.player import Player
from agon.core.records import GameRecord, now_iso
from agon.core.render import player_name
from agon.games import make_game, renderer, rules_text
from agon.search.agent import Agent
from agon.search.registry import AGENTS, make_agent

HUMAN = "human"
INTERRUPTED = 130  # the shell's status for a program ended by Ctrl-C

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
    """The agent used for hints and as the default opponent: MCTS where it exists."""
    return "mcts:1s" if "mcts" in AGENTS else "random"


def _agent_help(colour: str) -> str:
    return (
        f"Who plays {colour}: 'human', or an agent spec NAME[:BUDGET]; agents: "
        f"{', '.join(AGENTS)}; budgets like 2s, 500ms or 20000 (iterations or nodes)."
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
    """``"Black wins by 2.5 points (both players passed)."``"""
    margin, reason = state.margin, state.end_reason
    if margin == 0:
        return f"The game is a draw ({reason})."
    winner = player_name(Player.BLACK if margin > 0 else Player.WHITE)
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


# --- agon play ------------------------------------------------------------------------------------


class GameOver(Exception):
    """The session ends before the game does (quit, end of input)."""


@dataclass
class Session:
    """One game at the terminal between humans and agents."""

    state: State
    agents: dict[Player, Agent | None]
    screen: Screen
    seed: int | None
    start_position: str | None
    echo_input: bool = False
    movers: list[Player] = field(default_factory=list)
    started: str = field(default_factory=now_iso)

    @property
    def game(self) -> Game:
        return self.state.game

    def run(self) -> None:
        self.screen.board(self.state)
        while not self.state.is_over:
            player = self.state.to_move
            assert player is not None
            agent = self.agents[player]
            if agent is None:
                self.human_turn(player)
            else:
                self.computer_turn(player, agent)
        self.screen.say(result_sentence(self.state))

    def play(self, player: Player, move: Move) -> None:
        self.state.play(move)
        self.movers.append(player)
        self.screen.board(self.state)

    def computer_turn(self, player: Player, agent: Agent) -> None:
        move = agent.choose(self.state)
        self.screen.say(f"{player_name(player)} ({agent.spec}) plays {self.game.format_move(move)}")
        self.play(player, move)

    def human_turn(self, player: Player) -> None:
        """Read commands until the human has moved (or the session ends)."""
        while True:
            try:
                line = input(f"{player_name(player)} to move> ")
            except EOFError:
                self.screen.say("")
                raise GameOver("end of input: the game is left unfinished") from None
            if self.echo_input:
                self.screen.say(line)
            command, _, argument = line.strip().partition(" ")
            command = command.lower()
            if not command:
                continue
            if command in ("quit", "exit"):
                raise GameOver("game abandoned")
            if command in ("help", "?"):
                self.show_help()
            elif command == "undo":
                if self.undo():
                    return
            elif command == "hint":
                self.hint()
            elif command == "save":
                self.save(argument.strip())
            elif self.try_move(player, line):
                return

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
        self.screen.say(f"Took back: {', '.join(reversed(taken_back))}")
        self.screen.board(self.state)
        return True

    def show_help(self) -> None:
        legal = self.state.legal_moves()
        example = self.game.format_move(legal[0]) if legal else "pass"
        passing = ", pass" if self.game.pass_move is not None else ""
        self.screen.say(
            f"Type a move (e.g. {example}){passing}, or one of:\n"
            "  undo       take back your last move (and the computer's reply)\n"
            "  hint       ask the strongest agent for a move\n"
            "  save FILE  save the game as a JSON record (see `agon replay`)\n"
            "  help       this text\n"
            "  quit       leave the game\n"
            f"Legal moves ({len(legal)}):\n{_wrapped_moves(self.state, legal)}"
        )

    def hint(self) -> None:
        spec = strongest_agent_spec()
        analysis = make_agent(spec, self.game, self.seed).analyse(self.state)
        text = f"Hint ({spec}): {self.game.format_move(analysis.best_move)}"
        if analysis.value is None:
            text += " (this agent gives no value)"
        else:
            kind = "proven" if analysis.proven else "estimated"
            text += f", {kind} final margin {analysis.value:+g} for the side to move"
        self.screen.say(text)

    def save(self, path: str) -> None:
        if not path:
            self.screen.say("Say where to save: save FILE")
            return
        players = {
            player.label: agent.spec if agent else HUMAN for player, agent in self.agents.items()
        }
        record = GameRecord.from_state(self.state, players, self.start_position, self.started)
        try:
            record.save(path)
        except AgonError as error:
            self.screen.say(f"Not saved: {error}")
            return
        self.screen.say(f"Saved {len(self.state.history)} moves to {path}")


def play_command(
    game: GameArg,
    options: GameOptions,
    black: Annotated[str, typer.Option("--black", help=_agent_help("Black"))] = HUMAN,
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
    plain: PlainOpt = False,
) -> None:
    """Play a game at the terminal: humans against agents, or agents against each other.

    At your turn type a move in the game's notation, pass, undo, hint, save FILE or quit.
    """
    variant = build_game(game, options)
    state = load_start(variant, position)
    agents: dict[Player, Agent | None] = {}
    specs = {Player.BLACK: black, Player.WHITE: white or strongest_agent_spec()}
    for player, spec in specs.items():
        if spec.strip().lower() == HUMAN:
            agents[player] = None
            continue
        player_seed = None if seed is None else seed + player
        try:
            agents[player] = make_agent(spec, variant, player_seed)
        except AgonError as error:
            fail(f"--{player.label}: {error}")
    screen = Screen.choose(plain)
    if sys.stdin.isatty():
        import readline  # noqa: F401  (line editing and history for input())
    session = Session(
        state,
        agents,
        screen,
        seed,
        start_position=state.position() if position is not None else None,
        echo_input=not sys.stdin.isatty(),
    )
    screen.say(f"{variant.description}. Black: {black}, White: {specs[Player.WHITE]}.")
    try:
        session.run()
    except GameOver as stop:
        screen.say(f"{stop}.")
    except KeyboardInterrupt:
        screen.say("\nInterrupted.")
        raise typer.Exit(INTERRUPTED) from None


# --- agon replay ----------------------------------------------------------------------------------


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
    if command.isdigit():
        return min(int(command), last)
    return index + 1 if index < last else None


def replay_command(
    record_file: Annotated[
        Path, typer.Argument(help="A game record (JSON) saved by `agon play` or the web arena.")
    ],
    show_all: Annotated[
        bool, typer.Option("--all", help="Print every position, without stopping.")
    ] = False,
    plain: PlainOpt = False,
) -> None:
    """Step through a saved game: Enter next, b back, q quit, a number jumps to that move."""
    try:
        record = GameRecord.load(record_file, make_game)
    except AgonError as error:
        fail(str(error))
    states = record.states()
    screen = Screen.choose(plain)
    players = record.players
    screen.say(
        f"{record.game.description}. Black: {players.get('black', '?')}, "
        f"White: {players.get('white', '?')}. {len(record.moves)} moves."
    )

    def show(index: int) -> None:
        if index == 0:
            screen.say("Start")
        else:
            mover = states[index - 1].to_move
            who = player_name(mover) if mover is not None else ""
            screen.say(f"Move {index}/{len(record.moves)}: {who} {record.moves[index - 1]}")
        screen.board(states[index])

    last = len(states) - 1
    if show_all or not sys.stdin.isatty():
        for index in range(last + 1):
            show(index)
        return
    prompt = "[Enter] next, b back, q quit, N go to move N> "
    shown: int | None = 0
    try:
        while shown is not None:
            show(shown)
            shown = replay_step(shown, input(prompt), last)
    except (EOFError, KeyboardInterrupt):
        screen.say("")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("play")(game_command(play_command))
    app.command("state")(game_command(state_command))
    app.command("rules")(game_command(rules_command))
    app.command("replay")(replay_command)
