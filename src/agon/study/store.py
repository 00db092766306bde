"""Exact values kept and reused: what the solver proved about a position, looked up instead of
solved again.

A store is an SQLite file of entries, one a position of a variant: its exact value (Black's
final margin with best play, komi included), its best moves, every legal move's value where
they were solved, and what the solve cost. Positions are keyed by the variant (its game and
options) and the position text (``State.position``, which holds everything the rules can still
depend on), so an entry never depends on the solver's code or its tables.

Two stores are read, in turn (:class:`ExactValues`): the one Agon ships (``shipped.sqlite``
beside this module: the hard positions of the small boards, built by ``agon store build``),
read-only; then the user's cache (``$AGON_HOME/cache/exact.sqlite`` where ``AGON_HOME`` is
set, else ``$XDG_CACHE_HOME/agon/exact.sqlite``, ``~/.cache/agon/exact.sqlite`` by default),
into which every exact answer that took a solver more than :data:`CACHE_AFTER_SECONDS` is
written. A cache that cannot be opened or written is passed over (the values are solved again),
and said once.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from contextlib import closing, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agon.core.compiled import user_cache
from agon.core.errors import AgonError
from agon.core.files import user_path
from agon.core.game import Game, Move, State
from agon.solve.facts import komi_free

log = logging.getLogger(__name__)

SHIPPED_STORE = Path(__file__).with_name("shipped.sqlite")
CACHE_AFTER_SECONDS = 0.05
"""An exact answer that took longer than this to solve is kept in the cache."""
MAX_ENTRY_CHARACTERS = 1_000_000
"""An entry's texts (position, moves) longer than this are not kept (nor trusted when read)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS positions (
    variant TEXT NOT NULL,
    position TEXT NOT NULL,
    value REAL NOT NULL,
    best TEXT NOT NULL,
    moves TEXT,
    nodes INTEGER NOT NULL,
    seconds REAL NOT NULL,
    PRIMARY KEY (variant, position)
)
"""


def variant_key(game: Game) -> str:
    """The variant as a store names it: its game and options, as sorted JSON; where the komi
    only shifts every final margin, the variant with komi 0 (:func:`komi_free`), whose
    entries then serve every komi."""
    variant, _ = komi_free(game)
    return json.dumps({"game": variant.name, "options": variant.options()}, sort_keys=True)


@dataclass(frozen=True)
class Entry:
    """What the solver proved about one position."""

    value: float
    """Black's final margin with best play, komi included."""
    best_moves: tuple[Move, ...]
    move_values: Mapping[Move, float] | None
    """Black's margin with best play after each legal move (None: not solved)."""
    nodes: int = 0
    seconds: float = 0.0

    def to_row(self, game: Game, state: State) -> tuple[Any, ...]:
        """The row of the store (values with the komi left out where :func:`komi_free` says
        so, as the store keeps them)."""
        name = game.format_move
        _, komi = komi_free(game)
        moves = None if self.move_values is None else json.dumps(
            {name(move): value + komi for move, value in self.move_values.items()}
        )
        best = json.dumps([name(move) for move in self.best_moves])
        return (
            variant_key(game), state.position(), self.value + komi, best, moves, self.nodes,
            self.seconds,
        )

    @classmethod
    def from_row(cls, game: Game, state: State, row: tuple[Any, ...]) -> Entry | None:
        """The entry a row holds, under ``game``'s komi, checked against the position's legal
        moves (None: a row that does not fit them, which is then not trusted)."""
        value, best_text, moves_text, nodes, seconds = row
        _, komi = komi_free(game)
        try:
            legal = set(state.legal_moves())
            best = tuple(game.parse_move(text) for text in json.loads(best_text))
            move_values = None
            if moves_text is not None:
                named = json.loads(moves_text)
                move_values = {
                    game.parse_move(text): float(v) - komi for text, v in named.items()
                }
                if set(move_values) != legal:
                    return None
            if not set(best) <= legal or (legal and not best):
                return None
            return cls(float(value) - komi, best, move_values, int(nodes), float(seconds))
        except (AgonError, ValueError, TypeError, AttributeError):
            return None


def cache_path() -> Path:
    """Where the user's cache of exact values lives."""
    home = os.environ.get("AGON_HOME")
    if home:
        return user_path(home) / "cache" / "exact.sqlite"
    return user_cache() / "exact.sqlite"


