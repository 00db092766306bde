"""Monte Carlo tree search (UCT) with MCTS-Solver, on a game's fast twin.

The tree lives in preallocated NumPy arrays, one column per node, and is searched inside Numba.
A node's children sit side by side (``FIRST_CHILD`` and ``CHILD_COUNT``), created together
when the node is expanded. Statistics are kept from the point of view of the player who made
the move into the node (``MOVER``): ``SCORE`` sums the playout results (win 1, draw 0.5,
loss 0) and ``MARGIN`` the final margins; with RAVE on (``rave_equivalence``),
``AMAF_VISITS`` and ``AMAF_SCORE`` count the iterations that made the node's move at its ply or
later, and their results (all moves as first). ``PROOF`` marks a node whose outcome is known
(MCTS-Solver, Winands, Björnsson and Saito 2008): a node is won for the player to move there as
soon as one child is, and otherwise decided once every child is, by the best of them; proven
losses are never selected again, and the search stops once the root is proven.

Each iteration plays from the root array and takes its moves back with ``undo`` at the end,
so the root array never needs copying. Between moves the tree is kept: the agent re-roots it at
the node the moves played since lead to (compacting that subtree to the front of new arrays).

With ``threads`` above 1 the agent searches that many trees at once from the same root (root
parallelisation: Chaslot, Winands and van den Herik 2008), each on a thread of its own (the
compiled iterations let go of the GIL), and sums their root's statistics to choose its move.
"""

from __future__ import annotations

import math
import random
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt
from numba import njit

from agon.core.fast import Array
from agon.core.game import Game, Move, State
from agon.core.limits import Limit
from agon.search.agent import Analysis
from agon.search.base import FastAgent
from agon.search.kernels import Kernel, playout, undo_plies

# Rows of the tree's arrays.
MOVE, FIRST_CHILD, CHILD_COUNT = 0, 1, 2  # links (int32)
VISITS, SCORE, MARGIN, AMAF_VISITS, AMAF_SCORE = 0, 1, 2, 3, 4  # stats (float64)
PROOF, MOVER = 0, 1  # flags (int8)
NODES, FULL = 0, 1  # counters (int64)

UNPROVEN = -1
"""``PROOF`` of a node whose outcome is unknown; else Black's result doubled: 0 White wins,
1 draw, 2 Black wins (absolute, so that no sign flips are needed)."""

MAX_TREE_DEPTH = 4096
UNVISITED = 1e6
"""With RAVE, the value of a child not yet visited, plus its all-moves-as-first mean: above any
visited child's."""

Links = npt.NDArray[np.int32]
Stats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.int8]


@njit(cache=True)
def _outcome(black_margin: float) -> int:
    """Black's result doubled, from the final margin."""
    if black_margin > 0:
        return 2
    if black_margin < 0:
        return 0
    return 1


def outcome_for(outcome: int, player: int) -> int:
    """A doubled result (Black's) as seen by ``player``: 2 won, 1 drawn, 0 lost."""
    return outcome if player == 0 else 2 - outcome


_for_player = njit(cache=True)(outcome_for)
""":func:`outcome_for` compiled, for the kernels (Python calls the plain function: no kernel is
compiled on a move's clock)."""


@njit(cache=True)
def _select(
    links: Links, stats: Stats, flags: Flags, node: int, exploration: float,
    margin_weight: float, margin_scale: float, rave_equivalence: float,
) -> int:
    """The child UCT picks: an unvisited child first (in the order children were made; with
    RAVE, the best by its all-moves-as-first mean), never a proven loss for the player to
    move; -1 if every child is such a loss."""
    first = links[FIRST_CHILD, node]
    log_visits = math.log(max(stats[VISITS, node], 1.0))
    player = flags[MOVER, first]
    best_value = -np.inf
    chosen = -1
    for child in range(first, first + links[CHILD_COUNT, node]):
        proof = flags[PROOF, child]
        if proof != UNPROVEN and _for_player(proof, player) == 0:
            continue
        visits = stats[VISITS, child]
        mean = stats[SCORE, child] / visits if visits > 0 else 0.0
        if rave_equivalence > 0.0:
            amaf_visits = stats[AMAF_VISITS, child]
            amaf = stats[AMAF_SCORE, child] / amaf_visits if amaf_visits > 0 else 0.5
            if visits == 0:
                value = UNVISITED + amaf
                if value > best_value:
                    best_value, chosen = value, child
                continue
            share = math.sqrt(rave_equivalence / (3.0 * visits + rave_equivalence))
            mean = (1.0 - share) * mean + share * amaf
        elif visits == 0:
            return child
        value = mean + exploration * math.sqrt(log_visits / visits)
        if margin_weight != 0.0:
            value += margin_weight * math.tanh(stats[MARGIN, child] / visits / margin_scale)
        if value > best_value:
            best_value, chosen = value, child
    return chosen


