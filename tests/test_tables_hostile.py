"""Hostile files and sizes for the solver's tables: a tables file Agon did not write (`agon solve
--tables-file`), hand-edited `agon tables` results, and a --table-bits far larger than the
board can fill. Each bad file is refused with one line naming it and what is wrong in it, and
left as it was; never a traceback, a hang or memory beyond what the file declares and the
machine has."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner, Result

from agon.cli import app
from agon.cli.solve_commands import SMALL_BOARD_TABLE_BITS
from agon.core import memory
from agon.core.errors import AgonError
from agon.games.alak import Alak
from agon.solve.checkpoint import MAX_HEADER_BYTES, TABLE_NAMES, load_tables
from agon.solve.solver import Solver
from agon.solve.tables.runner import MAX_RESULTS_BYTES

runner = CliRunner()


def assert_refused(result: Result, *fragments: str) -> str:
    """Exit status 2, no exception but the exit, one line on stderr holding ``fragments``."""
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


# --- tables files ---------------------------------------------------------------------------------

GAME = Alak(5)
BITS = 10
SOLVE = ["solve", "alak", "--size", "5", "--table-bits", str(BITS)]


def _npy(array: Any) -> bytes:
    """An array as a ``.npy`` member holds it."""
    out = io.BytesIO()
    np.lib.format.write_array(out, np.asanyarray(array), allow_pickle=False)
    return out.getvalue()


def _npy_header(shape: tuple[int, ...], descr: str = "<i8", fortran_order: bool = False) -> bytes:
    """A ``.npy`` header alone: the array it declares has no data."""
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        out, {"descr": descr, "shape": shape, "fortran_order": fortran_order}
    )
    return out.getvalue()


def _header_text(fields: Any) -> bytes:
    return _npy(np.array(json.dumps(fields)))


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {
            info.filename.removesuffix(".npy"): archive.read(info) for info in archive.infolist()
        }


def _write_archive(path: Path, members: dict[str, bytes], compressed: tuple[str, ...] = ()) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            method = zipfile.ZIP_DEFLATED if name in compressed else zipfile.ZIP_STORED
            archive.writestr(f"{name}.npy", data, method)


def _saved(path: Path) -> tuple[dict[str, bytes], dict[str, Any]]:
    """Tables that fit ``SOLVE`` saved to ``path``: the archive's members and its header."""
    Solver(GAME, BITS).save_tables(path)
    members = _members(path)
    with np.load(path) as content:
        return members, json.loads(str(content["header"]))


def _with_header(**changes: Any) -> Callable[[dict[str, bytes], dict[str, Any]], None]:
    def edit(members: dict[str, bytes], header: dict[str, Any]) -> None:
        members["header"] = _header_text(header | changes)

    return edit


def _with_work(**changes: Any) -> Callable[[dict[str, bytes], dict[str, Any]], None]:
    def edit(members: dict[str, bytes], header: dict[str, Any]) -> None:
        members["header"] = _header_text(header | {"work": header["work"] | changes})

    return edit


def _with_member(name: str, data: bytes) -> Callable[[dict[str, bytes], dict[str, Any]], None]:
    def edit(members: dict[str, bytes], header: dict[str, Any]) -> None:
        members[name] = data

    return edit


def _without(name: str) -> Callable[[dict[str, bytes], dict[str, Any]], None]:
    def edit(members: dict[str, bytes], header: dict[str, Any]) -> None:
        del members[name]

    return edit


def _table_of(rows: int, descr: str = "<i8") -> bytes:
    return _npy(np.zeros((rows, 2), dtype=np.dtype(descr)))


