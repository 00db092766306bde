"""`agon play` loses nothing: every game is saved as it goes and can be resumed; the prompt
stays after the end; input lines are bounded; signals end the game saved."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import shlex
import signal
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from agon.cli import app
from agon.cli.play_commands import MAX_LINE_BYTES
from agon.cli.saved_games import games_folder, save_record
from agon.core.errors import AgonError
from agon.core.records import GameRecord
from agon.games import make_game

runner = CliRunner()
GAME = "play alak --size 5 --white random --seed 3 --plain"
TWO_HUMANS = "play alak --size 5 --white human --plain"
SAVED_NAME = re.compile(r"alak-\d{4}-\d\d-\d\d-\d{6}(-\d+)?\.json")


def agon(line: str, input: str | None = None) -> Result:
    return runner.invoke(app, shlex.split(line), input=input)


def saved_files(home: Path) -> list[Path]:
    return sorted((home / "games").glob("*.json"))


def only_saved(home: Path) -> dict[str, Any]:
    [path] = saved_files(home)
    assert SAVED_NAME.fullmatch(path.name)
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def saved_lines(result: Result) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith("Game saved to ")]


# --- where games go -------------------------------------------------------------------------------


def test_games_folder_follows_agon_home_then_xdg_state_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AGON_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert games_folder() == tmp_path / "home" / "games"
    monkeypatch.delenv("AGON_HOME")
    assert games_folder() == tmp_path / "state" / "agon" / "games"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")  # ignored, as XDG says
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert games_folder() == tmp_path / "user" / ".local" / "state" / "agon" / "games"
    monkeypatch.delenv("XDG_STATE_HOME")
    assert games_folder() == tmp_path / "user" / ".local" / "state" / "agon" / "games"


# --- saved as it goes -----------------------------------------------------------------------------


def test_each_move_is_on_disk_before_the_next_prompt(
    monkeypatch: pytest.MonkeyPatch, saved_games_home: Path
) -> None:
    seen: list[list[str]] = []
    answers = iter(["1", "3", "quit"])

    def read_line(prompt: str) -> str:
        files = saved_files(saved_games_home)
        seen.append(json.loads(files[0].read_text())["moves"] if files else [])
        return next(answers)

    monkeypatch.setattr("agon.cli.play_commands.read_line", read_line)
    result = agon(TWO_HUMANS)
    assert result.exit_code == 0, result.output
    assert seen == [[], ["1"], ["1", "3"]]


def test_end_of_input_leaves_the_game_saved_and_says_where(saved_games_home: Path) -> None:
    result = agon(GAME, input="1\n")
    assert result.exit_code == 0, result.output
    record = only_saved(saved_games_home)
    assert record["moves"][0] == "1" and len(record["moves"]) == 2
    assert record["finished"] is None
    assert record["players"] == {"black": "human", "white": "random"}
    [path] = saved_files(saved_games_home)
    assert saved_lines(result) == [f"Game saved to {path} (`agon play --resume` goes on)"]
    assert result.stdout.rstrip().endswith(saved_lines(result)[0])
    replay = runner.invoke(app, ["replay", str(path), "--all"])
    assert replay.exit_code == 0 and "Move 2/2: White" in replay.stdout


def test_a_game_without_moves_leaves_no_file(saved_games_home: Path) -> None:
    result = agon(GAME, input="quit\n")
    assert result.exit_code == 0
    assert saved_files(saved_games_home) == [] and saved_lines(result) == []


def test_a_finished_game_is_saved_finished_and_said_once(saved_games_home: Path) -> None:
    result = agon(GAME, input="1\n2\n3\n4\n5\n" * 20)
    assert result.exit_code == 0, result.output
    record = only_saved(saved_games_home)
    assert record["finished"] and record["result"]
    lines = saved_lines(result)
    assert len(lines) == 1 and "--resume" not in lines[0]
    assert "Game over> " in result.stdout


def test_an_unusable_folder_is_said_once_and_the_game_goes_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("AGON_HOME", str(blocker))
    result = agon(TWO_HUMANS, input="1\n3\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.count(f"Autosave failed: cannot write in {blocker / 'games'}: ") == 1
    assert "White to move> 3\n" in result.stdout and "end of input" in result.stdout
    assert saved_lines(result) == []


def test_saving_never_replaces_what_is_not_a_regular_file(tmp_path: Path) -> None:
    record = GameRecord.from_state(make_game("alak", {"size": 5}).new_state())
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.json"
    folder.mkdir()
    for target in (fifo, folder):
        with pytest.raises(AgonError, match="not a regular file"):
            save_record(record, target)
    assert fifo.is_fifo() and folder.is_dir()
    link = tmp_path / "link.json"
    real = tmp_path / "real.json"
    real.write_text("{}")
    link.symlink_to(real)
    save_record(record, link)  # a link to a file: the file is replaced, the link kept
    assert link.is_symlink() and json.loads(real.read_text())["game"] == "alak"


def test_save_command_refuses_a_device_in_one_line(saved_games_home: Path) -> None:
    result = agon(GAME, input="1\nsave /dev/null\n")
    assert "Not saved: cannot write /dev/null: it is a character device" in result.stdout


# --- resuming and listing -------------------------------------------------------------------------


def test_resume_goes_on_with_the_latest_unfinished_game_in_its_file(
    saved_games_home: Path,
) -> None:
    assert agon(GAME, input="1\n").exit_code == 0
    [path] = saved_files(saved_games_home)
    first = json.loads(path.read_text())
    resumed = agon("play --resume --plain", input="undo\n4\n")
    assert resumed.exit_code == 0, resumed.output
    assert f"Resuming {path}: 2 moves played." in resumed.stdout
    assert "Black: human, White: random." in resumed.stdout  # the seats from the record
    assert "Took back: 1, " in resumed.stdout
    assert "White (random) plays" in resumed.stdout
    [same] = saved_files(saved_games_home)
    record = json.loads(same.read_text())
    assert same == path and record["moves"][0] == "4" and len(record["moves"]) == 2
    assert record["started"] == first["started"]


def test_resume_a_game_by_name_or_a_record_file(saved_games_home: Path, tmp_path: Path) -> None:
    other = "play alternator --size 2x2 --white random --seed 1 --plain"
    assert agon(GAME, input="1\n").exit_code == 0
    assert agon(other, input="a1-b1\n").exit_code == 0
    by_name = agon("play alak --resume --plain --white human", input="")
    assert "Black: human, White: human." in by_name.stdout
    assert "Resuming " in by_name.stdout and "alak-" in by_name.stdout

    kept = tmp_path / "kept.json"
    assert agon(f"{other}", input=f"a1-b1\nsave {kept}\n").exit_code == 0
    before = kept.read_text()
    count = len(saved_files(saved_games_home))
    from_file = agon(f"play --resume {kept} --plain", input="pass\n")
    assert from_file.exit_code == 0, from_file.output
    assert kept.read_text() == before  # a record of the player's own is never written over
    assert len(saved_files(saved_games_home)) == count + 1  # the game goes on in a new file


def test_resume_refuses_cleanly(saved_games_home: Path, tmp_path: Path) -> None:
    def refused(line: str, fragment: str) -> None:
        result = agon(line)
        assert result.exit_code == 2 and result.stdout == ""
        [message] = result.stderr.splitlines()
        assert message.startswith("error: ") and fragment in message, message

    refused("play --resume", "no unfinished game in ")
    refused("play alak --resume", "no unfinished alak game")
    refused(f"play --resume {tmp_path / 'missing.json'}", "no such file")
    refused("play --resume /dev/null", "not a regular file")
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    refused(f"replay {fifo}", "not a regular file")  # (reading it would wait forever)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    refused(f"play --resume {broken}", "not valid JSON")
    refused("play alak --resume --size 7", "leave out the game's options")
    refused("play", "say which game to play")
    refused("play --list --resume", "--list takes no other option")
    refused("play nothing --list", "unknown game 'nothing'")


def test_a_record_seat_that_is_no_agent_is_played_by_a_human(tmp_path: Path) -> None:
    record = GameRecord.from_state(
        make_game("alak", {"size": 5}).new_state(), {"black": "human", "white": "Alice"}
    )
    path = tmp_path / "friend.json"
    record.save(path)
    result = agon(f"play --resume {path} --plain", input="1\n2\n")
    assert "White was 'Alice', no agent here: a human plays." in result.stdout
    assert "White to move> 2" in result.stdout


def test_list_shows_the_saved_games_latest_first(saved_games_home: Path) -> None:
    assert "No saved games in " in agon("play --list").stdout
    assert agon(GAME, input="1\n").exit_code == 0
    assert agon("play alternator --size 2x2 --black random --white random --seed 1").exit_code == 0
    (saved_games_home / "games" / "zzz.json").write_text("not json")
    listing = agon("play --list")
    assert listing.exit_code == 0, listing.output
    lines = listing.stdout.splitlines()
    assert lines[0] == f"Saved games in {saved_games_home / 'games'}, the latest first:"
    assert "zzz.json  (unreadable: not valid JSON" in lines[1]
    assert re.search(r"alternator-.*; random v random; \d+ moves, [BW]\+", lines[2])
    assert re.search(r"alak-.*; human v random; 2 moves, unfinished", lines[3])
    only_alak = agon("play alak --list").stdout
    assert "alak-" in only_alak and "alternator" not in only_alak and "zzz" not in only_alak


# --- after the end --------------------------------------------------------------------------------


def finish_alternator(commands: list[str]) -> Result:
    """A 2×2 game that both players end by passing, then ``commands`` at the end's prompt."""
    line = "play alternator --size 2x2 --white human --plain"
    return agon(line, input="\n".join(["pass", "pass", *commands]) + "\n")


