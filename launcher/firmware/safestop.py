"""``launcher safe-stop``: drive the motor and rotator pins low from a fresh process.

systemd runs it (``ExecStopPost=``) after every end of ``launcher run``, including a crash
or ``kill -9``. It cannot ask the dead process for anything, and it must not need it:
with pigpio the daemon keeps every output at the level it last had, so a launcher killed
mid-shot would keep its roller turning. This opens the pins again through the same
``hal.gpio`` adapters, drives them to their safe levels and lets them go; the pull-downs
on the driver inputs (hardware/power.md) hold them there afterwards.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import tomllib
from collections.abc import Callable
from pathlib import Path

from gpiozero.pins import Factory

from hal.base import HardwareError, Pins
from hal.gpio import GpioOutput, GpioRotator, HBridgeMotor, factory_name, make_factory, pi_model
from launcher.core import config
from launcher.core.config import Settings
from launcher.core.errors import ConfigError
from launcher.firmware.disk import atomic_write

log = logging.getLogger(__name__)

# The pins safe-stop drives low, in this order: the driver's nSLEEP first (it cuts both
# motor outputs at once), then the two inputs of the bridge, then the rotator (and its
# second input, ``rotator_in2``, when one is wired).
SAFE_LOW = ("motor_sleep", "motor_in1", "motor_in2", "rotator")

# If the configured factory cannot start, what else can still reach the pins. pigpio:
# the daemon is down, but the levels it set are still in the GPIO registers.
FALLBACK = {"pigpio": "native"}


def drive_safe(pins: Pins, factory: Factory) -> list[str]:
    """Drive nSLEEP, IN1, IN2 and the rotator's inputs low on ``factory`` and release them.

    Every part is tried even when one fails; the failures are raised together at the end.
    Returns the parts that were driven low.
    """
    done: list[str] = []
    errors: list[str] = []

    def attempt(what: str, part: Callable[[], object]) -> None:
        try:
            part()
        except Exception as exc:  # gpiozero raises its own types per factory and failure
            errors.append(f"{what}: {exc}")
        else:
            done.append(what)

    attempt("motor_sleep", lambda: _low(GpioOutput(pins.motor_sleep, factory)))
    attempt("motor_in1+in2", lambda: _coast(HBridgeMotor(pins.motor_in1, pins.motor_in2, factory)))
    attempt("rotator", lambda: _rotator_off(GpioRotator(pins.rotator, pins.rotator_in2, factory)))
    if errors:
        raise HardwareError("safe-stop could not drive " + "; ".join(errors))
    return done


def _low(output: GpioOutput) -> None:
    try:
        output.off()
    finally:
        output.close()


def _rotator_off(rotator: GpioRotator) -> None:
    try:
        rotator.off()  # both of its inputs, when it has two
    finally:
        rotator.close()


def _coast(motor: HBridgeMotor) -> None:
    try:
        # Coast, not brake: braking holds both inputs high, and the pins are about to be
        # released to the pull-downs, which read as "both low" anyway.
        motor.stop(brake=False)
    finally:
        motor.close()


PINS_FILE = "last-good-pins.json"  # beside the state file: the pins of the last good start


def pins_file(settings: Settings) -> Path:
    return settings.state_path.parent / PINS_FILE


def remember_pins(settings: Settings) -> None:
    """Note the pins and factory of a good start, for a safe-stop whose config breaks later."""
    data = {"pin_factory": settings.pin_factory, "pins": dataclasses.asdict(settings.pins)}
    try:
        atomic_write(pins_file(settings), json.dumps(data, sort_keys=True) + "\n")
    except OSError as exc:
        log.warning("cannot remember the pins in %s: %s", pins_file(settings), exc)


def _remembered(path: Path) -> tuple[Settings, Path] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        raw = config.merge(config.default_raw(), {
            "board": {"pin_factory": data["pin_factory"]},
            "pins": {k: -1 if v is None else v for k, v in data["pins"].items()}})
        return config.settings_from_dict(raw), path
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None  # ConfigError is a ValueError: a bad file is no memory at all


def settings_for_safe_stop(path: str | None, state_dir: Path | None = None
                           ) -> tuple[Settings, str | None]:
    """The settings to stop with, and what was worked around (None: the config as it is).

    In order: the config; a config broken outside ``[board]`` and ``[pins]`` (edited while
    the launcher ran, say) with those two tables; the pins remembered from the last good
    start (``launcher run`` writes them beside the default state file); and, only when the
    config file cannot be read at all, the default pins. Pins that are readable but wrong
    are not guessed around when nothing was remembered: the error is raised.
    """
    try:
        return config.load(path), None
    except ConfigError as exc:
        if path is None:
            raise
        error = exc
    unreadable = error.key == "file"
    if not unreadable:
        try:
            user = tomllib.loads(Path(path).read_text(encoding="utf-8"))
            partial = {key: user[key] for key in ("board", "pins") if key in user}
            settings = config.settings_from_dict(config.merge(config.default_raw(), partial))
            return settings, f"config error ({error}); stopping with its [board] and [pins]"
        except (OSError, ValueError, RecursionError):
            pass  # the pins themselves are broken (ConfigError and TOML errors are ValueErrors)
    defaults = config.load(None)
    remembered = _remembered((state_dir or defaults.state_path.parent) / PINS_FILE)
    if remembered is not None:
        settings, where = remembered
        return settings, f"config error ({error}); using the pins of the last good start ({where})"
    if unreadable:
        return defaults, f"config error ({error}); using the default pins"
    raise error


def factory_names(settings: Settings, model: str | None = None,
                  env: dict[str, str] | None = None) -> list[str]:
    """The pin factories to try, in order."""
    name = factory_name(settings.pin_factory, model, env)
    return [name] + ([FALLBACK[name]] if name in FALLBACK else [])


def safe_stop(settings: Settings, *, model: str | None = None,
              make: Callable[[str], Factory] = make_factory) -> str:
    """Drive the configured motor and rotator pins low; returns the pin factory used."""
    problems: list[str] = []
    for name in factory_names(settings, model):
        try:
            factory = make(name)
        except HardwareError as exc:
            problems.append(str(exc))
            continue
        try:
            drive_safe(settings.pins, factory)
        finally:
            factory.close()
        return name
    raise HardwareError("safe-stop found no way to the pins: " + " / ".join(problems))


def cmd_safe_stop(args: argparse.Namespace) -> int:
    settings, problem = settings_for_safe_stop(args.config)
    if problem is not None:
        log.warning("%s", problem)
    name = safe_stop(settings, model=pi_model())
    p = settings.pins
    source = "config" if problem is None else problem.split("; ", 1)[1]
    in2 = "" if p.rotator_in2 is None else f" rotator_in2={p.rotator_in2}"
    print(f"safe-stop: motor_sleep={p.motor_sleep} motor_in1={p.motor_in1} "
          f"motor_in2={p.motor_in2} rotator={p.rotator}{in2} low ({name}; {source})")
    return 0
