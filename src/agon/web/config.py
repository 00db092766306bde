"""Where the arena keeps its games (the database URL, from an option, $AGON_DB or a default
file), and what one client may ask of it (:class:`ArenaLimits`)."""

from __future__ import annotations

import gc
import ipaddress
import os
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from agon.core.errors import AgonError, quoted
from agon.web.guard import guarded_http
from agon.web.hub import PackingWebSocket

DB_ENV = "AGON_DB"
TRUSTED_PROXIES_ENV = "AGON_TRUSTED_PROXIES"
COMPRESSION_ENV = "AGON_WS_COMPRESSION"


FULL_COLLECTION_AFTER = 100
"""The garbage collector's middle collections after which it makes a full one, in a process
that serves or loads the arena (Python's default: 10)."""


def collect_rarely() -> None:
    """For a process that serves or loads the arena, once started: leave the objects made so
    far (modules, routes, schemas: most of the process's) out of the garbage collector's full
    collections (``gc.freeze``), and make those a tenth as often (:data:`FULL_COLLECTION_AFTER`).
    Each stops the event loop for as long as it takes, and under load it takes over 100 ms,
    for the objects of every socket held (docs/web.md, *Full collections* and *Full
    collections made rarer*)."""
    gc.freeze()
    youngest, middle, _ = gc.get_threshold()
    gc.set_threshold(youngest, middle, FULL_COLLECTION_AFTER)


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/agon/agon.db``, which is ``~/.local/share/agon/agon.db`` by default."""
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "agon" / "agon.db"


def database_url(option: str | None = None) -> URL:
    """The SQLAlchemy URL to use: ``--db``, else ``$AGON_DB``, else the default SQLite file.

    A value without ``://`` is a path to an SQLite file. ``postgresql://`` URLs use psycopg 3
    (the ``postgres`` extra). The directory of an SQLite file is created if it is missing.
    """
    text = option or os.environ.get(DB_ENV) or str(default_db_path())
    if "://" not in text:
        path = Path(text).expanduser()
        _make_parent(path)
        return URL.create("sqlite", database=str(path))
    try:
        url = make_url(text)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise AgonError(
            f"{quoted(_password_hidden(text))} is not a database URL (like sqlite:///games.db)"
        ) from None
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    if url.drivername.startswith("postgresql"):
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise AgonError(
                "PostgreSQL needs psycopg: pip install 'agon[postgres]'"
            ) from None
    elif url.drivername.startswith("sqlite") and url.database not in (None, "", ":memory:"):
        _make_parent(Path(url.database).expanduser())
    return url


def _password_hidden(text: str) -> str:
    """``text`` with what stands where a URL's password would (``//user:password@``) as ***,
    as SQLAlchemy shows the URLs it can read."""
    return re.sub(r"(//[^/:@]*:)[^/@]*@", r"\1***@", text)


def _make_parent(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise AgonError(f"cannot create {path.parent}: {error.strerror or error}") from None


MAY_BE_NONE = frozenset({"ponder_seconds"})
"""The limits that may be 0 (none of it): the others must be positive."""


@dataclass(frozen=True)
class ArenaLimits:
    """What one client may ask of the arena. Each is set by an option of ``agon serve``, else
    by the environment variable ``AGON_`` + its name in capitals, else is the default here."""

    body_bytes: int = 64 * 1024
    """The largest request body (the largest the API takes is a few hundred bytes)."""
    message_bytes: int = 4096
    """The largest WebSocket message a client may send (a player's change takes a few hundred
    bytes at most): Uvicorn's ``ws_max_size``, so a larger one is refused before it is read
    whole."""
    games_per_minute: int = 20
    """New games one client address may create a minute."""
    hints_per_minute: int = 6
    """Hints one game may ask for a minute."""
    hints_at_once: int = 1
    """Hints being thought out at once in the whole arena, so that the computer's own turns
    always have a worker."""
    idle_days: float = 7.0
    """An unfinished game with no move for this many days is over, as abandoned."""
    analyses_per_minute: int = 120
    """Positions one client address may have analysed a minute (each step of the analysis
    board it asks about, each short analysis)."""
    analyses_at_once: int = 1
    """Analyses (a position's, or one position of a review) being thought out at once in the
    whole arena. Hints and analyses together never take the last worker where there are two
    or more, so that the computer's own turns always have one."""
    reviews_per_minute: int = 6
    """Reviews of games one client address may start a minute (a review already made, or
    being made, is shared and not counted)."""
    analysis_seconds: float = 30.0
    """The longest the engine refines one position for the analysis board."""
    sockets_per_address: int = 100
    """WebSockets one client address may hold open at once (live games and analysis boards;
    a school behind one address needs a few for each player)."""
    watchers_per_game: int = 1000
    """WebSockets watching one game at once."""
    reads_per_minute: int = 1200
    """Reads of the API (GET and HEAD of /api/…) one client address may make a minute."""
    idle_seconds: float = 5.0
    """A kept-alive connection with no new request for this long is closed (Uvicorn's
    ``timeout_keep_alive``)."""
    head_seconds: float = 20.0
    """A request's head (its request line and headers) must be whole within this long of the
    connection's opening, or of its first byte after the previous answer; else the connection
    is answered 408 and closed (:class:`agon.web.guard.GuardedHttp`)."""
    connections_per_address: int = 256
    """HTTP connections one client address may hold open at once (a trusted proxy's are not
    capped); beyond, a new one is answered 503 and closed (:class:`agon.web.guard.GuardedHttp`).
    Browsers open about six to a server; a school behind one address has many players."""
    connections: int = 2000
    """Connections and requests being answered at once; beyond, a new request is answered 503
    (Uvicorn's ``limit_concurrency``)."""
    engines_at_once: int = 8
    """Processes of configured programs (``--engines``) running at once: one for each game
    against such a level, the one unused longest ended to make room."""
    review_seconds: float = 120.0
    """The longest a review of one game thinks in all (each position gets its share, at most
    a second)."""
    ponder_seconds: float = 30.0
    """The longest the computer thinks on its opponent's time after each of its moves (its
    game's worker, while no other work comes; 0: never)."""

    @classmethod
    def from_environment(cls, **given: float | None) -> ArenaLimits:
        """The limits ``given`` (None: not given), the rest from the environment or defaults;
        a value that is not a positive number is an AgonError naming it."""
        values: dict[str, float] = {}
        for field in fields(cls):
            chosen = given.get(field.name)
            source = f"--{field.name.replace('_', '-')}"
            if chosen is None and f"AGON_{field.name.upper()}" in os.environ:
                source = f"AGON_{field.name.upper()}"
                text = os.environ[source]
                try:
                    chosen = float(text) if field.type == "float" else int(text)
                except ValueError:
                    raise AgonError(f"{source}={quoted(text)} is not a number") from None
            if chosen is None:
                continue
            lowest_allowed = 0 if field.name in MAY_BE_NONE else 1e-9
            if not lowest_allowed <= chosen < 1e9:
                size = "a number of at least 0" if lowest_allowed == 0 else "a positive number"
                raise AgonError(f"{source} must be {size} below 10^9, not {chosen}")
            values[field.name] = chosen
        return cls(**values)  # type: ignore[arg-type]


def trusted_proxies(option: str | None = None) -> str:
    """The addresses whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed (the
    proxies in front of the arena): ``--trusted-proxies``, else ``$AGON_TRUSTED_PROXIES``, else
    none, so that no client can pass itself off as another address and dodge the limits. A
    comma-separated list of addresses and networks (``10.0.0.0/8``), or ``*``; a bad one is an
    AgonError naming it."""
    text = option if option is not None else os.environ.get(TRUSTED_PROXIES_ENV, "")
    entries = [entry.strip() for entry in text.split(",") if entry.strip()]
    for entry in entries:
        if entry == "*":
            continue
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise AgonError(
                f"trusted proxy {quoted(entry)} is not an address or a network (like "
                "127.0.0.1 or 10.0.0.0/8)"
            ) from None
    return ",".join(entries)


def ws_compression(option: bool | None = None) -> bool:
    """Whether WebSocket messages are compressed (permessage-deflate, where the client offers
    it): ``--ws-compression/--no-ws-compression``, else ``$AGON_WS_COMPRESSION`` (1, true, on,
    yes; 0, false, off, no), else yes. Compressed, an update is about an eighth of its size and
    costs the server a compression for each socket watching (docs/web.md, *Load*); a bad value
    is an AgonError naming it."""
    if option is not None:
        return option
    text = os.environ.get(COMPRESSION_ENV, "").strip().lower()
    if text in ("", "1", "true", "on", "yes"):
        return True
    if text in ("0", "false", "off", "no"):
        return False
    raise AgonError(f"{COMPRESSION_ENV}={quoted(text)} is not one of 1, true, on, yes, 0, false, "
                    "off, no")


def server_options(
    limits: ArenaLimits, trusted: str = "", compression: bool = True
) -> dict[str, Any]:
    """The settings Uvicorn serves the arena with (``agon serve``, and the tests' servers):
    the WebSocket message limit and ``compression`` (:func:`ws_compression`; never on a
    socket that asks for packed updates: :class:`~agon.web.hub.PackingWebSocket`), the idle
    and head timeouts, the caps on connections (in all, and per client address), and forwarded
    headers read only from the ``trusted`` proxies (:func:`trusted_proxies`)."""
    return {
        "http": guarded_http(limits.head_seconds, limits.connections_per_address, trusted),
        "ws": PackingWebSocket,
        "ws_max_size": limits.message_bytes,
        "ws_per_message_deflate": compression,
        "timeout_keep_alive": limits.idle_seconds,
        "limit_concurrency": limits.connections,
        "proxy_headers": bool(trusted),
        "forwarded_allow_ips": trusted or None,
    }
