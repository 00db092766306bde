"""``agon serve``: the web arena (FastAPI on Uvicorn)."""

from __future__ import annotations

import shlex
import socket
from typing import Annotated

import typer

from agon.cli.common import fail
from agon.core.errors import AgonError, quoted

DATABASE_HELP = (
    "Database: an SQLAlchemy URL (sqlite:///path.db, postgresql://user@host/db) or an SQLite "
    "file path. Default: $AGON_DB, else ~/.local/share/agon/agon.db."
)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("serve")(serve)
    database = typer.Typer(
        help="The arena's database: its schema.", no_args_is_help=True, add_completion=False
    )
    database.command("upgrade")(upgrade)
    app.add_typer(database, name="db")


def database_error(error: Exception) -> str:
    """What the database's driver said, without SQLAlchemy's wrapping and link."""
    said = getattr(error, "orig", None) or error
    return f"{said.__class__.__name__}: {str(said).strip()}"


def listening_problem(host: str, port: int) -> str | None:
    """Why the arena could not listen on ``host`` at ``port`` (None: a trial shows it can), so
    that it is said before the arena starts, not after."""
    try:
        found = socket.getaddrinfo(  # "" is every address, as Uvicorn takes it
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except (socket.gaierror, UnicodeError) as problem:
        said = problem.strerror if isinstance(problem, socket.gaierror) else "not a host name"
        return f"--host {quoted(host)} is not an address to listen on: {said}"
    family, kind, protocol, _, address = found[0]
    with socket.socket(family, kind, protocol) as trial:
        trial.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Uvicorn's own
        try:
            trial.bind(address)
        except OSError as problem:
            return f"cannot listen on {host} port {port}: {problem.strerror or problem}"
    return None


def upgrade(
    database: Annotated[
        str | None,
        typer.Option("--database", "--db", help=DATABASE_HELP, show_default=False),
    ] = None,
) -> None:
    """Bring the arena's database to the newest schema (made if empty; every `agon serve`
    does this too as it starts). Safe to run while servers run, and from many hosts at once."""
    from sqlalchemy.exc import SQLAlchemyError

    from agon.web.config import database_url
    from agon.web.store import Store

    try:
        url = database_url(database)
    except AgonError as error:
        fail(str(error))
    shown = url.render_as_string()  # the password, if any, is hidden
    try:
        store = Store(url)
    except SQLAlchemyError as error:
        fail(f"cannot upgrade the database {shown}: {database_error(error)}")
    store.close()
    before, after = store.schema
    if before == after:
        typer.echo(f"{shown}: already at the newest schema ({after})")
    else:
        typer.echo(f"{shown}: schema {before or 'none (empty)'} → {after}")


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.", min=1, max=65535)] = 8000,
    db: Annotated[
        str | None,
        typer.Option("--database", "--db", help=DATABASE_HELP, show_default=False),
    ] = None,
    workers: Annotated[
        int, typer.Option(help="Processes that think for the computer.", min=1, max=32)
    ] = 2,
    games_per_minute: Annotated[
        int | None,
        typer.Option(
            help="New games one client address may start a minute "
            "(default: $AGON_GAMES_PER_MINUTE, else 20).",
            show_default=False,
        ),
    ] = None,
    hints_per_minute: Annotated[
        int | None,
        typer.Option(
            help="Hints one game may ask for a minute (default: $AGON_HINTS_PER_MINUTE, else 6).",
            show_default=False,
        ),
    ] = None,
    analyses_per_minute: Annotated[
        int | None,
        typer.Option(
            help="Analyses of positions one client address may ask for a minute "
            "(default: $AGON_ANALYSES_PER_MINUTE, else 120).",
            show_default=False,
        ),
    ] = None,
    reviews_per_minute: Annotated[
        int | None,
        typer.Option(
            help="Reviews of games one client address may start a minute "
            "(default: $AGON_REVIEWS_PER_MINUTE, else 6).",
            show_default=False,
        ),
    ] = None,
    trusted_proxies: Annotated[
        str | None,
        typer.Option(
            help="Addresses or networks of the proxies in front of the arena, comma-separated "
            "(or *), whose X-Forwarded-For is believed (default: $AGON_TRUSTED_PROXIES, else "
            "none: each client is the address it connects from).",
            show_default=False,
        ),
    ] = None,
    engines: Annotated[
        str | None,
        typer.Option(
            help="A TOML file of other programs (speaking GTP 2) to offer as computer levels "
            "(default: $AGON_ENGINES, else none); see docs/engine.md.",
            show_default=False,
        ),
    ] = None,
    engines_at_once: Annotated[
        int | None,
        typer.Option(
            help="Processes of those programs running at once, one for each game "
            "(default: $AGON_ENGINES_AT_ONCE, else 8).",
            show_default=False,
        ),
    ] = None,
    idle_days: Annotated[
        float | None,
        typer.Option(
            help="Days without a move after which an unfinished game is over, as abandoned "
            "(default: $AGON_IDLE_DAYS, else 7).",
            show_default=False,
        ),
    ] = None,
    ponder_seconds: Annotated[
        float | None,
        typer.Option(
            help="The longest the computer thinks on its opponent's time after each of its "
            "moves, while its worker has nothing else to do; 0: never "
            "(default: $AGON_PONDER_SECONDS, else 30).",
            show_default=False,
        ),
    ] = None,
    ws_compression: Annotated[
        bool | None,
        typer.Option(
            "--ws-compression/--no-ws-compression",
            help="Compress WebSocket messages where the browser offers to: an eighth of the "
            "bytes, for the server's time compressing each update once for each watcher "
            "(default: $AGON_WS_COMPRESSION, else on).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Play the games in the browser: against the computer, at one screen, or
    with a friend through a link."""
    import uvicorn
    from sqlalchemy.exc import SQLAlchemyError

    from agon.study.strongest import search_threads
    from agon.web.app import create_app
    from agon.web.config import ArenaLimits, database_url, server_options
    from agon.web.config import trusted_proxies as read_trusted_proxies
    from agon.web.config import ws_compression as read_ws_compression
    from agon.web.engines import configured_levels
    from agon.web.levels import LEVELS_BY_KEY

    try:
        url = database_url(db)
        limits = ArenaLimits.from_environment(
            games_per_minute=games_per_minute, hints_per_minute=hints_per_minute,
            analyses_per_minute=analyses_per_minute, reviews_per_minute=reviews_per_minute,
            idle_days=idle_days, engines_at_once=engines_at_once, ponder_seconds=ponder_seconds,
        )
        engine_levels = configured_levels(engines, LEVELS_BY_KEY)
        trusted = read_trusted_proxies(trusted_proxies)
        compression = read_ws_compression(ws_compression)
        search_threads()  # read by the thinking workers: a bad $AGON_THREADS is said now
    except AgonError as error:
        fail(str(error))
    problem = listening_problem(host, port)
    if problem is not None:
        fail(problem)
    shown = url.render_as_string()  # the password, if any, is hidden
    try:
        app = create_app(
            url, workers=workers, limits=limits, engine_levels=engine_levels,
            collect_rarely=True,
        )
    except SQLAlchemyError as error:
        fail(f"cannot open the database {shown}: {database_error(error)}")
    named = f"[{host}]" if ":" in host else host
    typer.echo(f"Agon arena on http://{named}:{port}/  (database: {shown})")
    for level in engine_levels:
        games = ", ".join(level.games) if level.games is not None else "every game"
        typer.echo(
            f"  level {level.key}: {level.label}, {shlex.join(level.engine.argv)}, "
            f"{level.engine.seconds} s a move ({games})"
        )
    uvicorn.run(
        app, host=host, port=port, log_level="info", **server_options(limits, trusted, compression)
    )
