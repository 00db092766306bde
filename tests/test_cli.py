"""The commands play, state, rules and replay, driven as a user would."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from agon.cli import app
from agon.cli.play_commands import replay_step
from agon.core.texts import LANGUAGE_NAMES

LANGUAGES = tuple(LANGUAGE_NAMES)

runner = CliRunner()


def agon(*args: str, input: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=input)


def command_line(line: str, input: str | None = None) -> Result:
    return agon(*shlex.split(line), input=input)


def state_json(*args: str) -> dict[str, Any]:
    result = agon("state", *args, "--json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def assert_refused(result: Result, *fragments: str) -> None:
    """Exit status 2, nothing on stdout, one line on stderr that says what is wrong."""
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for fragment in fragments:
        assert fragment in lines[0]
    assert "Traceback" not in result.output


# --- agon state --------------------------------------------------------------------------------


def test_state_json_alternator_start() -> None:
    data = state_json("alternator", "--size", "2x2")
    assert data["game"] == "alternator"
    assert data["variant"] == {"width": 2, "height": 2, "komi": 3.5}
    assert data["moves"] == []
    assert data["position"] == "1 1 / 1 1 : b"
    assert data["to_move"] == "black"
    assert " ".join(data["legal_moves"]) == "a1-a2 a1-b1 b1-b2 b1-a1 a2-b2 a2-a1 b2-b1 b2-a2 pass"
    assert (data["over"], data["reason"], data["result"]) == (False, None, None)
    assert data["score"] == {"black": 2, "white": 5.5}
    assert data["margin"] == -3.5


def test_state_json_alternator_finished_game() -> None:
    data = state_json(
        "alternator", "--size", "2x2", "--komi", "1", "--moves", "a1-b1, b2-a2 pass pass"
    )
    assert data["moves"] == ["a1-b1", "b2-a2", "pass", "pass"]
    assert data["over"] is True and data["to_move"] is None and data["legal_moves"] == []
    assert data["reason"] == "both players passed"
    assert data["score"] == {"black": 0, "white": 5}
    assert (data["margin"], data["result"]) == (-5, "W+5")


def test_state_json_follows_a_position() -> None:
    data = state_json("alak", "--size", "7", "--position", "xx.xxo. o", "--moves", "3")
    assert data["position"].startswith("..o..o. x captured=1,2,4,5")
    assert data["score"] == {"black": 0, "white": 2}
    assert data["legal_moves"] == ["7"]  # the captured points are forbidden to x this move


@pytest.mark.parametrize(
    ("options", "moves", "reason", "score", "result"),
    [
        (["--rules", "baljeu"], "2 1 3", "White has no legal placement", [2, 1], "B+1"),
        (["--rules", "traditional"], "2 pass pass", "both players passed", [3, 0], "B+3"),
        (
            ["--rules", "tromp-taylor", "--komi", "3.5"],
            "2 pass pass",
            "both players passed",
            [3, 3.5],
            "W+0.5",
        ),
    ],
)
def test_state_json_alak_rule_sets(
    options: list[str], moves: str, reason: str, score: list[float], result: str
) -> None:
    data = state_json("alak", "--size", "3", *options, "--moves", moves)
    assert data["variant"]["rules"] == options[1]
    assert data["over"] is True and data["reason"] == reason
    assert data["score"] == {"black": score[0], "white": score[1]}
    assert data["result"] == result


def test_state_json_alak_game_in_progress() -> None:
    data = state_json("alak", "--size", "5", "--rules", "traditional", "--moves", "1 2")
    assert data["to_move"] == "black" and data["over"] is False
    assert data["legal_moves"] == ["3", "4", "5", "pass"]  # 1 would be suicide
    assert data["score"] == {"black": 0, "white": 6}  # 1 stone, 4 territory, 1 prisoner


def test_state_text_output() -> None:
    result = agon("state", "alternator", "--size", "3x3", "--moves", "a1-b1")
    assert result.exit_code == 0
    assert "[→] 2 [·]" in result.stdout
    assert "White to move" in result.stdout
    assert "Legal moves (" in result.stdout and "Position: " in result.stdout


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["alternator", "--moves", "a1-a2 zz"], ["move 2 (zz)", "is not a move"]),
        (
            ["alternator", "--size", "3x3", "--moves", "a1-b1 b2-b1 a1-a2"],
            ["move 2 (b2-b1)", "the larger tree must attach to the smaller"],
        ),
        (
            ["alternator", "--moves", "d4-d5 e5-e4 d4-c4"],
            ["move 3 (d4-c4): d4 already has a dot (a pit)"],
        ),
        (["alternator", "--moves", "a1-c1"], ["move 1 (a1-c1)", "not orthogonally adjacent"]),
        (["alak", "--moves", "pass"], ["move 1 (pass)", "no pass in the baljeu rules"]),
        (["alak", "--size", "5", "--moves", "1 1"], ["move 2 (1): point 1 is occupied"]),
        (["alak", "--size", "5", "--moves", "9"], ["move 1 (9)", "off the board"]),
        (["alak", "--position", "xx.x o"], ["bad position", "4 points"]),
        (["alternator", "--size", "2x2", "--position", "1 1 / 1 1"], ["bad position"]),
        (["alak", "--rules", "nonsense"], ["unknown Alak rules 'nonsense'"]),
        (["alternator", "--size", "1x1"], ["at least two cells"]),
        (["alternator", "--size", "8by8"], ["board size"]),
        (["alternator", "--edge-capture"], ["not an option of Alternator"]),
        (["alak", "--size", "x"], ["whole number"]),
        (["alak", "--komi", "2"], ["no komi"]),
        (["alternator", "--komi", "nan"], ["komi must be a finite number, not nan"]),
        (["alak", "--rules", "tromp-taylor", "--komi", "inf"], ["finite number, not inf"]),
        (["chess"], ["unknown game 'chess'"]),
    ],
)
def test_state_bad_input_is_one_line_and_status_2(args: list[str], fragments: list[str]) -> None:
    assert_refused(agon("state", *args, "--json"), *fragments)
    assert_refused(agon("state", *args), *fragments)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["alak", "--size", "5", "--position", "." * 100_000 + " x"], "(100,000 characters)"),
        (["alak", "--moves", "9" * 5_000], "(5,000 characters) is off the board"),
        (["alternator", "--moves", "z" * 5_000], "(5,000 characters) is not a move"),
        # more digits than int() reads
        (["alak", "--size", "9" * 5_000], "option size is out of range"),
        (["alternator", "--size", "3x" + "9" * 5_000], "out of range: a side has 1 to 26 cells"),
        (["alak", "--size", "5", "--position", "..... x captured=" + "9" * 5_000], "captured="),
    ],
)
def test_long_bad_input_is_not_repeated_whole(args: list[str], fragment: str) -> None:
    result = agon("state", *args)
    assert result.exit_code == 2 and fragment in result.stderr
    assert len(result.stderr) < 300


def test_usage_errors_exit_2_without_traceback() -> None:
    for args in (["state"], ["state", "alak", "--bogus"], ["play", "alak", "--seed", "x"]):
        result = agon(*args)
        assert result.exit_code == 2
        assert result.stdout == ""
        assert "Traceback" not in result.output


def test_streams_separate_in_a_real_process() -> None:
    command = [sys.executable, "-c", "from agon.cli import main; main()", "state", "alak"]
    good = subprocess.run(
        [*command, "--size", "4", "--json", "--moves", "2"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert good.returncode == 0 and good.stderr == ""
    assert json.loads(good.stdout)["position"].startswith(".x.. o")
    bad = subprocess.run(
        [*command, "--json", "--moves", "2 2"], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr == "error: move 2 (2): point 2 is occupied\n"


# --- agon rules ----------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("game", ["alternator", "alak"])
def test_rules_in_every_language(game: str, lang: str) -> None:
    result = agon("rules", game, "--lang", lang)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("# ")
    assert game.capitalize() in result.stdout.splitlines()[0]


def test_rules_follow_the_variant_and_refuse_bad_options() -> None:
    baljeu = agon("rules", "alak").stdout
    traditional = agon("rules", "alak", "--rules", "traditional").stdout
    assert baljeu != traditional
    assert_refused(agon("rules", "alak", "--lang", "xx"), "no rules text in language 'xx'")
    assert_refused(
        agon("rules", "alternator", "--rules", "baljeu"), "not an option of Alternator"
    )


# --- agon play -----------------------------------------------------------------------------------


def test_play_whole_alak_game_against_random() -> None:
    # Offer every point in turn: occupied and forbidden points are refused and asked again.
    moves = "help\n" + "1\n2\n3\n4\n5\n" * 40
    result = command_line("play alak --size 5 --black human --white random --seed 3", moves)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert "Legal moves (5):\n  1 2 3 4 5" in result.stdout
    assert "White (random) plays " in result.stdout
    assert "is not allowed: point" in result.stdout
    assert "has no legal placement" in result.stdout
    assert " wins by " in result.stdout or "draw" in result.stdout


def test_play_alternator_with_undo_save_and_replay(tmp_path: Path) -> None:
    record_file = tmp_path / "game.json"
    commands = [
        "help",
        "zz",  # unreadable
        "a1-b1",
        "a1-a2",  # illegal: a1 is now a pit
        "undo",  # takes back a1-b1 and the computer's reply
        "undo",  # nothing of Black's left to take back
        "hint",
        "a1-b1",
        f"save {record_file}",
        *["pass"] * 4,
    ]
    result = command_line(
        "play alternator --size 2x2 --white random --seed 1 --plain", "\n".join(commands) + "\n"
    )
    out = result.stdout
    assert result.exit_code == 0, result.output
    assert "Legal moves (9):" in out
    assert "'zz' is not a move" in out
    assert "a1-a2 is not allowed: a1 already has a dot (a pit)." in out
    assert "Took back: a1-b1, " in out
    assert "There is no move of yours to take back." in out
    assert re.search(r"Hint: \S+.* — (best play|about)", out)
    assert f"Saved 2 moves to {record_file}" in out
    assert "Game over: both players passed" in out
    assert "(both players passed).\nGame saved to " in out

    record = json.loads(record_file.read_text())
    assert record["game"] == "alternator" and record["moves"][0] == "a1-b1"
    assert record["players"] == {"black": "human", "white": "random"}

    replay = agon("replay", str(record_file), "--all")
    assert replay.exit_code == 0, replay.output
    assert "Start" in replay.stdout
    assert "Move 1/2: Black a1-b1" in replay.stdout
    assert f"Move 2/2: White {record['moves'][1]}" in replay.stdout
    assert replay.stdout.count("Score:") == 3


def test_play_computer_against_computer_from_a_position() -> None:
    result = command_line(
        "play alak --size 6 --rules tromp-taylor --black random --white random --seed 5 "
        "--position 'x..... o'"
    )
    assert result.exit_code == 0, result.output
    assert "Black (random) plays" in result.stdout
    assert "Game over: " in result.stdout


def test_play_ends_cleanly_on_end_of_input_quit_and_ctrl_c(monkeypatch: pytest.MonkeyPatch) -> None:
    eof = agon("play", "alak", "--white", "random", input="3\n")
    assert eof.exit_code == 0
    assert "end of input: the game is left unfinished" in eof.stdout
    assert "Traceback" not in eof.output
    quit_ = agon("play", "alak", "--white", "random", input="quit\n")
    assert quit_.exit_code == 0 and "game left unfinished" in quit_.stdout

    def interrupt(prompt: str = "") -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr("agon.cli.play_commands.read_line", interrupt)
    stopped = agon("play", "alak", "--white", "random")
    assert stopped.exit_code == 130
    assert "Interrupted." in stopped.stdout and "Traceback" not in stopped.output


def test_play_refuses_bad_agents_and_positions() -> None:
    assert_refused(agon("play", "alak", "--white", "nobody"), "--white", "unknown agent 'nobody'")
    assert_refused(agon("play", "alak", "--black", "random:fast"), "--black", "budget")
    assert_refused(agon("play", "alak", "--position", "xyz x"), "bad position")


def test_play_help_lists_the_agents() -> None:
    result = agon("play", "--help")
    assert result.exit_code == 0
    assert "random" in result.stdout


# --- agon replay ---------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["replay", "analyse"])
def test_commands_that_read_records_refuse_bad_ones(command: str, tmp_path: Path) -> None:
    assert_refused(agon(command, str(tmp_path / "missing.json")), "cannot read")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert_refused(agon(command, str(broken)), "not valid JSON")
    not_a_record = tmp_path / "list.json"
    not_a_record.write_text("[1, 2]")
    assert_refused(agon(command, str(not_a_record)), "a record must be a JSON object")
    illegal = tmp_path / "illegal.json"
    illegal.write_text(json.dumps({"game": "alak", "variant": {"size": 5}, "moves": ["2", "2"]}))
    assert_refused(agon(command, str(illegal)), "move 2", "occupied")
    assert_refused(agon(command, str(tmp_path)), "directory")


def test_replay_steps() -> None:
    assert replay_step(0, "", 3) == 1
    assert replay_step(3, "", 3) is None
    assert replay_step(2, "b", 3) == 1
    assert replay_step(0, "b", 3) == 0
    assert replay_step(1, "7", 3) == 3
    assert replay_step(1, "0", 3) == 0
    assert replay_step(1, "q", 3) is None


def test_after_a_stop_a_repeated_signal_cannot_kill_the_report() -> None:
    """``timeout`` signals the program, then its group: once a stop has begun, the program
    reports and ends with its own status, whatever signal comes next."""
    import os
    import signal
    import time

    from agon.cli.common import terminate_as_interrupt

    before = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(KeyboardInterrupt), terminate_as_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # (the signal's handler raises before this ends)
        after = signal.getsignal(signal.SIGTERM)
        assert after not in (signal.SIG_DFL, signal.SIG_IGN)  # (SIG_IGN is inherited)
        os.kill(os.getpid(), signal.SIGTERM)  # does nothing: the test goes on
        time.sleep(0.1)
        with pytest.raises(KeyboardInterrupt), terminate_as_interrupt():  # a new block stops
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_stop_that_compiled_code_turned_into_its_own_error_is_found_beneath_it() -> None:
    """Numba calls back into Python to unbox a kernel passed as an argument; a signal handled
    there raised a TypeError ("missing 'sig'") with the stop only as its context."""
    from agon.cli.common import Terminated
    from agon.core.workers import stop_beneath

    try:
        try:
            raise Terminated
        except KeyboardInterrupt:
            raise TypeError("_get_jit_address() missing 1 required positional argument")  # noqa: B904 - (as Numba raises it)
    except TypeError as error:
        assert isinstance(stop_beneath(error), Terminated)
    try:
        try:
            raise ValueError("an error")
        except ValueError:
            raise TypeError("another")  # noqa: B904 - (a plain error while handling one)
    except TypeError as error:
        assert stop_beneath(error) is None


def test_after_a_stop_the_stop_signals_are_blocked_while_python_tears_down() -> None:
    """Python puts back the default handlers after the exit handlers: a repeat arriving then
    (under load, a second after the stop) killed a stopped solve with -15 after its report."""
    program = textwrap.dedent("""
        import atexit, os, signal, sys, time
        from agon.cli.common import terminate_as_interrupt

        # registered first, so it runs last: after Agon's own exit handlers
        atexit.register(lambda: print(signal.SIGTERM in signal.pthread_sigmask(
            signal.SIG_BLOCK, []), flush=True))
        try:
            with terminate_as_interrupt():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
        except KeyboardInterrupt:
            pass
        sys.exit(130)
    """)
    ended = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60
    )
    assert ended.returncode == 130, ended.stderr
    assert ended.stdout.strip() == "True"


def test_a_stop_heard_by_a_solve_is_asked_again_between_its_chunks() -> None:
    """The ``KeyboardInterrupt`` of a stop is lost where it lands in a callback from C (Numba's
    compiler calls one as it caches a kernel): the solver's searches then ask whether a stop
    was heard between their chunks."""
    import os
    import signal
    import time

    from agon.cli.common import filtered_stop_signals
    from agon.core.workers import stop_asked

    # (a test worker may ignore Ctrl-C: here it raises, as in a program)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with filtered_stop_signals():
            assert not stop_asked()
            with pytest.raises(KeyboardInterrupt):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)  # (the signal's handler raises before this ends)
            assert stop_asked()
        assert not stop_asked()  # (the next solve starts afresh)
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_stop_lost_in_a_callback_from_c_is_not_reported_as_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Python reports an exception raised in a callback from C ("Exception ignored on calling
    ctypes callback function", with a traceback): a stop's ``KeyboardInterrupt`` is heard and
    answered, so it is not reported; any other exception still is."""
    import ctypes
    import os
    import signal
    import sys
    import time

    from agon.cli.common import filtered_stop_signals
    from agon.core.workers import stop_asked

    reported: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda report: reported.append(report.exc_type))

    def stopped_inside() -> None:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # (the signal's handler raises before this ends)

    def failing_inside() -> None:
        raise ValueError("a fault")

    # (a test worker may ignore Ctrl-C: here it raises, as in a program)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with filtered_stop_signals():
            ctypes.CFUNCTYPE(None)(stopped_inside)()
            assert stop_asked()
            ctypes.CFUNCTYPE(None)(failing_inside)()
    finally:
        signal.signal(signal.SIGINT, before)
    assert reported == [ValueError]


