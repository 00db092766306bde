"""Threads storing moves as fast as they can on one SQLite file, through the arena's store.

    .venv/bin/python docs/writers_bench.py THREADS [SECONDS]

Each thread plays a game of its own (Alak 5, a move at a time, each committed before the next)
for SECONDS (default 8); prints the writes a second of all together and the time a write took
(p50, p99, longest). Run it on two checkouts in turns (``PYTHONPATH=CHECKOUT/src``) to compare
them.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from agon.web.config import database_url
from agon.web.store import Outcome, Store


def main() -> None:
    threads = int(sys.argv[1])
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 8.0
    with tempfile.TemporaryDirectory() as folder:
        store = Store(database_url(str(Path(folder) / "writers.db")))
        seats: dict[str, dict[str, str | None]] = {"black": {"token": "t"},
                                                   "white": {"token": "t"}}
        latencies: list[float] = []
        gathering = threading.Lock()
        stop = time.monotonic() + seconds

        def write(game_id: str) -> None:
            store.create(game_id=game_id, game="alak", options={"size": 5}, mode="local",
                         seats=seats, host=None)
            revision, mine = 0, []
            while time.monotonic() < stop:
                started = time.perf_counter()
                revision = store.append_move(game_id, revision, revision + 1,
                                             str(revision + 1), Outcome())
                mine.append(time.perf_counter() - started)
            with gathering:
                latencies.extend(mine)

        writers = [threading.Thread(target=write, args=(f"game{index}",))
                   for index in range(threads)]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join()
        store.close()
    cuts = statistics.quantiles(latencies, n=100)
    print(f"{threads} threads: {len(latencies) / seconds:,.0f} writes a second; p50 "
          f"{cuts[49] * 1e3:.1f} / p99 {cuts[98] * 1e3:.1f} / longest "
          f"{max(latencies) * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
