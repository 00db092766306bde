"""Alak: one-dimensional Go, in three rule sets."""

from agon.games.alak.rules import Alak, AlakRules, AlakState

__all__ = ["Alak", "AlakRules", "AlakState"]
