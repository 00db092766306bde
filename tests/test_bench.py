"""``agon bench`` and the twin verification (smoke only: speed is never asserted)."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

from typer.testing import CliRunner

from agon.cli import app
from agon.search.bench import verify_game
from agon.search.twins import twin_for
from agon.search.variants import MEASURES, variant

runner = CliRunner()


def test_bench_only_one_variant_in_json() -> None:
    result = runner.invoke(
        app, ["bench", "--only", "alak-11-baljeu", "--seconds", "0.01", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) == {"alak-11-baljeu", "compile_s"}
    assert report["compile_s"] >= 0
    for measure in MEASURES:
        assert report["alak-11-baljeu"][measure] > 0


def test_bench_text_report_and_unknown_variant() -> None:
    result = runner.invoke(app, ["bench", "--only", "alternator-8x8", "--seconds", "0.01"])
    assert result.exit_code == 0, result.output
    assert "alternator-8x8" in result.stdout and "compile_s" in result.stdout
    refused = runner.invoke(app, ["bench", "--only", "chess"])
    assert refused.exit_code == 2 and "unknown variant" in refused.stderr
    for seconds in ("0", "nan", "-1"):
        refused = runner.invoke(app, ["bench", "--seconds", seconds])
        assert refused.exit_code == 2
        assert f"--seconds must be a positive number of seconds, not {seconds}" in refused.stderr


def test_verify_finds_no_difference_in_the_real_twins() -> None:
    result = runner.invoke(
        app,
        ["bench", "--verify", "--only", "alternator-3x3", "--only", "alak-6-traditional",
         "--games", "3", "--json"],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["mismatches"] == []


def test_verify_reports_a_twin_that_disagrees() -> None:
    twin = twin_for(variant("alak-5-tromp-taylor-komi-1"))

    def drops_the_pass(params: Any, state: Any, out: Any) -> int:
        return int(twin.legal_moves(params, state, out)) - 1

    broken = dataclasses.replace(twin, kernels={**twin.kernels, "legal_moves": drops_the_pass})
    problem = verify_game(broken, random.Random(1))
    assert problem is not None and "legal moves" in problem
