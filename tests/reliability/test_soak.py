"""Soak: hours of simulated random play, and nothing grows that should not.

A seeded player (``soak.Player``) presses, mashes, lifts the lid, flips, reloads, sleeps
and wakes the unit, and now and then jams a card, on a ``SimRig`` (the firmware on the
simulated board, manual reactor). Checked:

- memory is flat: the traced Python memory (tracemalloc) and the resident set
  (``/proc/self/statm``) at the end of the first quarter against the end of the run,
  within ``TRACED_TOLERANCE`` and ``RSS_TOLERANCE``. The simulator's histories are bounded
  small here (``keep``, ``hal.sim.PIN_HISTORY``), so they are full within the first
  quarter and what grows after it is a leak;
- ``reactor.live_timers`` in the last quarter is no more than in the first;
- every fault is an injected jam, one per jam injected; cards are conserved throughout.

Before the histories were bounded, the simulated board grew by about 3 KB a press (24.6 to
53.6 MB over 10,000 presses); the day here has about 12,700 presses, so the tolerances
below are under 1% of that.
"""

from __future__ import annotations

import pytest
from soak import SoakReport, soak

import hal.sim

TRACED_TOLERANCE = 64 * 1024  # bytes
RSS_TOLERANCE = 1024 * 1024  # bytes: RSS moves by whole pages and allocator arenas


def _check(report: SoakReport, record_property) -> None:
    samples = report.samples
    q = len(samples) // 4
    assert q >= 1
    first, last = samples[q - 1], samples[-1]
    traced = last.traced - first.traced
    rss = last.rss - first.rss
    line = (f"{report.hours:g} h simulated, {report.counts.get('presses', 0)} presses: "
            f"traced {first.traced / 1024:.1f} -> {last.traced / 1024:.1f} KiB ({traced:+d} B), "
            f"RSS {first.rss / 2**20:.2f} -> {last.rss / 2**20:.2f} MiB ({rss:+d} B), "
            f"live timers {samples[0].live_timers} .. {max(s.live_timers for s in samples)}, "
            f"faults {len(report.faults)} ({report.counts['jams_injected']} jams injected)")
    print(line)
    print(report.counts)
    record_property("soak", line)
    assert traced < TRACED_TOLERANCE, line
    assert rss < RSS_TOLERANCE, line
    assert max(s.live_timers for s in samples[-q:]) <= max(s.live_timers for s in samples[:q])
    assert all(f["code"] == "jam" for f in report.faults), report.faults
    assert len(report.faults) == report.counts["jams_injected"]


def test_an_hour_of_play(monkeypatch: pytest.MonkeyPatch, record_property) -> None:
    monkeypatch.setattr(hal.sim, "PIN_HISTORY", 20)
    report = soak(1.0, seed=11, keep=50)
    assert report.counts["presses"] > 300 and report.counts["flips"] > 0
    _check(report, record_property)


@pytest.mark.slow
def test_a_day_of_play(monkeypatch: pytest.MonkeyPatch, record_property) -> None:
    monkeypatch.setattr(hal.sim, "PIN_HISTORY", 100)
    report = soak(24.0, seed=1, keep=1_000)
    assert report.counts["presses"] > 10_000 and report.counts["wakes"] > 0
    assert report.counts["console_sleeps"] > 0 and report.counts["jams_injected"] > 0
    _check(report, record_property)
