"""The graph of baljeu Alak's positions without the repetition rule (docs/solver.md, Limits).

A position is the board, the side to move and the points just captured; its successors are the
placements the reference rules allow when no earlier board is remembered. The script prints,
for each board size given, how many positions the empty board reaches, how many lie on cycles
(which the repetition rule cuts), the largest set of positions that can all reach one another
(a strongly connected component), and which margins each side can force when play that never
ends counts against it. Those margins are *not* bounds of the real game: the repetition rule
also refuses placements that a positional strategy relies on, and so ends games early.

    .venv/bin/python docs/position_graph.py 7 8 9 [--no-edge-capture]
"""

from __future__ import annotations

import sys
from collections import deque

from agon.core.player import Player
from agon.games.alak.rules import Alak, AlakPosition, AlakState

Position = tuple[str, Player, frozenset[int]]


def position_graph(game: Alak) -> tuple[list[Position], list[list[int]]]:
    """Every position the empty board reaches, and each one's successors (indices)."""
    start = game.new_state().current
    positions: list[Position] = [(start.board, start.player, start.captured)]
    index = {positions[0]: 0}
    successors: list[list[int]] = []
    while len(successors) < len(positions):
        board, player, captured = positions[len(successors)]
        state = AlakState(game, AlakPosition(board=board, player=player, captured=captured))
        targets = []
        for move in state.legal_moves():
            after = state.copy()
            after.play(move)
            now = after.current
            target = (now.board, now.player, now.captured)
            if target not in index:
                index[target] = len(positions)
                positions.append(target)
            targets.append(index[target])
        successors.append(targets)
    return positions, successors


def component_sizes(successors: list[list[int]]) -> list[int]:
    """The sizes of the strongly connected components (Tarjan's algorithm, iterative)."""
    count = len(successors)
    order, low = [-1] * count, [0] * count
    on_stack = [False] * count
    stack: list[int] = []
    sizes: list[int] = []
    visited = 0
    for root in range(count):
        if order[root] != -1:
            continue
        work = [(root, 0)]
        while work:
            node, next_child = work.pop()
            if next_child == 0:
                order[node] = low[node] = visited
                visited += 1
                stack.append(node)
                on_stack[node] = True
            for child_index in range(next_child, len(successors[node])):
                child = successors[node][child_index]
                if order[child] == -1:
                    work += [(node, child_index + 1), (child, 0)]
                    break
                if on_stack[child]:
                    low[node] = min(low[node], order[child])
            else:
                if low[node] == order[node]:
                    size = 0
                    while True:
                        member = stack.pop()
                        on_stack[member] = False
                        size += 1
                        if member == node:
                            break
                    sizes.append(size)
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    return sizes


def predecessors_of(successors: list[list[int]]) -> list[list[int]]:
    """Each position's predecessors (indices), from the successors."""
    predecessors: list[list[int]] = [[] for _ in successors]
    for node, targets in enumerate(successors):
        for target in targets:
            predecessors[target].append(node)
    return predecessors


def forces(
    positions: list[Position], successors: list[list[int]], predecessors: list[list[int]],
    player: Player, margin: int,
) -> bool:
    """Whether ``player`` can force, from the empty board, an end whose margin (Black's stones
    minus White's) is at least ``margin`` (Black) or at most it (White), endless play counting
    against ``player``: the positions from which the opponent cannot avoid such an end, found
    backwards from the ends."""
    sign = 1 if player is Player.BLACK else -1
    unsettled = [len(targets) for targets in successors]
    won = [False] * len(positions)
    queue = deque(
        node
        for node, (board, _, _) in enumerate(positions)
        if not successors[node] and sign * (board.count("x") - board.count("o")) >= sign * margin
    )
    for node in queue:
        won[node] = True
    while queue:
        target = queue.popleft()
        for node in predecessors[target]:
            if won[node]:
                continue
            unsettled[node] -= 1
            if positions[node][1] is player or unsettled[node] == 0:
                won[node] = True
                queue.append(node)
    return won[0]


def main(arguments: list[str]) -> None:
    edge_capture = "--no-edge-capture" not in arguments
    sizes = [argument for argument in arguments if argument != "--no-edge-capture"]
    if not sizes or not all(size.isdigit() and 1 <= int(size) <= 12 for size in sizes):
        sys.exit("usage: position_graph.py SIZE [SIZE ...] [--no-edge-capture]  (sizes 1 to 12)")
    for size in map(int, sizes):
        positions, successors = position_graph(Alak(size=size, edge_capture=edge_capture))
        predecessors = predecessors_of(successors)
        cycles = [count for count in component_sizes(successors) if count > 1]
        margins = range(-size, size + 1)
        black = [m for m in margins if forces(positions, successors, predecessors, Player.BLACK, m)]
        white = [m for m in margins if forces(positions, successors, predecessors, Player.WHITE, m)]
        print(
            f"1 x {size}: {len(positions):,} positions, {sum(cycles):,} on cycles "
            f"({sum(cycles) / len(positions):.0%}, largest component {max(cycles, default=0):,}); "
            f"Black forces {f'>= {max(black):+d}' if black else 'nothing'}, "
            f"White forces {f'<= {min(white):+d}' if white else 'nothing'}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
