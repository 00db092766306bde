"""The bodies of a player's changes to a game, as the HTTP API and the game's socket read them."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field

MAX_REVISION = 2**31 - 1
"""The largest revision a game's row holds (a 32-bit integer column)."""


def json_integer(value: Any) -> Any:
    """A JSON integer (``2.0`` is one), not a boolean or a string, which pydantic would read
    as one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a whole number")
    return value


Revision = Annotated[int, Field(ge=0, le=MAX_REVISION), BeforeValidator(json_integer)]


class ChangeBody(BaseModel):
    revision: Revision | None = None
    """The game's revision the change answers, as its view showed it: where the game is at
    another, the change is refused (409), not made to a position its player has not seen."""


def revision_of(body: ChangeBody | None) -> int | None:
    return None if body is None else body.revision


class MoveBody(ChangeBody):
    move: str = Field(max_length=64)
