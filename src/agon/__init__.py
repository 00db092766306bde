"""Agon: rules engines, search, exact solvers and a web arena for Alternator and Alak."""

__version__ = "0.1.0"
