"""The arena's database: one row per game, one row per move, one row per computer turn waiting
to be played (SQLite or PostgreSQL; the schema is made and changed by the Alembic migrations
of :mod:`agon.web.migrations`).

A game's position is never stored: it is rebuilt by replaying the stored moves through the
rules engine. Every change bumps the game's ``revision`` inside the same transaction, and a
change that names a stale revision is refused, so two requests (or two server processes)
can never both play the same turn. A change that leaves the computer to move queues its turn
in the same transaction (:class:`TurnClaim` takes it). On PostgreSQL each change is also
announced (``NOTIFY``, see :mod:`agon.web.changes`) as it commits.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Any, cast

from sqlalchemy import (
    JSON,
    DateTime,
    ForeignKey,
    Integer,
    Select,
    String,
    Table,
    bindparam,
    create_engine,
    delete,
    event,
    func,
    insert,
    inspect,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.engine import URL, Connection, Engine, Row
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker
from sqlalchemy.pool import NullPool
from sqlalchemy.sql.dml import Update

from agon.core.errors import AgonError


class StaleGame(AgonError):
    """The game changed since it was read (another move, undo or resignation came first)."""


class Base(DeclarativeBase):
    pass


def stored_now() -> datetime:
    """This moment, as the database keeps a game's times (to the second)."""
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
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=stored_now)
    updated: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=stored_now, index=True
    )
    thinker: Mapped[str | None] = mapped_column(String(64))
    """The server process that played the computer's last turn here, keeping its agent
    (:meth:`Store.claim_turn` leaves the next turn to it for a while)."""


class MoveRow(Base):
    __tablename__ = "moves"

    game_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    ply: Mapped[int] = mapped_column(Integer, primary_key=True)
    """1 for the first move; (game, ply) is unique, so one turn cannot be played twice."""
    text: Mapped[str] = mapped_column(String(32))
    played: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=stored_now)


class TurnRow(Base):
    __tablename__ = "turns"

    game_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    revision: Mapped[int] = mapped_column(Integer, primary_key=True)
    """The game's revision when the turn came: once the game has changed, it is stale."""
    queued: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    """When; turns are taken oldest first, so that every game waits its turn."""


# The statements of a move's path, built once: building one (its cache key included) costs
# several times what running it does (docs/web.md, *A move's statements built once*).
_GAMES = cast(Table, GameRow.__table__)
_REVISION_OF_GAME = select(_GAMES.c.revision).where(_GAMES.c.id == bindparam("game_id"))
_REVISIONS_OF_GAMES = select(_GAMES.c.id, _GAMES.c.revision).where(
    _GAMES.c.id.in_(bindparam("game_ids", expanding=True))
)
REVISIONS_A_READ = 500
"""Games whose revisions one statement reads (:meth:`Store.revisions`): well within every
database's limit on a statement's parameters (SQLite's oldest: 999)."""
_MOVES = cast(Table, MoveRow.__table__)
_INSERT_MOVE = insert(_MOVES)
_NOTIFY = select(func.pg_notify(bindparam("channel"), bindparam("payload")))
_TURNS = cast(Table, TurnRow.__table__)
_QUEUE_TURN = insert(_TURNS)
_DELETE_TURN = delete(_TURNS).where(
    _TURNS.c.game_id == bindparam("game_id"), _TURNS.c.revision == bindparam("turn_revision")
)
_CHANGED_COLUMNS = ("status", "result", "reason", "resigned", "updated")


def _bump_game(thinker: bool) -> Update:
    """A change of a game at its revision: the revision bumped, the outcome and the time set
    (and the thinker that made it, where ``thinker``). Parameters: ``game_id``,
    ``at_revision``, and each column set as ``new_`` and its name (:func:`_change_values`)."""
    values: dict[str, Any] = {"revision": _GAMES.c.revision + 1}
    values.update({name: bindparam(f"new_{name}") for name in _CHANGED_COLUMNS})
    if thinker:
        values["thinker"] = bindparam("new_thinker")
    return (
        update(_GAMES)
        .where(_GAMES.c.id == bindparam("game_id"), _GAMES.c.revision == bindparam("at_revision"))
        .values(values)
    )


