"""Every move solved on a Ray cluster (agon solve --ray, agon tables --ray) against one solver:
on a local cluster of two workers, one of them killed mid-solve."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agon.cli import app
from agon.core.game import Game
from agon.core.limits import Limit
from agon.games.alak import Alak
from agon.games.alak.rules import AlakRules
from agon.games.alternator import Alternator
from agon.solve import on_ray, parallel
from agon.solve.session import SolveReport, SolveRequest, run, solve_here
from agon.solve.solution import SolveInterrupted
from agon.solve.solver import Solver

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]  # (one cluster, ~10 s to start)

runner = CliRunner()
DEADLINE = 120.0
"""Seconds a test waits for what must happen (the machine may be busy)."""


def start_cluster(ray: Any, environment: dict[str, str] | None = None) -> None:
    """A local Ray cluster of two workers, which can import this module (its slow solves are
    sent by name), with ``environment`` in its workers' environment."""
    here = {"PYTHONPATH": str(Path(__file__).parent)}
    ray.init(
        num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False,
        runtime_env={"env_vars": {**here, **(environment or {})}},
    )


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """:func:`start_cluster` for the module (it takes seconds to start)."""
    ray = on_ray.ray_module()
    start_cluster(ray)
    yield ray
    ray.shutdown()


def test_what_ray_prints_while_joined_already_goes_to_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a cluster this process joined already (a run of many solves), Ray's messages during
    a solve (a worker's death, printed from a thread of Ray's own) stay off stdout, which
    carries the report: one such message once made `--json` unreadable."""

    class Joined:
        @staticmethod
        def is_initialized() -> bool:
            return True

    monkeypatch.setattr(on_ray, "ray_module", lambda: Joined)
    with on_ray.connected(on_ray.LOCAL, 2):
        print("(raylet) A worker died or was killed while executing a task")
    printed = capsys.readouterr()
    assert printed.out == "" and "(raylet)" in printed.err


@pytest.mark.parametrize(
    ("game", "moves"),
    [
        (Alak(6, AlakRules.TRADITIONAL), ""),
        (Alak(5, AlakRules.TROMP_TAYLOR), "3"),  # White to move: the least Black is held to
        (Alternator(2, 3), ""),
        (Alternator(3, 3), ""),
    ],
)
def test_moves_solved_on_ray_agree_with_one_solver(cluster: Any, game: Game, moves: str) -> None:
    state = game.new_state()
    state.play_all(game.parse_moves(moves))
    alone = Solver(game, 16).solve(state, openings=True)
    request = SolveRequest(game, state, openings=True, table_bits=14, cluster=on_ray.LOCAL)
    report = run(request)
    assert report.solution is not None
    assert report.solution.value == alone.value
    assert set(report.solution.best_moves) == set(alone.best_moves)
    assert report.solution.move_values == alone.move_values


def slow_solve(request: SolveRequest, progress: Any) -> SolveReport:
    """A move's solve that first says where it runs (a file named by its process id in
    ``$AGON_RAY_TEST_PIDS``) and waits two seconds, so that its worker can be killed in it."""
    folder = Path(os.environ["AGON_RAY_TEST_PIDS"])
    (folder / str(os.getpid())).touch()
    time.sleep(2.0)
    return solve_here(request, progress)


def test_a_killed_worker_costs_only_its_task(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker killed (SIGKILL) in the middle of its move's solve: Ray runs the task again,
    and the solve's value and every move's value are still the single solver's."""
    game = Alak(6, AlakRules.TRADITIONAL)
    state = game.new_state()
    alone = Solver(game, 16).solve(state, openings=True)
    pids = tmp_path / "pids"
    pids.mkdir()
    monkeypatch.setenv("AGON_RAY_TEST_PIDS", str(pids))
    cluster.shutdown()  # (again, with the folder in its workers' environment)
    start_cluster(cluster, {"AGON_RAY_TEST_PIDS": str(pids)})
    request = SolveRequest(game, state, openings=True, table_bits=14, cluster=on_ray.LOCAL)
    found: list[Any] = []
    solving = threading.Thread(
        target=lambda: found.append(parallel.solve_moves_apart(request, slow_solve)), daemon=True
    )
    solving.start()
    deadline = time.monotonic() + DEADLINE
    while not any(pids.iterdir()):
        assert time.monotonic() < deadline, "no move's solve started"
        time.sleep(0.05)
    victim = int(next(pids.iterdir()).name)
    os.kill(victim, signal.SIGKILL)
    solving.join(DEADLINE * 2)
    assert found, "the solve did not end"
    solution = found[0]
    assert solution.value == alone.value
    assert solution.move_values == alone.move_values


def test_an_opening_too_large_for_its_budget_is_split_on_ray(cluster: Any) -> None:
    """Two classes of moves for the cluster's two CPUs: the first to spend its budget leaves a
    CPU idle, so its position is split, and the replies' solves run on the cluster."""
    game = Alak(6, AlakRules.TRADITIONAL)
    state = game.new_state()
    state.play_all(game.parse_moves("6 4 2 3"))  # (two classes of moves: tests/test_parallel.py)
    alone = Solver(game, 16).solve(state, openings=True)
    said: list[str] = []
    request = SolveRequest(
        game, state, openings=True, table_bits=14, cluster=on_ray.LOCAL,
        split_after=Limit(count=50),
    )
    report = run(request, said.append)
    assert report.solution is not None
    assert report.solution.move_values == alone.move_values
    assert any("replies are solved apart" in line for line in said)


