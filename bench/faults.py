"""The layer campaign: one fault in the firmware at a time, against the real firmware on the
simulated launcher, and what each safety layer then did.

``python -m bench.faults [--tier fast|full] [--out docs/results/layer_faults.json]``;
``--campaign circuit`` runs the circuit campaign instead (bench/circuit.py).

The faults: a pin write or a pin read that raises (every pin the firmware writes or reads,
on every thread that touches it: the reactor, the pin library's callback thread, the guard
thread), at every moment of a scenario that goes through a shot's start, the run and its
renewals, the lid opened mid-shot, a flip with its brake at home, a debug run and the
self-test's motor pulse; and each thread's death (the reactor hung, the guard thread ended,
the pin library's callback thread ended). The scenario is run once to record every call the
firmware makes to its pins, by pin, operation, thread and moment; then once for each
fault, which raises at one of those calls (``fast``: the first call of each pin, operation,
thread and moment, on one wiring; ``full``: every call, on three wirings).

Each run is judged from the simulated board's pins, the firmware's own outputs (the
copper under them, the power contacts in the leads, is the circuit campaign's), not from
what the firmware says:

- the roller is never driven (nSLEEP high, IN1's duty up, IN2 low) with the lid not closed
  for longer than one lease (``motor.lease_ms``) after the lid opens;
- the rotator never turns with the lid not fully open for longer than one lease either (a
  turn stopped by the lid's edge stops at once; one whose edge was lost, at the next
  renewal);
- an injected exception ends in an ``internal`` fault (the self-test: in the walk-through
  stopping, the actuators safe), and ``clear`` then leads to a press that shoots;
- a dead thread ends in an ``internal`` fault that names it, with the systemd watchdog no
  longer fed (a hung reactor feeds nothing by itself), and nothing driven after.

Times are the manual reactor's: the guard thread runs as a timer of the simulator that the
reactor's own hang does not stop, woken when a drive begins, as the real one is.
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.keep import RESULTS as KEPT
from bench.keep import keep
from hal.audio import RecordingSpeaker
from launcher.core import config
from launcher.core import machine as m
from launcher.core.profiles import parse_profile
from launcher.firmware.actuators import GUARD_BEAT, Actuators, Amp
from launcher.firmware.sound import CuePlayer, load_pack
from launcher.sim.rig import SimRig

RESULTS = KEPT / "layer_faults.json"
COMMAND = "python -m bench.faults --tier full --out docs/results/layer_faults.json"

# Every pin the firmware writes or reads through its adapters, by board part: the ``Pins``
# name, and what the firmware does with it.
OUTPUTS = {"motor_enable": "motor_sleep", "amp": "amp_enable", "led": "led",
           "deadman": "deadman"}
INPUTS = {"button": "button", "lid_closed": "lid_closed", "lid_closed_nc": "lid_closed_nc",
          "lid_open": "lid_open", "exit_beam": "exit_beam", "home": "home",
          "yellow_back": "yellow_back", "power_contact": "power_contact_sense",
          "sleep_sense": "sleep_sense", "rotator_contact": "rotator_contact_sense"}
DEATHS = ("the reactor hangs", "the guard thread ends", "the pin callback thread ends")
WIRINGS: dict[str, dict[str, Any]] = {
    "every pin wired: brake at home, the dead-man": {"rotator_in2": 9, "deadman": 10},
    "one-input rotator, one lid contact": {"lid_closed_nc": None},
    "rotator on its own MOSFET, no roller brake": {"driver": "own", "brake": False},
}


class Injected(OSError):
    """The failure a run plants in one pin call (an OSError, as a pin library raises)."""


@dataclass(frozen=True)
class Site:
    """Where a fault is planted: the ``n``-th call of (pin, op, thread) in the scenario."""

    pin: str
    op: str  # "write" or "read"
    thread: str  # "reactor", "pin callback" or "guard"
    moment: str
    n: int

    def __str__(self) -> str:
        return f"{self.pin} {self.op} on the {self.thread} thread, {self.moment} (#{self.n})"


class Taps:
    """Every pin call of the firmware on one board: recorded, and one of them made to raise.

    Thread: "pin callback" inside an input's delivery to its subscribers, "guard" inside the
    guard's check, else "reactor" (on the manual reactor every one runs on this thread).
    """

    def __init__(self, rig: SimRig, target: Site | None = None,
                 sample: Callable[[], None] = lambda: None,
                 after: Callable[[str], None] = lambda thread: None) -> None:
        self.rig = rig
        self.after = after  # called as a pin callback or a guard check returns
        self.killed: list[str] = []  # "pin callback": an exception reached the pin library
        self.thread = "reactor"
        self.moment = "start"
        self.calls: list[tuple[str, str, str, str]] = []
        self.counts: Counter[tuple[str, str, str]] = Counter()
        self.target = target
        self.fired: float | None = None  # reactor time of the injected raise
        self.sample = sample
        board = rig.app.board
        for part, pin in OUTPUTS.items():
            device = getattr(board, part)
            if device is not None:
                device._write = self._tap(pin, "write", device._write)
                device._read = self._tap(pin, "read", device._read)
        motor = board.motor
        motor._in1_write = self._tap("motor_in1", "write", motor._in1_write)
        motor._in2_write = self._tap("motor_in2", "write", motor._in2_write)
        rotator = board.rotator
        for pin, device in (("rotator", rotator._in1), ("rotator_in2", rotator._in2)):
            if device is not None:  # gpiozero devices write through their pin's _set_state
                device.pin._set_state = self._tap(pin, "write", device.pin._set_state)
        for part, name in INPUTS.items():
            device = getattr(board, part)
            if device is not None:
                device._read = self._tap(name, "read", device._read)
                device._deliver = self._on_thread("pin callback",
                                                  self._fatal(device._deliver))

    def _tap(self, pin: str, op: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def tapped(*args: Any) -> Any:
            key = (pin, op, self.thread)
            n = self.counts[key]
            self.counts[key] = n + 1
            self.calls.append((pin, op, self.thread, self.moment))
            t = self.target
            if (t is not None and self.fired is None and (t.pin, t.op, t.thread) == key
                    and t.n == n):
                self.fired = self.rig.now
                raise Injected(f"injected: {t}")
            out = call(*args)
            if op == "write":
                self.sample()
            return out

        return tapped

    def _fatal(self, deliver: Callable[[bool], None]) -> Callable[[bool], None]:
        """An exception out of a delivery reaches the pin library, whose thread it ends
        (lgpio's and pigpio's do): every later edge of the board is lost."""
        def delivered(active: bool) -> None:
            try:
                deliver(active)
            except Exception:
                self.killed.append("pin callback")
                self.on_pin_thread_death()

        return delivered

    on_pin_thread_death: Callable[[], None] = staticmethod(lambda: None)  # type: ignore[assignment]

    def _on_thread(self, thread: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def on_thread(*args: Any) -> Any:
            before, self.thread = self.thread, thread
            try:
                return call(*args)
            finally:
                self.thread = before
                self.after(thread)

        return on_thread


class Monitor:
    """The hazards, from the simulated board's pins: each stretch of the roller driven with
    the lid not closed, and of the rotator turning with the lid not fully open."""

    def __init__(self, rig: SimRig, shared: bool) -> None:
        self.rig = rig
        self.shared = shared
        self.roller_since: float | None = None
        self.turn_since: float | None = None
        self.roller_worst = 0.0
        self.turn_worst = 0.0
        # Each layer on its own: left driven with the lid against it as a pin callback or a
        # guard check returned (before the reactor could run anything), by thread.
        self.alone: Counter[str] = Counter()
        self.died: float | None = None  # when a thread died with the roller driven
        self.death_to_stop = 0.0  # ... to the roller no longer driven, whatever the lid

    def roller(self) -> bool:
        s = self.rig.sim
        return s.level("motor_sleep") == 1 and s.level("motor_in1") > 0 and \
            s.level("motor_in2") == 0

    def turning(self) -> bool:
        s = self.rig.sim
        if self.shared and s.level("motor_sleep") != 1:
            return False
        in1 = s.level("rotator")
        in2 = s.level("rotator_in2") if self.rig.settings.pins.rotator_in2 is not None else 0.0
        return (in1 > 0 and in2 < 1) or (in1 == 0 and in2 > 0)

    def after(self, thread: str) -> None:
        """A pin callback or a guard check has returned: what it left, on its own."""
        lid = self.rig.sim.lid
        if (self.roller() and lid != "closed") or (self.turning() and lid != "full"):
            self.alone[thread] += 1
        self.sample()

    def sample(self) -> None:
        now, lid = self.rig.now, self.rig.sim.lid
        if self.died is not None and not self.roller():
            self.death_to_stop = max(self.death_to_stop, now - self.died)
            self.died = None
        bad = self.roller() and lid != "closed"
        if bad and self.roller_since is None:
            self.roller_since = now
        elif not bad and self.roller_since is not None:
            self.roller_worst = max(self.roller_worst, now - self.roller_since)
            self.roller_since = None
        bad = self.turning() and lid != "full"
        if bad and self.turn_since is None:
            self.turn_since = now
        elif not bad and self.turn_since is not None:
            self.turn_worst = max(self.turn_worst, now - self.turn_since)
            self.turn_since = None

    def close(self) -> None:
        self.sample()
        now = self.rig.now
        if self.died is not None:  # still driven at the end, since the thread died
            self.death_to_stop = max(self.death_to_stop, now - self.died)
        if self.roller_since is not None:  # still driven with the lid open at the end
            self.roller_worst = max(self.roller_worst, now - self.roller_since)
        if self.turn_since is not None:
            self.turn_worst = max(self.turn_worst, now - self.turn_since)


class Unit:
    """One simulated unit with its taps, its monitor and a guard that runs on the
    simulator's clock (the reactor's own timers can hang without it)."""

    def __init__(self, wiring: str, target: Site | None = None) -> None:
        s = config.load()
        w = dict(WIRINGS[wiring])
        rotator = replace(s.rotator, driver=w.pop("driver", "shared"))
        motor = replace(s.motor, brake=w.pop("brake", True))
        self.settings = replace(s, pins=replace(s.pins, **w), rotator=rotator, motor=motor)
        self.rig = rig = SimRig(self.settings, seed=1)
        # The real cue player, so that the amplifier's pin is the firmware's to switch too.
        speaker = RecordingSpeaker(clock=rig.reactor.monotonic)
        pack = load_pack(self.settings.audio.pack)
        speaker.load(pack.files)
        rig.app.cues = CuePlayer(speaker, Amp(rig.app.board), rig.reactor, pack.durations)
        rig.sim.load(range(80))
        rig.app.load(80)
        rig.app.use_profile(parse_profile("deal 3"))
        self.act: Actuators = rig.app.actuators
        self.monitor = Monitor(rig, rotator.driver == "shared")
        self.taps = Taps(rig, target, self.monitor.sample, self.monitor.after)
        self.taps.on_pin_thread_death = lambda: self.die("the pin callback thread ends")
        self.hung = False
        self.guard_dead = False
        self.pins_dead = False
        self.withheld = 0  # watchdog pings a real watchdog would not have sent
        self.killed: list[str] = []  # threads an exception ended (a layer lost to a fault)
        self._guard_timer = rig.reactor.register_timer(self._guard, 0.0, "sim.guard")
        self._watchdog_timer = rig.reactor.register_timer(self._watchdog, 5.0, "sim.watchdog")
        self.act._guard_wake = _Waker(self._wake_guard)  # type: ignore[assignment]
        for verb in ("open_lid", "close_lid", "press"):
            setattr(rig.sim, verb, self._sampled(getattr(rig.sim, verb)))
        self._firmware_timers: list[Any] = []

    def _sampled(self, verb: Callable[..., None]) -> Callable[..., None]:
        def sampled(*args: Any, **kwargs: Any) -> None:
            verb(*args, **kwargs)
            self.monitor.sample()

        return sampled

    def _wake_guard(self) -> None:
        if not self.guard_dead:
            self.rig.reactor.update_timer(self._guard_timer, self.rig.now)

    def _guard(self, eventtime: float) -> float:
        if self.guard_dead:
            return float("inf")
        taps = self.taps
        before, taps.thread = taps.thread, "guard"
        try:
            nxt = self.act.expire(eventtime)
        except Exception:  # a real guard thread would end here: so does this one
            self.killed.append("guard")
            self.die("the guard thread ends")
            return float("inf")
        finally:
            taps.thread = before
            self.monitor.after("guard")
        return min(nxt, eventtime + GUARD_BEAT)

    def _watchdog(self, eventtime: float) -> float:
        """systemd's watchdog, fed every 5 s by the reactor if no layer is down."""
        if self.hung or self.rig.app.layers_down():
            self.withheld += 1
        return eventtime + 5.0

    # -- thread deaths --

    def die(self, death: str) -> None:
        if self.monitor.roller():
            self.monitor.died = self.rig.now
        if death == "the reactor hangs":
            self.hang()
        elif death == "the guard thread ends":
            self.guard_dead = True
            self.act._guard = _ended_thread("actuators-guard")
        else:
            self.pins_dead = True
            thread = _ended_thread("lgpio-notify")
            self.rig.app.board.pin_threads = lambda: [thread]
            for name in INPUTS:
                device = getattr(self.rig.app.board, name)
                if device is not None:
                    device._deliver = lambda active: None

    def hang(self) -> None:
        """The reactor thread stops: none of the firmware's timers or posted callbacks run
        again (the simulator's world and the guard go on)."""
        self.hung = True
        reactor = self.rig.reactor
        for timer in list(reactor._timers._live):
            if not timer.name.startswith("sim."):
                timer.callback = _stuck
        reactor.run_posted = lambda: None  # type: ignore[method-assign]

    # -- time --

    def moment(self, name: str) -> None:
        self.taps.moment = name

    def advance(self, seconds: float) -> None:
        self.rig.advance(seconds)


