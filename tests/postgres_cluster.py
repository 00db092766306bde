"""A throw-away PostgreSQL server for the tests.

The arena keeps its records through SQLAlchemy, and its tests run against SQLite and against
PostgreSQL, whose locking, transactions and LISTEN/NOTIFY SQLite does not have. The tests need
no server running beforehand: :class:`ThrowawayPostgres` makes a cluster in a temporary folder
(``initdb``), starts a ``postgres`` on a free port of 127.0.0.1 with settings that trade
durability for speed, and removes it all when stopped. ``make test`` installs the server's
programs where they are missing (``tools/system-packages postgres``); the cluster is found where
that script looks: on PATH, else in Debian's ``/usr/lib/postgresql/<version>/bin``, newest first.

PostgreSQL refuses to run as root: as root, the cluster belongs to and runs as ``nobody``.
The server dies with the process that started it, however that ends (SIGKILL included): on
Linux the kernel sends it SIGQUIT (PostgreSQL's immediate shutdown) at its parent's death. The
request is made after the change of user, since a change of user clears it; so the server is
started as ``nobody`` by :mod:`subprocess` itself rather than through ``setpriv`` or ``runuser``.
A folder left by a process killed before it could remove it is removed by the next cluster's
start.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import psycopg
from psycopg import sql

USER = "agon"
"""The cluster's superuser (no password: the cluster trusts every local connection)."""

START_SECONDS = 60.0
"""How long a start waits for the server to take connections (a loaded machine is slow)."""

STOP_SECONDS = 30.0
"""How long a stop waits for the server to end before it kills it."""

SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "200",
    "shared_buffers": "16MB",
    "max_wal_size": "256MB",
    "jit": "off",
}
"""The server's settings for tests: nothing written need survive a crash of the machine."""

PREFIX = "agon-postgres-"
"""How the temporary folders are named (the folder of a dead owner is removed at a start)."""

OWNER_FILE = "owner"
"""In the temporary folder: the id of the process that made it."""

_PR_SET_PDEATHSIG = 1


class PostgresNotFound(RuntimeError):
    """No PostgreSQL server programs (``initdb`` and ``postgres``) on this machine."""


def find_server_programs() -> tuple[Path, Path]:
    """``initdb`` and ``postgres``: on PATH, else in ``/usr/lib/postgresql/*/bin``, the newest
    version first (as ``tools/system-packages postgres`` looks)."""
    initdb, postgres = shutil.which("initdb"), shutil.which("postgres")
    if initdb and postgres:
        return Path(initdb), Path(postgres)

    def version(folder: Path) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", folder.parent.name))

    for folder in sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=version, reverse=True):
        initdb_path, postgres_path = folder / "initdb", folder / "postgres"
        if os.access(initdb_path, os.X_OK) and os.access(postgres_path, os.X_OK):
            return initdb_path, postgres_path
    raise PostgresNotFound(
        "no PostgreSQL server (initdb and postgres, on PATH or in /usr/lib/postgresql/*/bin): "
        "`make test` installs it (tools/system-packages postgres), or run "
        "sudo apt-get install postgresql"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _die_with_parent(signal_number: int) -> Callable[[], None]:
    """A ``preexec_fn``: the child is sent ``signal_number`` when the thread that started it
    ends (Linux; elsewhere nothing). It runs after :mod:`subprocess` has changed the user,
    which would have cleared the request."""
    parent = os.getpid()

    def prepare() -> None:
        if not sys.platform.startswith("linux"):
            return
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal_number, 0, 0, 0)
        if os.getppid() != parent:  # (the parent died before the request was made)
            os._exit(1)

    return prepare


