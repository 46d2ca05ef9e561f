"""What the ISO 13849-1 estimate needs of the circuit's parts: each part's failure rate (from a
switch maker's durability, a chip maker's FIT, or a stated estimate), which of its failure
modes are dangerous to a safety function, which parts form each channel of the two safety
functions, the use the switches' wear is counted from, and the measures against common cause
failure the project can claim. ``bench/iso13849.py`` computes the estimate from these and the
circuit campaign's kept rows; hardware/SAFETY.md shows it (``docs/blocks.py --print iso13849``).

Every figure says where it comes from (``SOURCES``), and one that could not be checked
against public material is marked an estimate with its basis. The edition followed is
ISO 13849-1:2015 (the third): a channel's MTTFd is capped at 100 years for Category 3.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from hal.circuit import (
    CONTACT,
    DRIVER,
    MOSFET,
    ONESHOT,
    PI,
    SPDT,
    Circuit,
    Part,
)

EDITION = "ISO 13849-1:2015"
HOURS_PER_YEAR = 8760.0

# Where each figure comes from: a key of this map is what a figure's ``source`` names.
SOURCES: Mapping[str, str] = MappingProxyType({
    "omron-x": "Omron, General-purpose Basic Switch X datasheet, Characteristics: durability "
               "1,000,000 operations min. mechanical, 100,000 operations min. electrical "
               "(at its rated load, 20 operations/min)",
    "omron-ss": "Omron, SS Subminiature Basic Switch datasheet: \"durability of 30,000,000 "
                "operations\"",
    "ti-fit": "Texas Instruments, SFFS115 (the Functional Safety FIT Rate, FMD and Pin FMA "
              "report of a sister stepper driver of the automotive -Q1 line), §2: 23 FIT for "
              "the whole part by IEC TR 62380, and Siemens SN 29500-2's "
              "reference rate of 60 FIT for a CMOS/BiCMOS analog and mixed-signal IC up to "
              "50 V; TI publishes no FIT for the DRV8833, the TB6612 nor the TPUL2G123",
    "half-dangerous": "ISO 13849-1:2015 C.5.1, as Novotechnik's MTTFd declaration quotes it: "
                      "50 % of an electrical component's failures are taken as dangerous",
    "b10d": "ISO 13849-1:2015 C.4: MTTFd = B10d / (0.1 × n_op), n_op the operations a year "
            "(LinMot C1100 installation guide's worked example; Elettrotec's B10d FAQ)",
    "cap": "ISO 13849-1:2015 4.5.2: a channel's MTTFd above 100 years counts as 100 years "
           "for Category 3 (the LinMot guide's example caps 126.75 years so)",
    "bands": "ISO 13849-1 Tables 4 and 5 (Keyence, \"PL Parameters\"): DC none < 60 %, low "
             "60-90 %, medium 90-99 %, high >= 99 %; MTTFd low 3-10, medium 10-30, high 30-100 "
             "years; a CCF score of 65 or more",
    "ccf": "ISO 13849-1 Annex F, Table F.1 (SYTCOM's reproduction of it: separation 15 "
           "points, diversity 20; a measure scores in full or not at all, F.2; 65 needed). The "
           "other measures' points (15, 5, 5, 5, 25, 10: 100 in all) are as the table is "
           "commonly quoted: not checked against public material here",
    "figure5": "ISO 13849-1:2015 Figure 5, Category 3's columns, as its simplified table is "
               "commonly quoted (the 2006 edition's Table 7): DCavg low gives b, c, d for "
               "MTTFd low, medium, high; medium gives c, d, d. Not checked cell by cell "
               "against public material here",
    "symmetric": "ISO 13849-1:2015 D.2: two channels of unequal MTTFd count as "
                 "2/3 × (C1 + C2 − 1 / (1/C1 + 1/C2)); as commonly quoted, not checked here",
    "pilz-10y": "Pilz FAQ 180115 (standards): without the maker's data behind a part, an MTTFd "
                "of at most about 10 years is appropriate",
})


class Usage(NamedTuple):
    """How much a launcher is used: the switches wear by it. Stated, not measured: a builder
    puts their own figures here."""

    presses_per_game: int  # the button's, for the record: no part of the two functions wears by it
    lid_cycles_per_game: int  # each flip (the lid opened fully and shut) and each reload
    games_per_day: int
    days_per_year: int

    @property
    def lid_cycles_per_year(self) -> int:
        """n_op of every switch the lid works."""
        return self.lid_cycles_per_game * self.games_per_day * self.days_per_year


# A family that plays every day: three games of about forty presses, each with six lid cycles
# (Flip cards turn the cartridge; a reload). Generous on purpose: more cycles, less MTTFd.
USAGE = Usage(presses_per_game=40, lid_cycles_per_game=6, games_per_day=3, days_per_year=365)


class Rate(NamedTuple):
    """A part's failure rate, as its source gives it: ``b10d`` (operations until 10 % have
    failed dangerously: it wears with use) or ``mttfd_years`` (a constant rate)."""

    what: str
    source: str  # a key of SOURCES
    estimate: str  # "" when the figure is the source's own; else the basis of the estimate
    b10d: float | None = None
    mttfd_years: float | None = None


def fit_to_mttfd(fit: float, dangerous_share: float = 0.5) -> float:
    """Years to a dangerous failure of a part failing ``fit`` times in 1e9 hours, of which
    ``dangerous_share`` are dangerous (running all year round, as a worst case)."""
    return 1e9 / (fit * dangerous_share) / HOURS_PER_YEAR


# B10d from a maker's durability: that durability (a minimum) taken as B10, and half the
# failures dangerous: B10d = 2 × B10.
POWER_CONTACT_RATE = Rate(
    "Omron X-10GW: 100,000 operations electrical durability as B10, half of them dangerous",
    "omron-x", "the maker gives durability, not B10d: B10d = 2 × the electrical durability "
    "(a contact that usually breaks no current, since the driver sleeps first, wears as its "
    "mechanical 1,000,000; the electrical figure is the pessimistic one)",
    b10d=2 * 100_000)
SENSING_RATE = Rate(
    "Omron SS-01GL: 30,000,000 operations durability as B10, half of them dangerous",
    "omron-ss", "the maker gives durability, not B10d: B10d = 2 × durability; the contact "
    "carries 1.5 mA (a 2.2 kΩ wetting pull-up at 3.3 V)", b10d=2 * 30_000_000)
IC_RATE = Rate(
    "60 FIT (SN 29500-2's reference rate for a mixed-signal IC), half of them dangerous",
    "ti-fit", "no FIT is published for this part: the reference rate TI quotes for its sister "
    "driver, the higher of its two figures", mttfd_years=fit_to_mttfd(60))
MOSFET_RATE = Rate(
    "60 FIT, as the driver (the reference rate for a mixed-signal IC), half dangerous",
    "ti-fit", "no FIT is published for the AO3400A; a discrete MOSFET is simpler than an IC, "
    "so the IC's rate is pessimistic", mttfd_years=fit_to_mttfd(60))
PI_RATE = Rate(
    "the whole Raspberry Pi (SoC, SD card, regulators): 10 years",
    "pilz-10y", "Raspberry Pi publishes no failure rate for its boards: the pessimistic "
    "figure for a part whose maker gives none", mttfd_years=10.0)

# By the part's model (``Part.value``), its BOM line (``Part.bom``) or its kind, first found.
RATES: Mapping[str, Rate] = MappingProxyType({
    "power_contact": POWER_CONTACT_RATE,
    "SS-01GL": SENSING_RATE,
    "DRV8833": IC_RATE, "TB6612FNG": IC_RATE, "TPUL2G123": IC_RATE,
    "AO3400A": MOSFET_RATE,
    PI: PI_RATE,
})


def rate_of(part: Part) -> Rate:
    """The failure rate of ``part``; KeyError naming it if no figure is kept for it."""
    for key in (part.value, part.bom, part.kind):
        if key in RATES:
            return RATES[key]
    raise KeyError(f"{part.ref} ({part.name}): no failure rate in hal.reliability.RATES")


def mttfd_years(part: Part, usage: Usage = USAGE) -> float:
    """The part's own MTTFd, uncapped (the cap is a channel's, not a part's)."""
    r = rate_of(part)
    if r.b10d is not None:
        return r.b10d / (0.1 * usage.lid_cycles_per_year)
    assert r.mttfd_years is not None
    return r.mttfd_years


