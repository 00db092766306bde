"""The guard that keeps Numba's cache of compiled kernels in step with the sources."""

from __future__ import annotations

from pathlib import Path

from agon.core.compiled import STAMP_NAME, drop_stale_compiled_kernels


def _package(root: Path) -> tuple[Path, Path]:
    (root / "solve" / "__pycache__").mkdir(parents=True)
    (root / "solve" / "kernels.py").write_text("LAYOUT = 3\n")
    cached = root / "solve" / "__pycache__" / "proof_numbers.prove-119.py311.1.nbc"
    cached.write_bytes(b"compiled")
    return root / "solve" / "kernels.py", cached


def test_cached_kernels_go_when_any_source_changes(tmp_path: Path) -> None:
    source, cached = _package(tmp_path)
    assert drop_stale_compiled_kernels(tmp_path)  # no fingerprint yet: nothing is trusted
    assert not cached.exists() and (tmp_path / "__pycache__" / STAMP_NAME).exists()

    cached.write_bytes(b"compiled")
    assert not drop_stale_compiled_kernels(tmp_path)  # sources as they were: kept
    assert cached.exists()

    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "app.py").write_text("PAGE = 1\n")  # an interface: no kernel imports it
    assert not drop_stale_compiled_kernels(tmp_path)
    assert cached.exists()

    source.write_text("LAYOUT = 2\n")  # a kernel another file's cached kernel calls
    assert drop_stale_compiled_kernels(tmp_path)
    assert not cached.exists()


def test_a_stamp_that_cannot_be_written_stops_nothing(tmp_path: Path) -> None:
    _package(tmp_path)
    (tmp_path / "__pycache__").write_text("not a folder")
    assert not drop_stale_compiled_kernels(tmp_path)  # (no exception: the import goes on)