def process_runs(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    state = re.search(r"^State:\s+(\S)", status, re.MULTILINE)
    return not (state and state.group(1) in "ZX")


def _traversable_by_all(folder: Path) -> bool:
    """Whether every user can reach into ``folder`` (each folder on its path lets others in)."""
    for each in [folder, *folder.parents]:
        try:
            if not each.stat().st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


def _remove_abandoned(base: Path) -> None:
    """Remove the clusters' folders in ``base`` whose maker and server have both ended."""
    for folder in base.glob(PREFIX + "*"):
        try:
            owner = int((folder / OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue  # (not made here, or being made now)
        if process_runs(owner):
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            server = int((folder / "data" / "postmaster.pid").read_text().split()[0])
            if process_runs(server):
                continue
        shutil.rmtree(folder, ignore_errors=True)


class ThrowawayPostgres:
    """A PostgreSQL server of its own in a temporary folder, for tests: :meth:`start`, then
    :meth:`create_database` for each test (or :meth:`url`), then :meth:`stop`; or
    ``with ThrowawayPostgres() as cluster: ...``."""

    def __init__(self) -> None:
        self.initdb, self.postgres = find_server_programs()
        self.folder: Path | None = None
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._as_user: dict[str, Any] = {}
        self.start_seconds: float | None = None
        """How long :meth:`start` took."""

    # the folder: a cluster (data), the server's socket and its log

    @property
    def data(self) -> Path:
        assert self.folder is not None, "not started"
        return self.folder / "data"

    @property
    def log(self) -> Path:
        assert self.folder is not None, "not started"
        return self.folder / "postgres.log"

    def log_tail(self, characters: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-characters:]
        except OSError:
            return ""

    def start(self) -> None:
        """Make the cluster and start its server; back when it takes connections."""
        if self.process is not None:
            raise RuntimeError("already started")
        started = time.monotonic()
        base = Path(tempfile.gettempdir())
        if os.geteuid() == 0:
            # PostgreSQL will not run as root: the cluster is the `nobody` user's, who must reach it
            if not _traversable_by_all(base):
                base = Path("/tmp")
            nobody = pwd.getpwnam("nobody")
            self._as_user = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
        _remove_abandoned(base)
        self.folder = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))
        try:
            (self.folder / OWNER_FILE).write_text(str(os.getpid()))
            if self._as_user:
                os.chown(self.folder, self._as_user["user"], self._as_user["group"])
            self._initdb()
            for _attempt in range(5):
                if self._serve():
                    break
            else:
                raise RuntimeError(f"PostgreSQL found no free port:\n{self.log_tail()}")
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - started

    def _initdb(self) -> None:
        command = [
            str(self.initdb), "--pgdata", str(self.data), "--username", USER,
            "--auth", "trust", "--encoding", "UTF8", "--no-locale", "--no-sync",
        ]  # fmt: skip
        done = subprocess.run(
            command, cwd=self.folder, stdin=subprocess.DEVNULL, capture_output=True,
            timeout=START_SECONDS, preexec_fn=_die_with_parent(signal.SIGKILL), **self._as_user,
        )  # fmt: skip
        if done.returncode != 0:
            output = (done.stdout + done.stderr).decode(errors="replace")
            raise RuntimeError(f"initdb failed ({done.returncode}):\n{output}")

    def _serve(self) -> bool:
        """Start the server on a free port: whether it takes connections (False: the port was
        taken meanwhile)."""
        assert self.folder is not None
        self.port = _free_port()
        command = [str(self.postgres), "-D", str(self.data), "-p", str(self.port)]
        settings = {**SETTINGS, "unix_socket_directories": str(self.folder)}
        for name, value in settings.items():
            command += ["-c", f"{name}={value}"]
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                command, cwd=self.folder, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                preexec_fn=_die_with_parent(signal.SIGQUIT), **self._as_user,
            )  # fmt: skip
        deadline = time.monotonic() + START_SECONDS
        while True:
            if self.process.poll() is not None:
                self.process = None
                if "could not bind" in self.log_tail():
                    return False
                raise RuntimeError(f"PostgreSQL did not start:\n{self.log_tail()}")
            try:
                with psycopg.connect(self.url("postgres"), connect_timeout=2) as connection:
                    row = connection.execute("SHOW data_directory").fetchone()
            except psycopg.OperationalError as error:
                problem = str(error).strip()
            else:
                if row is not None and Path(row[0]) == self.data:
                    return True
                # (another server took the port first: this one fails to bind, and ends)
                problem = f"port {self.port} is another server's"
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"PostgreSQL took no connection in {START_SECONDS:.0f} s ({problem}):\n"
                    f"{self.log_tail()}"
                )
            time.sleep(0.05)

    @property
    def pid(self) -> int:
        """The server's (the postmaster's) process id."""
        assert self.process is not None, "not started"
        return self.process.pid

    def url(self, database: str) -> str:
        """A URL of ``database`` on the server, for psycopg and SQLAlchemy (which needs the
        driver in its scheme: ``postgresql+psycopg://``)."""
        assert self.port is not None, "not started"
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new empty database with a name of its own: its URL."""
        name = f"test_{uuid.uuid4().hex}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop database ``name`` (its name, or its URL), whoever is connected to it."""
        name = name.rsplit("/", 1)[-1]
        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            connection.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )

    def stop(self) -> None:
        """Stop the server at once (PostgreSQL's immediate shutdown: the cluster is thrown away)
        and remove its folder."""
        process, self.process = self.process, None
        if process is not None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGQUIT)
            try:
                process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        folder, self.folder = self.folder, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def __enter__(self) -> ThrowawayPostgres:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
