"""One run of the layer campaign (bench/faults.py): the real firmware on the simulated
launcher, a scenario through every moment the campaign breaks, one fault injected at one of
its pin calls (or one thread's death), and the judgement of what the safety layers did.

``Taps`` records and breaks the firmware's calls to its pins; ``Monitor`` watches the
simulated board's pins (the firmware's own outputs); ``Unit`` is one simulated unit with
both; ``scenario`` walks a shot's start, the run and its renewals, the lid opened mid-shot,
a flip with its brake at home, a debug run; ``selftest_pulse`` the self-test's motor pulse
on its own actuators; ``run`` is one run, and ``held`` its verdict (the bounds are in
bench/faults.py's docstring).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from hal import internals
from hal.audio import RecordingSpeaker
from launcher.core import config
from launcher.core import machine as m
from launcher.core.profiles import parse_profile
from launcher.firmware.actuators import GUARD_BEAT, Actuators, Amp
from launcher.firmware.sound import CuePlayer, load_pack
from launcher.sim.rig import SimRig

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
            if device is not None:  # gpiozero devices: their pin's own write hook
                internals.wrap_pin_write(device.pin, lambda write, pin=pin: self._tap(
                    pin, "write", write))
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
    test = SelfTest(sim.board, m.MachineSettings.of(s), runner, ScriptedOperator(sim, player),
                    player)
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
        if rig.app.machine.turn_owed or rig.state == m.LID_OPEN:
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
