"""Analysing positions and reviewing games: exact values where the solver proves them within
the limit (or the store has them), the engine's estimate and principal variation elsewhere.

An :class:`Analyst` serves one variant. It keeps one solver (whose transposition table every
position it analyses shares, so that a game reviewed from its end to its start is mostly
lookups) and one engine (alpha-beta, on the game's fast twin or its reference rules). Values
are Black's final margin with best play, komi included (:class:`agon.study.values.Value`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from agon.core.game import Game, Move, State
from agon.core.limits import Limit
from agon.core.player import Player
from agon.search.agent import Agent
from agon.search.registry import make_agent
from agon.solve.solution import SolveInterrupted
from agon.solve.solver import Solver
from agon.study.store import Entry, ExactValues, Store
from agon.study.values import Judgement, Value, json_value, judge, short

ENGINE = "alphabeta"
"""The agent whose estimates stand where the solver does not finish."""
EXACT_SHARE = 0.5
"""The share of a position's limit the solver has before the engine takes the rest."""
STORED_VALUE_SHARE = 0.25
"""The same, where the store holds the position's value (the solver looks only for its best
moves)."""
LINE_SHARE = 0.1
"""The share of a position's limit its line of best play may take, where the value is exact
(at most :data:`LINE_SECONDS`): the store's moves cost nothing, the solver's may cost much."""
LINE_SECONDS = 0.5
LINE_PLIES = 12
"""The longest principal variation given."""
REFINE_FIRST_SECONDS = 0.25
"""The first round of :meth:`Analyst.refine`; each next round has twice the time."""

Progress = Callable[[int, int], None]
"""Called with (positions analysed, positions in all) as a review goes."""


@dataclass
class PositionAnalysis:
    """What is known of one position."""

    value: Value
    best_moves: list[Move]
    """Every move that keeps the exact value; the engine's choice for an estimate; none where
    the game is over."""
    move_values: dict[Move, float] | None = None
    """Black's exact margin after each legal move, where the position was solved move by move."""
    principal_variation: list[Move] = field(default_factory=list)
    source: str = "solver"
    """Where the value comes from: ``final`` (the game is over), ``store``, ``solver`` or
    ``engine``."""
    nodes: int = 0
    seconds: float = 0.0
    best_proven: bool = True
    """Whether the best moves and the line are proven best (else the engine's choice: an
    estimate, or an exact value the store holds for a position whose moves it does not)."""

    def to_json(self, game: Game) -> dict[str, Any]:
        name = game.format_move
        return {
            "value": json_value(self.value.black),
            "exact": self.value.exact,
            "value_text": short(game, self.value),
            "best_moves": [name(move) for move in self.best_moves],
            "best_moves_exact": self.best_proven,
            "move_values": None if self.move_values is None else {
                name(move): json_value(value) for move, value in self.move_values.items()
            },
            "principal_variation": [name(move) for move in self.principal_variation],
            "source": self.source,
            "nodes": self.nodes,
            "seconds": round(self.seconds, 3),
        }


