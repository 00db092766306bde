"""A solver's tables saved to a file, so that a solve too long for one run goes on in the next
(``agon solve --tables-file``, ``agon tables --checkpoints``).

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
import stat
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agon.core.compiled import imported_fingerprint
from agon.core.errors import AgonError
from agon.core.fast import Array
from agon.core.files import kind_of, replace_file_with
from agon.core.memory import check_memory
from agon.core.results import Work

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


def load_tables(path: Path, wanted: TablesHeader) -> tuple[TablesHeader, dict[str, Array]]:
    """The header and arrays of a file written by :func:`save_tables` for a solver that would
    write ``wanted`` (:meth:`TablesHeader.mismatch`: checked before the arrays are read, which
    can be many gigabytes); :class:`AgonError` naming what is wrong if it cannot be read as
    one, or does not fit."""
    not_tables = f"{path} is not a file of a solver's tables"
    try:
        mode = path.stat().st_mode
    except OSError as error:
        raise AgonError(f"cannot read {path}: {error.strerror or error}") from None
    if not stat.S_ISREG(mode):
        raise AgonError(f"{path} is {kind_of(mode)}, not a regular file: it is not read")
    try:
        with zipfile.ZipFile(path) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
    except (OSError, zipfile.BadZipFile):
        raise AgonError(f"{not_tables} (not a NumPy .npz archive)") from None
    check_memory(unpacked, f"reading the tables in {path}")
    try:
        with np.load(path, allow_pickle=False) as content:
            fields = json.loads(str(content["header"]))
            if fields.pop("format", None) != FORMAT:
                raise AgonError(f"{not_tables} (format {FORMAT})")
            header = TablesHeader(**{**fields, "work": Work(**fields.get("work", {}))})
            problem = header.mismatch(wanted)
            if problem is not None:
                raise AgonError(f"cannot go on from {path}: {problem}")
            arrays = {name: content[name] for name in TABLE_NAMES}
    except OSError as error:
        raise AgonError(f"cannot read {path}: {error.strerror or error}") from None
    except (ValueError, KeyError, TypeError, zipfile.BadZipFile) as error:
        raise AgonError(f"{not_tables} ({error})") from None
    for name, array in arrays.items():
        if array.dtype != np.int64 or array.ndim != 2:
            raise AgonError(f"{not_tables} (its {name} is not a table of 64-bit integers)")
    for name, columns in (("table", 2), ("numbers", 3)):
        rows = arrays[name].shape[0]
        if rows < 2 or rows & (rows - 1) or arrays[name].shape[1] != columns:
            raise AgonError(f"{not_tables} (the shape of its {name}: {arrays[name].shape})")
    return header, arrays
