"""The fast-twin contract is declared once (agon.core.fast.KERNELS): a twin gathers its kernels
by those names, and the searches get them as C callbacks of those signatures."""

from __future__ import annotations

import dataclasses
import types

import pytest
from numba import njit

from agon.core.fast import KERNEL_NAMES, KERNELS, kernels_in
from agon.games import make_game
from agon.search.twins import kernels_for, twin_for


def test_a_twin_module_missing_kernels_is_named() -> None:
    module = types.ModuleType("half_a_twin")
    module.play = njit(lambda params, state, move: None)  # type: ignore[attr-defined]
    module.undo = lambda params, state: None  # type: ignore[attr-defined]  # not compiled
    with pytest.raises(TypeError) as refused:
        kernels_in(module)
    message = str(refused.value)
    assert "undo" in message and "legal_moves" in message and "play" not in message


def test_a_twin_without_a_kernel_is_refused() -> None:
    twin = twin_for(make_game("alak", {"size": 5}))
    fewer = {name: kernel for name, kernel in twin.kernels.items() if name != "history_board"}
    with pytest.raises(TypeError, match="history_board"):
        dataclasses.replace(twin, kernels=fewer)


def test_every_declared_kernel_is_a_twin_attribute_and_a_callback() -> None:
    assert {kernel.name for kernel in KERNELS} == KERNEL_NAMES
    twin = twin_for(make_game("alak", {"size": 5}))
    callbacks = kernels_for(twin)
    for kernel in KERNELS:
        assert getattr(twin, kernel.name) is twin.kernels[kernel.name]
        assert getattr(callbacks, kernel.name).address  # compiled to a C function
    with pytest.raises(AttributeError):
        _ = twin.no_such_kernel
    with pytest.raises(AttributeError):
        _ = callbacks.no_such_kernel