@njit(cache=True)
def _expand(
    move_order: Kernel, params: Array, state: Array, links: Links, stats: Stats, flags: Flags,
    counters: Array, node: int, player: int, moves: Array, count: int,
    order_scores: npt.NDArray[np.float64], informed: bool,
) -> None:
    """Give ``node`` its ``count`` children: in ``move_order``'s order (best first) when
    ``informed``, else shuffled, since unvisited children are tried in order."""
    if informed:
        for index in range(count):
            order_scores[index] = -move_order(params, state, moves[index])
        order = np.argsort(order_scores[:count], kind="mergesort")
        ordered = moves[:count][order]
    else:
        ordered = moves[:count].copy()
        for index in range(count - 1, 0, -1):
            other = np.random.randint(index + 1)
            ordered[index], ordered[other] = ordered[other], ordered[index]
    first = counters[NODES]
    for index in range(count):
        child = first + index
        links[MOVE, child] = ordered[index]
        links[FIRST_CHILD, child] = -1
        links[CHILD_COUNT, child] = 0
        stats[:, child] = 0.0
        flags[PROOF, child] = UNPROVEN
        flags[MOVER, child] = player
    links[FIRST_CHILD, node] = first
    links[CHILD_COUNT, node] = count
    counters[NODES] = first + count


@njit(cache=True)
def _try_prove(links: Links, flags: Flags, node: int) -> bool:
    """Mark ``node`` proven if its children decide it: one won child (for the player to move
    there), or every child proven; returns whether they do."""
    first = links[FIRST_CHILD, node]
    player = flags[MOVER, first]
    every_child_proven = True
    best = 0
    for child in range(first, first + links[CHILD_COUNT, node]):
        proof = flags[PROOF, child]
        if proof == UNPROVEN:
            every_child_proven = False
            continue
        seen = _for_player(proof, player)
        if seen == 2:
            flags[PROOF, node] = proof
            return True
        best = max(best, seen)
    if every_child_proven:
        flags[PROOF, node] = _for_player(best, player)
    return every_child_proven


