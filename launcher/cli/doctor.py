"""``launcher doctor``: what is wrong with this Pi, one line per check, each with its fix.

Run on the Pi before and after wiring. Every check is a pure function over ``Facts``:
files read under a root folder (``/`` on the Pi, a fixture folder in the tests) and the
recorded output of a few commands (``id``, ``aplay -l``, ``systemctl``, ``journalctl``,
``stat``). Imports stay light: this runs on a Pi Zero.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hal.base import HardwareError
from hal.pins import factory_name, is_pi5_family, pi_model, reserved_pins

PASS, WARN, FAIL = "PASS", "WARN", "FAIL"
EXIT_NOT_A_PI = 2

SERVICE_USER = "launcher"
SERVICE_GROUPS = ("gpio", "audio", "dialout")
CONFIG = "etc/launcher/launcher.toml"
VENV = "opt/launcher/venv"
BLOCK_BEGIN = "# >>> launcher block"  # as systemd/install.sh writes it
BLOCK_END = "# <<< launcher block"
AMP_OVERLAY = "dtoverlay=max98357a"
GADGET_MODULES = "modules-load=dwc2,g_serial"
INSTALL = "sudo systemd/install.sh (from the repository checkout)"


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


def gather(root: Path, run: Runner) -> Facts:
    """Read the files and run the commands the checks need."""
    paths = [CONFIG, "boot/firmware/config.txt", "boot/config.txt", "boot/firmware/cmdline.txt",
             "boot/cmdline.txt", "var/lib/dpkg/status", f"{VENV}/pyvenv.cfg"]
    files: dict[str, str | None] = {}
    for rel in paths:
        try:
            files[rel] = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            files[rel] = None
    dev = root / "dev"
    chips = sorted(p.name for p in dev.glob("gpiochip*")) if dev.is_dir() else []
    exists = {name: (dev / name).exists() or (dev / name).is_symlink()
              for name in ("serial0", "ttyGS0")}
    state_dir = str(Path(_state_path(files.get(CONFIG))).parent)
    stat_paths = [f"/dev/{c}" for c in chips] + [
        f"/dev/{n}" for n, there in exists.items() if there] + [state_dir]
    exists[state_dir.lstrip("/")] = (root / state_dir.lstrip("/")).is_dir()
    pigpio = any(root.glob(f"{VENV}/lib/python3*/site-packages/pigpio.py")) or (
        root / "usr/lib/python3/dist-packages/pigpio.py").exists()
    outputs = {key: run(key, argv) for key, argv in commands(stat_paths).items()}
    return Facts(pi_model(root=root), files, exists, chips, pigpio, outputs)


# -- helpers over facts ---------------------------------------------------------------------

def _state_path(config_text: str | None) -> str:
    try:
        raw = tomllib.loads(config_text or "")
    except tomllib.TOMLDecodeError:
        raw = {}
    path = raw.get("state", {}).get("path") if isinstance(raw.get("state"), dict) else None
    return path if isinstance(path, str) else "/var/lib/launcher/state.json"


def _settings(facts: Facts):  # -> (Settings | None, error text | None)
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


def _boot(facts: Facts) -> tuple[str, str]:
    """(config.txt path, cmdline.txt path) under the root: /boot/firmware first (Bookworm)."""
    if facts.files.get("boot/firmware/config.txt") is not None:
        return "boot/firmware/config.txt", "boot/firmware/cmdline.txt"
    return "boot/config.txt", "boot/cmdline.txt"


def _launcher_block(facts: Facts) -> list[str] | None:
    lines = facts.text(_boot(facts)[0]).splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(BLOCK_BEGIN)]
    if not starts:
        return None
    block = []
    for line in lines[starts[-1] + 1:]:
        if line.startswith(BLOCK_END):
            break
        block.append(line.split("#", 1)[0].strip())
    return [line for line in block if line]


def _stat(facts: Facts) -> dict[str, tuple[str, str, str]]:
    """stat's "%n %U %G %a" lines -> {path: (user, group, octal mode)}."""
    table = {}
    for line in facts.commands.get("stat", Output(1)).out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            table[parts[0]] = (parts[1], parts[2], parts[3])
    return table


# Device and folder access is judged for a service user in its expected groups: whether it
# IS in them is check_groups' finding, so one missing group gives one FAIL, not three.
_EXPECTED_GROUPS = {*SERVICE_GROUPS, SERVICE_USER}