def test_moves_out_of_time_on_ray_bound_the_value(cluster: Any) -> None:
    game = Alternator(3, 3)
    state = game.new_state()
    alone = Solver(game, 16).solve(state, openings=True)
    request = SolveRequest(
        game, state, openings=True, table_bits=14, cluster=on_ray.LOCAL,
        limit=Limit(seconds=1e-3),
    )
    with pytest.raises(SolveInterrupted) as stopped:
        parallel.solve_moves_apart(replace(request, limit=request.limit.from_now()), solve_here)
    assert stopped.value.lower <= alone.value <= stopped.value.upper


def test_agon_solve_with_ray_gives_the_value_of_one_solve(cluster: Any) -> None:
    options = ["alak", "--size", "6", "--rules", "traditional"]
    one = runner.invoke(app, ["solve", *options, "--json", "--quiet"])
    on_cluster = runner.invoke(app, ["solve", *options, "--ray", "--json", "--quiet"])
    assert one.exit_code == 0 and on_cluster.exit_code == 0, on_cluster.output
    first, second = json.loads(one.stdout), json.loads(on_cluster.stdout)
    assert first["value"] == second["value"] and first["best_moves"] == second["best_moves"]


def test_agon_solve_with_ray_missing_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # (import ray raises ImportError)
    answer = runner.invoke(app, ["solve", "alak", "--size", "5", "--ray"])
    assert answer.exit_code != 0
    assert "pip install 'agon[ray]'" in answer.output and "Traceback" not in answer.output


def test_agon_solve_with_an_unreachable_cluster_says_so(cluster: Any) -> None:
    cluster.shutdown()  # (a process joined to a cluster solves on it, whatever address)
    try:
        for address in ("127.0.0.1:1", "ray://127.0.0.1:1"):
            answer = runner.invoke(
                app, ["solve", "alak", "--size", "5", "--ray", "--ray-address", address]
            )
            assert answer.exit_code != 0
            assert f"cannot reach the Ray cluster at {address}" in answer.output
            assert "Traceback" not in answer.output
    finally:
        start_cluster(cluster)


def test_what_ray_prints_while_joined_leaves_the_report_on_stdout_alone(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ray prints its cluster's messages to stdout from a thread of its own, whenever they come
    (``(raylet) The autoscaler failed …`` as the cluster stops): they went into ``agon solve
    --ray --json``'s report. Ray's own printing, without starting a cluster."""
    from ray._private.worker import print_to_stdstream

    ray = on_ray.ray_module()
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **options: None)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    message = {"lines": ["The autoscaler failed"], "pid": "raylet", "is_err": False}
    with on_ray.connected(on_ray.LOCAL, 2):
        printing = threading.Thread(target=print_to_stdstream, args=(message, False))
        printing.start()
        printing.join()
    print("{}")
    out, err = capsys.readouterr()
    assert out == "{}\n"
    assert "The autoscaler failed" in err


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_of_a_solve_on_ray_keeps_the_settled_moves(stop: signal.Signals) -> None:
    """Ctrl-C (or ``timeout``'s SIGTERM) to the whole process group of ``agon solve --ray``:
    each task ends its chunk with its bounds, the settled moves are reported, and the cluster
    it started is gone."""
    from test_solve_stop import (
        FOUR_MOVES,
        QUICK_MOVES,
        SMALL_TABLE,
        Solve,
        assert_ended_interrupted,
        assert_reports_a_settled_move,
    )

    solve = Solve(
        "alak", "--size", "9", "--moves", FOUR_MOVES, "--openings", "--ray", "--jobs", "2",
        *SMALL_TABLE, "--json",
    )

    def searching_beyond_the_quick_moves(line: str) -> bool:
        found = re.search(r"after (\S+): .*nodes in", line)
        return found is not None and found.group(1) not in QUICK_MOVES

    solve.wait_for_line(searching_beyond_the_quick_moves)
    solve.signal_group(stop)
    out, err = assert_ended_interrupted(solve)
    assert "stopping: each move's solve ends its chunk" in err
    assert_reports_a_settled_move(json.loads(out))


def test_agon_tables_on_ray_gives_the_results_of_one_solver(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agon.solve.tables import runner as tables_runner
    from test_tables import ENOUGH_SECONDS, _jobs, _values

    monkeypatch.setattr(tables_runner, "jobs", _jobs)
    alone, on_cluster = tmp_path / "alone.md", tmp_path / "ray.md"
    tables_runner.generate_tables(alone, ENOUGH_SECONDS, fresh=False, progress=None)
    tables_runner.generate_tables(
        on_cluster, ENOUGH_SECONDS, fresh=False, progress=None, cluster=on_ray.LOCAL
    )
    assert len(_values(on_cluster)) == 4
    assert _values(on_cluster) == _values(alone)
    # the moves solved at once are the cluster's CPUs (no --jobs given)
    assert " (each move solved apart, 2 at once) |" in on_cluster.read_text()