@pytest.mark.parametrize("stopped", [True, False], ids=["after a stop", "without a stop"])
def test_a_finalizer_failing_after_a_stop_is_not_reported(
    monkeypatch: pytest.MonkeyPatch, stopped: bool,
) -> None:
    """A stop that lands while Numba compiles can leave one of LLVM's objects half-made, whose
    finalizer then fails when it is collected, after the command has answered the stop: that
    report (with its traceback) is not printed; without a stop it still is."""
    import gc

    from agon.cli.common import filtered_stop_signals
    from agon.core.workers import hear_stop

    reported: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda report: reported.append(report.exc_type))

    class HalfMade:
        def __del__(self) -> None:
            raise AttributeError("_as_parameter_")

    left = [HalfMade()]
    with filtered_stop_signals():
        if stopped:
            hear_stop()  # (as its signal's handler does)
    left.clear()
    gc.collect()
    assert reported == ([] if stopped else [AttributeError])


def test_a_stop_while_a_kernel_compiles_is_answered_once_it_is_built(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """A ``KeyboardInterrupt`` landing inside Numba's compiler leaves the kernel half-built (the
    compile then fails with "no compiled object yet", or the program crashes as it ends): the
    stop is held while the main thread holds the compiler's lock, nested compiles included, said
    on stderr, and raised as it lets go."""
    import os
    import signal
    import time

    from numba.core.compiler_lock import global_compiler_lock

    from agon.core.workers import held_while_compiling

    built = False
    before = signal.signal(signal.SIGINT, held_while_compiling(signal.default_int_handler))
    try:
        with pytest.raises(KeyboardInterrupt), global_compiler_lock:
            with global_compiler_lock:  # (a compile within a compile)
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.5)  # (the signal's handler runs before this ends)
            time.sleep(0.5)
            built = True
        with pytest.raises(KeyboardInterrupt):  # (no compile: at once)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
    finally:
        signal.signal(signal.SIGINT, before)
    assert built
    assert capfd.readouterr().err.count("stopping once the kernel being compiled is built") == 1


