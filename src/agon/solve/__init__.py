"""Exact solvers: negamax alpha-beta with a transposition table, over the games' fast twins."""
