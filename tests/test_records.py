"""Game records: save, load and replay; every kind of bad record is refused with a message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agon.core import files
from agon.core.errors import RecordError
from agon.core.game import State
from agon.core.records import RECORD_FORMAT, RECORD_VERSION, GameRecord
from agon.games import make_game


def finished_alternator_game() -> State:
    state = make_game("alternator", {"width": 3, "height": 2, "komi": 0.5}).new_state()
    for text in ("a1-a2", "b2-c2", "pass", "pass"):
        state.play_text(text)
    return state


def record_text(**changes: Any) -> str:
    """A valid Alak record's JSON with some fields changed (None removes a field)."""
    data: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "game": "alak",
        "variant": {"size": 5, "rules": "traditional"},
        "players": {"black": "Ann", "white": "Bob"},
        "moves": ["3", "2", "pass"],
    }
    data.update(changes)
    return json.dumps({key: value for key, value in data.items() if value is not None})


def load_text(text: str) -> GameRecord:
    return GameRecord.from_json(text, make_game)


# --- what works ----------------------------------------------------------------------------------


def test_save_load_and_replay_a_finished_game(tmp_path: Path) -> None:
    state = finished_alternator_game()
    record = GameRecord.from_state(state, players={"black": "Ann", "white": "random"})
    assert record.moves == ["a1-a2", "b2-c2", "pass", "pass"]
    assert record.result == "W+4.5" and record.reason == "both players passed"
    assert record.finished is not None
    path = tmp_path / "game.json"
    record.save(path)
    loaded = GameRecord.load(path, make_game)
    assert loaded.game == state.game
    assert loaded.moves == record.moves
    assert loaded.players == {"black": "Ann", "white": "random"}
    assert (loaded.result, loaded.reason, loaded.started) == (
        record.result,
        record.reason,
        record.started,
    )
    final = loaded.replay()
    assert final.position() == state.position()
    assert final.result == "W+4.5"
    assert [s.position() for s in loaded.states()] == [
        s.position() for s in GameRecord.from_state(state).states()
    ]
    assert len(loaded.states()) == 5


def test_the_json_says_what_game_and_variant_it_is(tmp_path: Path) -> None:
    record = GameRecord.from_state(finished_alternator_game())
    data = json.loads(record.to_json())
    assert data["format"] == RECORD_FORMAT and data["version"] == RECORD_VERSION
    assert data["game"] == "alternator"
    assert data["variant"] == {"width": 3, "height": 2, "komi": 0.5}
    assert data["moves"] == ["a1-a2", "b2-c2", "pass", "pass"]


def test_a_game_from_a_loaded_position_replays_from_it(tmp_path: Path) -> None:
    game = make_game("alak", {"size": 5, "rules": "traditional"})
    start = "x.o.. x prisoners=1,0 seen=.....:x,x....:o"
    state = game.parse_position(start)
    state.play_text("4")
    state.play_text("pass")
    record = GameRecord.from_state(state, start_position=start)
    assert record.finished is None and record.result is None
    record.save(tmp_path / "alak.json")
    loaded = GameRecord.load(tmp_path / "alak.json", make_game)
    assert loaded.start_position == start
    assert loaded.replay().position() == state.position()
    assert loaded.states()[0].position() == start


def test_a_record_from_an_unfinished_game_has_no_result() -> None:
    state = make_game("alak").new_state()
    state.play_text("6")
    record = load_text(GameRecord.from_state(state).to_json())
    assert record.result is None and record.finished is None
    assert record.replay().position() == state.position()


def test_a_resignation_and_an_outcome_left_out() -> None:
    resigned = load_text(record_text(moves=["3"], result="W+R", reason="Black resigned",
                                     finished="2026-11-27T10:00:00+00:00"))
    assert resigned.result == "W+R" and not resigned.replay().is_over
    forfeited = load_text(record_text(moves=["3"], result="B+F", reason="White forfeits: late",
                                      finished="2026-11-27T10:00:00+00:00"))
    assert forfeited.result == "B+F" and not forfeited.replay().is_over
    final = finished_alternator_game()
    left_out = load_text(json.dumps({"game": "alternator", "variant": final.game.options(),
                                     "moves": ["a1-a2", "b2-c2", "pass", "pass"]}))
    assert left_out.result == final.result and left_out.reason == final.end_reason
    assert left_out.finished is not None  # (not offered to go on with)


def test_defaults_for_optional_fields() -> None:
    record = load_text(json.dumps({"game": "alak"}))
    assert record.moves == []
    assert record.players == {"black": "?", "white": "?"}
    assert record.game == make_game("alak")


