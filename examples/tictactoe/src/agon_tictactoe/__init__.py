"""Tic-tac-toe, generalised as an m,n,k-game: an example of a game added to Agon as a package
of its own (see README.md)."""

from agon_tictactoe.plugin import PLUGIN
from agon_tictactoe.rules import TicTacToe, TicTacToeState

__all__ = ["PLUGIN", "TicTacToe", "TicTacToeState"]
