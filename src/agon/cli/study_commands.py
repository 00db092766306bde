"""Study from the command line: ``agon analyse`` annotates a game's moves, or analyses one
position. The review's table is drawn here for ``agon play``'s ``review`` too."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agon.cli.common import (
    INTERRUPTED,
    GameOptions,
    JsonOpt,
    build_game,
    fail,
    game_command,
    load_start,
    play_moves,
    terminate_as_interrupt,
)
from agon.cli.play_commands import PlainOpt, PositionOpt, Screen
from agon.cli.saved_games import load_record
from agon.core.errors import AgonError, quoted
from agon.core.files import user_path
from agon.core.game import Game, State, format_points
from agon.core.limits import Limit
from agon.core.player import Player
from agon.core.render import player_name
from agon.games import names
from agon.study.values import Judgement, Value, describe, outcome_only, short

if TYPE_CHECKING:
    from rich.progress import Progress

    from agon.core.records import GameRecord
    from agon.study.analysis import Analyst, PositionAnalysis, Review

# The solver and the engine are imported by the commands that run them (agon.study.analysis
# loads their kernels), not here: `agon --help` starts without them.

DEFAULT_LIMIT = "2s"
MAX_LIMIT_SECONDS = 600.0
"""The longest time ``--limit`` gives one position."""
MIN_LIMIT_SECONDS = 0.01
LINE_SHOWN = 8
"""Moves of a line of best play shown in the review's table (the JSON has them all)."""
BEST_SHOWN = 2
"""Best moves shown in the review's table (the JSON has them all)."""

MARKS = {
    Judgement.BEST: "",
    Judgement.GOOD: "",
    Judgement.INACCURACY: "?!",
    Judgement.MISTAKE: "?",
    Judgement.BLUNDER: "??",
}
"""How a judged move is marked after its notation, as annotated games mark them."""
STYLES = {
    Judgement.BEST: "green",
    Judgement.GOOD: "",
    Judgement.INACCURACY: "yellow",
    Judgement.MISTAKE: "dark_orange",
    Judgement.BLUNDER: "bold red",
}
ASCII_FOR = str.maketrans({"−": "-", "≈": "~", "—": "-", "…": "...", "×": "x"})


def plain_ascii(text: str, ascii_only: bool) -> str:
    """``text``, its few non-ASCII signs (minus, ≈, dashes) spelt in ASCII where the output
    takes nothing else."""
    return text.translate(ASCII_FOR) if ascii_only else text


# --- the review's table ----------------------------------------------------------------------


def _loss_text(loss: float, exact: bool) -> str:
    if loss == 0:
        return "0"
    if exact:
        return format_points(loss)
    shown = round(loss * 2) / 2 if loss < 1 else float(round(loss))
    return "≈" + format_points(shown) if shown else "≈0"


def _moves_text(game: Game, moves: list[int], shown: int) -> str:
    text = " ".join(game.format_move(move) for move in moves[:shown])
    return text + (" …" if len(moves) > shown else "")


def _table(ascii_only: bool) -> Table:
    return Table(
        box=box.ASCII if ascii_only else box.SIMPLE_HEAD, pad_edge=False, show_edge=False,
        padding=(0, 1, 0, 0),
    )


COLUMN_GAP = 2
"""Spaces between the columns of a table (the box's one, and one of padding)."""


def _fill(table: Table, headings: list[str], rows: list[list[str | Text]], right: set[int],
          ascii_only: bool, width: int) -> Table:
    """``table`` with these columns and rows, at most ``width`` wide: every column as wide as
    its widest cell, but the last, which takes at most what is left of the line and cuts its
    texts short (…, or only cut in ASCII) where they do not fit."""
    spelt = [
        [
            Text(plain_ascii(cell.plain, ascii_only), style=cell.style) if isinstance(cell, Text)
            else Text(plain_ascii(cell, ascii_only))
            for cell in row
        ]
        for row in rows
    ]
    widths = [
        max([len(heading), *(row[index].cell_len for row in spelt)])
        for index, heading in enumerate(headings)
    ]
    left = width - sum(widths[:-1]) - COLUMN_GAP * (len(widths) - 1) - 1
    widths[-1] = max(min(widths[-1], left), len(headings[-1]))
    for index, heading in enumerate(headings):
        table.add_column(
            heading, justify="right" if index in right else "left", no_wrap=True,
            overflow="crop" if ascii_only else "ellipsis", width=widths[index],
        )
    for row in spelt:
        table.add_row(*row)
    return table


