"""The FastAPI application: pages, the JSON API, and a WebSocket per game.

Players prove their seat with the secret token of their link, sent as the ``X-Agon-Token``
header. Every error is a JSON ``{"detail": "..."}`` in words a player understands.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from importlib import resources
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Header, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from sqlalchemy.engine import URL
from starlette.exceptions import HTTPException as StarletteHTTPException

from agon.core.errors import AgonError, quoted
from agon.core.game import State
from agon.core.records import parse_json
from agon.core.texts import LANGUAGE_NAMES
from agon.games import plugins, words
from agon.web import config, pages, views
from agon.web.arena import Arena, NewGame
from agon.web.bodies import ChangeBody, MoveBody, revision_of
from agon.web.config import ArenaLimits, database_url
from agon.web.engines import EngineLevel, configured_levels
from agon.web.errors import Conflict, NotFound, error_status, validation_detail
from agon.web.game_socket import take_changes
from agon.web.guard import (
    BodyLimit,
    RateLimit,
    ReadLimit,
    SecurityHeaders,
    TooManyRequests,
    client_address,
)
from agon.web.hub import PACKED, SEAT_PROTOCOL, Update, asks_packed, packings_asked
from agon.web.levels import DEFAULT_LEVEL, LEVELS_BY_KEY
from agon.web.seats import COLOURS
from agon.web.store import Store
from agon.web.study import MAX_POSITION_TEXT, MAX_STUDY_MOVES, Line, read_line, read_record

log = logging.getLogger(__name__)

Token = Annotated[str | None, Header(alias="X-Agon-Token")]
MAX_LIST = 50
MAX_RECORD_TEXT = 60_000
"""The longest record text the study reads (within the request body's limit)."""


class NewGameBody(BaseModel):
    game: str = Field(max_length=32)
    options: dict[str, Any] = Field(default_factory=dict, max_length=16)
    opponent: Literal["computer", "local", "friend"] = "computer"
    level: str = Field(DEFAULT_LEVEL, max_length=32)
    colour: Literal["black", "white", "random"] = "black"


Text64 = Annotated[str, Field(max_length=64)]


class LineBody(BaseModel):
    """A line to study: a variant, a start position (its position text; none: the game's
    start) and moves from it."""

    game: str = Field(max_length=32)
    options: dict[str, Any] = Field(default_factory=dict, max_length=16)
    position: str | None = Field(None, max_length=MAX_POSITION_TEXT)
    moves: list[Text64] = Field(default_factory=list, max_length=MAX_STUDY_MOVES)


class StudyChoicesBody(LineBody):
    picked: list[Annotated[str, Field(max_length=16)]] = Field(min_length=1, max_length=16)
    """The board places picked so far, by name, in order."""


class ReviewBody(LineBody):
    players: dict[str, Text64] = Field(default_factory=dict, max_length=2)
    """Who played Black and White (names shown in the review)."""


class RecordBody(BaseModel):
    record: str = Field(max_length=MAX_RECORD_TEXT)
    """An Agon record's JSON text, as the arena exports it."""


class ErrorBody(BaseModel):
    """Every refusal: what is wrong, in words a player understands."""

    detail: str


ERROR_MEANINGS = {
    400: "The request is malformed: a parameter, option or move text is not understood.",
    403: "The token holds no seat that may do this (or hints in a game between people).",
    404: "There is no such game (or no rules for such a game).",
    409: "Not now: not your turn, the game is over, or it changed meanwhile.",
    413: "The request body is over the limit.",
    422: "The move is against the rules (the detail says why).",
    429: "Over a rate limit; the Retry-After header says when to try again.",
}


def refusals(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI responses of a route's refusals (the 400 of a request that does not parse
    is added to every route by :func:`_document_refusals`)."""
    return {
        status: {"model": ErrorBody, "description": ERROR_MEANINGS[status]}
        for status in statuses
    }


def create_app(
    db: str | URL | None = None,
    *,
    workers: int = 2,
    executor: str = "process",
    warm: bool = True,
    limits: ArenaLimits | None = None,
    engine_levels: tuple[EngineLevel, ...] | None = None,
    collect_rarely: bool = False,
) -> FastAPI:
    """The arena on database ``db`` (a URL or SQLite path; default: see ``config``).

    ``executor`` is ``process`` (agents in worker processes, the default) or ``thread``;
    ``warm`` loads the agents' compiled kernels in each worker at startup (slow only the first
    time, when Numba compiles them); ``limits``: what one client may ask (default: from the
    environment, see :class:`ArenaLimits`); ``engine_levels``: other programs offered as
    computer levels (default: those of ``$AGON_ENGINES``, see :mod:`agon.web.engines`);
    ``collect_rarely``: once started, the garbage collector leaves the objects made so far out
    of its full collections, and makes those rarely (:func:`config.collect_rarely`): for a
    server process, not for one that makes many apps.
    """
    url = db if isinstance(db, URL) else database_url(db)
    limits = limits or ArenaLimits.from_environment()
    if engine_levels is None:
        engine_levels = configured_levels(None, LEVELS_BY_KEY)
    arena = Arena(
        Store(url), workers=workers, executor=executor, warm=warm, limits=limits,
        engine_levels=engine_levels,
    )

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        arena.start()
        if collect_rarely:
            config.collect_rarely()
        yield
        await arena.close()

    app = FastAPI(
        title="Agon arena",
        summary="Play the games of Agon in the browser",
        lifespan=lifespan,
        docs_url="/api/docs",
        openapi_url="/api/openapi.json",
        redoc_url=None,
    )
    app.state.arena = arena
    static = resources.files("agon.web") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    _add_error_handlers(app)
    _add_pages(app, arena)
    _add_api(app, arena, RateLimit(limits.games_per_minute))
    _add_study(app, arena)
    _document_refusals(app)
    app.add_middleware(BodyLimit, max_bytes=limits.body_bytes)
    app.add_middleware(ReadLimit, reads=arena.reads)
    app.add_middleware(SecurityHeaders)  # (the outermost: on BodyLimit's refusals too)
    return app


def _add_error_handlers(app: FastAPI) -> None:
    def wants_html(request: Request) -> bool:
        return not request.url.path.startswith(("/api", "/ws", "/static"))

    @app.exception_handler(AgonError)
    async def agon_error(request: Request, error: AgonError) -> Response:
        status = error_status(error)
        headers = (
            {"Retry-After": str(error.retry_after)} if isinstance(error, TooManyRequests) else None
        )
        if wants_html(request):
            page = pages.error_page("Not here", str(error))
            return HTMLResponse(page, status_code=status, headers=headers)
        return JSONResponse({"detail": str(error)}, status_code=status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def bad_request(_request: Request, error: RequestValidationError) -> Response:
        return JSONResponse({"detail": validation_detail(error.errors())}, status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> Response:
        if wants_html(request) and error.status_code == 404:
            message = "There is no page at this address."
            return HTMLResponse(pages.error_page("Not found", message), status_code=404)
        headers = error.headers
        if error.status_code == 405:  # (every route of the path, not only the one tried)
            headers = {"Allow": ", ".join(_methods_at(app, request.url.path))}
        return JSONResponse(
            {"detail": str(error.detail)}, status_code=error.status_code, headers=headers
        )

    @app.exception_handler(Exception)
    async def unexpected(_request: Request, error: Exception) -> Response:
        log.exception("unexpected error", exc_info=error)
        return JSONResponse({"detail": "the server failed; please try again"}, status_code=500)


def _methods_at(app: FastAPI, path: str) -> list[str]:
    """The HTTP methods the routes at ``path`` answer."""
    return sorted({
        method
        for route in app.routes
        if isinstance(route, APIRoute) and route.path_regex.match(path)
        for method in route.methods or ()
    })


def _known_game(game: str, what: str = "rules") -> str:
    """``game`` if a plugin has it; else :class:`NotFound`, naming the games there are
    ``what`` for."""
    if game not in plugins():
        known = " and ".join(plugins())
        raise NotFound(f"there are {what} for {known}, not for {quoted(game)}")
    return game


def _add_pages(app: FastAPI, arena: Arena) -> None:
    def page(path: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """A page's route: GET, and HEAD (a link checker's or a monitor's question)."""
        return app.api_route(
            path, methods=["GET", "HEAD"], response_class=HTMLResponse, include_in_schema=False
        )

    @page("/")
    async def lobby() -> str:
        return pages.lobby_page()

    @page("/game/{game_id}")
    async def game_page(game_id: str) -> str:
        loaded = await arena.load(game_id)
        return pages.game_page(game_id, loaded.game.description)

    @page("/analysis")
    async def analysis_page() -> str:
        return pages.analysis_page(None, "Analysis board")

    @page("/analysis/{game_id}")
    async def game_analysis_page(game_id: str) -> str:
        loaded = await arena.load(game_id)
        return pages.analysis_page(game_id, f"{loaded.game.description}: review")

    @app.get("/puzzles", include_in_schema=False)
    async def puzzles_first() -> Response:
        return RedirectResponse(f"/puzzles/{next(iter(plugins()))}", status_code=303)

    @page("/puzzles/{game}")
    async def puzzles_page(game: str) -> str:
        return pages.puzzles_page(_known_game(game.lower(), "puzzles"))

    @page("/rules/{game}")
    async def rules_page(request: Request, game: str, lang: str | None = None) -> Response:
        """The rules of a game, of the variant its options in the query name."""
        variant = pages.rules_variant(_known_game(game), request.query_params)
        chosen = pages.pick_language(lang, request.cookies.get(pages.LANG_COOKIE), variant)
        response = HTMLResponse(pages.rules_page(variant, chosen))
        if lang is not None and chosen == lang.lower():
            response.set_cookie(pages.LANG_COOKIE, chosen, max_age=365 * 86400, samesite="lax")
        return response

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> Response:
        icon = (resources.files("agon.web") / "static" / "favicon.svg").read_bytes()
        return Response(icon, media_type="image/svg+xml")


