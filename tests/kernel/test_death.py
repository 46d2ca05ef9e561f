"""The firmware dying or hanging mid-shot, and what the lines do meanwhile and after.

Each test starts its own ``launcher run`` (or the hang harness, tests/kernel/harness.py)
as systemd would, starts a shot of 12 cards (``profile = "deal 12"``: every press
shoots), and then does to it what the test's name says. systemd's part is played by
kerneltier: its watchdog rule (``Watchdog``, on a thread of its own: there is no systemd in
the guest) and ``ExecStopPost=launcher safe-stop``.

Once the firmware is READY, gpio-sim pulls the motor lines UP (``pulled_up``): a line the
dead process held goes back to its pull the moment the kernel releases it, so after a
death every motor line reads HIGH, and nothing but a write can bring one low. The kernel's
own trace of every write (``GpioTrace``, the ``gpio:gpio_value`` tracepoint) then shows
safe-stop's drive: each motor line written low by the safe-stop process, nSLEEP first,
and no other process writing any; the lines read high again once it lets go. A safe-stop
that drove nothing leaves no write. (On a real Pi the lines keep their last level when let
go, and the board's pull-downs hold them low after safe-stop; tests/hal FAKE_DIFFERENCES 3.)
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

from kerneltier import (
    GUARD_THREAD,
    SAFE,
    Firmware,
    SafeStop,
    Watchdog,
    World,
    record,
    unit_timeout_s,
)
from lines import PINS, GpioTrace, Roller, Sampler, levels

DEAL = '[game]\nprofile = "deal 12"\n'
# The hung-reactor tests drive the roller at full speed: IN1 steady high, no PWM. lgpio's
# PWM is a thread of the firmware, and on this loaded VM its wave was seen low for 389 ms
# at a stretch while running, which no reader can tell from a coasting stop.
STEADY = DEAL + '[motor]\nspeed = 1.0\n'
# s: a hung reactor's roller is off by itself within this: the 100 ms lease, and the guard
# thread's wake-up and two lgpio writes in a guest without KVM (246 ms seen once on a
# loaded machine). Without the lease the roller runs until the watchdog's SIGABRT, ~1 s.
LEASE_BUDGET = 0.5
# s: safe-stop from exec to exit. On a Pi systemd ends an ExecStopPost= command after the
# unit's TimeoutStopSec= (10 s); this guest runs Python 10-40x slower, and on a loaded
# machine safe-stop took 6-8 s here and up to 53 s. So the limit here is the unit's times
# 12: what catches a safe-stop that waits on something (a line, a lock) rather than a slow
# start.
SAFE_STOP_LIMIT = 12 * unit_timeout_s("TimeoutStopSec")
EXIT_LIMIT = 2.0  # s: kill -9 or SIGABRT to the process reaped (seen: 35-300 ms)
PULL_UP = dict.fromkeys(SAFE, 1)  # every motor line let go, at gpio-sim's pull-up


def start_shot(world: World, fw: Firmware, roller: Roller) -> None:
    mark = fw.mark()
    world.do(lambda sim: sim.press())
    fw.event("shoot", mark, timeout=30)
    assert roller.is_running(2.0), "the roller does not run"


def wait_stopped(pid: int, timeout: float = 10.0) -> float:
    """The wall time the kernel shows ``pid`` stopped (SIGSTOP delivered)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T":
            return time.monotonic()
    raise AssertionError(f"the firmware did not stop within {timeout} s of SIGSTOP")