class Analyst:
    """Analyses positions of one variant within limits, exact where it can. ``table_bits`` and
    ``numbers_bits`` size its solver's tables (:class:`~agon.solve.solver.Solver`'s defaults
    unless given; a player's: :func:`~agon.solve.solver.player_table_bits`)."""

    def __init__(
        self, game: Game, exact: ExactValues | None = None, engine: str = ENGINE,
        table_bits: int | None = None, seed: int = 1, chunk_seconds: float = 1.0,
        numbers_bits: int | None = None,
    ) -> None:
        self.game = game
        self.exact = exact
        self._engine_spec = engine
        self._table_bits = table_bits
        self._numbers_bits = numbers_bits
        self._chunk_seconds = chunk_seconds
        """The solver's chunks (a limit is kept to within one: see ``Solver``)."""
        self._seed = seed
        self._solver: Solver | None = None
        self._engine: Agent | None = None
        self.stop_requested: Callable[[], bool] = lambda: False
        """Asked between the solver's chunks: True stops the current analysis at once."""
        self._floor: tuple[float, Move] | None = None
        """What the last solve that ran out proved for the side to move
        (:meth:`_proven_floor`)."""

    @property
    def solver(self) -> Solver:
        if self._solver is None:
            self._solver = Solver(
                self.game, self._table_bits, chunk_seconds=self._chunk_seconds,
                numbers_bits=self._numbers_bits,
            )
            self._solver.stop_requested = self.stop_requested
        return self._solver

    @property
    def engine(self) -> Agent:
        if self._engine is None:
            self._engine = make_agent(self._engine_spec, self.game, self._seed)
        return self._engine

    # --- one position --------------------------------------------------------------------

    def known(self, state: State, moves: bool = True) -> PositionAnalysis | None:
        """What is known without searching: the end of the game, or the store's entry (with
        every move's value where ``moves``)."""
        if state.is_over:
            return PositionAnalysis(Value(state.margin, True), [], source="final")
        if self.exact is None:
            return None
        entry = self.exact.get(state)
        if entry is None or (moves and entry.move_values is None):
            return None
        return PositionAnalysis(
            Value(entry.value, True), list(entry.best_moves),
            None if entry.move_values is None else dict(entry.move_values), source="store",
            nodes=entry.nodes,
        )

    def value(self, state: State, limit: Limit) -> Value | None:
        """Only the exact value of ``state``: the store's (its own entry, or the entry of the
        position before it), else the solver's within ``limit`` (None where it runs out)."""
        found = self.known(state, moves=False)
        if found is not None:
            return found.value
        stored = self.stored_value(state)
        if stored is not None:
            return Value(stored, True)
        try:
            return Value(self.solver.margin(state, limit) - (self.solver.reported_komi or 0.0),
                         True)
        except SolveInterrupted as stop:
            self._interrupted_by_ctrl_c(stop)
            return None

    def _interrupted_by_ctrl_c(self, stop: SolveInterrupted) -> None:
        """Raise a solve's stop on as ``KeyboardInterrupt`` where it was Ctrl-C; a solve that
        ran out of its time, or that :attr:`stop_requested` ended, is its caller's to answer."""
        if not stop.timed_out and not self.stop_requested():
            raise KeyboardInterrupt from None

    def stored_value(self, state: State) -> float | None:
        """The exact value of ``state`` that the store holds among the moves' values of the
        position before it (where ``state`` was reached by a move), else None."""
        if self.exact is None or not state.history:
            return None
        parent = state.copy()
        move = parent.undo()
        entry = self.exact.get(parent)
        if entry is None or entry.move_values is None:
            return None
        return entry.move_values.get(move)

    def solve(self, state: State, limit: Limit, moves: bool = True) -> PositionAnalysis | None:
        """The exact analysis of ``state`` if the store has it or the solver proves it within
        ``limit`` (None where it runs out of time; Ctrl-C is a ``KeyboardInterrupt``)."""
        return self.known(state, moves) or self._search(state, limit, moves)

    def _search(self, state: State, limit: Limit, moves: bool) -> PositionAnalysis | None:
        """:meth:`solve` by the solver alone (the store is not asked), its answer kept."""
        started = time.monotonic()
        solver = self.solver
        solver.stop_requested = self.stop_requested
        self._floor = None
        try:
            solution = solver.solve(state, moves, limit)
        except SolveInterrupted as stop:
            self._interrupted_by_ctrl_c(stop)
            if stop.proven is None:
                self._floor = self._proven_floor(state, stop)
            return None if moves else self._proven_before_its_moves(stop, started)
        komi = solution.komi or 0.0
        move_values = None if solution.move_values is None else {
            move: value - komi for move, value in solution.move_values.items()
        }
        seconds = time.monotonic() - started
        analysis = PositionAnalysis(
            Value(solution.result_margin, True), list(solution.best_moves), move_values,
            source="solver", nodes=solution.nodes, seconds=seconds,
        )
        if self.exact is not None:
            self.exact.keep(state, Entry(
                solution.result_margin, tuple(solution.best_moves), move_values,
                solution.nodes, seconds,
            ))
        return analysis

    def _proven_floor(self, state: State, stop: SolveInterrupted) -> tuple[float, Move] | None:
        """Where a solve of ``state`` stopped with the value proven at least something for the
        side to move: that bound (Black's margin, komi included) and the move that reaches
        it, else None."""
        move = self.solver.lower_bound_move
        bound = stop.lower if state.to_move is Player.BLACK else stop.upper
        if move is None or math.isinf(bound):
            return None
        return bound - (self.solver.reported_komi or 0.0), move

    def _proven_before_its_moves(
        self, stop: SolveInterrupted, started: float
    ) -> PositionAnalysis | None:
        """What a solve that ran out while it checked the moves of a position whose value it
        had proven still says: that value, with the moves found to keep it so far (None where
        none was found; the store keeps nothing of it, since its best moves are not all
        known)."""
        proven = stop.proven
        if proven is None or not proven.best:
            return None
        komi = self.solver.reported_komi or 0.0
        return PositionAnalysis(
            Value(stop.lower - komi, True), [self.game.parse_move(name) for name in proven.best],
            source="solver", nodes=stop.nodes, seconds=time.monotonic() - started,
        )

    def _moves_keeping(self, state: State, value: float, limit: Limit) -> PositionAnalysis | None:
        """The store's ``value`` of ``state`` with the moves the solver finds to keep it within
        ``limit`` (all of them, or those found when it runs out; None: none found)."""
        started = time.monotonic()
        solver = self.solver
        solver.stop_requested = self.stop_requested
        nodes_before = solver.nodes
        try:
            kept = solver.moves_keeping(state, value + (solver.reported_komi or 0.0), limit)
        except SolveInterrupted as stop:
            self._interrupted_by_ctrl_c(stop)
            return None
        if not kept:
            return None
        return PositionAnalysis(
            Value(value, True), kept, source="store", nodes=solver.nodes - nodes_before,
            seconds=time.monotonic() - started,
        )

    def estimate(
        self, state: State, limit: Limit, engine: Agent | None = None
    ) -> PositionAnalysis:
        """The estimate of ``state`` (which is not over) within ``limit`` by ``engine``, else
        by the analyst's own."""
        mover = state.to_move
        assert mover is not None, "an estimate of a finished game"
        found = (engine or self.engine).analyse(state, limit)
        value = found.value if found.value is not None else 0.0
        black = value if mover is Player.BLACK else -value
        return PositionAnalysis(
            Value(black + 0.0, found.proven), [found.best_move],
            principal_variation=list(found.principal_variation), source="engine",
            nodes=found.work, seconds=found.seconds, best_proven=False,
        )

    def analyse(
        self, state: State, limit: Limit, moves: bool = True,
        exact_share: float = EXACT_SHARE, engine: Agent | None = None,
    ) -> PositionAnalysis:
        """Exact where the store has ``state`` or the solver proves it in its ``exact_share``
        of ``limit`` (every move's value too, where ``moves``), else the estimate of ``engine``
        (the analyst's own unless given) in the time left. Exact analyses get a line of best
        play within the time left. Where the solver proved a bound for the side to move before
        it ran out, the move that reaches it stands for the analyst's own engine's choice
        (:meth:`_on_the_floor`; another engine's, measured against nothing here, stands)."""
        spending = limit.start()
        # (where the store knows the value already, the solver looks for the moves that keep
        # it, or for every move's value in a smaller share; the engine's choice stands for them
        # if it does not find them)
        found = self.known(state, moves)
        stored = None if found is not None else self.stored_value(state)
        if found is None and stored is not None and not moves:
            found = self._moves_keeping(state, stored, _share(limit, exact_share))
        elif found is None:
            share = exact_share if stored is None else min(exact_share, STORED_VALUE_SHARE)
            found = self._search(state, _share(limit, share), moves)
        if found is None:
            left = spending.seconds_left()
            rest = limit if left is None else Limit(seconds=max(left, 0.01))
            estimate = self.estimate(state, rest, engine)
            if stored is not None:
                estimate.value, estimate.source = Value(stored, True), "store"
            elif self._floor is not None and engine is None and not estimate.value.exact:
                self._on_the_floor(estimate, state.to_move is Player.BLACK, *self._floor)
            return estimate
        if found.best_moves and not found.principal_variation:
            # a line of best play is worth a little of the time, not what is left of it
            left = spending.seconds_left()
            line_seconds = min(LINE_SHARE * (limit.seconds or 1.0), LINE_SECONDS)
            if left is not None:
                line_seconds = min(line_seconds, left)
            found.principal_variation = self.perfect_line(
                state, found, Limit(seconds=max(line_seconds, 0.05))
            )
        return found

    @staticmethod
    def _on_the_floor(estimate: PositionAnalysis, black: bool, bound: float, move: Move) -> None:
        """An estimate (not exact), given what the solver proved before it ran out: the side
        to move reaches ``bound`` (Black's margin) with ``move``. That move is played rather
        than the engine's, whose estimates of a narrow board's early moves are points away from the
        exact values (docs/search.md, *A proven bound before an estimate*), and an estimate
        short of the bound is raised to it."""
        if estimate.best_moves != [move]:
            estimate.best_moves, estimate.principal_variation = [move], [move]
        margin = estimate.value.black
        estimate.value = Value(max(margin, bound) if black else min(margin, bound), False)

    def perfect_line(
        self, state: State, first: PositionAnalysis, limit: Limit, plies: int = LINE_PLIES
    ) -> list[Move]:
        """A line of best play from ``state`` (whose exact analysis is ``first``), as far as
        the store and the solver get within ``limit``, at most ``plies`` moves."""
        line: list[Move] = []
        walk = state.copy()
        found: PositionAnalysis | None = first
        deadline = limit.start().end
        while found is not None and found.best_moves and len(line) < plies:
            move = found.best_moves[0]
            line.append(move)
            walk.play(move)
            if walk.is_over:
                break
            found = self.known(walk, moves=False)
            if found is None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                try:
                    best = self.solver.one_best_move(walk, Limit(seconds=left) if left else None)
                except SolveInterrupted as stop:
                    self._interrupted_by_ctrl_c(stop)
                    break
                found = PositionAnalysis(Value(0.0, True), [best])
        return line

    def refine(self, state: State, limit: Limit) -> Iterator[PositionAnalysis]:
        """Analyses of ``state``, each better than the last, until one is exact, ``limit``
        runs out or :attr:`stop_requested`: rounds of doubling time, each asking the solver
        first (whose table keeps what earlier rounds proved), then the engine."""
        known = self.known(state)
        if known is not None:
            yield known
            return
        spending = limit.start()
        seconds = REFINE_FIRST_SECONDS
        while not self.stop_requested():
            left = spending.seconds_left()
            if left is not None:
                if left <= 0.01:
                    return
                seconds = min(seconds, left)
            found = self.analyse(state, Limit(seconds=seconds))
            yield found
            if found.value.exact:
                return
            seconds *= 2


