"""``launcher doctor``: what is wrong with this Pi, one line per check, each with its fix.

Run on the Pi before and after wiring. Every check is a pure function over the ``Facts``
that launcher/cli/doctor_facts.py gathers (files under a root folder, the recorded output of
a few commands), so the tests run each one on fixture folders. Imports stay light: this runs
on a Pi Zero.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import asdict
from pathlib import Path

from hal.base import HardwareError
from hal.pins import factory_name, is_pi5_family, pi_model, reserved_pins
from launcher.cli.doctor_facts import (
    AMP_CARD,
    AMP_OVERLAY,
    ASOUND,
    CONFIG,
    EXIT_NOT_A_PI,
    EXPECTED_GROUPS,
    FAIL,
    HEADER_UARTS,
    INSTALL,
    PASS,
    PI5_DEBUG_UART,
    PIGPIOD_DROPIN,
    PIGPIOD_EXEC,
    SERVICE_GROUPS,
    SERVICE_USER,
    SRC,
    VENV,
    WARN,
    WATCHDOG_DROPIN,
    WATCHDOG_MAX_SEC,
    WATCHDOG_SEC,
    Facts,
    Output,
    Result,
    boot_files,
    dpkg_installed,
    gather,
    groups_of,
    launcher_block,
    may_rw,
    recorded,
    run_command,
    settings_of,
    stat_table,
    state_path,
)
from launcher.cli.doctor_pins import (
    board_param,
    buses_on,
    check_amp_sd_pin,
    check_boot_config,
    check_boot_pulls,
    check_safety_pins,
    check_strict_gpiod,
    console_port,
)
from launcher.cli.options import verb

# -- the checks -----------------------------------------------------------------------------

def check_board(facts: Facts) -> list[Result]:
    settings, _ = settings_of(facts)
    setting = settings.pin_factory if settings else "auto"
    try:
        name = factory_name(setting, facts.model, env={})
    except HardwareError as exc:
        return [Result(FAIL, "board", f"{facts.model}: {exc}",
                       'set pin_factory = "auto" in /' + CONFIG)]
    how = "chosen by the model" if setting == "auto" else "set in the config"
    return [Result(PASS, "board", f"{facts.model}: pin factory {name} ({how})")]


def factory(facts: Facts) -> str:
    settings, _ = settings_of(facts)
    try:
        return factory_name(settings.pin_factory if settings else "auto", facts.model, env={})
    except HardwareError:
        return "lgpio"  # pigpio asked of a Pi 5: check_board says so; judge the rest as lgpio


def check_factory(facts: Facts) -> list[Result]:
    name = factory(facts)
    if name == "lgpio":
        if not dpkg_installed(facts, "python3-lgpio"):
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


def _exec_start(unit_texts: list[str]) -> list[str] | None:
    """The last ExecStart= of a unit and its drop-ins, in order (an empty one resets)."""
    argv = None
    for text in unit_texts:
        for raw in text.splitlines():
            key, sep, value = raw.strip().partition("=")
            if sep and key.strip() == "ExecStart":
                words = value.split()
                argv = [words[0].lstrip("-@+!:"), *words[1:]] if words else None
    return argv


def _has_t0(argv: list[str]) -> bool:
    return any(arg == "-t0" or (arg == "-t" and nxt == "0")
               for arg, nxt in zip(argv, [*argv[1:], ""], strict=True))


def check_pigpiod_timing(facts: Facts) -> list[Result]:
    """pigpiod must run with -t 0: by default it times its DMA with the PCM clock, which is
    the I2S amplifier's bus, and the speaker stays silent. A pigpiod left running beside
    lgpio does the same."""
    if factory(facts) != "pigpio":
        running = facts.processes[0] if facts.processes else None
        if running is None or _has_t0(running):
            return []
        return [Result(FAIL, "pigpiod -t 0", f"pigpiod runs as {' '.join(running)}, without "
                       f"-t 0, though the launcher uses {factory(facts)}: it holds the PCM clock "
                       "and the I2S amplifier is silent", "sudo systemctl disable --now pigpiod")]
    fix = (f"write /{PIGPIOD_DROPIN} with the lines [Service], ExecStart= and {PIGPIOD_EXEC} "
           "(that file is systemd/pigpiod-launcher.conf), then sudo systemctl daemon-reload && "
           "sudo systemctl restart pigpiod")
    units = [facts.text(rel) for rel in ("lib/systemd/system/pigpiod.service",
                                         "usr/lib/systemd/system/pigpiod.service",
                                         "etc/systemd/system/pigpiod.service")]
    dropins = sorted(rel for rel, text in facts.files.items() if text is not None
                     and rel.startswith("etc/systemd/system/pigpiod.service.d/"))
    argv = _exec_start(units + [facts.text(rel) for rel in dropins])
    if argv is None:
        return [Result(FAIL, "pigpiod -t 0", "no pigpiod unit with an ExecStart=", fix)]
    if not _has_t0(argv):
        return [Result(FAIL, "pigpiod -t 0", f"pigpiod.service starts {' '.join(argv)}, "
                       "without -t 0: it takes the PCM clock and the I2S amplifier is silent",
                       fix)]
    where = f"/{dropins[-1]}" if dropins else "pigpiod.service"
    running = facts.processes[0] if facts.processes else None
    if running is not None and not _has_t0(running):
        return [Result(FAIL, "pigpiod -t 0", f"{where} has -t 0, but pigpiod still runs as "
                       f"{' '.join(running)} (it holds the PCM clock)",
                       "sudo systemctl daemon-reload && sudo systemctl restart pigpiod")]
    how = f"runs as {' '.join(running)}" if running else f"starts {' '.join(argv)}"
    return [Result(PASS, "pigpiod -t 0", f"{where}: pigpiod {how}")]


def check_groups(facts: Facts) -> list[Result]:
    groups = groups_of(facts)
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
    groups = EXPECTED_GROUPS  # membership itself is check_groups' business
    table = stat_table(facts)
    refused = [c for c in facts.gpiochips
               if f"/dev/{c}" not in table
               or not may_rw(table[f"/dev/{c}"], SERVICE_USER, groups)]
    if refused:
        shown = ", ".join(f"/dev/{c} " + " ".join(table.get(f"/dev/{c}", ("?", "?", "?")))
                          for c in refused)
        return [Result(level, "gpiochip", f"{SERVICE_USER} cannot read and write {shown}",
                       "Raspberry Pi OS gives them to the gpio group (udev rule in "
                       "raspberrypi-sys-mods): sudo apt install --reinstall raspberrypi-sys-mods")]
    return [Result(PASS, "gpiochip", f"{SERVICE_USER} can use " +
                   ", ".join(f"/dev/{c}" for c in facts.gpiochips))]


def _aplay_cards(facts: Facts) -> list[tuple[int, str, str]]:
    """(number, ID, line) of each card in ``aplay -l``."""
    cards = []
    out = facts.commands.get("aplay", Output(127)).out
    for line in out.splitlines():
        found = re.match(r"card (\d+): (\S+) ", line)
        if found:
            cards.append((int(found.group(1)), found.group(2), line))
    return cards


def check_alsa_default(facts: Facts) -> list[Result]:
    """The launcher plays on ALSA's default device: that must be the amplifier, whatever
    number the card got (a Pi 5's display driver lists two HDMI cards first)."""
    cards = _aplay_cards(facts)
    amp = next((card for card in cards if card[1].lower() == AMP_CARD.lower()), None)
    if amp is None:
        return []  # no amplifier card: check_audio's finding
    fix = (f"write in /{ASOUND} the lines defaults.pcm.card {AMP_CARD} and "
           f"defaults.ctl.card {AMP_CARD} (install.sh does it)")
    text = facts.text(ASOUND)
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    if any(re.match(r"pcm\.!?default\b", line) for line in lines):
        if AMP_CARD.lower() in text.lower():
            return [Result(PASS, "alsa default", f"/{ASOUND} defines pcm.default on {AMP_CARD}")]
        return [Result(FAIL, "alsa default", f"/{ASOUND} defines pcm.default on another device "
                       f"than the amplifier (card {amp[0]}: {amp[1]})",
                       f"remove that pcm.default from /{ASOUND}; then {fix}")]
    chosen = None
    for line in lines:
        found = re.match(r"defaults\.pcm\.card\s+\"?([^\s\"]+)\"?", line)
        if found:
            chosen = found.group(1)
    if chosen is None:
        if amp[0] == 0:
            return [Result(PASS, "alsa default", f"the amplifier is card 0, ALSA's default (by "
                           f"card order only: /{ASOUND} would name it)")]
        first = cards[0]
        return [Result(FAIL, "alsa default", f"ALSA plays on card 0 ({first[1]}), not on the "
                       f"amplifier (card {amp[0]}: {amp[1]})", fix)]
    if chosen.lower() in (amp[1].lower(), str(amp[0])):
        return [Result(PASS, "alsa default", f"/{ASOUND}: defaults.pcm.card {chosen}, the "
                       f"amplifier (card {amp[0]})")]
    return [Result(FAIL, "alsa default", f"/{ASOUND} makes card {chosen} the default, not the "
                   f"amplifier (card {amp[0]}: {amp[1]})", fix)]


def _seconds(value: str) -> float | None:
    """A systemd time span ("10s", "1min 30s", "10", "500ms", "0", "infinity") in seconds."""
    value = value.strip().lower()
    if value in ("", "off", "infinity"):
        return 0.0 if value != "" else None
    units = {"us": 1e-6, "ms": 1e-3, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}
    total = 0.0
    for number, unit in re.findall(r"([\d.]+)\s*([a-z]*)", value):
        if unit not in units and unit:
            return None
        total += float(number) * units.get(unit or "s", 1)
    return total


def check_watchdog(facts: Facts) -> list[Result]:
    """systemd must ping the SoC's watchdog (RuntimeWatchdogSec): a hung kernel then reboots
    instead of leaving the launcher's pins wherever they were."""
    fix = (f"write /{WATCHDOG_DROPIN} with the lines [Manager] and "
           f"RuntimeWatchdogSec={WATCHDOG_SEC}s (install.sh does it), then sudo systemctl "
           "daemon-reexec")
    configured, where = None, None
    dropins = sorted((rel for rel, text in facts.files.items() if text is not None and (
        rel.startswith("etc/systemd/system.conf.d/")
        or rel.startswith("usr/lib/systemd/system.conf.d/"))), key=lambda rel: Path(rel).name)
    for rel in ["etc/systemd/system.conf", *dropins]:
        section = ""
        for raw in facts.text(rel).splitlines():
            line = raw.strip()
            if line.startswith("["):
                section = line
            key, sep, value = line.partition("=")
            if sep and section == "[Manager]" and key.strip() == "RuntimeWatchdogSec":
                configured, where = value.strip(), rel
    running = facts.commands.get("watchdog", Output(127))
    effective = _seconds(running.out) if running.rc == 0 else None
    seconds = effective if effective is not None else (
        _seconds(configured) if configured is not None else None)
    if seconds is not None and seconds > WATCHDOG_MAX_SEC:
        return [Result(FAIL, "watchdog", f"RuntimeWatchdogSec={configured or running.out.strip()}"
                       f": the SoC's watchdog counts to about {WATCHDOG_MAX_SEC} s at most", fix)]
    if seconds:
        shown = f"RuntimeWatchdogSec={configured} (/{where})" if where else (
            f"systemd runs the hardware watchdog at {running.out.strip()}")
        return [Result(PASS, "watchdog", f"{shown}: a hung kernel reboots")]
    if configured is not None and _seconds(configured):
        return [Result(FAIL, "watchdog", f"/{where} sets RuntimeWatchdogSec={configured}, but "
                       "systemd runs without it", "sudo systemctl daemon-reexec (or reboot)")]
    return [Result(FAIL, "watchdog", "no hardware watchdog (RuntimeWatchdogSec is off): a hung "
                   "kernel leaves the motor pins as they were until someone pulls the power", fix)]


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
    port = console_port(facts)
    name = port.removeprefix("/dev/")
    config_txt = boot_files(facts)[0]
    pi5 = is_pi5_family(facts.model)
    pi5_fix = (f"write dtparam=uart0=on in /{config_txt} (install.sh does it on a Pi 5) and "
               f'console.port = "/dev/ttyAMA0" in /{CONFIG}, then sudo reboot')
    if not port.startswith("/dev/") or name not in facts.exists:
        return [Result(WARN, "serial console", f"console.port = {port!r}: not checked",
                       "nothing to do if that port is right")]
    if not facts.exists[name]:
        if name == "ttyGS0":
            fix = f"{INSTALL} --usb-gadget, then sudo reboot"
        elif pi5 and name == "ttyAMA0":
            fix = pi5_fix
        else:
            fix = "enable_uart=1 in config.txt (install.sh does it), then sudo reboot"
        return [Result(FAIL, "serial console", f"{port} is missing", fix)]
    entry = stat_table(facts).get(port)
    if entry is not None and not may_rw(entry, SERVICE_USER, EXPECTED_GROUPS):
        return [Result(FAIL, "serial console", f"{SERVICE_USER} cannot use {port} "
                       f"({' '.join(entry)})", f"sudo usermod -aG {entry[1]} {SERVICE_USER}")]
    target = Path(facts.links.get(name, name)).name if name == "serial0" else name
    shown = f"{port} -> {target}" if target != name else port
    if target == PI5_DEBUG_UART:
        return [Result(FAIL, "serial console", f"{shown}: on this {facts.model} that is the "
                       "3-pin debug connector, not header pins 8 and 10", pi5_fix)]
    if pi5 and target == "ttyAMA0" and not board_param(facts, "uart0"):
        return [Result(FAIL, "serial console", f"{shown}: without dtparam=uart0=on the Pi 5's "
                       "UART0 is not on header pins 8 and 10", pi5_fix)]
    if target in HEADER_UARTS:
        return [Result(PASS, "serial console", f"{shown} present: header pins 8 (TXD) and 10 "
                       "(RXD)")]
    return [Result(PASS, "serial console", f"{shown} present")]


def check_config(facts: Facts) -> list[Result]:
    from launcher.core.config import UART_PORTS

    settings, problem = settings_of(facts)
    if problem == "missing":
        return [Result(FAIL, "config", f"no /{CONFIG}", INSTALL)]
    if settings is None:
        return [Result(FAIL, "config", f"/{CONFIG}: {problem}", f"sudoedit /{CONFIG}")]
    block = launcher_block(facts) or []
    buses = buses_on(facts)
    taken = reserved_pins(i2s=any(line.startswith(AMP_OVERLAY) for line in block),
                          uart=settings.console.port in UART_PORTS,
                          spi0="SPI0" in buses, i2c1="I2C1" in buses)
    clashes = [f"pins.{key} = {pin} is {taken[pin]}"
               for key, pin in vars(settings.pins).items() if pin is not None and pin in taken]
    on = [f"{bus} is on ({why})" for bus, why in buses.items()]
    if clashes:
        fix = f"choose other pins in /{CONFIG} (README, Pinout)"
        if on:
            config_txt = boot_files(facts)[0]
            offs = [f"take {why} out of /{config_txt}" if why.startswith("dt") else
                    f"find what turns {bus} on ({why} is there; raspi-config, Interface Options)"
                    for bus, why in buses.items()]
            fix = f"turn {' and '.join(buses)} off ({'; '.join(offs)}), then sudo reboot; or {fix}"
        return [Result(FAIL, "config", "; ".join([*clashes, *on]), fix)]
    off = [bus for bus in ("SPI0", "I2C1") if bus not in buses]
    return [Result(PASS, "config", f"/{CONFIG} is valid; its pins avoid the reserved GPIO "
                   + ", ".join(str(p) for p in taken)
                   + (f" ({' and '.join(off)} off)" if off else ""))]


# What turns each bus on in config.txt: its base parameters (``i2c`` is ``i2c_arm``'s
# alias) and the overlays that name it (Raspberry Pi documentation, overlays README).
def check_state_dir(facts: Facts) -> list[Result]:
    folder = str(Path(state_path(facts.files.get(CONFIG))).parent)
    if not facts.exists.get(folder.lstrip("/")):
        return [Result(WARN, "state folder", f"{folder} does not exist yet",
                       "systemd makes it when the service first starts")]
    entry = stat_table(facts).get(folder)
    if entry is None or not may_rw(entry, SERVICE_USER, EXPECTED_GROUPS):
        shown = " ".join(entry) if entry else "unknown owner"
        return [Result(FAIL, "state folder", f"{SERVICE_USER} cannot write {folder} ({shown})",
                       f"sudo chown {SERVICE_USER}:{SERVICE_USER} {folder}")]
    return [Result(PASS, "state folder", f"{folder} is writable by {SERVICE_USER}")]


def check_latched(facts: Facts) -> list[Result]:
    """A latched fault in the state file: the unit shoots no more until it is proven gone."""
    from launcher.core.machine.vocabulary import clear_refusal
    from launcher.core.store import parse

    path = state_path(facts.files.get(CONFIG))
    text = facts.files.get(path.lstrip("/"))
    if text is None:
        return [Result(PASS, "latched fault", f"none ({path} not written yet)")]
    try:
        record = parse(json.loads(text)).fault
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        return [Result(WARN, "latched fault", f"{path} is unreadable or failed its check "
                       f"({exc}): the firmware starts from defaults with every latched fault "
                       "class held until its check passes again",
                       "look at the unit's copper, then a lid cycle and `clear`")]
    if record is None:
        return [Result(PASS, "latched fault", f"none in {path}")]
    if record.unproven:
        return [Result(FAIL, "latched fault", f"{', '.join(record.unproven)} latched in "
                       f"{path}: the unit shoots no more", clear_refusal(record.unproven))]
    return [Result(WARN, "latched fault", f"{record.code} proven gone, not yet cleared",
                   "`clear` on the console")]


def check_code(facts: Facts) -> list[Result]:
    """The installed code is what was installed: every module and its bytecode match the
    manifest written at install time (a truncated or altered file, a stale copy)."""
    from launcher.tools.manifest import NAME

    if facts.code is None:
        return [Result(FAIL, "code", f"no installed copy at /{SRC}", INSTALL)]
    missing = [line for line in facts.code if line.startswith(NAME)]
    if missing:
        return [Result(WARN, "code", f"/{SRC}/{missing[0]}: the code is not checked",
                       "sudo systemd/install.sh again (it writes the manifest)")]
    if facts.code:
        more = f" (and {len(facts.code) - 3} more)" if len(facts.code) > 3 else ""
        return [Result(FAIL, "code", f"{len(facts.code)} files of /{SRC} differ from what was "
                       f"installed: {'; '.join(facts.code[:3])}{more}",
                       "sudo systemd/install.sh from a good checkout (and check the SD card)")]
    return [Result(PASS, "code", f"every module in /{SRC} matches its manifest")]


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


CHECKS = (check_board, check_factory, check_pigpiod_timing, check_groups, check_gpiochip,
          check_boot_config, check_amp_sd_pin, check_strict_gpiod, check_boot_pulls,
          check_watchdog, check_audio, check_alsa_default, check_serial, check_config,
          check_safety_pins, check_state_dir, check_latched, check_code, check_service)


def diagnose(facts: Facts) -> list[Result]:
    """Every check, in the order a maker fixes things."""
    return [result for check in CHECKS for result in check(facts)]


# -- the command ----------------------------------------------------------------------------

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
        why = f"not a Raspberry Pi (no Raspberry Pi in {root / 'proc/device-tree/model'})"
        if args.json:  # a tool reads stdout: the answer is there, in the form it asked for
            print(json.dumps({"model": None, "checks": [], "ok": False, "error": why},
                             indent=2))
        else:
            print(f"launcher doctor: {why}, nothing to check here; off a Pi, `launcher config "
                  "check FILE` checks a config and `launcher selftest --auto` runs the "
                  "self-test on the simulated launcher", file=sys.stderr)
        return EXIT_NOT_A_PI
    run = recorded(Path(args.recorded)) if args.recorded else run_command
    facts = gather(root, run)
    results = diagnose(facts)
    report = {"model": model, "checks": [asdict(r) for r in results],
              "ok": all(r.status != FAIL for r in results)}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        sys.stdout.write(render(model, results))
    if args.keep:
        keep_report(report, root, facts)
    return 1 if any(r.status == FAIL for r in results) else 0


def keep_report(report: dict[str, object], root: Path, facts: Facts) -> None:
    """``--keep``: the report, with when it was made, beside the state file (under
    ``root``), where the console's `doctor` and the web panel read it. A folder it cannot
    write is said on stderr; the checks' verdict stands."""
    from datetime import UTC, datetime

    from launcher.firmware.doctor_report import keep, report_path

    state = Path(state_path(facts.files.get(CONFIG)))
    path = root / report_path(state).relative_to(state.anchor)
    made = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    try:
        keep({**report, "at": made}, path)
    except OSError as exc:
        print(f"launcher doctor: the report was not kept in {path}: {exc}", file=sys.stderr)
        return
    print(f"launcher doctor: kept in {path} (the console's `doctor` shows it)",
          file=sys.stderr)


def register(subparsers: argparse._SubParsersAction) -> None:
    doctor = verb(
        subparsers, "doctor",
        help="check this Pi for the launcher: PASS/WARN/FAIL with the fix for each",
        description="Check a Raspberry Pi for the launcher, before and after wiring: the "
        "board and pin factory, the service user's groups, /dev/gpiochip*, config.txt (the "
        "amplifier overlay, the UART or USB gadget, strict_gpiod), the watchdog, the "
        "amplifier card and ALSA's default, the serial port, the config and its pins, the "
        "state folder and a latched fault in the state file, and the service with its last "
        "fault. Each line is PASS, WARN or FAIL with the fix; it changes nothing (but for "
        "--keep's report) and does not open the GPIO. Run it with sudo to read the service's "
        "journal. Every check: docs/doctor.md.",
        examples=["sudo /opt/launcher/venv/bin/launcher doctor",
                  "sudo /opt/launcher/venv/bin/launcher doctor --json   # for tools",
                  "sudo /opt/launcher/venv/bin/launcher doctor --keep   # for the console "
                  "and the web panel"],
        exit_status="0 no check failed (WARNs allowed), 1 a check failed, 2 not a Raspberry "
        "Pi (with --json, a JSON object saying so on stdout).")
    doctor.add_argument("--json", action="store_true", help="one JSON object for tools")
    doctor.add_argument("--keep", action="store_true",
                        help="also keep the report beside the state file (doctor.json), "
                             "where the console's `doctor` and the web panel show it: the "
                             "one thing it writes")
    doctor.add_argument("--root", default="/", metavar="DIR",
                        help="treat DIR as / (tests; commands still run here unless --recorded)")
    doctor.add_argument("--recorded", metavar="FILE",
                        help="answer the commands from a TOML file of recorded outputs "
                             "instead of running them (tests)")
    doctor.set_defaults(func=cmd_doctor)
