"""The parts' published figures the circuit (hal/circuit.py) and its electrical model
(hal/electrical.py) use: the Pi's GPIO pads and what damages them, and the dual H-bridges.
Each figure names its source; one no maker publishes is marked an estimate.

Kept free of anything slow: ``launcher run`` imports it through hal/circuit.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

# --- the Pi's GPIO pads ----------------------------------------------------------------------

# Electrical figures of the Pi's GPIO (Raspberry Pi documentation, "GPIO pads": BCM2835
# pulls 50-65 kΩ, VIL 0.9 V, VIH 1.6 V; BCM2711 pulls 33-73 kΩ, VIL 0.8 V, VIH 2.0 V). The
# model takes the stricter of each: low below 0.8 V, high above 2.0 V.
PI_PULL_OHMS = (33e3, 73e3)  # the widest range, BCM2711's
PI_PULL_TYPICAL = 50e3
PI_VIL, PI_VIH = 0.8, 2.0
# GPIO 2 and 3 (I2C1's SDA and SCL) have fixed 1.8 kΩ pull-ups to 3.3 V on the Pi's own
# board (Raspberry Pi documentation, "GPIO": "GPIO2 and GPIO3 have fixed pull-up resistors"),
# there whenever the 3.3 V rail is, whatever the SoC's pulls.
BOARD_PULL_UPS: Mapping[int, float] = MappingProxyType({2: 1.8e3, 3: 1.8e3})
PI_OUTPUT_OHMS = 30.0  # an output's own resistance, roughly (8 mA drive at a few tenths of a V)

# What damages a pad. Raspberry Pi documentation, "General Purpose I/O (GPIO)": every GPIO
# bank is supplied from 3.3 V, and "connection of a GPIO to a voltage higher than 3.3V will
# likely destroy the GPIO block within the SoC" (the pins are not 5 V tolerant); "GPIO Pads
# Control": the pads' electronics are designed for 16 mA, a safe current whatever the drive
# strength, and "there is no guaranteed maximum safe current" above it; a pad driven high
# into a short to ground, or low against 3.3 V, "in due time it will fail". No figure is
# published for a Pi 5's RP1: the same are taken for it.
PAD_MAX_AMPS = 0.016
# A pad's protection diodes to its 3.3 V supply and to ground: they conduct once the pin is
# this far outside the rails. Estimates: neither Broadcom nor Raspberry Pi publishes the
# pads' absolute maximum or their diodes; a CMOS pad's is commonly its supply + 0.5 V, and a
# diode's resistance a few ohms.
CLAMP_VF = 0.5
CLAMP_OHMS = 10.0
# Current the copper may push into the Pi's 3.3 V rail before the rail rises past it: its
# regulator sources and does not sink, so only what the Pi's own 3.3 V loads draw can take
# it. An estimate (no published figure): a Pi's 3.3 V loads draw some tens of mA at least.
RAIL_SINK_MAX_AMPS = 0.05
# A damaged pad, as the model has it (hal/circuit_faults.py, ``PinDamaged``): its driver
# and its pull dead, and one of its protection diodes failed short, holding the pin to that
# rail through this much. An estimate: a pad damaged by overstress is commonly found stuck
# at a rail, and a failed diode measures tens to hundreds of ohms.
STUCK_OHMS = 100.0
PIN_DAMAGE_MODES = ("stuck_high", "stuck_low")

# --- the dual H-bridges ----------------------------------------------------------------------

# The body diodes of an H-bridge's output FETs: every output is clamped to VM above and to
# ground below, awake or asleep: hardware/power.md ("Flyback diodes") relies on them as the
# motor's flyback path, with no external diodes. Neither datasheet gives their forward
# drop: 0.7 V and 0.1 Ω are estimates.
BODY_DIODE_VF = 0.7
BODY_DIODE_OHMS = 0.1


class DriverSpec(NamedTuple):
    """What the model needs of a dual H-bridge (its datasheet's figures)."""

    vm_min: float  # V: below this the bridges are off (the lowest supply they drive at)
    vil_in: float  # V: AIN/BIN (and PWMA/PWMB) low below this
    vih_in: float
    vil_sleep: float  # V: nSLEEP (STBY) low below this
    vih_sleep: float
    in_pulldown: float  # Ω: the inputs' internal pull-down
    sleep_pulldown: float
    rds_on: float  # Ω: high side + low side, typical
    source: str
    vm_max: float = 0.0  # V: the highest recommended supply
    vm_abs: float = 0.0  # V: the absolute maximum supply
    # Overcurrent protection: a FET's current past this (A) disables that H-bridge, which
    # retries after a few ms and trips again while the short lasts (None: no OCP).
    i_ocp: float | None = None
    # The continuous rating (A, per H-bridge): a steady current past it heats the die to its
    # thermal shutdown, which disables every output (the model's estimate of when it trips).
    i_continuous: float = 0.0
    tsd_celsius: float = 0.0
    # A separate logic supply (the TB6612's VCC, wired to the Pi's 3V3): its pin and range;
    # below the range the logic is off and so is every output. "" : the logic runs from VM.
    vcc_pin: str = ""
    vcc_range: tuple[float, float] = (0.0, 0.0)
    # Each bridge's PWM input (tied high on this unit: a low one short-brakes the bridge).
    pwm_pins: tuple[str, ...] = ()
    fault_pin: str = ""  # nFAULT, where the chip has one (open drain, low on OCP or TSD)


DRIVERS: Mapping[str, DriverSpec] = MappingProxyType({
    # TI SLVSAR1E: §6.3 VM 2.7-10.8 V, §6.1 VM absolute maximum 11.8 V; §6.5 nSLEEP VIL 0.5 V
    # / VIH 2.5 V, other inputs 0.7 V / 2 V, 100 kΩ pull-downs on AIN/BIN; §7.3.4 500 kΩ on
    # nSLEEP; §1 HS + LS 360 mΩ, 1.5 A RMS per H-bridge; §6.5 IOCP 2 A minimum, TTSD 150 °C
    # minimum; §7.3.5.1 an overcurrent on any FET (a short to ground, to the supply or across
    # the winding) disables that H-bridge alone and drives nFAULT low until the retry;
    # §7.3.5.2 overtemperature disables every FET.
    "DRV8833": DriverSpec(2.7, 0.7, 2.0, 0.5, 2.5, 100e3, 500e3, 0.36,
                          "TI DRV8833, SLVSAR1E", vm_max=10.8, vm_abs=11.8, i_ocp=2.0,
                          i_continuous=1.5, tsd_celsius=150.0, fault_pin="nFAULT"),
    # Toshiba TB6612FNG datasheet (2014-10-01): pin functions, VM 2.5-13.5 V (its Operating
    # Range: 1.0 A from VM 4.5 V, 0.4 A below), VCC 2.7-5.5 V; Absolute Maximum Ratings VM
    # 15 V, VCC 6 V; AIN/BIN, PWMA/PWMB and STBY each with a 200 kΩ internal pull-down;
    # Electrical Characteristics: inputs and STBY high above 0.7·VCC, low below 0.3·VCC (at
    # VCC 3.3 V: 2.31 V and 0.99 V), output saturating voltage Vsat(U+L) 0.5 V typical at
    # Io = 1 A (the high and low side together 0.5 Ω, as its Features say, "upper+lower Typ.
    # @ VM ≥ 5 V"); 1.2 A average per channel; a thermal shutdown circuit (175 °C, a design
    # figure) and a low-voltage detector; no overcurrent protection and no fault output.
    "TB6612FNG": DriverSpec(2.5, 0.99, 2.31, 0.99, 2.31, 200e3, 200e3, 0.5,
                            "Toshiba TB6612FNG datasheet", vm_max=13.5, vm_abs=15.0,
                            i_continuous=1.2, tsd_celsius=175.0, vcc_pin="VCC",
                            vcc_range=(2.7, 5.5), pwm_pins=("PWMA", "PWMB")),
})
