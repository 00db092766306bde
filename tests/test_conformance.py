"""Every registered game passes the conformance suite (agon.conformance), one class per game;
and so does Kayles (tests/kayles), the second example: a win-or-loss game with no pass, a
one-pin variant and one with a single legal move at every turn. No entry point names it: its
class registers it around its own tests alone, so the other tests never meet it."""

from __future__ import annotations

from agon.conformance import suite
from agon.games import names
from kayles import PLUGIN as KAYLES

for _name in names():
    _suite = suite(_name)
    globals()[_suite.__name__] = _suite

TestConformanceKayles = suite(KAYLES)
