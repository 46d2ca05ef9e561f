"""A simulated launcher: the real gpiozero adapters on MockFactory pins, plus physics.

The physics model watches the output pins (motor, driver enable, rotator) and drives
the input pins (button, lid switches, exit beam, cartridge sensors, read-backs) on reactor
time, through the electrical model of the unit's circuit (``hal.electrical`` on
``hal.circuit``): the motors move by the voltage at their terminals, not by the pins' levels,
and ``inject(fault)`` opens or shorts any net or fails any part. The cartridge can run on
after its motor stops, and its Hall switches can report late (``Physics``, ``HALL_LAG``).
Test verbs in the manner of gpiozero's mock pins: ``press()``, ``open_lid()``,
``close_lid()``, ``load(cards)``, ``jam()``, ``stall_rotator()``, ``stall_roller()``,
``hold_in_slot()``, ``stick(sensor, level)``, ``inject(fault)``, ``set_supply()``,
``set_pi()``; histories: ``motor_history``, ``ejected`` (with ``ejected_total``), ``tray``
(with ``in_tray``).

Every history is bounded, so that a simulated day costs no more memory than a simulated
minute: the simulator keeps the newest ``keep`` motor samples and ejected cards (counting
all of them in ``ejected_total``), and each mock pin keeps its newest ``PIN_HISTORY``
state changes (gpiozero's ``MockPin`` keeps every one in a list). The tray keeps every card
until ``take()`` picks them up, or with ``tray_keep`` the newest (for a service, whose tray
nobody empties; ``in_tray`` counts them all).

The physics reaches its pins through a small ``PinPort``: ``MockPins`` (gpiozero's
MockFactory, the board built on it in this process; the default) or, in the kernel tier,
``GpioSimPins`` (tests/kernel/gpiosim.py: the kernel's gpio-sim chip, polled through sysfs, with the
firmware in another process). There is one physics model; only the pin backend differs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar, overload

from hal import internals
from hal.base import NEVER, Board, Pins, Scheduler
from hal.circuit import CMOS_VIH, ONESHOT_WIDTH, PAD_CHECKED, Build, circuit
from hal.circuit_faults import Fault
from hal.electrical import Model, Solution, World
from hal.entry_points import deferred_entry_points
from hal.gpio import build_board

with deferred_entry_points():  # gpiozero without importlib.metadata (hal/entry_points.py)
    from gpiozero.pins.mock import MockFactory, MockPWMPin, PinState

# How much history the simulator keeps. The newest entries are what tests look at
# (``motor_history[-1]``, a pin's last few states); older ones only cost memory.
HISTORY = 10_000  # motor samples and ejected cards, by default (``SimLauncher(keep=...)``)
PIN_HISTORY = 1_000  # state changes per mock pin (or ``keep`` or ``pin_keep``, when fewer)

_T = TypeVar("_T")


class History(deque[_T]):
    """The newest entries of a record (a deque with a ``maxlen``) that slices like a list."""

    @overload
    def __getitem__(self, index: int) -> _T: ...
    @overload
    def __getitem__(self, index: slice) -> list[_T]: ...
    def __getitem__(self, index: int | slice) -> _T | list[_T]:
        if isinstance(index, slice):
            return list(self)[index]
        return super().__getitem__(index)


@internals.listen_to_outputs
class SimPin(MockPWMPin):
    """A mock PWM pin that tells the physics model when an output changes.

    Its ``states`` (gpiozero's record of every change) keeps only the newest
    ``PIN_HISTORY`` entries; indexing, iteration and ``len`` work as on the list.
    """

    listener: Callable[[SimPin], None] | None = None
    # The level the pin reads at its pad as the circuit holds it (``Solution.pads``): an
    # output shorted to a rail reads the rail, whatever it is driven to. None: as driven.
    pad: int | None = None

    def clear_states(self) -> None:
        # MockPin.__init__ calls this; each change of the pin appends to ``self.states``.
        super().clear_states()
        self.states: History[PinState] = History(self.states, maxlen=PIN_HISTORY)

    def output_changed(self) -> None:
        """The pin, an output, changed (``internals.listen_to_outputs``)."""
        if self.listener is not None:
            self.listener(self)


class PinPort(Protocol):
    """How the physics reaches the launcher's pins, by BCM number."""

    def drive(self, number: int, low: bool) -> None:
        """Set an input's level as the outside world would: pulled low, or let go high."""
        ...

    def level(self, number: int) -> float:
        """An output's level: 0 or 1, or the duty (0..1) of a line running PWM."""
        ...

    def watch(self, numbers: Iterable[int], listener: Callable[[], None]) -> None:
        """Call ``listener`` (on the physics' reactor) after any of these outputs changes."""
        ...


class MockPins:
    """The pin port over gpiozero's MockFactory (``SimPin`` pins); changes arrive at once."""

    def __init__(self) -> None:
        self.factory = MockFactory(pin_class=SimPin)
        self._pin_cache: dict[int, SimPin] = {}

    def pin(self, number: int) -> SimPin:
        # Cached: MockFactory.pin searches every reservation on each call, and the physics
        # reads four pins on every motor write (it was 70% of a simulated press).
        pin = self._pin_cache.get(number)
        if pin is None:
            found = self.factory.pin(number)
            assert isinstance(found, SimPin)
            pin = self._pin_cache[number] = found
        return pin

    def drive(self, number: int, low: bool) -> None:
        pin = self.pin(number)
        if low:
            pin.drive_low()
        else:
            pin.drive_high()

    def level(self, number: int) -> float:
        return float(self.pin(number).state)

    def keep(self, n: int) -> None:
        """Keep only the newest ``n`` state changes of every pin made so far."""
        for pin in self.factory.pins.values():
            if isinstance(pin, SimPin):
                pin.states = History(pin.states, maxlen=n)

    def watch(self, numbers: Iterable[int], listener: Callable[[], None]) -> None:
        def changed(pin: SimPin) -> None:
            listener()

        for number in numbers:
            self.pin(number).listener = changed


@dataclass(frozen=True)
class Physics:
    """How the simulated mechanics behave (seconds, degrees).

    The defaults are an ideal cartridge: it stops dead when its motor is let go, and its
    sensors see every change at once. ``HALL_LAG`` is a cartridge as fitted with micropower
    Hall switches (hardware/fitting.md): they report late, and it runs on.
    """

    eject_interval: float = 0.12  # roller: one card per this, at full speed
    beam_time: float = 0.03  # a card blocks the beam this long as it leaves
    rotation_time: float = 1.2  # the cartridge turns 180 degrees in this, at full drive
    press_time: float = 0.08  # a press holds the button down this long
    step_deg: float = 10.0  # the cartridge moves in steps this big
    home_zone_deg: float = 0.0  # the home switch feels a magnet this far either side of it
    hall_period: float = 0.0  # the Hall switches wake to sample this often (0: always awake)
    coast_deg: float = 0.0  # run-on from full speed after the gear motor is let go (coasting)
    brake_deg: float = 0.0  # run-on from full speed after it is braked (both inputs high)
    oneshot_width: float = ONESHOT_WIDTH  # the dead-man one-shot's pulse (Rext x Cext)


# Micropower Hall switches sampling every 50 ms, a magnet felt 4 degrees either side, and a
# gear motor that coasts 12 degrees (braked: 1.5 degrees). At full drive the cartridge moves
# 7.5 degrees in one sampling period, so home is reported up to that late: nearly the
# magnet's width, so even a braked cartridge can stop past it. (A magnet felt over less
# than 7.5 degrees could be passed between two samples and never seen at all.)
HALL_LAG = Physics(step_deg=0.5, home_zone_deg=4.0, hall_period=0.05, coast_deg=12.0,
                   brake_deg=1.5)


@dataclass(frozen=True)
class MotorSample:
    """The roller at one moment: the driver's input pins as the Pi drives them (``in1``,
    ``in2``; ``enabled`` the motor_sleep pin) and ``drive``, what its terminals see
    (``hal.electrical.Drive.speed``: the share of the pack across it, + ahead)."""

    time: float
    in1: float
    in2: float
    enabled: bool
    drive: float = 0.0

    @property
    def running(self) -> bool:
        """The roller is driven ahead at its terminals (what turns it)."""
        return self.drive > 0

    @property
    def commanded(self) -> bool:
        """The Pi's pins ask for the roller ahead (what the firmware does, whatever the
        copper between them and the motor does with it)."""
        return self.enabled and self.in1 > 0 and self.in2 == 0


# The inputs the physics drives, in the order a change reaches them within one instant.
_INPUT_ORDER = ("button", "exit_beam", "lid_closed", "lid_closed_nc", "power_contact_sense",
                "lid_open", "rotator_contact_sense", "home", "yellow_back", "sleep_sense")


class SimLauncher:
    """The launcher's mechanics around a mock board; every change happens on reactor time.

    The mechanics (the lid, the button, cards in the beam, the cartridge's magnets) and the
    Pi's output pins go through the electrical model of the unit's circuit
    (``hal.electrical``, on ``hal.circuit``'s netlist): the inputs read what the model's
    nets say, and the roller and the rotator move by what their terminals see. So the lid's
    power contact breaks the roller's lead, a sleeping driver leaves its outputs open, a
    pull-down holds an undriven input low, and ``inject(fault)`` breaks any one net or part.
    """

    # Only with the default pin port (MockPins): the mock factory and the board built on it.
    factory: MockFactory
    board: Board

    def __init__(self, reactor: Scheduler, pins: Pins, physics: Physics | None = None,
                 side: str = "mild", keep: int = HISTORY, port: PinPort | None = None,
                 build: Build | None = None, pin_keep: int | None = None,
                 tray_keep: int | None = None) -> None:
        self.reactor = reactor
        self.pins = pins
        self.physics = physics or Physics()
        self.circuit = circuit(pins, build)
        self.model = Model(self.circuit)
        if port is None:
            mock = MockPins()
            self.factory = mock.factory
            self.board = build_board(pins, mock.factory, simulated=True, name="simulated")
            pin_keep = min(keep, PIN_HISTORY) if pin_keep is None else pin_keep
            if pin_keep < PIN_HISTORY:
                mock.keep(pin_keep)
            port = mock
        self.port: PinPort = port
        self._pads: Mapping[int, int] | None = None  # the pads last told to the mock pins
        self.cartridge: list[Any] = []  # front (index 0) leaves first
        self.ejected: History[Any] = History(maxlen=keep)  # the newest cards that left, in order
        self.ejected_total = 0  # every card that ever left the slot
        self.tray: History[Any] = History(maxlen=tray_keep)  # ejected, not taken yet
        self.in_tray = 0  # the cards lying there, kept or not
        self.motor_history: History[MotorSample] = History(maxlen=keep)
        self.jammed = False
        self.rotator_stalled = False
        self.roller_stalled = False
        self.angle = 0.0  # cartridge angle, degrees; 0 = yellow half at the back
        self._asked = 0.0  # the speed the gear motor's terminals ask for, signed (1 = full ahead)
        self._velocity = 0.0  # the speed the cartridge last moved at, signed; 0 at rest
        self._run_on: float | None = None  # degrees left to run on after the drive stopped
        self._stuck: dict[str, bool] = {}
        self._card_in_beam: Any = None
        self._hand_in_slot = False
        self._eject_timer = reactor.register_timer(self._eject, NEVER, "sim.eject")
        self._rotate_timer = reactor.register_timer(self._rotate_step, NEVER, "sim.rotate")
        self._release_timer = reactor.register_timer(self._release, NEVER, "sim.release")
        self._beam_timer = reactor.register_timer(self._beam_clears, NEVER, "sim.beam")
        self._hall_timer = reactor.register_timer(self._hall_sample, NEVER, "sim.hall")
        self._oneshot_timer = reactor.register_timer(self._oneshot_lapsed, NEVER, "sim.oneshot")
        if side == "wild":
            self.angle = 180.0
        self._world = World(**self._fields())
        self._b_high = False
        self._last_rise = -NEVER
        self._clr_node: tuple[Fault | None, str | None] | None = None  # (for which fault, node)
        self._applying = False
        self._driven: dict[int, bool] = {}  # what each input pin was last driven to (low)
        self._inputs = [(name, getattr(pins, name)) for name in _INPUT_ORDER
                        if getattr(pins, name) is not None]
        self.solution: Solution = self.model.solve({}, self._world)
        outputs = [n for n in self.model.output_pins]
        port.watch(outputs, self._output_changed)
        self._apply(every_input=True)

    # -- pins --

    def pin(self, number: int) -> SimPin:
        """The mock pin of a BCM number (only with the default pin port, MockPins)."""
        if not isinstance(self.port, MockPins):
            raise TypeError(f"{type(self.port).__name__} has no mock pins")
        return self.port.pin(number)

    def level(self, name: str) -> float:
        """The state of an output pin by its config name (``motor_in1``, ``rotator``...);
        0 for an optional pin that is not wired."""
        number = getattr(self.pins, name)
        return 0.0 if number is None else self.port.level(number)

    # -- the circuit --

    @property
    def world(self) -> World:
        """What the mechanics and the supplies are doing, as the electrical model takes it."""
        return self._world

    @property
    def fault(self) -> Fault | None:
        return self.model.fault

    def inject(self, fault: Fault | None) -> None:
        """Break one net or part of the circuit (``hal.electrical``); None repairs it."""
        self.model.inject(fault)
        self._apply()

    def repair(self) -> None:
        self.inject(None)

    def set_supply(self, vm: float | None = None, v3: float | None = None,
                   v5: float | None = None) -> None:
        """Change the motor pack's EMF or the Pi's rails (a tired pack, a collapsing rail)."""
        changes = {k: v for k, v in (("vm", vm), ("v3", v3), ("v5", v5)) if v is not None}
        self._set(**changes)

    def set_pi(self, state: str) -> None:
        """"running" (the firmware's pins claimed), "boot" (every GPIO an input with its
        power-on pull, before anything claims them) or "off"."""
        self._set(pi=state)

    def _set(self, **changes: Any) -> None:
        self._world = replace(self._world, **changes)
        self._apply()

    def _levels(self) -> dict[int, float]:
        port = self.port
        return {n: port.level(n) for n in self.model.output_pins}

    def _apply(self, every_input: bool = False) -> None:
        """Solve the circuit for the pins and the mechanics as they are now; move the motors
        by what their terminals see, and drive every input the model says changed."""
        if self._applying:  # an input edge made the firmware write a pin: loop once more
            self._again = True
            return
        self._applying = True
        try:
            self._again = True
            while self._again:
                self._again = False
                self._solve_once(every_input)
                every_input = False
        finally:
            self._applying = False

    def _solve_once(self, every_input: bool) -> None:
        now = self.reactor.monotonic()
        levels = self._levels()
        sol = self.model.solve(levels, self._world)
        if "U2" in self.circuit.parts:
            sol = self._oneshot(now, levels, sol)
        if sol.pads is not self._pads:  # interned by the model: a new map is a change
            self._pads = sol.pads
            if isinstance(self.port, MockPins):  # a pin the model leaves out: as driven
                for key in PAD_CHECKED:
                    number = getattr(self.pins, key)
                    if number is not None:
                        self.port.pin(number).pad = sol.pads.get(number)
        self.solution = sol
        self._roller_changed(now, levels, sol)
        self._rotator_changed(now)
        self._drive_inputs(sol, every_input)

    def _drive_inputs(self, sol: Solution, every: bool) -> None:
        reads, stuck, driven = sol.reads, self._stuck, self._driven
        for name, number in self._inputs:
            low = not reads.get(number, 1)
            if stuck:
                low = stuck.get(name, low)
            if every or driven.get(number) != low:
                driven[number] = low
                self.port.drive(number, low)

    def _oneshot(self, now: float, levels: Mapping[int, float], sol: Solution) -> Solution:
        """The dead-man one-shot's timing, which the model leaves to the sim: a rising edge at
        B starts a pulse of ``physics.oneshot_width``; Q is high while one lasts and CLR is
        high. A line toggling faster than a pin port reports (a duty) is edges throughout."""
        deadman = self.pins.deadman
        toggling = deadman is not None and 0 < levels.get(deadman, 0.0) < 1
        clr_node = self._clr_node
        if clr_node is None or clr_node[0] is not self.model.fault:
            clr_node = self._clr_node = (self.model.fault, self.model.node_of("U2.CLR"))
        clr = sol.volts.get(clr_node[1]) if clr_node[1] else None
        latched = self._world.latched and clr is not None and clr >= CMOS_VIH
        if (sol.b_high and not self._b_high) or toggling:
            self._last_rise = now
            latched = latched or (clr is not None and clr >= CMOS_VIH)
            self.reactor.update_timer(self._oneshot_timer, now + self.physics.oneshot_width)
        self._b_high = sol.b_high
        edges = now - self._last_rise < self.physics.oneshot_width - 1e-9
        if edges != self._world.edges or latched != self._world.latched:
            self._world = replace(self._world, edges=edges, latched=latched)
            sol = self.model.solve(levels, self._world)
        return sol

    def _oneshot_lapsed(self, eventtime: float) -> float:
        self._apply()
        return NEVER

    # -- test verbs --

    def press(self, hold: float | None = None) -> None:
        """Press the button and let it go after ``hold`` seconds of reactor time."""
        self._set(button=True)
        now = self.reactor.monotonic()
        self.reactor.update_timer(self._release_timer, now + (hold or self.physics.press_time))

    def hold_button(self) -> None:
        self._set(button=True)

    def release(self) -> None:
        self.reactor.update_timer(self._release_timer, NEVER)
        self._set(button=False)

    def _release(self, eventtime: float) -> float:
        self._set(button=False)
        return NEVER

    def bounce(self, edges: int = 5) -> None:
        """Contact bounce: toggle the button ``edges`` times at the same instant, ending pressed."""
        for i in range(edges):
            self._set(button=i % 2 == 0)
        self._set(button=True)

    def open_lid(self, full: bool = True) -> None:
        """Lift the lid off its switches; ``full`` lifts it until the fully-open switch closes.

        From shut, the lid passes through "lifting": the power contact has opened and the
        sensing SPDT breaks its NO contact before it makes its NC one.
        """
        if self._world.lid == "closed":
            self._set(lid="lifting")
        self._set(lid="full" if full else "ajar")

    def close_lid(self) -> None:
        if self._world.lid == "full":
            self._set(lid="ajar")
        if self._world.lid != "closed":
            self._set(lid="lifting")
        self._set(lid="closed")

    @property
    def lid(self) -> str:
        return self._world.lid

    def load(self, cards: Iterable[Any]) -> None:
        """Put cards into the cartridge, behind those already there."""
        self.cartridge.extend(cards)

    def unload(self) -> list[Any]:
        cards, self.cartridge = self.cartridge, []
        return cards

    def take(self) -> list[Any]:
        """Pick up the cards lying in front of the launcher."""
        cards = list(self.tray)
        self.tray.clear()
        self.in_tray = 0
        return cards

    def jam(self) -> None:
        """The next card sticks in the slot, blocking the beam until ``clear_jam()``."""
        self.jammed = True

    def clear_jam(self) -> None:
        """Free a stuck card, which leaves at once; a card still on its way is left alone.

        A card leaving normally has its beam timer armed and goes when it fires: clearing
        a jam that never caught it must not push it out a second time.
        """
        self.jammed = False
        if self._card_in_beam is not None and self._beam_timer.waketime == NEVER:
            self._card_leaves()

    def stall_rotator(self, stalled: bool = True) -> None:
        self.rotator_stalled = stalled

    def stall_roller(self, stalled: bool = True) -> None:
        """The motor is driven but the roller does not grip: no card moves."""
        self.roller_stalled = stalled

    def hold_in_slot(self, held: bool = True) -> None:
        """A hand (or a card) held in the exit slot blocks the beam (a stuck sensor still wins)."""
        self._hand_in_slot = held
        self._set(beam_blocked=self._beam_blocked())

    def _beam_blocked(self) -> bool:
        return self._hand_in_slot or self._card_in_beam is not None

    def stick(self, sensor: str, active: bool | None) -> None:
        """Hold an input at a level whatever happens (``None`` lets it go to its true level)."""
        if active is None:
            self._stuck.pop(sensor, None)
            # Let go: it reads the mechanics as they are now (an angle set by hand, say).
            self._world = replace(self._world, **self._fields())
        else:
            self._stuck[sensor] = active
        self._apply()

    # -- physics --

    @property
    def in_beam(self) -> Any:
        """The card blocking the exit beam right now (stuck in a jam, or leaving), or None."""
        return self._card_in_beam

    @property
    def motor_running(self) -> bool:
        """The roller is driven at its terminals."""
        return bool(self.motor_history) and self.motor_history[-1].running

    @property
    def motor_commanded(self) -> bool:
        """The Pi's pins ask for the roller to run (``MotorSample.commanded``)."""
        return bool(self.motor_history) and self.motor_history[-1].commanded

    @property
    def side(self) -> str:
        """The side facing the back, from the cartridge's real angle."""
        return "mild" if self._yellow_back() else "wild"

    def _output_changed(self) -> None:
        self._apply()

    def _roller_changed(self, now: float, levels: Mapping[int, float], sol: Solution) -> None:
        p = self.pins
        sample = MotorSample(now, levels.get(p.motor_in1, 0.0), levels.get(p.motor_in2, 0.0),
                             levels.get(p.motor_sleep, 0.0) > 0, sol.roller.speed)
        last = self.motor_history[-1] if self.motor_history else None
        if last is None or (last.in1, last.in2, last.enabled, last.drive) != (
                sample.in1, sample.in2, sample.enabled, sample.drive):
            self.motor_history.append(sample)
        if sample.running:
            if self._eject_timer.waketime == NEVER:
                self.reactor.update_timer(self._eject_timer, now + self._eject_period(sample))
        else:
            self.reactor.update_timer(self._eject_timer, NEVER)

    def _eject_period(self, sample: MotorSample) -> float:
        return self.physics.eject_interval / max(sample.drive, 0.05)

    def _eject(self, eventtime: float) -> float:
        if self._card_in_beam is not None or not self.cartridge or self.roller_stalled:
            # Nothing moves: the slot is blocked, the roller slips, or the cartridge is empty.
            return eventtime + self._eject_period(self.motor_history[-1])
        card = self.cartridge.pop(0)
        self._card_in_beam = card
        self._set(beam_blocked=True)
        if not self.jammed:
            self.reactor.update_timer(self._beam_timer, eventtime + self.physics.beam_time)
        return eventtime + self._eject_period(self.motor_history[-1])

    def _beam_clears(self, eventtime: float) -> float:
        if not self.jammed and self._card_in_beam is not None:
            self._card_leaves()
        return NEVER

    def _card_leaves(self) -> None:
        card, self._card_in_beam = self._card_in_beam, None
        self.reactor.update_timer(self._beam_timer, NEVER)
        self.ejected.append(card)
        self.ejected_total += 1
        self.tray.append(card)
        self.in_tray += 1
        self._set(beam_blocked=self._beam_blocked())

    # -- the cartridge: it turns in steps; the sensors follow the angle --

    def _rotator_drive(self) -> float | None:
        """What the gear motor's terminals see: a signed speed, or None for a brake."""
        drive = self.solution.rotator
        if drive.speed:
            return drive.speed
        return None if drive.brake > 0 else 0.0

    def _rotator_changed(self, now: float) -> None:
        drive = self._rotator_drive()
        if drive and not self.rotator_stalled:
            self._asked, self._run_on = drive, None
        else:
            self._asked = 0.0
            if self._velocity and self._run_on is None:
                # Let go (or braked) while moving: it runs on, then stops. The run-on is
                # given from full speed and, like any stopping distance, goes with the square
                # of the speed. The speed is the one it moved at: a drive between two pin
                # writes (microseconds) moved nothing and changed nothing.
                p = self.physics
                full = p.brake_deg if drive is None else p.coast_deg
                self._run_on = full * self._velocity ** 2
            elif self._run_on is not None and drive is None:
                self._run_on = min(self._run_on, self.physics.brake_deg * self._velocity ** 2)
        if self._asked or (self._run_on or 0.0) > 1e-9:
            if self._rotate_timer.waketime == NEVER:
                self.reactor.update_timer(self._rotate_timer, now + self._step_time)
        else:
            self._velocity, self._run_on = 0.0, None
            self.reactor.update_timer(self._rotate_timer, NEVER)

    @property
    def _step_time(self) -> float:
        p = self.physics
        speed = abs(self._asked or self._velocity)
        return p.rotation_time * p.step_deg / 180.0 / speed

    def _rotate_step(self, eventtime: float) -> float:
        if self.rotator_stalled or not (self._asked or self._velocity):
            self._velocity, self._run_on = 0.0, None
            return NEVER
        if self._asked:
            self._velocity = self._asked
        step = self.physics.step_deg
        self.angle = (self.angle + (step if self._velocity > 0 else -step)) % 360.0
        self._update_cartridge_sensors()
        if self._run_on is not None:
            self._run_on -= step
            if self._run_on <= 1e-9:
                self._velocity, self._run_on = 0.0, None
                return NEVER
        return eventtime + self._step_time

    @property
    def detent_offset(self) -> float:
        """How far the cartridge sits from its nearest detent, in degrees (signed: + ahead)."""
        a = self.angle % 180.0
        return a if a <= 90.0 else a - 180.0

    def _yellow_back(self) -> bool:
        # The yellow half faces the back for angles within 90 degrees of 0.
        a = self.angle % 360.0
        return a < 90.0 or a >= 270.0

    def _fields(self) -> dict[str, bool]:
        """What the Hall switches would read if they were awake now."""
        near = abs(round(self.detent_offset, 6)) <= self.physics.home_zone_deg + 1e-6
        return {"home": near, "yellow_back": self._yellow_back()}

    def _update_cartridge_sensors(self, at_once: bool = False) -> None:
        period = self.physics.hall_period
        if at_once or period <= 0:
            self._set(**self._fields())
            return
        # Micropower switches: the outputs change only when they next wake to sample.
        if self._hall_timer.waketime == NEVER:
            now = self.reactor.monotonic()
            self.reactor.update_timer(self._hall_timer, (now // period + 1) * period)

    def _hall_sample(self, eventtime: float) -> float:
        self._set(**self._fields())
        return NEVER
