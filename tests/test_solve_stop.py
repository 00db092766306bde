"""`agon solve` stopped by a signal at any moment: it ends soon, with no traceback, saying what
it had proven, with the status of an interrupted command (130).

Each solve runs as a real program in a session of its own, and the signal goes to its whole
process group, as Ctrl-C in a terminal and `timeout` send it. The deadlines are generous (a
loaded machine, kernels compiled afresh after an edit): they only tell a program that ended
from one that waits for ever; no test measures a speed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from background import living_processes

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="finds the solve's processes in /proc"
)

ENDED_WITHIN = 60.0
"""Seconds a stopped solve may take to end: before the fix, it waited for minutes, or for ever."""
STARTED_WITHIN = 600.0
"""Seconds a solve may take to show it is under way (compiling its kernels on a loaded
machine takes minutes)."""
INTERRUPTED = 130

# Alak on 9 points after these moves: the solve after 1 is settled in a moment (-5), those
# after the other moves take minutes, so a solve of every move is stopped with one move known
FOUR_MOVES = "5 4 6 3"
QUICK_MOVES = ("1", "2")
"""The first two moves the two workers take: a progress line of any other says one is settled."""
SMALL_TABLE = ["--table-bits", "14"]


def hears_stops() -> None:
    """In the child: Ctrl-C, SIGTERM and SIGHUP with their default effect, whatever the test
    run's own (a program started in the background of a shell ignores Ctrl-C)."""
    for stop in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop, signal.SIG_DFL)


class Solve:
    """``agon solve`` run in a session of its own, its progress read as it comes."""

    def __init__(self, *arguments: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from agon.console import main; main()", "solve", *arguments],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True, preexec_fn=hears_stops, env=env,
        )
        self._lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self._changed:
                self._lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._lines.append("")  # (the end)
            self._changed.notify_all()

    @property
    def err(self) -> str:
        with self._changed:
            return "".join(self._lines)

    def wait_for_line(self, wanted: Callable[[str], bool]) -> str:
        """The first line of progress ``wanted`` accepts (it fails if the solve ends first)."""
        end = time.monotonic() + STARTED_WITHIN
        seen = 0
        with self._changed:
            while True:
                for line in self._lines[seen:]:
                    assert line, f"the solve ended early:\n{''.join(self._lines)}"
                    if wanted(line):
                        return line
                seen = len(self._lines)
                left = end - time.monotonic()
                assert left > 0, f"no such line in {STARTED_WITHIN:g} s:\n{''.join(self._lines)}"
                self._changed.wait(left)

    def wait_until(self, happened: Callable[[], bool], what: str, poll: float = 0.01) -> None:
        """Return once ``happened()``, the solve still running (within :data:`STARTED_WITHIN`)."""
        end = time.monotonic() + STARTED_WITHIN
        while not happened():
            assert self.process.poll() is None, self.err
            assert time.monotonic() < end, f"{what} in {STARTED_WITHIN:g} s"
            time.sleep(poll)

    def signal_group(self, stop: signal.Signals) -> None:
        """Send ``stop`` to the solve's whole process group (if it has not ended)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, stop)

    def ended(self) -> tuple[int, str, str]:
        """Its status, stdout and stderr once it has ended (within :data:`ENDED_WITHIN`)."""
        try:
            status = self.process.wait(timeout=ENDED_WITHIN)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            pytest.fail(f"still running {ENDED_WITHIN:g} s after the signal:\n{self.err}")
        self._reader.join(ENDED_WITHIN)
        assert self.process.stdout is not None
        return status, self.process.stdout.read(), self.err

    def workers(self) -> list[int]:
        """The worker processes it has started so far (not Python's resource tracker)."""
        return [
            pid for pid, command in _group_processes(self.process.pid).items()
            if "multiprocessing-fork" in command
        ]


def _group_processes(group: int) -> dict[int, str]:
    """The living (not zombie) processes of a process group, by id, with their command line."""
    return {
        pid: command
        for pid, (_, process_group, command) in living_processes().items()
        if process_group == group
    }


def assert_nothing_left(solve: Solve) -> None:
    """No process of the solve's group is left running (its workers were stopped)."""
    end = time.monotonic() + ENDED_WITHIN
    while (left := _group_processes(solve.process.pid)) and time.monotonic() < end:
        time.sleep(0.1)
    assert not left, f"left running: {left}"


def assert_ended_interrupted(solve: Solve) -> tuple[str, str]:
    status, out, err = solve.ended()
    assert status == INTERRUPTED, err
    assert "Traceback" not in err, err
    assert "interrupted" in err, err
    assert_nothing_left(solve)
    return out, err


def move_label(line: str) -> str | None:
    """The move whose solve a worker's progress line is about (``after MOVE: …``)."""
    found = re.match(r"after (\S+): .*nodes in", line)
    return found.group(1) if found else None


def assert_reports_a_settled_move(report: dict[str, Any]) -> None:
    """The JSON report of a solve of every move stopped after one of :data:`QUICK_MOVES` was
    settled: that move's value, and so a bound on the position's."""
    assert report["stopped"] == "interrupted"
    bounds = report.get("move_bounds", {})
    assert any(
        move in bounds and bounds[move][0] == bounds[move][1] for move in QUICK_MOVES
    ), report
    assert report["lower"] is not None, report  # (Black moves: at least the best move's value)
    assert report["nodes"] > 0


def assert_stopped_before_any_proof(solve: Solve, stop: signal.Signals) -> None:
    solve.signal_group(stop)
    out, _ = assert_ended_interrupted(solve)
    assert json.loads(out)["stopped"] == "interrupted"


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_while_the_solver_loads(jobs: str) -> None:
    """The stop comes once the program has loaded LLVM's library, in the middle of loading the
    solver's modules (Numba)."""
    solve = Solve("alak", "--size", "9", "--openings", "--jobs", jobs, *SMALL_TABLE)
    maps = Path(f"/proc/{solve.process.pid}/maps")
    solve.wait_until(lambda: "libllvmlite" in maps.read_text(), "LLVM's library not loaded",
                     poll=0.005)
    solve.signal_group(signal.SIGINT)
    assert_ended_interrupted(solve)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("jobs", "stop"), [("1", signal.SIGINT), ("2", signal.SIGTERM)], ids=["1-SIGINT", "2-SIGTERM"]
)
def test_a_stop_while_the_kernels_compile(
    jobs: str, stop: signal.Signals, tmp_path: Path
) -> None:
    """With a cache of compiled kernels of its own, empty, the solve compiles them: the stop
    comes once the first is saved there, while the others compile."""
    cache = tmp_path / "kernels"
    solve = Solve(
        "alak", "--size", "9", "--openings", "--jobs", jobs, *SMALL_TABLE, "--json",
        env={**os.environ, "NUMBA_CACHE_DIR": str(cache)},
    )
    solve.wait_until(lambda: any(cache.rglob("*.nbi")), "no kernel compiled", poll=0.05)
    assert_stopped_before_any_proof(solve, stop)


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_while_the_workers_start(stop: signal.Signals) -> None:
    """The stop comes as soon as a worker process exists: it is still loading (before the fix,
    Ctrl-C ended it with a traceback; SIGTERM killed it, and the solve waited for it for
    ever)."""
    solve = Solve("alak", "--size", "9", "--openings", "--jobs", "2", *SMALL_TABLE, "--json")
    solve.wait_until(lambda: bool(solve.workers()), "no worker started")
    assert_stopped_before_any_proof(solve, stop)


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_of_a_parallel_solve_keeps_the_settled_moves(stop: signal.Signals) -> None:
    """``timeout … agon solve --openings --jobs 2``: the stop reaches the workers too (before
    the fix, SIGTERM killed them and the solve waited for their results for ever)."""
    solve = Solve(
        "alak", "--size", "9", "--moves", FOUR_MOVES, "--openings", "--jobs", "2",
        *SMALL_TABLE, "--json",
    )
    solve.wait_for_line(lambda line: move_label(line) not in (None, *QUICK_MOVES))
    solve.signal_group(stop)
    out, err = assert_ended_interrupted(solve)
    assert "stopping: each move's solve ends its chunk" in err
    assert_reports_a_settled_move(json.loads(out))


