"""Alak: one-dimensional Go, in three rule sets."""

from agon.games.alak.plugin import PLUGIN
from agon.games.alak.rules import Alak, AlakRules, AlakState, Repetition, RuleSet, Scoring

__all__ = ["PLUGIN", "Alak", "AlakRules", "AlakState", "Repetition", "RuleSet", "Scoring"]