# --- what is refused ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, message",
    [
        ("{", "not valid JSON"),
        ("", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('"alak"', "must be a JSON object"),
        (record_text(format="chess-pgn"), "not an Agon record"),
        (record_text(game=None), "does not say which game"),
        (record_text(game=5), "does not say which game"),
        (record_text(game="chess"), "bad game in record: unknown game 'chess'"),
        (record_text(variant="5 points"), "'variant' must be an object"),
        (record_text(variant={"size": 5, "colour": "red"}), "unknown Alak option"),
        (record_text(variant={"size": "five"}), "bad game in record"),
        (record_text(variant={"size": 0}), "bad game in record"),
        (record_text(variant={"size": 7.5}), "option size must be a whole number, not 7.5"),
        (record_text(variant={"size": True}), "option size must be a whole number, not True"),
        (record_text(variant={"komi": "lots"}), "option komi must be a number, not 'lots'"),
        (record_text(variant={"komi": False}), "option komi must be a number, not False"),
        (record_text(variant={"rules": "traditional", "komi": "nan"}), "komi must be a finite"),
        (record_text(variant={"rules": "japanese"}), "unknown Alak rules"),
        (record_text(moves="3 2 pass"), "'moves' must be a list of move texts"),
        (record_text(moves=[3, 2]), "'moves' must be a list of move texts"),
        (record_text(players=["Ann", "Bob"]), "'players' must be an object"),
        (record_text(started=20240101), "'started' must be a string"),
        (record_text(start_position=7), "'start_position' must be a string"),
        (record_text(moves=["3", "3"]), r"move 2 \('3'\) does not replay: .*3 is occupied"),
        (record_text(moves=["3", "9"]), r"move 2 \('9'\) does not replay: .*off the board"),
        (record_text(moves=["3", "2", "pass", "pass", "1"]), r"move 5 .*the game is over"),
        (
            record_text(variant={"size": 5}, moves=["pass"]),
            r"move 1 .*no pass in the baljeu rules",
        ),
        (record_text(start_position="xx x"), "the start position does not load: .*2 points"),
        # every field is checked, not only the record's shape
        (record_text(players={"black": 10**300}), "black player's name must be a string"),
        (record_text(players={"white": ["Bob"]}), "white player's name must be a string"),
        (record_text(players={"referee": "Cy"}), "unknown seat 'referee'"),
        (record_text(players={"black": "A" * 101}), "name is 101 characters long: at most 100"),
        (record_text(players={"black": "\x1b[2J\x1b]0;title\x07"}), "control character"),
        (record_text(players={"white": "Bob\u202e"}), "control character"),
        (record_text(players={"black": "Ann\nB+9"}), "control character"),
        (record_text(result="\x1b[31mB+9"), "'result' holds a control character"),
        (record_text(reason="x" * 201), "'reason' is 201 characters long: at most 200"),
        (record_text(started="not a date"), "'started' must be a date and time in ISO 8601"),
        (record_text(finished="1e400", result="W+R"), "'finished' must be a date and time"),
        (record_text(started="9" * 5000), "'started' is 5,000 characters long"),
        (record_text(start_position="x" * (10**6 + 1)), "characters long: at most"),
        (record_text(moves=["3", "2", "pass", "pass"], result="B+99", finished="2026-01-01"),
         r"'result' is 'B\+99', but the moves end the game"),
        (record_text(moves=["3"], result="B+2", finished="2026-01-01T00:00:00"),
         "the game is not over after its moves"),
        (record_text(moves=["3"], finished="2026-01-01T00:00:00"),
         "'finished' is given but 'result' is not"),
        (record_text(moves=["3"], result="W+R"), "'result' is given but 'finished' is not"),
    ],
)
def test_bad_records_are_refused_with_a_message(text: str, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        load_text(text)


def test_an_illegal_alternator_move_is_refused_naming_the_rule() -> None:
    text = json.dumps({"game": "alternator", "moves": ["d4-d5", "d6-d5"]})
    with pytest.raises(RecordError, match=r"move 2 .*larger tree must attach to the smaller"):
        load_text(text)


def test_unreadable_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="cannot read"):
        GameRecord.load(tmp_path / "missing.json", make_game)
    with pytest.raises(RecordError, match="is a directory, not a regular file"):
        GameRecord.load(tmp_path, make_game)
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(RecordError, match="not a text file"):
        GameRecord.load(binary, make_game)


# --- saving is atomic ----------------------------------------------------------------------------


def test_saving_over_a_record_replaces_it(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    GameRecord.from_state(make_game("alak").new_state()).save(path)
    GameRecord.from_state(finished_alternator_game()).save(path)
    assert GameRecord.load(path, make_game).game.name == "alternator"
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]


def test_a_failed_save_leaves_the_old_file_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "game.json"
    old = GameRecord.from_state(make_game("alak").new_state())
    old.save(path)
    before = path.read_bytes()

    def disk_full(source: str, destination: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", disk_full)
    with pytest.raises(RecordError, match=r"cannot write .*No space left on device"):
        GameRecord.from_state(finished_alternator_game()).save(path)
    assert path.read_bytes() == before
    assert GameRecord.load(path, make_game).game == old.game


def test_saving_onto_a_directory_or_into_a_missing_one_is_refused(tmp_path: Path) -> None:
    record = GameRecord.from_state(finished_alternator_game())
    (tmp_path / "folder").mkdir()
    with pytest.raises(RecordError, match="cannot write"):
        record.save(tmp_path / "folder")
    with pytest.raises(RecordError, match="cannot write"):
        record.save(tmp_path / "missing" / "game.json")
    assert [p.name for p in tmp_path.iterdir()] == ["folder"]  # no temporary file left
