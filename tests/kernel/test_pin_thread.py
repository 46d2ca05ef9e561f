"""The stops that must not wait for the reactor, with the reactor hung on purpose.

The hang harness (tests/kernel/harness.py) runs ``launcher run`` with the reactor's thread
hung for ``HANG_S`` on a signal: SIGUSR1 hangs it at once (between two callbacks), SIGUSR2
inside the actuators' next tick (``Actuators._tick``, holding whatever lock the tick holds).
Meanwhile only two paths can stop the roller: the lid's, on lgpio's callback thread
(``Actuators.lid_left``), and the lease's, on the guard thread (``Actuators.expire``). The
reactor's own path (the lid edge posted to the state machine) waits for the hang's end.

The firmware here has ``motor.lease_ms = 1000`` and hangs of 1.5 s, so that the paths fall
apart: the lease ends a run ~0.75 s into a hang and the reactor moves after 1.5 s. The
guard also reads the lid every quarter lease (250 ms) and may come first; which thread
wrote nSLEEP low is read from the kernel's trace, so each try checks that lgpio's callback
thread itself wrote it within ``LID_MAX`` of the edge, whoever else did, and that the
roller stopped before the harness said the reactor runs again.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kerneltier import (
    GUARD_THREAD,
    LGPIO_THREAD,
    LID_MAX,
    LID_P50,
    Firmware,
    Pty,
    World,
    percentile,
    record,
    settle,
)
from lines import GpioTrace, Roller

LEASE = 1.0  # s: motor.lease_ms below
HANG_S = 1.5  # s: each hang; longer than a lease, so the lease's stop shows inside it
CONFIG = f"""[game]
profile = "deal 12"
[motor]
speed = 1.0
lease_ms = {LEASE * 1000:.0f}
[timing]
mash_guard_ms = 60
"""
LID_TRIES = 8  # with the reactor hung each try takes a hang and a shot: ~4 s here
TICK_TRIES = 3


class Hangs:
    """One hang harness for the module's hang tests, its console on a pty."""

    def __init__(self, folder: Path) -> None:
        self.world = World("mild", cards=5000)
        self.pty = Pty()
        self.fw = Firmware(folder, toml=CONFIG, harness=True, console_port=self.pty.path,
                           env={"HANG_S": str(HANG_S)})
        try:
            self.fw.ready(timeout=300)
            self.pty.wait_line(lambda line: "launcher" in line.lower(), 30)  # the banner
        except BaseException:
            self.close()  # a start that failed must not leave the lines held for the next test
            raise

    def shot(self, roller: Roller) -> bool:
        """A shot under way with the roller driven; False if the press did not shoot."""
        settle(self.world, self.pty)
        mark = self.fw.mark()
        self.world.do(lambda sim: sim.press())
        _, kind, _ = self.fw.first(("shoot", "fault", "dry"), mark, timeout=30)
        if kind != "shoot":
            return False
        assert roller.is_running(2.0), "the roller does not run"
        return True

    def hang(self, signum: int) -> tuple[float, int]:
        return self.fw.hang(signum)

    def resumed(self, line: int) -> float:
        return self.fw.wait_for(lambda: self.fw.hung_until(line), HANG_S + 10,
                                "the hang's end")

    def close(self) -> None:
        self.fw.stop()
        self.pty.close()
        self.world.close()


@pytest.fixture(scope="module")
def hangs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hangs]:
    h = Hangs(tmp_path_factory.mktemp("hangs"))
    yield h
    h.close()


def stopped_by(trace: GpioTrace, since: float, thread: str, what: str,
               within: float = LID_MAX) -> tuple[str, list[str]]:
    """Whether ``thread`` put the driver to sleep after ``since`` (the kernel's trace), and
    what is wrong if it did not. Another layer may have come first (the guard reads the lid
    every quarter lease too): each layer is checked on its own, so it is ``thread``'s own
    write that counts, within ``within`` of ``since`` (a lid stop's LID_MAX; a lapse's
    lease)."""
    own = trace.driver_slept(since, by=thread)
    if own is not None and own.t - since <= within:
        return thread, []
    first = trace.driver_slept(since)
    if first is None:
        return "", [f"{what}: nSLEEP was never written low"]
    return first.comm, [f"{what}: nSLEEP ({first}) was dropped by {first.comm!r}, and "
                        f"{thread!r} wrote it low " + (f"only at {own}" if own else "never")]


