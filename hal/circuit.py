"""The launcher's circuit as data: every part, every net, and the rules the pins must keep.

One description, from which the rest is made and against which it is tested:
hardware/pinout.md's tables and hardware/bom.md's parts list (``python docs/blocks.py``),
the ``[pins]`` defaults of launcher/default.toml (a test), the checks ``launcher config
check`` and ``launcher doctor`` make of a user's pins (``pin_problems``), the config.txt
lines ``systemd/install.sh`` writes (``boot_gpio_line``), and the simulated board, whose
physics reads the motors' terminals through ``hal.electrical`` on this netlist.

``circuit(pins, build)`` is the netlist of one unit: the ``Pins`` decide which optional
parts are fitted (the dead-man one-shot with ``pins.deadman``, the rotator's BIN2 wire with
``pins.rotator_in2``, the read-backs with their pins); ``Build`` the choices no pin shows
(the driver, the rotator on the bridge or on a MOSFET). A terminal is ``REF.PIN``
(``U1.AIN1``, ``PI.GPIO12``); a net lists its terminals in the order its wire runs, so an
open can be placed along it.

Kept free of gpiozero and of anything slow: ``launcher run`` imports it with its config.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import NamedTuple

from hal.base import Pins
from hal.datasheets import DRIVERS, DriverSpec

# --- the Pi's header -----------------------------------------------------------------------

# The level each GPIO of the 40-pin header is pulled to from power-on until software claims
# it: BCM2835/6/7 and BCM2711 (Broadcom, BCM2835 ARM Peripherals §6.2 Alternative Function
# Assignments: GPIO 0-8 pulled high, 9-27 low; Raspberry Pi documentation, "Power-on
# states"). A Pi 5's header is on RP1; its `pinctrl get` shows the same split before any
# software claims a pin (raspberrypi/linux#6347 and #6878 list a fresh Pi 5: GPIO 0-8 "pu",
# 9-27 "pd"). The config.txt `gpio=` lines take effect a few seconds after power is applied
# (Raspberry Pi documentation, config.txt "gpio"): until then these pulls are what holds.
POWER_ON_PULL_UP = frozenset(range(0, 9))
HEADER_GPIOS = range(0, 28)


def power_on_pull(bcm: int) -> str:
    """``"up"`` or ``"down"``: what the SoC pulls this GPIO to at power-on."""
    return "up" if bcm in POWER_ON_PULL_UP else "down"


V3 = 3.3  # the Pi's 3.3 V rail
V5 = 5.0
VM_NOMINAL = 4.5  # the toy's 3 x C alkaline pack (hardware/power.md)
VM_FRESH = 4.8
VM_PACKS = {"3×C alkaline (the toy's)": (4.5, 4.8), "4×AA NiMH": (4.8, 5.4),
            "4×AA alkaline": (6.0, 6.4)}

# --- parts ---------------------------------------------------------------------------------

# The records below are NamedTuples, not dataclasses: this module is imported by `launcher
# run` (the config's pin rules), and a dataclass costs ten times a NamedTuple to define.

# Kinds of part, and the failure modes the model can inject for each (``hal.electrical``).
RESISTOR, CAPACITOR, TVS, DIODE = "resistor", "capacitor", "tvs", "diode"
CONTACT, SPDT = "contact", "spdt"  # a normally-open contact; a change-over contact
DRIVER, ONESHOT, MOSFET, MOTOR = "driver", "oneshot", "mosfet", "motor"
HALL, BEAM, BUTTON, LED, AMP, SPEAKER = "hall", "beam", "button", "led", "amp", "speaker"
PI, BATTERY, FUSE, SWITCH, WIRE = "pi", "battery", "fuse", "switch", "wire"

FAILURE_MODES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    RESISTOR: ("open",),
    CAPACITOR: ("shorted",),
    TVS: ("shorted",),
    DIODE: ("shorted",),
    # A normally-open contact: welded (or its two leads pinched together: the same circuit),
    # never closing, and its plunger stuck pressed whatever the lid does.
    CONTACT: ("welded", "leads_pinched", "open", "plunger_stuck"),
    # A change-over contact: either side welded or never making, the plunger stuck either way.
    SPDT: ("no_welded", "nc_welded", "no_open", "nc_open", "plunger_stuck_pressed",
           "plunger_stuck_released"),
    DRIVER: ("aout1_stuck_high", "aout1_stuck_low", "aout1_stuck_open", "aout2_stuck_high",
             "aout2_stuck_low", "aout2_stuck_open", "bout1_stuck_high", "bout1_stuck_low",
             "bout1_stuck_open", "bout2_stuck_high", "bout2_stuck_low", "bout2_stuck_open",
             "nsleep_pulled_up", "nsleep_ignored"),
    ONESHOT: ("q_stuck_high", "q_stuck_low", "rext_open", "b_on_a_toggling_line"),
    MOSFET: ("shorted", "open"),
    MOTOR: ("open",),
    HALL: ("output_stuck_low", "output_stuck_high"),
    BEAM: ("always_blocked", "never_blocked"),
    BUTTON: ("welded", "open"),
    LED: ("open",),
    AMP: (),
    SPEAKER: (),
    PI: (),
    BATTERY: ("low",),  # sagging below the driver's minimum supply
    FUSE: ("open",),
    SWITCH: ("open",),
    WIRE: ("open",),
})

# A mechanical cause that reaches more than one part: debris or a bent lever holding every
# switch the closed lid presses. Mounting the power contacts and the sensing switches apart,
# each on its own actuator (hardware/fitting.md), is what makes it more than one fault.
COMMON_CAUSES: Mapping[str, str] = MappingProxyType({
    "lid_lever_held": "debris or a bent lever holds every switch the shut lid presses "
                      "(the sensing pair and the power contact) with the lid ajar",
})


class Part(NamedTuple):
    """One part: its reference, what it is, its pins, and what the model needs of it."""

    ref: str
    kind: str
    name: str
    pins: tuple[str, ...]
    value: str = ""  # "10 kΩ", "DRV8833", ...
    ohms: float | None = None  # a resistor's value; a motor's winding
    actuator: str = ""  # for a contact: what presses it ("lid_closed", "lid_full", "button")
    bom: str = ""  # the BOM line (``BOM``) it is bought under
    fit: str = ""  # how to fit it, where builders asked (hardware/fitting.md, bom.md)

    @property
    def failure_modes(self) -> tuple[str, ...]:
        return FAILURE_MODES[self.kind]


class Net(NamedTuple):
    """One net: its terminals in the order its wire runs; ``gpio`` and ``key`` when a pin of
    the Pi is on it; ``rail`` for a supply; ``reaches`` the rails it can be shorted to."""

    name: str
    terminals: tuple[str, ...]
    gpio: int | None = None
    key: str = ""
    rail: str = ""  # "GND", "3V3", "5V" for the Pi's rails
    reaches: tuple[str, ...] = ("GND", "3V3")

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.split(".", 1)[0] for t in self.terminals))


@dataclass(frozen=True)
class Build:
    """The choices of a build that no pin shows.

    ``driver``: "DRV8833" or "TB6612FNG" (same inputs and truth table here, the TB6612's
    VCC, PWMA and PWMB tied to 3V3; STBY is its nSLEEP). ``rotator``: "bridge" (option A:
    the driver's second channel) or "mosfet" (option B: an AO3400A low-side switch, no
    brake).
    """

    driver: str = "DRV8833"
    rotator: str = "bridge"

    def __post_init__(self) -> None:
        if self.driver not in DRIVERS:
            raise ValueError(f"driver {self.driver!r}: one of {', '.join(DRIVERS)}")
        if self.rotator not in ("bridge", "mosfet"):
            raise ValueError(f"rotator {self.rotator!r}: bridge or mosfet")


# The dead-man one-shot (TI TPUL2G123, SCASE77A §7.3.3): t_w ≈ Rext × Cext.
REXT_OHMS, CEXT_FARADS = 39e3, 1e-6
ONESHOT_WIDTH = REXT_OHMS * CEXT_FARADS  # 39 ms
ONESHOT_WIDTH_RANGE = (0.033, 0.045)  # with 1 % + 5 % + 10 % (hardware/power.md)
# CMOS inputs on a 3.3 V supply: 0.3 and 0.7 of VCC (the datasheet's VIL/VIH scale with VCC).
CMOS_VIL, CMOS_VIH = 0.3 * V3, 0.7 * V3
# AO3400A (Alpha & Omega datasheet): VGS(th) 0.65-1.45 V, VGS ±12 V, RDS(on) given from 2.5 V.
MOSFET_VTH = (0.65, 1.45)


# --- the pins -----------------------------------------------------------------------------

class PinRole(NamedTuple):
    """What a ``[pins]`` key is: its direction, its part and wiring (pinout.md's words),
    its default (None: off, -1 in the file) and the GPIO to use for it, and whether it
    must read low from power-on (an output that wakes or drives something when high)."""

    key: str
    direction: str  # "in" (active low, the Pi's pull-up), "out", "out, PWM"
    part: str
    wiring: str
    default: int | None
    suggested: int
    low_at_power_on: bool = False
    why_off: str = ""  # for a pin off by default: when to wire it
    # An input joined to a must-stay-low node (the nSLEEP read-back): its own power-on pull
    # reaches that node too, so it must be a pull-down.
    pulled_down_at_power_on: bool = False

    @property
    def is_output(self) -> bool:
        return self.direction.startswith("out")


PIN_ROLES: tuple[PinRole, ...] = (
    PinRole("button", "in", "button", "switch to GND; active low", 17, 17),
    PinRole("motor_in1", "out, PWM", "motor driver IN1",
            "H-bridge AIN1; 10 kΩ pull-down", 12, 12, low_at_power_on=True),
    PinRole("motor_in2", "out, PWM", "motor driver IN2",
            "H-bridge AIN2; 10 kΩ pull-down", 13, 13, low_at_power_on=True),
    PinRole("motor_sleep", "out", "motor driver sleep",
            "DRV8833 nSLEEP / TB6612 STBY, or the dead-man one-shot's CLR; 2.2 kΩ "
            "pull-down at nSLEEP; high only while a motor runs or brakes", 11, 11,
            low_at_power_on=True),
    PinRole("sleep_sense", "in", "nSLEEP read-back",
            "from nSLEEP at the driver through 1 kΩ; reads what the driver sees "
            "(the one-shot's Q with the dead-man); on a GPIO pulled down at power-on",
            25, 25, pulled_down_at_power_on=True),
    PinRole("exit_beam", "in", "exit beam receiver",
            "open-collector output, 10 kΩ pull-up; low while a card blocks it", 27, 27),
    PinRole("lid_closed", "in", "lid closed switch",
            "NO contact of the lid's low-current SPDT (SS-01GL) to GND, closed when the lid "
            "is shut; 2.2 kΩ wetting pull-up to 3V3", 22, 22),
    PinRole("lid_closed_nc", "in", "lid closed, second contact",
            "NC contact of the same SPDT to GND, closed when the lid is NOT shut; 2.2 kΩ "
            "wetting pull-up to 3V3", 7, 7),
    PinRole("lid_open", "in", "lid fully open switch",
            "low-current microswitch (SS-01GL) NO to GND, closed at full open; 2.2 kΩ "
            "wetting pull-up to 3V3", 23, 23),
    PinRole("power_contact_sense", "in", "power contact read-back",
            "AO3400A drain (open drain, the Pi's pull-up); its gate sees the motor side of "
            "the lid power contact, biased through it from 3V3 (100 kΩ): low while the "
            "contact is closed", 8, 8),
    PinRole("rotator_contact_sense", "in", "rotator contact read-back",
            "AO3400A drain (open drain, the Pi's pull-up); its gate sees the motor side of "
            "the full-open power contact in the rotator's lead (biased through it from 3V3 "
            "on the driver's channel, from VM on the MOSFET): low while the contact is "
            "closed; GPIO 2 has the Pi's own 1.8 kΩ pull-up (I2C1 SDA, which the launcher "
            "leaves off)", 2, 2),
    PinRole("rotator", "out", "cartridge rotator",
            "H-bridge BIN1 or MOSFET gate; 10 kΩ pull-down", 24, 24, low_at_power_on=True),
    PinRole("home", "in", "home detent sensor",
            "Hall switch output; low at a 180° detent; 100 nF across the sensor's VDD and "
            "GND", 6, 6),
    PinRole("yellow_back", "in", "side sensor",
            "Hall switch output; low when the yellow half faces the back; 100 nF across the "
            "sensor's VDD and GND", 5, 5),
    PinRole("amp_enable", "out", "amplifier enable",
            "MAX98357A SD; high = on (left channel, see below)", 16, 16, low_at_power_on=True),
    PinRole("led", "out", "status LED", "330 Ω, LED anode; cathode to GND", 26, 26),
    PinRole("rotator_in2", "out, PWM", "rotator brake input",
            "H-bridge BIN2 of the rotator's channel; 4.7 kΩ pull-down", None, 9,
            low_at_power_on=True,
            why_off="with the rotator on the driver's second channel and BIN2 wired to it"),
    PinRole("deadman", "out", "dead-man enable",
            "50 Hz square wave into the dead-man one-shot's B input "
            "([power.md](power.md)); 10 kΩ pull-down", None, 10, low_at_power_on=True,
            why_off="with the dead-man one-shot fitted"),
)
ROLES: Mapping[str, PinRole] = MappingProxyType({r.key: r for r in PIN_ROLES})
# The outputs config.txt drives low from boot (``gpio=...=op,dl``): every one that must
# read low at power-on. The LED may glow for the seconds before that.
BOOT_LOW = tuple(r.key for r in PIN_ROLES if r.low_at_power_on)


# The outputs whose level the firmware reads back at the Pi's own pad (an output's input
# buffer reads the pin as it is, not as it is driven): the driver's inputs (or the rotator
# MOSFET's gate), each driven low at rest, so one that reads high is shorted to a rail.
PAD_CHECKED = ("motor_in1", "motor_in2", "rotator", "rotator_in2")


def default_pins() -> Pins:
    """The pins of ``PIN_ROLES``' defaults (what launcher/default.toml must say)."""
    return Pins(**{r.key: r.default for r in PIN_ROLES})  # type: ignore[arg-type]


def wired_pins() -> Pins:
    """Every pin wired, the optional ones on their suggested GPIO (the drawing's unit)."""
    return Pins(**{r.key: r.suggested for r in PIN_ROLES})  # type: ignore[arg-type]


def pin_problems(pins: Pins) -> list[tuple[str, str]]:
    """(key, why) for every pin that breaks a rule of the circuit: an output that must stay
    low from power-on, or an input joined to one (the nSLEEP read-back), put on a GPIO the
    SoC pulls up until software claims it."""
    problems = []
    for role in PIN_ROLES:
        bcm = getattr(pins, role.key, None)
        if bcm is None or not (role.low_at_power_on or role.pulled_down_at_power_on):
            continue
        if power_on_pull(bcm) == "up":
            what = (f"the {role.part} would read high" if role.is_output else
                    f"its pull-up would lift nSLEEP through the {role.part}")
            problems.append((role.key, f"GPIO {bcm} is pulled up at power-on (the Pi pulls "
                             f"GPIO 0-8 up until software claims them), so {what} while "
                             f"the Pi boots: use one of GPIO 9-27, pulled down at power-on "
                             f"(GPIO {role.suggested} is suggested; hardware/pinout.md)"))
    return problems


def boot_gpio_line(pins: Pins) -> str | None:
    """The config.txt line that makes every must-stay-low output an output driven low as
    soon as the firmware applies config.txt: ``gpio=11,12,13,16,24=op,dl``."""
    numbers = sorted({getattr(pins, k) for k in BOOT_LOW if getattr(pins, k) is not None})
    return f"gpio={','.join(map(str, numbers))}=op,dl" if numbers else None


def boot_line_text() -> str:
    """The default pins' config.txt line (hardware/pinout.md)."""
    return f"{boot_gpio_line(default_pins())}\n"


# --- the netlist --------------------------------------------------------------------------

@dataclass(frozen=True)
class Circuit:
    """The parts and nets of one unit, built by ``circuit``."""

    pins: Pins
    build: Build
    parts: Mapping[str, Part]
    nets: Mapping[str, Net]
    _at: Mapping[str, str] = field(default_factory=dict, repr=False)

    def net_of(self, terminal: str) -> str:
        """The net a terminal (``REF.PIN``) is on."""
        return self._at[terminal]

    def gpio_net(self, bcm: int) -> str | None:
        return self._at.get(f"PI.GPIO{bcm}")

    @property
    def driver(self) -> DriverSpec:
        return DRIVERS[self.build.driver]

    def refs(self, kind: str) -> list[str]:
        return [ref for ref, p in self.parts.items() if p.kind == kind]


def circuit(pins: Pins, build: Build | None = None) -> Circuit:
    """The netlist of a unit wired as ``pins`` say, with ``build``'s choices."""
    build = build or Build()
    parts: dict[str, Part] = {}
    nets: dict[str, list[str]] = {}
    gpio_of: dict[str, tuple[int, str]] = {}

    def part(ref: str, kind: str, name: str, pins_: tuple[str, ...], **kw: object) -> None:
        parts[ref] = Part(ref, kind, name, pins_, **kw)  # type: ignore[arg-type]

    def res(ref: str, ohms: float, name: str, a: str, b: str, bom: str, fit: str = "") -> None:
        part(ref, RESISTOR, name, ("1", "2"), value=_ohms(ohms), ohms=ohms, bom=bom, fit=fit)
        wire(a, f"{ref}.1")
        wire(b, f"{ref}.2")

    def wire(net: str, *terminals: str) -> None:
        nets.setdefault(net, []).extend(terminals)

    def gpio(key: str) -> str | None:
        bcm = getattr(pins, key)
        if bcm is None:
            return None
        gpio_of[key] = (bcm, key)
        wire(key, f"PI.GPIO{bcm}")
        return key

    part("PI", PI, "Raspberry Pi (any with the 40-pin header)",
         (*(f"GPIO{n}" for n in HEADER_GPIOS), "3V3", "5V", "GND"), bom="pi")
    wire("GND", "PI.GND")
    wire("3V3", "PI.3V3")
    wire("5V", "PI.5V")

    # The motor supply: the pack, its fuse at the + terminal, the box's switch, the driver.
    part("BT1", BATTERY, "motor pack, 3 × C alkaline", ("+", "-"), value="4.5 V", bom="battery")
    part("F1", FUSE, "polyfuse at the pack's + terminal", ("1", "2"), value="RXEF200",
         bom="fuse")
    part("SW2", SWITCH, "the battery box's switch", ("1", "2"), bom="battery")
    wire("BAT+", "BT1.+", "F1.1")
    wire("FUSED", "F1.2", "SW2.1")
    wire("VM", "SW2.2")
    wire("PGND", "BT1.-")
    # The motor side's ground joins the Pi's with one wire, at the driver (hardware/power.md).
    part("W1", WIRE, "the ground wire from the Pi to the driver", ("1", "2"), bom="stripboard")
    wire("GND", "W1.1")
    wire("PGND", "W1.2")
    part("C3", CAPACITOR, "bulk capacitor at VM", ("1", "2"), value="470 µF", bom="caps_bulk")
    part("C4", CAPACITOR, "ceramic at VM", ("1", "2"), value="100 nF", bom="caps")
    wire("VM", "C3.1", "C4.1")
    wire("PGND", "C3.2", "C4.2")

    # The dual H-bridge: channel A the roller, channel B the rotator (option A).
    # A TB6612FNG's own logic supply and PWM inputs go to the Pi's 3V3 (hardware/power.md):
    # the firmware drives AIN1/AIN2 as a DRV8833's IN1/IN2, and its STBY is nSLEEP here.
    spec = build.driver
    logic = (*filter(None, (DRIVERS[spec].vcc_pin,)), *DRIVERS[spec].pwm_pins)
    part("U1", DRIVER, f"dual H-bridge ({spec} carrier)",
         ("AIN1", "AIN2", "BIN1", "BIN2", "nSLEEP", "AOUT1", "AOUT2", "BOUT1", "BOUT2", "VM",
          "GND", *logic), value=spec, bom="driver")
    wire("VM", "U1.VM")
    wire("PGND", "U1.GND")
    if logic:
        wire("3V3", *(f"U1.{pin}" for pin in logic))
    for key, pin, ref in (("motor_in1", "AIN1", "R1"), ("motor_in2", "AIN2", "R2")):
        gpio(key)
        wire(key, f"U1.{pin}")
        res(ref, 10e3, f"pull-down on {pin}", key, "PGND", "r10k")

    # nSLEEP: straight from motor_sleep, or the one-shot's Q with the dead-man fitted.
    gpio("motor_sleep")
    if pins.deadman is not None:
        part("U2", ONESHOT, "dead-man retriggerable one-shot", ("A", "B", "CLR", "Q", "RC",
                                                                  "CEXT", "VCC", "GND"),
             value="TPUL2G123", bom="oneshot")
        wire("motor_sleep", "U2.CLR")
        gpio("deadman")
        wire("deadman", "U2.B")
        res("R15", 10e3, "pull-down on the one-shot's B input", "deadman", "GND", "r10k")
        wire("GND", "U2.A", "U2.GND")
        wire("3V3", "U2.VCC")
        part("C8", CAPACITOR, "one-shot decoupling", ("1", "2"), value="100 nF",
             bom="oneshot_decoupling")
        wire("3V3", "C8.1")
        wire("GND", "C8.2")
        res("R16", REXT_OHMS, "one-shot timing resistor Rext", "3V3", "oneshot_rc",
            "oneshot_rc")
        part("C7", CAPACITOR, "one-shot timing capacitor Cext", ("1", "2"), value="1 µF film",
             bom="oneshot_cext")
        wire("oneshot_rc", "U2.RC", "C7.1")
        wire("oneshot_cext", "C7.2", "U2.CEXT")
        sleep_net = "nsleep"
        wire(sleep_net, "U2.Q")
    else:
        sleep_net = "motor_sleep"
    wire(sleep_net, "U1.nSLEEP")
    res("R3", 2.2e3, "pull-down on nSLEEP", sleep_net, "PGND", "r2k2")
    if pins.sleep_sense is not None:
        res("R14", 1e3, "nSLEEP read-back series resistor", sleep_net, "sleep_sense", "r1k")
        gpio("sleep_sense")

    # The roller: AOUT1 -> the lid's power contact (closed only with the lid shut) -> motor.
    part("M1", MOTOR, "roller motor (130/260 size)", ("1", "2"), ohms=ROLLER_WINDING[0],
         bom="roller")
    part("S3", CONTACT, "lid power contact, in the roller's lead", ("COM", "NO"),
         actuator="lid_closed", bom="power_contact",
         fit="it replaces the toy's lid switch (the cover switch in the roller motor's "
             "lead): the place and the lead stay, the toy's switch does not, since it has no "
             "published DC rating ([power.md](power.md), \"The lid interlock, in copper\"); "
             "do not rewire the toy's switch to a GPIO")
    part("D1", TVS, "TVS across the roller", ("1", "2"), value="SMBJ7.0CA", bom="tvs")
    part("C1", CAPACITOR, "ceramic across the roller", ("1", "2"), value="100 nF", bom="caps")
    wire("roller_out1", "U1.AOUT1", "S3.COM")
    wire("roller_m1", "S3.NO", "M1.1", "D1.1", "C1.1")
    wire("roller_out2", "U1.AOUT2", "M1.2", "D1.2", "C1.2")
    if pins.power_contact_sense is not None:
        res("R11", 100e3, "power contact bias", "3V3", "roller_out1", "r100k")
        res("R12", 100e3, "read-back gate resistor", "roller_m1", "pc_gate", "r100k")
        res("R13", 1e6, "read-back gate pull-down", "pc_gate", "GND", "r1m")
        part("Q2", MOSFET, "power contact read-back switch", ("G", "D", "S"), value="AO3400A",
             bom="mosfet")
        wire("pc_gate", "Q2.G")
        gpio("power_contact_sense")
        wire("power_contact_sense", "Q2.D")
        wire("GND", "Q2.S")

    # The rotator: through a contact of the full-open switch, on channel B or on a MOSFET.
    part("M2", MOTOR, "rotator gear motor (N20)", ("1", "2"), ohms=ROTATOR_WINDING[0],
         bom="rotator")
    part("S4", CONTACT, "full-open power contact, in the rotator's lead", ("COM", "NO"),
         actuator="lid_full", bom="power_contact")
    part("C2", CAPACITOR, "ceramic across the rotator", ("1", "2"), value="100 nF", bom="caps")
    wire("rot_m1", "S4.NO", "M2.1", "C2.1")
    gpio("rotator")
    if build.rotator == "bridge":
        wire("rotator", "U1.BIN1")
        res("R4", 10e3, "pull-down on BIN1", "rotator", "PGND", "r10k")
        if gpio("rotator_in2"):
            wire("rotator_in2", "U1.BIN2")
            res("R5", 4.7e3, "pull-down on BIN2", "rotator_in2", "PGND", "r4k7")
        else:
            wire("PGND", "U1.BIN2")
        wire("rot_out1", "U1.BOUT1", "S4.COM")
        wire("rot_out2", "U1.BOUT2", "M2.2", "C2.2")
        if pins.rotator_contact_sense is not None:
            res("R17", 100e3, "rotator contact bias", "3V3", "rot_out1", "r100k")
    else:
        part("Q1", MOSFET, "rotator low-side switch", ("G", "D", "S"), value="AO3400A",
             bom="mosfet")
        part("D2", DIODE, "flyback diode across the rotator", ("K", "A"), value="1N5819",
             bom="schottky")
        wire("rotator", "Q1.G")
        res("R4", 10e3, "pull-down on the MOSFET gate", "rotator", "PGND", "r10k")
        wire("VM", "S4.COM")
        wire("rot_m1", "D2.K")
        wire("rot_out2", "M2.2", "D2.A", "Q1.D", "C2.2")
        wire("PGND", "Q1.S", "U1.BIN1", "U1.BIN2")
        wire("bout1_unused", "U1.BOUT1")  # channel B is not used: its outputs go nowhere
        wire("bout2_unused", "U1.BOUT2")
        gpio("rotator_in2")  # set anyway (hardware/pinout.md says not to): a pin to nothing

    if pins.rotator_contact_sense is not None:  # as the power contact's read-back
        res("R18", 100e3, "rotator read-back gate resistor", "rot_m1", "rc_gate", "r100k")
        res("R19", 1e6, "rotator read-back gate pull-down", "rc_gate", "GND", "r1m")
        part("Q3", MOSFET, "rotator contact read-back switch", ("G", "D", "S"),
             value="AO3400A", bom="mosfet")
        wire("rc_gate", "Q3.G")
        gpio("rotator_contact_sense")
        wire("rotator_contact_sense", "Q3.D")
        wire("GND", "Q3.S")

    # The lid's sensing switches (gold contacts, wetting pull-ups) and the other inputs.
    part("S1", SPDT, "lid sensing switch (NO: shut, NC: not shut)", ("COM", "NO", "NC"),
         value="SS-01GL", actuator="lid_closed", bom="sensing")
    wire("GND", "S1.COM")
    gpio("lid_closed")
    wire("lid_closed", "S1.NO")
    res("R6", 2.2e3, "wetting pull-up on lid_closed", "3V3", "lid_closed", "r2k2")
    if gpio("lid_closed_nc"):
        wire("lid_closed_nc", "S1.NC")
        res("R7", 2.2e3, "wetting pull-up on lid_closed_nc", "3V3", "lid_closed_nc", "r2k2")
    else:
        wire("s1_nc_unused", "S1.NC")  # the NC twin not wired: its contact goes nowhere
    part("S2", CONTACT, "lid fully-open sensing switch", ("COM", "NO"), value="SS-01GL",
         actuator="lid_full", bom="sensing")
    wire("GND", "S2.COM")
    gpio("lid_open")
    wire("lid_open", "S2.NO")
    res("R8", 2.2e3, "wetting pull-up on lid_open", "3V3", "lid_open", "r2k2")
    part("SW1", BUTTON, "push button", ("1", "2"), actuator="button", bom="button")
    gpio("button")
    wire("button", "SW1.1")
    wire("GND", "SW1.2")
    for ref, key, name in (("H1", "home", "home detent Hall switch"),
                           ("H2", "yellow_back", "side Hall switch")):
        part(ref, HALL, name, ("VDD", "OUT", "GND"), value="AH1806", bom="hall")
        gpio(key)
        wire(key, f"{ref}.OUT")
        wire("3V3", f"{ref}.VDD")
        wire("GND", f"{ref}.GND")
        cap = "C5" if ref == "H1" else "C6"
        part(cap, CAPACITOR, f"decoupling at {ref}", ("1", "2"), value="100 nF", bom="caps")
        wire("3V3", f"{cap}.1")
        wire("GND", f"{cap}.2")
    if gpio("exit_beam"):
        part("B1", BEAM, "IR break-beam at the slot (emitter and receiver)", ("VCC", "OUT",
                                                                            "GND"), bom="beam")
        wire("exit_beam", "B1.OUT")
        res("R9", 10e3, "pull-up on the beam receiver", "3V3", "exit_beam", "r10k",
            fit="fitted always, however short the leads, from the receiver's output to 3V3 at "
                "the Pi end: the Pi's internal pull-up (about 50 kΩ) is too weak to give a "
                "clean edge against the cable's capacitance and the motor noise")
        wire("3V3", "B1.VCC")
        wire("GND", "B1.GND")
    part("LED1", LED, "status LED", ("A", "K"), bom="led")
    gpio("led")
    res("R10", 330.0, "LED resistor", "led", "led_a", "led")
    wire("led_a", "LED1.A")
    wire("GND", "LED1.K")
    part("U3", AMP, "I2S amplifier",
         ("SD", "BCLK", "LRC", "DIN", "VIN", "GND", "OUT+", "OUT-"), value="MAX98357A", bom="amp")
    gpio("amp_enable")
    wire("amp_enable", "U3.SD")
    for net, bcm, pin in (("i2s_bclk", 18, "BCLK"), ("i2s_lrc", 19, "LRC"),
                          ("i2s_din", 21, "DIN")):
        wire(net, f"PI.GPIO{bcm}", f"U3.{pin}")
    wire("5V", "U3.VIN")
    wire("GND", "U3.GND")
    part("LS1", SPEAKER, "speaker", ("1", "2"), bom="speaker")
    wire("spk_p", "U3.OUT+", "LS1.1")
    wire("spk_n", "U3.OUT-", "LS1.2")

    motor_side = {"VM", "BAT+", "FUSED", "PGND", "roller_out1", "roller_m1", "roller_out2",
                  "rot_out1", "rot_m1", "rot_out2"}
    # The driver carrier's header carries VM beside its inputs: those wires can reach it too.
    at_driver = {"motor_in1", "motor_in2", "motor_sleep", "nsleep", "rotator", "rotator_in2"}
    rails = {"GND": "GND", "3V3": "3V3", "5V": "5V"}
    built: dict[str, Net] = {}
    at: dict[str, str] = {}
    for name, terminals in nets.items():
        bcm_key = gpio_of.get(name)
        reaches = ("GND", "3V3", "VM") if name in motor_side | at_driver else ("GND", "3V3")
        if bcm_key and beside_5v(bcm_key[0]):  # a wire at the header can reach 5 V there
            reaches += ("5V",)
        if name in ("GND", "3V3", "5V"):
            reaches = ()
        elif name in ("VM", "PGND"):
            reaches = tuple(r for r in ("GND", "3V3", "VM") if r != name and
                            not (name == "PGND" and r == "GND"))
        built[name] = Net(name, tuple(terminals), gpio=bcm_key[0] if bcm_key else None,
                          key=bcm_key[1] if bcm_key else "", rail=rails.get(name, ""),
                          reaches=reaches)
        for t in terminals:
            if t in at:
                raise ValueError(f"{t} is on two nets: {at[t]} and {name}")
            at[t] = name
    return Circuit(pins, build, MappingProxyType(parts), MappingProxyType(built),
                   MappingProxyType(at))


def _ohms(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:g} MΩ"
    if value >= 1e3:
        return f"{value / 1e3:g} kΩ"
    return f"{value:g} Ω"


# --- the motors and the power contact's rating --------------------------------------------

# Winding resistance of the motors, as a range: a 130/260-size roller motor wound for 3-6 V
# (about 1.3-1.9 Ω is a 2.4-3.5 A stall on a stiff 4.5 V supply), and an N20 6 V gear
# motor. These are what to expect, not a datasheet's: measure yours (hardware/bring-up.md).
ROLLER_WINDING = (1.0, 2.5)
ROTATOR_WINDING = (8.0, 30.0)


class ContactRating(NamedTuple):
    """A power contact's published DC rating, at the lowest DC voltage its table gives."""

    part: str
    volts: float  # the table's row: the rating holds at and below it
    resistive: float  # A, steady state
    motor_no: float  # A, steady state, a motor load on the NO contact
    inrush_no: float  # A, the NO contact's inrush limit
    ohms: float  # contact resistance, new (max)
    source: str


# The power contacts (roller and rotator): Omron X-10G series, a DC basic switch with a
# magnetic blowout. Its Ratings table at 8 VDC: resistive 10 A; motor load NO 2.5 A (a
# motor load's inrush being 6 times its steady-state current); Contact Specification:
# inrush NO 15 A max, contact resistance 15 mΩ max (Omron X series datasheet).
POWER_CONTACT = ContactRating("Omron X-10GW (hinge lever)", 8.0, 10.0, 2.5, 15.0, 0.015,
                              "Omron X General-purpose Basic Switch datasheet, Ratings and "
                              "Contact Specification")
CONTACT_OHMS = POWER_CONTACT.ohms


def stall_current(volts: float, winding: float, through_driver: bool = True,
                  driver: str = "DRV8833") -> float:
    """A stalled motor's current, A: the supply over the winding plus the path's resistance
    (the driver's high and low side, typical, and a closed contact). A stiff supply: a
    fresh pack's own resistance only lowers it."""
    path = (DRIVERS[driver].rds_on if through_driver else 0.0) + CONTACT_OHMS
    return volts / (winding + path)


def roller_stall_worst() -> float:
    """The highest stall current the roller's lead can carry through the driver, from the
    lowest winding resistance on the freshest pack the docs allow (4×AA alkaline)."""
    return max(stall_current(fresh, ROLLER_WINDING[0]) for _, fresh in VM_PACKS.values())


# --- the bill of materials -----------------------------------------------------------------


# --- tables for the docs ------------------------------------------------------------------

def header_pin(bcm: int) -> int:
    """The physical header pin (1-40) of a GPIO on every 40-pin Pi."""
    return HEADER_PINS[bcm]


# The header's 5 V pins (2 and 4; 1 is 3V3, 6 GND).
HEADER_5V = (2, 4)


def header_neighbours(pin: int) -> set[int]:
    """The pins beside ``pin`` on the 2 × 20 header: along its row (odd pins one row, even
    the other, two apart) and across (1 faces 2, 3 faces 4, ...)."""
    across = pin + 1 if pin % 2 else pin - 1
    return {p for p in (pin - 2, pin + 2, across) if 1 <= p <= 40}


def beside_5v(bcm: int) -> bool:
    """A GPIO whose header pin is beside a 5 V pin (GPIO 2, pin 3, faces pin 4): a slipped
    jumper or a solder bridge there can short it to 5 V."""
    return bcm in HEADER_PINS and any(header_pin(bcm) in header_neighbours(v)
                                      for v in HEADER_5V)


# BCM GPIO -> physical pin of the 40-pin header (the same on every model with one).
HEADER_PINS: Mapping[int, int] = MappingProxyType({
    2: 3, 3: 5, 4: 7, 14: 8, 15: 10, 17: 11, 18: 12, 27: 13, 22: 15, 23: 16, 24: 18, 10: 19,
    9: 21, 25: 22, 11: 23, 8: 24, 7: 26, 0: 27, 1: 28, 5: 29, 6: 31, 12: 32, 13: 33, 19: 35,
    16: 36, 26: 37, 20: 38, 21: 40})


def pins_fields() -> tuple[str, ...]:
    """The keys of ``hal.base.Pins``, in order (a test checks PIN_ROLES names them all)."""
    return tuple(f.name for f in fields(Pins))