def safe_stop_traced(fw: Firmware) -> tuple[SafeStop, dict[str, object], list[str]]:
    """``launcher safe-stop`` after the firmware died, with every write traced; what it
    wrote, and what is wrong with it: each motor line written low by safe-stop itself,
    nSLEEP first, never high, no other process writing any, and each let go again after."""
    trace = GpioTrace()
    try:
        stop = SafeStop(fw)
    finally:
        trace.stop()
    after = levels(*SAFE)
    problems: list[str] = []
    others = [w for w in trace.writes if w.pid != stop.pid]
    if others:
        problems.append(f"another process wrote lines while safe-stop ran: {others[:5]}")
    writes = {name: [w for w in trace.of(name) if w.pid == stop.pid] for name in SAFE}
    for name, done in writes.items():
        if not any(w.value == 0 for w in done):
            problems.append(f"{name} was never written low by safe-stop (pid {stop.pid}, "
                            f"{stop.end - stop.start:.2f} s): it drove nothing")
        if any(w.value for w in done):
            problems.append(f"safe-stop wrote {name} high")
    first = {name: done[0].t for name, done in writes.items() if done}
    if "motor_sleep" in first and any(t < first["motor_sleep"] for t in first.values()):
        problems.append(f"nSLEEP was not written low first: {first}")
    if stop.end - stop.start > SAFE_STOP_LIMIT:
        problems.append(f"safe-stop took {stop.end - stop.start:.1f} s (limit "
                        f"{SAFE_STOP_LIMIT:g} s)")
    if after != PULL_UP:
        problems.append(f"lines after safe-stop {after}: not let go (gpio-sim's pull is up)")
    figures = {"safe_stop_s": stop.end - stop.start, "levels_after_safe_stop": after,
               "safe_stop_limit_s": SAFE_STOP_LIMIT,
               "writes": {name: [round(w.t - stop.start, 4) for w in done]
                          for name, done in writes.items()},
               "safe_stop_output": stop.output}
    return stop, figures, problems


def test_sigstop_then_kill_9_mid_shot_then_safe_stop_drives_every_line(world_factory, firmware,
                                                                        pulled_up):
    """SIGSTOP at a driving sample: the run-on while stopped; then kill -9 (still stopped):
    the lines let go, and ``launcher safe-stop`` writes each low, traced by the kernel."""
    world = world_factory(cards=200)
    # At full drive IN1 is steady high, so the stop lands on a high level at once. (At 85 %
    # a stop that landed low was resumed and tried again, but a resumed process finds its
    # run's lease lapsed and stops the roller: the retry never saw IN1 high again.)
    fw = firmware(toml=STEADY)
    roller = Roller()
    try:
        fw.ready(timeout=300)
        pulled_up(*SAFE)
        start_shot(world, fw, roller)
        tries = 0
        while True:  # until the stop lands on a driving sample
            tries += 1
            assert tries <= 20, "no SIGSTOP of 20 landed while the roller was driven"
            fw.signal(signal.SIGSTOP)
            stopped = wait_stopped(fw.proc.pid)
            if roller.read():
                break
            fw.signal(signal.SIGCONT)
            time.sleep(0.05)
        frozen = Sampler(roller)
        frozen.run(1.0)
        while_stopped = levels(*SAFE)
        killed = fw.signal(signal.SIGKILL)
        dead = fw.wait_exit()
        after_death = levels(*SAFE)
        stop, figures, problems = safe_stop_traced(fw)
    finally:
        roller.close()
    record("sigstop", stopped_s=round(killed - stopped, 3), tries=tries,
           level_while_stopped=frozen.samples[-1][1], changes_while_stopped=len(
               frozen.samples) - 1, reads_while_stopped=frozen.reads,
           levels_while_stopped=while_stopped)
    record("kill9", levels_after_death=after_death, kill_to_exit_s=dead - killed,
           exit_limit_s=EXIT_LIMIT, **figures)
    # A stopped process runs no thread at all, lgpio's PWM included: the roller stays driven
    # (it was caught driving), unchanged, for as long as the stop lasts.
    assert [v for _, v in frozen.samples] == [1], f"while stopped: {frozen.samples[:5]}"
    assert frozen.reads >= 100, f"the roller was read only {frozen.reads} times in 1 s"
    assert while_stopped == {"motor_sleep": 1, "motor_in1": 1, "motor_in2": 0, "rotator": 0}
    assert dead - killed <= EXIT_LIMIT, f"kill -9 to reaped: {dead - killed:.3f} s"
    assert after_death == PULL_UP, f"lines after the death {after_death}: not let go"
    assert not problems, "; ".join(problems)
    assert "low (lgpio; config)" in stop.output