def _best_play(game: Game, best: list[int], line: list[int], proven: bool = True) -> str:
    """The best moves (``a/b``: either; ``≈`` before them where they are the engine's choice),
    then a line of best play after the first."""
    first = "" if proven else "≈"
    first += "/".join(game.format_move(move) for move in best[:BEST_SHOWN])
    if len(best) > BEST_SHOWN:
        first += "/…"
    rest = _moves_text(game, line[1:], LINE_SHOWN - 1) if line[:1] == best[:1] else ""
    return f"{first}: {rest}" if rest else first


def review_table(review: Review, ascii_only: bool = False, width: int = 80) -> Table:
    """A table of the reviewed moves: each move's values before and after it (Black's margin,
    ``≈`` an estimate), what it gave away, its judgement, and the best moves followed by a line
    of best play. At most ``width`` wide (the lines of best play are cut short to fit)."""
    game = review.game
    points = not outcome_only(game)
    headings = ["#", "Player", "Move", "Before", "After", *(["Loss"] if points else []),
                "Judgement", "Best play"]
    rows: list[list[str | Text]] = []
    for move in review.reviewed:
        judgement = move.judgement
        style = STYLES[judgement]
        before, after = move.before, move.after
        cells: list[str | Text] = [
            str(move.ply),
            player_name(move.player),
            Text(game.format_move(move.move) + MARKS[judgement], style=style),
            short(game, before.value),
            short(game, after.value),
        ]
        if points:
            cells.append(_loss_text(move.loss, move.exact))
        cells += [
            Text(judgement.value, style=style),
            _best_play(game, before.best_moves, before.principal_variation, before.best_proven),
        ]
        rows.append(cells)
    right = {0, 3, 4, 5} if points else {0, 3, 4}
    return _fill(_table(ascii_only), headings, rows, right, ascii_only, width)


def summary_table(review: Review, ascii_only: bool = False, width: int = 80) -> Table:
    """A row a player: moves reviewed, accuracy (the share of best and good moves), mean loss
    (points given away a move), inaccuracies, mistakes and blunders."""
    points = not outcome_only(review.game)
    headings = ["Player", "Moves", "Accuracy", *(["Mean loss"] if points else []),
                "Inaccuracies", "Mistakes", "Blunders"]
    rows: list[list[str | Text]] = []
    for label, summary in review.summaries().items():
        counts = summary.to_json()
        accuracy = summary.accuracy
        cells: list[str | Text] = [
            player_name(Player.parse(label)),
            str(summary.moves),
            "-" if accuracy is None else f"{accuracy:.0f}%",
        ]
        if points:
            cells.append(f"{summary.total_loss / summary.moves:.1f}" if summary.moves else "-")
        cells += [str(counts["inaccuracies"]), str(counts["mistakes"]), str(counts["blunders"])]
        rows.append(cells)
    right = set(range(1, len(headings)))
    return _fill(_table(ascii_only), headings, rows, right, ascii_only, width)


def _count(count: int, word: str) -> str:
    plural = word[:-1] + "ies" if word.endswith("y") else word + "s"
    return f"{count} {word if count == 1 else plural}"


LEGEND = (
    "Values are Black's final margin with best play, komi included: exact where the solver "
    "proved them, ≈ an estimate. Marks: ?! inaccuracy, ? mistake, ?? blunder. Best play: the "
    "best moves (a/b: either): a line of best play after the first."
)
OUTCOME_LEGEND = (
    "Values are the result with best play: exact where the solver proved it, ≈ an estimate "
    "(the side it leans to). Marks: ?! inaccuracy, ? mistake, ?? blunder. Best play: the best "
    "moves (a/b: either): a line of best play after the first."
)


