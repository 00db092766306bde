"""How late the arena's event loop answers other work while a crowd's updates go out
(docs/web.md, *A crowd on one board*). A benchmark, never a test: ``.venv/bin/python
docs/crowd_bench.py``; to compare two checkouts, run it with each one's ``src`` first on
``PYTHONPATH``, in turns.

2,000 watchers of one game, each send compressing the update with a compressor of its own as
permessage-deflate does (a view of about 19 KB; watchers who ask for packed updates, as the
page does, share one compression instead: *Packed updates*); ten updates, 0.3 s apart. A
probe asks to be woken every 2 ms and records how late it is: what a move of another game
would wait.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import zlib

from agon.web.hub import Hub, Update

WATCHERS = 2000
UPDATES = 10
VIEW = "".join(random.Random(1).choice("<rect x='1' y='2'/>abcdefgh") for _ in range(19_000))


class CompressingWatcher:
    """A WebSocket whose sends cost what a compressed one does."""

    def __init__(self) -> None:
        self.compressor = zlib.compressobj(wbits=-15)
        self.sent = 0

    async def send_text(self, text: str) -> None:
        self.compressor.compress(text.encode())
        self.compressor.flush(zlib.Z_SYNC_FLUSH)
        self.sent += 1

    async def close(self, code: int, reason: str) -> None:
        pass


async def measure() -> list[float]:
    hub = Hub()
    crowd = [CompressingWatcher() for _ in range(WATCHERS)]
    for watcher in crowd:
        hub.join("g", watcher)  # type: ignore[arg-type]
    lateness: list[float] = []
    done = asyncio.Event()

    async def probe() -> None:
        while not done.is_set():
            asked = time.perf_counter()
            await asyncio.sleep(0.002)
            lateness.append(time.perf_counter() - asked - 0.002)

    probing = asyncio.create_task(probe())
    for revision in range(1, UPDATES + 1):
        hub.broadcast("g", Update({"revision": revision, "view": VIEW}), revision)
        await asyncio.sleep(0.3)
    while any(watcher.sent == 0 for watcher in crowd):
        await asyncio.sleep(0.01)
    done.set()
    await probing
    return sorted(lateness)


def main() -> None:
    lateness = asyncio.run(measure())
    count = len(lateness)
    p50, p99, worst = (1000 * lateness[i] for i in (count // 2, int(count * 0.99), -1))
    print(json.dumps({"watchers": WATCHERS, "updates": UPDATES, "probe_late_ms": {
        "p50": round(p50, 1), "p99": round(p99, 1), "max": round(worst, 1)}}))


if __name__ == "__main__":
    main()
