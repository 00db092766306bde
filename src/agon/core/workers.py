"""Worker processes for long work spread over cores (matches, tables)."""

from __future__ import annotations

import multiprocessing
import multiprocessing.pool
import signal
from collections.abc import Callable
from functools import partial


def worker_pool(
    processes: int, prepare: Callable[[], None] | None = None
) -> multiprocessing.pool.Pool:
    """A pool of freshly started (spawned, so no locks or compiled state are inherited)
    processes that leave Ctrl-C to the parent: the parent stops them (``terminate``, as
    leaving the pool's ``with`` block does) and keeps what they finished. Each worker runs
    ``prepare`` first (a module-level function: it is sent by name)."""
    context = multiprocessing.get_context("spawn")
    return context.Pool(processes, initializer=partial(_start_worker, prepare))


def _start_worker(prepare: Callable[[], None] | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if prepare is not None:
        prepare()
