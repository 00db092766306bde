"""One limit passed to each call, and the one loop that spends it in chunks."""

from __future__ import annotations

import time
from itertools import pairwise

import pytest

from agon.core.errors import AgonError
from agon.core.limits import NO_LIMIT, Chunks, Limit, Stop


@pytest.mark.parametrize(
    ("text", "limit"),
    [("2s", Limit(seconds=2.0)), ("500ms", Limit(seconds=0.5)), ("20000", Limit(count=20000)),
     (" 1.5s ", Limit(seconds=1.5))],
)
def test_a_budget_reads_as_a_limit(text: str, limit: Limit) -> None:
    assert Limit.parse(text) == limit
    assert Limit.parse(str(limit)) == limit


@pytest.mark.parametrize("text", ["0", "0s", "-1", "1.5", "fast", "", "1e23", "9" * 30, "2 h"])
def test_a_bad_budget_is_refused_by_name(text: str) -> None:
    with pytest.raises(AgonError, match=r"budget|count|limit"):
        Limit.parse(text)


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan"), float("inf")])
def test_a_limit_needs_a_positive_finite_time(seconds: float) -> None:
    with pytest.raises(AgonError, match="positive number of seconds"):
        Limit(seconds=seconds)


def test_the_earlier_deadline_counts() -> None:
    now = time.monotonic()
    assert Limit(seconds=5).by(now + 1).deadline == now + 1
    assert Limit(deadline=now + 1).by(now + 9).deadline == now + 1
    assert Limit(count=3).by(None) == Limit(count=3)
    spending = Limit(seconds=100, deadline=now + 1).start()
    assert spending.end is not None and spending.end <= now + 1


def test_a_limit_from_now_keeps_its_count_and_ends_by_a_deadline() -> None:
    before = time.monotonic()
    limit = Limit(seconds=5, count=7).from_now()
    assert limit.seconds is None and limit.count == 7
    assert limit.deadline is not None and before + 5 <= limit.deadline <= time.monotonic() + 5
    assert limit.from_now() == limit  # (a deadline stays where it is)
    assert NO_LIMIT.from_now() == NO_LIMIT


def _counting(sizes: list[int], finish_after: int | None = None):  # type: ignore[no-untyped-def]
    """A step that records the chunk sizes it is asked for, finishing after some units."""
    done = [0]

    def step(count: int) -> tuple[int, bool]:
        sizes.append(count)
        if finish_after is not None and done[0] + count >= finish_after:
            ran = finish_after - done[0]
            done[0] += ran
            return ran, True
        done[0] += count
        return count, False

    return step


def test_a_count_is_spent_exactly() -> None:
    sizes: list[int] = []
    done, stop = Chunks(7, 0.05).run(_counting(sizes), Limit(count=100).start())
    assert (done, stop) == (100, Stop.LIMIT)
    assert sum(sizes) == 100 and sizes[0] == 7


def test_work_that_finishes_stops_the_chunks() -> None:
    sizes: list[int] = []
    done, stop = Chunks(10, 0.05).run(_counting(sizes, finish_after=25), NO_LIMIT.start())
    assert (done, stop) == (25, Stop.FINISHED)


def test_an_allowance_is_spent_exactly_and_said_apart_from_the_limit() -> None:
    sizes: list[int] = []
    chunks = Chunks(8, 0.05)
    done, stop = chunks.run(_counting(sizes), Limit(count=1000).start(), allowance=20)
    assert (done, stop) == (20, Stop.ALLOWANCE)
    assert sum(sizes) == 20


def test_the_first_chunk_runs_even_when_the_time_is_already_up() -> None:
    sizes: list[int] = []
    spent = Limit(deadline=time.monotonic() - 1.0).start()
    done, stop = Chunks(5, 0.05).run(_counting(sizes), spent)
    assert (done, stop, sizes) == (5, Stop.LIMIT, [5])


def test_a_time_limit_stops_between_chunks_and_chunks_follow_the_speed() -> None:
    sizes: list[int] = []

    def slow(count: int) -> tuple[int, bool]:
        sizes.append(count)
        time.sleep(count * 1e-4)  # 10,000 units a second
        return count, False

    started = time.monotonic()
    _, stop = Chunks(1, 0.01, growth=4).run(slow, Limit(seconds=0.2).start())
    assert stop is Stop.LIMIT
    assert time.monotonic() - started < 1.0
    # chunks grow towards 0.01 s (about 100 units) at most four times at a time
    assert all(later <= 4 * earlier for earlier, later in pairwise(sizes))
    assert max(sizes) > 20


def test_a_chunk_sized_in_a_longer_run_is_cut_to_the_time_left() -> None:
    """A chunk grown in an earlier run with time to spare (the solver's, from move to move)
    would overrun a short limit: the first chunk of a run too takes no more than the time left
    at the speed measured so far."""
    chunks = Chunks(100_000, 1.0, rate=1000.0)  # (a second's chunk at 1,000 units a second)
    sizes: list[int] = []
    chunks.run(_counting(sizes), Limit(seconds=0.05, count=200_000).start())
    assert 1 <= sizes[0] <= 51


def test_creep_makes_every_chunk_that_ran_whole_larger() -> None:
    chunks = Chunks(100, 10.0, creep=1.5, longest=1000.0)
    sizes: list[int] = []
    chunks.run(_counting(sizes), Limit(count=2000).start())
    assert all(later >= min(earlier * 1.5, 2000 - sum(sizes[: index + 1])) - 1
               for index, (earlier, later) in enumerate(pairwise(sizes)))


def test_between_runs_after_each_unfinished_chunk_and_may_stop_the_work() -> None:
    calls: list[int] = []

    def between() -> None:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Chunks(1, 0.05).run(_counting([]), NO_LIMIT.start(), between=between)
    assert len(calls) == 3


def test_a_stop_that_landed_in_a_chunk_as_another_error_stops_the_work() -> None:
    """Numba, unboxing a kernel passed as an argument, calls back into Python; Ctrl-C landing
    there came out as a TypeError ("missing 1 required positional argument: 'sig'") with the
    stop lost. Once a stop was heard, such an error is the stop; before, it is an error."""
    from agon.core.workers import hear_stop

    def unboxing(count: int) -> tuple[int, bool]:
        raise TypeError("_get_wrapper_address() missing 1 required positional argument: 'sig'")

    with pytest.raises(TypeError):
        Chunks(1, 0.05).run(unboxing, NO_LIMIT.start())
    hear_stop()
    try:
        with pytest.raises(KeyboardInterrupt):
            Chunks(1, 0.05).run(unboxing, NO_LIMIT.start())

        def ours(count: int) -> tuple[int, bool]:
            raise AgonError("this position's game is too long for the solver's arrays")

        with pytest.raises(AgonError):  # (Agon's own word is never a stop's)
            Chunks(1, 0.05).run(ours, NO_LIMIT.start())
    finally:
        hear_stop(False)