def test_help_after_the_end_lists_what_can_be_done() -> None:
    out = finish_alternator(["help", "a1-b1"]).stdout
    for command in ("undo", "review", "save FILE", "new", "quit"):
        assert f"\n  {command} " in out.split("Game over> help")[1]
    assert "The game is over. Type 'help'" in out


def test_undo_after_the_end_plays_on_from_the_humans_turn(
    monkeypatch: pytest.MonkeyPatch, saved_games_home: Path
) -> None:
    """Against the computer, undo after the end takes back to the human's turn, however the
    game ended (the human offers the points in turn; the computer's replies are random)."""
    prompts: list[str] = []
    points = iter(["1", "2", "3", "4", "5"] * 20)
    at_the_end = iter(["undo", "quit"])

    def read_line(prompt: str) -> str:
        prompts.append(prompt)
        if prompt == "Game over> ":
            return next(at_the_end)
        return "quit" if "Game over> " in prompts else next(points)

    monkeypatch.setattr("agon.cli.play_commands.read_line", read_line)
    result = agon(GAME)
    assert result.exit_code == 0, result.output
    assert prompts[-2:] == ["Game over> ", "Black to move> "]
    taken_back = result.stdout.split("Took back: ")[1].split("\n")[0].split(", ")
    assert 1 <= len(taken_back) <= 2
    record = only_saved(saved_games_home)
    assert record["finished"] is None
    assert len(record["moves"]) % 2 == 0  # Black's turn