def _share(limit: Limit, share: float) -> Limit:
    """``share`` of ``limit``'s time (its deadline and count stand)."""
    if limit.seconds is None:
        return limit
    return Limit(seconds=limit.seconds * share, count=limit.count, deadline=limit.deadline)


# --- reviewing a game --------------------------------------------------------------------


@dataclass
class MoveReview:
    """One move of a reviewed game."""

    ply: int
    player: Player
    move: Move
    before: PositionAnalysis
    after: PositionAnalysis
    loss: float
    """What the move gave away, from the mover's view (0 for a best move; never below 0)."""
    judgement: Judgement

    @property
    def exact(self) -> bool:
        return self.before.value.exact and self.after.value.exact

    def to_json(self, game: Game) -> dict[str, Any]:
        before = self.before.to_json(game)
        return {
            "ply": self.ply,
            "player": self.player.label,
            "move": game.format_move(self.move),
            "value_before": before["value"],
            "best_moves": before["best_moves"],
            "best_moves_exact": before["best_moves_exact"],
            "best_value": before["value"],
            "value_after": json_value(self.after.value.black),
            "loss": json_value(self.loss),
            "exact": self.exact,
            "judgement": self.judgement.value,
            "principal_variation": before["principal_variation"],
            "move_values": before["move_values"],
            "value_text_before": before["value_text"],
            "value_text_after": short(game, self.after.value),
        }


