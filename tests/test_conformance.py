"""Every registered game passes the conformance suite (agon.conformance), one class per game."""

from __future__ import annotations

from agon.conformance import suite
from agon.games import names

for _name in names():
    _suite = suite(_name)
    globals()[_suite.__name__] = _suite
