"""Worker processes for long work spread over cores (matches, tables)."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import multiprocessing
import multiprocessing.pool
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from functools import partial
from queue import SimpleQueue
from typing import Any, Generic, TypeVar

from agon.core.errors import AgonError

Tag = TypeVar("Tag")
Result = TypeVar("Result")


_CONTEXT = multiprocessing.get_context("spawn")
_stop: Any = None
"""In a worker: the parent's :func:`stop_signal`, if it gave one."""


def worker_pool(
    processes: int, prepare: Callable[[], None] | None = None, stop: Any = None
) -> multiprocessing.pool.Pool:
    """A pool of freshly started (spawned, so no locks or compiled state are inherited)
    processes that leave Ctrl-C to the parent: the parent stops them (``terminate``, as
    leaving the pool's ``with`` block does) and keeps what they finished, or, given a
    :func:`stop_signal` as ``stop``, sets it to ask their tasks to end (they read it with
    :func:`stop_asked`). Each worker runs ``prepare`` first (a module-level function: it is
    sent by name)."""
    try:
        return _CONTEXT.Pool(
            processes, initializer=partial(_start_worker, prepare, stop, os.getpid())
        )
    except OSError as error:
        raise _cannot_start(processes, error) from None


def stop_signal() -> Any:
    """An event (``multiprocessing.Event``) for :func:`worker_pool`'s ``stop``."""
    try:
        return _CONTEXT.Event()
    except OSError as error:
        raise _cannot_start(1, error) from None


def _cannot_start(processes: int, error: OSError) -> AgonError:
    """Why worker processes could not be started, in one line (too many open files: the
    limit of ``ulimit -n``; too many processes; no memory)."""
    what = f"{processes} worker process{'es' if processes != 1 else ''}"
    too_many = error.errno == errno.EMFILE
    hint = " (the limit of open files, `ulimit -n`, is too low)" if too_many else ""
    return AgonError(f"cannot start {what}: {error.strerror or error}{hint}")


def stop_and_wait(stop: Any, wait: Callable[[], None]) -> None:
    """After Ctrl-C in the parent: set ``stop`` to ask the workers' tasks to end, then
    ``wait`` for what they return; a second Ctrl-C ends the wait (leaving the pool's ``with``
    block then stops the workers at once)."""
    stop.set()
    with suppress(KeyboardInterrupt):
        wait()


def stop_asked() -> bool:
    """In a worker: whether the parent has set its pool's stop signal (never, without one)."""
    return _stop is not None and bool(_stop.is_set())


def _start_worker(prepare: Callable[[], None] | None, stop: Any, parent: int) -> None:
    global _stop
    _stop = stop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)
    if prepare is not None:
        prepare()


_PR_SET_PDEATHSIG = 1
PARENT_WATCH_SECONDS = 1.0
"""Where the system cannot signal a parent's death, how often a worker looks for its parent."""


def die_with_parent(parent: int) -> None:
    """In a worker process: end when ``parent``, the process that started it (its id as the
    parent saw it), ends, however that ends (SIGKILL included, which leaves it no time to stop
    its workers): on Linux the kernel sends SIGKILL at the parent's death; elsewhere a thread
    looks for the parent every second. A parent already gone ends the worker at once."""
    if os.getppid() != parent:
        os._exit(1)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
            if os.getppid() != parent:  # (the parent died before the request was made)
                os._exit(1)
            return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


class WorkerResults(Generic[Tag, Result]):
    """Tasks sent to a worker pool, each named by a tag, whose results are taken as they
    finish (:meth:`next`); an exception a task raised is raised there."""

    def __init__(self, pool: multiprocessing.pool.Pool) -> None:
        self._pool = pool
        self._finished: SimpleQueue[tuple[Tag, Result | BaseException]] = SimpleQueue()

    def submit(self, tag: Tag, task: Callable[..., Result], *arguments: Any) -> None:
        done = partial(self._finish, tag)
        self._pool.apply_async(task, arguments, callback=done, error_callback=done)

    def next(self) -> tuple[Tag, Result]:
        """The next task to finish: its tag and its result (waits for one)."""
        tag, outcome = self._finished.get()
        if isinstance(outcome, BaseException):
            raise outcome
        return tag, outcome

    def _finish(self, tag: Tag, outcome: Result | BaseException) -> None:
        self._finished.put((tag, outcome))