@dataclass
class PlayerSummary:
    name: str
    moves: int = 0
    counts: dict[Judgement, int] = field(default_factory=lambda: dict.fromkeys(Judgement, 0))
    total_loss: float = 0.0

    @property
    def accuracy(self) -> float | None:
        """The share of the player's moves judged best or good, in percent."""
        if not self.moves:
            return None
        return 100.0 * (self.counts[Judgement.BEST] + self.counts[Judgement.GOOD]) / self.moves

    def to_json(self) -> dict[str, Any]:
        accuracy = self.accuracy
        return {
            "name": self.name,
            "moves": self.moves,
            "accuracy": None if accuracy is None else round(accuracy, 1),
            "mean_loss": json_value(self.total_loss / self.moves) if self.moves else None,
            "best": self.counts[Judgement.BEST],
            "good": self.counts[Judgement.GOOD],
            "inaccuracies": self.counts[Judgement.INACCURACY],
            "mistakes": self.counts[Judgement.MISTAKE],
            "blunders": self.counts[Judgement.BLUNDER],
        }


@dataclass
class Review:
    """A game's moves annotated, as far as the review got."""

    game: Game
    start: State
    moves: list[Move]
    players: dict[str, str]
    reviewed: list[MoveReview] = field(default_factory=list)
    """Annotated moves, in the game's order (the last ones only, if the review was cut
    short: it goes from the end back to the start)."""
    final: PositionAnalysis | None = None
    complete: bool = False

    def summaries(self) -> dict[str, PlayerSummary]:
        found = {
            player.label: PlayerSummary(self.players.get(player.label, "?")) for player in Player
        }
        for review in self.reviewed:
            summary = found[review.player.label]
            summary.moves += 1
            summary.counts[review.judgement] += 1
            summary.total_loss += review.loss
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game.name,
            "variant": self.game.options(),
            "description": self.game.description,
            "start_position": self.start.position(),
            "complete": self.complete,
            "moves": [review.to_json(self.game) for review in self.reviewed],
            "players": {label: s.to_json() for label, s in self.summaries().items()},
        }


