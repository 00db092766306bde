"""Every command that reads a record, a position, moves or options answers any of them with a
clean error (exit status 1 or 2 and a message) or a valid result: never a traceback.

The inputs are drawn by Hypothesis (``tests/strategies.py``): mutations of real positions and
records of every registered game, huge numbers, deep nesting, garbage. Each test is bounded
(``max_examples``), so that the set runs in a minute or two; ``TALLY`` counts the inputs tried
and the tracebacks found (printed at the end with ``-s``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from agon.cli import app
from agon.cli.solve_commands import TIMED_OUT
from agon.core.game import Game
from agon.games import make_game, plugins
from hostile import TALLY, unclean
from strategies import (
    HUGE_NUMBERS,
    move_texts,
    option_values,
    positions,
    records,
    variant_args,
)

pytestmark = pytest.mark.slow  # (property tests over many inputs: make test-all, CI)

runner = CliRunner()
BOUNDED = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
SOLVES = settings(BOUNDED, max_examples=40)


@pytest.fixture(scope="module", autouse=True)
def tally() -> Iterator[None]:
    yield
    print(f"\nhostile inputs tried: {TALLY['inputs']}, tracebacks: {TALLY['tracebacks']}")


def assert_clean(result: Result, valid: tuple[int, ...] = ()) -> None:
    """A valid result or a clean refusal (:func:`hostile.unclean`)."""
    problem = unclean(result, valid)
    assert problem is None, problem


def agon(*args: str, input: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=input)


@given(positions(), st.data())
@BOUNDED
def test_state_reads_any_position_and_moves(found: tuple[Game, str], data: st.DataObject) -> None:
    game, position = found
    args = ["state", *variant_args(game), "--position", position, "--json"]
    if data.draw(st.booleans()):
        args += ["--moves", data.draw(move_texts(game))]
    assert_clean(agon(*args))


@given(st.sampled_from(sorted(plugins())), st.data())
@BOUNDED
def test_state_and_rules_read_any_option_values(name: str, data: st.DataObject) -> None:
    specs = [option for option in plugins()[name].game.option_specs if option.kind != "bool"]
    args = [name]
    for option in data.draw(st.lists(st.sampled_from(specs), max_size=3, unique=True)):
        args += [option.flag, data.draw(option_values(option))]
    assert_clean(agon("state", *args))
    assert_clean(agon("rules", *args, "--plain", "--lang", data.draw(st.sampled_from(
        ["en", "xx", "", "../../etc/passwd", "e" * 1000]
    ))))


@given(records())
@BOUNDED
def test_replay_and_resume_read_any_record(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.json"
        path.write_text(text)
        assert_clean(agon("replay", str(path), "--all", "--plain"))
        played = agon(
            "play", "--resume", str(path), "--black", "human", "--white", "human", "--plain",
            input="undo\nhint-not\n1\na1-a2\npass\nquit\n",
        )
        # (a record that loads is played on: the scripted input ends with quit, exit 0)
        assert_clean(played)


@given(positions())
@SOLVES
def test_solve_reads_any_position_within_tiny_limits(found: tuple[Game, str]) -> None:
    game, position = found
    assert_clean(
        agon(
            "solve", *variant_args(game), "--position", position, "--max-seconds", "0.2",
            "--table-bits", "10", "--quiet",
        ),
        valid=(TIMED_OUT,),
    )


NUMBERS = st.one_of(st.sampled_from(HUGE_NUMBERS), st.integers(-3, 3).map(str))
FEW = st.sampled_from((*HUGE_NUMBERS, "1"))
"""Hostile numbers, or 1 (where a valid larger one would start processes or long solves)."""


def smallest_variant() -> list[str]:
    """The command-line arguments of the registered variant with the fewest moves."""
    examples = [
        make_game(name, options)
        for name, found in plugins().items()
        for options in found.tooling.variant_examples
    ]
    return variant_args(min(examples, key=lambda game: game.num_actions))
BUDGETS = st.one_of(
    st.sampled_from(
        ["random", "random:1", "random:" + "9" * 30, "mcts:1e23", "x", "", ":", "random:-1s"]
    ),
    st.text(max_size=12),
)


@given(NUMBERS, FEW, NUMBERS, BUDGETS)
@BOUNDED
def test_match_reads_any_options(games: str, jobs: str, seed: str, agent: str) -> None:
    game = next(iter(plugins()))
    assert_clean(agon(
        "match", game, agent, "random", "--games", games, "--jobs", jobs, "--seed", seed
    ))


@given(FEW, st.sampled_from((*HUGE_NUMBERS, "0.1")), BUDGETS)
@SOLVES
def test_quality_reads_any_options(positions_text: str, seconds: str, agent: str) -> None:
    assert_clean(agon(
        "quality", *smallest_variant(), agent, "--positions", positions_text,
        "--max-seconds", seconds, "--quiet",
    ))


@given(NUMBERS, NUMBERS)
@BOUNDED
def test_bench_reads_any_options(seconds: str, games: str) -> None:
    # (an unknown variant, so that options that read well are refused after being read)
    assert_clean(agon("bench", "--seconds", seconds, "--games", games, "--only", "none"))
    assert_clean(agon("bench", "--verify", "--games", games, "--only", "none"))
