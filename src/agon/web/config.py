"""Where the arena keeps its games: the database URL, from an option, $AGON_DB or a default file."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from agon.core.errors import AgonError, quoted

DB_ENV = "AGON_DB"


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
    except ArgumentError:
        raise AgonError(f"{quoted(text)} is not a database URL (like sqlite:///games.db)") from None
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


def _make_parent(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise AgonError(f"cannot create {path.parent}: {error.strerror or error}") from None