TABLES_FILES: list[Any] = [
    pytest.param(_with_member("header", _npy(np.array("null"))),
                 "its header is not a JSON object", id="header-null"),
    pytest.param(_with_member("header", _npy(np.array("5"))),
                 "its header is not a JSON object", id="header-an-integer"),
    pytest.param(_with_member("header", _npy(np.array("[" * 100_000 + "]" * 100_000))),
                 "its header: the JSON nests arrays or objects over 20 deep", id="header-deep"),
    pytest.param(_with_member("header", _npy(np.array("{" * 3))),
                 "its header: not valid JSON", id="header-truncated"),
    pytest.param(_with_member("header", _npy(np.arange(3))), "its header is not a text",
                 id="header-not-text"),
    pytest.param(_with_member("header", _npy(np.array("x" * MAX_HEADER_BYTES))),
                 f"its header is over {MAX_HEADER_BYTES:,} bytes", id="header-huge"),
    pytest.param(_with_header(variant=5), "its header's variant is 5, not a JSON object",
                 id="variant-an-integer"),
    pytest.param(_with_header(variant={"game": "alak"}), "its variant has no options",
                 id="variant-fields-missing"),
    pytest.param(_with_header(symmetry="yes"), "its header's symmetry is \"yes\", not true",
                 id="symmetry-a-text"),
    pytest.param(_with_header(kernels=None), "its header's kernels is null, not a text",
                 id="kernels-null"),
    pytest.param(_with_header(extra=1), "its header has a field Agon does not write: extra",
                 id="header-extra-field"),
    pytest.param(_with_header(work=[1]), "its header's work is [1], not a JSON object",
                 id="work-a-list"),
    pytest.param(_with_work(nodes="many"), "its work's nodes is \"many\", not a whole number",
                 id="nodes-a-text"),
    pytest.param(_with_work(nodes=True), "its work's nodes is true, not a whole number",
                 id="nodes-true"),
    pytest.param(_with_work(nodes=-1), "its work's nodes is not a count: -1", id="nodes-negative"),
    pytest.param(_with_work(runs=1 << 64), "its work's runs is not a count",
                 id="runs-beyond-64-bits"),
    pytest.param(_with_work(seconds=float("nan")), "its work's seconds are not a duration: nan",
                 id="seconds-nan"),
    pytest.param(_with_member("table", _npy_header((1 << 40, 2))),
                 "its table of shape (1099511627776, 2) needs 17,592,186,044,416 bytes, and the "
                 "archive holds 0", id="table-of-2**40-rows"),
    pytest.param(_with_member("table", _table_of(1 << BITS + 1, "<f8")),
                 "its table is not a table of 64-bit integers", id="table-of-floats"),
    pytest.param(_with_member("table", _table_of(1000)), "the shape of its table: (1000, 2)",
                 id="table-rows-not-a-power-of-two"),
    pytest.param(_with_member("table", _npy_header((2, 2), fortran_order=True) + bytes(32)),
                 "its table is not laid out as Agon writes it", id="table-fortran-order"),
    pytest.param(_with_member("table", _npy_header((-2, -2)) + bytes(32)),
                 "its table is not laid out as Agon writes it", id="table-negative-shape"),
    pytest.param(_with_member("table", _npy_header((2, 2), descr="|O") + bytes(32)),
                 "its table is not a table of 64-bit integers", id="table-of-objects"),
    pytest.param(_with_member("table", b"\x93NUMPY\x02\x00" + bytes(100)),
                 "its table is not a NumPy array of the version Agon writes", id="npy-version-2"),
    pytest.param(_with_member("table", b"\x93NUMPY\x01\x00\xff\xff{"),
                 "its table is not a NumPy array: EOF", id="npy-header-cut"),
    pytest.param(_with_member("numbers", b"not an array at all"),
                 "its numbers is not a NumPy array", id="numbers-not-npy"),
    pytest.param(_without("cutoffs"), "it has no cutoffs", id="cutoffs-missing"),
]


@pytest.mark.parametrize(("edit", "message"), TABLES_FILES)
def test_a_tables_file_agon_did_not_write_is_refused_and_kept(
    tmp_path: Path, edit: Callable[[dict[str, bytes], dict[str, Any]], None], message: str
) -> None:
    path = tmp_path / "tables.npz"
    members, header = _saved(path)
    edit(members, header)
    _write_archive(path, members)
    before = path.read_bytes()
    result = runner.invoke(app, [*SOLVE, "--tables-file", str(path), "-q"])
    assert_refused(result, f"{path} is not a file of a solver's tables ({message}")
    assert path.read_bytes() == before


