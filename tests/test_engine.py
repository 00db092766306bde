"""``agon engine``: GTP 2's framing, every standard command and Agon's own on every registered
game, garbage input, and how the real command ends (quit, end of input, SIGTERM)."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agon.core.errors import NotationError
from agon.core.game import Game, State
from agon.core.limits import Limit
from agon.core.records import GameRecord
from agon.games import make_game, plugin, plugins, renderer
from agon.study.analysis import Analyst
from agon.study.engine import (
    FASTEST_MOVE_SECONDS,
    MAX_LINE_BYTES,
    Clock,
    Engine,
    TimeSettings,
    clean,
    move_limit,
)

GAMES = list(plugins())
DOCS = Path(__file__).parents[1] / "docs" / "engine.md"
REPLY = re.compile(r"([=?])([0-9]*) (.*)\n\n", re.DOTALL)


def smallest(name: str) -> dict[str, Any]:
    """The options of the game's smallest example variant (the fewest move numbers)."""
    examples = plugin(name).tooling.variant_examples or ({},)
    return dict(min(examples, key=lambda options: make_game(name, options).num_actions))


def new_engine(name: str, options: dict[str, Any] | None = None) -> Engine:
    return Engine(make_game(name, options), "random", Analyst)


def answer(engine: Engine, line: str) -> tuple[bool, str, str]:
    """Whether ``line`` succeeded, the id echoed, and the result, from its framed reply."""
    reply = engine.reply(line)
    assert reply is not None, line
    framed = reply.framed()
    match = REPLY.fullmatch(framed)
    assert match is not None, framed
    assert "\n\n" not in match.group(3), framed
    return match.group(1) == "=", match.group(2), match.group(3)


def ok(engine: Engine, line: str) -> str:
    success, _, text = answer(engine, line)
    assert success, f"{line!r}: {text}"
    return text


def refused(engine: Engine, line: str) -> str:
    success, _, text = answer(engine, line)
    assert not success, f"{line!r} succeeded: {text}"
    return text


def options_words(options: dict[str, Any]) -> str:
    """``key=value`` words, as ``agon-game`` reads them."""
    return " ".join(
        f"{key}={'true' if value is True else 'false' if value is False else value}"
        for key, value in options.items()
    )


def play_out(engine: Engine) -> None:
    """Play the game to its end with genmove, each side in turn."""
    while not engine.state.is_over:
        mover = engine.state.to_move
        assert mover is not None
        ok(engine, f"genmove {mover.label}")


def illegal_move(state: State) -> tuple[str, str]:
    """A move with a notation that the rules forbid in ``state``, and the rule it breaks."""
    game = state.game
    for move in range(game.num_actions):
        reason = state.illegal_reason(move)
        if reason is None:
            continue
        try:
            return game.format_move(move), reason
        except NotationError:
            continue
    raise AssertionError("every move with a notation is legal")


# --- framing ------------------------------------------------------------------------------------


def test_ids_are_echoed_and_comments_and_blank_lines_get_no_reply() -> None:
    engine = new_engine(GAMES[0])
    assert engine.reply("1 protocol_version") is not None
    assert engine.reply("1 protocol_version").framed() == "=1 2\n\n"  # type: ignore[union-attr]
    assert answer(engine, "name") == (True, "", "Agon")
    assert answer(engine, "42 no_such_command") == (False, "42", "unknown command")
    assert answer(engine, "7") == (False, "7", "syntax error: no command after the id")
    assert answer(engine, "9 name # a comment") == (True, "9", "Agon")
    assert answer(engine, "\tname\t") == (True, "", "Agon")
    for line in ("", "   ", "# only a comment", "\x00\x01", "\t"):
        assert engine.reply(line) is None
    assert answer(engine, "na\x00me") == (True, "", "Agon")  # (control characters are dropped)
    assert answer(engine, "NAME") == (True, "", "Agon")


def test_a_multi_line_reply_has_no_blank_line_inside() -> None:
    engine = new_engine(GAMES[0])
    reply = engine.reply("3 showboard")
    assert reply is not None
    framed = reply.framed()
    assert framed.startswith("=3 \n") and framed.endswith("\n\n")
    assert "\n\n" not in framed[:-2]


