"""The requests the arena refuses, each with the HTTP status that says why."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agon.core.errors import AgonError, IllegalMove


class ArenaError(AgonError):
    """A request the arena refuses; ``status`` is the HTTP status that says why."""

    status = 400


class NotFound(ArenaError):
    status = 404


class Forbidden(ArenaError):
    status = 403


class Conflict(ArenaError):
    status = 409


def error_status(error: AgonError) -> int:
    """The HTTP status of a refusal: the arena's own, 422 for an illegal move, else 400."""
    if isinstance(error, IllegalMove):
        return 422
    return error.status if isinstance(error, ArenaError) else 400


def validation_detail(problems: Iterable[Mapping[str, Any]]) -> str:
    """What is wrong with a request's body, in words, from pydantic's list of errors (each
    named by where it is, the body's own name left out)."""
    said = []
    for item in problems:
        where = ".".join(str(part) for part in item.get("loc", ()) if part != "body")
        said.append(f"{where}: {item.get('msg', 'invalid')}" if where else item["msg"])
    return "bad request: " + "; ".join(said)
