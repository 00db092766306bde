"""The seats of a game: their secret tokens, friend invitations, and what a seat may do.

A player proves their seat with the token of their link; the database keeps only the token's
hash.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from agon.core.player import Player
from agon.web.errors import Conflict, Forbidden
from agon.web.replay import Loaded
from agon.web.store import StoredGame

COLOURS = ("black", "white")

HASHED = "sha256:"
"""Prefix of a seat token's hash as the database keeps it. Games stored before tokens were
hashed keep their tokens as they were, and those still work."""


def other_colour(colour: str) -> str:
    return "white" if colour == "black" else "black"


def token_digest(token: str) -> str:
    """What the database keeps of a seat token: its hash, so that reading the database does
    not give anyone a seat."""
    digest = hashlib.sha256(token.encode()).digest()
    return HASHED + base64.urlsafe_b64encode(digest).decode().rstrip("=")


def invite_for(host_token: str, game_id: str) -> str:
    """The guest's token of a friend game, derived from the host's: the host's page can show
    the guest's link again though the database keeps neither token."""
    mac = hmac.new(host_token.encode(), f"invite:{game_id}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:18]).decode()


def holds_seat(stored_token: str | None, token: str) -> bool:
    """Whether ``token`` is the one a seat's stored token (hashed or, in older games, not)
    stands for."""
    if stored_token is None:
        return False
    presented = token_digest(token) if stored_token.startswith(HASHED) else token
    return secrets.compare_digest(stored_token.encode(), presented.encode())


def seats_of(stored: StoredGame, token: str | None) -> list[str]:
    """The colours whose seats ``token`` holds: both in a game at one screen."""
    if not token:
        return []
    return [colour for colour in COLOURS if holds_seat(stored.tokens[colour], token)]


def invitation(stored: StoredGame, token: str | None) -> str | None:
    """The guest's token of a friend game, for the host's page to show; None for anyone else."""
    if not token or stored.mode != "friend" or stored.host not in seats_of(stored, token):
        return None
    guest = stored.tokens[other_colour(stored.host)]
    hashed = guest is not None and guest.startswith(HASHED)
    return invite_for(token, stored.id) if hashed else guest


def require_turn(loaded: Loaded, token: str | None) -> None:
    """Refuse unless ``token`` holds the seat whose turn it is."""
    seats = seats_of(loaded.stored, token)
    if not seats:
        raise Forbidden("this link holds no seat in this game: spectators watch, players move")
    if not loaded.active:
        raise Conflict(f"the game is over: {loaded.stored.reason}")
    colour = loaded.to_move
    if colour not in seats:
        raise Conflict(f"it is {str(colour).capitalize()}'s turn, not yours")


def undo_keeps(loaded: Loaded) -> int | None:
    """How many moves remain after an undo: up to just before the last person's move (None: no
    undo: in games between two links, and once a game is over, whose result then stands)."""
    stored = loaded.stored
    if stored.mode == "friend" or not loaded.active:
        return None
    people = {Player.parse(c) for c in COLOURS if stored.agents[c] is None}
    for index in range(len(loaded.movers) - 1, -1, -1):
        if loaded.movers[index] in people:
            return index
    return None


def undo_refusal(loaded: Loaded) -> str:
    """Why :func:`undo_keeps` allows no undo."""
    if loaded.stored.mode == "friend":
        return "moves cannot be taken back in a game between two links"
    if not loaded.active:
        return f"the game is over ({loaded.stored.reason}): its result stands"
    return "there is no move of yours to take back"
