"""Commands that need no search start without loading the compiled kernels: neither Numba nor
NumPy is imported (start-up times: docs/side_by_side.py --startup, figures in
docs/changelog.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("numba", "llvmlite", "numpy", "agon.search.mcts", "agon.solve.solver")

RUN_AND_LIST_MODULES = """
import json, sys
from agon.cli import main
sys.argv = ["agon", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def modules_loaded_by(arguments: list[str]) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST_MODULES, json.dumps(arguments)],
        capture_output=True, text=True, timeout=120,
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "arguments",
    [
        [],
        ["--help"],
        ["state", "alak", "--size", "5", "--moves", "3 2"],
        ["rules", "alternator", "--plain"],
        ["solve", "--help"],
        ["bench", "--help"],
        ["play", "--help"],
        ["analyse", "--help"],
        ["analyse", "alak", "--limit", "fast"],  # (refused before anything is analysed)
        ["state", "alak", "--size", "0"],  # (an error: no kernel to explain it either)
    ],
    ids=lambda arguments: " ".join(arguments) or "(none)",
)
def test_commands_without_search_load_no_kernels(arguments: list[str]) -> None:
    assert not modules_loaded_by(arguments) & set(HEAVY)


def test_a_command_that_searches_loads_them() -> None:
    """(So that the test above can fail: the list of modules is read.)"""
    loaded = modules_loaded_by(["solve", "alternator", "--size", "3x3", "-q"])
    assert {"numba", "agon.solve.solver"} <= loaded