def test_a_zip_bomb_is_refused_before_it_is_unpacked(tmp_path: Path) -> None:
    # a table of 2**22 buckets (128 MiB) of zeros, in a few hundred kilobytes
    rows = 2 << 22
    path = tmp_path / "bomb.npz"
    members, _ = _saved(path)
    del members["table"]
    _write_archive(path, members)
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as archive, archive.open(
        "table.npy", "w"
    ) as table:
        table.write(_npy_header((rows, 2)))
        zeros = bytes(1 << 24)
        for _ in range(rows * 16 // len(zeros)):
            table.write(zeros)
    assert path.stat().st_size < rows * 16 // 32
    wanted = Solver(GAME, BITS).tables_header()
    tracemalloc.start()
    try:
        with pytest.raises(AgonError, match="its table is compressed, and Agon stores its"):
            load_tables(path, wanted)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20


def test_a_zip_directory_declaring_more_than_the_file_holds_is_read_to_its_end_only(
    tmp_path: Path,
) -> None:
    # the table (the archive's last member) declares twice the rows its data has, and the
    # archive's directory a size to match: reading stops where the file ends
    path = tmp_path / "tables.npz"
    members, _ = _saved(path)
    rows = 2 << BITS
    table = members.pop("table")
    declared = len(table) + rows * 16
    members["table"] = table.replace(f"({rows}, 2)".encode(), f"({2 * rows}, 2)".encode(), 1)
    _write_archive(path, members)
    data = bytearray(path.read_bytes())
    entry = data.rindex(b"PK\x01\x02")  # (its directory entry: the sizes at bytes 20 to 28)
    data[entry + 20 : entry + 28] = declared.to_bytes(4, "little") * 2
    path.write_bytes(bytes(data))
    result = runner.invoke(app, [*SOLVE, "--tables-file", str(path), "-q"])
    assert_refused(result, "is not a file of a solver's tables (its table ends after ")


def test_a_damaged_table_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tables.npz"
    members, _ = _saved(path)
    data = bytearray(path.read_bytes())
    data[data.index(members["table"]) + len(members["table"]) - 1] ^= 1
    path.write_bytes(bytes(data))
    result = runner.invoke(app, [*SOLVE, "--tables-file", str(path), "-q"])
    assert_refused(result, "tables (not a NumPy .npz archive, or a damaged one)")


def test_tables_larger_than_the_memory_available_are_refused_before_they_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tables.npz"
    solver = Solver(GAME, BITS)
    solver.save_tables(path)
    monkeypatch.setattr(memory, "available_memory", lambda: 1 << 20)
    declared = sum(getattr(solver, name).nbytes for name in TABLE_NAMES)
    with pytest.raises(AgonError) as refused:
        load_tables(path, solver.tables_header())
    assert str(refused.value) == (
        f"reading the tables in {path} needs {declared:,} bytes of memory, and 1,048,576 are "
        "available"
    )


def test_tables_agon_wrote_are_read_as_they_were(tmp_path: Path) -> None:
    solver = Solver(GAME, BITS)
    solver.margin(GAME.new_state())
    path = tmp_path / "tables.npz"
    solver.save_tables(path)
    header, arrays = load_tables(path, solver.tables_header())
    assert header.work.nodes == solver.nodes
    for name in TABLE_NAMES:
        assert np.array_equal(arrays[name], getattr(solver, name))
        assert arrays[name].flags.writeable


# --- hand-edited results of agon tables -----------------------------------------------------------

RESULTS: dict[str, Any] = {
    # solved, with its openings' values
    "alak-baljeu-3": {
        "best_moves": ["2"], "moves": {"1": -1.0, "2": 1.0, "3": -1.0}, "nodes": 34,
        "seconds": 0.08, "status": "solved", "value": 1.0,
    },
    "alternator-1x2": {
        "best_moves": ["a2-a1"], "nodes": 7, "seconds": 0.05, "status": "solved", "value": 2.0,
    },
    # out of time, its value proven, its moves not all
    "alak-traditional-11": {
        "best_so_far": ["2", "3", "4", "5", "6", "7", "8", "9", "10", "pass"],
        "earlier": {"nodes": 463662289, "runs": 1, "seconds": 3030.3}, "lower": 0.0,
        "max_seconds": 3700.0,
        "move_bounds": {"10": [0, 0], "2": [0, 0], "3": [0, 0], "4": [0, 0], "pass": [0, 0]},
        "nodes": 576462302, "not_best": [], "status": "timeout", "table_bits": 21, "upper": 0.0,
        "value_nodes": 2, "value_seconds": 0.0,
    },
    # out of time with bounds, one side unbounded
    "alak-baljeu-10": {
        "lower": 0, "max_seconds": 4500.0, "nodes": 964827684, "status": "timeout", "upper": None,
    },
    # solved, its openings not all
    "alak-tromp-taylor-13": {
        "best_moves": ["2", "3", "pass"], "move_bounds": {"1": [None, -3], "2": [0, 0]},
        "nodes": 13510076, "openings_max_seconds": 6727, "seconds": 473.35, "status": "solved",
        "value": 0.0,
    },
    # with a line of perfect play
    "exercise-o.x..": {
        "best_moves": ["2", "4"],
        "lines": {"": {"end": "both players passed", "margin": 5.0, "moves": ["2", "pass"]}},
        "moves": {"2": 5.0, "4": 5.0, "5": 0.0, "pass": 2.0}, "nodes": 88, "seconds": 0.03,
        "status": "solved", "value": 5.0,
    },
    # only lines
    "claim-drange-12": {
        "lines": {"4": {"stopped": "out of time", "moves": ["4", "2"]}}, "nodes": 7907788,
        "seconds": 167.45, "status": "solved",
    },
    "quality-mcts:1s-alak-7": {
        "agent": "mcts:1s", "agent_seconds_per_move": 0.029, "from_random": 50,
        "from_self_play": 50, "game": "Alak 7, baljeu rules, edge capture", "max_seconds": None,
        "mean_loss": 0.0, "optimal_share": 1.0, "positions": 100, "unsettled": 0,
    },
}
TABLES = ["tables", "--only", "alternator-1x2", "-q"]
"""A run that solves nothing (its one job is solved) and writes the report from every record."""


def _results_file(tmp_path: Path, text: str) -> tuple[Path, list[str]]:
    """The results file holding ``text`` and the arguments of a run of agon tables on it."""
    store = tmp_path / "results.json"
    store.write_text(text)
    return store, [*TABLES, "--out", str(tmp_path / "results.md")]


Edit = Callable[[dict[str, Any]], None]


def _set(key: str, *path: str | int, to: Any) -> Edit:
    def edit(jobs: dict[str, Any]) -> None:
        place: Any = jobs
        for step in (key, *path)[:-1]:
            place = place[step]
        place[(key, *path)[-1]] = to

    return edit


def _drop(key: str, *path: str | int) -> Edit:
    def edit(jobs: dict[str, Any]) -> None:
        place: Any = jobs
        for step in (key, *path)[:-1]:
            place = place[step]
        del place[(key, *path)[-1]]

    return edit


HAND_EDITS: list[Any] = [
    pytest.param(_set("alak-baljeu-3", to=None),
                 'jobs["alak-baljeu-3"] must be a JSON object, not null', id="record-null"),
    pytest.param(_set("alak-baljeu-3", to=[1]),
                 'jobs["alak-baljeu-3"] must be a JSON object, not [1]', id="record-a-list"),
    pytest.param(_drop("alak-baljeu-3", "status"), 'jobs["alak-baljeu-3"] has no "status"',
                 id="status-missing"),
    pytest.param(_set("alak-baljeu-3", "status", to="done"),
                 '["status"] must be "solved" or "timeout", not "done"', id="status-unknown"),
    pytest.param(_drop("alak-baljeu-3", "value"), 'jobs["alak-baljeu-3"] has no "value"',
                 id="value-missing"),
    pytest.param(_set("alak-baljeu-3", "value", to="1"),
                 'jobs["alak-baljeu-3"]["value"] must be a finite number of points, not "1"',
                 id="value-a-text"),
    pytest.param(_set("alternator-1x2", "value", to=None), '["value"] must be a finite number',
                 id="value-null"),
    pytest.param(_set("alak-baljeu-3", "value", to=float("nan")),
                 '["value"] must be a finite number of points, not NaN', id="value-nan"),
    pytest.param(_set("alak-baljeu-3", "nodes", to=-5),
                 '["nodes"] must be a whole number, 0 or more, not -5', id="nodes-negative"),
    pytest.param(_set("alak-baljeu-10", "nodes", to=10**30),
                 '["nodes"] must be a whole number, 0 or more, not 1000000', id="nodes-huge"),
    pytest.param(_set("alak-baljeu-3", "nodes", to=True),
                 '["nodes"] must be a whole number, 0 or more, not true', id="nodes-true"),
    pytest.param(_set("alak-baljeu-3", "seconds", to=float("inf")),
                 '["seconds"] must be a number of seconds, 0 to 1,000,000,000, not Infinity',
                 id="seconds-infinite"),
    pytest.param(_set("alternator-1x2", "best_moves", to="a2-a1"),
                 '["best_moves"] must be a list, not "a2-a1"', id="best-moves-a-text"),
    pytest.param(_set("alternator-1x2", "best_moves", to=["a9-z1"]),
                 '["best_moves"] names "a9-z1", not a move of Alternator 1×2',
                 id="best-move-unknown"),
    pytest.param(_set("alak-baljeu-3", "moves", to=[-1, 1, -1]),
                 '["moves"] must be a JSON object, not [-1, 1, -1]', id="moves-a-list"),
    pytest.param(_set("alak-baljeu-3", "moves", "2", to="+1"),
                 'jobs["alak-baljeu-3"]["moves"]["2"] must be a finite number of points, not "+1"',
                 id="move-value-a-text"),
    pytest.param(_set("alak-tromp-taylor-13", "move_bounds", "1", to=[None]),
                 '["move_bounds"]["1"] must be a list of 2, not [null]', id="move-bounds-short"),
    pytest.param(_drop("alak-tromp-taylor-13", "openings_max_seconds"),
                 'jobs["alak-tromp-taylor-13"] has no "openings_max_seconds"',
                 id="openings-time-missing"),
    pytest.param(_drop("alak-baljeu-10", "max_seconds"), 'has no "max_seconds"',
                 id="timeout-without-its-time"),
    pytest.param(_set("alak-baljeu-10", "lower", to="0"),
                 '["lower"] must be a finite number of points, not "0"', id="bound-a-text"),
    pytest.param(_drop("alak-traditional-11", "not_best"),
                 'jobs["alak-traditional-11"] has no "not_best"', id="best-so-far-alone"),
    pytest.param(_set("alak-traditional-11", "earlier", "by", to="hand"),
                 '["earlier"] has a field "by" agon tables never writes', id="earlier-extra-field"),
    pytest.param(_set("alak-traditional-11", "earlier", to=[1, 2, 3]),
                 '["earlier"] must be a JSON object, not [1, 2, 3]', id="earlier-a-list"),
    pytest.param(_set("exercise-o.x..", "lines", to={}),
                 'jobs["exercise-o.x.."] has no line after ""', id="line-missing"),
    pytest.param(_drop("exercise-o.x..", "lines", "", "end"), '["lines"][""] has no "end"',
                 id="line-without-its-end"),
    pytest.param(_set("claim-drange-12", "lines", "4", "moves", 1, to=2),
                 '["lines"]["4"]["moves"][1] must be a text, not 2', id="line-move-a-number"),
    pytest.param(_set("quality-mcts:1s-alak-7", "optimal_share", to="100%"),
                 '["optimal_share"] must be a share, 0 to 1, not "100%"', id="share-a-text"),
    pytest.param(_set("quality-mcts:1s-alak-7", "optimal_share", to=None),
                 '["optimal_share"] must be a share, 0 to 1, not null', id="share-null"),
    pytest.param(_drop("quality-mcts:1s-alak-7", "positions"),
                 'jobs["quality-mcts:1s-alak-7"] has no "positions"', id="positions-missing"),
]


@pytest.mark.parametrize(("edit", "message"), HAND_EDITS)
def test_a_hand_edited_result_is_named_with_its_field_and_kept(
    tmp_path: Path, edit: Edit, message: str
) -> None:
    jobs = json.loads(json.dumps(RESULTS))
    edit(jobs)
    text = json.dumps({"jobs": jobs}, indent=1)
    store, arguments = _results_file(tmp_path, text)
    line = assert_refused(runner.invoke(app, arguments), f"saved results {store}: ", message)
    assert "correct or delete that entry" in line
    assert store.read_text() == text
    assert not (tmp_path / "results.md").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param('{"jobs": {"alak-baljeu-3": {"status": "sol', "not valid JSON",
                     id="truncated"),
        pytest.param("[" * 100_000 + "]" * 100_000, "nests arrays or objects over 20 deep",
                     id="deep"),
        pytest.param(" " * (MAX_RESULTS_BYTES + 1), f"is over {MAX_RESULTS_BYTES:,} bytes",
                     id="huge"),
        pytest.param('{"jobs": []}', "is not a file of results that agon tables wrote",
                     id="jobs-a-list"),
        pytest.param(json.dumps({"jobs": RESULTS, "notes": "mine"}),
                     "is not a file of results that agon tables wrote", id="more-than-results"),
    ],
)
def test_a_results_file_that_cannot_be_read_is_named_and_kept(
    tmp_path: Path, text: str, message: str
) -> None:
    store, arguments = _results_file(tmp_path, text)
    assert_refused(runner.invoke(app, arguments), str(store), message)
    assert store.read_text() == text


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(_set("alak-baljeu-99", to={"by": "hand"}), id="a-job-no-longer-listed"),
        pytest.param(_set("alak-baljeu-3", "checked", to="by hand"), id="a-field-of-ones-own"),
    ],
)
def test_what_agon_tables_does_not_read_is_kept_as_it_is(tmp_path: Path, edit: Edit) -> None:
    jobs = json.loads(json.dumps(RESULTS))
    edit(jobs)
    text = json.dumps({"jobs": jobs}, indent=1)
    store, arguments = _results_file(tmp_path, text)
    result = runner.invoke(app, arguments)
    assert result.exit_code == 0, result.output
    assert store.read_text() == text


