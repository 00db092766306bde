"""Puzzles from solved positions: positions of games Agon's agents play against each other
where exactly one move keeps the best result, proven by the solver.

The finder plays a game between two agents, then walks back from its end, solving each position
move by move within a limit, until a position takes longer than that (the earlier ones are
larger still). A solved position is a puzzle where the side to move wins or draws with best
play, has at least :data:`MIN_CHOICES` legal moves, and exactly one of them keeps that result
(a pass is never the answer). Each puzzle keeps every move's exact value, the answer's line of
best play to the end, and for every other move its refutation (the reply line), so a page can
answer any move at once without a solver.

Its difficulty, 1 to 5, adds how many wrong moves look at least as good as the answer to a
shallow search (:data:`SHALLOW_NODES` of alpha-beta; two at most count), two where that
search does not find the answer itself, and one where the answer's line to the end is
:data:`LONG_LINE` moves or more.

A puzzle is saved as a game record (``agon replay`` reads it): the puzzle's position is the
record's start position and its moves the answer's line, with a ``puzzle`` object beside them.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agon.core.errors import AgonError, RecordError
from agon.core.files import read_text_limited, replace_file, user_path
from agon.core.game import Game, Move, State, format_points
from agon.core.limits import Limit
from agon.core.player import Player
from agon.core.records import MAX_RECORD_BYTES, GameRecord, parse_json
from agon.search.registry import make_agent
from agon.study.analysis import Analyst, PositionAnalysis
from agon.study.values import json_value, outcome_only

MIN_CHOICES = 3
"""A position with fewer legal moves is no puzzle."""
SHALLOW_NODES = 300
"""The shallow search that rates a puzzle: alpha-beta with this many nodes a move."""
LONG_LINE = 8
LINE_PLIES = 60
"""The longest line of best play kept for an answer."""
REFUTATION_PLIES = 8
"""The longest refutation kept for a wrong move (the wrong move included)."""
PLAYERS = ("alphabeta:2000", "mcts:400")
"""The agents whose games the finder searches: strong enough that their positions matter,
quick enough for many games a minute; each game draws who is Black."""
RANDOM_OPENING = 3
"""Each game starts with up to this many random moves, so that no two games are alike."""
MAX_GAME_PLIES = 400
GAMES_PER_PUZZLE = 50
"""The games played for each puzzle asked, at most (a variant may have none to give)."""
MAX_PUZZLES_LISTED = 10_000
"""A collection folder is read for at most this many puzzles."""


@dataclass
class Puzzle:
    """A position where exactly one move keeps the best result."""

    game: Game
    position: str
    to_move: Player
    value: float
    """Black's final margin with best play (komi included)."""
    answer: Move
    line: list[Move]
    """The answer, then a line of best play (to the end of the game where it was found)."""
    refutations: dict[Move, list[Move]]
    """Every other legal move, then the opponent's best reply and play after it."""
    move_values: dict[Move, float]
    """Black's exact margin after each legal move."""
    difficulty: int
    plausible: int = 0
    """Wrong moves a shallow search rates at least as high as the answer."""
    shallow_finds: bool = True
    """Whether the shallow search plays the answer itself."""
    origin: str = ""
    """Where it was found: the agents' game and its ply."""
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def goal(self) -> str:
        """"Black to play and win by 2", "White to play and draw", "… and win"."""
        mover = self.to_move.name.title()
        margin = self.value if self.to_move is Player.BLACK else -self.value
        if margin == 0:
            return f"{mover} to play and draw"
        if outcome_only(self.game):
            return f"{mover} to play and win"
        return f"{mover} to play and win by {format_points(margin)}"

    @property
    def key(self) -> str:
        """A short name of the puzzle, the same for the same position of the same variant."""
        digest = hashlib.sha256(f"{self.game.variant_id}\n{self.position}".encode())
        return f"{self.game.variant_id}-{digest.hexdigest()[:12]}"

    def state(self) -> State:
        return self.game.parse_position(self.position)

    def to_json(self) -> dict[str, Any]:
        name = self.game.format_move
        return {
            "key": self.key,
            "game": self.game.name,
            "variant": self.game.options(),
            "description": self.game.description,
            "position": self.position,
            "to_move": self.to_move.label,
            "goal": self.goal,
            "value": json_value(self.value),
            "answer": name(self.answer),
            "line": [name(move) for move in self.line],
            "refutations": {
                name(move): [name(reply) for reply in line]
                for move, line in self.refutations.items()
            },
            "move_values": {name(m): json_value(v) for m, v in self.move_values.items()},
            "difficulty": self.difficulty,
            "plausible": self.plausible,
            "shallow_finds": self.shallow_finds,
            "origin": self.origin,
        }

    def to_record(self) -> dict[str, Any]:
        """The puzzle as a game record (the answer's line from the puzzle's position), with
        the puzzle beside it."""
        record = GameRecord(
            game=self.game, moves=[self.game.format_move(move) for move in self.line],
            players={"black": "puzzle", "white": "puzzle"}, start_position=self.position,
        )
        data = record.to_dict()
        data["puzzle"] = {
            key: value for key, value in self.to_json().items()
            if key not in ("game", "variant", "position", "line")
        }
        return data

    @classmethod
    def from_record(cls, data: Any, make_game: Callable[[str, Any], Game]) -> Puzzle:
        """The puzzle a record holds (:meth:`to_record`), every move checked against the
        rules; :class:`RecordError` naming what is wrong."""
        record = GameRecord.from_dict(data, make_game)
        found = data.get("puzzle")
        if not isinstance(found, dict):
            raise RecordError("not a puzzle: the record has no 'puzzle' object")
        game = record.game
        start = game.parse_position(record.start_position or game.new_state().position())
        try:
            legal = set(start.legal_moves())
            line = [game.parse_move(text) for text in record.moves]
            values = {game.parse_move(m): float(v) for m, v in found["move_values"].items()}
            refutations = {
                game.parse_move(m): [game.parse_move(r) for r in replies]
                for m, replies in found["refutations"].items()
            }
            difficulty = int(found["difficulty"])
        except (AgonError, KeyError, TypeError, ValueError, AttributeError) as error:
            raise RecordError(f"the puzzle's fields do not read: {error}") from None
        to_move = start.to_move
        if not line or to_move is None or set(values) != legal or not 1 <= difficulty <= 5:
            raise RecordError("the puzzle's answer or values do not fit its position")
        for move, replies in refutations.items():
            walk = start.copy()
            try:
                walk.play_all(replies)
            except AgonError as error:
                raise RecordError(f"a refutation does not replay: {error}") from None
            if not replies or replies[0] != move:
                raise RecordError("a refutation must start with its wrong move")
        return cls(
            game=game, position=start.position(), to_move=to_move,
            value=values[line[0]], answer=line[0], line=line, refutations=refutations,
            move_values=values, difficulty=difficulty,
            plausible=int(found.get("plausible", 0)),
            shallow_finds=bool(found.get("shallow_finds", True)),
            origin=str(found.get("origin", ""))[:200],
        )