def render_review(console: Console, review: Review, ascii_only: bool = False) -> None:
    """Print the review: its table, what its values mean, a line a player, and what is known
    of the last position where the game is not over."""
    game = review.game

    def say(text: str) -> None:
        console.print(plain_ascii(text, ascii_only), highlight=False, markup=False)

    if not review.moves:
        say("No moves to review.")
    elif review.reviewed:
        width = min(console.width, 100)
        console.print(review_table(review, ascii_only, width))
        legend = OUTCOME_LEGEND if outcome_only(game) else LEGEND
        say(textwrap.fill(legend, width=width - 1))
        console.print(summary_table(review, ascii_only, width))
    final = review.final
    if final is not None and final.source != "final":
        say(f"Now: {describe(game, final.value, None)} ({_source_words(final)}).")
    if not review.complete:
        say(interrupted_line(review))


def interrupted_line(review: Review) -> str:
    done, total = len(review.reviewed), len(review.moves)
    if not done:
        return f"Interrupted: no move of {total} reviewed."
    return (
        f"Interrupted: {done} of {total} moves reviewed (the last {done}: a review goes back "
        "from the end)."
    )


def _source_words(analysis: PositionAnalysis) -> str:
    if analysis.value.exact and analysis.best_proven:
        return "exact"
    if analysis.value.exact:
        return f"exact value; the move is the {engine_words()} engine's choice"
    return f"estimate, {engine_words()}"


def engine_words() -> str:
    """The engine that estimates where the solver does not finish, as players read it."""
    from agon.study.analysis import ENGINE

    return {"alphabeta": "alpha-beta", "mcts": "MCTS"}.get(ENGINE, ENGINE)


def table_console(screen: Screen) -> Console:
    """Where a review's tables go: the screen's Rich console, else one without colours."""
    if screen.rich:
        return screen.console
    return Console(highlight=False, no_color=True, emoji=False)


HINT_ALTERNATIVES = 3
"""Other best moves a hint names."""


def hint_text(state: State, analysis: PositionAnalysis, ascii_only: bool = False) -> str:
    """``Hint: b1-b2 — best play wins by 2 (exact)``: the best move (and others as good), and
    the value in words from the side to move's view."""
    game = state.game
    name = game.format_move
    best = analysis.best_moves
    if not best:
        return "No hint: the game is over."
    text = f"Hint: {name(best[0])}"
    others = best[1:]
    if others:
        shown = ", ".join(name(move) for move in others[:HINT_ALTERNATIVES])
        more = ", …" if len(others) > HINT_ALTERNATIVES else ""
        text += f" (or {shown}{more})"
    text += f" — {describe(game, analysis.value, state.to_move)} ({_source_words(analysis)})"
    return plain_ascii(text, ascii_only)


# --- running a review ------------------------------------------------------------------------


def new_analyst(game: Game, player_limit: Limit | None = None) -> Analyst:
    """An analyst of ``game`` over the shipped store and the user's cache of exact values; its
    solver's tables a player's, sized by ``player_limit`` a position, where it is given (else
    the solver's own, for analyses as long as the user likes)."""
    from agon.solve.solver import player_table_bits
    from agon.study.analysis import Analyst
    from agon.study.store import ExactValues

    bits = None if player_limit is None else player_table_bits(game, player_limit)
    return Analyst(game, ExactValues(), table_bits=bits, numbers_bits=bits)


def warm_up(game: Game) -> None:
    """Load (or compile, after an upgrade) the solver's kernels before the first position's
    clock starts."""
    from agon.solve.solver import warm_up_kernels

    warm_up_kernels(game.name)


def _progress_bar() -> Progress:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=Console(stderr=True), transient=True,
    )


