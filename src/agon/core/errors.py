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


QUOTED_LIMIT = 40
"""How much of a piece of bad input an error message repeats."""


def quoted(text: object) -> str:
    """``repr`` of a piece of input for an error message, cut short if long: a message names
    what is wrong without repeating a 100,000-character paste."""
    shown = str(text)
    if len(shown) <= QUOTED_LIMIT:
        return repr(text)
    return repr(shown[:QUOTED_LIMIT]) + _cut_note(shown)


def shortened(text: str) -> str:
    """``text`` as it is, or cut short like :func:`quoted` if long."""
    if len(text) <= QUOTED_LIMIT:
        return text
    return text[:QUOTED_LIMIT] + _cut_note(text)


def _cut_note(text: str) -> str:
    return f"… ({len(text):,} characters)"
