"""The arena's database: one row per game, one row per move (SQLite or PostgreSQL).

A game's position is never stored: it is rebuilt by replaying the stored moves through the
rules engine. Every change bumps the game's ``revision`` inside the same transaction, and a
change that names a stale revision is refused, so two requests (or two server processes)
can never both play the same turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    DateTime,
    ForeignKey,
    Integer,
    Select,
    String,
    create_engine,
    delete,
    event,
    func,
    select,
    update,
)
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, sessionmaker

from agon.core.errors import AgonError


class StaleGame(AgonError):
    """The game changed since it was read (another move, undo or resignation came first)."""


class Base(DeclarativeBase):
    pass


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


class GameRow(Base):
    __tablename__ = "games"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    mode: Mapped[str] = mapped_column(String(16))
    """``computer``, ``local`` (two players at one screen) or ``friend`` (two links)."""
    black_agent: Mapped[str | None] = mapped_column(String(64))
    """The computer's agent spec on this seat, or None for a person."""
    white_agent: Mapped[str | None] = mapped_column(String(64))
    black_level: Mapped[str | None] = mapped_column(String(32))
    white_level: Mapped[str | None] = mapped_column(String(32))
    black_token: Mapped[str | None] = mapped_column(String(64))
    white_token: Mapped[str | None] = mapped_column(String(64))
    host: Mapped[str | None] = mapped_column(String(8))
    """The colour of the player who created the game (friend games show them the invitation)."""
    status: Mapped[str] = mapped_column(String(16), default="active", index=True)
    result: Mapped[str | None] = mapped_column(String(32))
    reason: Mapped[str | None] = mapped_column(String(200))
    resigned: Mapped[str | None] = mapped_column(String(8))
    revision: Mapped[int] = mapped_column(Integer, default=0)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    updated: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now, index=True)


class MoveRow(Base):
    __tablename__ = "moves"

    game_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    ply: Mapped[int] = mapped_column(Integer, primary_key=True)
    """1 for the first move; (game, ply) is unique, so one turn cannot be played twice."""
    text: Mapped[str] = mapped_column(String(32))
    played: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


SEAT_FIELDS = ("agent", "level", "token")


@dataclass
class StoredGame:
    """A game as read from the database, detached from any session."""

    id: str
    game: str
    options: dict[str, Any]
    mode: str
    agents: dict[str, str | None]
    levels: dict[str, str | None]
    tokens: dict[str, str | None]
    host: str | None
    status: str
    result: str | None
    reason: str | None
    resigned: str | None
    revision: int
    created: datetime
    updated: datetime
    moves: list[str] = field(default_factory=list)

    @classmethod
    def from_row(cls, row: GameRow, moves: list[str]) -> StoredGame:
        return cls(
            id=row.id,
            game=row.game,
            options=dict(row.options),
            mode=row.mode,
            agents={"black": row.black_agent, "white": row.white_agent},
            levels={"black": row.black_level, "white": row.white_level},
            tokens={"black": row.black_token, "white": row.white_token},
            host=row.host,
            status=row.status,
            result=row.result,
            reason=row.reason,
            resigned=row.resigned,
            revision=row.revision,
            created=_aware(row.created),
            updated=_aware(row.updated),
            moves=moves,
        )


@dataclass(frozen=True)
class Outcome:
    """What the rules (or a resignation) say about a game after a change."""

    status: str = "active"
    result: str | None = None
    reason: str | None = None
    resigned: str | None = None


