"""Where ``agon play`` keeps its games: a record file per game, rewritten after every move.

The folder is ``$AGON_HOME/games`` when ``AGON_HOME`` is set, else
``$XDG_STATE_HOME/agon/games`` (``~/.local/state/agon/games`` by default). A file is named after
its game and the local date and time it was first saved: ``NAME-2025-01-31-142501.json``.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from agon.core.errors import AgonError
from agon.core.files import user_path
from agon.core.records import GameRecord
from agon.games import make_game

HOME_ENV = "AGON_HOME"
def games_folder() -> Path:
    """The folder saved games go to (see the module's text); not created here."""
    home = os.environ.get(HOME_ENV)
    if home:
        return user_path(home) / "games"
    state_home = os.environ.get("XDG_STATE_HOME", "")
    # (the XDG specification says a relative path is to be ignored)
    base = Path(state_home) if os.path.isabs(state_home) else Path.home() / ".local" / "state"
    return base / "agon" / "games"


def load_record(path: Path) -> GameRecord:
    """The record in ``path``, every move checked; raises AgonError saying what is wrong."""
    return GameRecord.load(path, make_game)


def save_record(record: GameRecord, path: Path) -> None:
    """Write ``record`` to ``path`` whole or not at all, never over something that is not a
    regular file (through a link: its target is replaced, the link kept); raises AgonError
    saying what is wrong."""
    record.save(path)


def _file_name(game_name: str, when: datetime, number: int) -> str:
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", game_name) or "game"
    suffix = f"-{number}" if number > 1 else ""
    return f"{safe}-{when.strftime('%Y-%m-%d-%H%M%S')}{suffix}.json"


def new_game_file(folder: Path, game_name: str) -> Path:
    """A new, empty file of the folder (made, with the folder, if need be) for one game: named
    after the game and now, numbered where another game took that name. Raises OSError."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    when = datetime.now()
    for number in range(1, 1000):
        path = folder / _file_name(game_name, when, number)
        try:
            # (made exclusively, so that two players starting together never share a file)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free name for a game file in {folder}")


class Autosave:
    """Keeps one game in its file: each :meth:`keep` replaces the file whole with the game's
    newest record. A failure is reported once (until a save succeeds again) and never stops
    the game; the record not yet written is kept, for :meth:`flush` to try again."""

    def __init__(self, folder: Path, path: Path | None = None) -> None:
        """Keep the game in ``path`` (None: a new file of ``folder``, at the first save); a
        file that another ``agon play`` is playing is refused (:func:`lock_game`)."""
        self.folder = folder
        self.path = path
        self.record: GameRecord | None = None  # the game as last kept
        self.written = True  # whether the file holds it
        self.failing = False
        self._lock = None if path is None else lock_game(path)

    def release(self) -> None:
        """Let another ``agon play`` play this game (the session goes on with another)."""
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def keep(self, record: GameRecord) -> str | None:
        """Save ``record``; a message to show when saving has just started failing."""
        self.record = record
        self.written = False
        return self.flush()

    def flush(self) -> str | None:
        """Write the record not yet written, if any (see :meth:`keep`)."""
        if self.written or self.record is None:
            return None
        try:
            if self.path is None:
                self.path = new_game_file(self.folder, self.record.game.name)
                self._lock = lock_game(self.path)
            save_record(self.record, self.path)
        except (OSError, AgonError) as error:
            if isinstance(error, OSError):
                error = AgonError(f"cannot write in {self.folder}: {error.strerror or error}")
            message = None if self.failing else f"Autosave failed: {error}"
            self.failing = True
            return message
        self.written = True
        self.failing = False
        return None


def lock_game(path: Path) -> int | None:
    """Hold ``path``'s game for this process while it plays it: an advisory lock on a hidden
    file beside it (``.NAME.lock``; the game's own file is replaced at each save), let go when
    the process ends, however it ends. :class:`AgonError` where another process holds it,
    naming that process; None where the system has no such locks, or the folder cannot be
    written (the game is then played unlocked, as before)."""
    try:
        import fcntl
    except ImportError:
        return None
    lock = path.with_name(f".{path.name}.lock")
    try:
        descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.read(descriptor, 32).decode("ascii", "replace").strip()
        os.close(descriptor)
        process = f" (process {holder})" if holder.isascii() and holder.isdigit() else ""
        raise AgonError(
            f"{path} is being played by another agon play{process}: go on there, or leave it "
            "there first (two at once would lose moves)"
        ) from None
    os.ftruncate(descriptor, 0)
    os.write(descriptor, str(os.getpid()).encode())
    return descriptor


@dataclass(frozen=True)
class SavedGame:
    """A file of the games folder: its record, or why it does not load."""

    path: Path
    record: GameRecord | None
    problem: str | None

    @classmethod
    def load(cls, path: Path) -> SavedGame:
        try:
            return cls(path, load_record(path), None)
        except AgonError as error:
            return cls(path, None, str(error))


def game_files(folder: Path) -> list[Path]:
    """The record files of the folder, the most recently saved first (none if the folder is
    not there yet); links and what is not a regular file are left out."""
    found = []
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    except OSError as error:
        raise AgonError(f"cannot list {folder}: {error.strerror or error}") from None
    for entry in entries:
        if entry.name.endswith(".json") and not entry.name.startswith("."):
            try:
                found_stat = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            # (an empty file is one whose first save was cut short: it holds no game)
            if stat.S_ISREG(found_stat.st_mode) and found_stat.st_size > 0:
                found.append((found_stat.st_mtime_ns, entry.name))
    return [folder / name for _, name in sorted(found, reverse=True)]


def latest_unfinished(folder: Path, game_name: str | None = None) -> SavedGame | None:
    """The most recently saved unfinished game (of ``game_name`` only, if given)."""
    for path in game_files(folder):
        saved = SavedGame.load(path)
        if saved.record is None or saved.record.finished is not None:
            continue
        if game_name in (None, saved.record.game.name):
            return saved
    return None
