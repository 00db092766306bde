"""Alak's rules, written to be read (``fast.py`` is tested against them).

A rule set is a value of independent fields (:class:`RuleSet`: whether one may pass, commit
suicide or retake a point just captured, which repetitions are forbidden, how the end is
counted), as a Go engine keeps its rules; the three named rule sets are presets of them, and
the code below asks the fields, never the preset's name.

Points are numbered 0…N−1 internally (1…N, or a…, in notation). A board is a string of
``x`` (Black), ``o`` (White) and ``.`` (empty). Every move number below N places a stone on
that point; N is the pass.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from agon.core.errors import AgonError, NotationError, PositionError, quoted
from agon.core.game import (
    MAX_COUNT_DIGITS,
    Game,
    Move,
    Score,
    State,
    format_points,
    read_count,
)
from agon.core.options import Choice, Option, check_komi, read_options
from agon.core.player import Player

MAX_POINTS = 40
EMPTY = "."
STONES = ("x", "o")  # indexed by Player


class Repetition(StrEnum):
    """Which returns to an earlier position the rules forbid."""

    ANY_EARLIER_BOARD = "any earlier board"
    """No placement may recreate any board seen before in the game (positional superko)."""
    KO = "ko"
    """No placement may recreate the board as it stood before the opponent's last move; and a
    position (board and side to move) that occurs for the third time ends the game, drawn."""


class Scoring(StrEnum):
    """What each side's points are at the end."""

    STONES = "stones"
    """Its stones on the board."""
    AREA = "area"
    """Its stones, and the empty points in runs bordered by its stones only (area)."""
    AREA_AND_PRISONERS = "area and prisoners"
    """Area, and the stones it captured."""


@dataclass(frozen=True)
class RuleSet:
    """One rule set, field by field."""

    passing: bool
    """A player may pass, and two passes in a row end the game. Without it placing is
    compulsory, and the game ends when the player to move has no legal placement."""
    suicide: bool
    """A placement that captures nothing may leave its own chain without a liberty."""
    capture_ban: bool
    """No stone may be placed on a point where one was captured by the last move."""
    repetition: Repetition
    repetition_name: str
    """What the rule set calls its repetition rule, in messages."""
    scoring: Scoring


class AlakRules(StrEnum):
    """The named rule sets (:data:`RULE_SETS` gives their fields)."""

    BALJEU = "baljeu"
    TRADITIONAL = "traditional"
    TROMP_TAYLOR = "tromp-taylor"

    @classmethod
    def parse(cls, text: str) -> AlakRules:
        key = text.strip().lower().replace("_", "-")
        for rules in cls:
            if key == rules.value:
                return rules
        names = ", ".join(r.value for r in cls)
        raise AgonError(f"unknown Alak rules {quoted(text)}: choose one of {names}")

    @property
    def fields(self) -> RuleSet:
        return RULE_SETS[self]


RULE_SETS = {
    AlakRules.BALJEU: RuleSet(
        passing=False, suicide=True, capture_ban=True,
        repetition=Repetition.ANY_EARLIER_BOARD, repetition_name="no repetition",
        scoring=Scoring.STONES,
    ),
    AlakRules.TRADITIONAL: RuleSet(
        passing=True, suicide=False, capture_ban=False,
        repetition=Repetition.KO, repetition_name="ko", scoring=Scoring.AREA_AND_PRISONERS,
    ),
    AlakRules.TROMP_TAYLOR: RuleSet(
        passing=True, suicide=False, capture_ban=False,
        repetition=Repetition.ANY_EARLIER_BOARD, repetition_name="positional superko",
        scoring=Scoring.AREA,
    ),
}


REASON_NO_PLACEMENT = "{player} has no legal placement"
REASON_PASSES = "both players passed"
REASON_REPETITION = "the same position occurred for the third time (a draw)"


