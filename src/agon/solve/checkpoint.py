"""A solver's tables saved to a file, so that a solve too long for one run goes on in the next
(``agon solve --tables-file``, ``agon tables --checkpoints``): the file (:func:`save_tables`,
:func:`load_tables`) and the solver's side of it (:class:`SavedTables`).

A file holds what the searches proved (the transposition table and its summaries), what steers
them (the proof-number search's numbers, the history heuristic) and a header: the variant, the
search, whether symmetries were used, a fingerprint of the kernels' sources, and the work spent
on the tables in all runs so far. The tables mean what they mean only for one variant and one
version of the kernels (the keys, entries and summaries are laid out by the code), so a file
whose header does not match the solver is refused, never read as if it did.

The format is NumPy's ``.npz`` (uncompressed: the tables are mostly random keys), with the
header as JSON in the array ``header``; it is written to a temporary file that replaces the old
one only when complete.
"""

from __future__ import annotations

import json
import math
import stat
import time
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from agon.core.compiled import imported_fingerprint
from agon.core.errors import AgonError, shortened
from agon.core.fast import Array
from agon.core.files import kind_of, replace_file_with
from agon.core.memory import check_memory
from agon.core.records import parse_json
from agon.core.results import Work
from agon.solve.facts import Search
from agon.solve.kernels import C_NODES

CHECKPOINT_SECONDS = 1800.0
"""A solver with a :attr:`SavedTables.checkpoint` saves its tables this often while it searches."""
FORMAT = "agon-solver-tables/1"
TABLE_NAMES = ("table", "summaries", "numbers", "cutoffs")
"""The arrays a file holds (the solver's attributes of those names)."""


@dataclass(frozen=True)
class TablesHeader:
    """What a file of tables is for, and what went into it."""

    variant: dict[str, Any]
    """The solved variant: ``{"game": name, "options": options, "description": text}``."""
    search: str
    symmetry: bool
    kernels: str
    """The fingerprint of the kernel layers' sources (:func:`kernels_fingerprint`)."""
    work: Work

    def mismatch(self, wanted: TablesHeader) -> str | None:
        """Why tables with this header cannot serve a solver that would write ``wanted``, or
        None if they can (the work done does not matter)."""
        if self.variant != wanted.variant:
            return (
                f"they are tables of {self.variant.get('description')}, not of "
                f"{wanted.variant['description']}"
            )
        if self.symmetry != wanted.symmetry:
            return "they were searched with other symmetry settings"
        if self.kernels != wanted.kernels:
            return (
                "they were written by another version of Agon's kernels, whose table "
                "entries need not mean the same"
            )
        return None


def kernels_fingerprint() -> str:
    """The fingerprint of the sources the solver's kernels are compiled from, as they were
    when the package was imported, so that a long run whose sources are edited meanwhile
    still stamps its files with the code it runs."""
    return imported_fingerprint(Path(__file__).parents[1])


def save_tables(path: Path, header: TablesHeader, arrays: dict[str, Array]) -> None:
    """Write ``arrays`` (:data:`TABLE_NAMES`) and ``header`` to ``path``, whole or not at all.
    Raises :class:`AgonError` naming what went wrong."""
    content: dict[str, Any] = {name: arrays[name] for name in TABLE_NAMES}
    content["header"] = np.array(json.dumps({"format": FORMAT, **asdict(header)}))
    try:
        replace_file_with(path, lambda file: np.savez(file, **content))
    except OSError as error:
        raise AgonError(f"cannot save the tables to {path}: {error.strerror or error}") from None


MAX_HEADER_BYTES = 1 << 20
"""A header is some hundred bytes (the variant and the work): a larger one is not read."""
MAX_COUNT = (1 << 63) - 1
"""The largest count of nodes or runs (the kernels count in 64-bit integers)."""
_READ_BYTES = 1 << 24
"""An array's data is read this much at a time, into the array itself."""


class _NotTables(Exception):
    """What makes a file not one :func:`save_tables` wrote (the message: what is wrong)."""


