"""What every hostile-input test asks of a command's answer (tests/test_hostile_*.py), and
the tally of inputs tried and tracebacks found, printed at the end of a run with ``-s``."""

from __future__ import annotations

from collections import Counter

from typer.testing import Result

TALLY: Counter[str] = Counter()


def unclean(result: Result, valid: tuple[int, ...] = ()) -> str | None:
    """What is wrong with an answer (None: nothing). Right is a valid result (exit status 0,
    or one of ``valid``) or a clean refusal: exit status 1 or 2 with a message (an exit the
    command chose, never an exception it let out), no traceback."""
    TALLY["inputs"] += 1
    escaped = result.exception is not None and not isinstance(result.exception, SystemExit)
    if escaped or "Traceback" in result.output:
        TALLY["tracebacks"] += 1
        return f"a traceback: {result.exception!r:.300}"
    if result.exit_code != 0:
        if result.exit_code not in (1, 2, *valid):
            return f"exit status {result.exit_code}: {result.output[-300:]!r}"
        if not (result.stderr.strip() or result.stdout.strip()):
            return f"exit status {result.exit_code} without a word of why"
    return None