@dataclass(frozen=True)
class Alak(Game):
    """The variant: number of points, rule set, edge capture (baljeu) and komi."""

    size: int = 11
    rules: AlakRules = AlakRules.BALJEU
    edge_capture: bool = True
    komi_points: float = 0.0
    rule_set: RuleSet = field(init=False, repr=False, compare=False)
    """The rule set's fields (read on every move: kept rather than looked up)."""

    name = "alak"
    title = "Alak"
    option_specs = (
        Option("size", "whole", 11, "Points on the line.", label="Points", minimum=1,
               maximum=MAX_POINTS),
        Option(
            "rules", "choice", AlakRules.BALJEU, "The rule set.", label="Rule set",
            choices=(
                Choice(
                    "baljeu", "Baljeu",
                    "no pass: placing is compulsory; the side with more stones at the end wins.",
                ),
                Choice("traditional", "Traditional",
                       "pass allowed, no suicide, ko; territory + stones + prisoners."),
                Choice("tromp-taylor", "Tromp–Taylor",
                       "pass allowed, positional superko, area scoring."),
            ),
            reader=lambda value: AlakRules.parse(str(value)),
        ),
        Option(
            "edge_capture", "bool", True,
            "Whether a board end encloses a chain (baljeu; the other rule sets always do).",
            label="Edge captures", applies_when=("rules", (AlakRules.BALJEU,)),
        ),
        Option(
            "komi", "number", 0.0, "Points added to White's score (not under baljeu).",
            step=0.5, applies_when=("rules", (AlakRules.TRADITIONAL, AlakRules.TROMP_TAYLOR)),
        ),
    )

    def __post_init__(self) -> None:
        if not 1 <= self.size <= MAX_POINTS:
            raise AgonError(f"an Alak board has 1 to {MAX_POINTS} points, not {self.size}")
        object.__setattr__(self, "rules", AlakRules.parse(str(self.rules)))
        object.__setattr__(self, "rule_set", self.rules.fields)
        check_komi(self.komi_points)
        if self.rule_set.scoring is Scoring.STONES and self.komi_points:
            raise AgonError(f"the {self.rules.value} rules count stones and have no komi")
        if self.rules is not AlakRules.BALJEU and not self.edge_capture:
            raise AgonError(
                f"edge capture is an option of the baljeu rules only: under {self.rules.value} "
                "rules the board's ends are never liberties"
            )

    @property
    def variant_id(self) -> str:
        suffix = "" if self.edge_capture else "-noedge"
        return f"alak-{self.size}-{self.rules.value}{suffix}"

    @property
    def description(self) -> str:
        text = f"Alak {self.size}, {self.rules.value} rules"
        if self.rules is AlakRules.BALJEU:
            return text + (", edge capture" if self.edge_capture else ", no edge capture")
        return text + f", komi {format_points(self.komi_points)}"

    @property
    def komi(self) -> float:
        return self.komi_points

    def options(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "rules": self.rules.value,
            "edge_capture": self.edge_capture,
            "komi": self.komi_points,
        }

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Alak:
        values = read_options(cls.option_specs, options, cls.title)
        return cls(values["size"], values["rules"], values["edge_capture"], values["komi"])

    @property
    def has_pass(self) -> bool:
        return self.rule_set.passing

    @property
    def num_actions(self) -> int:
        return self.size + 1

    @property
    def pass_move(self) -> Move | None:
        return self.size if self.has_pass else None

    @property
    def edge_encloses(self) -> bool:
        """Whether a chain against a board end can be captured from its other side (always,
        but where the rule set lets edge capture be turned off)."""
        return self.edge_capture

    def new_state(self) -> AlakState:
        return AlakState(self, AlakPosition(EMPTY * self.size, Player.BLACK))

    def point_name(self, point: int) -> str:
        return str(point + 1)

    def move_places(self, move: Move) -> tuple[int, ...]:
        return (move,) if 0 <= move < self.size else ()

    def place_name(self, place: int) -> str:
        return self.point_name(place)

    def parse_move(self, text: str) -> Move:
        cleaned = text.strip().lower()
        # (only in full: "p" is the 16th point, so that no move text means two things)
        if cleaned == "pass":
            if not self.has_pass:
                raise NotationError(
                    f"there is no pass in the {self.rules.value} rules: placing is compulsory"
                )
            return self.size
        if cleaned.isascii() and cleaned.isdecimal():
            point = _point_number(cleaned) - 1
        elif len(cleaned) == 1 and cleaned.isalpha():
            point = ord(cleaned) - ord("a")
        else:
            raise NotationError(
                f"{quoted(text)} is not a move: write a point number 1–{self.size} (or a letter)"
                + (", or 'pass'" if self.has_pass else "")
            )
        if not 0 <= point < self.size:
            raise NotationError(
                f"point {quoted(text)} is off the board (points 1–{self.size})"
                + (": a pass is written 'pass'" if cleaned == "p" and self.has_pass else "")
            )
        return point

    def format_move(self, move: Move) -> str:
        if move == self.size and self.has_pass:
            return "pass"
        if not 0 <= move < self.size:
            raise NotationError(f"move number {move} is out of range")
        return self.point_name(move)

    def parse_position(self, text: str) -> AlakState:
        return parse_alak_position(self, text)