def load_tables(path: Path, wanted: TablesHeader) -> tuple[TablesHeader, dict[str, Array]]:
    """The header and arrays of a file written by :func:`save_tables` for a solver that would
    write ``wanted`` (:meth:`TablesHeader.mismatch`: checked before the arrays are read, which
    can be many gigabytes); :class:`AgonError` naming what is wrong if it cannot be read as
    one, or does not fit. Nothing is read beyond what each array's own header declares, and
    the arrays are read only once their shapes are checked and fit in the memory available."""
    not_tables = f"{path} is not a file of a solver's tables"
    try:
        mode = path.stat().st_mode
    except OSError as error:
        raise AgonError(f"cannot read {path}: {error.strerror or error}") from None
    if not stat.S_ISREG(mode):
        raise AgonError(f"{path} is {kind_of(mode)}, not a regular file: it is not read")
    try:
        with zipfile.ZipFile(path) as archive:
            header = _read_header(archive)
            problem = header.mismatch(wanted)
            if problem is not None:
                raise AgonError(f"cannot go on from {path}: {problem}")
            members = {name: _open_array(archive, name) for name in TABLE_NAMES}
            for member in members.values():
                _check_table_shape(member)
            check_memory(
                sum(member.data_bytes for member in members.values()),
                f"reading the tables in {path}",
            )
            arrays = {name: _read_data(member) for name, member in members.items()}
    except OSError as error:
        raise AgonError(f"cannot read {path}: {error.strerror or error}") from None
    except zipfile.BadZipFile:
        raise AgonError(f"{not_tables} (not a NumPy .npz archive, or a damaged one)") from None
    except _NotTables as error:
        raise AgonError(f"{not_tables} ({error})") from None
    return header, arrays


@dataclass(frozen=True)
class _ArrayMember:
    """An array of the archive whose header (a NumPy ``.npy`` one) is read, its data not yet."""

    name: str
    stream: IO[bytes]
    shape: tuple[int, ...]
    dtype: np.dtype[Any]

    @property
    def data_bytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


def _open_array(archive: zipfile.ZipFile, name: str) -> _ArrayMember:
    """The archive's array ``name``, its header read and checked against the member's size in
    the archive's directory (the two together bound what is read); :class:`_NotTables`."""
    try:
        info = archive.getinfo(f"{name}.npy")
    except KeyError:
        raise _NotTables(f"it has no {name}") from None
    # (savez stores the arrays as they are: a compressed member could unpack to any size)
    if info.compress_type != zipfile.ZIP_STORED:
        raise _NotTables(f"its {name} is compressed, and Agon stores its tables uncompressed")
    stream = archive.open(info)
    try:
        if np.lib.format.read_magic(stream) != (1, 0):
            raise _NotTables(f"its {name} is not a NumPy array of the version Agon writes")
        shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(stream)
    except EOFError:
        raise _NotTables(f"its {name} ends before its header does") from None
    except ValueError as error:
        raise _NotTables(f"its {name} is not a NumPy array: {shortened(str(error))}") from None
    if fortran_order or any(side < 0 for side in shape):
        raise _NotTables(f"its {name} is not laid out as Agon writes it (shape {shape})")
    member = _ArrayMember(name, stream, shape, dtype)
    if stream.tell() + member.data_bytes != info.file_size:
        raise _NotTables(
            f"its {name} of shape {shape} needs {member.data_bytes:,} bytes, and the archive "
            f"holds {max(0, info.file_size - stream.tell()):,}"
        )
    return member


def _read_data(member: _ArrayMember) -> Array:
    """The member's array, read up to the size its header declares; :class:`_NotTables` if
    its data ends early."""
    array = np.empty(member.shape, member.dtype)
    data = array.reshape(-1).view(np.uint8).data
    filled = 0
    while filled < len(data):
        try:
            chunk = member.stream.read(min(_READ_BYTES, len(data) - filled))
        except EOFError:  # (the archive ends before the member its directory declares)
            chunk = b""
        if not chunk:
            raise _NotTables(f"its {member.name} ends after {filled:,} of its bytes")
        data[filled : filled + len(chunk)] = chunk
        filled += len(chunk)
    return array