def puzzle_of(
    analyst: Analyst, state: State, found: PositionAnalysis, limit: Limit, origin: str = ""
) -> Puzzle | None:
    """The puzzle ``state`` makes, where its analysis (exact, every move valued) has exactly
    one best move that is not a pass, the mover wins or draws, and the lines can be solved
    within ``limit``; else None."""
    mover = state.to_move
    values = found.move_values
    if mover is None or values is None or not found.value.exact:
        return None
    if len(values) < MIN_CHOICES or len(found.best_moves) != 1:
        return None
    answer = found.best_moves[0]
    if answer == state.game.pass_move or found.value.for_player(mover) < 0:
        return None
    line = [answer, *_line_after(analyst, state, answer, limit, LINE_PLIES)]
    refutations = {
        move: [move, *_line_after(analyst, state, move, limit, REFUTATION_PLIES - 1)]
        for move in values if move != answer
    }
    plausible, shallow_finds = _shallow_rating(analyst.game, state, answer)
    score = min(plausible, 2) + (0 if shallow_finds else 2) + (len(line) >= LONG_LINE)
    return Puzzle(
        game=state.game, position=state.position(), to_move=mover, value=found.value.black,
        answer=answer, line=line, refutations=refutations, move_values=dict(values),
        difficulty=max(1, min(5, score)), plausible=plausible, shallow_finds=shallow_finds,
        origin=origin,
    )


def _line_after(
    analyst: Analyst, state: State, move: Move, limit: Limit, plies: int
) -> list[Move]:
    """Best play after ``move`` in ``state``, as far as ``limit`` and ``plies`` allow."""
    after = state.copy()
    after.play(move)
    if after.is_over or plies <= 0:
        return []
    first = analyst.solve(after, limit, moves=False)
    if first is None or not first.best_moves:
        return []
    return analyst.perfect_line(after, first, limit, plies)


def _shallow_rating(game: Game, state: State, answer: Move) -> tuple[int, bool]:
    """How many wrong moves a shallow search rates at least as high as ``answer``, and whether
    it plays ``answer`` itself."""
    shallow = make_agent(f"alphabeta:{SHALLOW_NODES}", game, seed=1)
    finds = shallow.analyse(state).best_move == answer
    ratings: dict[Move, float] = {}
    for move in state.legal_moves():
        after = state.copy()
        after.play(move)
        if after.is_over:
            mover = state.to_move
            ratings[move] = after.margin if mover is Player.BLACK else -after.margin
            continue
        found = shallow.analyse(after)
        ratings[move] = -(found.value or 0.0)
    plausible = sum(1 for move, rating in ratings.items()
                    if move != answer and rating >= ratings[answer])
    return plausible, finds