@pytest.mark.slow
@pytest.mark.parametrize("again_after", [0.0, 1.0], ids=["at-once", "a-second-later"])
def test_a_second_signal_keeps_the_report(again_after: float) -> None:
    """At once, as ``timeout`` signals the program and then its group: one stop; later, one
    that ends the wait for the workers' answers, if it is still going on."""
    solve = Solve(
        "alak", "--size", "9", "--moves", FOUR_MOVES, "--openings", "--jobs", "2",
        *SMALL_TABLE, "--json",
    )
    solve.wait_for_line(lambda line: move_label(line) not in (None, *QUICK_MOVES))
    solve.signal_group(signal.SIGTERM)
    solve.wait_for_line(lambda line: line.startswith("stopping:"))
    time.sleep(again_after)
    solve.signal_group(signal.SIGTERM)
    out, _ = assert_ended_interrupted(solve)
    assert_reports_a_settled_move(json.loads(out))


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_in_the_middle_of_a_solve_reports_its_work(jobs: str) -> None:
    solve = Solve("alak", "--size", "9", "--openings", "--jobs", jobs, *SMALL_TABLE, "--json")
    solve.wait_for_line(lambda line: "nodes in" in line)
    solve.signal_group(signal.SIGINT)
    out, err = assert_ended_interrupted(solve)
    report = json.loads(out)
    assert report["stopped"] == "interrupted"
    assert f"after {report['nodes']:,} nodes" in err
    if jobs == "1":  # (a worker still searching after a moment is killed, its nodes untold)
        assert report["nodes"] > 0