def _add_api(app: FastAPI, arena: Arena, new_games: RateLimit) -> None:
    @app.get("/api/meta")
    async def meta() -> dict[str, Any]:
        """Games, their default options, the computer's levels and the rules' languages."""
        return {
            "games": {
                name: {
                    "title": found.title,
                    "summary": {lang: said.summary for lang, said in words(name).items()},
                    "click_help": views.click_help(name),
                    "defaults": found.make().options(),
                    "options": [
                        option.describe()
                        for option in found.game.option_specs if not option.shortcut
                    ],
                }
                for name, found in plugins().items()
            },
            "levels": arena.levels(),
            "calibrated_levels": arena.calibrated_levels(),
            "default_level": DEFAULT_LEVEL,
            "languages": LANGUAGE_NAMES,
        }

    @app.post("/api/games", status_code=201, responses=refusals(413, 429))
    async def create_game(request: Request, body: NewGameBody) -> dict[str, Any]:
        """Start a game; the answer holds your seat's token (and a friend's, for a link game).
        Each client address may start a limited number of games a minute."""
        new_games.take(request.client.host if request.client else "", "new games")
        created = await arena.create(
            NewGame(body.game, body.options, body.opponent, body.level, body.colour)
        )
        return {
            "id": created.game_id,
            "token": created.token,
            "invite_token": created.invite_token,
            "colour": created.colour,
            "url": f"/game/{created.game_id}#token={created.token}",
            "invite_url": (
                f"/game/{created.game_id}#token={created.invite_token}"
                if created.invite_token
                else None
            ),
            "watch_url": f"/game/{created.game_id}",
        }

    @app.get("/api/games")
    async def list_games(
        status: Literal["active", "over", "all"] = "active",
        ids: Annotated[str | None, Query(max_length=2000)] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_LIST)] = 20,
    ) -> dict[str, Any]:
        """Recent games (to watch), or the games named in ``ids`` (comma-separated)."""
        if ids is not None:
            wanted = [part for part in ids.split(",") if part][:MAX_LIST]
            return {"games": await arena.many(wanted)}
        return {"games": await arena.recent(None if status == "all" else status, limit)}

    @app.get("/api/games/{game_id}", responses=refusals(404))
    async def get_game(game_id: str, token: Token = None) -> dict[str, Any]:
        loaded = await arena.load(game_id)
        arena.computer.ensure_thinking(loaded)
        return arena.seat_view(loaded, token)

    @app.post("/api/games/{game_id}/moves", responses=refusals(403, 404, 409, 413, 422))
    async def play(game_id: str, body: MoveBody, token: Token = None) -> dict[str, Any]:
        """Play a move in the game's notation (``d4-d5``, ``3``, ``pass``)."""
        return arena.seat_view(await arena.play(game_id, token, body.move, body.revision), token)

    @app.post("/api/games/{game_id}/pass", responses=refusals(403, 404, 409, 422))
    async def pass_turn(
        game_id: str, body: ChangeBody | None = None, token: Token = None
    ) -> dict[str, Any]:
        return arena.seat_view(await arena.play(game_id, token, "pass", revision_of(body)), token)

    @app.post("/api/games/{game_id}/undo", responses=refusals(403, 404, 409))
    async def undo(
        game_id: str, body: ChangeBody | None = None, token: Token = None
    ) -> dict[str, Any]:
        """Take back your last move (and the computer's answer): not in games between links."""
        return arena.seat_view(await arena.undo(game_id, token, revision_of(body)), token)

    @app.post("/api/games/{game_id}/resign", responses=refusals(403, 404, 409))
    async def resign(
        game_id: str, body: ChangeBody | None = None, token: Token = None
    ) -> dict[str, Any]:
        return arena.seat_view(await arena.resign(game_id, token, revision_of(body)), token)

    @app.get("/api/games/{game_id}/choices", responses=refusals(404))
    async def choices(
        game_id: str, picked: Annotated[str, Query(max_length=200)]
    ) -> dict[str, Any]:
        """What the board places picked so far (names, comma-separated, in order) make: a
        move, or the places that can come next and whether a legal move goes through each."""
        names = [name for name in picked.split(",") if name][:16]
        return await arena.choices(game_id, names)

    @app.get("/api/games/{game_id}/hint", responses=refusals(403, 404, 409, 429))
    async def hint(game_id: str, token: Token = None) -> dict[str, Any]:
        """The computer's suggestion for the player to move (players only, on their turn)."""
        return await arena.hint(game_id, token)

    @app.get("/api/games/{game_id}/review", responses=refusals(404, 409, 429))
    async def review(request: Request, game_id: str) -> dict[str, Any]:
        """The review of a game that is over, move by move (for its players and watchers
        alike): ``status`` ``running`` (``done`` of ``total`` positions), ``done`` (with
        ``review``) or ``failed``. The first request starts it (counted against the client's
        reviews a minute); later ones, from anyone, share it."""
        return await arena.review(game_id, client_address(request.scope))

    @app.get("/api/games/{game_id}/record", responses=refusals(404))
    async def record(game_id: str) -> Response:
        """The game record (Agon record JSON, replayable with ``agon replay``)."""
        game_record = await arena.record(game_id)
        filename = f"agon-{game_record.game.name}-{game_id}.json"
        return Response(
            game_record.to_json(),
            media_type="application/json",
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
        )

    @app.get("/api/rules/{game}", responses=refusals(404))
    async def rules(request: Request, game: str, lang: str = "en") -> dict[str, str]:
        """The rules of a game as HTML, of the variant its options in the query name, in one
        of the languages its rules are written in."""
        variant = pages.rules_variant(_known_game(game), request.query_params)
        chosen = pages.pick_language(lang, None, variant)
        return {"game": game, "lang": chosen, "html": pages.rules_html(variant, chosen)}

    @app.websocket("/ws/games/{game_id}")
    async def watch(socket: WebSocket, game_id: str) -> None:
        """Sends the game's view now and after every change, packed where the query asks
        (``?compress=deflate``: binary messages, each a zlib stream of the JSON text); takes
        a player's changes (:mod:`agon.web.game_socket`)."""
        async with _admitted(arena, socket, game_id) as admitted:
            if not admitted:
                return
            packed = await _packing(socket)
            if packed is None:
                return
            # Join before reading, so no change falls between; the client drops stale revisions.
            arena.hub.join(game_id, socket, packed)
            try:
                try:
                    loaded = await arena.load(game_id)
                except NotFound as error:
                    await socket.close(code=4404, reason=close_reason(str(error)))
                    return
                await arena.update(loaded).send(socket, packed)
                arena.computer.ensure_thinking(loaded)
                with arena.following(game_id, loaded.stored.revision):
                    await take_changes(arena, socket, game_id, arena.limits.message_bytes)
            except WebSocketDisconnect:
                pass
            finally:
                arena.hub.leave(game_id, socket)


