"""How well the strongest agent keeps its time (docs/search.md, *strongest*): self-play games on
a few boards, each move's seconds against the limit (median, 99th percentile, longest), the
first move of a freshly made agent included. A benchmark, never a test: run it on a quiet
machine, ``.venv/bin/python docs/strongest_bench.py [--limit 1] [--games 2]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import agon.study  # noqa: F401 - (registers the strongest agent)
from agon.games import make_game
from agon.search.registry import make_agent

BOARDS = (
    ("alternator", {"width": 4, "height": 4}),
    ("alternator", {}),
    ("alak", {"size": 11}),
    ("alak", {"size": 9, "rules": "tromp-taylor"}),
)
MAX_MOVES = 80


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=float, default=1.0, help="seconds a move")
    parser.add_argument("--games", type=int, default=2, help="self-play games a board")
    parser.add_argument("--nostore", action="store_true", help="without the stored values")
    chosen = parser.parse_args()
    name = "strongest-nostore" if chosen.nostore else "strongest"
    print(f"| board | moves | median | p99 | longest | first move | ({name}, {chosen.limit} s) |")
    print("|---|---|---|---|---|---|---|")
    for game_name, options in BOARDS:
        game = make_game(game_name, options)
        seconds: list[float] = []
        firsts: list[float] = []
        for seed in range(chosen.games):
            agent = make_agent(f"{name}:{chosen.limit}s", game, seed=seed)
            state = game.new_state()
            while not state.is_over and len(state.history) < MAX_MOVES:
                started = time.monotonic()
                state.play(agent.analyse(state).best_move)
                seconds.append(time.monotonic() - started)
                if len(state.history) == 1:
                    firsts.append(seconds[-1])
            agent.close()
        seconds.sort()
        p99 = seconds[min(len(seconds) - 1, round(0.99 * (len(seconds) - 1)))]
        print(
            f"| {game.description} | {len(seconds)} | {statistics.median(seconds):.3f} | "
            f"{p99:.3f} | {seconds[-1]:.3f} | {max(firsts):.3f} | |"
        )


if __name__ == "__main__":
    main()