@njit(cache=True, nogil=True)
def run_iterations(
    legal_moves: Kernel, play: Kernel, undo: Kernel, to_move: Kernel, end_code: Kernel,
    margin: Kernel, evaluate: Kernel, move_order: Kernel, params: Array, state: Array,
    links: Links, stats: Stats, flags: Flags, counters: Array, path: Array, moves: Array,
    order_scores: npt.NDArray[np.float64], iterations: int, pass_move: int, exploration: float,
    margin_weight: float, margin_scale: float, epsilon: float, informed: bool, may_fill: bool,
    max_playout_plies: int, rave_equivalence: float, record: Array, first_played: Array,
) -> int:
    """Run up to ``iterations`` MCTS iterations from ``state`` (the root, node 0; restored).

    Returns how many ran. Stops early when the root is proven, or, unless ``may_fill``, when a
    node needs expanding and the arrays have no room (``counters[FULL]`` is then set, and the
    caller grows the arrays and goes on). With ``may_fill`` a full tree keeps searching, with
    playouts from its leaves. With ``rave_equivalence`` above 0 (RAVE), each iteration's moves
    are written into ``record`` (two rows: move, mover; room for the tree's depth and a
    playout), and ``first_played`` (-1 everywhere, and so again after each iteration) marks
    them for the all-moves-as-first statistics (:func:`_count_all_moves_as_first`).
    """
    capacity = links.shape[1]
    rave = rave_equivalence > 0.0
    for iteration in range(iterations):
        if flags[PROOF, 0] != UNPROVEN:
            return iteration
        node = 0
        depth = 0
        path[0] = 0
        newly_proven = False
        plies = 0
        while True:
            proof = flags[PROOF, node]
            if proof != UNPROVEN:
                outcome = proof
                black_margin = stats[MARGIN, node] / max(stats[VISITS, node], 1.0)
                if flags[MOVER, node] == 1:
                    black_margin = -black_margin
                break
            if links[FIRST_CHILD, node] < 0:
                if end_code(params, state) != 0:
                    black_margin = float(margin(params, state))
                    outcome = _outcome(black_margin)
                    flags[PROOF, node] = outcome
                    newly_proven = True
                    break
                if (node == 0 or stats[VISITS, node] > 0) and depth + 1 < path.shape[0]:
                    count = legal_moves(params, state, moves)
                    if counters[NODES] + count <= capacity:
                        _expand(
                            move_order, params, state, links, stats, flags, counters, node,
                            to_move(params, state), moves, count, order_scores, informed,
                        )
                    elif not may_fill:
                        counters[FULL] = 1
                        undo_plies(undo, params, state, depth)
                        return iteration
                if links[FIRST_CHILD, node] < 0:
                    black_margin, plies = playout(
                        legal_moves, play, end_code, margin, evaluate, move_order, to_move,
                        params, state, moves, pass_move, epsilon, max_playout_plies,
                        record if rave else record[:, :0], depth,
                    )
                    undo_plies(undo, params, state, plies)
                    outcome = _outcome(black_margin)
                    break
            child = _select(
                links, stats, flags, node, exploration, margin_weight, margin_scale,
                rave_equivalence,
            )
            if child < 0:  # cannot happen once proofs are propagated; a safe fallback
                child = links[FIRST_CHILD, node]
            if rave:
                record[0, depth] = links[MOVE, child]
                record[1, depth] = flags[MOVER, child]
            play(params, state, links[MOVE, child])
            node = child
            depth += 1
            path[depth] = node
        undo_plies(undo, params, state, depth)
        if rave:  # (the playout's moves, for every node of the path)
            _mark_plies(record, depth, depth + plies, first_played, pass_move, False)
        for level in range(depth, -1, -1):
            node = path[level]
            if rave and level < depth:
                _mark_plies(record, level, level + 1, first_played, pass_move, False)
            stats[VISITS, node] += 1.0
            mover = flags[MOVER, node]
            if mover >= 0:
                stats[SCORE, node] += _for_player(outcome, mover) / 2.0
                stats[MARGIN, node] += black_margin if mover == 0 else -black_margin
            if rave:
                _count_all_moves_as_first(links, stats, flags, node, first_played, outcome)
            if newly_proven and level < depth:
                newly_proven = _try_prove(links, flags, node)
        if rave:
            _mark_plies(record, 0, depth + plies, first_played, pass_move, True)
    return iterations


@njit(cache=True)
def _mark_plies(
    record: Array, start: int, end: int, first_played: Array, pass_move: int, forget: bool
) -> None:
    """Mark in ``first_played`` the plies ``start`` to ``end`` of the iteration's ``record``:
    for each player and move, the first of them it was made at (passes aside: a pass is no
    place on the board); ``forget`` sets their entries back to -1."""
    for ply in range(end - 1, start - 1, -1):
        move, mover = record[0, ply], record[1, ply]
        if move != pass_move:
            first_played[mover, move] = -1 if forget else ply


@njit(cache=True)
def _count_all_moves_as_first(
    links: Links, stats: Stats, flags: Flags, node: int, first_played: Array, outcome: int,
) -> None:
    """RAVE's all-moves-as-first statistics (Gelly and Silver 2007): each child of ``node``
    whose move its mover made at the node's ply or later in the iteration (the plies marked
    in ``first_played`` so far), in the tree or the playout, counts the iteration's result as
    though that move had been played first."""
    first = links[FIRST_CHILD, node]
    if first < 0:
        return
    for child in range(first, first + links[CHILD_COUNT, node]):
        mover = flags[MOVER, child]
        if first_played[mover, links[MOVE, child]] >= 0:
            stats[AMAF_VISITS, child] += 1.0
            stats[AMAF_SCORE, child] += _for_player(outcome, mover) / 2.0


@njit(cache=True)
def compact_subtree(
    links: Links, stats: Stats, flags: Flags, root: int, new_links: Links, new_stats: Stats,
    new_flags: Flags, origin: Array,
) -> int:
    """Copy the subtree under ``root`` to the front of the new arrays (``root`` becomes node 0),
    breadth first so that siblings stay side by side; returns its number of nodes."""
    origin[0] = root
    top = 1
    index = 0
    while index < top:
        old = origin[index]
        new_links[MOVE, index] = links[MOVE, old]
        new_stats[:, index] = stats[:, old]
        new_flags[:, index] = flags[:, old]
        first, count = links[FIRST_CHILD, old], links[CHILD_COUNT, old]
        new_links[CHILD_COUNT, index] = count
        if first < 0:
            new_links[FIRST_CHILD, index] = -1
        else:
            new_links[FIRST_CHILD, index] = top
            for offset in range(count):
                origin[top + offset] = first + offset
            top += count
        index += 1
    new_flags[MOVER, 0] = -1
    return top