def test_the_wrong_number_of_arguments_is_a_syntax_error() -> None:
    engine = new_engine(GAMES[0])
    assert refused(engine, "play b") == "syntax error: usage: play COLOUR MOVE"
    assert refused(engine, "name please").startswith("syntax error: usage: name")
    assert refused(engine, "genmove").startswith("syntax error")
    assert refused(engine, "agon-game").startswith("syntax error")
    assert refused(engine, "play purple a1").startswith("syntax error: a colour is")


def test_every_command_is_listed_known_and_documented() -> None:
    engine = new_engine(GAMES[0])
    listed = ok(engine, "list_commands").split("\n")
    assert listed == list(engine.commands)
    docs = DOCS.read_text(encoding="utf-8")
    for command in listed:
        assert ok(engine, f"known_command {command}") == "true"
        assert f"`{command}" in docs, f"{command} is not in docs/engine.md"
    assert ok(engine, "known_command lz-analyze") == "false"
    assert ok(engine, "protocol_version") == "2"
    assert ok(engine, "version")


# --- the standard commands, on every game --------------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
def test_play_genmove_undo_showboard_and_the_final_score(name: str) -> None:
    options = smallest(name)
    engine = new_engine(name, options)
    game = engine.game
    drawing = renderer(game)
    start = game.new_state()
    assert ok(engine, "showboard") == "\n" + drawing.render_text(start, ascii=True)
    assert refused(engine, "final_score") == "cannot score: the game is not over"
    assert refused(engine, "undo").startswith("cannot undo")

    first = start.legal_moves()[0]
    mover = start.to_move
    assert mover is not None
    ok(engine, f"play {mover.label} {game.format_move(first)}")
    assert engine.state.history == [first]
    ok(engine, "undo")
    assert engine.state.history == []

    reply = ok(engine, f"genmove {mover.name[0]}")
    assert (game.pass_move if reply == "pass" else game.parse_move(reply)) in start.legal_moves()
    before = engine.state.position()
    after = engine.state.to_move
    assert after is not None
    ok(engine, f"reg_genmove {after.label.upper()}")
    assert engine.state.position() == before
    ok(engine, "clear_board")
    assert engine.state.position() == start.position() and engine.state.history == []

    play_out(engine)
    margin = engine.state.margin
    score = ok(engine, "final_score")
    assert score == ("0" if margin == 0 else engine.state.result)
    assert re.fullmatch(r"0|[BW]\+[0-9.]+", score)
    for line in ("genmove b", "play w pass", "reg_genmove white"):
        assert refused(engine, line).startswith("the game is over")
    ok(engine, "undo")
    assert not engine.state.is_over
    assert answer(engine, "5 quit") == (True, "5", "")
    assert engine.reply("quit").ends_session  # type: ignore[union-attr]


@pytest.mark.parametrize("name", GAMES)
def test_an_illegal_move_is_refused_with_the_rules_reason(name: str) -> None:
    engine = new_engine(name)
    mover = engine.state.to_move
    assert mover is not None
    ok(engine, f"play {mover.label} {engine.game.format_move(engine.state.legal_moves()[0])}")
    text, reason = illegal_move(engine.state)
    mover = engine.state.to_move
    assert mover is not None
    played = list(engine.state.history)
    assert refused(engine, f"play {mover.label} {text}") == f"illegal move: {text}: {reason}"
    assert refused(engine, f"play {mover.label} no-such-place").startswith("illegal move: ")
    assert engine.state.history == played


@pytest.mark.parametrize("name", GAMES)
def test_the_colour_not_to_move_plays_after_a_pass_where_the_game_has_one(name: str) -> None:
    engine = new_engine(name)
    game, start = engine.game, engine.state.copy()
    other = start.to_move.other  # type: ignore[union-attr]
    if game.pass_move is None:
        move = game.format_move(start.legal_moves()[0])
        assert "no pass" in refused(engine, f"play {other.label} {move}")
        assert "no pass" in refused(engine, f"genmove {other.label}")
        assert engine.state.history == []
        return
    after_pass = start.copy()
    after_pass.play(game.pass_move)
    move = after_pass.legal_moves()[0]
    ok(engine, f"play {other.label} {game.format_move(move)}")
    assert engine.state.history == [game.pass_move, move]
    ok(engine, "undo")  # (the move, and the pass put in for it)
    assert engine.state.history == []
    ok(engine, f"genmove {other.label}")
    assert engine.state.history[0] == game.pass_move and len(engine.state.history) == 2