def lid_tries(h: Hangs, signum: int, tries: int
              ) -> tuple[list[float], list[str], list[str]]:
    """Shots stopped by the lid with the reactor hung: each try's delay, the thread that
    wrote each stop, and what was wrong."""
    roller = Roller()
    delays: list[float] = []
    threads: list[str] = []
    problems: list[str] = []
    skipped = 0
    try:
        while len(delays) < tries:
            if not h.shot(roller):
                skipped += 1
                assert skipped <= 5, h.fw.log()[-2000:]
                continue
            trace = GpioTrace()
            try:
                _, line = h.hang(signum)
                time.sleep(0.02)  # the hang under way: only the pin thread can act now
                opened = h.world.do(lambda sim: sim.open_lid(full=False))
                low = roller.low_since(timeout=HANG_S + 1.0)
                resumed = h.resumed(line)
            finally:
                trace.stop()
            delay = HANG_S + 1.0 if low is None else max(0.0, low - opened)
            delays.append(delay)
            thread, wrong = stopped_by(trace, opened, LGPIO_THREAD, f"try {len(delays)}")
            threads.append(thread)
            problems += wrong
            when = "never" if low is None else f"{delay * 1e3:.0f} ms after the edge"
            if low is None or low >= resumed:
                problems.append(f"try {len(delays)}: the roller stopped {when}, not before "
                                f"the reactor ran again ({(resumed - opened) * 1e3:.0f} ms)")
            elif delay > LID_MAX:
                problems.append(f"try {len(delays)}: {when}, over {LID_MAX * 1e3:.0f} ms")
            h.world.do(lambda sim: sim.close_lid())
    finally:
        roller.close()
    if percentile(delays, 0.5) > LID_P50:
        problems.append(f"p50 {percentile(delays, 0.5) * 1e3:.1f} ms, over {LID_P50 * 1e3:.0f}")
    return delays, threads, problems


def test_the_lid_stops_the_roller_on_the_pin_thread_with_the_reactor_hung(hangs):
    delays, threads, problems = lid_tries(hangs, signal.SIGUSR1, LID_TRIES)
    record("lid_hung", tries=len(delays), p50_s=percentile(delays, 0.5), max_s=max(delays),
           delays_s=[round(d, 4) for d in delays], lease_s=LEASE, hang_s=HANG_S,
           threads=sorted(set(threads)), limit_p50_s=LID_P50, limit_max_s=LID_MAX)
    assert not problems, "lid left closed with the reactor hung: " + "; ".join(problems)


def test_hung_inside_the_actuators_tick_the_lid_still_stops_the_roller_at_once(hangs):
    delays, threads, problems = lid_tries(hangs, signal.SIGUSR2, TICK_TRIES)
    record("tick_lid", tries=len(delays), p50_s=percentile(delays, 0.5), max_s=max(delays),
           delays_s=[round(d, 4) for d in delays], threads=sorted(set(threads)),
           limit_p50_s=LID_P50, limit_max_s=LID_MAX)
    assert not problems, ("lid left closed with the reactor hung inside Actuators._tick "
                          "(a stop that waits on a lock the reactor holds): " + "; ".join(problems))


def test_hung_inside_the_actuators_tick_the_lease_stops_the_roller_within_one_lease(hangs):
    h = hangs
    roller = Roller()
    delays: list[float] = []
    threads: list[str] = []
    problems: list[str] = []
    try:
        while len(delays) < TICK_TRIES:
            if not h.shot(roller):
                continue
            trace = GpioTrace()
            try:
                hung, line = h.hang(signal.SIGUSR2)
                low = roller.low_since(timeout=HANG_S + 1.0)
                resumed = h.resumed(line)
            finally:
                trace.stop()
            delay = HANG_S + 1.0 if low is None else max(0.0, low - hung)
            delays.append(delay)
            thread, wrong = stopped_by(trace, hung, GUARD_THREAD, f"try {len(delays)}",
                                       within=LEASE)
            threads.append(thread)
            problems += wrong
            if low is None or low >= resumed or delay > LEASE:
                problems.append(f"try {len(delays)}: "
                                f"{'never' if low is None else f'{delay * 1e3:.0f} ms'} after the "
                                f"hang began (the reactor ran again after "
                                f"{(resumed - hung) * 1e3:.0f} ms)")
    finally:
        roller.close()
    record("tick_lease", tries=len(delays), max_s=max(delays), lease_s=LEASE,
           delays_s=[round(d, 4) for d in delays], threads=sorted(set(threads)))
    assert not problems, (f"the reactor hung inside Actuators._tick, lid closed: the lease "
                          f"({LEASE * 1e3:.0f} ms) must end the run within one lease: "
                          + "; ".join(problems))