def agents_game(game: Game, seed: int) -> list[State]:
    """The positions of one game between the finder's agents (:data:`PLAYERS`), after a few
    random moves: every position, in order, from the start to the end."""
    rng = random.Random(seed)
    players = list(PLAYERS)
    rng.shuffle(players)
    agents = [make_agent(spec, game, rng.randrange(2**31)) for spec in players]
    state = game.new_state()
    positions: list[State] = []
    opening = rng.randint(0, RANDOM_OPENING)
    while not state.is_over and len(state.history) < MAX_GAME_PLIES:
        positions.append(state.copy())
        if len(state.history) < opening:
            move = rng.choice(state.legal_moves())
        else:
            mover = state.to_move
            assert mover is not None
            move = agents[int(mover)].choose(state)
        state.play(move)
    positions.append(state)
    return positions


def find_puzzles(
    analyst: Analyst, count: int, seed: int = 1, limit: Limit | None = None,
    progress: Callable[[str], None] | None = None, max_games: int | None = None,
) -> Iterator[Puzzle]:
    """Up to ``count`` puzzles from at most ``max_games`` games between the agents
    (:data:`GAMES_PER_PUZZLE` for each puzzle asked by default; the same ``seed``, the same
    puzzles), each position solved within ``limit`` (1 s by default). Stops when ``count`` are
    found, the games are played, or :attr:`Analyst.stop_requested` says so."""
    limit = limit or Limit(seconds=1.0)
    max_games = GAMES_PER_PUZZLE * count if max_games is None else max_games
    seen: set[str] = set()
    found = 0
    game_number = 0
    rng = random.Random(seed)
    while found < count and game_number < max_games and not analyst.stop_requested():
        game_number += 1
        positions = agents_game(analyst.game, rng.randrange(2**31))
        if progress is not None:
            progress(f"game {game_number}: {len(positions)} moves; {found}/{count} puzzles")
        for state in reversed(positions):
            if found >= count or analyst.stop_requested():
                return
            position = state.position()
            solved = analyst.solve(state, limit, moves=True)
            if solved is None:
                break  # (the earlier positions are larger still)
            if position in seen:
                continue
            seen.add(position)
            origin = f"game {game_number} of {' vs '.join(PLAYERS)}, move {len(state.history) + 1}"
            puzzle = puzzle_of(analyst, state, solved, limit, origin)
            if puzzle is not None:
                found += 1
                yield puzzle


# --- a collection of puzzles: a folder of records ------------------------------------------


def collection_folder() -> Path:
    """Where puzzles are kept for the arena and ``agon puzzles``: ``$AGON_HOME/puzzles`` where
    ``AGON_HOME`` is set, else ``$XDG_DATA_HOME/agon/puzzles`` (``~/.local/share/agon/puzzles``
    by default)."""
    home = os.environ.get("AGON_HOME")
    if home:
        return user_path(home) / "puzzles"
    data_home = os.environ.get("XDG_DATA_HOME", "")
    base = Path(data_home) if os.path.isabs(data_home) else Path.home() / ".local" / "share"
    return base / "agon" / "puzzles"


def save_puzzle(puzzle: Puzzle, folder: Path) -> Path:
    """Write ``puzzle`` as a record in ``folder`` (named by its key); the path written."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{puzzle.key}.json"
    try:
        replace_file(path, json.dumps(puzzle.to_record(), indent=1, ensure_ascii=False) + "\n")
    except OSError as error:
        raise AgonError(f"cannot write {path}: {error.strerror or error}") from None
    return path


def load_puzzle(path: Path, make_game: Callable[[str, Any], Game]) -> Puzzle:
    """The puzzle in the record file ``path``; :class:`RecordError` naming what is wrong."""
    try:
        text = read_text_limited(path, MAX_RECORD_BYTES, "a puzzle record")
        data = parse_json(text)
    except AgonError as error:
        raise RecordError(str(error)) from None
    return Puzzle.from_record(data, make_game)


def load_collection(
    folder: Path, make_game: Callable[[str, Any], Game], game_name: str | None = None
) -> list[Puzzle]:
    """The puzzles in ``folder`` (of one game, where named), by difficulty then key; files
    that are not puzzles are passed over."""
    if not folder.is_dir():
        return []
    puzzles = []
    for path in sorted(folder.glob("*.json"))[:MAX_PUZZLES_LISTED]:
        try:
            puzzle = load_puzzle(path, make_game)
        except AgonError:
            continue
        if game_name is None or puzzle.game.name == game_name:
            puzzles.append(puzzle)
    return sorted(puzzles, key=lambda puzzle: (puzzle.difficulty, puzzle.key))
