"""Alak's rule sets are values of independent fields: any combination of them is a rule set
that both engines play alike, not only the three named ones."""

from __future__ import annotations

import random
from collections.abc import Iterator
from itertools import product

import pytest

from agon.games.alak import Alak, AlakRules, Repetition, RuleSet, Scoring, fast
from agon.games.alak.rules import RULE_SETS
from agon.search.bench import verify_game

COMBINATIONS = [
    RuleSet(passing, suicide, capture_ban, repetition, "the repetition rule", scoring)
    for passing, suicide, capture_ban, repetition, scoring in product(
        (False, True), (False, True), (False, True), Repetition, Scoring
    )
]


@pytest.fixture
def custom_rules(request: pytest.FixtureRequest) -> Iterator[RuleSet]:
    """The tromp-taylor preset made into another combination of fields, for one test."""
    chosen: RuleSet = request.param
    saved = RULE_SETS[AlakRules.TROMP_TAYLOR]
    RULE_SETS[AlakRules.TROMP_TAYLOR] = chosen
    fast.fast_twin.cache_clear()  # (twins are built once per variant)
    try:
        yield chosen
    finally:
        RULE_SETS[AlakRules.TROMP_TAYLOR] = saved
        fast.fast_twin.cache_clear()


@pytest.mark.parametrize("custom_rules", COMBINATIONS, indirect=True,
                         ids=lambda rules: f"{rules}")
def test_every_combination_of_fields_is_played_alike_by_both_engines(
    custom_rules: RuleSet,
) -> None:
    game = Alak(5, AlakRules.TROMP_TAYLOR)
    assert game.rule_set is custom_rules
    twin = fast.fast_twin(game)
    rng = random.Random(str(custom_rules))
    for _ in range(15):
        assert verify_game(twin, rng, pass_chance=0.2) is None


def test_the_named_rule_sets_are_combinations_of_the_fields() -> None:
    assert RULE_SETS[AlakRules.BALJEU] == RuleSet(
        passing=False, suicide=True, capture_ban=True, repetition=Repetition.ANY_EARLIER_BOARD,
        repetition_name="no repetition", scoring=Scoring.STONES,
    )
    assert {rules.scoring for rules in RULE_SETS.values()} == set(Scoring)
    assert Alak(7, AlakRules.TRADITIONAL).rule_set.repetition is Repetition.KO
