"""Alternator (Gregory Van Patten, 2003)."""

from agon.games.alternator.plugin import PLUGIN
from agon.games.alternator.rules import Alternator, AlternatorState

__all__ = ["PLUGIN", "Alternator", "AlternatorState"]