@dataclass(frozen=True)
class AlakPosition:
    """Everything about the present moment that the rules need, apart from the game's history."""

    board: str
    player: Player
    passes: int = 0
    """Passes just played in a row."""
    captured: frozenset[int] = frozenset()
    """Points vacated by the last move's capture (baljeu forbids them on this move)."""
    prisoners: tuple[int, int] = (0, 0)
    """Stones captured by Black and by White (traditional scoring counts them)."""
    ko_board: str | None = None
    """Traditional ko: the board before the last move, which a placement may not recreate."""

    @property
    def repetition_key(self) -> tuple[str, Player]:
        return self.board, self.player


def chain_span(board: str, point: int) -> tuple[int, int]:
    """First and last point of the chain through ``point``."""
    stone = board[point]
    start, end = point, point
    while start > 0 and board[start - 1] == stone:
        start -= 1
    while end < len(board) - 1 and board[end + 1] == stone:
        end += 1
    return start, end


def chain_has_liberty(board: str, point: int, edge_encloses: bool) -> bool:
    """Whether the chain through ``point`` has an empty neighbour (or is shielded by an edge)."""
    start, end = chain_span(board, point)
    if not edge_encloses and (start == 0 or end == len(board) - 1):
        return True
    left = start > 0 and board[start - 1] == EMPTY
    right = end < len(board) - 1 and board[end + 1] == EMPTY
    return left or right


def place_stone(board: str, point: int, stone: str, edge_encloses: bool) -> tuple[str, list[int]]:
    """The board after a placement and the captures it makes, and the captured points.

    Only enemy chains touching the new stone are examined.
    """
    cells = list(board[:point] + stone + board[point + 1 :])
    placed = "".join(cells)
    captured: list[int] = []
    for neighbour in (point - 1, point + 1):
        if not 0 <= neighbour < len(board) or placed[neighbour] in (EMPTY, stone):
            continue
        if neighbour in captured or chain_has_liberty(placed, neighbour, edge_encloses):
            continue
        start, end = chain_span(placed, neighbour)
        captured.extend(range(start, end + 1))
    for captured_point in captured:
        cells[captured_point] = EMPTY
    return "".join(cells), captured


def territory(board: str) -> tuple[int, int]:
    """Empty points in runs bounded only by one player's stones (or such stones and an edge)."""
    counts = [0, 0]
    for match in re.finditer(r"\.+", board):
        start, end = match.start(), match.end()
        neighbours = {board[i] for i in (start - 1, end) if 0 <= i < len(board)}
        if len(neighbours) == 1:
            counts[STONES.index(neighbours.pop())] += end - start
    return counts[0], counts[1]


