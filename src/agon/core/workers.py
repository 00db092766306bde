"""Worker processes for long work spread over cores (matches, tables)."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import multiprocessing
import multiprocessing.context
import multiprocessing.pool
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from functools import cache, partial
from queue import Empty, SimpleQueue
from types import FrameType
from typing import Any, Generic, Protocol, TypeVar

from agon.core.errors import AgonError

Tag = TypeVar("Tag")
Result = TypeVar("Result")


_CONTEXT = multiprocessing.get_context("spawn")

STOP_ANSWER_SECONDS = 2.0
"""After a stop is asked, how long the parent waits, by default, for the tasks still searching
to answer (a search looks at the end of each chunk, about a second): those that have not by
then are killed, and what they found is lost."""
WINDING_UP_POLL_SECONDS = 0.2
"""How often the parent looks again whether tasks winding up (saving their tables) remain."""
HEARD_STOP_POLL_SECONDS = 0.5
"""How often a parent waiting for its workers' results looks whether a stop was heard whose
interrupt was lost (in a callback from C, while it compiled a kernel)."""

STOP_SIGNALS = (
    signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
)
"""The signals that stop a program, which a worker ignores: Ctrl-C, ``timeout`` and a closed
terminal signal the whole
process group, and the parent stops its workers itself, keeping what they found (a worker
killed by one lost its task's result, and the parent waited for it for ever)."""


class StopSignal:
    """What a parent sets to ask its workers' tasks to end (:func:`stop_and_wait`; they read it
    with :func:`stop_asked`), and the count of tasks that have answered: seen it, or ended
    their search, and only keep what they found before they return (:func:`winding_up`)."""

    def __init__(self) -> None:
        self._asked = _CONTEXT.Event()
        self._answers = _CONTEXT.Value("q", 0)
        self.answer_by: float | None = None
        """In the parent, once it is set: until when (``time.monotonic``) the tasks still
        searching may answer."""

    def set(self, answer_seconds: float = STOP_ANSWER_SECONDS) -> None:
        self.answer_by = time.monotonic() + answer_seconds
        self._asked.set()

    def is_set(self) -> bool:
        return bool(self._asked.is_set())

    def answers(self) -> int:
        return int(self._answers.value)

    def count_answer(self) -> None:
        with self._answers.get_lock():
            self._answers.value += 1


class _Worker(multiprocessing.context.SpawnProcess):
    """A worker process, which ignores SIGTERM (:data:`STOP_SIGNALS`): its pool ends it
    with SIGKILL, which also ends it in the middle of a compiled search."""

    def terminate(self) -> None:
        self.kill()


class _WorkerPool(multiprocessing.pool.Pool):
    """A pool of :class:`_Worker` processes, with the stop signal its tasks read, if any."""

    stop: StopSignal | None = None

    @staticmethod
    def Process(ctx: Any, *args: Any, **kwds: Any) -> Any:  # (the name the pool calls)
        return _Worker(*args, **kwds)


_stop: StopSignal | None = None
"""In a worker: the parent's :func:`stop_signal`, if it gave one."""
_winding_up: bool | None = None
"""In a worker, while a task runs: whether it has answered :data:`_stop`
(:func:`winding_up`); None between tasks (while the worker starts: nothing to stop)."""
_stop_heard = False
"""In the program itself: a stop signal was heard (:func:`hear_stop`)."""


def hear_stop(heard: bool = True) -> None:
    """Note that a stop signal was heard (or, ``heard`` False, forget it), so that
    :func:`stop_asked` says so between a search's chunks: the ``KeyboardInterrupt`` a stop
    raises is lost where it lands in a callback from C (Numba calls one as it unboxes a kernel
    passed as an argument, and its compiler one as it caches a kernel, where no
    :func:`held_while_compiling` holds the stop), and the search would go on."""
    global _stop_heard
    _stop_heard = heard


def raise_stop_heard() -> None:
    """Raise, as a ``KeyboardInterrupt``, a stop signal heard (:func:`hear_stop`) whose own
    interrupt was lost in a callback from C: long work that is not split into a search's
    chunks (games played one after another) calls it between its pieces."""
    if _stop_heard:
        raise KeyboardInterrupt


SignalHandler = Callable[[int, FrameType | None], Any]

_held_stop: Callable[[], Any] | None = None
"""A stop signal's handler held until this program's compile ends (:func:`held_while_compiling`)."""
_HOLDING_NOTE = (
    b"stopping once the kernel being compiled is built (a compile cut short leaves it broken)"
    b" ...\n"
)


def held_while_compiling(handler: SignalHandler) -> SignalHandler:
    """``handler``, for a stop signal, held while the main thread is inside Numba's compiler and
    called as it comes out: a ``KeyboardInterrupt`` landing in a compile leaves the kernel
    half-built (the compile then fails on an object code that never came, or the program crashes
    as it ends, freeing it). A compile takes seconds (the largest kernels, about 10 s on a quiet
    core), so the wait is said on stderr."""

    def heard(signum: int, frame: FrameType | None) -> Any:
        global _held_stop
        if _compiling_here():
            _held_stop = partial(handler, signum, None)
            _answer_held_stop_as_compiles_end()
            with suppress(OSError):
                os.write(2, _HOLDING_NOTE)  # (not sys.stderr: the code stopped may be writing it)
            return None
        _held_stop = None
        return handler(signum, frame)

    return heard


def _compiling_here() -> bool:
    """Whether this thread holds Numba's compiler lock (a compile, or a load from its cache, is
    under way in it); never before Numba is loaded."""
    compiler_lock = sys.modules.get("numba.core.compiler_lock")
    return compiler_lock is not None and bool(compiler_lock.global_compiler_lock.is_locked())


@cache
def _answer_held_stop_as_compiles_end() -> None:
    """Have Numba tell this module each time its compiler lock is let go (once per program)."""
    from numba.core import event

    class CompileEnds(event.Listener):
        def on_start(self, event: Any) -> None:
            pass

        def on_end(self, event: Any) -> None:
            global _held_stop
            in_main = threading.current_thread() is threading.main_thread()
            if _held_stop is None or not in_main or _compiling_here():
                return
            answer, _held_stop = _held_stop, None
            answer()

    event.register("numba:compiler_lock", CompileEnds())  # type: ignore[no-untyped-call]


def worker_pool(
    processes: int, prepare: Callable[[], None] | None = None, stop: StopSignal | None = None
) -> multiprocessing.pool.Pool:
    """A pool of freshly started (spawned, so no locks or compiled state are inherited)
    processes that leave Ctrl-C, SIGTERM and SIGHUP to the parent: the parent kills them
    (``terminate``, as leaving the pool's ``with`` block does) and keeps what they finished,
    or, given a :func:`stop_signal` as ``stop``, first asks their tasks to end
    (:func:`stop_and_wait`). Each worker runs ``prepare`` first (a module-level function: it
    is sent by name)."""
    made: list[_WorkerPool | BaseException] = []
    done = threading.Event()  # (not Thread.join: Ctrl-C during it can mark the thread ended)

    def make() -> None:
        # in a thread of its own, with the stop signals blocked: each worker is born with them
        # blocked (before it ignores them, it imports for seconds, where Ctrl-C would end it
        # with a traceback), and no handler raises in the middle of starting one (which left it
        # reading half its start-up data: any thread of this process may take the signal, and
        # Python's handlers then raise in the main thread)
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            made.append(_WorkerPool(
                processes, initializer=partial(_start_worker, prepare, stop, os.getpid()),
                context=_CONTEXT,
            ))
        except BaseException as error:
            made.append(error)
        finally:
            done.set()

    threading.Thread(target=make, name="worker-start").start()
    try:
        done.wait()
    except KeyboardInterrupt:
        _started_whole(done, made)
        raise
    [pool] = made
    if isinstance(pool, OSError):
        raise _cannot_start(processes, pool) from None
    if isinstance(pool, BaseException):
        raise pool
    pool.stop = stop
    return pool


def _started_whole(done: threading.Event, made: list[_WorkerPool | BaseException]) -> None:
    """After Ctrl-C while the workers start: wait until they are (a moment: started, not
    ready), however many signals come, and stop them."""
    while not done.is_set():
        with suppress(KeyboardInterrupt):
            done.wait()
    for pool in made:
        if isinstance(pool, _WorkerPool):
            pool.terminate()


def stop_signal() -> StopSignal:
    """A :class:`StopSignal` for :func:`worker_pool`'s ``stop``."""
    try:
        return StopSignal()
    except OSError as error:
        raise _cannot_start(1, error) from None


def _cannot_start(processes: int, error: OSError) -> AgonError:
    """Why worker processes could not be started, in one line (too many open files: the
    limit of ``ulimit -n``; too many processes; no memory)."""
    what = f"{processes} worker process{'es' if processes != 1 else ''}"
    too_many = error.errno == errno.EMFILE
    hint = " (the limit of open files, `ulimit -n`, is too low)" if too_many else ""
    return AgonError(f"cannot start {what}: {error.strerror or error}{hint}")


class Unanswered(Exception):
    """Taking results after a stop (:meth:`WorkerResults.next`): the tasks left have not
    answered in time."""


class AskedStop(Protocol):
    """What asks tasks to stop: a :class:`StopSignal`, or another pool's own."""

    def set(self, answer_seconds: float) -> None: ...


class TaskResults(Protocol[Tag, Result]):
    """Tasks sent to workers, taken as they finish: :class:`WorkerResults`, or another
    pool's own."""

    def submit(self, tag: Tag, task: Callable[..., Result], *arguments: Any) -> None: ...

    def next(self) -> tuple[Tag, Result]: ...

    @property
    def at_once(self) -> int:
        """How many tasks run at once."""


def stop_and_wait(
    stop: AskedStop, wait: Callable[[], None], answer_seconds: float = STOP_ANSWER_SECONDS
) -> None:
    """After Ctrl-C or SIGTERM in the parent: set ``stop`` to ask the workers' tasks to end,
    then ``wait`` for what they return (through :meth:`WorkerResults.next`): for
    ``answer_seconds``, then only for the tasks winding up. A second signal ends the wait at
    once. Leaving the pool's ``with`` block then kills the workers."""
    stop.set(answer_seconds)
    with suppress(KeyboardInterrupt, Unanswered):
        wait()


def stop_asked() -> bool:
    """Whether a stop signal was heard (:func:`hear_stop`); in a worker's task, whether the
    parent has set its pool's stop signal (never, without one); once it has, the task is
    winding up (:func:`winding_up`)."""
    if _stop_heard:
        return True
    if _stop is None or _winding_up is None or not _stop.is_set():
        return False
    winding_up()
    return True


def stop_beneath(error: BaseException) -> KeyboardInterrupt | None:
    """The stop (Ctrl-C, or a signal raised as one) that ``error`` came out of, if any: a stop
    that lands while compiled code calls back into Python (Numba unboxing a kernel passed as an
    argument) may come out as that code's own error, with the stop only as its context."""
    seen: BaseException | None = error.__context__
    for _ in range(MAX_CONTEXTS):
        if seen is None or isinstance(seen, KeyboardInterrupt):
            return seen
        seen = seen.__context__
    return None


MAX_CONTEXTS = 16
"""How far down an error's contexts a stop is looked for."""


def came_from_stop(error: Exception) -> bool:
    """Whether ``error`` is what a stop turned into as it landed in a callback from compiled
    code: a stop beneath it (:func:`stop_beneath`), or, where the callback lost the stop
    altogether (Numba's unboxing of a kernel argument then calls on with a missing argument,
    "missing 1 required positional argument: 'sig'"), a stop heard (:func:`stop_asked`). An
    :class:`AgonError` is Agon's own word, never a stop's."""
    if isinstance(error, AgonError):
        return False
    return stop_beneath(error) is not None or stop_asked()


def winding_up() -> None:
    """In a worker: its task has ended its search, or seen the stop, and only keeps what it
    found (saves its tables) before it returns: after a stop, the parent waits for it however
    long that takes, where it kills a task still searching."""
    global _winding_up
    if _stop is not None and _winding_up is False:
        _winding_up = True
        _stop.count_answer()


def _start_worker(
    prepare: Callable[[], None] | None, stop: StopSignal | None, parent: int
) -> None:
    global _stop
    _stop = stop
    for stop_by_signal in STOP_SIGNALS:
        signal.signal(stop_by_signal, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # (born with them blocked: now they are ignored)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    die_with_parent(parent)
    if prepare is not None:
        prepare()


def _run_task(task: Callable[..., Result], *arguments: Any) -> tuple[Result, bool]:
    """A task in a worker: its result, and whether it wound up (:func:`winding_up`)."""
    global _winding_up
    _winding_up = False
    try:
        return task(*arguments), _winding_up
    finally:
        _winding_up = None


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
        self._stop = pool.stop if isinstance(pool, _WorkerPool) else None
        self._finished: SimpleQueue[tuple[Tag, tuple[Result, bool] | BaseException]] = (
            SimpleQueue()
        )
        self._answers_taken = 0
        """Results taken of tasks that had answered the stop signal (:func:`winding_up`)."""

    @property
    def at_once(self) -> int:
        """The pool's processes."""
        return int(self._pool._processes)  # type: ignore[attr-defined]

    def submit(self, tag: Tag, task: Callable[..., Result], *arguments: Any) -> None:
        done = partial(self._finish, tag)
        self._pool.apply_async(_run_task, (task, *arguments), callback=done, error_callback=done)

    def next(self) -> tuple[Tag, Result]:
        """The next task to finish: its tag and its result. It waits for one; once the
        pool's stop signal is set, only as :func:`stop_and_wait` says."""
        while True:
            try:
                tag, outcome = self._finished.get(timeout=self._patience())
            except Empty:
                if self._stop is None or self._stop.answer_by is None:
                    raise_stop_heard()  # (a stop whose interrupt was lost in a callback from C)
                continue  # (to look again whether any task is still winding up)
            if isinstance(outcome, BaseException):
                raise outcome
            result, answered = outcome
            self._answers_taken += answered
            return tag, result

    def _patience(self) -> float:
        """How long to wait for the next result: until a stop is asked, a while at a time (to
        look whether one was heard: :func:`raise_stop_heard`); then until the tasks' time to
        answer it is up; after that, a while at a time as long as some task is winding up (it
        has answered, and its result has not come)."""
        if self._stop is None or self._stop.answer_by is None:
            return HEARD_STOP_POLL_SECONDS
        left = self._stop.answer_by - time.monotonic()
        if left > 0:
            return left
        if self._stop.answers() > self._answers_taken:
            return WINDING_UP_POLL_SECONDS
        raise Unanswered

    def _finish(self, tag: Tag, outcome: tuple[Result, bool] | BaseException) -> None:
        self._finished.put((tag, outcome))