def _read_header(archive: zipfile.ZipFile) -> TablesHeader:
    """The archive's header, each of its fields checked; :class:`_NotTables`."""
    member = _open_array(archive, "header")
    if member.shape != () or member.dtype.kind != "U":
        raise _NotTables("its header is not a text")
    if member.data_bytes > MAX_HEADER_BYTES:
        raise _NotTables(f"its header is over {MAX_HEADER_BYTES:,} bytes")
    try:
        fields = parse_json(str(_read_data(member)[()]))
    except ValueError as error:  # (AgonError included; also a character no text has)
        raise _NotTables(f"its header: {error}") from None
    if not isinstance(fields, dict):
        raise _NotTables("its header is not a JSON object")
    if fields.pop("format", None) != FORMAT:
        raise _NotTables(f"format {FORMAT}")
    _check_fields(fields, _HEADER_FIELDS, "header")
    variant, work = fields["variant"], fields["work"]
    _check_fields(variant, _VARIANT_FIELDS, "variant")
    _check_fields(work, _WORK_FIELDS, "work")
    for name in ("nodes", "runs"):
        if not 0 <= work[name] <= MAX_COUNT:
            raise _NotTables(f"its work's {name} is not a count: {work[name]}")
    if not (math.isfinite(work["seconds"]) and work["seconds"] >= 0):
        raise _NotTables(f"its work's seconds are not a duration: {work['seconds']}")
    return TablesHeader(**{**fields, "work": Work(**work)})


_Kind = tuple[type, ...]
_TEXT: _Kind = (str,)
_OBJECT: _Kind = (dict,)
_COUNT: _Kind = (int,)
_NUMBER: _Kind = (int, float)
_KIND_NAMES = {
    _TEXT: "a text", _OBJECT: "a JSON object", _COUNT: "a whole number", _NUMBER: "a number",
    (bool,): "true or false",
}
_HEADER_FIELDS = {
    "variant": _OBJECT, "search": _TEXT, "symmetry": (bool,), "kernels": _TEXT, "work": _OBJECT,
}
_VARIANT_FIELDS = {"game": _TEXT, "options": _OBJECT, "description": _TEXT}
_WORK_FIELDS = {"nodes": _COUNT, "seconds": _NUMBER, "runs": _COUNT}


def _check_fields(fields: Any, kinds: dict[str, _Kind], what: str) -> None:
    """Refuse (:class:`_NotTables`) ``fields`` unless it is an object with exactly the fields
    of ``kinds``, each of its kind (true and false are no numbers)."""
    if not isinstance(fields, dict):
        raise _NotTables(f"its {what} is not a JSON object")
    missing = [name for name in kinds if name not in fields]
    if missing:
        raise _NotTables(f"its {what} has no {missing[0]}")
    unknown = [name for name in fields if name not in kinds]
    if unknown:
        raise _NotTables(f"its {what} has a field Agon does not write: {shortened(unknown[0])}")
    for name, kind in kinds.items():
        value = fields[name]
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in kind):
            raise _NotTables(
                f"its {what}'s {name} is {shortened(json.dumps(value))}, not {_KIND_NAMES[kind]}"
            )


def _check_table_shape(member: _ArrayMember) -> None:
    """Refuse (:class:`_NotTables`) an array that is not a table the solver keeps, before its
    data is read: 64-bit integers in rows, the transposition table and the numbers with a
    power of two of rows (2**bits buckets) of their columns."""
    name, shape = member.name, member.shape
    if member.dtype != np.int64 or len(shape) != 2:
        raise _NotTables(f"its {name} is not a table of 64-bit integers")
    columns = {"table": 2, "numbers": 3}.get(name)
    rows = shape[0]
    if columns is not None and (rows < 2 or rows & (rows - 1) or shape[1] != columns):
        raise _NotTables(f"the shape of its {name}: {shape}")


