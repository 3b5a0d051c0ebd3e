"""The open-loop schedule of ``bench/load.py --rate``: turns start on their slots
whatever the previous turn did; a slot that comes while the previous turn still runs
starts its turn when that one ends and is counted late, never skipped. Run on a
virtual clock: the turns' lengths are exact, nothing is timed."""

from __future__ import annotations

import pytest

from open_loop import Schedule, offsets, on_schedule, period_for


class Clock:
    """Time that moves only when a sleep or a turn says so."""

    def __init__(self, at: float = 100.0) -> None:
        self.at = at

    def now(self) -> float:
        return self.at

    async def sleep(self, seconds: float) -> None:
        assert seconds > 0
        self.at += seconds


async def run(lengths: list[float], *, period: float, until: float, start: float = 100.0):
    """The schedule over turns lasting ``lengths`` (the last repeated); each turn's start."""
    clock = Clock()
    starts: list[float] = []

    async def turn() -> None:
        starts.append(clock.now())
        clock.at += lengths[min(len(starts) - 1, len(lengths) - 1)]

    done = await on_schedule(
        turn, start=start, period=period, until=until, now=clock.now, sleep=clock.sleep
    )
    return done, starts


async def test_turns_shorter_than_the_period_start_exactly_on_their_slots() -> None:
    done, starts = await run([0.3], period=1.0, until=105.0)
    assert starts == pytest.approx([100.0, 101.0, 102.0, 103.0, 104.0])
    assert (done.slots, done.late) == (5, 0)
    assert done.start_lag_ms == pytest.approx([0.0] * 5)


async def test_a_long_turn_makes_the_next_one_late_and_the_schedule_resumes() -> None:
    # the second turn lasts 2.5 s: slots 102 and 103 come while it runs; the backlog
    # carries into slot 104 (the turn of slot 103 ends at 104.1), then clears
    done, starts = await run([0.3, 2.5, 0.3], period=1.0, until=106.0)
    assert starts == pytest.approx([100.0, 101.0, 103.5, 103.8, 104.1, 105.0])
    assert (done.slots, done.late) == (6, 3)  # every slot ran: none was skipped
    assert done.start_lag_ms == pytest.approx([0.0, 0.0, 1500.0, 800.0, 100.0, 0.0])


async def test_a_daemon_that_cannot_keep_up_runs_every_slot_late() -> None:
    done, starts = await run([1.5], period=1.0, until=104.0)
    assert starts == pytest.approx([100.0, 101.5, 103.0, 104.5])
    assert (done.slots, done.late) == (4, 3)


async def test_a_turn_ending_exactly_at_the_next_slot_is_on_time() -> None:
    done, _ = await run([1.0], period=1.0, until=103.0)
    assert (done.slots, done.late) == (3, 0)


def test_the_period_gives_the_offered_events_per_second() -> None:
    # 10 senders, 20 clients (two per session), 200 deltas a turn: one round is 4,000 events
    period = period_for(4000, tokens=200, clients=20)
    assert period == pytest.approx(1.0)
    assert 10 * 200 * 2 / period == pytest.approx(4000)
    with pytest.raises(ValueError, match="positive"):
        period_for(0, tokens=200, clients=20)


def test_senders_start_spread_over_one_period() -> None:
    assert offsets(4, 2.0) == pytest.approx([0.0, 0.5, 1.0, 1.5])


def test_schedules_merge_their_counts() -> None:
    a = Schedule(slots=3, late=1, start_lag_ms=[0.0, 5.0, 0.0])
    a.merge(Schedule(slots=2, late=0, start_lag_ms=[1.0, 2.0]))
    assert (a.slots, a.late, len(a.start_lag_ms)) == (5, 1, 5)


async def test_a_period_that_is_not_positive_is_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        await run([0.1], period=0.0, until=101.0)
