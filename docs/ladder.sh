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
# Issue 38's targets against MCTSBot at 2,000 simulations a move (one process each; the first
# took an hour and a half on this 2-core machine; the second was not finished in an hour).
.venv/bin/agon match alternator strongest:2000 openspiel-mcts:2000 --games 200 --seed 1 --json >> docs/ladder.jsonl 2>>/dev/null
.venv/bin/agon match alak --size 15 --rules baljeu mcts:2000 openspiel-mcts:2000 --games 20 --seed 1 --json >> docs/ladder.jsonl 2>>/dev/null
# The strongest agent against MCTSBot on Alak 15 (2026-12-07: two seeds, one process each, stopped
# by SIGTERM after 19 and 2 games, about two hours of the machine's two cores; 2026-12-08: seeds 3,
# 4 and 5, one after the other, stopped after 1, 2 and 4 games; 2026-12-09: seed 6, stopped after
# 9 games; 2026-12-10: seed 7, stopped after 7 games).
for seed in 1 2 3 4 5 6 7; do
  .venv/bin/agon match alak --size 15 --rules baljeu strongest:1s openspiel-mcts:2000 --games 200 --seed $seed --json >> docs/ladder.jsonl 2>>/dev/null
done
# From 2026-12-10 one match of 200 games, a session at a time: its games are kept in the
# checkpoint beside this script as they end (the record of this match, not ladder.jsonl), and
# the same command goes on from them (stop it with SIGTERM; `--jobs N` on a machine with N idle
# cores); each run prints the report of all the games so far.
.venv/bin/agon match alak --size 15 --rules baljeu strongest:1s openspiel-mcts:2000 --games 200 --seed 8 --checkpoint docs/alak15-strongest-vs-openspiel-mcts.jsonl --json 2>>/dev/null
