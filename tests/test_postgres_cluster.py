"""The throw-away PostgreSQL server the tests use (postgres_cluster, the ``postgres_server``
and ``postgres_url`` fixtures): it takes SQL and notifications, gives each test a database of
its own, and dies with the process that started it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from postgres_cluster import ThrowawayPostgres, process_runs

DEADLINE = 30.0
"""How long a test waits for what should take well under a second (a loaded machine is slow)."""


def test_a_database_takes_sql(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as connection:
        connection.execute("CREATE TABLE moves (id serial PRIMARY KEY, notation text NOT NULL)")
        connection.execute("INSERT INTO moves (notation) VALUES (%s), (%s)", ["a1", "b2"])
        rows = connection.execute("SELECT notation FROM moves ORDER BY id").fetchall()
    assert rows == [("a1",), ("b2",)]
    with psycopg.connect(postgres_url) as connection:  # (committed at the first's end)
        assert connection.execute("SELECT count(*) FROM moves").fetchone() == (2,)


def test_each_url_is_a_database_of_its_own(postgres_server: Any, postgres_url: str) -> None:
    other = postgres_server.create_database()
    try:
        assert other != postgres_url
        with psycopg.connect(postgres_url) as connection:
            connection.execute("CREATE TABLE only_here (x int)")
            assert connection.execute("SELECT current_database()").fetchone() == (
                postgres_url.rsplit("/", 1)[-1],
            )
        with psycopg.connect(other) as connection:
            assert connection.execute("SELECT to_regclass('only_here')").fetchone() == (None,)
    finally:
        postgres_server.drop_database(other)


def test_each_test_has_a_new_database(postgres_url: str, postgres_server: Any) -> None:
    """(The fixture's database is new for each test: none of another test's tables.)"""
    with psycopg.connect(postgres_url) as connection:
        assert connection.execute("SELECT to_regclass('moves')").fetchone() == (None,)
        assert connection.execute("SELECT current_user").fetchone() == ("agon",)
    assert postgres_url.startswith(f"postgresql://agon@127.0.0.1:{postgres_server.port}/")


def test_listen_notify(postgres_url: str) -> None:
    with (
        psycopg.connect(postgres_url, autocommit=True) as listener,
        psycopg.connect(postgres_url, autocommit=True) as notifier,
    ):
        listener.execute("LISTEN moves")
        notifier.execute("SELECT pg_notify('moves', 'a1')")
        received = []
        for notify in listener.notifies(timeout=DEADLINE):  # (ends at the deadline)
            received.append((notify.channel, notify.payload))
            break
    assert received == [("moves", "a1")]


CHILD = """
import sys, time
sys.path.insert(0, {tests!r})
from postgres_cluster import ThrowawayPostgres
cluster = ThrowawayPostgres()
cluster.start()
print(cluster.pid, cluster.folder, flush=True)
time.sleep(600)
"""


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (the server's own processes)."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        if f"\nPPid:\t{pid}\n" in text:
            found.append(int(status.parent.name))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal")
def test_the_server_dies_with_its_starter() -> None:
    """SIGKILL to the process that started a server (no time to stop it) ends the server and
    the server's own processes."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(tests=str(Path(__file__).parent))],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    folder = None
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line, "the child started no server"
        pid_text, folder = line.split(maxsplit=1)
        server = int(pid_text)
        assert process_runs(server)
        workers = _children(server)
        assert workers, "no server processes"
        if os.geteuid() == 0:  # (PostgreSQL runs as nobody there)
            assert Path(f"/proc/{server}").stat().st_uid != 0
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=DEADLINE)
        deadline = time.monotonic() + DEADLINE
        while any(process_runs(pid) for pid in [server, *workers]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [pid for pid in [server, *workers] if process_runs(pid)] == []
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if folder is not None:
            shutil.rmtree(folder.strip(), ignore_errors=True)


def test_stop_removes_everything() -> None:
    cluster = ThrowawayPostgres()
    with cluster:
        pid, folder = cluster.pid, cluster.folder
        assert folder is not None and (folder / "data" / "PG_VERSION").is_file()
        assert cluster.start_seconds is not None and cluster.start_seconds < 60
    assert not process_runs(pid)
    assert not folder.exists()
