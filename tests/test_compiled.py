"""The guard that keeps Numba's cache of compiled kernels in step with the sources."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agon
from agon.core.compiled import STAMP_NAME, drop_stale_compiled_kernels

SOURCES = Path(agon.__file__).parent


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


def _constants_in_recursive_calls(source: str) -> list[str]:
    """The arguments of each function's calls to itself that Numba would type as literals:
    constants written out or named in capitals (module constants)."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef):
            continue
        for call in ast.walk(function):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                    and call.func.id == function.name):
                continue
            for argument in call.args:
                operand = argument.operand if isinstance(argument, ast.UnaryOp) else argument
                if isinstance(operand, ast.Constant) or (
                    isinstance(operand, ast.Name) and operand.id.isupper()
                ):
                    found.append(f"{function.name}: {ast.unparse(argument)}")
    return found


@pytest.mark.parametrize("module", ["solve/kernels.py", "solve/proof_numbers.py", "search"])
def test_recursive_kernels_pass_no_constants_to_themselves(module: str) -> None:
    # a literal argument compiles a second version through the recursion, whose cached
    # machine code crashes the next process (docs/architecture.md)
    path = SOURCES / module
    for source in [path] if path.is_file() else sorted(path.rglob("*.py")):
        assert _constants_in_recursive_calls(source.read_text()) == [], source


def test_the_check_finds_a_constant_passed_to_itself() -> None:
    source = "def search(depth, need):\n    return search(depth - 1, NEED_ALL)\n"
    assert _constants_in_recursive_calls(source) == ["search: NEED_ALL"]
    assert _constants_in_recursive_calls(source.replace("NEED_ALL", "need")) == []

