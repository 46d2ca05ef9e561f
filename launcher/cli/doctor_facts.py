"""What ``launcher doctor`` looks at: a Pi's ``Facts``, gathered once, the helpers that read
them, and the names the checks (launcher/cli/doctor.py) share with systemd/install.sh.

Every check is a pure function over ``Facts``:
files read under a root folder (``/`` on the Pi, a fixture folder in the tests: config.txt,
/etc/asound.conf, systemd's system.conf and the pigpiod unit, the pinctrl driver's
parameters in /sys/module, where /dev/serial0 points, pigpiod's command line in /proc) and
the recorded output of a few commands (``id``, ``aplay -l``, ``systemctl``, ``journalctl``,
``stat``). Imports stay light: this runs on a Pi Zero.
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hal.pins import pi_model

PASS, WARN, FAIL = "PASS", "WARN", "FAIL"
EXIT_NOT_A_PI = 2

SERVICE_USER = "launcher"
SERVICE_GROUPS = ("gpio", "audio", "dialout")
CONFIG = "etc/launcher/launcher.toml"
VENV = "opt/launcher/venv"
SRC = "opt/launcher/src"  # the installed copy the service runs (systemd/install.sh)
BLOCK_BEGIN = "# >>> launcher block"  # as systemd/install.sh writes it
BLOCK_END = "# <<< launcher block"
AMP_OVERLAY = "dtoverlay=max98357a"
AMP_CARD = "MAX98357A"  # the card's ID in `aplay -l` ("card 2: MAX98357A [MAX98357A], ...")
AMP_SD_PIN = 4  # the max98357a overlay's default SD pin (sdmode-pin=), unless no-sdmode
GADGET_MODULES = "modules-load=dwc2,g_serial"
INSTALL = "sudo systemd/install.sh (from the repository checkout)"
ASOUND = "etc/asound.conf"
# What systemd/install.sh writes (the doctor only checks; the names are shared for the fixes).
WATCHDOG_DROPIN = "etc/systemd/system.conf.d/launcher-watchdog.conf"
WATCHDOG_SEC = 10
WATCHDOG_MAX_SEC = 15  # the BCM2835/2711/2712 PM watchdog cannot count further
PIGPIOD_DROPIN = "etc/systemd/system/pigpiod.service.d/launcher.conf"
PIGPIOD_EXEC = "ExecStart=/usr/bin/pigpiod -l -t 0 -s 10"
# The header's pinctrl driver: its module parameter says whether released lines keep their
# level (Y, the Raspberry Pi default) or return to inputs (N: dtparam=strict_gpiod, which
# adds pinctrl_<driver>.persist_gpio_outputs=n to the kernel command line). Kernels from
# April to June 2024 named it strict_gpiod, with the opposite sense (raspberrypi/linux#6117,
# #6150).
PERSIST_PARAM = "sys/module/{driver}/parameters/persist_gpio_outputs"
# The device files of SPI0 and I2C1, there while the kernel drives the bus.
BUS_DEVICES = ("spidev0.0", "spidev0.1", "i2c-1")
STRICT_PARAM = "sys/module/{driver}/parameters/strict_gpiod"
# Where /dev/serial0 may point: the UART on header pins 8 (TXD, GPIO 14) and 10 (RXD, GPIO 15)
# on a Pi 1-4 and Zero (PL011 or mini UART), or a Pi 5's 3-pin debug connector.
HEADER_UARTS = ("ttyAMA0", "ttyS0")
PI5_DEBUG_UART = "ttyAMA10"


@dataclass(frozen=True)
class Result:
    """One check's verdict."""

    status: str
    item: str
    detail: str
    fix: str = ""


@dataclass(frozen=True)
class Output:
    """What a command printed, and its exit status (127: not installed)."""

    rc: int
    out: str = ""


@dataclass
class Facts:
    """Everything the checks look at, gathered once."""

    model: str | None
    files: dict[str, str | None]  # path under the root -> text, None when missing
    exists: dict[str, bool]
    gpiochips: list[str]
    pigpio_module: bool
    commands: dict[str, Output] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)  # /dev name -> where its link points
    processes: list[list[str]] = field(default_factory=list)  # pigpiod's argv, if running
    # The installed code against its manifest (launcher/tools/manifest.py): a line per file
    # that differs; None where there is no installed copy.
    code: list[str] | None = None

    def text(self, path: str) -> str:
        return self.files.get(path) or ""


Runner = Callable[[str, list[str]], Output]


