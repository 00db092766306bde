"""The study layer's figures (docs/study.md): exact reviews of whole games, exact values of
single positions, and puzzles found a minute. A benchmark, never a test: run it on a quiet
machine, ``.venv/bin/python docs/study_bench.py [--quick]``; it prints Markdown.

Each review and each position gets a new analyst (an empty solver table, as a new ``agon
analyse`` process has), reading the store Agon ships and an empty cache; the kernels are loaded
before the clock starts.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from agon.core.game import Game
from agon.core.limits import Limit
from agon.games import make_game, plugins
from agon.solve.solver import warm_up_kernels
from agon.study.analysis import Analyst, review_game
from agon.study.puzzles import agents_game, find_puzzles
from agon.study.store import ExactValues

REVIEWED = (
    ("alternator", {"size": "4x4"}),
    ("alak", {"size": 9, "edge_capture": False}),
    ("alak", {"size": 9, "rules": "tromp-taylor"}),
)
"""The variants whose games are reviewed (the issue's targets: under 10 s each)."""
POSITIONS = ("alternator", {"size": "4x4"})
"""The variant whose positions are valued one at a time (target: each under 1 s)."""


def fresh(game: Game, cache: Path) -> Analyst:
    return Analyst(game, ExactValues(cache=cache / f"{time.monotonic_ns()}.sqlite"))


def reviews(games: int, cache: Path) -> list[str]:
    lines = [
        "| variant | game | moves | exact moves | seconds |",
        "|---|---|---|---|---|",
    ]
    for name, options in REVIEWED:
        game = make_game(name, options)
        for number in range(games):
            start = game.new_state()
            moves = agents_game(game, 1000 + number)[-1].history
            started = time.monotonic()
            review = review_game(fresh(game, cache), start, moves, Limit(seconds=2.0))
            seconds = time.monotonic() - started
            exact = sum(move.exact for move in review.reviewed)
            lines.append(
                f"| {game.description} | {number + 1} | {len(moves)} | {exact} | {seconds:.1f} |"
            )
    return lines


def positions(per_ply: int, cache: Path) -> list[str]:
    name, options = POSITIONS
    game = make_game(name, options)
    rng = random.Random(5)
    by_ply: dict[int, list[float]] = {}
    exact_by_ply: dict[int, int] = {}
    for number in range(per_ply):
        walk = agents_game(game, 2000 + number)
        for state in walk:
            ply = len(state.history)
            if state.is_over or ply > 12 or rng.random() < 0.3:
                continue
            started = time.monotonic()
            value = fresh(game, cache).value(state, Limit(seconds=5.0))
            by_ply.setdefault(ply, []).append(time.monotonic() - started)
            exact_by_ply[ply] = exact_by_ply.get(ply, 0) + (value is not None)
    lines = [
        "| ply | positions | exact | median s | slowest s | under 1 s |",
        "|---|---|---|---|---|---|",
    ]
    for ply in sorted(by_ply):
        times = by_ply[ply]
        under = sum(t < 1.0 for t in times)
        lines.append(
            f"| {ply} | {len(times)} | {exact_by_ply[ply]} | {statistics.median(times):.2f} | "
            f"{max(times):.2f} | {under} |"
        )
    return lines


def puzzles(seconds: float, cache: Path) -> list[str]:
    lines = ["| game (default board) | puzzles | minutes | a minute |", "|---|---|---|---|"]
    for found in plugins().values():
        game = found.make()
        analyst = fresh(game, cache)
        deadline = time.monotonic() + seconds
        analyst.stop_requested = lambda deadline=deadline: time.monotonic() > deadline
        started = time.monotonic()
        count = sum(1 for _ in find_puzzles(analyst, 10_000, seed=1, max_games=10_000))
        minutes = (time.monotonic() - started) / 60
        lines.append(
            f"| {game.description} | {count} | {minutes:.1f} | {count / minutes:.1f} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer games, shorter runs")
    args = parser.parse_args()
    for found in plugins().values():
        warm_up_kernels(found.name)
    with tempfile.TemporaryDirectory() as folder:
        cache = Path(folder)
        print("### Reviews (2 s a position at most)\n")
        print("\n".join(reviews(1 if args.quick else 3, cache)))
        print("\n### Exact values of single positions\n")
        print("\n".join(positions(2 if args.quick else 6, cache)))
        print("\n### Puzzles found on each game's default board\n")
        print("\n".join(puzzles(20 if args.quick else 60, cache)))


if __name__ == "__main__":
    main()