class _Waker:
    """Stands in for the guard's ``threading.Event``: ``set`` runs the guard now."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self._wake = wake

    def set(self) -> None:
        self._wake()

    def clear(self) -> None:
        pass


def _stuck(eventtime: float) -> float:
    return eventtime + 1.0  # a hung reactor: the timer never does its work


def _ended_thread(name: str) -> threading.Thread:
    t = threading.Thread(target=lambda: None, name=name)
    t.start()
    t.join()
    return t


# --- the scenario --------------------------------------------------------------------------

MOMENTS = ("shot start", "mid-shot", "lid edge", "lid open", "a turn", "the brake",
           "a debug run", "a clear", "shot end")


def scenario(u: Unit, death: tuple[str, str] | None = None) -> None:
    """A shot, the lid opened mid-shot, a flip (braked at home where it can be), a debug
    run opened mid-run, a ``clear`` (which reads every input), and a last whole shot.
    ``death``: (a thread's death, the moment)."""
    sim = u.rig.sim

    def at(moment: str) -> None:
        u.moment(moment)
        if death is not None and death[1] == moment:
            u.die(death[0])

    # The lid moves at times that fall between the firmware's ticks (every 10 or 25 ms).
    at("shot start")
    sim.press()
    u.advance(0.0)
    at("mid-shot")
    u.advance(0.2037)
    at("lid edge")
    sim.open_lid(full=False)
    u.advance(0.0)
    at("lid open")
    u.advance(0.5)
    sim.close_lid()
    u.advance(0.5013)
    at("a turn")
    sim.open_lid(full=True)
    u.advance(0.0471)
    at("the brake")
    for _ in range(200):
        if u.rig.state not in m.TURNING:
            break
        u.advance(0.01)
    u.advance(0.3)
    sim.close_lid()
    u.advance(0.5)
    at("a debug run")
    u.rig.reactor.post(lambda: u.rig.app.debug_run(400))  # as the console runs it
    u.advance(0.1129)
    sim.open_lid(full=False)
    u.advance(0.2)
    sim.close_lid()
    u.advance(0.5)
    at("a clear")
    u.rig.reactor.post(u.rig.app.clear_fault)  # no fault to leave: every input is read
    u.advance(0.1)
    at("shot end")
    sim.press()
    for _ in range(300):
        u.advance(0.01)
    u.advance(1.0)


def selftest_pulse(target: Site | None, death: str | None) -> dict[str, Any]:
    """The self-test's motor pulse on its own actuators, the lid lifted mid-pulse."""
    from launcher.firmware.selftest import SelfTest
    from launcher.sim.selftest import ScriptedOperator, simulated_unit

    s = config.load()
    sim, player, runner = simulated_unit(s)
    rig = _PulseRig(sim, runner.reactor, s)
    test = SelfTest(sim.board, s, runner, ScriptedOperator(sim, player), player)
    rig.app = _Shell(sim.board, test.act)
    monitor = Monitor(rig, True)  # type: ignore[arg-type]
    taps = Taps(rig, target, monitor.sample)  # type: ignore[arg-type]
    taps.moment = "the self-test pulse"
    guard = [True]

    def guard_timer(eventtime: float) -> float:
        if not guard[0]:
            return float("inf")
        before, taps.thread = taps.thread, "guard"
        try:
            return min(test.act.expire(eventtime), eventtime + GUARD_BEAT)
        finally:
            taps.thread = before

    timer = runner.reactor.register_timer(guard_timer, 0.0, "sim.guard")
    test.act._guard_wake = _Waker(  # type: ignore[assignment]
        lambda: runner.reactor.update_timer(timer, runner.reactor.monotonic()))
    runner.reactor.register_timer(
        lambda t: (sim.open_lid(full=False), monitor.sample(), float("inf"))[2], 0.1,
        "sim.lid")
    error = None
    if death == "the guard thread ends":
        guard[0] = False
    try:
        test.pulse(0.3)
    except Exception as exc:  # the walk-through stops with it: the command reports it
        error = exc
    finally:
        failed = test.act.safe()  # as SelfTest.run ends, whatever happened
    runner.reactor.advance(1.0)
    monitor.close()
    safe = all(sim.level(n) == 0 for n in ("motor_in1", "motor_in2", "rotator"))
    taps.moment, taps.target = "teardown", None
    sim.board.close()
    # Told: the walk-through stopped with the error, or the actuators' report reaches the
    # person (SelfTest.faults, shown at the end, and the motor's FAIL).
    told = error is not None or bool(failed) or bool(test.faults)
    return {"fired": taps.fired is not None, "roller": monitor.roller_worst,
            "turn": monitor.turn_worst, "told": told, "safe": safe, "calls": taps.calls}


class _PulseRig:
    """The little of ``SimRig`` the taps and the monitor use, for the self-test's board."""

    def __init__(self, sim: Any, reactor: Any, settings: config.Settings) -> None:
        self.sim = sim
        self.reactor = reactor
        self.settings = settings
        self.app: Any = None

    @property
    def now(self) -> float:
        return self.reactor.monotonic()


@dataclass
class _Shell:
    board: Any
    actuators: Any


# --- one run, and the judgement -------------------------------------------------------------


def recovered(u: Unit) -> bool:
    """Close the lid, ``clear`` (and a full opening if a turn was left waiting), press."""
    rig = u.rig
    rig.sim.close_lid()
    rig.advance(0.2)
    for _ in range(3):
        if rig.state == m.FAULT:
            rig.app.clear_fault()
            rig.advance(0.3)
        if rig.app.machine.memory.turn_pending or rig.state == m.LID_OPEN:
            rig.sim.open_lid()
            rig.settle()
            rig.advance(0.1)
            rig.sim.close_lid()
            rig.advance(0.3)
        if rig.state == m.READY:
            break
    if rig.state != m.READY:
        return False
    before = rig.sim.ejected_total
    rig.sim.press()
    rig.settle()
    rig.advance(0.5)
    return rig.sim.ejected_total == before + 3


def run(wiring: str, target: Site | None = None,
        death: tuple[str, str] | None = None) -> dict[str, Any]:
    u = Unit(wiring, target)
    scenario(u, death)
    u.monitor.close()
    lease = u.settings.motor.lease
    faults = [f for f in u.rig.faults if f.get("code") == "internal"]
    out: dict[str, Any] = {"roller": u.monitor.roller_worst, "turn": u.monitor.turn_worst,
                           "death_to_stop": u.monitor.death_to_stop,
                           "alone": dict(u.monitor.alone),
                           "killed": u.killed + u.taps.killed,
                           "fired": target is None or u.taps.fired is not None,
                           "internal": bool(faults), "calls": u.taps.calls, "lease": lease,
                           "detail": faults[0].get("error", "") if faults else ""}
    if death is not None:
        u.rig.advance(10.0)  # two watchdog intervals
        out["withheld"] = u.withheld > 0
        s = u.rig.sim
        out["idle_after"] = s.level("motor_in1") == 0 and s.level("rotator") == 0
        if death[0] != "the reactor hangs":
            u.rig.sim.close_lid()
            u.rig.advance(0.3)
            ejected = u.rig.sim.ejected_total
            u.rig.sim.press()  # a press with a layer down: nothing may run
            u.rig.advance(1.0)
            out["idle_after"] = out["idle_after"] and u.rig.sim.ejected_total == ejected
            out["internal"] = any(f.get("code") == "internal" for f in u.rig.faults)
            if out["internal"]:
                detail = next(f for f in reversed(u.rig.faults) if f.get("code") == "internal")
                out["detail"] = detail.get("error", "")
    elif target is not None and out["fired"]:
        u.taps.moment = "recovery"
        out["recovered"] = recovered(u)
    u.taps.moment, u.taps.target = "teardown", None
    u.rig.close()
    return out


def held(r: dict[str, Any], death: str | None = None) -> bool:
    """The run's verdict: within the bounds, and reported as the campaign requires."""
    lease = r["lease"] + 1e-9
    if r["roller"] > lease or r["turn"] > lease or r.get("alone") or r.get("killed"):
        return False
    if death is not None:
        if death == "the reactor hangs":  # the lease: stopped within one, lid or not
            return r["withheld"] and r["idle_after"] and r["death_to_stop"] <= lease
        return r["internal"] and r["withheld"] and r["idle_after"]
    if not r["fired"]:
        return True  # the run never made that call: nothing was injected (counted apart)
    return r["internal"] and r.get("recovered", False)


# --- the campaign ---------------------------------------------------------------------------


def sites(calls: list[tuple[str, str, str, str]], tier: str) -> list[Site]:
    """The calls to break: ``fast``, per (pin, op, thread, moment) the first of the calls
    the clean run made; ``full``, every one of them."""
    seen: dict[tuple[str, str, str], int] = Counter()
    by: dict[tuple[str, str, str, str], list[int]] = {}
    for pin, op, thread, moment in calls:
        if moment == "teardown":
            continue
        n = seen[(pin, op, thread)]
        seen[(pin, op, thread)] = n + 1
        by.setdefault((pin, op, thread, moment), []).append(n)
    out = []
    for (pin, op, thread, moment), ns in by.items():
        picks = ns[:1] if tier == "fast" else ns
        out += [Site(pin, op, thread, moment, n) for n in picks]
    return out


@dataclass
class Tally:
    """What a campaign found."""

    injected: int = 0
    fired: int = 0
    held: int = 0
    roller_worst: float = 0.0
    turn_worst: float = 0.0
    hang_worst: float = 0.0  # a hung reactor to the roller stopped by its lease
    failures: list[str] = field(default_factory=list)
    by_thread: Counter[str] = field(default_factory=Counter)
    pins: set[str] = field(default_factory=set)
    moments: set[str] = field(default_factory=set)

    def add(self, what: str, r: dict[str, Any], ok: bool, thread: str) -> None:
        self.injected += 1
        self.fired += bool(r["fired"])
        self.held += ok
        self.by_thread[thread] += 1
        self.roller_worst = max(self.roller_worst, r["roller"])
        self.turn_worst = max(self.turn_worst, r["turn"])
        if "hang" in what:
            self.hang_worst = max(self.hang_worst, r.get("death_to_stop", 0.0))
        if not ok:
            self.failures.append(f"{what}: roller {r['roller'] * 1e3:.1f} ms, turn "
                                 f"{r['turn'] * 1e3:.1f} ms, left driven by a layer on its "
                                 f"own {r.get('alone')}, threads ended by it "
                                 f"{r.get('killed')}, internal {r['internal']}, "
                                 f"recovered {r.get('recovered')}, {r.get('detail', '')}")


def campaign(tier: str = "fast", wirings: list[str] | None = None,
             progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    wirings = wirings or (list(WIRINGS) if tier == "full" else [next(iter(WIRINGS))])
    tally = Tally()
    started, cpu0 = time.monotonic(), time.process_time()
    for wiring in wirings:
        clean = run(wiring)
        if clean["roller"] or clean["turn"] or clean["internal"]:
            raise RuntimeError(f"the scenario without a fault failed ({wiring}): roller "
                               f"{clean['roller']}, turn {clean['turn']}: {clean['detail']}")
        todo = sites(clean["calls"], tier)
        progress(f"{wiring}: {len(todo)} pin faults, {len(DEATHS) * len(MOMENTS)} deaths")
        for i, site in enumerate(todo):
            r = run(wiring, site)
            ok = held(r)
            tally.add(f"{wiring}: {site}", r, ok, site.thread)
            tally.pins.add(site.pin)
            tally.moments.add(site.moment)
            if (i + 1) % 50 == 0:
                progress(f"  {i + 1} of {len(todo)}: {tally.held} held so far")
        for death in DEATHS:
            for moment in MOMENTS:
                r = run(wiring, death=(death, moment))
                tally.add(f"{wiring}: {death}, {moment}", r, held(r, death), "death")
    # The self-test's pulse, on its own actuators.
    clean = selftest_pulse(None, None)
    for site in sites(clean["calls"], tier):
        r = selftest_pulse(site, None)
        r["lease"] = config.load().motor.lease
        ok = (r["roller"] <= r["lease"] + 1e-9 and r["turn"] <= r["lease"] + 1e-9
              and r["safe"] and (not r["fired"] or r["told"]))
        r["internal"] = r["told"]
        tally.add(f"self-test pulse: {site}", r, ok, site.thread)
        tally.pins.add(site.pin)
    r = selftest_pulse(None, "the guard thread ends")
    r["lease"], r["internal"] = config.load().motor.lease, True
    tally.add("self-test pulse: the guard thread ends", r,
              r["roller"] <= r["lease"] + 1e-9 and r["safe"], "death")
    tally.moments.add("the self-test pulse")
    return {
        "command": COMMAND if tier == "full" else "python -m bench.faults --tier fast",
        "tier": tier, "wirings": wirings, "lease_ms": config.load().motor.lease * 1e3,
        "injected": tally.injected, "fired": tally.fired, "held": tally.held,
        "by_thread": dict(sorted(tally.by_thread.items())), "pins": sorted(tally.pins),
        "moments": [mo for mo in (*MOMENTS, "the self-test pulse") if mo in tally.moments],
        "deaths": list(DEATHS),
        "roller_worst_ms": round(tally.roller_worst * 1e3, 3),
        "turn_worst_ms": round(tally.turn_worst * 1e3, 3),
        "hang_worst_ms": round(tally.hang_worst * 1e3, 3),
        "failures": tally.failures,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "wall_s": round(time.monotonic() - started, 1),
        "cpu_s": round(time.process_time() - cpu0, 1),
        "cores": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 2),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def markdown(r: dict[str, Any]) -> str:
    """SAFETY.md's rows for a campaign's results (docs/blocks.py ``--print layer-faults``)."""
    threads = ", ".join(f"{n:,} on the {t} thread" if t != "death" else f"{n} thread deaths"
                        for t, n in r["by_thread"].items())
    verdict = ("every one held" if r["held"] == r["injected"]
               else f"{r['injected'] - r['held']:,} did NOT hold")
    lease = f"bound: one lease, `motor.lease_ms` = {r['lease_ms']:.0f}"
    return (
        "| name | what | figure |\n|---|---|---|\n"
        f"| `layer_campaign` | `{r['command']}` (finished {r['date']}; {len(r['wirings'])} "
        f"wiring{'s' if len(r['wirings']) > 1 else ''}, {len(r['pins'])} pins, "
        f"{len(r['moments'])} moments; {r['wall_s']:,} s, {r['cpu_s']:,} s CPU, "
        f"{r['cores']} cores, load average {r['load_1min']} at the end) | "
        f"{r['injected']:,} faults ({threads}; {r['fired']:,} fired: a run that diverged "
        f"before its call made none): {r['held']:,} held, {verdict} |\n"
        f"| `layer_roller_max` | the roller driven with the lid not closed: the longest "
        f"stretch over every fault ({lease}) | {r['roller_worst_ms']:.1f} ms |\n"
        f"| `layer_turn_max` | the rotator turning with the lid not fully open: the longest "
        f"stretch ({lease}) | {r['turn_worst_ms']:.1f} ms |\n"
        f"| `layer_hang_max` | the reactor hung with the roller driven, to the roller stopped "
        f"by its lease ({lease}) | {r['hang_worst_ms']:.1f} ms |\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                epilog="Writes nothing without --out; exits 1 if any fault "
                                       "did not hold.")
    p.add_argument("--campaign", choices=("layers", "circuit", "storage"), default="layers",
                   help="layers: faults of the firmware's pins and threads (this module); "
                        "circuit: every single fault of the circuit's nets, parts and "
                        "supplies (bench/circuit.py); storage: the state file, the config "
                        "and the code corrupted so that they still read "
                        "(bench/storage_faults.py)")
    p.add_argument("--tier", choices=("fast", "full"), default="fast",
                   help="layers, fast: one wiring, the first call of each pin, operation, "
                        "thread and moment (seconds); full: three wirings, every call "
                        "(minutes). circuit, fast: each net's and part's first fault of each "
                        "kind; full: every one, on two wirings (about a minute)")
    p.add_argument("--mutants", action="store_true",
                   help="switch off each firmware safeguard in turn and run the circuit "
                        "campaign on it: each must make it fail (bench/mutants.py)")
    p.add_argument("--out", type=Path, help="keep the results here (docs/results/...json)")
    args = p.parse_args(argv)
    # Each run logs its fault with a traceback, as the firmware must: not here.
    logging.disable(logging.CRITICAL)
    progress = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    if args.mutants:
        from bench import mutants

        r = mutants.mutants(args.tier, progress=progress)
        print(mutants.table(r), end="")
    elif args.campaign == "storage":
        from bench import storage_faults

        r = storage_faults.campaign(args.tier, progress=progress)
        print(storage_faults.markdown(r), end="")
    elif args.campaign == "circuit":
        from bench import circuit

        r = circuit.campaign(args.tier, progress=progress)
        print(circuit.summary(r), end="")
    else:
        r = campaign(args.tier, progress=progress)
        print(markdown(r), end="")
    for line in r["failures"]:
        print("did not hold:", line)
    if args.out is not None:
        keep(args.out, r)
    return 1 if r["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
