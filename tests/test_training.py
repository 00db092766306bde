"""Learned evaluation weights: the weights files, the fit, and ``agon train``."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from agon.cli import app
from agon.core.errors import AgonError
from agon.core.evaluation import (
    MAX_WEIGHTS_BYTES,
    WEIGHTS_ENV,
    TrainedEntry,
    chosen_entry,
    params_weights,
    read_entries,
    set_weights,
    weights_for,
    with_entry,
    write_entries,
)
from agon.games import make_game
from agon.games.alternator.fast import TERMS
from agon.search.twins import twin_for
from agon.study.training import PlayedGame, TrainRequest, fit, measure, targets, train

runner = CliRunner()
TINY = make_game("alternator", {"size": "3x3"})
CARRIED = ("width", "height", "komi")


def entry(width: int, height: int, komi: float = 3.5, pull: float = 1.0) -> TrainedEntry:
    return TrainedEntry({"width": width, "height": height, "komi": komi}, {"pull": pull})


# --- the weights files ------------------------------------------------------------------------


def test_a_variant_takes_its_own_entry_else_the_nearest_it_may_carry_over() -> None:
    four, eight = entry(4, 4, pull=4), entry(8, 8, pull=8)
    own = {"width": 8, "height": 8, "komi": 3.5}
    assert chosen_entry(own, [four, eight], CARRIED) is eight
    assert chosen_entry({**own, "width": 5, "height": 5}, [eight, four], CARRIED) is four
    assert chosen_entry({**own, "width": 7, "komi": 0.5}, [four, eight], CARRIED) is eight
    # equally near: the first in the file
    assert chosen_entry({**own, "width": 6, "height": 6}, [eight, four], CARRIED) is eight
    # an option that does not carry over, or another set of options: none applies
    assert chosen_entry({**own, "komi": 0.5}, [four, eight], ("width", "height")) is None
    assert chosen_entry({"size": 8}, [four, eight], CARRIED) is None


def test_weights_files_round_trip_and_an_entry_replaces_its_variants(tmp_path: Path) -> None:
    path = tmp_path / "weights.json"
    first, second = entry(4, 4, pull=1), entry(8, 8, pull=2)
    newer = entry(4, 4, pull=3)
    path.write_text(write_entries(path, with_entry([first, second], newer)))
    assert read_entries(path) == [second, newer]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "is not a file of evaluation weights"),
        ('{"format": 2, "entries": []}', "of format 1"),
        ('{"format": 1}', "no list of entries"),
        ('{"format": 1, "entries": [3]}', "an entry is not an object"),
        ('{"format": 1, "entries": [{"options": {}}]}', "options and its weights"),
        ('{"format": 1, "entries": [{"options": {}, "weights": {"pull": "x"}}]}',
         "not all finite numbers"),
        ('{"format": 1, "entries": [{"options": {}, "weights": {"pull": NaN}}]}',
         "not all finite numbers"),
    ],
)
def test_a_bad_weights_file_is_refused_in_words(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "weights.json"
    path.write_text(text)
    with pytest.raises(AgonError, match=says):
        read_entries(path)


def test_a_weights_file_is_read_with_a_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "weights.json"
    path.write_text(" " * (MAX_WEIGHTS_BYTES + 1))
    with pytest.raises(AgonError, match="too large"):
        read_entries(path)


def test_the_file_the_environment_names_comes_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terms = twin_for(TINY).terms
    assert terms is not None
    path = tmp_path / "mine.json"
    mine = TrainedEntry(TINY.options(), {"pull": 9.0, "tempo": -1.0})
    path.write_text(write_entries(path, [mine]))
    monkeypatch.setenv(WEIGHTS_ENV, str(path))
    hand = dict(zip(terms.names, terms.hand_weights, strict=True))
    assert weights_for(TINY, terms).tolist() == [
        {"pull": 9.0, "tempo": -1.0}.get(name, hand[name]) for name in terms.names
    ]
    monkeypatch.delenv(WEIGHTS_ENV)
    assert weights_for(TINY, terms)[0] != 9.0


def test_the_weights_in_params_are_what_the_evaluation_weighs() -> None:
    twin = twin_for(make_game("alternator", {"size": "4x4"}))
    terms = twin.terms
    assert terms is not None
    params = twin.params.copy()
    count = len(terms.names)
    # a position of a random game where every term counts, so each weight's slot is checked
    rng = random.Random(5)
    row = np.zeros(count)
    for _game in range(100):
        state, moves = twin.new_state(), twin.legal_list(twin.new_state())
        while not row.all() and len(moves) > 1:
            twin.play(params, state, rng.choice(moves[:-1]))  # (a placement: the pass is last)
            base = terms.features(params, state, row)
            moves = twin.legal_list(state)
        if row.all():
            break
    assert row.all(), "random games of 4×4 reach positions where every term counts"
    for weights in ([0.0] * count, [1.0 - 1.5 * term for term in range(count)]):
        set_weights(params, terms, weights)
        assert params_weights(params, terms).tolist() == weights
        assert twin.evaluate(params, state) == pytest.approx(base + row @ np.array(weights))
    with pytest.raises(AgonError, match=f"{count} weights are needed"):
        set_weights(params, terms, [1.0])


# --- the fit ----------------------------------------------------------------------------------


def played(terms: list[list[float]], base: list[float], final: float,
           exact: list[float] | None = None) -> PlayedGame:
    return PlayedGame(
        np.array(terms, dtype=np.float64), np.array(base, dtype=np.float64),
        np.array(exact if exact is not None else [np.nan] * len(base), dtype=np.float64),
        final,
    )


def test_the_fit_finds_the_weights_that_made_the_targets() -> None:
    rng = np.random.default_rng(3)
    truth = np.array([2.0, -0.5])
    games = []
    for _ in range(200):
        row, base = rng.normal(size=2), float(rng.normal())
        games.append(played([row.tolist()], [base], base + float(row @ truth)))
    weights, rounds = fit(games, np.zeros(2), lam=1.0, ridge=0.0)
    assert weights == pytest.approx(truth) and rounds >= 1
    # a strong pull keeps the hand weights where the data say little
    pulled, _ = fit(games[:2], np.array([7.0, 7.0]), lam=1.0, ridge=1e6)
    assert pulled == pytest.approx([7.0, 7.0], abs=0.01)


def test_td_targets_mix_the_final_margin_the_next_estimate_and_exact_values() -> None:
    game = played([[1.0], [2.0], [0.0]], [0.0, 0.0, 5.0], final=10.0)
    weights = np.array([1.0])  # estimates 1, 2, 5
    assert targets([game], weights, lam=1.0).tolist() == [10.0, 10.0, 10.0]
    assert targets([game], weights, lam=0.0).tolist() == [2.0, 5.0, 10.0]
    assert targets([game], weights, lam=0.5).tolist() == [4.75, 7.5, 10.0]
    known = played([[1.0], [2.0], [0.0]], [0.0, 0.0, 5.0], 10.0, [np.nan, -4.0, np.nan])
    assert targets([known], weights, lam=0.5).tolist() == [-4.0, -4.0, 10.0]


def test_the_measure_counts_errors_and_winners() -> None:
    game = played([[1.0], [1.0]], [0.0, -3.0], final=4.0, exact=[2.0, np.nan])
    found = measure([game], np.array([1.0]))  # estimates 1 and -2
    assert found.exact_rmse == pytest.approx(1.0) and found.exact_sign == 1.0
    assert found.final_rmse == pytest.approx(np.sqrt((9 + 36) / 2))
    assert measure([], np.array([1.0])).final_rmse is None


# --- training ---------------------------------------------------------------------------------


def test_training_repeats_from_its_seed_and_goes_on_from_its_checkpoint(tmp_path: Path) -> None:
    request = TrainRequest(TINY, games=6, player="alphabeta:200", exact_nodes=2_000, seed=4)
    whole = train(request)
    assert whole.games == 6 and whole.held_out_games == 1
    assert 0 < whole.exact_positions <= whole.positions
    again = train(request)
    assert again.learned.tolist() == whole.learned.tolist()
    kept = tmp_path / "kept.npz"
    first = train(TrainRequest(TINY, 3, "alphabeta:200", exact_nodes=2_000, seed=4), kept)
    assert first.games == 3 and first.resumed_games == 0
    resumed = train(request, kept)
    assert resumed.resumed_games == 3 and resumed.positions == whole.positions
    assert resumed.learned.tolist() == whole.learned.tolist()
    # another seed plays other games: the checkpoint of the first is not taken for them
    other = train(TrainRequest(TINY, 3, "alphabeta:200", exact_nodes=2_000, seed=5), kept)
    assert other.resumed_games == 0


def test_a_damaged_checkpoint_is_refused_in_words(tmp_path: Path) -> None:
    kept = tmp_path / "kept.npz"
    kept.write_bytes(b"not a checkpoint")
    with pytest.raises(AgonError, match="not a training checkpoint"):
        train(TrainRequest(TINY, games=1, player="random", exact_nodes=0), kept)


def test_bad_settings_are_refused_in_words() -> None:
    with pytest.raises(AgonError, match="λ must be from 0 to 1"):
        TrainRequest(TINY, lam=1.5)
    with pytest.raises(AgonError, match="ridge"):
        TrainRequest(TINY, ridge=float("nan"))


def test_agon_train_writes_weights_with_their_provenance(tmp_path: Path) -> None:
    out, kept = tmp_path / "weights.json", tmp_path / "kept.npz"
    args = ["train", "alternator", "--size", "3x3", "--games", "3", "--player", "alphabeta:100",
            "--exact-nodes", "1000", "--out", str(out), "--checkpoint", str(kept), "--quiet"]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["written"] == str(out) and report["games"] == 3
    [written] = read_entries(out)
    assert written.options == TINY.options() and set(written.weights) == set(TERMS.names)
    provenance = written.provenance
    assert provenance["command"].startswith("agon train alternator --size 3x3")
    assert provenance["games"] == 3 and provenance["seed"] == 1 and "trained" in provenance
    assert set(provenance["player_weights"]) == set(TERMS.names)
    # another variant's entry is added beside it; a dry run writes nothing
    other = runner.invoke(app, [*args[:3], "3x4", *args[4:]])
    assert other.exit_code == 0, other.output
    assert "3 games (0 from the checkpoint" in other.stdout and "learned weights" in other.stdout
    assert [one.options["height"] for one in read_entries(out)] == [3, 4]
    before = out.read_text()
    dry = runner.invoke(app, [*args[:3], "3x4", *args[4:], "--dry-run"])
    assert dry.exit_code == 0 and "3 from the checkpoint" in dry.stdout
    assert "no weights written" in dry.stdout and out.read_text() == before


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--lambda", "2"], "λ must be from 0 to 1"),
        (["--games", "0"], "--games"),
        (["--player", "nonsense"], "nonsense"),
    ],
)
def test_agon_train_refuses_bad_options_in_words(
    tmp_path: Path, extra: list[str], says: str
) -> None:
    result = runner.invoke(app, [
        "train", "alternator", "--size", "3x3", "--out", str(tmp_path / "w.json"),
        "--checkpoint", str(tmp_path / "k.npz"), "--quiet", *extra,
    ])
    assert result.exit_code == 2 and says in result.output
    assert "Traceback" not in result.output and not (tmp_path / "w.json").exists()


def test_agon_train_says_where_it_cannot_write(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    result = runner.invoke(app, [
        "train", "alternator", "--size", "3x3", "--games", "1", "--player", "random",
        "--exact-nodes", "0", "--out", str(folder), "--checkpoint", str(tmp_path / "k.npz"),
        "--quiet",
    ])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert str(folder) in result.output


def test_a_stop_heard_but_lost_still_ends_the_training(tmp_path: Path) -> None:
    """A stop whose interrupt was lost in a callback from C (Numba unboxing a kernel) was
    still heard: the training asks between moves and games, and stops there, keeping the games
    played."""
    from agon.core.workers import hear_stop

    kept = tmp_path / "kept.npz"
    request = TrainRequest(TINY, 2, "greedy", exact_nodes=0)
    train(TrainRequest(TINY, 1, "greedy", exact_nodes=0), kept)
    hear_stop()
    try:
        with pytest.raises(KeyboardInterrupt):
            train(request, kept)
    finally:
        hear_stop(False)
    assert train(request, kept).resumed_games == 1


def test_a_stopped_training_keeps_its_games_and_says_so(tmp_path: Path) -> None:
    """SIGTERM (as Ctrl-C) stops ``agon train`` between games or within one: the games
    played are in the checkpoint, and the same command goes on from them."""
    kept, out = tmp_path / "kept.npz", tmp_path / "weights.json"
    command = [
        sys.executable, "-c", "from agon.console import main; main()", "train", "alternator",
        "--size", "4x4", "--games", "100000", "--player", "alphabeta:300", "--exact-nodes",
        "1000", "--checkpoint", str(kept), "--out", str(out), "--quiet",
    ]
    training = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
    deadline = time.monotonic() + 300
    while not kept.exists():
        assert training.poll() is None, training.communicate()
        assert time.monotonic() < deadline, "no game was kept"
        time.sleep(0.1)
    os.killpg(training.pid, signal.SIGTERM)
    _, err = training.communicate(timeout=120)
    assert training.returncode == 130, err
    assert f"the games played are kept in {kept}" in err and "Traceback" not in err
    assert not out.exists()
    four = make_game("alternator", {"size": "4x4"})
    resumed = train(TrainRequest(four, 1, "alphabeta:300", exact_nodes=1000), kept)
    assert resumed.resumed_games == 1