# --- which failures are dangerous --------------------------------------------------------------

# Each failure mode of a channel's part, for the motor the safety function stops: dangerous
# (the channel no longer stops it) with why, or safe with why. A mode of a part's kind that
# is in neither map is an error: a new failure mode must be judged before it is counted.
ROLLER, ROTATOR = "roller", "rotator"


class Judged(NamedTuple):
    dangerous: bool
    why: str


def _modes(dangerous: Mapping[str, str], safe: Mapping[str, str]) -> Mapping[str, Judged]:
    return MappingProxyType({**{m: Judged(True, w) for m, w in dangerous.items()},
                             **{m: Judged(False, w) for m, w in safe.items()}})


_SHUT = "reads the lid where it is not, so the firmware drives"
JUDGED: Mapping[str, Mapping[str, Judged]] = MappingProxyType({
    CONTACT: _modes(
        {"welded": "made whatever the lid does", "leads_pinched": "the same circuit as a "
         "weld", "plunger_stuck": "held as if the lid pressed it"},
        {"open": "never made: the power contact's motor cannot turn, the sensing switch's "
                 "lid position is never seen, so the firmware never drives for it"}),
    SPDT: _modes(
        {"no_welded": f"NO {_SHUT}", "plunger_stuck_pressed": f"both contacts {_SHUT}"},
        {"nc_welded": "NC says not shut: the firmware refuses to drive",
         "no_open": "NO never says shut: the firmware never drives",
         "nc_open": "NO alone still stops the roller (only the NO/NC check is lost)",
         "plunger_stuck_released": "says not shut: the firmware never drives"}),
    DRIVER: _modes(
        {"aout1_stuck_high": ROLLER, "aout2_stuck_high": ROLLER,
         "bout1_stuck_high": ROTATOR, "bout2_stuck_high": ROTATOR,
         "nsleep_pulled_up": "the driver may be awake whatever the Pi asks",
         "nsleep_ignored": "the driver's sleep, the channel's stop, is gone"},
        {f"{side}{n}_stuck_{how}": "an output that cannot drive high cannot turn the motor "
         "alone" for side in ("aout", "bout") for n in (1, 2) for how in ("low", "open")}),
    ONESHOT: _modes(
        {"q_stuck_high": "nSLEEP held high: the driver awake whatever the Pi drives"},
        {"q_stuck_low": "nSLEEP held low: the driver asleep", "rext_open": "a short pulse: "
         "the driver sleeps", "b_on_a_toggling_line": "the Pi's CLR still drops nSLEEP"}),
    MOSFET: _modes({"shorted": "the rotator's low side made whatever the gate"},
                   {"open": "the rotator cannot turn"}),
})