def annotate(
    game: Game, state: State, move: Move, before: PositionAnalysis, after: PositionAnalysis
) -> MoveReview:
    """The review of ``move`` played in ``state``, from the analyses before and after it (the
    value after it is exact where the position before was solved move by move)."""
    mover = state.to_move
    assert mover is not None
    if before.move_values is not None and move in before.move_values:
        after = PositionAnalysis(
            Value(before.move_values[move], True), after.best_moves, after.move_values,
            after.principal_variation, after.source, after.nodes, after.seconds,
        )
    before_value = before.value.for_player(mover)
    after_value = after.value.for_player(mover)
    exact = before.value.exact and after.value.exact
    if exact:
        loss = max(0.0, before_value - after_value)
        best = loss == 0
    else:
        # an estimate judges the engine's choice best, and the others by the values' difference
        best = bool(before.best_moves) and move == before.best_moves[0]
        loss = 0.0 if best else max(0.0, before_value - after_value)
    judgement = judge(game, before_value, after_value, exact, best)
    return MoveReview(len(state.history) + 1, mover, move, before, after, loss + 0.0, judgement)


def positions_of(start: State, moves: list[Move]) -> list[State]:
    """The position before the first move and after each move (each reached by its moves, so
    that the store can give a position its value from the one before it)."""
    states = [start.copy()]
    for move in moves:
        following = states[-1].copy()
        following.play(move)
        states.append(following)
    return states


