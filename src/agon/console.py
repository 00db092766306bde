"""The ``agon`` command's entry point: it imports the command line inside, so that Ctrl-C while
the program is still loading, or before a command has set its own handling up, ends it quietly
(status 130), as it does once a command runs."""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from agon.cli import main as run

        run()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None
