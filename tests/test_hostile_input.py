"""Hostile input to the terminal tools: each finding of an attack on them, refused with a
one-line message (exit status not 0, no traceback), never a hang or unbounded memory."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from agon.cli import app
from agon.core import memory
from agon.core.errors import AgonError, RecordError
from agon.core.files import read_limited, replace_file
from agon.core.game import MAX_MOVES_LENGTH, MAX_POSITION_LENGTH
from agon.core.limits import Limit
from agon.core.records import MAX_JSON_DEPTH, GameRecord, parse_json
from agon.games import make_game

runner = CliRunner()
AGON = [sys.executable, "-c", "from agon.cli import main; main()"]
SMALL = ["alak", "--size", "5"]


def agon(*args: str, input: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=input)


def assert_clean_refusal(result: Result, *fragments: str) -> str:
    """Exit status not 0, no exception but the exit, one line on stderr naming the problem."""
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def run_agon(*args: str, **options: Any) -> subprocess.CompletedProcess[str]:
    """The command in a process of its own (for reads that would block or fill memory)."""
    return subprocess.run(
        [*AGON, *args], capture_output=True, text=True, check=False, timeout=120, **options
    )


def assert_process_refused(done: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert done.returncode not in (0, None)
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def record_json(**changes: Any) -> str:
    data = {
        "format": "agon-record", "version": 1, "game": "alak", "variant": {"size": 5},
        "moves": ["3"],
    }
    data.update(changes)
    return json.dumps(data)


# --- files that are not regular files, or too large ---------------------------------------------


def test_replay_of_dev_zero_is_refused_without_reading_it() -> None:
    assert_process_refused(run_agon("replay", "/dev/zero"), "/dev/zero", "character device")


def test_resume_from_a_pipe_or_a_folder_is_refused_without_waiting(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe.json"
    os.mkfifo(pipe)
    assert_process_refused(run_agon("play", "--resume", str(pipe)), "is a pipe")
    assert_process_refused(run_agon("replay", str(tmp_path)), "is a directory")


def test_a_file_over_its_limit_is_refused_having_read_one_byte_more(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b" " * 101)
    with pytest.raises(AgonError, match="over 100 bytes: too large to be a test"):
        read_limited(path, 100, "a test")
    assert read_limited(path, 101) == b" " * 101


def test_a_record_too_large_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agon.core import records

    path = tmp_path / "game.json"
    path.write_text(record_json())
    monkeypatch.setattr(records, "MAX_RECORD_BYTES", 50)
    assert_clean_refusal(agon("replay", str(path)), "too large to be a game record")


# --- records: depth, version, numbers ------------------------------------------------------------


def test_a_record_nested_100_000_deep_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert_clean_refusal(agon("replay", str(path)), f"over {MAX_JSON_DEPTH} deep")
    path.write_text('{"game": ' * 100_000 + "1" + "}" * 100_000)
    assert_clean_refusal(agon("play", "--resume", str(path)), "deep")


def test_brackets_in_strings_do_not_count_as_nesting() -> None:
    text = json.dumps({"players": {"black": "[" * 1000 + '\\"{' * 100, "white": "]"}})
    assert parse_json(text)["players"]["white"] == "]"
    with pytest.raises(AgonError, match="deep"):
        parse_json('"\\"" ' + "[" * (MAX_JSON_DEPTH + 1))


def test_a_record_of_an_unknown_version_is_refused_naming_those_read(tmp_path: Path) -> None:
    path = tmp_path / "future.json"
    for version in (99, "1", True, 1.5, None):
        path.write_text(record_json(version=version))
        assert_clean_refusal(agon("replay", str(path)), "this Agon reads version 1")
    path.write_text(record_json(version=1))
    assert agon("replay", str(path), "--all").exit_code == 0


@pytest.mark.parametrize(
    "changes",
    [
        {"variant": {"size": "DIGITS"}},
        {"variant": {"size": 1e308}},
        {"variant": {"komi": 1e999}},
        {"moves": ["9" * 5000]},
        {"start_position": "x" * (MAX_POSITION_LENGTH + 1)},
        {"start_position": ".x... o prisoners=" + "9" * 5000 + ",0"},
    ],
    ids=["5000-digit size", "1e308 size", "infinite komi", "long move", "long position",
         "5000-digit prisoners"],
)
def test_huge_numbers_in_a_record_are_refused(tmp_path: Path, changes: dict[str, Any]) -> None:
    path = tmp_path / "huge.json"
    text = record_json(**changes).replace("Infinity", "1e999")
    path.write_text(text.replace('"DIGITS"', "9" * 5000))
    assert_clean_refusal(agon("replay", str(path)))


# --- numbers in options, budgets and positions ---------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("match", *SMALL, "mcts:100000000000000000000000", "random"),
        ("match", *SMALL, "random", "random", "--games", "100000000000000000000000"),
        ("match", *SMALL, "random", "random", "--jobs", "100000000000000000000000"),
        ("quality", *SMALL, "greedy:100000000000000000000000"),
        ("quality", *SMALL, "greedy", "--positions", "100000000000000000000000"),
        ("solve", *SMALL, "--max-seconds", "1e23"),
        ("solve", *SMALL, "--jobs", "100000"),
        ("tables", "--max-seconds", "1e300"),
        ("tables", "--move-jobs", "100000"),
        ("tables", "--quality-positions", "100000000000000000000000"),
        ("bench", "--seconds", "1e23"),
        ("bench", "--verify", "--games", "100000000000000000000000"),
        ("play", *SMALL, "--black", "mcts:100000000000000000000000"),
    ],
)
def test_huge_numbers_in_options_and_budgets_are_refused(args: tuple[str, ...]) -> None:
    assert_clean_refusal(agon(*args))


def test_a_count_of_many_digits_is_refused_cut_short_as_other_input_is() -> None:
    line = assert_clean_refusal(agon("train", *SMALL, "--exact-nodes", "9" * 400),
                                "--exact-nodes must be 0 to", "not 9,999,", "… (533 characters)")
    assert len(line) < 130


def test_limits_refuse_counts_and_seconds_no_search_can_spend() -> None:
    with pytest.raises(AgonError, match="count limit"):
        Limit(count=10**23)
    with pytest.raises(AgonError, match="time limit"):
        Limit(seconds=1e23)
    with pytest.raises(AgonError, match="budget"):
        Limit.parse("1" + "0" * 23)


def test_a_5000_digit_tree_size_is_refused() -> None:
    tree = "9" * 5000
    position = f"{tree} 1 1 / 1 1 1 / 1 1 1 : b"
    for command in ("state", "solve"):
        assert_clean_refusal(
            agon(command, "alternator", "--size", "3", "--position", position),
            "does not fit on the board",
        )


@pytest.mark.parametrize("count", ["9" * 5000, "9" * 30, "+1", "1_0", "-0", "\u0661"])
def test_counts_in_a_position_are_ascii_digits_within_range(count: str) -> None:
    for command in ("state", "solve"):
        position = f"x.o.. x prisoners={count},0"
        assert_clean_refusal(agon(command, *SMALL, "--position", position), "prisoners=")


def test_position_and_moves_texts_are_length_limited() -> None:
    assert_clean_refusal(
        agon("state", *SMALL, "--position", "." * (MAX_POSITION_LENGTH + 1)),
        f"at most {MAX_POSITION_LENGTH:,}",
    )
    assert_clean_refusal(
        agon("solve", *SMALL, "--moves", "1 " * (MAX_MOVES_LENGTH // 2 + 1)),
        f"at most {MAX_MOVES_LENGTH:,}",
    )


# --- tables larger than the memory available ----------------------------------------------------


@pytest.fixture
def one_gigabyte(monkeypatch: pytest.MonkeyPatch) -> int:
    available = 1 << 30
    monkeypatch.setattr(memory, "available_memory", lambda: available)
    return available


@pytest.mark.parametrize(
    "args", [("solve", *SMALL, "--table-bits", "30"), ("tables", "--table-bits", "30")]
)
def test_table_bits_beyond_the_memory_available_are_refused(
    one_gigabyte: int, args: tuple[str, ...]
) -> None:
    assert_clean_refusal(
        agon(*args), "--table-bits 30", f"{32 << 30:,} bytes", f"{one_gigabyte:,} are available"
    )


def test_a_solver_checks_its_tables_against_the_memory_available(one_gigabyte: int) -> None:
    from agon.solve.solver import Solver

    with pytest.raises(AgonError, match=r"2\*\*30 buckets .* are available"):
        Solver(make_game("alak", {"size": 5}), table_bits=30)


def test_available_memory_is_read_from_the_system() -> None:
    available = memory.available_memory()
    assert available is None or available > 0


# --- saving over what is not a regular file ------------------------------------------------------


def test_saving_never_replaces_a_device_a_pipe_or_a_folder(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    for target in (Path("/dev/null"), pipe, tmp_path):
        with pytest.raises(OSError, match="not a regular file"):
            replace_file(target, "text")
    assert pipe.is_fifo() and Path("/dev/null").is_char_device()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_a_link_is_written_through_and_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    link = tmp_path / "link.json"
    link.symlink_to(real)  # (dangling: the write makes its target)
    replace_file(link, "one")
    replace_file(link, "two")
    assert link.is_symlink() and real.read_text() == "two"
    to_device = tmp_path / "null.json"
    to_device.symlink_to("/dev/null")
    with pytest.raises(OSError, match="character device"):
        replace_file(to_device, "text")
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    with pytest.raises(OSError):
        replace_file(loop, "text")


def test_save_over_a_device_or_through_a_link_at_the_terminal(tmp_path: Path) -> None:
    link = tmp_path / "link.json"
    real = tmp_path / "real.json"
    link.symlink_to(real)
    result = agon(
        "play", *SMALL, "--white", "random", "--seed", "1", "--plain",
        input=f"1\nsave /dev/null\nsave {link}\nquit\n",
    )
    assert "Not saved: cannot write /dev/null: it is a character device" in result.stdout
    assert link.is_symlink() and GameRecord.load(link, make_game).moves[0] == "1"
    assert Path("/dev/null").is_char_device()


def test_a_save_is_flushed_to_the_disk_with_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(descriptor: int) -> None:
        synced.append(descriptor)
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", fsync)
    replace_file(tmp_path / "game.json", "text")
    assert len(synced) == 2  # the file, then its folder


def test_a_record_from_a_file_keeps_its_messages_one_line(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(RecordError, match="not a text file"):
        GameRecord.load(path, make_game)


# --- digits of other scripts ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["state", *SMALL[:1], "--size", "١٢"],
        ["state", "alternator", "--komi", "٣"],
        ["state", "alternator", "--size", "٣x٣"],
        ["state", *SMALL, "--moves", "٣"],
        ["state", "alternator", "--moves", "a١-a٢"],
        ["match", *SMALL[:1], "random", "random", "--games", "1", "--size", "5", "--komi", "²"],
    ],
)
def test_only_ascii_digits_are_numbers(args: list[str]) -> None:
    """A digit of another script (or ``²``, which ``isdigit`` accepts and ``int`` refuses) is
    refused in options as in positions and moves, in one line."""
    assert_clean_refusal(agon(*args))


def test_a_superscript_digit_at_the_replay_prompt_is_no_jump(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    path.write_text(record_json())
    result = agon("replay", str(path), input="²\n١\nq\n")
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output


def test_the_review_prompt_reads_only_ascii_numbers() -> None:
    from agon.cli.play_commands import replay_step

    assert replay_step(0, "²", 5) == 1  # (Enter's meaning: the next position)
    assert replay_step(0, "١", 5) == 1
    assert replay_step(0, "3", 5) == 3
    assert replay_step(0, "9" * 5000, 5) == 1


# --- file names no file can have --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("a\0b.json", "holds a NUL byte"),
        ("~nosuchuser-of-agon/x.json", "cannot find the home folder of ~nosuchuser-of-agon"),
        ("x" * 300 + ".json", "cannot write"),
    ],
)
def test_save_to_a_name_no_file_can_have_says_so_and_play_goes_on(
    name: str, message: str
) -> None:
    result = agon("play", *SMALL, "--white", "random", "--plain", input=f"save {name}\nquit\n")
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert "Not saved: " in result.stdout and message in result.stdout


@pytest.mark.parametrize("args", [["play", *SMALL], ["play", "--list"], ["play", "--resume"]])
def test_an_agon_home_of_no_user_is_refused_in_one_line(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGON_HOME", "~nosuchuser-of-agon/agon")
    assert_clean_refusal(agon(*args, input=""), "~nosuchuser-of-agon")


def test_an_agon_home_of_no_user_leaves_analysis_without_a_cache(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGON_HOME", "~nosuchuser-of-agon/agon")
    result = agon("analyse", *SMALL, "--limit", "1s")
    assert result.exit_code == 0, result.output


def test_tables_out_of_an_empty_name_is_refused() -> None:
    assert_clean_refusal(agon("tables", "--out", ""), "must be a Markdown file")


def test_ctrl_c_while_the_command_loads_ends_it_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """(Ctrl-C 0.3 s after `agon solve` started gave a KeyboardInterrupt traceback from the
    imports.)"""
    import builtins

    from agon import console

    real_import = builtins.__import__

    def interrupted(name: str, *args: Any, **options: Any) -> Any:
        if name == "agon.cli":
            raise KeyboardInterrupt
        return real_import(name, *args, **options)

    monkeypatch.setattr(builtins, "__import__", interrupted)
    with pytest.raises(SystemExit) as stopped:
        console.main()
    assert stopped.value.code == 130
    assert capsys.readouterr().err == "interrupted\n"


@pytest.mark.parametrize(
    "args",
    [
        ["solve", *SMALL, "--openings", "--jobs", "2"],
        ["match", *SMALL[:1], "random", "random", "--games", "2", "--jobs", "2", "--size", "5"],
    ],
)
def test_too_few_open_files_for_the_workers_is_said_in_one_line(args: list[str]) -> None:
    import resource

    def few_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (12, 12))

    done = run_agon(*args, preexec_fn=few_files)
    assert done.returncode not in (0, None) and "Traceback" not in done.stderr
    [line] = [line for line in done.stderr.splitlines() if line.strip()]
    assert "cannot start 2 worker processes" in line and "ulimit -n" in line


def test_a_table_past_the_address_space_limit_is_refused_before_it_is_allocated() -> None:
    """``ulimit -v``: the memory check read only the machine's MemAvailable, so a table that
    fitted the machine but not the process was allocated (and failed there)."""
    import resource

    def three_gigabytes() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    done = run_agon(*["solve", *SMALL, "--table-bits", "27"], preexec_fn=three_gigabytes)
    assert_process_refused(done, "--table-bits 27", "bytes of memory")


@pytest.mark.parametrize("command", [["db", "upgrade"], ["serve", "--port", "1"]])
@pytest.mark.parametrize("url", [
    "postgresql://agon:secret@[::1", "postgresql://agon:secret@[::1:x/agon",
])
def test_a_database_url_that_does_not_parse_is_refused_with_its_password_hidden(
    command: list[str], url: str
) -> None:
    line = assert_clean_refusal(agon(*command, "--database", url), "is not a database URL")
    assert "secret" not in line


def test_an_address_the_arena_cannot_listen_on_is_refused_before_it_starts(
    tmp_path: Path,
) -> None:
    database = str(tmp_path / "arena.db")
    for host, words in (("999.1.1.1", "--host '999.1.1.1' is not an address to listen on"),
                        ("a" * 300, "is not an address to listen on: not a host name")):
        assert_clean_refusal(agon("serve", "--db", database, "--host", host), words)
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert_clean_refusal(
            agon("serve", "--db", database, "--port", str(port)),
            f"cannot listen on 127.0.0.1 port {port}: Address already in use",
        )
    assert not (tmp_path / "arena.db").exists()


def test_a_bad_thread_count_for_the_computer_is_refused_before_the_arena_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not found only when the top level first thinks (it then played random moves)."""
    monkeypatch.setenv("AGON_THREADS", "0")
    with socket.create_server(("127.0.0.1", 0)) as taken:  # were it to start, it would stop
        port = str(taken.getsockname()[1])
        assert_clean_refusal(agon("serve", "--db", str(tmp_path / "arena.db"), "--port", port),
                             "AGON_THREADS='0' is not a number of threads from 1 to 256")