@pytest.mark.parametrize("name", GAMES)
def test_boardsize_where_the_game_has_a_size(name: str) -> None:
    engine = new_engine(name)
    declared = {option.name for option in type(engine.game).option_specs}
    ok(engine, f"play b {engine.game.format_move(engine.state.legal_moves()[0])}")
    assert refused(engine, "boardsize nine").startswith("syntax error")
    assert refused(engine, "boardsize 99999999999999999999999").startswith("syntax error")
    if not ({"width", "height"} <= declared or "size" in declared):
        assert refused(engine, "boardsize 3").startswith("unacceptable size")
        return
    square = {"width", "height"} <= declared
    current = engine.game.options()["width" if square else "size"]
    assert refused(engine, "boardsize 0").startswith("unacceptable size")
    ok(engine, f"boardsize {current}")
    assert engine.state.history == []
    listed = ok(engine, "agon-options")
    assert (f"width={current}" if square else f"size={current}") in listed


@pytest.mark.parametrize("name", GAMES)
def test_komi_where_the_game_has_one_keeps_the_position(name: str) -> None:
    engine = new_engine(name)
    first = engine.state.legal_moves()[0]
    ok(engine, f"play b {engine.game.format_move(first)}")
    declared = {option.name for option in type(engine.game).option_specs}
    if "komi" not in declared:
        assert refused(engine, "komi 0.5") == f"{engine.game.title} has no komi"
        return
    ok(engine, "komi 0")
    assert engine.game.komi == 0 and engine.state.history == [first]
    for bad in ("nan", "inf", "1e999", "x", "9" * 5000):
        assert refused(engine, f"komi {bad}")
    assert engine.game.komi == 0 and engine.state.history == [first]


@pytest.mark.parametrize("name", GAMES[:1])
def test_time_settings_and_time_left_limit_the_moves(name: str) -> None:
    engine = new_engine(name)
    ok(engine, "time_settings 0 10 5")
    assert engine.clocks[engine.state.to_move] == Clock(10, 5)  # type: ignore[index]
    ok(engine, "time_left b 4 2")
    ok(engine, "genmove b")
    assert engine.clocks[engine.state.to_move.other].stones == 1  # type: ignore[union-attr]
    ok(engine, "time_settings 0 1 0")  # (GTP's "no time limits")
    assert engine.clocks == {} and engine.time_settings is None
    assert refused(engine, "time_left b -1 0").startswith("syntax error")
    assert refused(engine, "time_settings 1 2").startswith("syntax error")
    assert refused(engine, "time_settings 1 2 99999999999").startswith("syntax error")


def test_a_move_gets_its_share_of_the_clock() -> None:
    byo_yomi = TimeSettings(main=60, byo_time=10, byo_stones=5)
    in_byo_yomi = Clock(10, 5)
    assert in_byo_yomi.allotment(byo_yomi) < 2
    main = Clock(60, 0)
    assert main.allotment(byo_yomi) < 60 / 30 + 2
    assert Clock(0, 0).allotment(None) == FASTEST_MOVE_SECONDS
    main.spend(61, byo_yomi)
    assert main == Clock(10, 5)  # (into byo-yomi)
    for _ in range(5):
        in_byo_yomi.spend(1, byo_yomi)
    assert in_byo_yomi == Clock(10, 5)  # (a new period)
    assert move_limit(None, None) is None
    assert move_limit(Limit(seconds=1), None) == Limit(seconds=1)
    assert move_limit(Limit(seconds=1), 0.5) == Limit(seconds=0.5)
    assert move_limit(Limit(count=100), 3) == Limit(seconds=3, count=100)
    assert move_limit(None, 2) == Limit(seconds=2)