class AlakState(State):
    """An Alak game: its present position and the positions that came before."""

    game: Alak

    def __init__(
        self, game: Alak, current: AlakPosition, earlier: Iterable[str] = ()
    ) -> None:
        super().__init__(game)
        self.current = current
        self._loaded_history = tuple(earlier)
        """Boards (baljeu, tromp-taylor) or ``board:x`` positions (traditional) from before a
        loaded position, as its ``seen=`` field lists them."""
        self._stack: list[AlakPosition] = []
        # (kept as moves are played and taken back, so that no rule rebuilds them from the
        # whole history for each point it checks)
        self._earlier = Counter(self._loaded_history)
        """How often each earlier entry (:meth:`_token`) occurs, loaded or played since."""
        self._earlier_boards = Counter(token.split(":")[0] for token in self._loaded_history)
        """How often each earlier board occurs."""
        self._placements_now: list[Move] | None = None
        """The legal placements of the current position, once asked for."""

    # --- queries ----------------------------------------------------------------------------

    @property
    def board(self) -> str:
        return self.current.board

    @property
    def just_captured(self) -> frozenset[int]:
        return self.current.captured

    @property
    def prisoners(self) -> tuple[int, int]:
        return self.current.prisoners

    def _history_tokens(self) -> list[str]:
        """The earlier entries in the form the position text lists them (current excluded)."""
        return list(self._loaded_history) + [self._token(p) for p in self._stack]

    def _token(self, position: AlakPosition) -> str:
        if self.game.rule_set.repetition is Repetition.KO:  # (positions repeat, not boards)
            return f"{position.board}:{STONES[position.player]}"
        return position.board

    def _seen(self, board: str) -> bool:
        """Whether ``board`` is the current board or an earlier one."""
        return board == self.board or self._earlier_boards[board] > 0

    @property
    def to_move(self) -> Player | None:
        return None if self.is_over else self.current.player

    @property
    def end_reason(self) -> str | None:
        rules = self.game.rule_set
        if rules.passing and self.current.passes >= 2:
            return REASON_PASSES
        if rules.repetition is Repetition.KO and self._repetitions() >= 3:
            return REASON_REPETITION
        if not rules.passing and not self._placements():
            return REASON_NO_PLACEMENT.format(player=self.current.player.name.capitalize())
        return None

    def _repetitions(self) -> int:
        return self._earlier[self._token(self.current)] + 1

    def _placement_problem(self, point: int) -> str | None:
        game, now = self.game, self.current
        name = game.point_name(point)
        if now.board[point] != EMPTY:
            return f"point {name} is occupied"
        rules = game.rule_set
        if rules.capture_ban and point in now.captured:
            return f"a stone may not be placed where one was just captured (point {name})"
        stone = STONES[now.player]
        board, captured = place_stone(now.board, point, stone, game.edge_encloses)
        suicide = not captured and not chain_has_liberty(board, point, True)
        if suicide and not rules.suicide:
            return f"suicide: the stone at {name} would leave its own chain without a liberty"
        if rules.repetition is Repetition.KO and board == now.ko_board:
            return (
                f"{rules.repetition_name}: playing {name} would recreate the board as it stood "
                "before the opponent's last move"
            )
        if rules.repetition is Repetition.ANY_EARLIER_BOARD and self._seen(board):
            return (
                f"{rules.repetition_name}: playing {name} would recreate an earlier arrangement "
                "of stones"
            )
        return None

    def _placements(self) -> list[Move]:
        if self._placements_now is None:
            self._placements_now = [
                p for p in range(self.game.size) if self._placement_problem(p) is None
            ]
        return self._placements_now

    def legal_moves(self) -> list[Move]:
        if self.is_over:
            return []
        moves = self._placements()
        return [*moves, self.game.size] if self.game.has_pass else list(moves)

    def illegal_reason(self, move: Move) -> str | None:
        if self.is_over:
            return "the game is over"
        if move == self.game.size:
            if self.game.has_pass:
                return None
            return (
                f"there is no pass in the {self.game.rules.value} rules: placing a stone is "
                "compulsory"
            )
        if not 0 <= move < self.game.size:
            return "there is no such point"
        return self._placement_problem(move)

    def score(self) -> Score:
        board = self.board
        stones = (board.count(STONES[0]), board.count(STONES[1]))
        scoring = self.game.rule_set.scoring
        if scoring is Scoring.STONES:
            return Score(float(stones[0]), float(stones[1]))
        area = territory(board)
        points = [stones[i] + area[i] for i in range(2)]
        if scoring is Scoring.AREA_AND_PRISONERS:
            points = [points[i] + self.prisoners[i] for i in range(2)]
        return Score(float(points[0]), points[1] + self.game.komi)

    @property
    def margin(self) -> float:
        if self.end_reason == REASON_REPETITION:
            return 0.0
        return self.score().margin

    # --- changes ----------------------------------------------------------------------------

    def _apply(self, move: Move) -> None:
        now = self.current
        self._stack.append(now)
        self._earlier[self._token(now)] += 1
        self._earlier_boards[now.board] += 1
        self._placements_now = None
        if move == self.game.size:
            self.current = replace(
                now, player=now.player.other, passes=now.passes + 1,
                captured=frozenset(),
                ko_board=now.board if self.game.rule_set.repetition is Repetition.KO else None,
            )
            return
        stone = STONES[now.player]
        board, captured = place_stone(now.board, move, stone, self.game.edge_encloses)
        prisoners = list(now.prisoners)
        prisoners[now.player] += len(captured)
        self.current = AlakPosition(
            board=board,
            player=now.player.other,
            passes=0,
            captured=frozenset(captured),
            prisoners=(prisoners[0], prisoners[1]),
            ko_board=now.board if self.game.rule_set.repetition is Repetition.KO else None,
        )

    def _revert(self) -> None:
        self.current = self._stack.pop()
        for counts, entry in (
            (self._earlier, self._token(self.current)), (self._earlier_boards, self.current.board)
        ):
            counts[entry] -= 1
            if not counts[entry]:
                del counts[entry]
        self._placements_now = None

    def copy(self) -> AlakState:
        twin = AlakState(self.game, self.current, self._loaded_history)
        twin.history = list(self.history)
        twin._stack = list(self._stack)
        twin._earlier = Counter(self._earlier)
        twin._earlier_boards = Counter(self._earlier_boards)
        twin._placements_now = self._placements_now
        return twin

    def key(self) -> tuple[AlakPosition, tuple[str, ...]]:
        return self.current, tuple(sorted(self._history_tokens()))

    # --- text -------------------------------------------------------------------------------

    def position(self) -> str:
        """``<board> <x|o to move>`` then the fields the rules need, each ``name=value``.

        ``captured=`` points just vacated (1-based), ``passes=`` passes just played,
        ``prisoners=B,W``, ``ko=`` the board before the last move (traditional), and
        ``seen=`` every earlier board (baljeu and tromp-taylor: repetition and superko) or
        ``board:x`` position (traditional: third repetition), so that the text carries the
        whole history the rules depend on.
        """
        now = self.current
        fields = [now.board, STONES[now.player]]
        if now.captured:
            fields.append("captured=" + ",".join(str(p + 1) for p in sorted(now.captured)))
        if now.passes:
            fields.append(f"passes={now.passes}")
        if any(now.prisoners):
            fields.append(f"prisoners={now.prisoners[0]},{now.prisoners[1]}")
        if now.ko_board is not None and self.game.rule_set.repetition is Repetition.KO:
            fields.append(f"ko={now.ko_board}")
        history = sorted(self._history_tokens())
        if history:
            fields.append("seen=" + ",".join(history))
        return " ".join(fields)


