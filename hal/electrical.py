"""The launcher's circuit, electrically: every net's voltage, what the Pi reads at its inputs,
and what the two motors see at their terminals, for given pin levels, mechanics and one
injected fault.

``Model(circuit(pins))`` solves the netlist of ``hal.circuit`` as a DC network: resistors
and closed contacts are conductances, the Pi's outputs and the parts' outputs are sources
with their own resistance, the rails are fixed (GND 0 V, 3V3, 5V), the pack is an EMF with
its resistance between its terminals. Parts with logic (the H-bridge, the one-shot, the
MOSFETs, the Hall switches, the beam) read their input voltages against their datasheet
thresholds and the network is solved again until nothing changes. A motor's winding is read
as a voltmeter reads it: its two terminals' voltages, and whether each is held by a path
that can carry motor current (``hal.network.G_STRONG``: a driver's output, a closed
contact, the pack, a short) or only by pulls; both held and apart is a drive, both held
together a brake, either one loose a coast.

Diodes conduct once pushed past their drop (solved again with each on): the Pi's pads'
clamps to its 3.3 V rail and to ground, the driver's body diodes to VM and ground. The
driver's overcurrent protection holds a bridge off, its thermal shutdown every output; what
overstresses the Pi (a pad past its 16 mA, the copper feeding its 3.3 V rail) is in each
``Solution.stress`` (figures: hal/datasheets.py).

Faults, one at a time (``Model.inject``): those of hal/circuit_faults.py, a net open at a
point of its wire, a net shorted to a rail, a part failing one of its modes, a damaged pin
of the Pi, or a common mechanical cause; ``single_faults(circuit)`` there lists every one of
them for a unit. The network itself is hal/network.py's.

Imported by the simulator (``hal.sim``) only: ``launcher run`` never loads it.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import replace

from hal.circuit import (
    AMP,
    BATTERY,
    BEAM,
    BUTTON,
    CAPACITOR,
    CMOS_VIH,
    CMOS_VIL,
    CONTACT,
    DIODE,
    DRIVER,
    FUSE,
    HALL,
    LED,
    MOSFET,
    MOSFET_VTH,
    MOTOR,
    ONESHOT,
    PAD_CHECKED,
    PI,
    RESISTOR,
    ROLES,
    SPDT,
    SPEAKER,
    SWITCH,
    TVS,
    WIRE,
    Circuit,
    power_on_pull,
)
from hal.circuit_faults import (
    CommonCause,
    Fault,
    NetOpen,
    NetShort,
    PartFailure,
    PinDamaged,
    check_fault,
)
from hal.datasheets import (
    BOARD_PULL_UPS,
    BODY_DIODE_OHMS,
    BODY_DIODE_VF,
    CLAMP_OHMS,
    CLAMP_VF,
    PI_OUTPUT_OHMS,
    PI_VIH,
    PI_VIL,
    STUCK_OHMS,
)
from hal.network import Network
from hal.solved import Drive, Pad, Recent, Solution, Stress, Volts, World, pi_stress

G_WIRE = 1e3  # a closed contact or a wire: 1 mΩ
G_SHORT = 1e6  # a net shorted to a rail
G_LOGIC = 1 / 50.0  # a logic output (the one-shot's Q, an open-drain sensor pulling low)
G_FET = 20.0  # an AO3400A fully on (its RDS(on) is tens of mΩ)
G_PACK = 1 / 0.3  # 3 x C alkaline: a few tenths of an ohm in all
G_FUSE = 10.0
DRIVE_MIN = 0.2  # V: less than this across a motor held at both ends is a brake

RAILS = ("GND", "3V3", "5V")
BRIDGES = (("AIN1", "AIN2", "AOUT1", "AOUT2"), ("BIN1", "BIN2", "BOUT1", "BOUT2"))
OUTPUTS = ("AOUT1", "AOUT2", "BOUT1", "BOUT2")
RESTING = World()  # the lid shut, the Pi running, nothing pressed
EPS = 1e-4  # V: a diode conducts past its drop by more than this (no flip-flop at the edge)


# --- the model ---------------------------------------------------------------------------

# Solutions by (pins, build, fault): every model of the same unit shares them (a test suite
# builds thousands of simulated boards of the default unit). Two caches a unit: the solved
# discrete states (every output high or low), and their means over a PWM period, one per set
# of duties. A long run meets new states slowly (a console fuzz of 20,000 lines: about 130
# of each), so both are bounded and least-recently-used (``Recent``), and a solution is
# small (``Volts``; the read maps shared), to keep memory flat.
_SHARED: dict[tuple, tuple[Recent, Recent, dict]] = {}
_SHARED_UNITS = 64
_DISCRETE_STATES = 512
_PWM_STATES = 512
_NOTHING: frozenset[str] = frozenset()


class Model:
    """The circuit of one unit, solved for given pin levels and world, with at most one
    fault injected. Solutions are cached: the same state costs a dictionary look-up."""

    def __init__(self, circuit: Circuit, fault: Fault | None = None) -> None:
        self.circuit = circuit
        self.fault: Fault | None = None
        #: The Pi's outputs, by BCM number: the pins ``solve`` takes levels of.
        self.output_pins: tuple[int, ...] = tuple(sorted(
            getattr(circuit.pins, r.key) for r in ROLES.values()
            if r.is_output and getattr(circuit.pins, r.key) is not None))
        self.input_pins: tuple[int, ...] = tuple(sorted(
            getattr(circuit.pins, r.key) for r in ROLES.values()
            if not r.is_output and getattr(circuit.pins, r.key) is not None))
        self.inject(fault)

    def inject(self, fault: Fault | None) -> None:
        """Make ``fault`` the one fault of the circuit (None: a sound circuit)."""
        if fault is not None:
            check_fault(self.circuit, fault)
        self.fault = fault
        if len(_SHARED) >= _SHARED_UNITS:
            _SHARED.clear()
        key = (self.circuit.pins, self.circuit.build, fault)
        if key not in _SHARED:
            _SHARED[key] = (Recent(_DISCRETE_STATES), Recent(_PWM_STATES), {})
        self._discrete_cache, self._cache, self._interned = _SHARED[key]

    def repair(self) -> None:
        self.inject(None)

    def describe(self, fault: Fault | None = None) -> str:
        fault = fault if fault is not None else self.fault
        return "no fault" if fault is None else fault.describe(self.circuit)

    # -- solving --

    def solve(self, levels: Mapping[int, float], world: World = RESTING) -> Solution:
        """The state for these output levels (BCM -> 0..1: a duty for a PWM line; a pin left
        out is low) and ``world``. PWM lines are taken as aligned at the start of their
        period: the solution is the mean over the phases they make."""
        get = levels.get
        # From a list, not a generator: tuple(<generator>) left one spare 6-tuple in
        # CPython's free list a call, which filled it (about 172 KiB) over the service's
        # first ~12,000 presses: the RSS growth python -m bench.service measures.
        duties = tuple([(n, v if v == 0.0 or v == 1.0 else _clamp(v))
                        for n in self.output_pins for v in (get(n, 0.0),)])
        key = (duties, world)
        found = self._cache.find(key)
        return found if found is not None else self._cache.keep(key, self._phases(duties, world))

    def node_of(self, terminal: str) -> str | None:
        """The node a terminal is on with the injected fault (an open splits a net)."""
        return Evaluation(self, {}, World()).node(terminal)

    def _phases(self, duties: tuple[tuple[int, float], ...], world: World) -> Solution:
        steady = {n: d >= 0.5 for n, d in duties if d in (0.0, 1.0)}
        pwm = sorted({d for _, d in duties if 0.0 < d < 1.0})
        if not pwm:
            return self._discrete(tuple(sorted(steady.items())), world)
        # Aligned PWM: every line high from the start of the period until its duty.
        bounds = [0.0, *pwm, 1.0]
        parts: list[tuple[float, Solution]] = []
        for lo, hi in itertools.pairwise(bounds):
            if hi <= lo:
                continue
            high = {n: (d > lo) for n, d in duties if 0.0 < d < 1.0}
            state = tuple(sorted({**steady, **high}.items()))
            parts.append((hi - lo, self._discrete(state, world)))
        longest = max(parts, key=lambda p: p[0])[1]

        def mean(attr: str) -> Drive:
            drives = [(w, getattr(s, attr)) for w, s in parts]
            return Drive(*(round(sum(w * getattr(d, f) for w, d in drives), 6)
                           for f in ("forward", "reverse", "brake", "volts")))

        undefined = frozenset().union(*(s.undefined for _, s in parts))
        # What overstresses the Pi in any phase does so: the worst of each, over the period.
        worst: dict[tuple[str, str], Stress] = {}
        for _, sol in parts:
            for st in sol.stress:
                key = (st.where, st.what)
                if key not in worst or st.amps > worst[key].amps:
                    worst[key] = st
        return replace(longest, roller=mean("roller"), rotator=mean("rotator"),
                       awake=any(s.awake for _, s in parts), undefined=undefined,
                       stress=tuple(worst.values()),
                       protection=frozenset().union(*(s.protection for _, s in parts)))

    def _discrete(self, highs: tuple[tuple[int, bool], ...], world: World) -> Solution:
        key = (highs, world)
        found = self._discrete_cache.find(key)
        if found is None:
            found = self._discrete_cache.keep(key, Evaluation(self, dict(highs), world).run())
        return found


def _conducts(past: float, was: bool, ohms: float) -> bool:
    """A diode ``past`` volts beyond its drop: one that was off turns on once pushed past it
    (by more than ``EPS``); one that was on stays on while its current flows forward (its
    own drop and resistance are then in the solution, so ``past`` is its current × ohms)."""
    return past > (-1e-6 * ohms if was else EPS)


def _clamp(level: float) -> float:
    level = float(level)
    return 0.0 if level <= 0 else 1.0 if level >= 1 else round(level, 4)


class Evaluation:
    """One discrete state solved: the network stamped, the logic parts settled."""

    def __init__(self, model: Model, highs: Mapping[int, bool], world: World) -> None:
        self.c = model.circuit
        self.shared = model._interned  # node index and read maps, shared by its solutions
        self.fault = model.fault
        self.highs = highs
        self.world = world
        self.undefined: set[str] = set()
        self._node: dict[str, str] = {}
        self._map_nodes()
        # The logic parts' states, settled by iteration (first guess: everything off), and
        # the diodes conducting (the Pi's pad clamps, the driver's body diodes).
        self.logic: dict[str, object] = {}
        # The driver's protections, once tripped in this state, stay tripped: OCP retries
        # into the same short and trips again (its outputs off but for microseconds), and a
        # die at its thermal shutdown stays hot while the current that heated it would flow.
        self.tripped: set[str] = set()  # "OCP A", "OCP B", "TSD"
        self.damaged = self.fault.gpio if isinstance(self.fault, PinDamaged) else None
        self.pad_pins = tuple(bcm for r in ROLES.values()
                              if (bcm := getattr(self.c.pins, r.key)) is not None
                              and bcm != self.damaged)
        self._net: Network | None = None

    # -- nodes --

    def _map_nodes(self) -> None:
        f = self.fault
        for net in self.c.nets.values():
            for i, t in enumerate(net.terminals):
                node = net.name
                if isinstance(f, NetOpen) and f.net == net.name:
                    if net.rail or net.name in ("PGND", "VM"):
                        node = f"{net.name}~{t}" if i == f.at else net.name
                    elif i >= f.at:
                        node = f"{net.name}~far"
                self._node[t] = node

    def node(self, terminal: str) -> str | None:
        return self._node.get(terminal)

    # -- the loop --

    def run(self) -> Solution:
        volts: dict[str, float | None] = {}
        strong: set[str] = set()
        for _ in range(12):
            net = self._net = self._stamp()
            volts, strong = net.solve(self._node.values())
            changed = self._settle(volts)
            if not changed:
                break
        else:
            self.undefined.add("the logic parts did not settle (an oscillation)")
        return self._solution(volts, strong)

    def _rails(self) -> dict[str, float]:
        w = self.world
        off = w.pi == "off"
        return {"GND": 0.0, "3V3": 0.0 if off else w.v3, "5V": 0.0 if off else w.v5}

    def _failed(self, ref: str) -> str:
        f = self.fault
        return f.mode if isinstance(f, PartFailure) and f.ref == ref else ""

    def _pressed(self, actuator: str) -> bool | None:
        """True pressed, False released, None in transit (the SPDT touches neither side)."""
        lid = self.world.lid
        held = isinstance(self.fault, CommonCause) and self.fault.name == "lid_lever_held"
        if actuator == "lid_closed":
            if held or lid == "closed":
                return True
            return None if lid == "lifting" else False
        if actuator == "lid_full":
            return lid == "full"
        if actuator == "button":
            return self.world.button
        raise ValueError(actuator)

    def _stamp(self) -> Network:
        net = Network(self._rails())
        w, n = self.world, self.node
        if isinstance(self.fault, NetShort):
            short = self.fault
            # The whole net, every piece of it (a single fault: there is no open too).
            target = short.net
            if short.rail == "VM":
                net.link(target, "VM", G_SHORT)
            else:
                net.link(target, short.rail, G_SHORT)
        for p in self.c.parts.values():
            mode = self._failed(p.ref)
            t = {pin: n(f"{p.ref}.{pin}") for pin in p.pins}
            k = p.kind
            if k == RESISTOR:
                if mode != "open":
                    net.link(t["1"], t["2"], 1 / (p.ohms or 1.0))
            elif k in (CAPACITOR, TVS, DIODE):
                if mode == "shorted":
                    a, b = list(t.values())
                    net.link(a, b, G_WIRE)
            elif k in (CONTACT, BUTTON):
                closed = bool(self._pressed(p.actuator))
                if mode in ("welded", "leads_pinched", "plunger_stuck"):
                    closed = True
                elif mode == "open":
                    closed = False
                if closed:
                    a, b = list(t.values())[:2]
                    net.link(a, b, G_WIRE)
            elif k == SPDT:
                pressed = self._pressed(p.actuator)
                no, nc = pressed is True, pressed is False
                match mode:
                    case "no_welded" | "plunger_stuck_pressed":
                        no, nc = True, False
                    case "nc_welded" | "plunger_stuck_released":
                        no, nc = False, True
                    case "no_open":
                        no = False
                    case "nc_open":
                        nc = False
                if no:
                    net.link(t["COM"], t["NO"], G_WIRE)
                if nc:
                    net.link(t["COM"], t["NC"], G_WIRE)
            elif k == FUSE:
                if mode != "open":
                    net.link(t["1"], t["2"], G_FUSE)
            elif k in (SWITCH, WIRE):
                if mode != "open":
                    net.link(t["1"], t["2"], G_WIRE)
            elif k == BATTERY:
                vm = 2.0 if mode == "low" else w.vm
                net.emf(t["-"], t["+"], vm, G_PACK)
            elif k == PI:
                self._stamp_pi(net, t)
            elif k == DRIVER:
                self._stamp_driver(net, p.ref, t, mode)
            elif k == ONESHOT:
                q = self.logic.get(p.ref)
                if q is not None:
                    net.link(t["Q"], t["VCC"] if q else t["GND"], G_LOGIC)
            elif k == MOSFET:
                on = self.logic.get(p.ref, False) if mode == "" else mode == "shorted"
                if on:
                    net.link(t["D"], t["S"], G_FET)
            elif k in (HALL, BEAM):
                if self.logic.get(p.ref):
                    net.link(t["OUT"], t["GND"], G_LOGIC)
            elif k in (MOTOR, LED, AMP, SPEAKER):
                pass  # read, not stamped: a voltmeter across a winding; the rest draw no part
            else:
                raise ValueError(f"{p.ref}: no model for a {k}")
        return net

    def _stamp_pi(self, net: Network, t: Mapping[str, str | None]) -> None:
        w = self.world
        v3 = self._rails()["3V3"]
        # The pads' protection diodes conducting, the Pi powered or not (then to its dead
        # rail), and a damaged pad held to its rail by the diode that failed.
        for node, high in self.logic.get("clamps", ()):  # type: ignore[attr-defined]
            net.source(node, v3 + CLAMP_VF if high else -CLAMP_VF, 1 / CLAMP_OHMS)
        if isinstance(self.fault, PinDamaged):
            rail = "3V3" if self.fault.mode == "stuck_high" else "GND"
            net.link(t[f"GPIO{self.fault.gpio}"], rail, 1 / STUCK_OHMS)
        if w.pi == "off":
            return
        outputs = dict(self._outputs())
        for key, role in ROLES.items():
            bcm = getattr(self.c.pins, key)
            if bcm is None:
                continue
            node = t[f"GPIO{bcm}"]
            if bcm in BOARD_PULL_UPS:
                net.source(node, v3, 1 / BOARD_PULL_UPS[bcm])
            if bcm == self.damaged:
                continue  # its driver and its pull dead
            if w.pi == "boot":
                net.source(node, v3 if power_on_pull(bcm) == "up" else 0.0, 1 / w.pull_ohms)
            elif role.is_output:
                net.source(node, v3 if outputs.get(bcm) else 0.0, 1 / PI_OUTPUT_OHMS)
            else:
                net.source(node, v3, 1 / w.pull_ohms)

    def _outputs(self) -> Iterable[tuple[int, bool]]:
        return self.highs.items()

    def _stamp_driver(self, net: Network, ref: str, t: Mapping[str, str | None],
                      mode: str) -> None:
        spec = self.c.driver
        gnd, vm = t["GND"], t["VM"]
        for pin in ("AIN1", "AIN2", "BIN1", "BIN2", *spec.pwm_pins):
            net.link(t[pin], gnd, 1 / spec.in_pulldown)
        net.link(t["nSLEEP"], gnd, 1 / spec.sleep_pulldown)
        # Its outputs' body diodes conducting: to VM above, from ground below.
        for pin, high in self.logic.get(f"body:{ref}", ()):  # type: ignore[attr-defined]
            if high:
                net.emf(vm, t[pin], BODY_DIODE_VF, 1 / BODY_DIODE_OHMS)
            else:
                net.emf(t[pin], gnd, BODY_DIODE_VF, 1 / BODY_DIODE_OHMS)
        if mode == "nsleep_pulled_up":
            net.link(t["nSLEEP"], vm, 1 / 10e3)  # a breakout's own pull-up to VIN
        outs = self.logic.get(ref, {})
        g = 2 / spec.rds_on  # each half: half the high-plus-low resistance
        for pin in OUTPUTS:
            level = outs.get(pin, "Z")  # type: ignore[union-attr]
            stuck = mode.removeprefix(pin.lower() + "_stuck_") if mode.startswith(
                pin.lower() + "_stuck_") else ""
            if stuck:
                level = {"high": "H", "low": "L", "open": "Z"}[stuck]
            if level == "H":
                net.link(t[pin], vm, g)
            elif level == "L":
                net.link(t[pin], gnd, g)

    # -- the logic parts --

    def _settle(self, volts: Mapping[str, float | None]) -> bool:
        before = dict(self.logic)
        self.undefined = set()  # only the last, settled round's notes count
        for p in self.c.parts.values():
            k = p.kind
            if k == DRIVER:
                self._protect(p.ref, volts)
                self.logic[p.ref] = self._driver(p.ref, volts)
                self.logic[f"body:{p.ref}"] = self._body(p.ref, volts)
            elif k == PI:
                self.logic["clamps"] = self._clamps(volts)
            elif k == ONESHOT:
                self.logic[p.ref] = self._oneshot(p.ref, volts)
            elif k == MOSFET:
                g = self._v(volts, f"{p.ref}.G")
                s = self._v(volts, f"{p.ref}.S") or 0.0
                if g is None:
                    self.undefined.add(f"{p.ref} gate floating (taken as on)")
                    on = True
                else:
                    vgs = g - s
                    on = vgs > MOSFET_VTH[1]
                    if MOSFET_VTH[0] <= vgs <= MOSFET_VTH[1]:
                        self.undefined.add(f"{p.ref} gate at {vgs:.2f} V (taken as on)")
                        on = True
                self.logic[p.ref] = on
            elif k == HALL:
                mode = self._failed(p.ref)
                field_ = self.world.home if p.ref == "H1" else self.world.yellow_back
                low = {"output_stuck_low": True, "output_stuck_high": False}.get(mode, field_)
                self.logic[p.ref] = low and self._powered(p.ref, "VDD", volts, 2.5)
            elif k == BEAM:
                mode = self._failed(p.ref)
                low = {"always_blocked": True, "never_blocked": False}.get(
                    mode, self.world.beam_blocked)
                self.logic[p.ref] = low and self._powered(p.ref, "VCC", volts, 2.5)
        return self.logic != before

    def _v(self, volts: Mapping[str, float | None], terminal: str) -> float | None:
        node = self.node(terminal)
        return None if node is None else volts.get(node)

    def _powered(self, ref: str, supply: str, volts: Mapping[str, float | None],
                 minimum: float) -> bool:
        v, g = self._v(volts, f"{ref}.{supply}"), self._v(volts, f"{ref}.GND")
        return v is not None and g is not None and v - g >= minimum

    def _logic(self, name: str, v: float | None, vil: float, vih: float,
               worse: bool = True) -> bool:
        """A logic input: high above VIH, low below VIL; between (or floating) the worse."""
        if v is None or vil < v < vih:
            shown = "floating" if v is None else f"at {v:.2f} V"
            self.undefined.add(f"{name} {shown} (taken as {'high' if worse else 'low'})")
            return worse
        return v >= vih

    def _driver(self, ref: str, volts: Mapping[str, float | None]) -> dict[str, str]:
        spec = self.c.driver
        gnd = self._v(volts, f"{ref}.GND")
        vm = self._v(volts, f"{ref}.VM")
        if gnd is None or vm is None or vm - gnd < spec.vm_min:
            return {}
        if spec.vcc_pin:  # a logic supply of its own (the TB6612's VCC) under its range: off
            vcc = self._v(volts, f"{ref}.{spec.vcc_pin}")
            if vcc is None or vcc - gnd < spec.vcc_range[0]:
                return {}
        rel = {pin: (None if (v := self._v(volts, f"{ref}.{pin}")) is None else v - gnd)
               for pin in ("AIN1", "AIN2", "BIN1", "BIN2", "nSLEEP", *spec.pwm_pins)}
        if self._failed(ref) != "nsleep_ignored" and not self._logic(
                f"{ref}.nSLEEP", rel["nSLEEP"], spec.vil_sleep, spec.vih_sleep):
            return {}  # asleep: every output open, whatever the inputs say
        outs = {}
        for (a, b, o1, o2), pwm in zip(BRIDGES, spec.pwm_pins or ("", ""), strict=True):
            i1 = self._logic(f"{ref}.{a}", rel[a], spec.vil_in, spec.vih_in)
            i2 = self._logic(f"{ref}.{b}", rel[b], spec.vil_in, spec.vih_in)
            # The truth table (SLVSAR1E Table 2; the TB6612FNG's with PWM high): coast,
            # reverse, forward, brake (slow decay). A TB6612's PWM input low short-brakes a
            # bridge its inputs drive (its datasheet's H-SW control function table).
            outs[o1], outs[o2] = {(False, False): ("Z", "Z"), (False, True): ("L", "H"),
                                  (True, False): ("H", "L"), (True, True): ("L", "L")}[(i1, i2)]
            if pwm and i1 != i2 and not self._logic(f"{ref}.{pwm}", rel[pwm], spec.vil_in,
                                                    spec.vih_in):
                outs[o1], outs[o2] = "L", "L"
        if "TSD" in self.tripped:  # thermal shutdown: every FET off (SLVSAR1E §7.3.5.2)
            return dict.fromkeys(outs, "Z")
        for bridge, (_, _, o1, o2) in zip("AB", BRIDGES, strict=True):
            if f"OCP {bridge}" in self.tripped:  # that H-bridge alone off (§7.3.5.1)
                outs[o1] = outs[o2] = "Z"
        return outs

    def _protect(self, ref: str, volts: Mapping[str, float | None]) -> None:
        """Trip the driver's protections on the currents its driven outputs carry now: past
        its OCP level, that H-bridge off; past its continuous rating (and no OCP), the
        thermal shutdown, every output off. A stuck output is a failed FET: nothing turns
        it off."""
        spec, mode = self.c.driver, self._failed(ref)
        vm, gnd = self._v(volts, f"{ref}.VM"), self._v(volts, f"{ref}.GND")
        outs = self.logic.get(ref) or {}
        if vm is None or gnd is None:
            return
        g = 2 / spec.rds_on
        for pin, level in outs.items():  # type: ignore[attr-defined]
            v = self._v(volts, f"{ref}.{pin}")
            if level == "Z" or v is None or mode.startswith(pin.lower() + "_stuck_"):
                continue
            amps = g * ((vm - v) if level == "H" else (v - gnd))
            bridge = f"OCP {pin[0]}"
            if spec.i_ocp is not None and amps > spec.i_ocp:
                self.tripped.add(bridge)
            elif spec.i_continuous and amps > spec.i_continuous and bridge not in self.tripped:
                self.tripped.add("TSD")

    def _body(self, ref: str, volts: Mapping[str, float | None]) -> tuple[tuple[str, bool], ...]:
        """The outputs whose body diode conducts: above VM by its drop, or below ground."""
        vm, gnd = self._v(volts, f"{ref}.VM"), self._v(volts, f"{ref}.GND")
        was = set(self.logic.get(f"body:{ref}", ()))  # type: ignore[call-overload]
        on = []
        for pin in OUTPUTS:
            v = self._v(volts, f"{ref}.{pin}")
            if v is None:
                continue
            if vm is not None and _conducts(v - vm - BODY_DIODE_VF, (pin, True) in was,
                                            BODY_DIODE_OHMS):
                on.append((pin, True))
            elif gnd is not None and _conducts(gnd - BODY_DIODE_VF - v, (pin, False) in was,
                                               BODY_DIODE_OHMS):
                on.append((pin, False))
        return tuple(on)

    def _clamps(self, volts: Mapping[str, float | None]) -> tuple[tuple[str, bool], ...]:
        """The Pi's pads whose protection diode conducts: above its 3.3 V rail by the
        diode's drop, or below ground (a damaged pad's own is the fault)."""
        v3, on = self._rails()["3V3"], []
        was = set(self.logic.get("clamps", ()))  # type: ignore[call-overload]
        for bcm in self.pad_pins:
            node = self.node(f"PI.GPIO{bcm}")
            v = volts.get(node) if node else None
            if v is None:
                continue
            if _conducts(v - v3 - CLAMP_VF, (node, True) in was, CLAMP_OHMS):
                on.append((node, True))
            elif _conducts(-CLAMP_VF - v, (node, False) in was, CLAMP_OHMS):
                on.append((node, False))
        return tuple(on)  # type: ignore[return-value]

    def _oneshot(self, ref: str, volts: Mapping[str, float | None]) -> bool | None:
        mode = self._failed(ref)
        if not self._powered(ref, "VCC", volts, 2.0):
            return None  # unpowered: Q lets go, the nSLEEP pull-down takes it low
        gnd = self._v(volts, f"{ref}.GND") or 0.0
        clr = self._v(volts, f"{ref}.CLR")
        clr_high = self._logic(f"{ref}.CLR", None if clr is None else clr - gnd, CMOS_VIL,
                               CMOS_VIH)
        if mode == "q_stuck_high":
            return True
        if mode == "q_stuck_low":
            return False
        timing = self._timing(ref)
        if mode == "rext_open":
            timing = "latch"
        if mode == "b_on_a_toggling_line":
            return clr_high and timing != "none"
        edges = self.world.latched if timing == "latch" else self.world.edges
        return clr_high and edges and timing != "none"

    def _timing(self, ref: str) -> str:
        """The one-shot's timing parts: "ok"; "latch" (no current through Rext: the pulse
        never ends, so one edge holds Q until CLR); "none" (no capacitor, or the timing
        node held at a rail: no pulse that lasts)."""
        rc = self.node(f"{ref}.RC")
        if self._failed("R16") == "open" or self.node("R16.2") != rc:
            return "latch"
        shorted = isinstance(self.fault, NetShort) and self.fault.net in ("oneshot_rc",
                                                                          "oneshot_cext")
        if (shorted or self._failed("C7") == "shorted" or self.node("C7.1") != rc
                or self.node("C7.2") != self.node(f"{ref}.CEXT")):
            return "none"
        return "ok"

    # -- the result --

    def _solution(self, volts: Mapping[str, float | None], strong: set[str]) -> Solution:
        reads: dict[int, int] = {}
        if self.world.pi == "running":
            for key, role in ROLES.items():
                bcm = getattr(self.c.pins, key)
                if bcm is None or role.is_output:
                    continue
                v = self._v(volts, f"PI.GPIO{bcm}")
                if v is None or PI_VIL < v < PI_VIH:
                    self.undefined.add(f"GPIO {bcm} ({key}) at "
                                       f"{'floating' if v is None else f'{v:.2f} V'}")
                reads[bcm] = int(v is not None and v > (PI_VIL + PI_VIH) / 2)
        pads: dict[int, int] = {}
        if self.world.pi == "running":
            for key in PAD_CHECKED:
                bcm = getattr(self.c.pins, key)
                if bcm is not None:
                    v = self._v(volts, f"PI.GPIO{bcm}")
                    pads[bcm] = int(v is not None and v > (PI_VIL + PI_VIH) / 2)
        roller = self._drive("M1", volts, strong)
        rotator = self._drive("M2", volts, strong)
        awake = bool(self.logic.get("U1"))
        b = self._v(volts, "U2.B") if "U2" in self.c.parts else None
        q = self.logic.get("U2") is True
        index = self.shared.setdefault(("index", tuple(sorted(volts))), {
            name: i for i, name in enumerate(sorted(volts))})
        values = array("d", (math.nan if volts[n] is None else volts[n] for n in index))
        reads = self.shared.setdefault(("reads", tuple(sorted(reads.items()))), reads)
        pads = self.shared.setdefault(("pads", tuple(sorted(pads.items()))), pads)
        undefined = frozenset(self.undefined) or _NOTHING
        return Solution(Volts(index, values), reads, roller, rotator, awake,
                        b is not None and b >= CMOS_VIH, q, undefined, pads,
                        self._stress(volts), frozenset(self.tripped) or _NOTHING)

    def _stress(self, volts: Mapping[str, float | None]) -> tuple[Stress, ...]:
        """Every current past what the Pi takes (``hal.solved.pi_stress``)."""
        running = self.world.pi == "running"
        clamps = dict(self.logic.get("clamps", ()))  # type: ignore[call-overload]
        pads = [Pad(f"GPIO {bcm} ({key})", v, bool(self.highs.get(bcm))
                    if running and role.is_output else None, clamps.get(node))
                for key, role in ROLES.items()
                if (bcm := getattr(self.c.pins, key)) is not None and bcm != self.damaged
                and (node := self.node(f"PI.GPIO{bcm}")) and (v := volts.get(node)) is not None]
        fed = self._net.into_rail("3V3", volts) if self._net is not None else 0.0
        return pi_stress(pads, self._rails()["3V3"], fed)

    def _drive(self, ref: str, volts: Mapping[str, float | None], strong: set[str]) -> Drive:
        if self._failed(ref) == "open":
            return Drive()
        a, b = self.node(f"{ref}.1"), self.node(f"{ref}.2")
        va, vb = volts.get(a) if a else None, volts.get(b) if b else None
        held = (a in strong or a in RAILS) and (b in strong or b in RAILS)
        if not held or va is None or vb is None:
            return Drive()
        dv = va - vb
        if abs(dv) < DRIVE_MIN:
            return Drive(brake=1.0)
        share = round(min(abs(dv) / max(self.world.vm, 0.1), 2.0), 4)
        return Drive(forward=share, volts=round(dv, 3)) if dv > 0 else \
            Drive(reverse=share, volts=round(dv, 3))