def commands(stat_paths: list[str]) -> dict[str, list[str]]:
    """The commands the doctor runs, by the key their recorded output is kept under."""
    return {
        "id": ["id", SERVICE_USER],
        "aplay": ["aplay", "-l"],
        "is-enabled": ["systemctl", "is-enabled", "launcher.service"],
        "is-active": ["systemctl", "is-active", "launcher.service"],
        "pigpiod": ["systemctl", "is-active", "pigpiod.service"],
        "watchdog": ["systemctl", "show", "--property=RuntimeWatchdogUSec", "--value"],
        "journal": ["journalctl", "-u", "launcher.service", "-n", "300", "--no-pager",
                    "-o", "cat"],
        "stat": ["stat", "-L", "-c", "%n %U %G %a", *stat_paths],
    }


def run_command(key: str, argv: list[str]) -> Output:
    """Run one command on this machine (the real runner)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except FileNotFoundError:
        return Output(127)
    except subprocess.TimeoutExpired:
        return Output(124)
    return Output(done.returncode, done.stdout)


# Folders whose *.conf files the checks read, in the order systemd applies them.
GLOBBED = ("etc/systemd/system.conf.d", "usr/lib/systemd/system.conf.d",
           "etc/systemd/system/pigpiod.service.d")


def gather(root: Path, run: Runner) -> Facts:
    """Read the files and run the commands the checks need."""
    params = [template.format(driver=driver) for template in (PERSIST_PARAM, STRICT_PARAM)
              for driver in ("pinctrl_bcm2835", "pinctrl_rp1")]
    paths = [CONFIG, "boot/firmware/config.txt", "boot/config.txt", "boot/firmware/cmdline.txt",
             "boot/cmdline.txt", "var/lib/dpkg/status", f"{VENV}/pyvenv.cfg", ASOUND,
             "etc/systemd/system.conf", "usr/lib/systemd/system/pigpiod.service",
             "lib/systemd/system/pigpiod.service", "etc/systemd/system/pigpiod.service",
             *params]
    for folder in GLOBBED:
        paths += sorted(str(p.relative_to(root)) for p in (root / folder).glob("*.conf"))
    files: dict[str, str | None] = {}
    for rel in paths:
        try:
            files[rel] = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            files[rel] = None
    state = state_path(files.get(CONFIG)).lstrip("/")  # its latched fault, if any
    try:
        files[state] = (root / state).read_text(encoding="utf-8", errors="replace")
    except OSError:
        files[state] = None
    dev = root / "dev"
    chips = sorted(p.name for p in dev.glob("gpiochip*")) if dev.is_dir() else []
    exists = {name: (dev / name).exists() or (dev / name).is_symlink()
              for name in ("serial0", "ttyGS0", "ttyAMA0", "ttyS0", PI5_DEBUG_UART, *BUS_DEVICES)}
    links = {name: os.readlink(dev / name) for name in ("serial0", "serial1")
             if (dev / name).is_symlink()}
    state_dir = str(Path(state_path(files.get(CONFIG))).parent)
    stat_paths = [f"/dev/{c}" for c in chips] + [
        f"/dev/{n}" for n, there in exists.items() if there] + [state_dir]
    exists[state_dir.lstrip("/")] = (root / state_dir.lstrip("/")).is_dir()
    pigpio = any(root.glob(f"{VENV}/lib/python3*/site-packages/pigpio.py")) or (
        root / "usr/lib/python3/dist-packages/pigpio.py").exists()
    outputs = {key: run(key, argv) for key, argv in commands(stat_paths).items()}
    return Facts(pi_model(root=root), files, exists, chips, pigpio, outputs, links,
                 pigpiod_processes(root), installed_code(root / SRC))


def installed_code(src: Path) -> list[str] | None:
    """What differs from the manifest in the installed copy (None: no copy installed)."""
    if not src.is_dir():
        return None
    from launcher.tools.manifest import verify

    return verify(src)


def pigpiod_processes(root: Path) -> list[list[str]]:
    """The argv of every running pigpiod (from /proc/PID/cmdline)."""
    found = []
    for cmdline in sorted((root / "proc").glob("[0-9]*/cmdline")):
        try:
            argv = cmdline.read_bytes().decode("utf-8", "replace").split("\0")
        except OSError:
            continue
        argv = [arg for arg in argv if arg]
        if argv and Path(argv[0]).name == "pigpiod":
            found.append(argv)
    return found


# -- helpers over facts ---------------------------------------------------------------------

def state_path(config_text: str | None) -> str:
    try:
        raw = tomllib.loads(config_text or "")
    except tomllib.TOMLDecodeError:
        raw = {}
    path = raw.get("state", {}).get("path") if isinstance(raw.get("state"), dict) else None
    return path if isinstance(path, str) else "/var/lib/launcher/state.json"


def settings_of(facts: Facts):  # -> (Settings | None, error text | None)
    from launcher.core import config
    from launcher.core.errors import ConfigError

    text = facts.files.get(CONFIG)
    if text is None:
        return None, "missing"
    try:
        raw = config.merge(config.default_raw(), config.parse_toml(text, "/" + CONFIG))
        return config.settings_from_dict(raw), None
    except ConfigError as exc:
        return None, str(exc)


def boot_files(facts: Facts) -> tuple[str, str]:
    """(config.txt path, cmdline.txt path) under the root: /boot/firmware first (Bookworm)."""
    if facts.files.get("boot/firmware/config.txt") is not None:
        return "boot/firmware/config.txt", "boot/firmware/cmdline.txt"
    return "boot/config.txt", "boot/cmdline.txt"


def launcher_block(facts: Facts) -> list[str] | None:
    lines = facts.text(boot_files(facts)[0]).splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(BLOCK_BEGIN)]
    if not starts:
        return None
    block = []
    for line in lines[starts[-1] + 1:]:
        if line.startswith(BLOCK_END):
            break
        block.append(line.split("#", 1)[0].strip())
    return [line for line in block if line]


def dtparams(facts: Facts) -> tuple[dict[str, str], list[tuple[str, dict[str, str]]]]:
    """config.txt as the firmware reads it: (base dtparams, [(overlay, its params)]).

    A ``dtparam=`` line after a ``dtoverlay=NAME`` line is in that overlay's scope until the
    next ``dtoverlay=`` line (a bare one ends the scope); it reaches the base device tree
    only if the overlay has no parameter of that name (Raspberry Pi documentation, "DT
    parameters"). Conditional sections ([pi4], [cm5], ...) are not told apart.
    """
    base: dict[str, str] = {}
    overlays: list[tuple[str, dict[str, str]]] = []
    current = base
    for raw in facts.text(boot_files(facts)[0]).splitlines():
        line = raw.split("#", 1)[0].strip()
        key, _, value = line.partition("=")
        key = key.strip()
        if key not in ("dtoverlay", "dtparam"):
            continue
        words = [w.strip() for w in value.split(",") if w.strip()]
        if key == "dtoverlay":
            if not words:
                current = base
                continue
            current = {}
            overlays.append((words.pop(0), current))
        for word in words:
            name, _, setting = word.partition("=")
            current[name.strip()] = setting.strip() or "on"
    return base, overlays


def stat_table(facts: Facts) -> dict[str, tuple[str, str, str]]:
    """stat's "%n %U %G %a" lines -> {path: (user, group, octal mode)}."""
    table = {}
    for line in facts.commands.get("stat", Output(1)).out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            table[parts[0]] = (parts[1], parts[2], parts[3])
    return table


# Device and folder access is judged for a service user in its expected groups: whether it
# IS in them is check_groups' finding, so one missing group gives one FAIL, not three.
EXPECTED_GROUPS = {*SERVICE_GROUPS, SERVICE_USER}


def may_rw(entry: tuple[str, str, str], user: str, groups: set[str]) -> bool:
    owner, group, mode = entry
    bits = int(mode, 8)
    return ((owner == user and bits & 0o600 == 0o600)
            or (group in groups and bits & 0o060 == 0o060) or bits & 0o006 == 0o006)


def groups_of(facts: Facts) -> set[str] | None:
    out = facts.commands.get("id", Output(1))
    if out.rc != 0:
        return None
    found = re.search(r"groups=(\S+)", out.out)
    return set(re.findall(r"\(([^)]+)\)", found.group(1))) if found else set()


def dpkg_installed(facts: Facts, package: str) -> bool:
    for stanza in facts.text("var/lib/dpkg/status").split("\n\n"):
        if re.search(rf"^Package: {re.escape(package)}$", stanza, re.M):
            return re.search(r"^Status: install ok installed$", stanza, re.M) is not None
    return False


def recorded(path: Path) -> Runner:
    """A runner that answers from recorded outputs (a TOML table per command key)."""
    table = tomllib.loads(path.read_text(encoding="utf-8"))

    def run(key: str, argv: list[str]) -> Output:
        entry = table.get(key)
        if entry is None:
            return Output(127)
        return Output(int(entry.get("rc", 0)), str(entry.get("out", "")))

    return run
