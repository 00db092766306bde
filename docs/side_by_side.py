"""Two checkouts of Agon measured side by side, in turns, on one machine.

    .venv/bin/python docs/side_by_side.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 3]

Runs ``agon bench --json`` and timed solves in each checkout, alternating (old, new, old,
new, ...) so that a busy, shared machine slows both alike, and prints each figure's median in
both and their ratio (new / old). Each checkout runs its own sources (``PYTHONPATH`` points at
its ``src``), with this venv's packages; its Numba cache is warmed by a first, unmeasured
round. Solves are timed by their own ``seconds`` (after ``agon solve`` has loaded its
kernels) and give their node counts, which must be equal where the search is the same.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

SOLVES = (
    ("alternator 4x4", ["alternator", "--size", "4x4"]),
    ("alak 8 baljeu", ["alak", "--size", "8"]),
)
BENCH = ["bench", "--json", "--seconds", "2"]


def agon(checkout: Path, arguments: list[str]) -> dict[str, object]:
    """``agon ARGUMENTS`` run on a checkout's sources; its JSON answer."""
    command = [sys.executable, "-c", "from agon.cli import main; main()", *arguments]
    env = {"PYTHONPATH": str(checkout / "src"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        command, cwd=checkout, env=env, capture_output=True, text=True, check=True
    )
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def measure(checkout: Path) -> dict[str, float]:
    """One round of every figure in one checkout."""
    figures: dict[str, float] = {}
    for variant, measures in agon(checkout, BENCH).items():
        if isinstance(measures, dict):
            for name, value in measures.items():
                figures[f"bench {variant} {name}"] = float(value)
    for label, arguments in SOLVES:
        solved = agon(checkout, ["solve", *arguments, "--json", "-q"])
        figures[f"solve {label} seconds"] = float(solved["seconds"])  # type: ignore[arg-type]
        figures[f"solve {label} nodes"] = float(solved["nodes"])  # type: ignore[arg-type]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    checkouts = {"old": options.old.resolve(), "new": options.new.resolve()}
    for checkout in checkouts.values():  # (compiles the kernels, unmeasured)
        agon(checkout, ["solve", "alak", "--size", "3", "--json", "-q"])
    rounds: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for number in range(options.rounds):
        for which, checkout in checkouts.items():
            print(f"round {number + 1}: {which}", file=sys.stderr, flush=True)
            rounds[which].append(measure(checkout))
    print(f"{'figure':<62} {'old':>14} {'new':>14} {'new/old':>8}")
    for name in rounds["old"][0]:
        old = statistics.median(r[name] for r in rounds["old"])
        new = statistics.median(r[name] for r in rounds["new"] if name in r)
        ratio = new / old if old else float("nan")
        print(f"{name:<62} {old:>14,.2f} {new:>14,.2f} {ratio:>8.3f}")


if __name__ == "__main__":
    main()