async def _packing(socket: WebSocket) -> bool | None:
    """Whether a WebSocket asks for its messages packed (``?compress=deflate``: each a binary
    message, a zlib stream of the JSON text); None where it asks for another packing, which is
    refused: the socket is closed, 4400, saying so."""
    query = socket.scope["query_string"].decode("latin-1")
    asked, packed = packings_asked(query), asks_packed(query)
    if asked and not packed:
        said = f"the one packing offered is {PACKED}, not compress={','.join(asked)}"
        await socket.close(code=4400, reason=close_reason(said))
        return None
    return packed


CLOSE_REASON_BYTES = 123
"""The longest reason a WebSocket's close frame carries, in bytes of UTF-8 (RFC 6455: 125 bytes
of payload, the code's two among them)."""


def close_reason(text: str) -> str:
    """``text`` cut to fit a close frame, between whole characters, "…" marking the cut (a
    reason that names what a client sent could be longer: the frame would not be sent)."""
    encoded = text.encode()
    if len(encoded) <= CLOSE_REASON_BYTES:
        return text
    return encoded[: CLOSE_REASON_BYTES - len("…".encode())].decode(errors="ignore") + "…"


@asynccontextmanager
async def _admitted(
    arena: Arena, socket: WebSocket, game_id: str | None
) -> AsyncIterator[bool]:
    """Accept the WebSocket, held within the caps of its client's address and its game
    (:class:`~agon.web.guard.OpenSockets`; a socket that offers :data:`SEAT_PROTOCOL` with a
    seat of the game is outside the game's) while the block runs; False where it is over one:
    it is then closed at once, 1013 (try again later), saying which."""
    offered = [name for name in socket.scope.get("subprotocols", ())
               if name.startswith(SEAT_PROTOCOL)][:1]
    seat = bool(offered) and game_id is not None and await arena.holds_a_seat(
        game_id, offered[0].removeprefix(SEAT_PROTOCOL))
    counted_on = None if seat else game_id
    with arena.sockets.held(client_address(socket.scope), counted_on) as refusal:
        await socket.accept(subprotocol=offered[0] if offered else None)
        if refusal is not None:
            await socket.close(code=1013, reason=refusal)
            yield False
            return
        yield True