def _may_rw(entry: tuple[str, str, str], user: str, groups: set[str]) -> bool:
    owner, group, mode = entry
    bits = int(mode, 8)
    return ((owner == user and bits & 0o600 == 0o600)
            or (group in groups and bits & 0o060 == 0o060) or bits & 0o006 == 0o006)


def _groups(facts: Facts) -> set[str] | None:
    out = facts.commands.get("id", Output(1))
    if out.rc != 0:
        return None
    found = re.search(r"groups=(\S+)", out.out)
    return set(re.findall(r"\(([^)]+)\)", found.group(1))) if found else set()


def _dpkg_installed(facts: Facts, package: str) -> bool:
    for stanza in facts.text("var/lib/dpkg/status").split("\n\n"):
        if re.search(rf"^Package: {re.escape(package)}$", stanza, re.M):
            return re.search(r"^Status: install ok installed$", stanza, re.M) is not None
    return False


# -- the checks -----------------------------------------------------------------------------

def check_board(facts: Facts) -> list[Result]:
    settings, _ = _settings(facts)
    setting = settings.pin_factory if settings else "auto"
    try:
        name = factory_name(setting, facts.model, env={})
    except HardwareError as exc:
        return [Result(FAIL, "board", f"{facts.model}: {exc}",
                       'set pin_factory = "auto" in /' + CONFIG)]
    how = "chosen by the model" if setting == "auto" else "set in the config"
    return [Result(PASS, "board", f"{facts.model}: pin factory {name} ({how})")]


def factory(facts: Facts) -> str:
    settings, _ = _settings(facts)
    try:
        return factory_name(settings.pin_factory if settings else "auto", facts.model, env={})
    except HardwareError:
        return "lgpio" if is_pi5_family(facts.model) else "pigpio"


def check_factory(facts: Facts) -> list[Result]:
    name = factory(facts)
    if name == "lgpio":
        if not _dpkg_installed(facts, "python3-lgpio"):
            return [Result(FAIL, "pin factory", "lgpio: the python3-lgpio package is not "
                           "installed", "sudo apt install python3-lgpio")]
        cfg = facts.files.get(f"{VENV}/pyvenv.cfg")
        if cfg is None:
            return [Result(FAIL, "pin factory", f"no venv in /{VENV}", INSTALL)]
        if not re.search(r"^include-system-site-packages\s*=\s*true\s*$", cfg, re.M | re.I):
            return [Result(FAIL, "pin factory", f"lgpio: the venv /{VENV} cannot see the "
                           "system's python3-lgpio (no system site packages)",
                           f"sudo rm -rf /{VENV}, then {INSTALL}")]
        return [Result(PASS, "pin factory", "lgpio: python3-lgpio installed, the venv sees "
                       "system site packages")]
    if name == "pigpio":
        active = facts.commands.get("pigpiod", Output(1)).out.strip()
        if active != "active":
            return [Result(FAIL, "pin factory", f"pigpio: pigpiod is {active or 'missing'}",
                           "sudo systemctl enable --now pigpiod")]
        if not facts.pigpio_module:
            return [Result(FAIL, "pin factory", f"pigpio: no pigpio module in /{VENV}",
                           f"sudo /{VENV}/bin/pip install pigpio")]
        return [Result(PASS, "pin factory", "pigpio: pigpiod active, pigpio module in the venv")]
    return [Result(WARN, "pin factory", f"{name}: not checked (the launcher expects lgpio or "
                   "pigpio)", 'pin_factory = "auto"')]


def check_groups(facts: Facts) -> list[Result]:
    groups = _groups(facts)
    if groups is None:
        return [Result(FAIL, "service user", f"no user {SERVICE_USER}", INSTALL)]
    missing = [g for g in SERVICE_GROUPS if g not in groups]
    if missing:
        return [Result(FAIL, "service user", f"{SERVICE_USER} is not in {', '.join(missing)}",
                       f"sudo usermod -aG {','.join(missing)} {SERVICE_USER}")]
    return [Result(PASS, "service user", f"{SERVICE_USER} is in {', '.join(SERVICE_GROUPS)}")]