def test_review_after_the_end_steps_through_the_game() -> None:
    out = finish_alternator(["review", "", "b", "2", "", "quit"]).stdout
    review = out.split("Game over> review")[1]
    assert review.index("Start") < review.index("Move 1/2: Black pass")
    assert review.count("Start") == 2  # b went back
    assert "Move 2/2: White pass" in review and "Back to the end." in review


def test_new_and_save_after_the_end(saved_games_home: Path, tmp_path: Path) -> None:
    kept = tmp_path / "kept.json"
    result = finish_alternator([f"save {kept}", "new", "a1-b1"])
    assert result.exit_code == 0, result.output
    assert f"Saved 2 moves to {kept}" in result.stdout and "New game." in result.stdout
    assert json.loads(kept.read_text())["moves"] == ["pass", "pass"]
    games = [json.loads(path.read_text()) for path in saved_files(saved_games_home)]
    assert sorted(len(game["moves"]) for game in games) == [1, 2]
    assert sum(game["finished"] is None for game in games) == 1
    assert len(saved_lines(result)) == 2  # the finished game's file, then the new one's


# --- bounded lines --------------------------------------------------------------------------------


def test_an_over_long_line_is_dropped_whole_and_play_goes_on(saved_games_home: Path) -> None:
    longest = "9" * MAX_LINE_BYTES  # read, and refused as a move
    result = agon(GAME, input=f"{'1' * (MAX_LINE_BYTES + 1)}\n{longest}\n1\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.count(f"That line is over {MAX_LINE_BYTES} bytes: ignored.") == 1
    assert "(4,096 characters) is off the board" in result.stdout
    assert only_saved(saved_games_home)["moves"][0] == "1"


def test_an_endless_line_ends_the_input(saved_games_home: Path) -> None:
    """``agon play < /dev/zero``: one line that never ends (it read for ever, without a word)."""
    with open("/dev/zero", "rb") as zeros:
        result = subprocess.run(
            [sys.executable, "-c", "from agon.cli import main; main()", *shlex.split(GAME)],
            stdin=zeros,
            capture_output=True, text=True, timeout=600, check=False,
        )
    assert "without its end: taken for the end of the input" in result.stdout, result.stderr
    assert "the game is left unfinished" in result.stdout


# --- a real process: signals, and memory ----------------------------------------------------------

COMMAND = [
    sys.executable,
    "-c",
    # (Ctrl-C's default, whatever the test runner's own is)
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from agon.cli import main; main()",
    *shlex.split(GAME),
]
PROMPT = b"Black to move> "


def hangups_heard() -> None:
    """In the child: SIGHUP as a terminal's program has it, whatever the test run's own
    (under ``nohup`` it is ignored, and a program keeps an ignored hangup ignored)."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def start_game() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=hangups_heard,
    )


def read_until(process: subprocess.Popen[bytes], text: bytes, count: int) -> bytes:
    """What the process writes, until ``text`` has come ``count`` times."""
    assert process.stdout is not None
    seen = b""
    while seen.count(text) < count:
        chunk = os.read(process.stdout.fileno(), 65536)
        assert chunk, f"the program ended early: {seen.decode(errors='replace')}"
        seen += chunk
    return seen


def play_one_move(process: subprocess.Popen[bytes]) -> None:
    """Black plays 1, White replies, and Black is asked again: two moves acknowledged."""
    assert process.stdin is not None
    read_until(process, PROMPT, 1)
    process.stdin.write(b"1\n")
    process.stdin.flush()
    read_until(process, PROMPT, 1)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_ends_the_game_saved(stop: signal.Signals, saved_games_home: Path) -> None:
    process = start_game()
    play_one_move(process)
    process.send_signal(stop)
    out, err = process.communicate()
    assert process.returncode == 130, err
    assert b"Traceback" not in err
    [path] = saved_files(saved_games_home)
    lines = out.decode().splitlines()
    assert lines[-2:] == ["Interrupted.", f"Game saved to {path} (`agon play --resume` goes on)"]
    assert len(only_saved(saved_games_home)["moves"]) == 2


def test_closing_the_terminal_ends_the_game_saved(saved_games_home: Path) -> None:
    """In a terminal of its own (a pseudo-terminal), which then closes: the kernel hangs up."""
    terminal, its_end = pty.openpty()

    def own_terminal() -> None:
        hangups_heard()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    process = subprocess.Popen(
        COMMAND,
        stdin=its_end,
        stdout=its_end,
        stderr=its_end,
        start_new_session=True,
        preexec_fn=own_terminal,
    )
    os.close(its_end)
    seen = b""
    while seen.count(PROMPT) < 1:
        seen += os.read(terminal, 65536)
    os.write(terminal, b"1\r")
    while seen.count(PROMPT) < 2:
        seen += os.read(terminal, 65536)
    os.close(terminal)
    assert process.wait() == 130
    assert len(only_saved(saved_games_home)["moves"]) == 2


def test_a_hangup_ignored_by_nohup_stays_ignored(saved_games_home: Path) -> None:
    process = subprocess.Popen(
        COMMAND,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )
    play_one_move(process)
    process.send_signal(signal.SIGHUP)
    out, _ = process.communicate(b"quit\n")
    assert process.returncode == 0 and b"game left unfinished" in out


def test_even_sigkill_loses_no_move_shown(saved_games_home: Path) -> None:
    process = start_game()
    play_one_move(process)
    process.kill()
    process.communicate()
    record = only_saved(saved_games_home)
    assert record["moves"][0] == "1" and len(record["moves"]) == 2


def run_with_line(line_bytes: int) -> tuple[int, int, bytes]:
    """Feed the game a line of ``line_bytes`` bytes then the move 1: its exit status, its
    peak memory (kB), and what it wrote."""
    process = subprocess.Popen(COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    block = b"x" * (1 << 20)
    for _ in range(line_bytes // len(block)):
        process.stdin.write(block)
    process.stdin.write(b"x" * (line_bytes % len(block)) + b"\n1\n")
    process.stdin.close()
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_maxrss, out


def test_an_endless_line_takes_no_memory() -> None:
    size = 256 << 20  # 256 MB: read whole, it would at least double the process's memory
    short_status, short_peak, _ = run_with_line(10)
    status, peak, out = run_with_line(size)
    assert short_status == 0 and status == 0
    assert b"That line is over 4096 bytes: ignored." in out
    assert b"White (random) plays" in out  # the move after the line was read
    assert peak < short_peak + 32 * 1024, (peak, short_peak)


def test_a_game_played_in_one_agon_play_is_refused_to_a_second(saved_games_home: Path) -> None:
    """Two `agon play --resume` of one saved game at once both wrote its file: moves were
    lost. The second is now told who plays it, and the file keeps the first's moves."""
    first = start_game()
    play_one_move(first)  # (saved: two moves)
    [path] = saved_files(saved_games_home)
    second = subprocess.run(
        [*COMMAND[:3], "play", "--resume", str(path), "--plain"], capture_output=True,
        text=True, timeout=120, check=False, input="quit\n",
    )
    assert second.returncode == 2, second.stdout
    assert f"is being played by another agon play (process {first.pid})" in second.stderr
    assert "Traceback" not in second.stderr
    assert first.stdin is not None
    first.stdin.write(b"quit\n")
    first.stdin.flush()
    assert first.wait(timeout=60) == 0
    # once the first has left, the game goes on in a second
    resumed = agon(f"play --resume {path} --plain", input="quit\n")
    assert resumed.exit_code == 0, resumed.output
    assert "Resuming" in resumed.stdout
    assert len(json.loads(path.read_text())["moves"]) == 2
