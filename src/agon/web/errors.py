"""The requests the arena refuses, each with the HTTP status that says why."""

from __future__ import annotations

from agon.core.errors import AgonError


class ArenaError(AgonError):
    """A request the arena refuses; ``status`` is the HTTP status that says why."""

    status = 400


class NotFound(ArenaError):
    status = 404


class Forbidden(ArenaError):
    status = 403


class Conflict(ArenaError):
    status = 409
