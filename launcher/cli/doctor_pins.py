"""``launcher doctor``'s checks of the Pi's boot configuration and pins: the serial console's
UART, the amplifier's shutdown pin, gpiod's strict mode, the buses that would claim a pin the
launcher uses, the pulls at power-on, and the safety pins. Pure functions over the ``Facts``
that launcher/cli/doctor_facts.py gathers, as every check of launcher/cli/doctor.py.
"""

from __future__ import annotations

import tomllib

from hal.circuit import BOOT_LOW, ROLES, boot_gpio_line
from hal.pins import is_pi5_family
from launcher.cli.doctor_facts import (
    AMP_OVERLAY,
    AMP_SD_PIN,
    CONFIG,
    FAIL,
    GADGET_MODULES,
    INSTALL,
    PASS,
    PERSIST_PARAM,
    STRICT_PARAM,
    WARN,
    Facts,
    Result,
    boot_files,
    dtparams,
    launcher_block,
    settings_of,
)


def console_port(facts: Facts) -> str:
    settings, _ = settings_of(facts)
    if settings:
        return settings.console.port
    try:  # a config invalid elsewhere (check_config's finding) still names its port
        port = tomllib.loads(facts.text(CONFIG)).get("console", {}).get("port")
    except (tomllib.TOMLDecodeError, AttributeError):
        port = None
    return port if isinstance(port, str) else "/dev/serial0"


def check_boot_config(facts: Facts) -> list[Result]:
    config_txt, cmdline = boot_files(facts)
    if facts.files.get(config_txt) is None:
        return [Result(FAIL, "config.txt", "no /boot/firmware/config.txt or /boot/config.txt",
                       "is this Raspberry Pi OS? the boot partition is not mounted")]
    block = launcher_block(facts)
    if block is None:
        return [Result(FAIL, "config.txt", f"/{config_txt} has no launcher block", INSTALL)]
    missing = []
    if not any(line.startswith(AMP_OVERLAY) for line in block):
        missing.append(f"{AMP_OVERLAY} (I2S amplifier)")
    port = console_port(facts)
    if port == "/dev/serial0" and "enable_uart=1" not in block:
        missing.append("enable_uart=1 (serial console)")
    gadget = port == "/dev/ttyGS0"
    if gadget and "dtoverlay=dwc2" not in block:
        missing.append("dtoverlay=dwc2 (USB gadget)")
    if gadget and GADGET_MODULES not in facts.text(cmdline).split():
        missing.append(f"{GADGET_MODULES} in /{cmdline}")
    if missing:
        fix = f"{INSTALL}{' --usb-gadget' if gadget else ''}, then sudo reboot"
        return [Result(FAIL, "config.txt", "the launcher block lacks " + "; ".join(missing), fix)]
    parts = ["I2S amplifier overlay", "USB gadget" if gadget else "UART"]
    return [Result(PASS, "config.txt", f"launcher block in /{config_txt}: {', '.join(parts)}")]


def board_param(facts: Facts, name: str) -> bool:
    """Whether config.txt sets this base-device-tree parameter: in the base scope, or in an
    overlay's scope, which passes it on (no overlay the launcher meets has these names)."""
    base, overlays = dtparams(facts)
    return name in base or any(name in params for _, params in overlays)


def _used_pins(facts: Facts) -> dict[int, str]:
    settings, _ = settings_of(facts)
    if settings is None:
        return {}
    return {pin: key for key, pin in vars(settings.pins).items() if pin is not None}


def check_amp_sd_pin(facts: Facts) -> list[Result]:
    """The max98357a overlay drives the amplifier's SD pin itself (GPIO 4, or sdmode-pin=)
    unless told no-sdmode: a firmware pin there would be fought over by the kernel."""
    config_txt = boot_files(facts)[0]
    amps = [params for name, params in dtparams(facts)[1] if name == "max98357a"]
    if not amps:
        return []  # no overlay at all: check_boot_config's finding
    params = amps[-1]
    if "no-sdmode" in params:
        return [Result(PASS, "amp SD pin", "dtoverlay=max98357a,no-sdmode: the SD pin is the "
                       "firmware's (pins.amp_enable)")]
    try:
        sd = int(params.get("sdmode-pin", str(AMP_SD_PIN)), 0)
    except ValueError:
        sd = AMP_SD_PIN
    used = _used_pins(facts)
    if sd in used:
        return [Result(FAIL, "amp SD pin", f"the max98357a overlay drives its SD pin, GPIO {sd}, "
                       f"which is pins.{used[sd]} of the firmware",
                       f"in /{config_txt} write dtoverlay=max98357a,no-sdmode, then sudo reboot")]
    return [Result(PASS, "amp SD pin", f"the max98357a overlay drives GPIO {sd} as the SD pin; "
                   "no firmware pin is there")]


