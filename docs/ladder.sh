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
# Baselines Agon did not write: OpenSpiel's MCTSBot at equal simulations (needs agon[adapters];
# 20 games a pairing, one process: about half an hour on two cores).
for game in "alternator --size 6x6" "alak --size 11"; do
  .venv/bin/agon match $game mcts:1000 openspiel-mcts:1000 --games 20 --seed 7 --json >> docs/ladder.jsonl 2>>/dev/null
done