def judged(part: Part, mode: str, motor: str) -> Judged:
    """Whether ``mode`` of ``part`` is dangerous to the function that stops ``motor``; an
    output stuck high counts only on that motor's side of the driver."""
    table = JUDGED.get(part.kind)
    if table is None or mode not in table:
        raise KeyError(f"{part.ref}: failure mode {mode!r} of a {part.kind} is not judged in "
                       "hal.reliability.JUDGED")
    j = table[mode]
    if j.why in (ROLLER, ROTATOR):
        side = "the roller's" if j.why == ROLLER else "the rotator's"
        if j.why != motor:
            return Judged(False, f"an output on {side} side, not this motor's")
        return Judged(True, f"an output of {side} side driving whatever its inputs")
    return j


# --- the two safety functions and their channels -----------------------------------------------


class Function(NamedTuple):
    """A safety function and its two channels: the copper one (a contact in the motor's lead)
    and the firmware's (a sensing switch, the Pi, and what the Pi drives)."""

    key: str
    name: str
    motor: str
    contact: str  # the copper channel's part
    sensor: str  # the firmware channel's input


FUNCTIONS: tuple[Function, ...] = (
    Function("roller", "the roller stops when the lid opens", ROLLER, "S3", "S1"),
    Function("rotator", "the rotator turns only with the lid fully open", ROTATOR, "S4", "S2"),
)