def test_a_stop_is_not_held_for_a_compile_in_another_thread() -> None:
    """Only the main thread hears stops: a kernel compiled by another thread (the arena's
    thinking) does not hold them."""
    import os
    import signal
    import threading
    import time

    from numba.core.compiler_lock import global_compiler_lock

    from agon.core.workers import held_while_compiling

    locked, release = threading.Event(), threading.Event()

    def compile_elsewhere() -> None:
        with global_compiler_lock:
            locked.set()
            release.wait(60)

    other = threading.Thread(target=compile_elsewhere)
    before = signal.signal(signal.SIGINT, held_while_compiling(signal.default_int_handler))
    other.start()
    try:
        assert locked.wait(60)
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
    finally:
        release.set()
        other.join()
        signal.signal(signal.SIGINT, before)


def test_a_parent_waiting_for_its_workers_answers_a_stop_whose_interrupt_was_lost() -> None:
    """The parent of a parallel solve that heard a stop while it compiled a kernel (where the
    stop's ``KeyboardInterrupt`` is lost) raises it while it waits for its workers' results,
    instead of waiting for them for ever."""
    import time

    from agon.core.workers import WorkerResults, hear_stop, stop_signal, worker_pool

    pool = worker_pool(1, stop=stop_signal())
    try:
        results: WorkerResults[str, None] = WorkerResults(pool)
        results.submit("long", time.sleep, 120)
        hear_stop()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            results.next()
        assert time.monotonic() - started < 60  # (generous: the wait is for the task's 120 s)
    finally:
        hear_stop(False)
        pool.terminate()
        pool.join()
