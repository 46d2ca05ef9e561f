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
import logging
import tomllib
from collections.abc import Callable
from pathlib import Path

from gpiozero.pins import Factory

from hal.base import HardwareError, Pins
from hal.gpio import GpioOutput, HBridgeMotor, factory_name, make_factory, pi_model
from launcher.core import config
from launcher.core.config import Settings
from launcher.core.errors import ConfigError

log = logging.getLogger(__name__)

# The pins safe-stop drives low, in this order: the driver's nSLEEP first (it cuts both
# motor outputs at once), then the two inputs of the bridge, then the rotator.
SAFE_LOW = ("motor_sleep", "motor_in1", "motor_in2", "rotator")

# If the configured factory cannot start, what else can still reach the pins. pigpio:
# the daemon is down, but the levels it set are still in the GPIO registers.
FALLBACK = {"pigpio": "native"}


def drive_safe(pins: Pins, factory: Factory) -> list[str]:
    """Drive nSLEEP, IN1, IN2 and the rotator low on ``factory`` and release them.

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
    attempt("rotator", lambda: _low(GpioOutput(pins.rotator, factory)))
    if errors:
        raise HardwareError("safe-stop could not drive " + "; ".join(errors))
    return done


def _low(output: GpioOutput) -> None:
    try:
        output.off()
    finally:
        output.close()


def _coast(motor: HBridgeMotor) -> None:
    try:
        # Coast, not brake: braking holds both inputs high, and the pins are about to be
        # released to the pull-downs, which read as "both low" anyway.
        motor.stop(brake=False)
    finally:
        motor.close()


def settings_for_safe_stop(path: str | None) -> tuple[Settings, ConfigError | None]:
    """The settings to stop with, and the config error that was worked around, if any.

    A config broken somewhere other than ``[board]`` and ``[pins]`` (say, edited while
    the launcher ran, before it crashed) still says where the motor is: those two tables
    are used with the defaults for the rest. A broken ``[pins]`` is not guessed around.
    """
    try:
        return config.load(path), None
    except ConfigError as exc:
        if path is None:
            raise
        try:
            user = tomllib.loads(Path(path).read_text(encoding="utf-8"))
            partial = {key: user[key] for key in ("board", "pins") if key in user}
            return config.settings_from_dict(config.merge(config.default_raw(), partial)), exc
        except (OSError, tomllib.TOMLDecodeError, ConfigError):
            raise exc from None


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
        log.warning("config error (%s); stopping with its [board] and [pins] tables", problem)
    name = safe_stop(settings, model=pi_model())
    p = settings.pins
    print(f"safe-stop: motor_sleep={p.motor_sleep} motor_in1={p.motor_in1} "
          f"motor_in2={p.motor_in2} rotator={p.rotator} low ({name})")
    return 0