_BUMP_GAME = {False: _bump_game(False), True: _bump_game(True)}
"""By whether the change sets the thinker."""


def _claimable_turns(many_processes: bool) -> Select[Any]:
    """The computer turns queued longest (parameter ``wanted``: how many), their rows locked
    for this transaction, skipping those locked; with ``many_processes``, only those of games
    no other process thinks for (parameter ``process``), or queued before ``waited``."""
    wanted = (
        select(_TURNS.c.game_id, _TURNS.c.revision)
        .order_by(_TURNS.c.queued, _TURNS.c.game_id, _TURNS.c.revision)
        .limit(bindparam("wanted"))
        .with_for_update(skip_locked=True, of=_TURNS)
    )
    if many_processes:
        wanted = wanted.join(_GAMES, _GAMES.c.id == _TURNS.c.game_id).where(or_(
            _GAMES.c.thinker.is_(None), _GAMES.c.thinker == bindparam("process"),
            _TURNS.c.queued <= bindparam("waited"),
        ))
    return wanted


_CLAIMABLE_TURNS = {False: _claimable_turns(False), True: _claimable_turns(True)}
"""By whether many processes share the database (PostgreSQL)."""


CHANGES_CHANNEL = "agon_games"
"""PostgreSQL's channel for changed games: the payload is ``game_id revision``."""
TURNS_CHANNEL = "agon_turns"
"""PostgreSQL's channel for computer turns queued."""
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
    def from_row(cls, row: Row[Any], moves: list[str]) -> StoredGame:
        """The game of a row of the games' table's columns, with its moves."""
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

    def changed(self, outcome: Outcome, moves: list[str], at: datetime) -> StoredGame:
        """The game as a change at ``at`` to ``moves`` and ``outcome`` stores it (the columns
        of :func:`_changed`)."""
        return replace(
            self, **_outcome_columns(outcome), revision=self.revision + 1, updated=at, moves=moves
        )


@dataclass(frozen=True)
class Outcome:
    """What the rules (or a resignation) say about a game after a change."""

    status: str = "active"
    result: str | None = None
    reason: str | None = None
    resigned: str | None = None
    computer_next: bool = False
    """The computer is to move next: its turn is queued with the change."""


