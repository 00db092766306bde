"""Kayles, a second example game for the tests: a win-or-loss game with no pass, a variant over
before its start (refused) and one with a single legal move at every turn (see rules.py)."""

from kayles.plugin import PLUGIN
from kayles.rules import Kayles, KaylesState

__all__ = ["PLUGIN", "Kayles", "KaylesState"]
