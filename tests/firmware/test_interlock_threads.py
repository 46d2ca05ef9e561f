"""The interlocks with the reactor thread blocked, on a real reactor thread and wall time.

The harness is ``launcher/sim/interlock.py`` (``python -m bench.interlock`` writes the same
figures into hardware/SAFETY.md). The default tier makes ``QUICK`` tries of each and
asserts what does not depend on the machine's load: the lid's stop came inside the pin's
own callback (each try asserts the pins low as soon as the edge has been delivered: a stop
that waited for the blocked reactor would not come at all), and a blocked reactor's run
was ended by its lease, not by anything else. The slow tier (``make test-slow``) makes
``TRIES`` and asserts the times too: the 95th percentile (the worst of 200 tries is the
OS's on a shared 2-core machine). A try whose run lapsed before it began (the whole process
stalled longer than the lease: the guard did its job early) measures nothing and is made
again; each such stall is one lapse, counted.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Iterator

import pytest

from launcher.firmware.runner import SWITCH_INTERVAL, tune_switch_interval
from launcher.sim.interlock import Unit, lapses, lid_stops

TRIES = 200
QUICK = 20
LID_STOP_LIMIT = 0.001  # s: the lid edge to the roller's pins low, in 95 tries of 100
LEASE = 0.02  # s: a short lease, so that 200 lapses take seconds
LAPSE_SLACK = 0.005  # s: the guard thread's own wake-up and the poll, typically (median)
LAPSE_SLACK_P95 = 0.025  # s: ... and in 95 tries of 100, on a busy shared machine


@pytest.fixture
def unit() -> Iterator[Unit]:
    before = sys.getswitchinterval()
    tune_switch_interval()  # as `launcher run` does
    u = Unit(lease=LEASE)
    try:
        yield u
    finally:
        u.close()
        sys.setswitchinterval(before)


def report(name: str, xs: list[float], stalls: int) -> None:
    p95 = statistics.quantiles(xs, n=20)[18]
    print(f"\n{name}: {len(xs)} tries, p50 {statistics.median(xs) * 1e3:.3f} ms, "
          f"p95 {p95 * 1e3:.3f} ms, max {max(xs) * 1e3:.3f} ms; {stalls} made again")


TIERS = [pytest.param(QUICK, id="quick"), pytest.param(TRIES, id="timed", marks=pytest.mark.slow)]


@pytest.mark.parametrize("tries", TIERS)
@pytest.mark.parametrize("how", ["sleep", "spin"])
def test_the_lid_stops_the_roller_within_1_ms_while_the_reactor_is_blocked(unit: Unit,
                                                                            how: str,
                                                                            tries: int):
    assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
    times = lid_stops(unit, how, tries)  # each try asserts the pins low after the edge
    report(f"lid edge -> roller off, reactor blocked ({how})", times, unit.stalls)
    assert unit.app.actuators.lapses == unit.stalls  # each measured stop was the lid's
    if tries == TRIES:
        assert statistics.quantiles(times, n=20)[18] < LID_STOP_LIMIT


@pytest.mark.parametrize("tries", TIERS)
@pytest.mark.parametrize("how", ["sleep", "spin"])
def test_the_roller_stops_by_itself_within_its_lease_while_the_reactor_is_blocked(
        unit: Unit, how: str, tries: int):
    times = lapses(unit, how, tries)
    report(f"reactor blocked ({how}) -> roller stopped by its lease ({LEASE * 1e3:.0f} ms)",
           times, unit.stalls)
    assert unit.app.actuators.lapses == tries + unit.stalls  # each measured stop a lapse
    if tries != TRIES:
        return
    # The last renewal came at most a quarter lease before the block: the lapse follows
    # within the lease, plus the guard thread's wake-up (the OS's, on a busy machine), and
    # not before three quarters of it (a reactor that renewed nothing would lapse sooner).
    assert LEASE * 0.75 <= statistics.median(times) <= LEASE + LAPSE_SLACK
    assert statistics.quantiles(times, n=20)[18] <= LEASE + LAPSE_SLACK_P95