def test_the_results_agon_tables_wrote_are_read() -> None:
    from agon.solve.tables.runner import _load

    saved = Path(__file__).parents[1] / "docs" / "results.json"
    assert len(_load(saved, kept=lambda key: True)) == len(json.loads(saved.read_text())["jobs"])


def test_a_hand_edited_result_is_solved_again_as_its_message_says(tmp_path: Path) -> None:
    jobs = {"alak-baljeu-1": {"best_moves": ["1"], "nodes": -8, "seconds": 0.0,
                              "status": "solved", "value": 1.0}}
    store, arguments = _results_file(tmp_path, json.dumps({"jobs": jobs}))
    refused = assert_refused(runner.invoke(app, arguments), "solve it again: ")
    again = refused.rsplit("solve it again: ", 1)[1].replace("'", "").split()
    assert again == ["--fresh", "--only", "alak-baljeu-1"]
    result = runner.invoke(app, ["tables", *again, "--out", str(tmp_path / "results.md"), "-q"])
    assert result.exit_code == 0, result.output
    assert json.loads(store.read_text())["jobs"]["alak-baljeu-1"]["nodes"] > 0


# --- a table larger than the board can fill -------------------------------------------------------

THREE_BY_THREE = ["solve", "alternator", "--size", "3x3", "--table-bits", "29"]