class Store:
    """One SQLite file of entries (opened on first use; safe to share between threads, and
    between processes through SQLite's own locking)."""

    def __init__(self, path: Path, writable: bool) -> None:
        self.path = path
        self.writable = writable
        self._connection: sqlite3.Connection | None = None
        self._failed = False
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection | None:
        if self._connection is not None or self._failed:
            return self._connection
        try:
            if self.writable:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                connection = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute(_SCHEMA)
                connection.commit()
            else:
                if not self.path.is_file():
                    self._failed = True
                    return None
                uri = f"{self.path.resolve().as_uri()}?mode=ro&immutable=1"
                connection = sqlite3.connect(uri, uri=True, check_same_thread=False)
                connection.execute("SELECT 1 FROM positions LIMIT 1")
        except (OSError, sqlite3.Error) as error:
            self._failed = True
            log.warning("the store of exact values %s is not used: %s", self.path, error)
            return None
        self._connection = connection
        return connection

    def get(self, game: Game, state: State) -> Entry | None:
        position = state.position()
        if len(position) > MAX_ENTRY_CHARACTERS:
            return None
        with self._lock:
            connection = self._connect()
            if connection is None:
                return None
            try:
                row = connection.execute(
                    "SELECT value, best, moves, nodes, seconds FROM positions "
                    "WHERE variant = ? AND position = ?",
                    (variant_key(game), position),
                ).fetchone()
            except sqlite3.Error as error:
                log.warning("the store of exact values %s could not be read: %s", self.path, error)
                return None
        return None if row is None else Entry.from_row(game, state, row)

    def put(self, game: Game, state: State, entry: Entry) -> bool:
        """Keep ``entry`` (replacing one with fewer moves' values); False where it could not."""
        if not self.writable:
            raise AgonError(f"the store {self.path} is read-only")
        row = entry.to_row(game, state)
        if sum(len(str(part)) for part in row) > MAX_ENTRY_CHARACTERS:
            return False
        with self._lock:
            connection = self._connect()
            if connection is None:
                return False
            try:
                with connection:
                    known = connection.execute(
                        "SELECT moves FROM positions WHERE variant = ? AND position = ?",
                        row[:2],
                    ).fetchone()
                    if known is not None and known[0] is not None and row[4] is None:
                        return True  # (what is kept already says more)
                    connection.execute(
                        "INSERT OR REPLACE INTO positions VALUES (?, ?, ?, ?, ?, ?, ?)", row
                    )
            except sqlite3.Error as error:
                log.warning("the store of exact values %s could not be written: %s", self.path,
                            error)
                return False
        return True

    def variants(self) -> Iterator[tuple[str, int]]:
        """Each variant the store holds, with its count of positions."""
        with self._lock:
            connection = self._connect()
            if connection is None:
                return iter(())
            rows = connection.execute(
                "SELECT variant, COUNT(*) FROM positions GROUP BY variant ORDER BY variant"
            ).fetchall()
        return iter(rows)

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                with suppress(sqlite3.Error):
                    self._connection.close()
            self._connection = None


class ExactValues:
    """The shipped store, then the user's cache: where exact answers are looked up and kept."""

    def __init__(self, shipped: Path | None = SHIPPED_STORE, cache: Path | None = None) -> None:
        self.stores: list[Store] = []
        if shipped is not None:
            self.stores.append(Store(shipped, writable=False))
        self.cache: Store | None = None
        try:
            self.cache = Store(cache or cache_path(), writable=True)
        except AgonError as error:
            log.warning("no cache of exact values: %s", error)
        else:
            self.stores.append(self.cache)

    def get(self, state: State) -> Entry | None:
        """The entry of ``state`` that says the most (its moves' values), where one is kept."""
        found = None
        for store in self.stores:
            entry = store.get(state.game, state)
            if entry is not None and entry.move_values is not None:
                return entry
            found = found or entry
        return found

    def keep(self, state: State, entry: Entry) -> None:
        """Keep an answer the solver found (where it took long enough to be worth keeping)."""
        if entry.seconds >= CACHE_AFTER_SECONDS and self.cache is not None:
            self.cache.put(state.game, state, entry)

    def close(self) -> None:
        for store in self.stores:
            store.close()


def compact(path: Path) -> None:
    """Make the store at ``path`` one self-contained file, as small as it goes (before it is
    shipped: a shipped store is read as immutable)."""
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA journal_mode=DELETE")
        connection.execute("VACUUM")


def build_store(path: Path) -> Store:
    """A new writable store at ``path`` (``agon store build``): the file is made if missing."""
    store = Store(path, writable=True)
    with closing(sqlite3.connect(path)) as connection:
        connection.execute(_SCHEMA)
    return store
