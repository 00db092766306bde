"""A fast twin's evaluation as named terms with weights, and the weights a game ships.

A twin whose evaluation is a weighted sum declares it with :class:`Terms`: its ``features``
kernel writes each term of a position (Black's view) and returns the base they are added to
(the margin as it stands), so that ``evaluate = base + Σ weight × term``. The weights live in
the twin's ``params`` (as float64 bits, from ``weights_at``), so the search kernels read them
as they read everything else of the variant, and ``agon train`` (:mod:`agon.study.training`)
can fit them to self-play and exact values. Trained weights ship in the game's package, in
:data:`WEIGHTS_FILE` (docs/evaluation.md, *Learned weights*); a variant without an entry of its
own takes the nearest one (:func:`chosen_entry`), and a game without any plays with the weights
its author set by hand. The weights are read when a variant's twin is built: once a process.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agon.core.errors import AgonError
from agon.core.files import read_versioned_json
from agon.core.game import Game

if TYPE_CHECKING:  # (NumPy is imported where weights are made: the CLI reads this module)
    import numpy as np
    import numpy.typing as npt

WEIGHTS_FILE = "weights.json"
WEIGHTS_FORMAT = 1
MAX_WEIGHTS_BYTES = 1 << 20
"""The largest weights file read (a few kilobytes an entry)."""
WEIGHTS_ENV = "AGON_WEIGHTS"
"""An environment variable naming a weights file whose entries come before the games' own."""


@dataclass(frozen=True)
class Terms:
    """The terms of a twin's evaluation (see the module's description)."""

    names: tuple[str, ...]
    hand_weights: tuple[float, ...]
    """The weights its author set (and fitted) by hand: the evaluation where none are trained."""
    features: Any = field(repr=False)
    """The Numba kernel ``features(params, state, out: float64[::1]) -> float``: writes the
    terms into ``out`` and returns the base."""
    weights_at: int
    """Where ``params`` keep the weights, one slot a term."""
    package: str
    """The game package whose :data:`WEIGHTS_FILE` holds its trained weights."""
    carries_over: tuple[str, ...] = ()
    """The variant options a trained entry may differ in and still apply (board size, komi)."""

    def __post_init__(self) -> None:
        if len(self.names) != len(self.hand_weights) or len(set(self.names)) != len(self.names):
            raise TypeError("evaluation terms need distinct names, one hand weight each")


@dataclass(frozen=True)
class TrainedEntry:
    """One variant's trained weights, with where they came from."""

    options: dict[str, Any]
    weights: dict[str, float]
    provenance: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"options": self.options, "weights": self.weights, "provenance": self.provenance}


def read_entries(path: Path) -> list[TrainedEntry]:
    """The entries of a weights file; :class:`AgonError` naming what is wrong with it."""
    entries = read_versioned_json(
        path, MAX_WEIGHTS_BYTES, "a file of evaluation weights", WEIGHTS_FORMAT, "entries"
    )
    return [_entry(path, raw) for raw in entries]


def _entry(path: Path, raw: object) -> TrainedEntry:
    if not isinstance(raw, dict):
        raise AgonError(f"{path}: an entry is not an object")
    options, weights, provenance = raw.get("options"), raw.get("weights"), raw.get("provenance")
    if not isinstance(options, dict) or not isinstance(weights, dict):
        raise AgonError(f"{path}: an entry needs its variant's options and its weights")
    if not all(isinstance(value, (int, float)) and math.isfinite(value)
               for value in weights.values()):
        raise AgonError(f"{path}: the weights of {options} are not all finite numbers")
    return TrainedEntry(
        options, {str(name): float(value) for name, value in weights.items()},
        provenance if isinstance(provenance, dict) else {},
    )


def write_entries(path: Path, entries: Sequence[TrainedEntry]) -> str:
    """The text of a weights file holding ``entries`` (one line an entry, for readable diffs)."""
    lines = ",\n".join(f"    {json.dumps(entry.as_json(), sort_keys=True)}" for entry in entries)
    return f'{{\n  "format": {WEIGHTS_FORMAT},\n  "entries": [\n{lines}\n  ]\n}}\n'


def with_entry(entries: Sequence[TrainedEntry], new: TrainedEntry) -> list[TrainedEntry]:
    """``entries`` with ``new`` in place of the entry of the same options (or added last)."""
    kept = [entry for entry in entries if entry.options != new.options]
    return [*kept, new]


def chosen_entry(
    options: Mapping[str, Any], entries: Sequence[TrainedEntry], carries_over: Sequence[str]
) -> TrainedEntry | None:
    """The entry for a variant of these options: its own; else the nearest of those that
    differ only in ``carries_over`` options (the least sum of the differences of those
    options, the first in the file among equals); None where none applies."""
    best: tuple[float, int] | None = None
    chosen = None
    for index, entry in enumerate(entries):
        if set(entry.options) != set(options):
            continue
        differing = [name for name in options if entry.options[name] != options[name]]
        if any(name not in carries_over for name in differing):
            continue
        distance = sum(_distance(entry.options[name], options[name]) for name in differing)
        if best is None or (distance, index) < best:
            best, chosen = (distance, index), entry
    return chosen


def _distance(one: object, other: object) -> float:
    if isinstance(one, (int, float)) and isinstance(other, (int, float)):
        return abs(float(one) - float(other))
    return 1.0


def package_file(terms: Terms) -> Path:
    """The weights file of the game package of ``terms`` (which may not exist)."""
    return Path(str(resources.files(terms.package).joinpath(WEIGHTS_FILE)))


def trained_entries(terms: Terms) -> list[TrainedEntry]:
    """The trained entries a twin may use: those of the file :data:`WEIGHTS_ENV` names (the
    user's own training), then those its game ships."""
    entries = []
    chosen = os.environ.get(WEIGHTS_ENV)
    if chosen:
        entries += read_entries(Path(chosen).expanduser())
    shipped = package_file(terms)
    if shipped.is_file():
        entries += read_entries(shipped)
    return entries


def weights_of(terms: Terms, entry: TrainedEntry | None) -> npt.NDArray[np.float64]:
    """The weights of ``terms`` an entry gives (the hand weight for a term it lacks)."""
    import numpy as np

    given = {} if entry is None else entry.weights
    return np.array(
        [given.get(name, hand) for name, hand in zip(terms.names, terms.hand_weights, strict=True)],
        dtype=np.float64,
    )


def weights_for(game: Game, terms: Terms) -> npt.NDArray[np.float64]:
    """The weights a variant evaluates with: the trained ones that apply
    (:func:`trained_entries`, :func:`chosen_entry`), else the hand weights."""
    entry = chosen_entry(game.options(), trained_entries(terms), terms.carries_over)
    return weights_of(terms, entry)


def set_weights(
    params: npt.NDArray[np.int64], terms: Terms, weights: Sequence[float] | npt.NDArray[np.float64]
) -> None:
    """Write ``weights`` into a twin's ``params`` where ``terms`` keep them."""
    import numpy as np

    values = np.asarray(weights, dtype=np.float64)
    if values.shape != (len(terms.names),):
        raise AgonError(f"{len(terms.names)} weights are needed, not {values.size}")
    params[terms.weights_at : terms.weights_at + len(values)] = values.view(np.int64)


def params_weights(params: npt.NDArray[np.int64], terms: Terms) -> npt.NDArray[np.float64]:
    """The weights a twin's ``params`` hold."""
    import numpy as np

    stored = params[terms.weights_at : terms.weights_at + len(terms.names)]
    return np.ascontiguousarray(stored).view(np.float64).copy()
