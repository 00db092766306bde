"""Writing files so that what was saved before is never lost."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import BinaryIO


def replace_file(target: Path, text: str) -> None:
    """Write ``text`` to ``target``, replacing it only once the new text is complete (see
    :func:`replace_file_with`). Raises ``OSError``."""
    replace_file_with(target, lambda file: file.write(text.encode("utf-8")))


def replace_file_with(target: Path, write: Callable[[BinaryIO], object]) -> None:
    """Have ``write`` write ``target``'s new content, replacing it only once it is complete.

    The content goes to a temporary file of its own (so two writers never share one) beside
    the target, which then takes the target's place in one step: an interrupted or failed write
    leaves the old file as it was and no temporary file behind. Raises ``OSError``.
    """
    descriptor, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(descriptor, "wb") as file:
            write(file)
        # mkstemp makes the file private; keep the old file's permissions, or the usual ones
        os.chmod(temporary, target.stat().st_mode & 0o777 if target.exists() else 0o644)
        os.replace(temporary, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise
