"""Alternator (Gregory Van Patten, 2003)."""

from agon.games.alternator.rules import Alternator, AlternatorState

__all__ = ["Alternator", "AlternatorState"]