def _line(body: LineBody) -> Line:
    return read_line(body.game, body.options, body.position, list(body.moves))


def _add_study(app: FastAPI, arena: Arena) -> None:
    study = arena.study

    @app.post("/api/study/position", responses=refusals(404, 413, 422))
    async def study_position(body: LineBody) -> dict[str, Any]:
        """The position a line reaches, every move checked by the rules: the board SVG, whose
        turn it is, the legal moves, the end and the score, and the position's text."""
        line = _line(body)
        state, movers = line.final()
        return views.position_view(state, line.start, movers)

    @app.post("/api/study/choices", responses=refusals(404, 409, 413, 422))
    async def study_choices(body: StudyChoicesBody) -> dict[str, Any]:
        """What the board places picked so far make in the position a line reaches, as
        ``GET /api/games/{id}/choices`` answers for a game."""
        state, _ = _line(body).final()
        if state.is_over:
            raise Conflict("the game is over: no move can be made")
        return views.choices_for(state, list(body.picked))

    @app.post("/api/study/analysis", responses=refusals(404, 413, 422, 429))
    async def study_analysis(request: Request, body: LineBody) -> dict[str, Any]:
        """A short analysis of the position a line reaches: its value (Black's margin, komi
        included; exact where solved) in words, the best moves, every legal move's value where
        the position is solved, and a line of best play. ``WS /ws/analysis`` refines it."""
        return await study.analyse(_line(body), client_address(request.scope))

    @app.post("/api/study/record", responses=refusals(413))
    async def study_record(body: RecordBody) -> dict[str, Any]:
        """An Agon record (its JSON text) read and every move checked: the line it holds, its
        players and its result."""
        return read_record(body.record)

    @app.post("/api/study/review", responses=refusals(404, 413, 422, 429))
    async def study_review(request: Request, body: ReviewBody) -> dict[str, Any]:
        """The review of a line (an imported game), as ``GET /api/games/{id}/review``: ask
        again until its ``status`` is ``done``."""
        players = {colour: body.players.get(colour, "?") for colour in COLOURS}
        return study.review(_line(body), players, client_address(request.scope))

    @app.get("/api/puzzles/{game}", responses=refusals(404))
    async def puzzle(
        game: str, after: Annotated[str | None, Query(max_length=100)] = None
    ) -> dict[str, Any]:
        """The game's next puzzle (after the one whose key ``after`` gives): its position and
        goal, not its answer (``status`` ``ready``); or, where the game has none yet, that
        some are being found (``finding``: ask again) or none were (``none``)."""
        return await arena.puzzles.next(_known_game(game.lower(), "puzzles"), after)

    @app.post("/api/puzzles/{game}/{key}/moves", responses=refusals(404, 413, 422))
    async def puzzle_move(game: str, key: str, body: MoveBody) -> dict[str, Any]:
        """Try a move in a puzzle: whether it is the answer, its exact value in words, and the
        line that follows it (the answer's to the end, or the refutation), with the board after
        each of its moves."""
        return await arena.puzzles.attempt(_known_game(game.lower(), "puzzles"), key, body.move)

    @app.websocket("/ws/analysis")
    async def analysis_socket(socket: WebSocket) -> None:
        """Analyses refined round after round: the client sends ``{"type": "analyse", "id",
        "game", "options", "position"}`` (a new one replaces the last) or ``{"type":
        "stop"}``; the server sends ``analysis`` messages (``thinking``: more to come),
        ``stopped``, ``busy`` (over the rate, with ``retry_after``) or ``error``, packed where
        the query asks (as ``/ws/games/{id}``)."""
        async with _admitted(arena, socket, None) as admitted:
            if not admitted:
                return
            packed = await _packing(socket)
            if packed is None:
                return
            client = client_address(socket.scope)
            sending = asyncio.Lock()
            current: asyncio.Task[None] | None = None

            async def send(message: dict[str, Any]) -> None:
                async with sending:
                    await Update(message).send(socket, packed)

            async def refine(state: State, request: Any) -> None:
                try:
                    await study.refine(state, client, send, request)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("an analysis failed")
                    with suppress(Exception):
                        await send({"type": "error", "id": request,
                                    "detail": "the analysis failed; please try again"})

            try:
                while True:
                    message = await socket.receive()
                    if message["type"] == "websocket.disconnect":
                        return
                    data = message.get("text") or message.get("bytes") or b""
                    if len(data) > arena.limits.message_bytes:
                        await socket.close(
                            code=1009,
                            reason=f"messages are limited to {arena.limits.message_bytes} bytes",
                        )
                        return
                    if current is not None:
                        current.cancel()
                        current = None
                    request: Any = None
                    try:
                        kind, request, state = _analysis_request(data)
                    except AgonError as error:
                        await send({"type": "error", "id": request, "detail": str(error)})
                        continue
                    if kind == "stop" or state is None:
                        await send({"type": "stopped", "id": request})
                        continue
                    current = asyncio.create_task(refine(state, request))
            except WebSocketDisconnect:
                pass
            finally:
                if current is not None:
                    current.cancel()


