"""Two checkouts of Agon measured side by side, in turns, on one machine.

    .venv/bin/python docs/side_by_side.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 3]

Runs ``agon bench --json``, timed solves and timed start-ups (the wall time of whole commands
that do little: ``agon --help``, ``state``, ``rules``, a tiny solve) in each checkout,
alternating (old, new, old, new, ...) so that a busy, shared machine slows both alike, and
prints each figure's median in both and their ratio (new / old). Each checkout runs its own
sources (``PYTHONPATH`` points at its ``src``), with this venv's packages; its Numba cache is
warmed by a first, unmeasured round. Solves are timed by their own ``seconds`` (after ``agon
solve`` has loaded its kernels) and give their node counts, which must be equal where the
search is the same.
``--startup`` measures the start-ups alone (a minute, not a quarter of an hour).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

SOLVES = (
    ("alternator 4x4", ["alternator", "--size", "4x4"]),
    ("alak 8 baljeu", ["alak", "--size", "8"]),
)
BENCH = ["bench", "--json", "--seconds", "2"]
STARTUPS = (
    ("agon --help", ["--help"]),
    ("agon state", ["state", "alak", "--size", "5", "--moves", "3 2"]),
    ("agon rules", ["rules", "alternator", "--plain"]),
    ("agon solve 3x3", ["solve", "alternator", "--size", "3x3", "-q"]),
)
STARTUP_REPEATS = 5
"""Each start-up is run this many times a round, its quickest time kept (the machine's noise
only ever adds)."""


def run_agon(checkout: Path, arguments: list[str]) -> str:
    """``agon ARGUMENTS`` run on a checkout's sources; what it printed."""
    command = [sys.executable, "-c", "from agon.cli import main; main()", *arguments]
    env = {"PYTHONPATH": str(checkout / "src"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        command, cwd=checkout, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def agon(checkout: Path, arguments: list[str]) -> dict[str, object]:
    """``agon ARGUMENTS`` run on a checkout's sources; its JSON answer."""
    answer: dict[str, object] = json.loads(run_agon(checkout, arguments))
    return answer


def startups(checkout: Path) -> dict[str, float]:
    """The quickest wall time of each of :data:`STARTUPS` in one checkout."""
    figures: dict[str, float] = {}
    for label, arguments in STARTUPS:
        times = []
        for _ in range(STARTUP_REPEATS):
            start = time.perf_counter()
            run_agon(checkout, arguments)
            times.append(time.perf_counter() - start)
        figures[f"start-up {label} seconds"] = min(times)
    return figures


def measure(checkout: Path, startup_only: bool) -> dict[str, float]:
    """One round of every figure in one checkout."""
    figures = startups(checkout)
    if startup_only:
        return figures
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
    parser.add_argument("--startup", action="store_true", help="Time the start-ups alone.")
    options = parser.parse_args()
    checkouts = {"old": options.old.resolve(), "new": options.new.resolve()}
    for checkout in checkouts.values():  # (compiles the kernels, unmeasured)
        agon(checkout, ["solve", "alak", "--size", "3", "--json", "-q"])
    rounds: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for number in range(options.rounds):
        for which, checkout in checkouts.items():
            print(f"round {number + 1}: {which}", file=sys.stderr, flush=True)
            rounds[which].append(measure(checkout, options.startup))
    print(f"{'figure':<62} {'old':>14} {'new':>14} {'new/old':>8}")
    for name in rounds["old"][0]:
        old = statistics.median(r[name] for r in rounds["old"])
        new = statistics.median(r[name] for r in rounds["new"] if name in r)
        ratio = new / old if old else float("nan")
        print(f"{name:<62} {old:>14,.3f} {new:>14,.3f} {ratio:>8.3f}")


if __name__ == "__main__":
    main()