def run_review(
    analyst: Analyst, start: State, moves: list[int], limit: Limit, players: dict[str, str],
    progress_bar: bool,
) -> Review:
    """Review a game (see :func:`agon.study.analysis.review_game`), with a progress bar on
    stderr where ``progress_bar``. Ctrl-C ends it with the moves reviewed so far (the review
    says it is not complete)."""
    from agon.study.analysis import Review, review_game

    partial = Review(start.game, start.copy(), list(moves), dict(players))
    try:
        if not progress_bar:
            warm_up(start.game)
            return review_game(analyst, start, moves, limit, players)
        with _progress_bar() as bar:
            task = bar.add_task("loading the solver", total=len(moves) + 1)
            warm_up(start.game)
            bar.update(task, description="reviewing")

            def advance(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            return review_game(analyst, start, moves, limit, players, advance)
    except KeyboardInterrupt:
        return partial


# --- agon analyse ----------------------------------------------------------------------------


def parse_limit(text: str) -> Limit:
    """``--limit``: a time for each position, of at most :data:`MAX_LIMIT_SECONDS`."""
    try:
        seconds = Limit.parse(text).seconds
    except AgonError:
        seconds = None
    if seconds is None:
        fail(f"--limit must be a time like 2s or 500ms, not {quoted(text)}")
    if not MIN_LIMIT_SECONDS <= seconds <= MAX_LIMIT_SECONDS:
        fail(
            f"--limit must be {MIN_LIMIT_SECONDS * 1000:g}ms to {MAX_LIMIT_SECONDS:g}s for each "
            f"position, not {quoted(text)}"
        )
    return Limit(seconds=seconds)


def _is_game_name(target: str) -> bool:
    return target.lower() in names()


def analyse_command(
    target: Annotated[
        str,
        typer.Argument(
            help="A game record (a JSON file `agon play` saves or the web arena exports): "
            f"every move is annotated. Or a game's name ({' or '.join(names())}): one "
            "position is analysed, the start or --position, after --moves. A name of a game "
            "is taken for the game: write ./NAME for a file of that name.",
            show_default=False,
            metavar="RECORD|GAME",
        ),
    ],
    options: GameOptions,
    position: PositionOpt = None,
    moves: Annotated[
        str | None,
        typer.Option(
            "--moves", help="With a game: moves to play first, e.g. \"d4-d5 e5-e4\".",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[
        str,
        typer.Option(
            "--limit",
            help="Time for each position, e.g. 2s or 500ms (at most 600s): the solver has "
            "half of it, and where it does not prove the value, the engine estimates it in "
            "the rest.",
        ),
    ] = DEFAULT_LIMIT,
    as_json: JsonOpt = False,
    plain: PlainOpt = False,
) -> None:
    """Annotate every move of a game record, or analyse one position of a game.

    A record's moves are each given the value before and after them (Black's final margin
    with best play, exact where the solver proves it in the limit, else the engine's
    estimate, marked ≈), what they give away, a judgement (best, good, inaccuracy ?!,
    mistake ?, blunder ??), the best moves and a line of best play; then a summary for each
    player. The review goes from the end of the game back to its start; Ctrl-C stops it and
    prints the moves reviewed so far (exit status 130).

    A position (GAME, --position, --moves) is given its value in words, its best moves, every
    move's value where the solver proves them, and a line of best play.
    """
    per_position = parse_limit(limit)
    if _is_game_name(target):
        game = build_game(target, options)
        state = load_start(game, position)
        play_moves(state, moves or "")
        analyse_position(state, per_position, as_json, plain)
        return
    if options or position is not None or moves is not None:
        fail(
            f"{quoted(target)} is a record, which says its variant and moves: the game's "
            "options, --position and --moves go with a game's name"
        )
    path = user_path(target)
    if not path.exists() and not path.suffix and "/" not in target:
        fail(f"{quoted(target)} is neither a game ({' or '.join(names())}) nor a record file")
    try:
        record = load_record(path)
    except AgonError as error:
        message = str(error)
        fail(message if str(path) in message else f"{path} is not a record Agon reads: {message}")
    analyse_record(record, per_position, as_json, plain)


def analyse_record(record: GameRecord, limit: Limit, as_json: bool, plain: bool) -> None:
    states = record.states()
    start = states[0]
    game = start.game
    moves = list(states[-1].history)
    players = {label: record.players.get(label, "?") for label in ("black", "white")}
    with terminate_as_interrupt():
        analyst = new_analyst(game)
        try:
            review = run_review(
                analyst, start, moves, limit, players, progress_bar=sys.stderr.isatty()
            )
        finally:
            if analyst.exact is not None:
                analyst.exact.close()
    if as_json:
        typer.echo(json.dumps(review.to_json(), ensure_ascii=False))
        if not review.complete:
            typer.echo(interrupted_line(review), err=True)
    else:
        screen = Screen.choose(plain)
        console = screen.console if screen.rich else Console(
            highlight=False, no_color=True, emoji=False
        )
        head = (
            f"{game.description}. Black: {players['black']}, White: {players['white']}. "
            f"{_count(len(moves), 'move')}"
        )
        final = states[-1]
        head += f"; {final.result} ({final.end_reason})." if final.is_over else ", unfinished."
        screen.say(plain_ascii(textwrap.fill(head, width=79), screen.ascii))
        render_review(console, review, screen.ascii)
    if not review.complete:
        raise typer.Exit(INTERRUPTED)


@contextmanager
def _thinking(shown: bool) -> Iterator[None]:
    """A spinner on stderr while one position is analysed (on a terminal only)."""
    if not shown:
        yield
        return
    with Console(stderr=True).status("analysing…"):
        yield


def analyse_position(state: State, limit: Limit, as_json: bool, plain: bool) -> None:
    game = state.game
    analyst = new_analyst(game)
    try:
        with terminate_as_interrupt(), _thinking(sys.stderr.isatty()):
            warm_up(game)
            analysis = analyst.analyse(state.copy(), limit)
    except KeyboardInterrupt:
        typer.echo("Interrupted.", err=True)
        raise typer.Exit(INTERRUPTED) from None
    finally:
        if analyst.exact is not None:
            analyst.exact.close()
    words = describe(game, analysis.value, None)
    if as_json:
        data: dict[str, Any] = {
            "game": game.name,
            "variant": game.options(),
            "position": state.position(),
            "moves": [game.format_move(move) for move in state.history],
            "to_move": state.to_move.label if state.to_move is not None else None,
            "value_words": words,
        }
        data.update(analysis.to_json(game))
        typer.echo(json.dumps(data, ensure_ascii=False))
        return
    screen = Screen.choose(plain)
    screen.board(state)
    for line in position_lines(state, analysis, words):
        screen.say(plain_ascii(line, screen.ascii))


def position_lines(state: State, analysis: PositionAnalysis, words: str) -> list[str]:
    """The analysis of one position, for people."""
    game = state.game
    mover = state.to_move
    name = game.format_move
    lines = [game.description]
    if mover is None:
        lines.append(f"The game is over: {result_words(state)}")
        lines.append(f"Position: {state.position()}")
        return lines
    lines.append(f"{player_name(mover)} to move. Value: {words} ({_source_words(analysis)}).")
    best = ", ".join(name(move) for move in analysis.best_moves)
    which = "Best moves" if len(analysis.best_moves) > 1 else "Best move"
    engine = "" if analysis.best_proven else f" (the {engine_words()} engine's choice)"
    lines.append(f"{which}: {best}{engine}")
    if analysis.move_values is not None:
        ranked = sorted(
            analysis.move_values.items(),
            key=lambda item: -Value(item[1], True).for_player(mover),
        )
        # (a move and its value are kept together on a line: their spaces do not break)
        entries = [f"{name(move)} {short(game, Value(v, True))}" for move, v in ranked]
        values = "  ".join(entry.replace(" ", "\xa0") for entry in entries)
        after = "the result" if outcome_only(game) else "Black's margin"
        lines.append(f"Every move ({after} after it, exact):")
        lines.append(textwrap.fill(
            values, width=78, initial_indent="  ", subsequent_indent="  "
        ).replace("\xa0", " "))
    if analysis.principal_variation:
        line = " ".join(name(move) for move in analysis.principal_variation)
        kind = "Line of best play" if analysis.best_proven else "The engine's line"
        lines.append(textwrap.fill(f"{kind}: {line}", width=78, subsequent_indent="  "))
    lines.append(f"Position: {state.position()}")
    return lines


def result_words(state: State) -> str:
    margin = state.margin
    if margin == 0:
        return f"a draw ({state.end_reason})."
    winner = player_name(Player.BLACK if margin > 0 else Player.WHITE)
    by = "" if outcome_only(state.game) else f" by {format_points(abs(margin))}"
    return f"{winner} wins{by} ({state.end_reason})."


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("analyse")(game_command(analyse_command))
