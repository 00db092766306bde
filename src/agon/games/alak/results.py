"""What ``agon tables`` solves of Alak, its sections of docs/results.md, and the published
claims it checks."""

from __future__ import annotations

from collections.abc import Iterator

from agon.core.results import (
    Catalogue,
    Job,
    QualityGame,
    Results,
    bounds_text,
    cost,
    in_move_order,
    known_value,
    line_item,
    points,
    signed,
    unsolved,
)
from agon.games.alak import symmetry
from agon.games.alak.rules import Alak, AlakRules

SIZES = range(1, 13)
TROMP_TAYLOR_STRETCH = range(13, 17)
RULE_SETS = (
    ("baljeu", AlakRules.BALJEU, True),
    ("baljeu-noedge", AlakRules.BALJEU, False),
    ("traditional", AlakRules.TRADITIONAL, True),
    ("tromp-taylor", AlakRules.TROMP_TAYLOR, True),
)

# Published claims, as (position text, x to move, the published value of x's margin).
HAYWARD_EXERCISES = (
    ("o.x..", 5),
    ("x..o.", -5),
    ("o..x.", 5),
    ("o....", 5),
    (".o...", 0),
    ("..o..", 0),
)
"""Hayward's 1 × 5 linear Go exercises (tromp-taylor, x to move), as RULES.md lists them."""
DRANGE_LINEAR: dict[int, tuple[str, ...]] = {
    2: ("(0)", "-2"), 3: ("3", "-3"), 4: ("4", "-4"), 5: ("0", "0", "(0)"), 6: ("1", "-1", "-1"),
    7: ("2", "2", "-2"), 8: ("3", "1", "-1"), 9: ("0", "0", "-2"), 10: ("1",), 11: ("2",),
    12: ("1",), 13: ("2",),
}
"""Ted Drange's table of Black's margin on 1 × n with best play (area counting), as his page
"Mini-GO" writes it (http://www.mathpuzzle.com/go, worked out in 1998, seen in a stored copy):
after the best opening and, where given, the second- and third-best ones, a pass in
parentheses. Its ko rule is not stated, so agreement is evidence, not proof, for either side."""
DRANGE_LINES = {9: ("2", "4", "5"), 12: ("4",), 13: ("7",)}
"""Boards where the solved values disagree with :data:`DRANGE_LINEAR`, and the openings after
which the tables give a line of perfect play to show it: on 1 × 9 the third-best opening is
worth 0 here, not -2, and these are the three best; 1 × 12 is worth +2 here, not +1, and 4 is
an opening that keeps it; 1 × 13 is worth 0 here, not +2, and after the central opening 7
White holds Black to 0."""


EXERCISES_GAME = Alak(5, AlakRules.TROMP_TAYLOR)


def sizes(rules: AlakRules) -> list[int]:
    """The boards solved under a rule set."""
    return [*SIZES, *(TROMP_TAYLOR_STRETCH if rules is AlakRules.TROMP_TAYLOR else ())]


def jobs() -> Iterator[Job]:
    for name, rules, edge in RULE_SETS:
        for size in sizes(rules):
            yield Job(f"alak-{name}-{size}", Alak(size, rules, edge), openings=True)
    yield Job(
        "claim-traditional-6", Alak(6, AlakRules.TRADITIONAL), openings=True,
        lines_after=("2", "3"), grows=False,
    )
    for size, openings in DRANGE_LINES.items():
        yield Job(f"claim-drange-{size}", Alak(size, AlakRules.TROMP_TAYLOR),
                  lines_after=openings, lines_only=True, grows=False)
    for board, _ in HAYWARD_EXERCISES:
        yield Job(f"exercise-{board}", EXERCISES_GAME, f"{board} x", openings=True,
                  lines_after=("",), grows=False)


def sections(results: Results) -> list[str]:
    return [*_rule_sets_section(results), *_claims_section(results)]