# --- Agon's own commands ------------------------------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
def test_agon_game_options_position_legal(name: str) -> None:
    engine = new_engine(GAMES[-1])
    options = smallest(name)
    ok(engine, f"agon-game {name.upper()} {options_words(options)}")
    game: Game = make_game(name, options)
    assert engine.game == game
    listed = ok(engine, "agon-options")
    for key, value in game.options().items():
        assert f"{key}=" in listed, (key, value)
    assert refused(engine, "agon-game no-such-game").startswith("unknown game")
    assert refused(engine, f"agon-game {name} no-such-option=1")
    assert refused(engine, f"agon-game {name} novalue").startswith("syntax error")
    assert engine.game == game

    state = game.new_state()
    state.play(state.legal_moves()[0])
    ok(engine, f"agon-position {state.position()}")
    assert engine.state.position() == state.position()
    legal = ok(engine, "agon-legal").split()
    assert legal == [
        "pass" if move == game.pass_move else game.format_move(move)
        for move in state.legal_moves()
    ]
    assert refused(engine, "undo").startswith("cannot undo")
    assert refused(engine, "agon-position this is no position")
    assert engine.state.position() == state.position()


@pytest.mark.parametrize("name", GAMES)
def test_agon_load_record(name: str, tmp_path: Path) -> None:
    game = make_game(name, smallest(name))
    state = game.new_state()
    for _ in range(2):
        if not state.is_over:
            state.play(state.legal_moves()[0])
    path = tmp_path / "game.json"
    GameRecord.from_state(state, {"black": "a", "white": "b"}).save(path)
    engine = new_engine(GAMES[0])
    assert ok(engine, f"agon-load-record {path}").endswith(f"{len(state.history)} moves")
    assert engine.game == game and engine.state.history == state.history
    ok(engine, "undo")
    assert engine.state.history == state.history[:-1]
    assert "no such file" in refused(engine, f"agon-load-record {tmp_path / 'missing.json'}")
    assert "not a regular file" in refused(engine, "agon-load-record /dev/zero")
    assert "at most" in refused(engine, "agon-load-record " + "x" * 5000)
    path.write_text("{" * 100, encoding="utf-8")
    assert refused(engine, f"agon-load-record {path}")


@pytest.mark.parametrize("name", GAMES)
def test_agon_analyse_and_its_stream(name: str) -> None:
    engine = new_engine(name, smallest(name))
    lines = ok(engine, "agon-analyse 1").split("\n")
    keys = [line.split(" ", 1)[0] for line in lines]
    assert keys == ["value", "exact", "words", "best", "pv", "source"]
    assert re.fullmatch(r"value (0|[+-][0-9.]+)", lines[0])
    assert lines[1] in ("exact yes", "exact no")
    assert refused(engine, "agon-analyse 0").startswith("syntax error")
    assert refused(engine, "agon-analyse 1e9").startswith("syntax error")
    assert refused(engine, "agon-analyse-stream 0").startswith("syntax error")

    reply = engine.reply("8 agon-analyse-stream 10")
    assert reply is not None and reply.stream is not None and reply.opening == "=8 \n"
    shown: list[str] = []
    for info in reply.stream(lambda: len(shown) >= 2):
        shown.append(info)
    assert shown and len(shown) <= 2
    for info in shown:
        assert re.fullmatch(r"info move \S+ value (0|[+-][0-9.]+) exact (yes|no) pv( \S+)*", info)
    assert ok(engine, "name") == "Agon"  # (and the analyst no longer stops)
    assert len(ok(engine, "agon-analyse 0.2").split("\n")) == 6
    engine.close()


# --- garbage -----------------------------------------------------------------------------------

WORDS = st.one_of(
    st.sampled_from([
        "b", "w", "black", "WHITE", "pass", "0", "1", "3", "-1", "1.5", "nan", "inf", "a1",
        "d4-d5", "size=3", "width=2", "komi=x", "rules=traditional", "/dev/zero", ".", "#",
        "9" * 40, "", "\x00", "\xff", "\u202e",
    ]),
    st.text(max_size=12),
)
COMMANDS = st.sampled_from([
    name for name in new_engine(GAMES[0]).commands if not name.startswith("agon-analy")
] + ["", "lz-analyze", "1", "99999999999999999999"])
LINES = st.one_of(
    st.builds(
        lambda command, words: " ".join([command, *words]), COMMANDS, st.lists(WORDS, max_size=4)
    ),
    st.text(max_size=40),
    st.binary(max_size=40).map(lambda data: data.decode("utf-8", "replace")),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(GAMES), lines=st.lists(LINES, max_size=12))
