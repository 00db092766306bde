"""Reading files within a size limit, and writing them so that what was saved before is never
lost.

Every file the terminal tools read (records, saved results, tables) is read through
:func:`read_limited`: only a regular file (never a device such as ``/dev/zero``, a pipe that
would block, a directory), and never more than its limit. Every file they write goes through
:func:`replace_file_with`: written beside the target, flushed to the disk, then put in the
target's place in one step, never over something that is not a regular file. A file that
several processes change by reading it and writing it back (entries of many variants, as the
trained weights and the calibrated levels) is changed under :func:`folder_locked`.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, BinaryIO

from agon.core.errors import AgonError, shortened

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words ("a directory", "a pipe", …)."""
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def read_limited(path: Path, limit: int, what: str = "a file Agon reads") -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``limit`` bytes; at most
    ``limit + 1`` bytes are ever read (a file that grows while read is still refused). Raises
    :class:`AgonError` with a one-line message naming the file and what is wrong: missing,
    not a regular file (``/dev/zero``, a pipe, a directory: opened without waiting, and not
    read), too large for ``what`` it should be, or unreadable."""
    try:
        # (O_NONBLOCK: opening a pipe with no writer would otherwise wait for one)
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise AgonError(f"cannot read {path}: no such file") from None
    except OSError as error:
        raise AgonError(f"cannot read {path}: {error.strerror or error}") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise AgonError(f"{path} is {kind_of(mode)}, not a regular file: it is not read")
    with os.fdopen(descriptor, "rb") as file:
        try:
            data = file.read(limit + 1)
        except OSError as error:
            raise AgonError(f"cannot read {path}: {error.strerror or error}") from None
    if len(data) > limit:
        raise AgonError(f"{path} is over {limit:,} bytes: too large to be {what}")
    return data


def read_text_limited(path: Path, limit: int, what: str = "a file Agon reads") -> str:
    """:func:`read_limited`, as UTF-8 text (:class:`AgonError` if it is not)."""
    try:
        return read_limited(path, limit, what).decode("utf-8")
    except UnicodeDecodeError:
        raise AgonError(f"{path} is not a text file (not UTF-8): not {what}") from None


def read_versioned_json(
    path: Path, limit: int, what: str, version: int, listing: str
) -> list[Any]:
    """The list ``listing`` of a JSON file of Agon's, ``{"format": version, listing: [...]}``,
    read with a size limit; :class:`AgonError` naming what is wrong with it."""
    try:
        found = json.loads(read_text_limited(path, limit, what))
    except json.JSONDecodeError as error:
        raise AgonError(f"{path} is not {what}: {error}") from None
    if not isinstance(found, dict) or found.get("format") != version:
        raise AgonError(f"{path} is not {what} of format {version}")
    listed = found.get(listing)
    if not isinstance(listed, list):
        raise AgonError(f"{path} is not {what}: it has no list of {listing}")
    return listed


def replace_file(target: Path, text: str) -> None:
    """Write ``text`` to ``target``, replacing it only once the new text is complete (see
    :func:`replace_file_with`). Raises ``OSError``."""
    replace_file_with(target, lambda file: file.write(text.encode("utf-8")))


def user_path(text: str | Path) -> Path:
    """The path a person wrote, ``~`` and ``~user`` expanded; :class:`AgonError` where it
    names a user who does not exist or holds a NUL byte (no file name can)."""
    if "\0" in str(text):
        raise AgonError(f"{shortened(str(text))!r} is no file name: it holds a NUL byte")
    try:
        return Path(text).expanduser()
    except RuntimeError:  # (~nosuchuser, or no home folder at all)
        user = str(text).split("/", 1)[0]
        raise AgonError(f"cannot find the home folder of {user} in {text}") from None


def writable_target(target: Path) -> Path:
    """The file a write to ``target`` replaces: ``target`` itself, or, where it is a symbolic
    link, the file the link names (written through, the link kept: a link is how people keep a
    file elsewhere). Raises ``OSError`` where that exists and is not a regular file (a device,
    a pipe, a directory), which replacing would destroy, or where the link goes round in a
    loop."""
    path = Path(target)
    if "\0" in str(path):
        raise OSError(errno.EINVAL, "a file name cannot hold a NUL byte")
    if path.is_symlink():
        try:
            path = path.resolve(strict=False)
        except (OSError, RuntimeError):  # (a loop of links)
            raise OSError(errno.ELOOP, "a loop of symbolic links") from None
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return path
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, f"it is {kind_of(mode)}, not a regular file: left as it is")
    return path


def replace_file_with(target: Path, write: Callable[[BinaryIO], object]) -> None:
    """Have ``write`` write ``target``'s new content, replacing it only once it is complete.

    The content goes to a temporary file of its own (so two writers never share one) beside
    the target, is flushed to the disk, then takes the target's place in one step, and the
    folder is flushed too: an interrupted or failed write (a crash of the machine included)
    leaves the old file or the new one, and no temporary file behind. A target that is a
    link is written through (:func:`writable_target`); one that is not a regular file is
    refused. Raises ``OSError``.
    """
    target = writable_target(target)
    descriptor, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(descriptor, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        # mkstemp makes the file private; keep the old file's permissions, or the usual ones
        os.chmod(temporary, target.stat().st_mode & 0o777 if target.exists() else 0o644)
        os.replace(temporary, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_folder(target.parent)


@contextmanager
def folder_locked(target: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``target``'s folder meanwhile, waiting for another
    process's to be let go, so that reading ``target``, changing it and writing it back is one
    step for every process that changes it this way (two calibrations of other variants that
    end together each keep their entry). The folder's lock, not the file's, since the file is
    replaced at each write and may not exist yet. Where the system has no such locks, or the
    folder cannot be opened, it goes on unlocked."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    try:
        descriptor = os.open(target.parent, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        yield
        return
    try:
        with suppress(OSError):  # (a file system without such locks: unlocked)
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # (closing lets the lock go)


def _sync_folder(folder: Path) -> None:
    """Flush a folder's entries (a rename is in its folder, not the file), where the system
    can (not on Windows, nor on some network file systems)."""
    with suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
