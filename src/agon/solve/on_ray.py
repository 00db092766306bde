"""Every move of a position solved on a Ray cluster (``agon solve --ray``, ``agon tables
--ray``): the split and the arithmetic of :mod:`agon.solve.parallel`, with the moves' solves
as Ray tasks instead of local worker processes (the optional extra ``agon[ray]``).

``--ray-address local`` (the default) starts a cluster of this machine's own for the run
(``--jobs`` CPUs, by default all of them) and ends it after; any other address joins a running
one (``auto``: the cluster ``ray start --head`` started on this machine; ``HOST:6379``, or
``ray://HOST:10001`` through Ray Client), whose every node has Agon installed. A task whose
worker dies (killed, out of memory, its node lost) is run again by Ray, from the start of its
move (or its move's tables file, where it saved one), so a lost worker costs only its own task.
A stop (Ctrl-C, the time limit) reaches every task through a small actor that each task looks
at twice a second: each ends its chunk with its bounds, and its tables saved, as local workers
do.

With a tables file, each move's tables are kept beside it (``FILE-after-MOVE``), written by
whichever node solves that move: on a cluster of several hosts, give a path on a file system
they share.
"""

from __future__ import annotations

import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from typing import Any, Generic

from agon.core.errors import AgonError
from agon.core.workers import STOP_SIGNALS, Result, Tag, Unanswered, hear_stop

LOCAL = "local"
"""The address that starts a Ray cluster of this machine's own for one solve."""
LOOK_SECONDS = 0.5
"""How often a task asks whether it is to stop."""
RETRIES = 3
"""How many times Ray runs a task again whose worker died."""
WAIT_SLICE_SECONDS = 0.2
"""How long the driver waits for a result at a time (a stop is heard between waits)."""
CONNECT_SECONDS = 10.0
"""How long a cluster's address may take to answer a connection."""


def ray_module() -> Any:
    """Ray, imported; an AgonError saying how to install it where it is missing."""
    try:
        import ray
    except ImportError:
        raise AgonError("solving on Ray needs Ray: pip install 'agon[ray]'") from None
    return ray


class RayStop:
    """A stop asked of every task on the cluster: an actor holding one flag."""

    def __init__(self, ray: Any) -> None:
        self._actor = ray.remote(num_cpus=0)(_Flag).remote()
        self.answer_by: float | None = None
        """Once set: until when (``time.monotonic``) the tasks may answer."""

    def set(self, answer_seconds: float) -> None:
        self.answer_by = time.monotonic() + answer_seconds
        self._actor.set.remote()

    def is_set(self) -> bool:
        return self.answer_by is not None

    @property
    def flag(self) -> Any:
        return self._actor


class _Flag:
    """The actor behind :class:`RayStop`."""

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set


class RayResults(Generic[Tag, Result]):
    """Tasks sent to the cluster, each named by a tag, whose results are taken as they finish
    (:meth:`next`), as :class:`agon.core.workers.WorkerResults` takes a local pool's."""

    def __init__(self, ray: Any, stop: RayStop, prepare: Callable[[], None] | None) -> None:
        self._ray = ray
        self._stop = stop
        self._prepare = prepare
        self._remote = ray.remote(num_cpus=1, max_retries=RETRIES)(_run_on_ray)
        self._running: dict[Any, Tag] = {}

    @property
    def at_once(self) -> int:
        """The cluster's CPUs (one a task)."""
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def submit(self, tag: Tag, task: Callable[..., Result], *arguments: Any) -> None:
        reference = self._remote.remote(self._stop.flag, self._prepare, task, *arguments)
        self._running[reference] = tag

    def next(self) -> tuple[Tag, Result]:
        """The next task to finish: its tag and its result (a task's exception is raised). It
        waits for one; once the stop is set, only until the tasks' time to answer is up
        (:class:`~agon.core.workers.Unanswered`)."""
        while True:
            # (in slices: Ray's wait is C++'s, and Ctrl-C reaches Python only between them)
            patience = WAIT_SLICE_SECONDS
            if self._stop.answer_by is not None:
                patience = min(patience, self._stop.answer_by - time.monotonic())
                if patience <= 0:
                    raise Unanswered
            try:
                done, _ = self._ray.wait(list(self._running), num_returns=1, timeout=patience)
                if done:
                    tag = self._running.pop(done[0])
                    return tag, self._ray.get(done[0])
            except self._ray.exceptions.RayTaskError as error:
                raise error.as_instanceof_cause() from None  # (the task's own exception)
            except self._ray.exceptions.RayError as error:
                if self._stop.is_set():  # (the cluster is stopping too: what it held is lost)
                    raise Unanswered from None
                raise AgonError(f"a move's solve was lost on the Ray cluster: {error}") from None

    def cancel(self) -> None:
        """End the tasks still running (their results are not wanted)."""
        for reference in self._running:
            self._ray.cancel(reference, force=True)
        self._running.clear()