@dataclass
class Tree:
    """The search tree's arrays; node 0 is the root."""

    links: Links
    stats: Stats
    flags: Flags
    counters: Array

    @classmethod
    def empty(cls, capacity: int) -> Tree:
        tree = cls(
            links=np.empty((3, capacity), dtype=np.int32),
            stats=np.empty((5, capacity), dtype=np.float64),
            flags=np.empty((2, capacity), dtype=np.int8),
            counters=np.zeros(2, dtype=np.int64),
        )
        tree.links[:, 0] = (-1, -1, 0)
        tree.stats[:, 0] = 0.0
        tree.flags[:, 0] = (UNPROVEN, -1)
        tree.counters[NODES] = 1
        return tree

    @property
    def capacity(self) -> int:
        return int(self.links.shape[1])

    @property
    def size(self) -> int:
        return int(self.counters[NODES])

    def children(self, node: int) -> range:
        first = int(self.links[FIRST_CHILD, node])
        return range(first, first + int(self.links[CHILD_COUNT, node])) if first >= 0 else range(0)

    def child_by_move(self, node: int, move: Move) -> int | None:
        for child in self.children(node):
            if self.links[MOVE, child] == move:
                return child
        return None

    def subtree(self, root: int, capacity: int) -> Tree:
        """A new tree holding the subtree under ``root``, with room for ``capacity`` nodes."""
        tree = Tree.empty(capacity)
        origin = np.empty(capacity, dtype=np.int64)
        tree.counters[NODES] = compact_subtree(
            self.links, self.stats, self.flags, root, tree.links, tree.stats, tree.flags, origin
        )
        return tree


@dataclass
class _RootChild:
    """A move at the root, its statistics summed over the trees searched (one, or one a
    thread), and where to follow its line: the node of the tree that visited it most."""

    move: int
    visits: float
    score: float
    margin: float
    proof: int
    mover: int
    tree: Tree
    node: int


def _share(first: int, count: int, threads: int, thread: int) -> int:
    """How many of the iterations numbered ``first`` to ``first + count - 1`` are the
    ``thread``'s: those whose number leaves it when divided by ``threads``."""
    def numbered_below(end: int) -> int:  # (how many of 0 … end - 1 are the thread's)
        return (end - thread + threads - 1) // threads

    return numbered_below(first + count) - numbered_below(first)


def _derived_seed(seed: int, index: int) -> int:
    """The seed of the ``index``-th other thread's search of an agent seeded ``seed``."""
    return random.Random(f"{seed}/{index}").getrandbits(31)