def _aware(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes; they were stored in UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class TurnClaim:
    """One computer turn taken from the queue (:meth:`Store.claim_turn`), in its own open
    transaction until it is played (:meth:`Store.append_move` or :meth:`Store.finish` with
    it), dropped or released; after that, :meth:`release` does nothing. Its calls may come
    from any thread, one at a time (a release waits for a call in progress)."""

    def __init__(self, session: Session, game_id: str, revision: int) -> None:
        self.session = session
        self.game_id = game_id
        self.revision = revision
        self.lock = threading.Lock()
        self.done = False

    @property
    def key(self) -> tuple[str, int]:
        return (self.game_id, self.revision)

    def delete_row(self) -> None:
        self.session.execute(
            _DELETE_TURN, {"game_id": self.game_id, "turn_revision": self.revision}
        )

    def drop(self) -> None:
        """Done with the turn without a move: the game changed since it was queued, or it is
        not the computer's to play."""
        with self.lock:
            try:
                self.delete_row()
                self.session.commit()
            finally:
                self.close()

    def release(self) -> None:
        """Leave the turn queued, for this process or another to take (this one is stopping,
        or failed to play it)."""
        with self.lock:
            if not self.done:
                self.session.rollback()
                self.close()

    def close(self) -> None:
        self.done = True
        self.session.close()


@dataclass
class _Change:
    """One change of a game at ``revision``: ``statements`` run in its transaction, after the
    game's row is bumped; ``error``: why it was not committed (set where it was committed
    with others)."""

    game_id: str
    revision: int
    outcome: Outcome
    statements: Callable[[Session], None]
    at: datetime | None = None
    error: BaseException | None = None
    done: bool = False


class _GroupCommit:
    """A process's changes of games on SQLite, committed together: SQLite syncs each commit to
    disk, the largest part of a move's cost, and lets one transaction write at a time. While
    one group commits, the changes that come wait; the first of them then commits them all in
    one transaction, and each caller goes on once its change is committed (or refused), as
    alone (docs/web.md, *Moves committed together*)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._waiting: list[_Change] = []
        self._committing = False
        self._turn = threading.Condition()

    def commit(self, change: _Change) -> None:
        """Commit ``change`` with those waiting with it; raises what refused it."""
        with self._turn:
            self._waiting.append(change)
            while self._committing and not change.done:
                self._turn.wait()
            group: list[_Change] = []
            if not change.done:
                self._committing = True
                group, self._waiting = self._waiting, []
        if group:
            try:
                self._store._commit_group(group)
            except BaseException as error:
                for other in group:
                    other.error = other.error or error
                raise
            finally:
                with self._turn:
                    for done in group:
                        done.done = True
                    self._committing = False
                    self._turn.notify_all()
        if change.error is not None:
            raise change.error


class Store:
    """Synchronous, thread-safe access to the games (each call is one short transaction; on
    SQLite, a change of a game may share its transaction with others: :class:`_GroupCommit`)."""

    def __init__(self, url: URL | str) -> None:
        self.engine: Engine = _make_engine(url)
        self.schema = upgrade_schema(self.engine)
        """The schema's revision before and after the store was opened (see
        :func:`upgrade_schema`)."""
        self.notifies = self.engine.dialect.name == "postgresql"
        """Changes are announced (``NOTIFY``) to every process on the database."""
        self.process = process_name()
        """This server process, as :attr:`GameRow.thinker` names it."""
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._writing: AbstractContextManager[Any] = (
            threading.Lock() if self.engine.dialect.name == "sqlite" else nullcontext()
        )
        """SQLite lets one transaction write at a time: this process's writers wait for the
        lock here, woken as it is let go, rather than in SQLite's busy handler, which sleeps
        up to 100 ms between tries while later writers get in (an unlucky move waited
        seconds there)."""
        self._group = _GroupCommit(self) if self.engine.dialect.name == "sqlite" else None
        """On SQLite, the games' changes committed together (:class:`_GroupCommit`)."""

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
        computer_first: bool = False,
    ) -> StoredGame:
        values: dict[str, Any] = {
            f"{colour}_{name}": seats[colour].get(name)
            for colour in ("black", "white")
            for name in SEAT_FIELDS
        }
        row = GameRow(id=game_id, game=game, options=options, mode=mode, host=host, **values)
        with self._writing, self._sessions.begin() as session:
            session.add(row)
            session.flush()
            if computer_first:
                self._queue_turn(session, game_id, 0)
        loaded = self.load(game_id)
        assert loaded is not None
        return loaded

    def load(self, game_id: str) -> StoredGame | None:
        games = self._read(select(GameRow.id).where(GameRow.id == game_id))
        return games[0] if games else None

    def load_changed(self, game_id: str, revision: int) -> StoredGame | None:
        """The game, read in full only where its revision is no longer ``revision`` (None: it
        is, found by one small read; games are never deleted)."""
        return None if self._revision(game_id) == revision else self.load(game_id)

    def revisions(self, game_ids: Sequence[str]) -> dict[str, int]:
        """The revision of each of the games that exists: cheap, to notice changes."""
        found: dict[str, int] = {}
        with self.engine.connect() as connection:
            for start in range(0, len(game_ids), REVISIONS_A_READ):
                chunk = list(game_ids[start:start + REVISIONS_A_READ])
                for game_id, revision in connection.execute(
                    _REVISIONS_OF_GAMES, {"game_ids": chunk}
                ):
                    found[game_id] = revision
        return found

    def _revision(self, game_id: str) -> int | None:
        with self.engine.connect() as connection:
            return connection.scalar(_REVISION_OF_GAME, {"game_id": game_id})

    def append_move(
        self,
        game_id: str,
        revision: int,
        ply: int,
        text: str,
        outcome: Outcome,
        claim: TurnClaim | None = None,
        at: datetime | None = None,
    ) -> int:
        """Store move number ``ply``; returns the new revision. Committed before it returns.
        ``claim``: the computer's turn this move plays (done with it); ``at``: the time of the
        change (now: :func:`stored_now`)."""

        def insert_move(session: Session) -> None:
            session.execute(_INSERT_MOVE, {"game_id": game_id, "ply": ply, "text": text})

        try:
            self._change(_Change(game_id, revision, outcome, insert_move, at), claim)
        except IntegrityError:
            raise StaleGame("that turn has already been played") from None
        return revision + 1

    def truncate(self, game_id: str, revision: int, keep: int, outcome: Outcome) -> int:
        """Delete every move after the first ``keep`` (undo); returns the new revision."""

        def delete_moves(session: Session) -> None:
            session.execute(delete(MoveRow).where(MoveRow.game_id == game_id, MoveRow.ply > keep))

        self._change(_Change(game_id, revision, outcome, delete_moves))
        return revision + 1

    def finish(
        self, game_id: str, revision: int, outcome: Outcome, claim: TurnClaim | None = None
    ) -> int:
        """Store an outcome without a move (a resignation, a forfeit); returns the new
        revision."""
        self._change(_Change(game_id, revision, outcome, lambda session: None), claim)
        return revision + 1

    def _change(self, change: _Change, claim: TurnClaim | None = None) -> None:
        """Commit ``change`` in a transaction of its own (the claim's, if given: its turn is
        done with the change, or, if the game changed meanwhile, dropped), or, on SQLite, with
        the other changes this process makes meanwhile (:class:`_GroupCommit`)."""
        if claim is not None:
            with claim.lock, self._writing:
                try:
                    claim.delete_row()
                    self._commit_alone(claim.session, change, thinker=self.process)
                finally:
                    claim.close()
            return
        if self._group is not None:
            self._group.commit(change)
            return
        self._commit_own(change)

    def _commit_own(self, change: _Change) -> None:
        """Commit ``change`` in a transaction of its own, the writers taking turns."""
        with self._writing:
            self._commit_alone(self._sessions(), change)

    def _commit_alone(
        self, session: Session, change: _Change, thinker: str | None = None
    ) -> None:
        """Commit ``change`` in ``session``'s transaction, then close it."""
        try:
            if not session.in_transaction():
                session.begin()
            self._apply(session, change, thinker)
            session.commit()
        except StaleGame:
            session.commit()  # (a stale turn's row deleted)
            raise
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def _commit_group(self, group: list[_Change]) -> None:
        """Commit every change of ``group`` in one transaction, each one's refusal (its game
        changed meanwhile) set on it alone; where anything else fails, each is committed
        alone, so that a failure is only its own change's."""
        session = self._sessions()
        try:
            with self._writing:
                try:
                    session.begin()
                    for change in group:
                        try:
                            self._apply(session, change)
                        except StaleGame as stale:  # (its update matched no row: no writes)
                            change.error = stale
                    session.commit()
                    return
                except Exception:
                    session.rollback()  # (before another writer may begin)
                    if len(group) == 1:
                        raise
        finally:
            session.close()
        for change in group:
            change.error = None
            try:
                self._commit_own(change)
            except Exception as error:
                change.error = error

    def _apply(self, session: Session, change: _Change, thinker: str | None = None) -> None:
        """The statements of one change of a game at its revision, in ``session``'s
        transaction: the game's row bumped (:class:`StaleGame` if its revision is no longer
        the change's, before anything is written), the change's own statements, the
        computer's next turn queued, the change announced."""
        values = _change_values(change.outcome, change.at)
        parameters = {f"new_{name}": value for name, value in values.items()}
        if thinker is not None:
            parameters["new_thinker"] = thinker
        bumped = session.execute(
            _BUMP_GAME[thinker is not None],
            {"game_id": change.game_id, "at_revision": change.revision, **parameters},
        )
        if bumped.rowcount != 1:  # type: ignore[attr-defined]
            raise StaleGame("the game changed meanwhile: look again and retry")
        change.statements(session)
        if change.outcome.computer_next:
            self._queue_turn(session, change.game_id, change.revision + 1)
        if self.notifies:
            _notify(session, CHANGES_CHANNEL, f"{change.game_id} {change.revision + 1}")

    def _queue_turn(self, session: Session, game_id: str, revision: int) -> None:
        session.execute(
            _QUEUE_TURN, {"game_id": game_id, "revision": revision, "queued": datetime.now(UTC)}
        )
        if self.notifies:
            _notify(session, TURNS_CHANNEL, game_id)

    def claim_turn(
        self, skip: Collection[tuple[str, int]] = (), now: datetime | None = None
    ) -> TurnClaim | None:
        """The computer turn queued longest, held for this process until it is played or
        dropped (None if there is none). On PostgreSQL its row is locked (``FOR UPDATE SKIP
        LOCKED``) by a transaction held open meanwhile, so no other process takes it, and if
        this process dies the lock goes with its connection and another takes the turn; a
        game whose computer another process thinks for (:attr:`GameRow.thinker`, which keeps
        its agent) is left to that one for :data:`THINKER_GRACE_S` after its turn is queued
        (``now``: the time it is). On SQLite (one process) ``skip`` are the turns this process
        holds already."""
        parameters: dict[str, Any] = {"wanted": len(skip) + 1}
        if self.notifies:  # (many processes: on SQLite there is one, and every turn is its own)
            waited = (now or datetime.now(UTC)) - timedelta(seconds=THINKER_GRACE_S)
            parameters.update(process=self.process, waited=waited)
        session = self._sessions()
        session.begin()
        try:
            rows = session.execute(_CLAIMABLE_TURNS[self.notifies], parameters).all()
            for game_id, revision in rows:
                if (game_id, revision) not in skip:
                    return TurnClaim(session, game_id, revision)
        except BaseException:
            session.close()
            raise
        session.close()
        return None

    def turns(self) -> list[tuple[str, int]]:
        """Every computer turn queued, oldest first (for tests and the operator)."""
        with self._sessions() as session:
            rows = session.execute(
                select(TurnRow.game_id, TurnRow.revision).order_by(TurnRow.queued)
            ).all()
        return [(game_id, revision) for game_id, revision in rows]

    def expire_idle(self, before: datetime, outcome: Outcome) -> int:
        """End every unfinished game unchanged since ``before`` with ``outcome`` (its moves
        kept); returns how many."""
        with self._writing, self._sessions.begin() as session:
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
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(_GAMES, _MOVES.c.text.label("move_text"))
                .join(ids, ids.c.id == _GAMES.c.id)
                .outerjoin(_MOVES, _MOVES.c.game_id == _GAMES.c.id)
                .order_by(_GAMES.c.updated.desc(), _GAMES.c.id, _MOVES.c.ply)
            ).all()
        grouped: dict[str, tuple[Row[Any], list[str]]] = {}
        for row in rows:
            _, moves = grouped.setdefault(row.id, (row, []))
            if row.move_text is not None:
                moves.append(row.move_text)
        return [StoredGame.from_row(row, moves) for row, moves in grouped.values()]


