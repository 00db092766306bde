"""The two players. Black always moves first."""

from __future__ import annotations

from enum import IntEnum


class Player(IntEnum):
    BLACK = 0
    WHITE = 1

    @property
    def other(self) -> Player:
        return Player(1 - self)

    @property
    def label(self) -> str:
        """Lower-case name used in JSON and on the command line: "black" or "white"."""
        return self.name.lower()

    @property
    def letter(self) -> str:
        """One-letter name used in results ("B+2.5") and position texts."""
        return self.name[0]

    @classmethod
    def parse(cls, text: str) -> Player:
        key = text.strip().lower()
        for player in cls:
            if key in (player.label, player.letter.lower()):
                return player
        raise ValueError(f"unknown player {text!r}: expected 'black' or 'white'")