def _aware(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes; they were stored in UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class Store:
    """Synchronous, thread-safe access to the games (each call is one short transaction)."""

    def __init__(self, url: URL | str) -> None:
        self.engine: Engine = _make_engine(url)
        Base.metadata.create_all(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def close(self) -> None:
        self.engine.dispose()

    def create(
        self,
        *,
        game_id: str,
        game: str,
        options: dict[str, Any],
        mode: str,
        seats: dict[str, dict[str, str | None]],
        host: str | None,
    ) -> StoredGame:
        values: dict[str, Any] = {
            f"{colour}_{name}": seats[colour].get(name)
            for colour in ("black", "white")
            for name in SEAT_FIELDS
        }
        row = GameRow(id=game_id, game=game, options=options, mode=mode, host=host, **values)
        with self._sessions.begin() as session:
            session.add(row)
        loaded = self.load(game_id)
        assert loaded is not None
        return loaded

    def load(self, game_id: str) -> StoredGame | None:
        games = self._read(select(GameRow.id).where(GameRow.id == game_id))
        return games[0] if games else None

    def revision(self, game_id: str) -> int | None:
        """The game's revision (None if there is no such game): cheap, to notice changes."""
        with self._sessions() as session:
            return session.scalar(select(GameRow.revision).where(GameRow.id == game_id))

    def append_move(
        self, game_id: str, revision: int, ply: int, text: str, outcome: Outcome
    ) -> int:
        """Store move number ``ply``; returns the new revision. Committed before it returns."""
        with self._sessions() as session:
            try:
                with session.begin():
                    new_revision = self._bump(session, game_id, revision, outcome)
                    session.add(MoveRow(game_id=game_id, ply=ply, text=text))
            except IntegrityError:
                raise StaleGame("that turn has already been played") from None
        return new_revision

    def truncate(self, game_id: str, revision: int, keep: int, outcome: Outcome) -> int:
        """Delete every move after the first ``keep`` (undo); returns the new revision."""
        with self._sessions.begin() as session:
            new_revision = self._bump(session, game_id, revision, outcome)
            session.execute(delete(MoveRow).where(MoveRow.game_id == game_id, MoveRow.ply > keep))
        return new_revision

    def finish(self, game_id: str, revision: int, outcome: Outcome) -> int:
        """Store an outcome without a move (a resignation); returns the new revision."""
        with self._sessions.begin() as session:
            return self._bump(session, game_id, revision, outcome)

    @staticmethod
    def _bump(session: Any, game_id: str, revision: int, outcome: Outcome) -> int:
        changed = session.execute(
            update(GameRow)
            .where(GameRow.id == game_id, GameRow.revision == revision)
            .values(**_changed(outcome))
        )
        if changed.rowcount != 1:
            raise StaleGame("the game changed meanwhile: look again and retry")
        return revision + 1

    def expire_idle(self, before: datetime, outcome: Outcome) -> int:
        """End every unfinished game unchanged since ``before`` with ``outcome`` (its moves
        kept); returns how many."""
        with self._sessions.begin() as session:
            ended: Any = session.execute(
                update(GameRow)
                .where(GameRow.status == "active", GameRow.updated < before)
                .values(**_changed(outcome))
            )
            return int(ended.rowcount)

    def recent(self, status: str | None, limit: int) -> list[StoredGame]:
        """The most recently changed games (moves included), newest first."""
        wanted = select(GameRow.id).order_by(GameRow.updated.desc()).limit(limit)
        if status is not None:
            wanted = wanted.where(GameRow.status == status)
        return self._read(wanted)

    def many(self, game_ids: list[str]) -> list[StoredGame]:
        return self._read(select(GameRow.id).where(GameRow.id.in_(game_ids)))

    def count(self) -> int:
        with self._sessions() as session:
            return int(session.scalar(select(func.count()).select_from(GameRow)) or 0)

    def _read(self, wanted: Select[Any]) -> list[StoredGame]:
        """The games whose ids ``wanted`` selects, with their moves, newest first, read by one
        statement: two could see a move stored between them (SQLite outside a transaction and
        PostgreSQL's read committed each read afresh per statement), giving a game still
        active with its last move played."""
        ids = wanted.subquery()
        with self._sessions() as session:
            rows = session.execute(
                select(GameRow, MoveRow.text)
                .join(ids, ids.c.id == GameRow.id)
                .outerjoin(MoveRow, MoveRow.game_id == GameRow.id)
                .order_by(GameRow.updated.desc(), GameRow.id, MoveRow.ply)
            ).all()
        grouped: dict[str, tuple[GameRow, list[str]]] = {}
        for row, text in rows:
            _, moves = grouped.setdefault(row.id, (row, []))
            if text is not None:
                moves.append(text)
        return [StoredGame.from_row(row, moves) for row, moves in grouped.values()]


def _changed(outcome: Outcome) -> dict[str, Any]:
    """The columns every change of a game sets: a new revision, its outcome, the time."""
    return {
        "revision": GameRow.revision + 1,
        "status": outcome.status,
        "result": outcome.result,
        "reason": outcome.reason,
        "resigned": outcome.resigned,
        "updated": _now(),
    }


def _make_engine(url: URL | str) -> Engine:
    if str(url).startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _pragmas(connection: Any, _record: Any) -> None:
            cursor = connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA journal_mode=WAL")
            # each commit synced: an acknowledged move outlives a power cut, not only a kill
            cursor.execute("PRAGMA synchronous=FULL")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True)
