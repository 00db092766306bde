"""A corpus of hostile input for every terminal command, as an attacker would try it: each
answer is a result or a clean refusal (exit status 1 or 2 with a message), never a traceback,
a hang or memory without bound. The corpus is built from the registered games, so a new game
is attacked too; the count of inputs is printed (``-s``) for the record."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agon.cli import app
from agon.games import make_game, names
from hostile import TALLY, unclean

pytestmark = pytest.mark.slow  # (hostile inputs to each command, in subprocesses: make test-all)

HUGE = "9" * 5000
NUMBERS = [
    "0", "-1", "1", "abc", "", " ", "1e3", "nan", "inf", "-inf", "1e309", HUGE, "-" + HUGE,
    "0x10", "٣", "3x3x3", "x3", "3x", "\x00", "½", "99999999999999999999",
]
TEXTS = [
    "", " ", "\x00", "\u202e", "🙂", "pass " * 2000, "a" * 100_000, "1 " * 50_000, "{" * 10_000,
    "\n\n", "--help", "-1", HUGE,
]
AGENTS = [
    "mcts:1e23", "mcts:" + HUGE, "mcts:-1", "mcts:nan", "mcts:inf", "mcts:0", "nobody",
    "mcts:1s:2", "alphabeta:1e999s", "random:", ":", "", "greedy:" + "1" * 30 + "ms",
]
failures: list[str] = []


@pytest.fixture(autouse=True)
def no_failures() -> Iterator[None]:
    """Each test tries all its inputs, then lists every one that failed."""
    failures.clear()
    yield
    assert not failures, f"{len(failures)} inputs failed:\n" + "\n".join(failures)


def check(arguments: list[str], stdin: str | None = None) -> None:
    # 124 and 130: a solve or match that stopped at its limit, and says so
    problem = unclean(CliRunner().invoke(app, arguments, input=stdin), valid=(124, 130))
    if problem is not None:
        failures.append(f"agon {' '.join(a[:40] for a in arguments)}: {problem}")


def option_names(game: str) -> list[str]:
    return [option.name.replace("_", "-") for option in make_game(game).option_specs]


def real_positions(game: str, count: int = 3) -> Iterator[str]:
    rng = random.Random(game)
    for _ in range(count):
        state = make_game(game).new_state()
        for _ in range(rng.randrange(6)):
            if state.is_over:
                break
            state.play(rng.choice(state.legal_moves()))
        yield state.position()


def mutations(text: str) -> Iterator[str]:
    """A real position spoiled in the ways that broke readers: huge numbers, lost or doubled
    parts, foreign characters, great length."""
    yield text.replace("1", HUGE, 1)
    yield text.replace("1", "-1", 1)
    yield text[: len(text) // 2]
    yield text + text
    yield text.replace(" ", "")
    yield text.replace(":", "")
    yield text + " " + "1 " * 100_000
    yield "\x00" + text
    yield text.upper()


@pytest.mark.parametrize("game", names())
def test_state_and_rules_refuse_hostile_options_and_texts(game: str) -> None:
    for option in option_names(game):
        for value in NUMBERS + TEXTS[:5]:
            check(["state", game, f"--{option}", value])
    for moves in TEXTS:
        check(["state", game, "--moves", moves])
    for position in real_positions(game):
        for spoiled in mutations(position):
            check(["state", game, "--position", spoiled, "--json"])
    for lang in ["xx", "", "../../etc/passwd", "EN\x00", "e" * 10_000]:
        check(["rules", game, "--lang", lang])


@pytest.mark.timeout(300)
@pytest.mark.parametrize("game", names())
def test_play_refuses_hostile_lines_and_agents(game: str) -> None:
    for spec in AGENTS:
        check(["play", game, "--black", spec, "--white", "human"], "quit\n")
    for line in [*TEXTS, "save /", "save /dev/null", "save " + "x" * 5000, "undo\n" * 50]:
        check(["play", game, "--black", "human", "--white", "human"], line + "\nquit\n")
    check(["play", game, "--black", "human", "--white", "human"], "")  # EOF at once


def record_variants(game: str) -> Iterator[object]:
    """Records as files hold them: a real one, then spoiled."""
    real = {"version": 1, "game": game, "options": {}, "moves": []}
    yield real
    yield {**real, "version": 99}
    yield {**real, "version": "1"}
    yield {**real, "moves": ["?" * 10_000]}
    yield {**real, "moves": [HUGE]}
    yield {**real, "moves": "not a list"}
    yield {**real, "options": {"size": HUGE}}
    yield {**real, "options": [1, 2]}
    yield {**real, "game": "no-such-game"}
    yield {**real, "position": HUGE}
    yield [real]
    yield None
    yield 1e308


@pytest.mark.parametrize("game", names())
def test_replay_and_resume_refuse_hostile_records(game: str, tmp_path: Path) -> None:
    files: list[Path] = []
    for number, record in enumerate(record_variants(game)):
        path = tmp_path / f"record{number}.json"
        path.write_text(json.dumps(record))
        files.append(path)
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000)
    not_json = tmp_path / "binary.json"
    not_json.write_bytes(bytes(range(256)) * 10)
    empty = tmp_path / "empty.json"
    empty.write_text("")
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    files += [nested, not_json, empty, loop, fifo, tmp_path, tmp_path / "missing.json"]
    files += [Path("/dev/zero"), Path("/dev/null")]
    for path in files:
        check(["replay", str(path)], "q\n")
        check(["play", "--resume", str(path), "--black", "human", "--white", "human"], "quit\n")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("game", names())
def test_solve_and_match_refuse_hostile_numbers(game: str, tmp_path: Path) -> None:
    small = ["--max-seconds", "0.5", "-q"]
    for bits in ["30", "31", "9", "-1", HUGE, "nan"]:
        check(["solve", game, "--table-bits", bits, *small])
    for seconds in ["nan", "-1", HUGE, "0", "abc"]:
        check(["solve", game, "--max-seconds", seconds, "-q"])
    for target in [Path("/dev/null"), tmp_path, tmp_path / "no" / "folder" / "t.npz"]:
        check(["solve", game, "--tables-file", str(target), *small])
    for spec in AGENTS:
        check(["match", game, spec, "random", "--games", "1"])
    not_text = tmp_path / "binary.jsonl"
    not_text.write_bytes(b"\xff\xfe\x00" * 100)
    for target in [Path("/dev/null"), tmp_path, tmp_path / "no" / "folder" / "m.jsonl", not_text]:
        check(["match", game, "random", "random", "--games", "1", "--checkpoint", str(target)])
    for count in ["0", "-1", HUGE, "nan"]:
        check(["match", game, "random", "random", "--games", count])
        check(["quality", game, "random", "--positions", count, "--max-seconds", "0.1"])


def test_other_commands_refuse_hostile_options(tmp_path: Path) -> None:
    for value in ["nobody", HUGE]:
        check(["bench", "--only", value])
        check(["tables", "--only", value, "--max-seconds", "0.1", "--out", str(tmp_path / "t.md")])
    for seconds in ["nan", "-1", HUGE]:
        check(["bench", "--seconds", seconds])
    for port in ["-1", "70000", HUGE, "abc"]:
        check(["serve", "--port", port])
    check(["no-such-command"])
    check(["state"])


@pytest.fixture(scope="module", autouse=True)
def tally() -> Iterator[None]:
    """The count of inputs tried by this file's tests (in this process), for the record
    (``-s``); each input's own check has already failed its test where it found a traceback."""
    before = TALLY["inputs"]
    yield
    print(f"\nhostile inputs tried: {TALLY['inputs']}, tracebacks: {TALLY['tracebacks']}")
    assert TALLY["inputs"] > before, "no hostile input was tried"
