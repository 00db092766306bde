"""A real arena server on a free local port, in a background thread, and headless Chromium:
for the browser tests and the screenshot scripts (docs/screenshots), not the program."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn

from agon.web.app import create_app
from agon.web.config import ArenaLimits, server_options
from agon.web.engines import EngineLevel


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def living_processes() -> dict[int, tuple[int, int, str]]:
    """The processes alive now (not zombies), by id: their parent, their process group and
    their command line (read from /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        # the fields after the command's name (in parentheses): state, parent, group, …
        state, parent, group = stat.rsplit(")", 1)[1].split()[:3]
        if state != "Z":
            found[int(entry.name)] = (int(parent), int(group), command)
    return found


class BackgroundServer:
    """``with BackgroundServer(db_path) as server: ... server.url ...``"""

    def __init__(
        self,
        db_path: str | Path,
        *,
        workers: int = 1,
        warm: bool = False,
        engine_levels: tuple[EngineLevel, ...] = (),
        limits: ArenaLimits | None = None,
        trusted: str = "",
        compression: bool = True,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.app = create_app(
            str(db_path), workers=workers, warm=warm, engine_levels=engine_levels,
            limits=limits,
        )
        config = uvicorn.Config(
            self.app, host="127.0.0.1", port=self.port, log_level="warning",
            **server_options(self.app.state.arena.limits, trusted, compression),
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="agon-server", daemon=True)

    def start(self) -> BackgroundServer:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the arena server did not start")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def launch_chromium(playwright: Any) -> Any:
    """Headless Chromium through Playwright: Debian's (``apt-get install chromium``) where it is
    installed, else Playwright's own download (``playwright install chromium``), as
    ``tools/system-packages browser`` provides one or the other."""
    executable = CHROMIUM if Path(CHROMIUM).exists() else None
    return playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)


class SocketsSeen:
    """The WebSockets a page opens (``page.on("websocket", …)``) and every frame they receive
    and send, as they come."""

    def __init__(self, page: Any) -> None:
        self.sockets: list[Any] = []
        self.frames: list[str | bytes] = []
        self.sent: list[str | bytes] = []
        """The frames the page sent."""
        page.on("websocket", self._opened)

    def _opened(self, socket: Any) -> None:
        self.sockets.append(socket)
        socket.on("framereceived", lambda frame: self.frames.append(frame))
        socket.on("framesent", lambda frame: self.sent.append(frame))

    def all_packed(self, path: str) -> bool:
        """Whether the page opened one socket, to ``path`` asking for packed messages, and each
        of its frames came packed (binary), at least one."""
        urls = [socket.url for socket in self.sockets]
        packed = all(isinstance(frame, bytes) for frame in self.frames)
        return urls == [f"{path}?compress=deflate"] and packed and bool(self.frames)
