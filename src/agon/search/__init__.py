"""Agents and search, written once against the game protocol and the fast-twin contract."""
