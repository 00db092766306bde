"""``agon serve`` with a probe of its event loop: how late the loop answers other work, which is
what every other request waits for (docs/web.md, *Packed updates*). A benchmark's tool, never a
test:

    PROBE_OUT=/tmp/probe.json .venv/bin/python docs/serve_probed.py serve --port 8765 ...

takes ``agon``'s arguments. A task asks to be woken every 2 ms and records how late it is;
when the server stops (Ctrl-C), PROBE_OUT gets the lateness's p50, p99 and longest in
milliseconds, and the eight longest with the second of the run they began at (the first 100
wakings, the server starting, left out), and the garbage collector's work: for each
generation, its collections, their milliseconds in all and the longest, and each full
collection's second and milliseconds (docs/web.md, *Full collections*). Run it with each
checkout's ``src`` first on ``PYTHONPATH`` to compare them.
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import json
import os
import sys
import time
from typing import Any

import uvicorn

from agon.console import main

PERIOD = 0.002
started = time.perf_counter()
late: list[tuple[float, float]] = []
"""(seconds since the start, how late the probe was woken), each waking."""
serve_started = uvicorn.Server.startup
collections: list[tuple[float, int, float]] = []
"""(seconds since the start, generation, seconds it took), each garbage collection."""
_collecting: list[float] = []


def _gauge_collections(phase: str, info: dict[str, Any]) -> None:
    now = time.perf_counter()
    if phase == "start":
        _collecting[:] = [now]
    elif _collecting:
        collections.append((_collecting[0] - started, info["generation"], now - _collecting[0]))


async def _probe() -> None:
    while True:
        asked = time.perf_counter()
        await asyncio.sleep(PERIOD)
        late.append((asked - started, time.perf_counter() - asked - PERIOD))


async def _startup_with_probe(self: uvicorn.Server, *args: Any, **kwargs: Any) -> None:
    await serve_started(self, *args, **kwargs)
    self.probe = asyncio.get_running_loop().create_task(_probe())  # type: ignore[attr-defined]


def _report() -> None:
    out = os.environ.get("PROBE_OUT")
    measured = late[100:]
    if not out or not measured:
        return
    ordered = sorted(lateness for _, lateness in measured)
    count = len(ordered)
    worst = sorted(measured, key=lambda pair: -pair[1])[:8]
    with open(out, "w") as file:
        json.dump({
            "wakings": count,
            "late_ms": {"p50": round(1000 * ordered[count // 2], 1),
                        "p99": round(1000 * ordered[int(count * 0.99)], 1),
                        "max": round(1000 * ordered[-1], 1)},
            "longest": [[round(at, 2), round(1000 * lateness, 1)] for at, lateness in worst],
            "collections": {
                str(generation): {
                    "count": len(taken),
                    "ms": round(1000 * sum(taken), 1),
                    "longest_ms": round(1000 * max(taken, default=0.0), 1),
                }
                for generation in (0, 1, 2)
                for taken in [[took for _, made, took in collections if made == generation]]
            },
            "full_collections": [[round(at, 2), round(1000 * took, 1)]
                                 for at, made, took in collections if made == 2],
        }, file)


if __name__ == "__main__":
    uvicorn.Server.startup = _startup_with_probe  # type: ignore[method-assign]
    atexit.register(_report)
    gc.callbacks.append(_gauge_collections)
    sys.argv = ["agon", *sys.argv[1:]]
    main()