def assemble_review(
    states: list[State], moves: list[Move], analyses: dict[int, PositionAnalysis],
    players: dict[str, str] | None = None,
) -> Review:
    """The review of a game from its positions' analyses (by index into ``states``, as far as
    they go): every move whose positions before and after were analysed, annotated; complete
    where every position was."""
    game = states[0].game
    review = Review(game, states[0].copy(), list(moves), dict(players or {}))
    review.reviewed = [
        annotate(game, states[index], moves[index], analyses[index], analyses[index + 1])
        for index in sorted(analyses) if index + 1 in analyses and index < len(moves)
    ]
    review.complete = len(analyses) == len(states)
    review.final = analyses.get(len(states) - 1) if review.complete else None
    return review


def review_order(states: list[State]) -> list[int]:
    """The order a review analyses positions in: from the end back to the start, so that the
    solver meets the small positions first and the large ones find them in its table."""
    return list(reversed(range(len(states))))


def review_game(
    analyst: Analyst, start: State, moves: list[Move], limit: Limit,
    players: dict[str, str] | None = None, progress: Progress | None = None,
) -> Review:
    """Review the game of ``moves`` from ``start``, each position within ``limit``
    (:func:`review_order`). Ctrl-C ends it with the moves reviewed so far."""
    states = positions_of(start, moves)
    analyses: dict[int, PositionAnalysis] = {}
    try:
        for done, index in enumerate(review_order(states), start=1):
            # (each move's value is the next position's: the moves' own values are not needed)
            analyses[index] = analyst.analyse(states[index], limit, moves=False)
            if progress is not None:
                progress(done, len(states))
    except KeyboardInterrupt:
        pass
    return assemble_review(states, moves, analyses, players)


def fill_store(
    analyst: Analyst, target: Store, plies: int, limit: Limit,
    progress: Callable[[str], None] | None = None,
) -> tuple[int, int]:
    """Solve the start of ``analyst``'s variant and every position up to ``plies`` moves after
    it, each move by move, ply by ply, into ``target`` (positions it holds already are passed
    over): the hard positions near the start, whose answers the store then serves at once.
    Each position within ``limit``, the whole within ``limit``'s deadline if it has one; Ctrl-C
    stops it, keeping what is done. Returns (positions kept, positions not solved in time)."""
    game = analyst.game
    layer = [game.new_state()]
    kept = unsolved = 0
    seen: set[str] = set()
    for ply in range(plies + 1):
        following: list[State] = []
        for index, state in enumerate(layer, start=1):
            if state.is_over or state.position() in seen:
                continue
            seen.add(state.position())
            entry = target.get(game, state)
            found = None if entry is None or entry.move_values is None else entry
            if found is None:
                try:
                    solved = analyst.solve(state, limit, moves=True)
                except KeyboardInterrupt:
                    return kept, unsolved
                if solved is None or solved.move_values is None:
                    unsolved += 1
                    continue
                found = Entry(
                    solved.value.black, tuple(solved.best_moves), solved.move_values,
                    solved.nodes, solved.seconds,
                )
                target.put(game, state, found)
                kept += 1
            if progress is not None:
                progress(f"ply {ply}: {index}/{len(layer)} positions; {kept} kept")
            if ply < plies:
                for move in state.legal_moves():
                    child = state.copy()
                    child.play(move)
                    following.append(child)
        layer = following
    return kept, unsolved
