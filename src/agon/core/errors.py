"""Errors that carry a message fit to show a player: they never need a traceback."""


class AgonError(ValueError):
    """Base of every error caused by bad input (a move, a position, a record, an option)."""


class NotationError(AgonError):
    """A move or coordinate that cannot be read."""


class IllegalMove(AgonError):
    """A readable move that the rules forbid; the message names the rule."""


class PositionError(AgonError):
    """A position text that cannot be read or describes an impossible position."""


class RecordError(AgonError):
    """A game record that cannot be read or does not replay."""