def _changed(outcome: Outcome, at: datetime | None = None) -> dict[str, Any]:
    """The columns every change of a game sets: a new revision, its outcome, the time (now
    unless ``at``)."""
    return {"revision": GameRow.revision + 1, **_change_values(outcome, at)}


def _change_values(outcome: Outcome, at: datetime | None = None) -> dict[str, Any]:
    """The values of :data:`_CHANGED_COLUMNS` in a change of a game."""
    return {**_outcome_columns(outcome), "updated": at or stored_now()}


def _outcome_columns(outcome: Outcome) -> dict[str, Any]:
    return {
        "status": outcome.status,
        "result": outcome.result,
        "reason": outcome.reason,
        "resigned": outcome.resigned,
    }


def _notify(session: Session, channel: str, payload: str) -> None:
    """Announce ``payload`` on PostgreSQL's ``channel`` when the transaction commits."""
    session.execute(_NOTIFY, {"channel": channel, "payload": payload})


SCHEMA_LOCK = 0x61676F6E
"""PostgreSQL's advisory lock that one process at a time holds to change the schema."""


def upgrade_schema(engine: Engine) -> tuple[str | None, str]:
    """Bring the database to the newest schema (Alembic migrations, in one transaction, one
    process at a time: the others wait for it and then find nothing left to do); returns the
    revision it was at (None: an empty database) and the one it is at now. A database made
    before migrations (its tables, no revision) is taken as at the first one."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(resources.files("agon.web") / "migrations"))
    with _schema_lock(engine) as connection:
        config.attributes["connection"] = connection
        tables = inspect(connection).get_table_names()
        if "games" in tables and "alembic_version" not in tables:
            command.stamp(config, "0001")
        before = _schema_revision(connection)
        command.upgrade(config, "head")
        after = _schema_revision(connection)
        assert after is not None
        return before, after


def _schema_revision(connection: Connection) -> str | None:
    if "alembic_version" not in inspect(connection).get_table_names():
        return None
    found = connection.scalar(text("SELECT version_num FROM alembic_version"))
    return None if found is None else str(found)


@contextmanager
def _schema_lock(engine: Engine) -> Iterator[Connection]:
    """A connection in a transaction that no other process changes the schema beside."""
    if engine.dialect.name == "postgresql":
        with engine.begin() as connection:
            connection.execute(select(func.pg_advisory_xact_lock(SCHEMA_LOCK)))
            yield connection
        return
    if engine.dialect.name == "sqlite":
        # pysqlite opens a transaction only before a write, and never a writing one: SQLite's
        # write lock is taken by hand, on a connection of its own (closed after, not pooled)
        own = create_engine(engine.url, poolclass=NullPool, connect_args={"timeout": 30})
        try:
            with own.connect() as connection:
                connection.connection.driver_connection.isolation_level = None  # type: ignore[union-attr]
                connection.exec_driver_sql("BEGIN IMMEDIATE")
                try:
                    yield connection
                except BaseException:
                    connection.exec_driver_sql("ROLLBACK")
                    raise
                connection.exec_driver_sql("COMMIT")
        finally:
            own.dispose()
        return
    with engine.begin() as connection:
        yield connection


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
    # each process named in PostgreSQL's pg_stat_activity, for whoever looks at who holds what
    named = {"application_name": application_name()}
    return create_engine(url, pool_pre_ping=True, connect_args=named)


THINKER_GRACE_S = 2.0
"""How long a computer turn is left to the process that thinks for its game (which keeps the
game's agent, its tree and tables, and has been thinking on the opponent's time) before any
other takes it: that process may be busy, or gone."""


def process_name() -> str:
    """This server process, unique across hosts and restarts."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"


def application_name() -> str:
    """How this process's connections are named in PostgreSQL's ``pg_stat_activity``."""
    return f"agon serve {os.getpid()}"
