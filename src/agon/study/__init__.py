"""Study: what Agon knows of a position, for players. Values in words and judgements of moves
(:mod:`~agon.study.values`), exact values kept and reused (:mod:`~agon.study.store`), analysis
of positions and reviews of games (:mod:`~agon.study.analysis`), and puzzles from solved
positions (:mod:`~agon.study.puzzles`). Written once for every game: it asks the plugin."""