def test_hung_reactor_lease_stops_the_roller_then_watchdog_sigabrt_then_safe_stop(
        world_factory, firmware, pulled_up):
    world = world_factory(cards=200)
    usec = 1_000_000
    limit = usec / 1e6
    fw = firmware(toml=STEADY, harness=True, watchdog_usec=usec)
    roller = Roller()
    try:
        fw.ready(timeout=300)
        watchdog = Watchdog(fw, usec)  # systemd arms it at READY=1
        pulled_up(*SAFE)
        start_shot(world, fw, roller)
        sampler = Sampler(roller)
        sampler.run(0.05)
        trace = GpioTrace()
        try:
            hung, _ = fw.hang()
            sampler.run(until=lambda: fw.proc.poll() is not None)
            aborted = watchdog.join(10)
            dead = fw.wait_exit()
        finally:
            trace.stop()
        after_death = levels(*SAFE)
        _, figures, problems = safe_stop_traced(fw)
    finally:
        roller.close()
    pings = watchdog.pings()
    before = [t for t in pings if t < hung]
    gaps = [b - a for a, b in zip([fw.ready_at, *before], before, strict=False)]
    late = [round(t - hung, 3) for t in pings if t > hung + 0.1]
    at_hang = sampler.level_at(hung)
    while_hung = sampler.changes(hung, aborted)
    off = while_hung[0][0] if while_hung and while_hung[0][1] == 0 else None
    stop = trace.driver_slept(hung)
    record("hang", stopped_by=None if stop is None else stop.comm, watchdog_s=limit,
           hang_to_sigabrt_s=aborted - hung,
           sigabrt_to_exit_s=dead - aborted, hang_to_roller_off_s=None if off is None
           else off - hung, roller_changes_while_hung=len(while_hung),
           roller_reads=sampler.reads, max_ping_gap_s=max(gaps), pings_while_hung=len(late),
           levels_after_death=after_death, lease_budget_s=LEASE_BUDGET, exit_limit_s=EXIT_LIMIT,
           **figures)
    assert at_hang == 1, "the roller was not driven when the reactor hung"
    assert off is not None and off - hung <= LEASE_BUDGET, (
        f"the roller ran on {((off or aborted) - hung):.3f} s after the reactor hung "
        f"(lid closed); a run must lapse by itself within {LEASE_BUDGET} s")
    assert len(while_hung) == 1, f"the roller was driven again while hung: {while_hung}"
    # The lapse brakes (IN2 high, written by lgpio's PWM thread whoever asks), and the guard
    # lets the driver sleep once the brake has held; no other thread may write nSLEEP then.
    # (On the firmware before issue 34 that second step could not be seen here: the guard
    # reported the lapse, logging and posting to the reactor, before it, and the hang can
    # hold a lock of either.)
    assert stop is None or stop.comm == GUARD_THREAD, f"nSLEEP low after the hang: {stop}"
    # The firmware's part of the watchdog: pings every half timeout while the reactor runs
    # (a loaded guest stretched a gap to 0.9 s; over the timeout systemd would abort a
    # reactor that runs), none once it hangs, so the SIGABRT comes one timeout after the last.
    assert max(gaps) < limit, f"a ping came {max(gaps):.3f} s after the one before"
    assert not late, f"watchdog pings from a hung reactor, at {late} s"
    # (Counted from the last ping, as systemd counts: the hang may come up to a ping's period
    # after it, so the hang to the SIGABRT is anything from half a timeout to a timeout.)
    last = before[-1] if before else fw.ready_at
    assert limit - 0.01 <= aborted - last <= limit + 0.2, (
        f"last ping to SIGABRT {aborted - last:.3f} s (the hang {hung - last:.3f} s after that "
        f"ping) with WATCHDOG_USEC {limit} s")
    assert dead - aborted <= EXIT_LIMIT, f"SIGABRT to reaped: {dead - aborted:.3f} s"
    assert after_death == PULL_UP, f"lines after the death {after_death}: not let go"
    assert not problems, "; ".join(problems)


def test_a_line_another_process_holds_is_named_with_its_fix(world_factory, firmware):
    import lgpio  # in the VM only: plain pytest on the host collects this file without it

    world_factory(cards=10)
    handle = lgpio.gpiochip_open(0)
    try:
        lgpio.gpio_claim_input(handle, PINS.lid_open)
        fw = firmware(watch_start=False)
        rc = fw.proc.wait(180)
        fw.wait_for(lambda: "pins.lid_open" in fw.log() or None, 10, "exit")
    finally:
        lgpio.gpiochip_close(handle)
    text = fw.log()
    record("busy", rc=rc, message=[line for line in text.splitlines() if "pins." in line][:1])
    assert rc != 0
    assert f"pins.lid_open = {PINS.lid_open}" in text and "GPIO busy" in text, text
    assert "sudo systemctl stop launcher" in text, text