@contextmanager
def connected(address: str, cpus: int) -> Iterator[Any]:
    """Ray, joined to the cluster at ``address`` (:data:`LOCAL`: a cluster of this machine's
    own, ended after, with ``cpus`` CPUs, or all of them if ``cpus`` is 1) for the block; where
    this process has joined one already (a run of many solves), that one. What is printed to
    stdout while it joins, solves and leaves goes to stderr, on a cluster joined already too."""
    ray = ray_module()
    # Ray prints its cluster's messages (a worker's output or death, "(raylet) The autoscaler
    # failed …" when the cluster is stopped) to stdout, from a thread of its own, whenever they
    # come; stdout carries this program's report
    with redirect_stdout(sys.stderr):
        if ray.is_initialized():
            yield ray
            return
        options: dict[str, Any] = {
            "include_dashboard": False, "configure_logging": False, "log_to_driver": True,
        }
        if address != LOCAL:
            _check_reachable(address)
        handlers = _stop_handlers()
        try:
            if address == LOCAL:
                ray.init(num_cpus=cpus if cpus > 1 else None, **options)
            else:
                ray.init(address=address, **options)
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise AgonError(f"cannot reach the Ray cluster at {address}: {error}") from None
        finally:
            # Ray's own handlers abort the process on SIGTERM: a stop is this program's to
            # handle
            for stop_signal, handler in handlers.items():
                signal.signal(stop_signal, handler)
        try:
            yield ray
        finally:
            ray.shutdown()


def _stop_handlers() -> dict[int, Any]:
    """This program's handlers of the stop signals, where it can set them again (the main
    thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {
        stop: signal.getsignal(stop) for stop in STOP_SIGNALS if signal.getsignal(stop) is not None
    }


def _check_reachable(address: str) -> None:
    """An AgonError where ``address`` names a host and port that answer no connection within
    :data:`CONNECT_SECONDS` (Ray itself waits for such a cluster for many minutes)."""
    host_port = address.removeprefix("ray://")
    host, _, port = host_port.rpartition(":")
    if not host or not port.isdigit():
        return  # (``auto``, and the like: Ray answers those at once)
    try:
        socket.create_connection((host.strip("[]"), int(port)), CONNECT_SECONDS).close()
    except OSError as error:
        raise AgonError(
            f"cannot reach the Ray cluster at {address}: {error.strerror or error}"
        ) from None


@contextmanager
def ray_results(
    address: str, cpus: int, prepare: Callable[[], None] | None
) -> Iterator[tuple[RayResults[Any, Any], RayStop]]:
    """Tasks on the cluster at ``address`` (see :func:`connected`) for the block, with a stop
    for them; those left running when the block ends are cancelled."""
    with connected(address, cpus) as ray:
        stop = RayStop(ray)
        results: RayResults[Any, Any] = RayResults(ray, stop, prepare)
        try:
            yield results, stop
        finally:
            results.cancel()


def _run_on_ray(
    flag: Any, prepare: Callable[[], None] | None, task: Callable[..., Result], *arguments: Any
) -> Result:
    """A task on a Ray worker: ``task(*arguments)``, stopping (between its chunks) once the
    flag is set."""
    import ray

    hear_stop(False)  # (a worker runs task after task: an earlier solve's stop is not this one's)
    if prepare is not None:
        prepare()
    finished = threading.Event()

    def look() -> None:
        while not finished.wait(LOOK_SECONDS):
            try:
                if ray.get(flag.is_set.remote()):
                    hear_stop()
                    return
            except Exception:  # (the driver has gone: its tasks are of no use)
                hear_stop()
                return

    threading.Thread(target=look, name="stop-look", daemon=True).start()
    try:
        return task(*arguments)
    finally:
        finished.set()
