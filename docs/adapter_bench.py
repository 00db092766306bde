"""Random games through the OpenSpiel adapter, per CPU second, in two checkouts side by side.

    .venv/bin/python docs/adapter_bench.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 3] [--seconds 3]

Each round runs, in each checkout in turn (old, new, old, new, ...: a busy, shared machine slows
both alike), two loops on each variant below for ``--seconds`` of CPU time:
- *random games*: from a clone of the start, each move drawn with Python's ``random.choice``
  from ``legal_actions()`` until the end: the adapter's own cost;
- *rollouts*: OpenSpiel's ``RandomRolloutEvaluator.evaluate`` (what MCTSBot runs at every leaf;
  it draws with NumPy, which costs more per move than the fast twin does).
It prints each figure's median in both and their ratio (new / old). Each checkout runs its
own sources (``PYTHONPATH`` points at its ``src``) with this venv's packages.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

VARIANTS = (
    ("alternator 8x8", "alternator", {"size": "8x8"}),
    ("alak 11 baljeu", "alak", {"size": 11, "rules": "baljeu"}),
    ("alak 11 traditional", "alak", {"size": 11, "rules": "traditional"}),
)

MEASURE = """
import json, random, sys, time
import numpy as np
from open_spiel.python.algorithms import mcts
from agon.adapters.openspiel import load
from agon.games import make_game

name, options, seconds = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3])
game = load(make_game(name, options))
start = game.new_initial_state()
rng = random.Random(1)
evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(1))


def random_game():
    state = start.clone()
    while not state.is_terminal():
        state.apply_action(rng.choice(state.legal_actions()))
    state.returns()


def rate(loop):
    loop()  # (the kernels loaded, not timed)
    count, began = 0, time.process_time()
    while time.process_time() - began < seconds:
        loop()
        count += 1
    return count / (time.process_time() - began)


rollout = lambda: evaluator.evaluate(start)  # noqa: E731
print(json.dumps({"random games": rate(random_game), "rollouts": rate(rollout)}))
"""


def measure(
    checkout: Path, name: str, options: dict[str, object], seconds: float
) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-c", MEASURE, name, json.dumps(options), str(seconds)],
        env={**os.environ, "PYTHONPATH": str(checkout / "src")},
        capture_output=True, text=True, check=True,
    )
    figures: dict[str, float] = json.loads(result.stdout)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    arguments = parser.parse_args()
    found: dict[tuple[str, str, str], list[float]] = {}
    for _ in range(arguments.rounds):
        for label, name, options in VARIANTS:
            for side, checkout in (("old", arguments.old), ("new", arguments.new)):
                for loop, figure in measure(checkout, name, options, arguments.seconds).items():
                    found.setdefault((label, loop, side), []).append(figure)
    print(f"{'variant':22} {'loop':13} {'old /s':>9} {'new /s':>9} {'new/old':>8}")
    for label, _, _ in VARIANTS:
        for loop in ("random games", "rollouts"):
            old = statistics.median(found[label, loop, "old"])
            new = statistics.median(found[label, loop, "new"])
            print(f"{label:22} {loop:13} {old:9.1f} {new:9.1f} {new / old:8.1f}")


if __name__ == "__main__":
    main()