def check_gpiochip(facts: Facts) -> list[Result]:
    # pigpio reaches the pins through its root daemon: /dev/gpiochip* only matters for lgpio.
    level = FAIL if factory(facts) == "lgpio" else WARN
    if not facts.gpiochips:
        return [Result(level, "gpiochip", "no /dev/gpiochip* device",
                       "update the kernel: sudo apt full-upgrade, then reboot")]
    groups = _EXPECTED_GROUPS  # membership itself is check_groups' business
    table = _stat(facts)
    refused = [c for c in facts.gpiochips
               if f"/dev/{c}" not in table
               or not _may_rw(table[f"/dev/{c}"], SERVICE_USER, groups)]
    if refused:
        shown = ", ".join(f"/dev/{c} " + " ".join(table.get(f"/dev/{c}", ("?", "?", "?")))
                          for c in refused)
        return [Result(level, "gpiochip", f"{SERVICE_USER} cannot read and write {shown}",
                       "Raspberry Pi OS gives them to the gpio group (udev rule in "
                       "raspberrypi-sys-mods): sudo apt install --reinstall raspberrypi-sys-mods")]
    return [Result(PASS, "gpiochip", f"{SERVICE_USER} can use " +
                   ", ".join(f"/dev/{c}" for c in facts.gpiochips))]


def _console_port(facts: Facts) -> str:
    settings, _ = _settings(facts)
    return settings.console.port if settings else "/dev/serial0"


def check_boot_config(facts: Facts) -> list[Result]:
    config_txt, cmdline = _boot(facts)
    if facts.files.get(config_txt) is None:
        return [Result(FAIL, "config.txt", "no /boot/firmware/config.txt or /boot/config.txt",
                       "is this Raspberry Pi OS? the boot partition is not mounted")]
    block = _launcher_block(facts)
    if block is None:
        return [Result(FAIL, "config.txt", f"/{config_txt} has no launcher block", INSTALL)]
    missing = []
    if not any(line.startswith(AMP_OVERLAY) for line in block):
        missing.append(f"{AMP_OVERLAY} (I2S amplifier)")
    port = _console_port(facts)
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


def check_audio(facts: Facts) -> list[Result]:
    out = facts.commands.get("aplay", Output(127))
    if out.rc == 127:
        return [Result(FAIL, "amplifier", "aplay is not installed", "sudo apt install alsa-utils")]
    cards = [line for line in out.out.splitlines() if line.startswith("card ")]
    amp = [line for line in cards if "max98357a" in line.lower()]
    if not amp:
        names = ", ".join(line.split()[2] for line in cards if len(line.split()) > 2) or "none"
        return [Result(FAIL, "amplifier", f"aplay -l lists no MAX98357A card (cards: {names})",
                       "check the config.txt block, then sudo reboot")]
    return [Result(PASS, "amplifier", amp[0].split(",")[0])]


def check_serial(facts: Facts) -> list[Result]:
    port = _console_port(facts)
    name = port.removeprefix("/dev/")
    if not port.startswith("/dev/") or name not in facts.exists:
        return [Result(WARN, "serial console", f"console.port = {port!r}: not checked")]
    if not facts.exists[name]:
        fix = (f"{INSTALL} --usb-gadget, then sudo reboot" if name == "ttyGS0"
               else "enable_uart=1 in config.txt (install.sh does it), then sudo reboot")
        return [Result(FAIL, "serial console", f"{port} is missing", fix)]
    entry = _stat(facts).get(port)
    if entry is not None and not _may_rw(entry, SERVICE_USER, _EXPECTED_GROUPS):
        return [Result(FAIL, "serial console", f"{SERVICE_USER} cannot use {port} "
                       f"({' '.join(entry)})", f"sudo usermod -aG {entry[1]} {SERVICE_USER}")]
    return [Result(PASS, "serial console", f"{port} present")]


def check_config(facts: Facts) -> list[Result]:
    settings, problem = _settings(facts)
    if problem == "missing":
        return [Result(FAIL, "config", f"no /{CONFIG}", INSTALL)]
    if settings is None:
        return [Result(FAIL, "config", f"/{CONFIG}: {problem}", f"sudoedit /{CONFIG}")]
    block = _launcher_block(facts) or []
    taken = reserved_pins(i2s=any(line.startswith(AMP_OVERLAY) for line in block),
                          uart=settings.console.port == "/dev/serial0")
    clashes = [f"pins.{key} = {pin} is {taken[pin]}"
               for key, pin in vars(settings.pins).items() if pin is not None and pin in taken]
    if clashes:
        return [Result(FAIL, "config", "; ".join(clashes),
                       f"choose other pins in /{CONFIG} (README, Pinout)")]
    return [Result(PASS, "config", f"/{CONFIG} is valid; its pins avoid the reserved GPIO "
                   + ", ".join(str(p) for p in taken))]