class SavedTables:
    """The part of a :class:`~agon.solve.solver.Solver` that saves its tables to a file and
    goes on from them; the solver sets up what it reads here."""

    variant: Any
    search: Search
    symmetry: bool
    control: Array
    table: Array
    summaries: Array
    numbers: Array
    cutoffs: Array
    progress: Callable[[str], None] | None
    earlier: Work
    """The work of earlier runs in the tables (:meth:`load_tables`)."""
    checkpoint: Path | None
    """Where the tables are saved every :data:`CHECKPOINT_SECONDS` while searching."""
    _started: float
    _saved: float

    @property
    def nodes(self) -> int:
        """Nodes searched by this solver (earlier runs' are in :attr:`earlier`)."""
        return int(self.control[C_NODES])

    def tables_header(self) -> TablesHeader:
        """What :meth:`save_tables` says its file is: this solver's variant, search and
        kernels, and the work in its tables, earlier runs' included."""
        return TablesHeader(
            variant={
                "game": self.variant.name, "options": self.variant.options(),
                "description": self.variant.description,
            },
            search=self.search.value,
            symmetry=self.symmetry,
            kernels=kernels_fingerprint(),
            work=Work(
                nodes=self.earlier.nodes + self.nodes,
                seconds=round(self.earlier.seconds + time.monotonic() - self._started, 1),
                runs=self.earlier.runs + 1,
            ),
        )

    def save_tables(self, path: Path) -> None:
        """Save the tables to ``path`` (replaced only once the new file is complete), for
        :meth:`load_tables` in a later run; :class:`AgonError` if it cannot be written."""
        if self.progress is not None:
            self.progress(f"saving the tables to {path} …")
        arrays = {name: getattr(self, name) for name in TABLE_NAMES}
        save_tables(path, self.tables_header(), arrays)
        self._saved = time.monotonic()

    def keep_tables(self, path: Path) -> None:
        """:meth:`save_tables` where a failed save (a full disk) must not end the work: it is
        reported (through :attr:`progress`), and while searching tried again after
        :data:`CHECKPOINT_SECONDS`."""
        try:
            self.save_tables(path)
        except AgonError as error:
            self._saved = time.monotonic()
            if self.progress is not None:
                self.progress(f"the tables were not saved: {error}")

    def go_on_from(self, path: Path, table_bits: int | None = None, resume: bool = True) -> None:
        """Keep the tables in ``path``: go on from them where the file exists (and
        ``resume``), as :meth:`load_tables` does, and save them there while searching."""
        if resume and path.exists():
            self.load_tables(path, table_bits)
            if self.progress is not None:
                self.progress(f"going on from {path}: {self.earlier} before this run")
        self.checkpoint = path

    @property
    def table_bits(self) -> int:
        """The transposition table has 2**table_bits buckets."""
        return _buckets_bits(self.table)

    def load_tables(self, path: Path, table_bits: int | None = None) -> None:
        """Go on from the tables saved in ``path`` by :meth:`save_tables` (their size replaces
        this solver's; ``table_bits``, where given, must be theirs): every bound proven into
        them holds here, since they are refused unless they were written for this variant,
        with these symmetries, by these kernels. :class:`AgonError` says why a file cannot
        be used."""
        header, arrays = load_tables(path, self.tables_header())
        problem = None
        saved_bits = _buckets_bits(arrays["table"])
        if table_bits is not None and saved_bits != table_bits:
            problem = (
                f"they have a table of 2**{saved_bits} buckets: give that --table-bits or "
                "leave it out"
            )
        if problem is None and arrays["summaries"].shape[1] != self.summaries.shape[1]:
            problem = "their summaries are of another size"
        rows = arrays["table"].shape[0] if self.summaries.shape[0] > 1 else 1
        if problem is None and arrays["summaries"].shape[0] != rows:
            problem = "their table and summaries do not match"
        if problem is None and arrays["cutoffs"].shape != self.cutoffs.shape:
            problem = "their history heuristic is for another board"
        if problem is not None:
            raise AgonError(f"cannot go on from {path}: {problem}")
        self.table, self.summaries, self.cutoffs = (
            arrays["table"], arrays["summaries"], arrays["cutoffs"]
        )
        # (alpha-beta alone keeps no proof numbers, so its files bring none)
        if self.search is not Search.ALPHA_BETA and arrays["numbers"].shape[0] > 2:
            self.numbers = arrays["numbers"]
        self.earlier = header.work


def _buckets_bits(table: Array) -> int:
    """``bits`` of a transposition table of 2**bits buckets (two rows each)."""
    return int(table.shape[0]).bit_length() - 2