def test_a_small_board_gets_no_larger_table_than_it_can_fill(tmp_path: Path) -> None:
    path = tmp_path / "tables.npz"
    result = runner.invoke(app, [*THREE_BY_THREE, "--tables-file", str(path), "--json", "-q"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["value"] == 9
    assert result.stderr.splitlines() == [
        "--table-bits 29: Alternator 3×3, komi 3.5 is solved in at most a few hundred thousand "
        f"nodes, which 2**{SMALL_BOARD_TABLE_BITS} buckets hold: its table has that many"
    ]
    with np.load(path) as saved:
        assert saved["table"].shape == (2 << SMALL_BOARD_TABLE_BITS, 2)
    # the same --table-bits goes on from the tables it saved
    again = runner.invoke(app, [*THREE_BY_THREE, "--tables-file", str(path), "--json", "-q"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["earlier"]["runs"] == 1


def test_a_small_board_with_a_huge_table_bits_takes_little_memory() -> None:
    # (2.2 GB before: every page of a table of 2**29 buckets that the search touched). The
    # peak is the process's own VmHWM: ru_maxrss keeps, across exec, the peak of the process
    # forked from (a test worker of gigabytes).
    program = (
        "import re, sys\n"
        "from pathlib import Path\n"
        "from agon.cli import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    status = Path('/proc/self/status').read_text()\n"
        "    print(re.search(r'VmHWM:\\s*(\\d+) kB', status)[1], file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, *THREE_BY_THREE, "-q"], capture_output=True, text=True,
        check=False, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stderr.split()[-1]) < 1 << 20  # kilobytes: under 1 GiB