def _rule_sets_section(results: Results) -> list[str]:
    lines = [
        "## Alak",
        "",
        "Values are Black's margin with perfect play (komi 0), from the empty board. "
        "*Openings* give Black's margin after each first move (points 1…N, `pass`); the best "
        "are in bold. Where the weaker openings took too long, only the best are given, or the "
        "openings valued in time with what was proven of the others (`≤`, `≥`, `a…b`; `?`: "
        "nothing). Nodes "
        "and seconds count the value, the best moves and the openings given.",
        "",
    ]
    titles = {
        "baljeu": "baljeu rules, edge capture (the default)",
        "baljeu-noedge": "baljeu rules, no edge capture",
        "traditional": "traditional rules",
        "tromp-taylor": "tromp-taylor rules (linear Go, positional superko)",
    }
    for name, rules, edge in RULE_SETS:
        lines += [f"### {titles[name]}", "", "| N | value | openings | nodes | seconds |"]
        lines.append("|---|---|---|---|---|")
        for size in sizes(rules):
            game = Alak(size, rules, edge)
            record = results.get(f"alak-{name}-{size}")
            if record is None or record["status"] != "solved":
                lines.append(f"| {size} | {unsolved(game, record)} |||| ")
                continue
            best = set(record["best_moves"])
            if "moves" in record:
                openings = " ".join(
                    f"**{m}:{signed(v)}**" if m in best else f"{m}:{signed(v)}"
                    for m, v in in_move_order(game, record["moves"].items())
                )
            elif "move_bounds" in record:
                # the best moves are worth the value; the others show what was proven in time
                known = record["move_bounds"]
                openings = " ".join(
                    f"**{m}:{signed(record['value'])}**" if m in best
                    else f"{m}:{bounds_text(*known[m])}" if m in known else f"{m}:?"
                    for m in map(game.format_move, game.new_state().legal_moves())
                ) + f" (not all solved in {record['openings_max_seconds']:g} s)"
            else:
                seconds = record["openings_max_seconds"]
                openings = (
                    " ".join(f"**{m}**" for m in record["best_moves"])
                    + f" best (the other openings' values not solved in {seconds:g} s)"
                )
            lines.append(f"| {size} | {signed(record['value'])} | {openings} | {cost(record)} |")
        lines.append("")
    return lines


def _claims_section(results: Results) -> list[str]:
    lines = ["## Published claims", ""]
    claim = results.get("claim-traditional-6")
    lines += [
        "### The seed on 6-point traditional Alak",
        "",
        "The seed says: *Black can ensure a win by opening on point 2; White can win if Black "
        "opens on point 3.*",
        "",
    ]
    if claim and claim["status"] == "solved" and "moves" in claim:
        two, three = claim["moves"].get("2"), claim["moves"].get("3")
        verdict_two = "agrees" if two is not None and two > 0 else "disagrees"
        verdict_three = "agrees" if three is not None and three < 0 else "disagrees"
        lines += [
            "| opening | " + " | ".join(claim["moves"]) + " |",
            "|---|" + "---|" * len(claim["moves"]),
            "| Black's margin | " + " | ".join(signed(v) for v in claim["moves"].values()) + " |",
            "",
            f"Opening on 2: {signed(two or 0)} (the solver {verdict_two} that Black wins); "
            f"opening on 3: {signed(three or 0)} (the solver {verdict_three} that White wins). "
            f"Value of the position: {signed(claim['value'])}.",
            "",
            "Lines of perfect play (at every step, the first move found to keep the value):",
            "",
            *(line_item(f"after {first}", line) for first, line in claim.get("lines", {}).items()),
        ]
    elif claim and claim["status"] == "solved":
        lines.append(f"value {signed(claim['value'])}; the openings not all solved")
    else:
        lines.append(unsolved(Alak(6, AlakRules.TRADITIONAL), claim))
    lines += [
        "",
        "### Hayward's 1 × 5 linear Go exercises (tromp-taylor, x to move)",
        "",
        "| position | published | solved | best moves | agrees |",
        "|---|---|---|---|---|",
    ]
    disagreements: list[str] = []
    for board, published in HAYWARD_EXERCISES:
        record = results.get(f"exercise-{board}")
        if record is None or record["status"] != "solved":
            found = unsolved(EXERCISES_GAME, record)
            lines.append(f"| `{board}` | {signed(published)} | {found} | | |")
            continue
        agrees = "yes" if record["value"] == published else "**no** (line below)"
        lines.append(
            f"| `{' '.join(board)}` | {signed(published)} | {signed(record['value'])} "
            f"| {', '.join(record['best_moves'])} | {agrees} |"
        )
        if record["value"] != published:
            disagreements.append(line_item(f"`{' '.join(board)}`", record["lines"][""]))
    lines += ["", *disagreements]
    lines += [
        "",
        "### Ted Drange's mini-Go table on 1 × n (area counting; ko rule not stated)",
        "",
        "From Ted Drange's page *Mini-GO* (http://www.mathpuzzle.com/go; worked out in 1998 "
        "and not published elsewhere, checked against a stored copy of the page): Black's "
        "margin after the best opening and, where the page gives them, after the second- and "
        "third-best ones (a pass in parentheses). Here: the openings of tromp-taylor Alak "
        "solved above, one per pair of mirror images, best first (a pass after a placement "
        "of equal value). Hayward's course notes on solving Go on small boards cite 1 × n "
        "values up to n = 12 under these very rules (positional superko) from Weninger and "
        "Hayward's *Exploring Positional Linear Go*; that table could not be read here (the "
        "stored copy of the notes stops before it), so it is not compared.",
        "",
        "| n | Drange | tromp-taylor here | agrees |",
        "|---|---|---|---|",
    ]
    explained: list[str] = []
    for size, cells in DRANGE_LINEAR.items():
        record = results.get(f"alak-tromp-taylor-{size}")
        value = known_value(record)
        shown = " / ".join(cells)
        if value is None:
            if record is None:
                lines.append(f"| {size} | {shown} | not solved | |")
                continue
            low, high, best = record["lower"], record["upper"], _drange_value(cells[0])
            within = "not contradicted" if low <= best <= high else "**no**"
            bounds = f"in [{points(low)}, {points(high)}]"
            lines.append(f"| {size} | {shown} | {bounds} | {within} |")
            continue
        ranked = [] if record is None or "moves" not in record else _ranked_openings(
            Alak(size, AlakRules.TROMP_TAYLOR), record["moves"]
        )
        if len(ranked) < len(cells):  # only the value is known here
            drange_value = _drange_value(cells[0])
            agrees = "yes" if value == drange_value else "**no**"
            lines.append(f"| {size} | {shown} | {signed(value)} | {agrees} |")
            if value != drange_value:
                explained += [
                    f"1 × {size}: Drange gives {signed(drange_value)}, here the value is "
                    f"{signed(value)}.", *_drange_lines(size, results), "",
                ]
            continue
        wrong = [
            rank for rank, (cell, (mine, _)) in enumerate(zip(cells, ranked, strict=False))
            if _drange_value(cell) != mine
        ]
        here = " / ".join(
            f"({signed(v)})" if move == "pass" else signed(v) for v, move in ranked[: len(cells)]
        )
        agrees = "yes" if not wrong else "**no**: " + ", ".join(RANKS[rank] for rank in wrong)
        lines.append(f"| {size} | {shown} | {here} | {agrees} |")
        if wrong:
            explained += _drange_disagreement(size, cells, ranked, wrong, results)
    return [*lines, "", *explained]