def check_strict_gpiod(facts: Facts) -> list[Result]:
    """A released line returns to an input only with dtparam=strict_gpiod: otherwise a
    launcher that died with the motor on leaves the motor pins driven until safe-stop."""
    config_txt = boot_files(facts)[0]
    driver = "pinctrl_rp1" if is_pi5_family(facts.model) else "pinctrl_bcm2835"
    persist = facts.files.get(PERSIST_PARAM.format(driver=driver))
    strict = facts.files.get(STRICT_PARAM.format(driver=driver))
    fix = (f"write dtparam=strict_gpiod in /{config_txt} (install.sh puts it in the launcher "
           "block), then sudo reboot")
    if persist is None and strict is None:
        return [Result(WARN, "strict_gpiod", f"this kernel has no strict_gpiod ({driver} has no "
                       "persist_gpio_outputs): released GPIO lines keep their last level",
                       "sudo apt full-upgrade && sudo reboot (Raspberry Pi kernels have it "
                       "since 6.6 of April 2024), then " + INSTALL)]
    if (persist is not None and persist.strip() == "N") or (
            strict is not None and strict.strip() == "Y"):
        return [Result(PASS, "strict_gpiod", "a released GPIO line returns to an input "
                       f"({driver}: dtparam=strict_gpiod)")]
    if board_param(facts, "strict_gpiod"):
        return [Result(FAIL, "strict_gpiod", f"dtparam=strict_gpiod is in /{config_txt} but not "
                       "in effect: released GPIO lines keep their last level", "sudo reboot")]
    return [Result(FAIL, "strict_gpiod", "released GPIO lines keep their last level (a "
                   "launcher that dies with the motor on leaves its pins driven)", fix)]


_BUS_PARAMS = {"SPI0": ("spi",), "I2C1": ("i2c_arm", "i2c")}
_BUS_OVERLAYS = {"SPI0": ("spi0-",), "I2C1": ("i2c1",)}
_BUS_DEVICES = {"SPI0": ("spidev0.0", "spidev0.1"), "I2C1": ("i2c-1",)}
_OFF = ("off", "false", "no", "0")


def buses_on(facts: Facts) -> dict[str, str]:
    """SPI0 and I2C1, where on: bus -> what says so (the config.txt line, or the kernel's
    device file). Both take GPIO the launcher's default pins use."""
    base, overlays = dtparams(facts)
    scopes = [base, *(params for _, params in overlays)]
    found: dict[str, str] = {}
    for bus, params in _BUS_PARAMS.items():
        for name in params:
            if any(scope.get(name, "off").lower() not in _OFF for scope in scopes):
                found[bus] = f"dtparam={name}=on"
        for name, _ in overlays:
            if name.startswith(_BUS_OVERLAYS[bus]) and bus not in found:
                found[bus] = f"dtoverlay={name}"
        for dev in _BUS_DEVICES[bus]:
            if facts.exists.get(dev) and bus not in found:
                found[bus] = f"/dev/{dev}"
    return found


def _gpio_lines(block: list[str]) -> dict[int, set[str]]:
    """The ``gpio=PINS=ATTRS`` lines of the launcher block: pin -> its attributes, the
    later line winning (Raspberry Pi documentation, config.txt "gpio")."""
    found: dict[int, set[str]] = {}
    for line in block:
        key, _, rest = line.partition("=")
        if key.strip() != "gpio":
            continue
        numbers, _, attrs = rest.partition("=")
        words = {w.strip() for w in attrs.split(",") if w.strip()}
        for part in numbers.split(","):
            lo, _, hi = part.strip().partition("-")
            try:
                span = range(int(lo), int(hi or lo) + 1)
            except ValueError:
                continue
            for n in span:
                found[n] = words
    return found


def check_boot_pulls(facts: Facts) -> list[Result]:
    """Every output that must stay off while the Pi boots made an output driven low by
    config.txt (``gpio=...=op,dl``), so it is low from a few seconds after power-on, not
    only once the firmware claims it (hal/circuit.py: BOOT_LOW)."""
    settings, _ = settings_of(facts)
    block = launcher_block(facts)
    if settings is None or block is None:
        return []  # check_config's or check_boot_config's finding
    pins = settings.pins
    wanted = {getattr(pins, k): k for k in BOOT_LOW if getattr(pins, k) is not None}
    lines = _gpio_lines(block)
    missing = [f"GPIO {n} (pins.{k})" for n, k in sorted(wanted.items())
               if not {"op", "dl"} <= lines.get(n, set())]
    config_txt = boot_files(facts)[0]
    if missing:
        return [Result(FAIL, "boot pulls", "config.txt does not drive low at boot: "
                       + ", ".join(missing), f"{INSTALL} (it writes "
                       f"{boot_gpio_line(pins)} in /{config_txt}), then sudo reboot")]
    return [Result(PASS, "boot pulls", f"/{config_txt} drives GPIO "
                   + ",".join(map(str, sorted(wanted))) + " low from boot")]


def check_safety_pins(facts: Facts) -> list[Result]:
    """The pins by which the firmware checks the copper: the NC twin of the lid's sensing
    switch, and the read-backs of the power contact and of nSLEEP (hardware/power.md)."""
    settings, _ = settings_of(facts)
    if settings is None:
        return []  # check_config's finding
    why = {"lid_closed_nc": "one contact alone: a lid_closed wire pinched to ground passes "
                            "for a shut lid",
           "power_contact_sense": "the power contact is not read back: a welded, stuck or "
                                  "bypassed contact is never seen",
           "sleep_sense": "nSLEEP is not read back: a driver that stays awake (a short to "
                          "3.3 V, a stuck one-shot) is never seen",
           "rotator_contact_sense": "the rotator's full-open contact is not read back: a "
                                    "welded or bypassed one is never seen"}
    off = [key for key in why if getattr(settings.pins, key) is None]
    if off:
        fix = ("wire as hardware/pinout.md says, then set "
               + ", ".join(f"pins.{k} = {ROLES[k].suggested}" for k in off) + f" in /{CONFIG}")
        return [Result(FAIL, "safety pins", "; ".join(f"pins.{k} = -1: {why[k]}" for k in off),
                       fix)]
    wired = ", ".join(f"pins.{k} = {getattr(settings.pins, k)}" for k in why)
    return [Result(PASS, "safety pins", "the NC twin and the read-backs of the power "
                   f"contacts and nSLEEP are wired: {wired}")]