def channels(f: Function, c: Circuit) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The parts of each channel of ``f`` in the unit ``c``: the copper contact alone; the
    sensing switch, the Pi, the dead-man one-shot when fitted, and the motor's switch (the
    driver, or the rotator's MOSFET)."""
    out = "Q1" if f.motor == ROTATOR and "Q1" in c.parts else "U1"
    firmware = [f.sensor, "PI"]
    if "U2" in c.parts and out == "U1":
        firmware.append("U2")
    firmware.append(out)
    return (f.contact,), tuple(firmware)


# The Pi's own faults are not in the circuit campaign (it has no failure modes there): its
# diagnostic coverage is a stated estimate, the figure the standard's Annex E is commonly
# quoted as giving a program's simple temporal monitoring (a watchdog): systemd's
# WatchdogSec, fed only while every thread a layer needs is alive, and the lease.
PI_DC = 0.60
PI_DC_BASIS = ("estimate: 60 %, the figure ISO 13849-1 Annex E is commonly quoted as giving a "
               "program's simple temporal monitoring (systemd's watchdog, fed only while "
               "every thread a layer needs lives; the lease): not checked against public "
               "material here, and the campaign injects no fault into the SoC")


# --- measures against common cause failure (Annex F) -------------------------------------------


class Measure(NamedTuple):
    """A measure of Table F.1: its points, the points claimed (all or none, F.2) and why."""

    name: str
    points: int
    claimed: int
    why: str


CCF: tuple[Measure, ...] = (
    Measure("1 Separation: the channels' signal paths apart", 15, 15,
            "the power contacts in the motors' leads and the sensing switches on the Pi's "
            "inputs are separate parts on separate wires, each on its own actuator "
            "(hardware/fitting.md; the common cause `lid_lever_held` is judged apart in the "
            "campaign for that reason)"),
    Measure("2 Diversity: different technologies or principles", 20, 20,
            "one channel is copper (a contact breaking the motor's current), the other "
            "programmable (a gold-contact sensing switch read by the Pi, which sleeps the "
            "driver); the switches are of different series (hal/circuit.py: S3 and S4 an "
            "X-10GW, S1 and S2 an SS-01GL)"),
    Measure("3.1 Protection against over-voltage, over-current, over-temperature", 15, 0,
            "scored 0, as partly done is none (F.2): the polyfuse guards a short of the pack, "
            "the TVS the roller, and the DRV8833 has its own overcurrent, thermal and "
            "undervoltage shutdown (SLVSAR1E §7.3.5), but the Pi's pins have no protection "
            "against a short to 5 V or to the motor supply"),
    Measure("3.2 Well-tried components", 5, 0,
            "scored 0: no part is chosen or certified as well-tried for safety (ISO 13849-2 "
            "Annex D); the power contact is not positive-opening"),
    Measure("4 Assessment: FMEA results used to avoid common cause failures", 5, 5,
            "the circuit campaign enumerates every single fault of the circuit against the "
            "real firmware and is itself mutation-tested (bench/circuit.py, "
            "bench/mutants.py; the tables below)"),
    Measure("5 Competence and training of designers and maintainers", 5, 0,
            "scored 0: nobody's training in common cause failures is recorded"),
    Measure("6.1 EMC: immunity to electromagnetic influences, to the appropriate standards",
            25, 0, "scored 0: no EMC test has been made (a hobby build, not tested to "
                   "IEC 61000-6-2 or the like)"),
    Measure("6.2 Other influences: temperature, shock, vibration, humidity", 10, 0,
            "scored 0: the build is not tested against them (a toy is dropped and knocked)"),
)
CCF_NEEDED = 65