def parse_alak_position(game: Alak, text: str) -> AlakState:
    tokens = text.split()
    if len(tokens) < 2:
        raise PositionError(
            "an Alak position is a board like 'x.o..' and the side to move (x or o)"
        )
    board = tokens[0].lower()
    _check_board(game, board, "the board")
    if tokens[1].lower() not in STONES:
        raise PositionError(f"the side to move must be 'x' or 'o', not {quoted(tokens[1])}")
    player = Player(STONES.index(tokens[1].lower()))
    values: dict[str, str] = {}
    for token in tokens[2:]:
        name, equals, value = token.partition("=")
        if not equals or name not in ("captured", "passes", "prisoners", "ko", "seen"):
            raise PositionError(
                f"unknown field {quoted(token)}: "
                "expected captured=, passes=, prisoners=, ko= or seen="
            )
        values[name] = value
    captured = _parse_points(game, values.get("captured", ""), board)
    passes = read_count(values.get("passes", "0"))
    counts = [read_count(v) for v in values.get("prisoners", "0,0").split(",")]
    prisoner_counts = [count for count in counts if count is not None]
    if passes is None or len(prisoner_counts) != len(counts):
        raise PositionError(
            f"passes= and prisoners= take whole numbers of at most {MAX_COUNT_DIGITS} digits"
        )
    if not 0 <= passes <= 2 or len(prisoner_counts) != 2:
        raise PositionError("passes= is 0, 1 or 2, prisoners= is two counts like 2,1")
    ko_board = values.get("ko")
    if ko_board is not None:
        _check_board(game, ko_board, "the ko board")
    earlier = [t for t in values.get("seen", "").split(",") if t]
    for token in earlier:
        board_part, colon, side = token.partition(":")
        _check_board(game, board_part, "a seen board")
        positions = game.rule_set.repetition is Repetition.KO
        if positions != bool(colon) or (colon and side not in STONES):
            raise PositionError(
                f"seen entry {quoted(token)}: the {game.rules.value} rules list "
                + ("'board:x' positions" if positions else "boards, like 'x.o..'")
            )
    current = AlakPosition(
        board=board,
        player=player,
        passes=passes,
        captured=captured,
        prisoners=(prisoner_counts[0], prisoner_counts[1]),
        ko_board=ko_board if game.rule_set.repetition is Repetition.KO else None,
    )
    return AlakState(game, current, earlier)


def _check_board(game: Alak, board: str, what: str) -> None:
    if len(board) != game.size:
        raise PositionError(
            f"{what} {quoted(board)} has {len(board)} points, the variant {game.size}"
        )
    wrong = set(board) - {EMPTY, *STONES}
    if wrong:
        wrong_text = quoted("".join(sorted(wrong)))
        raise PositionError(f"{what} {quoted(board)} has {wrong_text}: use x, o and .")


def _point_number(digits: str) -> int:
    """The number written in decimal ``digits``; one of more than nine digits, off every
    board, as 10**9 (int() refuses more than 4,300 digits)."""
    return int(digits) if len(digits.lstrip("0")) <= 9 else 10**9


def _parse_points(game: Alak, text: str, board: str) -> frozenset[int]:
    points = set()
    for item in filter(None, text.split(",")):
        number = _point_number(item) if item.isascii() and item.isdecimal() else 0
        if not 1 <= number <= game.size:
            raise PositionError(f"captured= lists points 1–{game.size}, not {quoted(item)}")
        if board[number - 1] != EMPTY:
            raise PositionError(f"captured point {item} is not empty")
        points.add(number - 1)
    return frozenset(points)
