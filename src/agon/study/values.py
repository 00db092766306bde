"""Values as players read them, and how a review judges a move.

A value is Black's final margin with best play, komi included (the result a game would have),
exact where the solver proved it, else the engine's estimate. A game whose plugin says its
results are only wins, draws and losses (:class:`agon.core.plugin.Judging`) has its values said
without points. Nothing here prints a raw float: :func:`describe` gives words, :func:`short`
a compact sign and number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from agon.core.game import Game, format_points
from agon.core.player import Player
from agon.core.plugin import Judging
from agon.games import plugin_of


@dataclass(frozen=True)
class Value:
    """Black's final margin with best play (komi included), exact or estimated."""

    black: float
    exact: bool

    def for_player(self, player: Player) -> float:
        """The margin from ``player``'s view."""
        return self.black if player is Player.BLACK else -self.black


def judging(game: Game) -> Judging:
    """What the game declares about reading its values and judging its moves."""
    return plugin_of(game).judging


def outcome_only(game: Game) -> bool:
    return judging(game).outcome_only


def _rounded(margin: float) -> float:
    """An estimate as a player reads it: whole points, halves away from zero (below one point,
    to the half point)."""
    steps = 2 if abs(margin) < 1 else 1
    return math.copysign(math.floor(abs(margin) * steps + 0.5) / steps, margin) + 0.0


def describe(game: Game, value: Value, viewer: Player | None = None) -> str:
    """The value in words: from ``viewer``'s side ("best play wins by 2", "about +3, you are
    better") where one is given, else naming the player ("best play: Black wins by 2", "about
    +3, Black is better")."""
    if value.exact:
        return _describe_exact(game, value.black, viewer)
    return _describe_estimate(game, value.black, viewer)


def _describe_exact(game: Game, black: float, viewer: Player | None) -> str:
    only = outcome_only(game)
    if black == 0:
        return "best play draws" if viewer is not None else "best play: a draw"
    winner = Player.BLACK if black > 0 else Player.WHITE
    by = "" if only else f" by {format_points(abs(black))}"
    if viewer is None:
        return f"best play: {winner.name.title()} wins{by}"
    return f"best play {'wins' if winner is viewer else 'loses'}{by}"


def _describe_estimate(game: Game, black: float, viewer: Player | None) -> str:
    shown = black if viewer in (None, Player.BLACK) else -black
    if outcome_only(game):
        # an estimate of a win-or-loss game is a leaning, not a number of points
        if abs(black) < 0.25:
            return "about even"
        leader = Player.BLACK if black > 0 else Player.WHITE
        return f"{_better(leader, viewer)} (estimated)"
    rounded = _rounded(shown)
    if rounded == 0:
        return "about even"
    leader = Player.BLACK if black > 0 else Player.WHITE
    return f"about {'+' if rounded > 0 else '−'}{format_points(abs(rounded))}, " + _better(
        leader, viewer
    )


def _better(leader: Player, viewer: Player | None) -> str:
    if viewer is None:
        return f"{leader.name.title()} is better"
    return "you are better" if leader is viewer else "your opponent is better"


def short(game: Game, value: Value) -> str:
    """A compact value for lists and graphs, Black's view: ``+2``, ``−1.5``, ``0`` exact;
    ``≈+3`` estimated; a win-or-loss game: ``B wins``, ``W wins``, ``draw`` (``≈B`` leaning)."""
    if outcome_only(game):
        if value.exact:
            return "draw" if value.black == 0 else f"{'B' if value.black > 0 else 'W'} wins"
        return "≈even" if abs(value.black) < 0.25 else f"≈{'B' if value.black > 0 else 'W'}"
    shown = value.black if value.exact else _rounded(value.black)
    text = "0" if shown == 0 else f"{'+' if shown > 0 else '−'}{format_points(abs(shown))}"
    return text if value.exact else f"≈{text}"


def outcome(margin: float) -> int:
    """+1 a win, 0 a draw, −1 a loss, for the side whose margin this is."""
    return (margin > 0) - (margin < 0)


class Judgement(Enum):
    """What a review calls a move, from the best to the worst."""

    BEST = "best"
    GOOD = "good"
    INACCURACY = "inaccuracy"
    MISTAKE = "mistake"
    BLUNDER = "blunder"


JUDGEMENT_ORDER = tuple(Judgement)


def judge(game: Game, before: float, after: float, exact: bool, best: bool) -> Judgement:
    """The judgement of a move that takes the mover's value (margin, mover's view) from
    ``before`` to ``after``: ``best`` where it is a best move (exactly, or the engine's choice);
    else by the points given away against the game's thresholds, and, where both values are
    exact, at least a mistake where it gives away a win or a draw, a blunder where it turns a
    win into a loss."""
    if best:
        return Judgement.BEST
    facts = judging(game)
    loss = max(0.0, before - after)
    if facts.outcome_only:
        # a win-or-loss game has no points to lose, only results: its estimates lean
        inaccuracy, mistake, blunder = 0.25, 0.75, 1.5
    else:
        inaccuracy, mistake, blunder = facts.thresholds
    if loss >= blunder:
        found = Judgement.BLUNDER
    elif loss >= mistake:
        found = Judgement.MISTAKE
    elif loss >= inaccuracy:
        found = Judgement.INACCURACY
    else:
        found = Judgement.GOOD
    if exact:
        drop = outcome(before) - outcome(after)
        floor = Judgement.BLUNDER if drop >= 2 else Judgement.MISTAKE if drop == 1 else None
        if floor is not None and JUDGEMENT_ORDER.index(floor) > JUDGEMENT_ORDER.index(found):
            found = floor
    if exact and loss == 0:
        found = Judgement.BEST
    return found


def json_value(value: float | None) -> float | int | None:
    """A value as JSON holds it: a whole number as an integer, estimates to two decimals."""
    if value is None or math.isinf(value) or math.isnan(value):
        return None
    if float(value).is_integer():
        return int(value)
    return round(value, 2)
