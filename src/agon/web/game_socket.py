"""What a game's WebSocket takes from its client: a player's changes to the game, sent on the
socket that brings its updates, without an HTTP request each (docs/web.md, *Moves on the
game's socket*).

A message is JSON text, one change: ``{"type": "move", "move": "d4-d5", "revision": 12,
"token": "…", "id": 7}`` (``undo`` and ``resign`` without ``move``). It is made as the HTTP API
makes it (``POST /api/games/{id}/moves``, ``/undo``, ``/resign``: the same checks, the same
refusals), one message at a time, and answered on the socket as text, whatever packing the
socket's updates have: ``{"type": "done", "id": 7, "revision": 13}`` once the change is stored,
or ``{"type": "refused", "id": 7, "status": 409, "detail": "…"}`` with the HTTP status the API
would have answered and its words. ``id`` is the client's own (a whole number, or a text of
up to 64 characters), sent back as it came; the game's new view comes as every watcher's update.

A question may be asked too, ``{"type": "choices", "picked": ["c1"], "id": 8}``: what the places
picked make, answered ``{"type": "choices", "id": 8, "answer": …}`` with what ``GET
/api/games/{id}/choices`` answers, a read within the same limit for the client's address.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Annotated, Any, Literal

from fastapi import WebSocket
from pydantic import Field, PlainValidator, ValidationError

from agon.core.errors import AgonError
from agon.web.arena import Arena
from agon.web.bodies import ChangeBody
from agon.web.errors import error_status, validation_detail
from agon.web.guard import TooManyRequests, client_address
from agon.web.hub import SEND_SECONDS
from agon.web.replay import Loaded

log = logging.getLogger(__name__)

MAX_ID_CHARACTERS = 64


def message_id(given: Any) -> int | str | None:
    """A message's ``id`` as it came: a whole number (as JSON writes one), a text of up to
    :data:`MAX_ID_CHARACTERS`, or none; ValueError, in words, for anything else."""
    if given is None or (isinstance(given, int) and not isinstance(given, bool)):
        return given
    if isinstance(given, str) and len(given) <= MAX_ID_CHARACTERS:
        return given
    raise ValueError(f"an id is a whole number or a text of up to {MAX_ID_CHARACTERS} characters")


MessageId = Annotated[int | str | None, PlainValidator(message_id)]


class SocketMessage(ChangeBody):
    """A change a player sends on the game's socket, or a question (see the module's
    description): the token is the message's, as the HTTP API's is its request's
    ``X-Agon-Token`` header."""

    type: Literal["move", "undo", "resign", "choices"]
    move: str | None = Field(None, max_length=64)
    picked: list[Annotated[str, Field(max_length=16)]] | None = Field(None, max_length=16)
    token: str | None = Field(None, max_length=128)
    id: MessageId = None


async def take_changes(arena: Arena, socket: WebSocket, game_id: str, max_bytes: int) -> None:
    """Make the changes the socket sends, one at a time, each answered on it, until it goes
    (or stops reading its answers for :data:`~agon.web.hub.SEND_SECONDS`); a message over
    ``max_bytes`` closes the socket (1009: too big)."""
    while True:
        message = await socket.receive()
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if len(text if text is not None else message.get("bytes") or b"") > max_bytes:
            await socket.close(code=1009, reason=f"messages are limited to {max_bytes} bytes")
            return
        answer = await _answer(arena, game_id, text, client_address(socket.scope))
        try:
            async with asyncio.timeout(SEND_SECONDS):
                await socket.send_text(json.dumps(answer))
        except Exception:  # (gone, or not reading: its watcher's sender drops it too)
            return


async def _answer(
    arena: Arena, game_id: str, text: str | None, address: str
) -> dict[str, Any]:
    if text is None:
        return _refused(None, 400, "a message on a game's socket is JSON text, not binary")
    try:
        found = json.loads(text)
    except ValueError:
        return _refused(None, 400, "a message on a game's socket is JSON text")
    message_id = _message_id(found)
    try:
        message = SocketMessage.model_validate(found)
    except ValidationError as error:
        return _refused(message_id, 400, validation_detail(error.errors()))
    try:
        if message.type == "choices":
            return {"type": "choices", "id": message_id,
                    "answer": await _choices(arena, game_id, message, address)}
        loaded = await _make(arena, game_id, message)
    except TooManyRequests as error:
        refused = _refused(message_id, error_status(error), str(error))
        return {**refused, "retry_after": error.retry_after}
    except AgonError as error:
        return _refused(message_id, error_status(error), str(error))
    except Exception as error:  # (as the HTTP API answers one: said, logged, the socket kept)
        log.exception("unexpected error", exc_info=error)
        return _refused(message_id, 500, "the server failed; please try again")
    return {"type": "done", "id": message_id, "revision": loaded.stored.revision}


async def _choices(
    arena: Arena, game_id: str, question: SocketMessage, address: str
) -> dict[str, Any]:
    """What the places picked make, as ``GET /api/games/{id}/choices`` answers: a read of
    the API, within the same limit for the client's address."""
    if question.picked is None or question.move is not None:
        raise AgonError("bad request: picked: choices ask about the places picked, no move")
    arena.reads.take(address, "reads of the API")
    return await arena.choices(game_id, question.picked)


async def _make(arena: Arena, game_id: str, change: SocketMessage) -> Loaded:
    if change.picked is not None:
        raise AgonError(f"bad request: picked: {change.type} picks no places")
    if change.type == "move":
        if change.move is None:
            raise AgonError("bad request: move: a move needs its text (such as 'pass')")
        return await arena.play(game_id, change.token, change.move, change.revision)
    if change.move is not None:
        raise AgonError(f"bad request: move: {change.type} takes no move")
    if change.type == "undo":
        return await arena.undo(game_id, change.token, change.revision)
    return await arena.resign(game_id, change.token, change.revision)


def _message_id(found: object) -> int | str | None:
    """The message's ``id`` where it is one a refusal can send back, else None."""
    try:
        return message_id(found.get("id")) if isinstance(found, dict) else None
    except ValueError:
        return None


def _refused(message_id: int | str | None, status: int, detail: str) -> dict[str, Any]:
    return {"type": "refused", "id": message_id, "status": status, "detail": detail}