def _analysis_request(data: str | bytes) -> tuple[str, Any, State | None]:
    """What a message to ``/ws/analysis`` asks: (``analyse`` or ``stop``, its id, the position
    to analyse); an AgonError in words where it is not understood."""
    if isinstance(data, bytes):
        try:
            data = data.decode()
        except UnicodeDecodeError:
            raise AgonError("messages are JSON text") from None
    found = parse_json(data, max_depth=4)
    if not isinstance(found, dict):
        raise AgonError("a message is a JSON object")
    request = found.get("id")
    if not (request is None or type(request) is int or isinstance(request, str)):
        raise AgonError("'id' is a number or a text")
    if isinstance(request, str):
        request = request[:64]
    kind = found.get("type")
    if kind == "stop":
        return "stop", request, None
    if kind != "analyse":
        raise AgonError("'type' is 'analyse' or 'stop'")
    game, options, position = found.get("game"), found.get("options", {}), found.get("position")
    if not isinstance(game, str) or not isinstance(options, dict) or len(options) > 16:
        raise AgonError("'game' names a game, 'options' is an object of its options")
    if position is not None and not isinstance(position, str):
        raise AgonError("'position' is a position text")
    return "analyse", request, read_line(game, options, position, []).first


def _document_refusals(app: FastAPI) -> None:
    """Have the OpenAPI schema say what the API answers a request that does not parse: 400
    with an :class:`ErrorBody` (FastAPI would document its own 422, which this API keeps for
    illegal moves), on every route."""
    make_schema = app.openapi

    def schema() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = make_schema()
        error_reference = {"$ref": "#/components/schemas/ErrorBody"}
        for operations in document["paths"].values():
            for operation in operations.values():
                responses = operation["responses"]
                validation = responses.get("422", {})
                if "HTTPValidationError" in json.dumps(validation):
                    del responses["422"]
                responses["400"] = {
                    "description": ERROR_MEANINGS[400],
                    "content": {"application/json": {"schema": error_reference}},
                }
        for unused in ("HTTPValidationError", "ValidationError"):
            document["components"]["schemas"].pop(unused, None)
        app.openapi_schema = document
        return document

    app.openapi = schema  # type: ignore[method-assign]