def test_any_line_gets_one_reply_and_never_an_exception(name: str, lines: list[str]) -> None:
    engine = new_engine(name, smallest(name))
    for line in lines:
        reply = engine.reply(line)
        if reply is None:
            assert not clean(line).strip()
            continue
        if reply.stream is None:
            assert REPLY.fullmatch(reply.framed()), reply.framed()
            assert "\n\n" not in reply.framed()[:-2]
        if reply.ends_session:
            return


# --- the real command ----------------------------------------------------------------------------

COMMAND = [
    sys.executable, "-c", "from agon.cli import main; main()", "engine", GAMES[0],
    "--agent", "random",
]
DEADLINE = 600.0
"""Seconds a test waits for the engine (a loaded machine compiling kernels is slow, not
wrong)."""


def start_engine() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def send(process: subprocess.Popen[bytes], data: bytes) -> None:
    assert process.stdin is not None
    process.stdin.write(data)
    process.stdin.flush()


def read_until(
    process: subprocess.Popen[bytes], text: bytes, count: int = 1, seen: bytes = b""
) -> bytes:
    """What the engine writes until ``text`` has come ``count`` times (``seen``: what came
    before)."""
    assert process.stdout is not None
    deadline = time.monotonic() + DEADLINE
    while seen.count(text) < count:
        left = deadline - time.monotonic()
        assert left > 0, f"no {text!r} in {seen[-500:]!r}"
        ready, _, _ = select.select([process.stdout], [], [], left)
        if ready:
            chunk = os.read(process.stdout.fileno(), 65536)
            assert chunk, f"the engine ended early: {seen[-500:]!r}"
            seen += chunk
    return seen


def test_quit_ends_the_engine_with_status_0_while_its_input_stays_open() -> None:
    process = start_engine()
    send(process, b"1 name\n2 quit\n")
    seen = read_until(process, b"=2 \n\n")
    assert seen == b"=1 Agon\n\n=2 \n\n"
    assert process.wait(timeout=DEADLINE) == 0
    assert process.stderr is not None and process.stderr.read() == b""
    assert process.stdin is not None
    process.stdin.close()


def test_the_end_of_input_ends_the_engine_with_status_0() -> None:
    result = subprocess.run(
        COMMAND, input=b"name\nplay b", capture_output=True, timeout=DEADLINE, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(b"= Agon\n\n?")  # (the last line, without its end, too)
    assert result.stdout.count(b"\n\n") == 2
    assert result.stderr == b""


def test_sigterm_ends_the_engine_cleanly() -> None:
    process = start_engine()
    send(process, b"name\n")
    read_until(process, b"= Agon\n\n")
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=DEADLINE)
    assert process.returncode == 130
    assert b"Traceback" not in err


def test_over_long_lines_and_binary_garbage_each_get_one_refusal() -> None:
    garbage = b"\x00\xff\xfe\x80 \x1b[31m play \x00\n"
    long_line = b"9 play b " + b"a" * (MAX_LINE_BYTES + 10) + b"\n"
    result = subprocess.run(
        COMMAND, input=garbage + long_line + b"\t\n# comment\n3 name\n",
        capture_output=True, timeout=DEADLINE, check=False,
    )
    assert result.returncode == 0, result.stderr
    replies = result.stdout.decode().split("\n\n")
    assert replies[-1] == "" and len(replies) == 4, replies
    assert replies[0].startswith("? ")
    assert replies[1] == (
        f"? a line of {len(long_line) - 1:,} bytes: at most {MAX_LINE_BYTES:,} are read"
    )
    assert replies[2] == "=3 Agon"


@pytest.mark.slow
def test_a_stream_runs_until_the_next_line_comes() -> None:
    process = start_engine()
    send(process, b"1 agon-analyse-stream 5\n")
    seen = read_until(process, b"\ninfo move ", count=2)
    assert seen.startswith(b"=1 \ninfo move ")
    send(process, b"2 name\n")
    seen = read_until(process, b"=2 Agon\n\n", seen=seen)
    before, after = seen.split(b"\n\n=2 Agon\n\n")
    assert after == b"" and b"\n\n" not in before
    send(process, b"quit\n")
    assert process.wait(timeout=DEADLINE) == 0
