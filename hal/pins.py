"""Facts about the Pi's header with no gpiozero in sight: the board model, the one choice
of pin factory, the gpiochip that carries the header, and which pins the launcher's own
buses already use.

Kept free of gpiozero imports so that ``launcher doctor`` and the config check can use it
on a Pi Zero in a fraction of a second.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from hal.base import HardwareError

MODEL_FILE = Path("/proc/device-tree/model")
FACTORIES = ("lgpio", "pigpio", "native", "mock")

# The Pi 5 family (5, 500, Compute Module 5) has its header on the RP1 chip: only the
# kernel's gpiochip interface (lgpio) reaches it. pigpio and gpiozero's native factory
# poke the BCM283x registers, which that chip does not have. Same pattern as install.sh.
_PI5_FAMILY = re.compile(r"Raspberry Pi (5|500|Compute Module 5)\b")


def pi_model(model_file: Path | None = None, *, root: Path = Path("/")) -> str | None:
    """The Raspberry Pi model string, or None when this is not a Pi.

    ``root`` stands for ``/`` (tests give a folder); ``model_file`` overrides the path.
    """
    path = model_file if model_file is not None else root / "proc/device-tree/model"
    try:
        model = path.read_bytes().decode("ascii", "replace").strip("\x00\n ")
    except OSError:
        return None
    return model if model.startswith("Raspberry Pi") else None


def is_pi5_family(model: str | None) -> bool:
    """True for a Raspberry Pi 5, 500 or Compute Module 5."""
    return model is not None and _PI5_FAMILY.match(model) is not None


def auto_factory_name(env: dict[str, str] | None = None, model: str | None = None) -> str:
    """What ``pin_factory = "auto"`` means here: GPIOZERO_PIN_FACTORY if set, else lgpio on
    every Raspberry Pi, else mock.

    lgpio reaches the header of every model through the kernel's /dev/gpiochip*, and its
    software PWM covers the 1 kHz the motor uses. pigpio is only ever chosen by name: it
    does not reach a Pi 5, and Raspberry Pi OS Trixie no longer packages it.
    """
    env = dict(os.environ) if env is None else env
    forced = env.get("GPIOZERO_PIN_FACTORY", "").strip().lower()
    if forced:
        return _allowed(forced, model, "GPIOZERO_PIN_FACTORY")
    if model is None:
        return "mock"
    return "lgpio"


def factory_name(setting: str, model: str | None, env: dict[str, str] | None = None) -> str:
    """The one choice of pin factory: ``board.pin_factory`` as given, or what "auto" means
    on this machine (``model`` is ``pi_model()``). A Pi 5 never gets pigpio or native."""
    if setting != "auto":
        return _allowed(setting, model, "board.pin_factory")
    return auto_factory_name(env, model)


def _allowed(name: str, model: str | None, where: str) -> str:
    if name in ("pigpio", "native") and is_pi5_family(model):
        raise HardwareError(
            f'{where} = "{name}" cannot reach the GPIO of a {model} (its header is on the '
            f'RP1 chip): use "lgpio" or "auto"')
    return name


# The gpiochip of the 40-pin header, by the label its kernel driver gives it (what
# `gpiodetect` prints in brackets), most specific first. The number is not fixed: on a Pi 5
# the RP1 chip was gpiochip4 until the kernels of mid 2024 made it gpiochip0
# (raspberrypi/linux#6144), and a Pi 4 also has the firmware's expander (raspberrypi-exp-gpio).
HEADER_CHIP_LABELS = (
    "pinctrl-rp1",      # Pi 5, 500, CM5: the RP1 I/O chip
    "pinctrl-bcm2711",  # Pi 4, 400, CM4
    "pinctrl-bcm2835",  # Pi 1, 2, 3, Zero, Zero 2 W (BCM2835/6/7 share the driver)
)


def gpiochip_labels(root: Path = Path("/")) -> dict[int, str]:
    """gpiochip number (as in /dev/gpiochipN) -> the kernel's label for it.

    The kernel lists the chips as /sys/bus/gpio/devices/gpiochipN, links to the chip's device
    below its controller; the label is in the controller's legacy sysfs entry next to it
    (``<controller>/gpio/gpiochipBASE/label``, the same one /sys/class/gpio lists by base,
    which is not the chip number). ``root`` stands for ``/`` (tests give a folder). Chips
    without a readable label are left out; no chip at all gives ``{}``.
    """
    labels: dict[int, str] = {}
    for chip in sorted((root / "sys/bus/gpio/devices").glob("gpiochip*")):
        number = chip.name.removeprefix("gpiochip")
        if not number.isdigit():
            continue
        try:
            controller = chip.resolve(strict=True).parent
        except OSError:
            continue
        for entry in sorted(controller.glob("gpio/gpiochip*")):
            try:
                labels[int(number)] = (entry / "label").read_text(encoding="ascii").strip()
            except (OSError, UnicodeDecodeError):
                continue
            break
    return labels


def header_gpiochip(root: Path = Path("/")) -> int | None:
    """The number of the gpiochip that carries the 40-pin header, found by its label, or
    None when no chip has a Raspberry Pi header label (not a Pi, or no sysfs)."""
    labels = gpiochip_labels(root)
    for wanted in HEADER_CHIP_LABELS:
        for number, label in sorted(labels.items()):
            if label == wanted:
                return number
    return None


# BCM pins of the buses the launcher uses, and why each is taken.
# The ID EEPROM bus (ID_SD, ID_SC) is read by the firmware at boot to identify HATs; the
# Raspberry Pi HAT specification reserves it, whatever else is enabled.
ID_EEPROM: dict[int, str] = {
    0: "the HAT ID EEPROM bus (ID_SD) on every Pi",
    1: "the HAT ID EEPROM bus (ID_SC) on every Pi",
}
# The I2S amplifier (MAX98357A): bit clock, frame clock and data out.
I2S: dict[int, str] = {
    18: "the I2S bit clock of the amplifier (PCM_CLK)",
    19: "the I2S frame clock of the amplifier (PCM_FS)",
    21: "the I2S data to the amplifier (PCM_DOUT)",
}
# GPIO 20 is I2S data *in*, which only a microphone would use: reserved only when asked.
I2S_INPUT: dict[int, str] = {20: "the I2S data in (PCM_DIN)"}
UART: dict[int, str] = {
    14: "the UART console's TX (TXD0)",
    15: "the UART console's RX (RXD0)",
}
# SPI0 and I2C1, which the launcher leaves off: its default pins use GPIO 7-11 (nSLEEP on
# SPI0's clock) and GPIO 2. Turned on in config.txt, the kernel's bus driver takes them.
SPI0: dict[int, str] = {
    7: "SPI0's chip select 1 (CE1)",
    8: "SPI0's chip select 0 (CE0)",
    9: "SPI0's MISO",
    10: "SPI0's MOSI",
    11: "SPI0's clock (SCLK)",
}
I2C1: dict[int, str] = {
    2: "I2C1's data (SDA1)",
    3: "I2C1's clock (SCL1)",
}


def reserved_pins(i2s: bool, uart: bool, i2s_input: bool = False, spi0: bool = False,
                  i2c1: bool = False) -> dict[int, str]:
    """BCM pin -> why the launcher must not use it as a plain GPIO.

    ``i2s``: the I2S amplifier overlay is on (GPIO 18, 19, 21; ``i2s_input`` adds 20, the
    capture line, which the MAX98357A does not use). ``uart``: the serial console is on the
    UART (GPIO 14, 15). ``spi0``, ``i2c1``: that bus is on (GPIO 7-11; GPIO 2, 3). GPIO 0
    and 1 are always reserved: the Pi's boot firmware reads a HAT's ID EEPROM over them.
    """
    taken = dict(ID_EEPROM)
    if i2s:
        taken.update(I2S)
        if i2s_input:
            taken.update(I2S_INPUT)
    if uart:
        taken.update(UART)
    if spi0:
        taken.update(SPI0)
    if i2c1:
        taken.update(I2C1)
    return dict(sorted(taken.items()))
