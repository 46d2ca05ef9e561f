"""The firmware dying, hanging or stopping mid-shot, and what the lines do meanwhile.

Each test starts its own ``launcher run`` (or the hang harness, tests/kernel/harness.py)
as systemd would, starts a shot of 12 cards (``profile = "deal 12"``: every press
shoots), and then does to it what the test's name says. systemd's part (the watchdog,
ExecStopPost=launcher safe-stop) is played by the test.

On gpio-sim, a line the dead process held goes back to the simulator's pull (a
pull-down, as the driver's inputs have on the board) the moment the kernel releases it;
a real Pi's pins keep their last level (FAKE_DIFFERENCES 3 in tests/hal), which is why
safe-stop exists. The levels are recorded as seen.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

from kerneltier import (
    LAUNCHER,
    OUTPUTS,
    PINS,
    Firmware,
    LineWatch,
    Roller,
    World,
    levels,
    record,
    safe_stop,
)

DEAL = '[game]\nprofile = "deal 12"\n'
# The hung-reactor tests drive the roller at full speed: IN1 steady high, no PWM. lgpio's
# PWM is a thread of the firmware, and on this loaded VM its wave was seen low for 389 ms
# at a stretch while running, which no reader can tell from a coasting stop.
STEADY = DEAL + '[motor]\nspeed = 1.0\n'
# s: a hung reactor's roller is off by itself within this: the 100 ms lease, and the guard
# thread's wake-up and two lgpio writes in a guest without KVM (246 ms seen once on a
# loaded machine). Without the lease the roller runs until the watchdog's SIGABRT, ~0.93 s.
LEASE_BUDGET = 0.5
# s: the lid leaving closed stops the roller within this with the reactor hung. In this
# guest a bare lgpio callback takes 3-4 ms (p50); the bound must stay well under what the
# lease's lapse would take (the lid opens 20 ms into a 100 ms lease), to tell the two apart.
LID_BUDGET = 0.03


def start_shot(world: World, fw: Firmware, roller: LineWatch) -> None:
    fw.ready(timeout=180)
    mark = fw.mark()
    world.do(lambda sim: sim.press())
    fw.event("shoot", mark, timeout=10)
    assert roller.is_running(1.0), "the roller does not run"


def wait_high(roller: LineWatch, timeout: float = 2.0) -> float:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if roller.read():
            return time.monotonic()
    raise AssertionError("motor_in1 never read high")


def trace(roller: LineWatch, seconds: float) -> list[tuple[float, int]]:
    """(wall time, 1 driving or 0) of the roller at every change, for ``seconds``."""
    out: list[tuple[float, int]] = []
    end = time.monotonic() + seconds
    last = -1
    while (now := time.monotonic()) < end:
        v = roller.read()
        if v != last:
            out.append((now, v))
            last = v
    return out


def first_off(samples: list[tuple[float, int]], since: float, hold: float = Roller.PWM_GAP
              ) -> float | None:
    """When the roller went off for ``hold`` s or more, at or after ``since`` (the start of
    that stretch, or ``since`` itself if it was off then and stayed off long enough)."""
    level, low_from = None, None
    for t, v in [*samples, (float("inf"), -1)]:
        if t <= since:
            level = v
            continue
        if low_from is None and level == 0:
            low_from = since
        if v == 0 and low_from is None:
            low_from = t
        elif v != 0 and low_from is not None:
            if t - low_from >= hold:
                return low_from
            low_from = None
        level = v
    return None


def test_sigstop_then_kill_9_mid_shot_at_pwm_high_then_safe_stop(world_factory, firmware):
    """SIGSTOP at a PWM-high sample: the run-on while stopped; then kill -9 (still
    stopped, IN1 high): the lines after death, ``launcher safe-stop``, the lines again."""
    world = world_factory(cards=200)
    # At full drive IN1 is steady high, so the stop lands on a high level at once. (At 85 %
    # a stop that landed low was resumed and tried again, but a resumed process finds its
    # run's lease lapsed and stops the roller: the retry never saw IN1 high again.)
    fw = firmware(toml=STEADY)
    roller = Roller()
    try:
        start_shot(world, fw, roller)
        for _ in range(20):  # until the stop lands on a high level
            wait_high(roller)
            stopped = fw.signal(signal.SIGSTOP)
            frozen = trace(roller, 1.0)
            if frozen[-1][1]:
                break
            fw.signal(signal.SIGCONT)
        before_death = levels(*OUTPUTS)
        killed = fw.signal(signal.SIGKILL)
        dead = fw.wait_exit()
        after_death = levels(*OUTPUTS)
        off = roller.low_since(timeout=2.0)
        start, end, out = safe_stop(fw)
        after_stop = levels(*OUTPUTS)
    finally:
        roller.close()
    record("sigstop", stopped_s=round(killed - stopped, 3),
           level_while_stopped=frozen[-1][1] if frozen else None,
           changes_while_stopped=len(frozen) - 1, levels_while_stopped=before_death)
    record("kill9", levels_after_death=after_death, levels_after_safe_stop=after_stop,
           kill_to_exit_s=dead - killed, death_to_roller_off_s=None if off is None
           else max(0.0, off - dead), kill_to_roller_off_s=None if off is None
           else max(0.0, off - killed), safe_stop_s=end - start, safe_stop_output=out.strip())
    # A stopped process runs no thread at all, lgpio's PWM included: the line holds the level
    # it had (high: it was caught at a high sample) for as long as the stop lasts.
    assert len(frozen) == 1, frozen[:5]
    assert all(v == 0 for v in after_stop.values()), after_stop
    assert "low (lgpio; config)" in out


def test_hung_reactor_roller_off_by_itself_then_watchdog_sigabrt_and_safe_stop(world_factory,
                                                                                 firmware):
    world = world_factory(cards=200)
    usec = 1_000_000
    fw = firmware(toml=STEADY, harness=True, watchdog_usec=usec)
    roller = Roller()
    samples: list[tuple[float, int]] = []
    try:
        start_shot(world, fw, roller)
        time.sleep(0.05)
        hung = fw.hang()
        # systemd's part: a ping missed for WATCHDOG_USEC means SIGABRT, then ExecStopPost.
        aborted = None
        while aborted is None:
            samples += trace(roller, 0.02)
            pings = [t for t, f in fw.notifications if f == "WATCHDOG=1"]
            if time.monotonic() - max(pings) > usec / 1e6:
                aborted = fw.signal(signal.SIGABRT)
            assert time.monotonic() - hung < 30, "no watchdog miss"
        while fw.proc.poll() is None:
            samples += trace(roller, 0.01)
        dead = time.monotonic()
        stop = subprocess.Popen([str(LAUNCHER), "safe-stop", "--config", str(fw.config)],
                                cwd=os.environ.get("LG_WD"), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        stop_started = time.monotonic()
        while stop.poll() is None:
            samples += trace(roller, 0.01)
        stop_ended = time.monotonic()
        out = stop.communicate()[0]
        after = levels(*OUTPUTS)
    finally:
        roller.close()
    first = first_off(samples, hung)
    off = first_off(samples, dead)
    record("hang", watchdog_s=usec / 1e6, hang_to_sigabrt_s=aborted - hung,
           sigabrt_to_exit_s=dead - aborted, hang_to_roller_off_s=None if first is None
           else first - hung, death_to_roller_off_s=None if off is None
           else off - dead, safe_stop_s=stop_ended - stop_started,
           levels_after_safe_stop=after,
           changes_while_hung=sum(1 for t, _ in samples if hung <= t < aborted),
           changes_after_death=[(round(t - dead, 4), v) for t, v in samples if t >= dead][:20],
           safe_stop_output=out.strip())
    assert stop.returncode == 0, out
    assert all(v == 0 for v in after.values()), after
    assert first is not None and first - hung <= LEASE_BUDGET, (
        f"the roller ran on {(first or dead) - hung:.3f} s after the reactor hung "
        f"(lid closed); a run must lapse by itself within {LEASE_BUDGET} s")


def test_the_lid_stops_the_roller_even_with_the_reactor_hung(world_factory, firmware):
    world = world_factory(cards=200)
    fw = firmware(toml=STEADY, harness=True)
    roller = Roller()
    try:
        start_shot(world, fw, roller)
        fw.hang()
        time.sleep(0.02)  # well inside a lease: the lid path, not the lapse, must stop it
        opened = world.do(lambda sim: sim.open_lid(full=False))
        low = roller.low_since(timeout=1.0)
        fw.signal(signal.SIGKILL)
        fw.wait_exit()
    finally:
        roller.close()
    delay = None if low is None else max(0.0, low - opened)
    record("lid_hung", lid_to_roller_off_s=delay)
    assert delay is not None and delay <= LID_BUDGET, (
        f"lid left closed with the reactor hung: the roller "
        f"{'still running after 1 s' if delay is None else f'low after {delay * 1e3:.1f} ms'}")


def test_a_line_another_process_holds_is_named_with_its_fix(world_factory, firmware):
    import lgpio  # in the VM only: plain pytest on the host collects this file without it

    world_factory(cards=10)
    handle = lgpio.gpiochip_open(0)
    try:
        lgpio.gpio_claim_input(handle, PINS.lid_open)
        fw = firmware()
        rc = fw.proc.wait(180)
        fw.wait_for(lambda: "pins.lid_open" in fw.log() or None, 10, "exit")
    finally:
        lgpio.gpiochip_close(handle)
    text = fw.log()
    record("busy", rc=rc, message=[line for line in text.splitlines() if "pins." in line][:1])
    assert rc != 0
    assert f"pins.lid_open = {PINS.lid_open}" in text and "GPIO busy" in text, text
    assert "sudo systemctl stop launcher" in text, text
