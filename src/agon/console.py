"""The ``agon`` command's entry point: it imports the command line inside, so that Ctrl-C while
the program is still loading, or before a command has set its own handling up, ends it quietly
(status 130), as it does once a command runs. Ctrl-C while a kernel compiles waits for it to be
built (:func:`agon.core.workers.held_while_compiling`), in every command."""

from __future__ import annotations

import signal
import sys


def main() -> None:
    try:
        from agon.core.workers import held_while_compiling

        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, held_while_compiling(signal.default_int_handler))
        from agon.cli import main as run

        run()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None
