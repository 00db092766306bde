#!/usr/bin/env bash
# Ladder: adjacent pairings, 100 games each, 100 ms per move.
cd "$(dirname "$0")/.."
: > docs/ladder.jsonl
for game in "alak --rules baljeu" "alternator"; do
  for pair in "random greedy" "greedy mcts:100ms" "greedy alphabeta:100ms" "mcts:100ms alphabeta:100ms" "mcts-informed:100ms mcts:100ms"; do
    set -- $pair
    .venv/bin/agon match $game "$1" "$2" --games 100 --jobs 2 --seed 1 --json >> docs/ladder.jsonl 2>>/dev/null
  done
done