def check_state_dir(facts: Facts) -> list[Result]:
    folder = str(Path(_state_path(facts.files.get(CONFIG))).parent)
    if not facts.exists.get(folder.lstrip("/")):
        return [Result(WARN, "state folder", f"{folder} does not exist yet",
                       "systemd makes it when the service first starts")]
    entry = _stat(facts).get(folder)
    if entry is None or not _may_rw(entry, SERVICE_USER, _EXPECTED_GROUPS):
        shown = " ".join(entry) if entry else "unknown owner"
        return [Result(FAIL, "state folder", f"{SERVICE_USER} cannot write {folder} ({shown})",
                       f"sudo chown {SERVICE_USER}:{SERVICE_USER} {folder}")]
    return [Result(PASS, "state folder", f"{folder} is writable by {SERVICE_USER}")]


FAULT_LINE = re.compile(r"launcher: fault (code=\S+.*)$|^((?:config )?error: .*)$")


def check_service(facts: Facts) -> list[Result]:
    enabled = facts.commands.get("is-enabled", Output(1)).out.strip()
    active = facts.commands.get("is-active", Output(1)).out.strip()
    results = []
    if enabled != "enabled":
        results.append(Result(FAIL, "service", f"launcher.service is {enabled or 'not installed'}",
                              "sudo systemctl enable launcher" if enabled else INSTALL))
    elif active == "active":
        results.append(Result(PASS, "service", "launcher.service enabled and active"))
    elif active == "inactive":
        results.append(Result(WARN, "service", "launcher.service is enabled but stopped",
                              "sudo systemctl start launcher (stopped is right during selftest)"))
    else:
        results.append(Result(FAIL, "service", f"launcher.service is {active or 'unknown'}",
                              "journalctl -u launcher -e shows why; fix it, then "
                              "sudo systemctl restart launcher"))
    last = None
    for line in facts.commands.get("journal", Output(1)).out.splitlines():
        found = FAULT_LINE.search(line.strip())
        if found:
            last = found.group(1) or found.group(2)
    if last is None:
        results.append(Result(PASS, "last fault", "none in the service's recent journal"))
    else:
        results.append(Result(WARN, "last fault", last,
                              "journalctl -u launcher -e for the whole story"))
    return results


CHECKS = (check_board, check_factory, check_groups, check_gpiochip, check_boot_config,
          check_audio, check_serial, check_config, check_state_dir, check_service)


def diagnose(facts: Facts) -> list[Result]:
    """Every check, in the order a maker fixes things."""
    return [result for check in CHECKS for result in check(facts)]


# -- the command ----------------------------------------------------------------------------

def recorded(path: Path) -> Runner:
    """A runner that answers from recorded outputs (a TOML table per command key)."""
    table = tomllib.loads(path.read_text(encoding="utf-8"))

    def run(key: str, argv: list[str]) -> Output:
        entry = table.get(key)
        if entry is None:
            return Output(127)
        return Output(int(entry.get("rc", 0)), str(entry.get("out", "")))

    return run


def render(model: str, results: list[Result]) -> str:
    lines = [f"launcher doctor: {model}"]
    width = max(len(r.item) for r in results)
    for r in results:
        lines.append(f"{r.status}  {r.item:<{width}}  {r.detail}")
        if r.fix and r.status != PASS:
            lines.append(f"{'':6}{'':<{width}}  fix: {r.fix}")
    counts = {s: sum(r.status == s for r in results) for s in (PASS, WARN, FAIL)}
    lines.append(f"{len(results)} checks: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return "\n".join(lines) + "\n"


def cmd_doctor(args: argparse.Namespace) -> int:
    root = Path(args.root)
    model = pi_model(root=root)
    if model is None:
        print(f"launcher doctor: not a Raspberry Pi (no Raspberry Pi in "
              f"{root / 'proc/device-tree/model'}): nothing to check", file=sys.stderr)
        return EXIT_NOT_A_PI
    run = recorded(Path(args.recorded)) if args.recorded else run_command
    results = diagnose(gather(root, run))
    if args.json:
        print(json.dumps({"model": model, "checks": [asdict(r) for r in results],
                          "ok": all(r.status != FAIL for r in results)}, indent=2))
    else:
        sys.stdout.write(render(model, results))
    return 1 if any(r.status == FAIL for r in results) else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    doctor = subparsers.add_parser(
        "doctor", help="check this Pi for the launcher: PASS/WARN/FAIL with the fix for each")
    doctor.add_argument("--json", action="store_true", help="one JSON object for tools")
    doctor.add_argument("--root", default="/", metavar="DIR",
                        help="treat DIR as / (tests; commands still run here unless --recorded)")
    doctor.add_argument("--recorded", metavar="FILE",
                        help="answer the commands from a TOML file of recorded outputs "
                             "instead of running them (tests)")
    doctor.set_defaults(func=cmd_doctor)