class MctsAgent(FastAgent):
    """UCT with random (or informed) playouts and MCTS-Solver; keeps its tree between moves.

    ``Analysis.value`` is the mean final margin of the playouts through the chosen move, from
    the mover's view; ``win_rate`` its mean result (win 1, draw 0.5, loss 0). ``proven`` means
    that the outcome (and so ``win_rate``) is exact; ``value`` stays a playout mean.
    """

    name = "mcts"
    default_limit = Limit(seconds=1.0)
    informed = False
    exploration = 0.7
    margin_weight = 0.05
    """Weight of a bonus for the mean margin in UCT, to prefer bigger wins and smaller losses."""
    margin_scale = 8.0
    epsilon = 1.0
    """Playouts: probability of a uniform random move instead of ``move_order``'s best."""
    playout_plies_per_action = 4
    """Playouts are cut (and ``evaluate`` scores them) after this many plies per action number,
    where random games would otherwise last thousands (docs/search.md)."""
    rave_equivalence = 0.0
    """RAVE (Gelly and Silver 2007), where above 0: a child's mean is blended with its
    all-moves-as-first mean, weighted sqrt(K / (3 visits + K)) for this K (half once the child
    has K visits); 0 leaves it out."""
    initial_capacity = 1 << 16
    max_capacity = 1 << 21
    """At most this many nodes (about 110 MB); a full tree goes on with playouts from its
    leaves."""
    threads = 1
    """Trees searched at once, each on a thread of its own (root parallelisation), each up to
    :data:`max_capacity` nodes."""
    SETTINGS: ClassVar[tuple[str, ...]] = (
        "informed", "exploration", "margin_weight", "margin_scale", "epsilon",
        "playout_plies_per_action", "rave_equivalence", "initial_capacity", "max_capacity",
    )
    """What the other threads' searches take from this one's (set on an agent, they are its
    own)."""

    def __init__(self, game: Game, limit: Limit | None = None, seed: int | None = None) -> None:
        super().__init__(game, limit, seed)
        self.path = np.empty(MAX_TREE_DEPTH, dtype=np.int64)
        self.order_scores = np.empty(self.twin.num_actions, dtype=np.float64)
        self.record = np.empty((2, MAX_TREE_DEPTH + self._playout_plies), dtype=np.int64)
        self.first_played = np.full((2, self.twin.num_actions), -1, dtype=np.int64)
        self.tree = Tree.empty(self.initial_capacity)
        self._root_history: list[Move] | None = None
        self._root_keys: tuple[int, int] | None = None
        self._helpers: list[_Helper] = []
        """The searches of the other threads (``threads`` less one), made when first needed."""

    @property
    def _playout_plies(self) -> int:
        return self.playout_plies_per_action * self.twin.num_actions

    def reset(self) -> None:
        super().reset()
        self.tree = Tree.empty(self.initial_capacity)
        self._root_history = None
        self._root_keys = None
        for helper in self._helpers:
            helper.agent.reset()

    def close(self) -> None:
        for helper in self._helpers:
            helper.thread.shutdown()
        self._helpers = []

    def _helpers_for_threads(self) -> list[_Helper]:
        """The other threads' searches, as many as ``threads`` asks, with this one's settings
        and seeds drawn from its own."""
        wanted = max(self.threads, 1) - 1
        while len(self._helpers) > wanted:
            self._helpers.pop().thread.shutdown()
        while len(self._helpers) < wanted:
            index = len(self._helpers) + 1
            seed = None if self.seed is None else _derived_seed(self.seed, index)
            agent = type(self)(self.game, self.limit, seed)
            for setting in self.SETTINGS:
                setattr(agent, setting, getattr(self, setting))
            self._helpers.append(_Helper(agent))
        return self._helpers

    def _reuse_tree(self, state: State, root: Array) -> None:
        """Re-root the kept tree at ``state`` if it grew from an earlier state of this game;
        else start a new tree. The moves since are found by comparing ``state.history``."""
        previous, keys = self._root_history, self._root_keys
        node: int | None = None
        if previous is not None and state.history[: len(previous)] == previous:
            start = state.copy()
            node = 0
            for _ in range(len(state.history) - len(previous)):
                start.undo()
            if self._keys(self.twin.from_reference(start)) != keys:
                node = None
            for move in state.history[len(previous) :]:
                if node is None:
                    break
                node = self.tree.child_by_move(node, move)
        if node is None:
            self.tree = Tree.empty(self.initial_capacity)
        elif node != 0:
            self.tree = self.tree.subtree(node, self.tree.capacity)
        self._root_history = list(state.history)
        self._root_keys = self._keys(root)

    def _iterate(self, root: Array, count: int) -> tuple[int, bool]:
        """Up to ``count`` iterations, growing the arrays as needed; (done, root proven)."""
        done = 0
        while done < count:
            tree = self.tree
            may_fill = tree.capacity >= self.max_capacity
            kernels = self.kernels
            done += run_iterations(
                kernels.legal_moves, kernels.play, kernels.undo, kernels.to_move,
                kernels.end_code, kernels.margin, kernels.evaluate, kernels.move_order,
                self.twin.params, root, tree.links, tree.stats, tree.flags, tree.counters,
                self.path, self.moves, self.order_scores, count - done, self.pass_move,
                self.exploration, self.margin_weight, self.margin_scale, self.epsilon,
                self.informed, may_fill, self._playout_plies, self.rave_equivalence,
                self.record, self.first_played,
            )
            if tree.flags[PROOF, 0] != UNPROVEN:
                return done, True
            if tree.counters[FULL]:
                self.tree = tree.subtree(0, min(2 * tree.capacity, self.max_capacity))
        return done, False

    def analyse(self, state: State, limit: Limit | None = None) -> Analysis:
        start = time.perf_counter()
        spending = self.limit_of(limit).start()
        root = self.root(state)
        self._reuse_tree(state, root)
        helpers = self._helpers_for_threads()
        for ready in [helper.thread.submit(helper.start, state) for helper in helpers]:
            ready.result()
        asked = 0

        def step(count: int) -> tuple[int, bool]:
            nonlocal asked
            first, asked = asked, asked + count
            return self._iterate_together(root, first, count)

        work, _ = self.chunks(64).run(step, spending)
        return self._report(work, time.perf_counter() - start)

    def _iterate_together(self, root: Array, first: int, count: int) -> tuple[int, bool]:
        """The move's iterations numbered ``first`` on, ``count`` of them, each thread taking
        its share (:func:`_share`: the same shares however the chunks fall, so that a count
        limit gives the same search every time); (done, root proven by any)."""
        threads = len(self._helpers) + 1
        running = [
            helper.thread.submit(
                helper.agent._iterate, helper.root, _share(first, count, threads, index)
            )
            for index, helper in enumerate(self._helpers, start=1)
        ]
        done, proven = self._iterate(root, _share(first, count, threads, 0))
        for result in running:
            ran, solved = result.result()
            done, proven = done + ran, proven or solved
        return done, proven

    @property
    def trees(self) -> list[Tree]:
        """Every thread's tree, this one's first."""
        return [self.tree, *(helper.agent.tree for helper in self._helpers)]

    def _root_children(self) -> list[_RootChild]:
        """The root's moves, each with its statistics summed over every thread's tree."""
        found: dict[int, _RootChild] = {}
        for tree in self.trees:
            for node in tree.children(0):
                move, visits = int(tree.links[MOVE, node]), float(tree.stats[VISITS, node])
                proof = int(tree.flags[PROOF, node])
                child = found.get(move)
                if child is None:
                    found[move] = _RootChild(
                        move, visits, float(tree.stats[SCORE, node]),
                        float(tree.stats[MARGIN, node]), proof, int(tree.flags[MOVER, node]),
                        tree, node,
                    )
                    continue
                child.score += float(tree.stats[SCORE, node])
                child.margin += float(tree.stats[MARGIN, node])
                if proof != UNPROVEN:
                    child.proof = proof
                if visits > float(child.tree.stats[VISITS, child.node]):
                    child.tree, child.node = tree, node
                child.visits += visits
        return list(found.values())

    @staticmethod
    def _best_child(children: list[_RootChild]) -> _RootChild:
        """A proven win first, then a move not proven lost, then a proven loss; among proven
        wins (or losses) the best mean margin, since the result is settled but the points
        are not; else the most visited."""

        def preference(child: _RootChild) -> tuple[int, float, float]:
            known = -1 if child.proof == UNPROVEN else outcome_for(child.proof, child.mover)
            rank = {2: 2, -1: 1, 1: 1, 0: 0}[known]
            if known in (0, 2):
                margin = child.margin / child.visits if child.visits else -math.inf
                return rank, margin, child.visits
            return rank, child.visits, child.score

        return max(children, key=preference)

    def _report(self, work: int, seconds: float) -> Analysis:
        best = self._best_child(self._root_children())
        if best.proof != UNPROVEN:
            win_rate: float | None = outcome_for(best.proof, best.mover) / 2.0
        else:
            win_rate = best.score / best.visits if best.visits else None
        tree, node = best.tree, best.node
        variation = [best.move]
        while tree.children(node) and len(variation) < 64:
            node = max(tree.children(node), key=lambda child: tree.stats[VISITS, child])
            if tree.stats[VISITS, node] == 0:
                break
            variation.append(int(tree.links[MOVE, node]))
        return Analysis(
            best_move=best.move,
            value=best.margin / best.visits if best.visits else None,
            principal_variation=variation,
            work=work,
            seconds=seconds,
            proven=any(int(tree.flags[PROOF, 0]) != UNPROVEN for tree in self.trees),
            win_rate=win_rate,
        )


class _Helper:
    """The search of one more thread: an agent of its own (its own tree), always run on one
    thread of its own, whose compiled random generator (the thread's) it seeds each move."""

    def __init__(self, agent: MctsAgent) -> None:
        self.agent = agent
        self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agon-mcts")
        self.root: Array = np.empty(0, dtype=np.int64)
        """The twin's array of the position it searches from this move."""

    def start(self, state: State) -> None:
        """Take up the move's position (run on its thread): its tree kept where it can be."""
        self.root = self.agent.root(state)
        self.agent._reuse_tree(state, self.root)


class InformedMctsAgent(MctsAgent):
    """MCTS whose playouts play ``move_order``'s best move once in 4 (epsilon-greedy) and whose
    new children are tried in ``move_order``'s order (more greed did worse: docs/search.md).
    """

    name = "mcts-informed"
    informed = True
    epsilon = 0.75