RANKS = ("best", "second-best", "third-best")


def _drange_value(cell: str) -> float:
    """A margin as Drange's table writes it (a pass in parentheses)."""
    return float(cell.strip("()"))


def _ranked_openings(game: Alak, values: dict[str, float]) -> list[tuple[float, str]]:
    """The openings' values, one per class of symmetric moves (named by its first move), best
    first, a pass after a placement of equal value."""
    found = symmetry.symmetries(game)
    ranked, covered = [], set()
    for name, value in values.items():
        move = game.parse_move(name)
        if move in covered:
            continue
        covered |= {int(images[move]) for images in found.move_maps[: found.count]}
        ranked.append((value, name))
    return sorted(ranked, key=lambda opening: (-opening[0], opening[1] == "pass"))


def _drange_disagreement(
    size: int, published: tuple[str, ...], ranked: list[tuple[float, str]], wrong: list[int],
    results: Results,
) -> list[str]:
    """Which of Drange's openings on 1 × ``size`` disagree, every opening's value here
    (``ranked``), and lines of perfect play after some (from the job ``claim-drange-SIZE``,
    where there is one)."""
    found = "; ".join(
        f"Drange's {RANKS[rank]} opening is worth {signed(_drange_value(published[rank]))}, here "
        f"{signed(ranked[rank][0])} (after {ranked[rank][1]})"
        for rank in wrong
    )
    text = [f"1 × {size}: {found}. The openings here: " + ", ".join(
        f"{move}: {signed(value)}" for value, move in ranked
    ) + "."]
    return [*text, *_drange_lines(size, results), ""]


def _drange_lines(size: int, results: Results) -> list[str]:
    """The lines of perfect play the job ``claim-drange-SIZE`` recorded, if any."""
    claim = results.get(f"claim-drange-{size}")
    if claim is None or "lines" not in claim:
        return []
    return [
        "",
        "Lines of perfect play after the openings in question (at every step, the first move "
        "found to keep the value, so White's replies hold Black to the opening's value, and "
        "Black's keep it):",
        "",
        *(line_item(f"after {first}", line) for first, line in claim["lines"].items()),
    ]


CATALOGUE = Catalogue(
    jobs=jobs,
    sections=sections,
    quality=(
        # the default rules (edge capture) are solved up to 8 points: on 9, none of 6 positions
        # sampled (seed 1) was settled within 30 s; Alak 9 is measured under two other rule sets
        QualityGame("alak-7", "--size 7", Alak(7)),
        QualityGame(
            "alak-9-noedge", "--size 9 --no-edge-capture", Alak(9, AlakRules.BALJEU, False)
        ),
        QualityGame(
            "alak-9-tromp-taylor", "--size 9 --rules tromp-taylor", Alak(9, AlakRules.TROMP_TAYLOR)
        ),
    ),
)
