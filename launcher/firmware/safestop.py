"""``launcher safe-stop``: drive the motor and rotator pins low from a fresh process.

systemd runs it (``ExecStopPost=``) after every end of ``launcher run``, including a crash
or ``kill -9``. It cannot ask the dead process for anything, and it must not need it:
with pigpio the daemon keeps every output at the level it last had, so a launcher killed
mid-shot would keep its roller turning. This opens the pins again as plain outputs, drives
them low and lets them go; the pull-downs on the driver inputs (hardware/power.md) hold
them there afterwards.

Plain outputs (``DigitalOutputDevice``, through ``hal.gpio.GpioOutput``), never PWM: a low
level is all safe-stop needs, and every factory has plain outputs, while the fallback from
pigpio (gpiozero's native factory) has no PWM at all. On pigpio a write switches off the
PWM the dead process left running on the pin. Both bridge inputs low is coast, which is
also what the pull-downs read once the pins are let go.

Which pins: those the config names and those of the last good start
(``last-good-pins.json``, beside the state file the config names), so a ``[pins]`` edited
while the firmware ran cannot leave the old IN1 at its duty. The circuit's wiring rules
(hal/circuit.py) are not applied here: whatever a unit is wired to is driven low.

pigpio: the daemon may hang, and a hung pigpiod accepts a connection and never answers
(the pigpio module sets no socket timeout). So on a Pi 1-4 nSLEEP is first driven low with
gpiozero's native factory, which writes the GPIO registers itself: the driver sleeps at
once, whatever pigpiod's PWM is doing on its inputs. Then every pin through pigpio, each
step (the connection, the pins, the goodbye) given ``FACTORY_TIMEOUT`` to answer; a step
that does not answer in time is given up, and the native factory does the rest.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import threading
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from hal.base import SAFE_PINS, HardwareError, Pins
from hal.gpio import GpioOutput, factory_name, make_factory, pi_model
from launcher.core import config
from launcher.core.config import Settings
from launcher.core.errors import ConfigError
from launcher.firmware.disk import atomic_write

if TYPE_CHECKING:
    from gpiozero.pins import Factory

log = logging.getLogger(__name__)
_T = TypeVar("_T")

# The pins safe-stop drives low, in the one order every stop uses (``hal.base.SAFE_ORDER``):
# the driver's nSLEEP first (it cuts both motor outputs at once), then the two inputs of
# the bridge, then the rotator's, and the dead-man; those not wired are skipped.
# ``SAFE_LOW``: the ones every launcher has wired.
SAFE_LOW = tuple(name for name in SAFE_PINS if name not in Pins.OPTIONAL)

# If the configured factory cannot start, what else can still reach the pins. pigpio:
# the daemon is down, but the levels it set are still in the GPIO registers.
FALLBACK = {"pigpio": "native"}
# How long one step of a factory may take: starting it (pigpio: connecting to the daemon),
# driving the pins, closing it. Three steps and the fallback's fit in the unit's
# TimeoutStopSec=10 (systemd/launcher.service), which bounds ExecStopPost= as a whole.
FACTORY_TIMEOUT = 2.0


@dataclass(frozen=True)
class Target:
    """One pin to drive low: its number and the config names it had (``from_memory``: only
    in last-good-pins.json, not in the config as it is now)."""

    number: int
    names: tuple[str, ...]
    from_memory: bool = False

    def __str__(self) -> str:
        return f"{'+'.join(self.names)}={self.number}"


def targets(pins: Pins, remembered: Pins | None = None) -> list[Target]:
    """The motor and rotator pins of ``pins``, then those of ``remembered`` that differ,
    each number once, nSLEEP first."""
    order = SAFE_PINS
    found: dict[int, tuple[list[str], bool]] = {}
    for name in order:
        for source in (pins, remembered):
            number = None if source is None else getattr(source, name)
            if number is None:
                continue
            names, memory = found.setdefault(number, ([], source is not pins))
            if name not in names:
                names.append(name)
            if source is pins and memory:
                found[number] = (names, False)
    return [Target(n, tuple(names), memory) for n, (names, memory) in found.items()]


def drive_safe(pins: Pins, factory: Factory, remembered: Pins | None = None) -> list[Target]:
    """Drive nSLEEP, IN1, IN2 and the rotator's inputs low on ``factory`` as plain outputs,
    and release them; with ``remembered``, its differing pins too.

    Every pin is tried even when one fails; the failures are raised together at the end,
    naming the pins that were driven. Returns the pins that were driven low.
    """
    done: list[Target] = []
    errors: list[str] = []
    for target in targets(pins, remembered):
        try:
            _low(GpioOutput(target.number, factory))
        except Exception as exc:  # gpiozero raises its own types per factory and failure
            errors.append(f"{target}: {exc}")
        else:
            done.append(target)
    if errors:
        drove = " ".join(map(str, done)) or "nothing"
        raise HardwareError(f"safe-stop could not drive {'; '.join(errors)} "
                            f"(it drove {drove} low)")
    return done


def _low(output: GpioOutput) -> None:
    try:
        output.off()
    finally:
        output.close()


PINS_FILE = "last-good-pins.json"  # beside the state file: the pins of the last good start


def pins_file(state_path: Path) -> Path:
    """Where the unit whose state file is ``state_path`` remembers its last good pins."""
    return state_path.parent / PINS_FILE


def remember_pins(pin_factory: str, pins: Pins, state_path: Path) -> None:
    """Note the pins and factory of a good start beside ``state_path``, for a safe-stop whose
    config breaks later."""
    data = {"pin_factory": pin_factory, "pins": dataclasses.asdict(pins)}
    try:
        atomic_write(pins_file(state_path), json.dumps(data, sort_keys=True) + "\n")
    except OSError as exc:
        log.warning("cannot remember the pins in %s: %s", pins_file(state_path), exc)


def _remembered(path: Path) -> tuple[Settings, Path] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        raw = config.merge(config.default_raw(), {
            "board": {"pin_factory": data["pin_factory"]},
            "pins": {k: -1 if v is None else v for k, v in data["pins"].items()},
            # Pins the dead process used are not refused for the sound or the console
            # the defaults would reserve them for: they only have to be driven low.
            "audio": {"backend": "null"}, "console": {"port": ""}})
        return config.settings_from_dict(raw, circuit_rules=False), path
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None  # ConfigError is a ValueError: a bad file is no memory at all


def state_folder(path: str | None) -> Path:
    """The folder of the state file ``path``'s config names: where ``launcher run`` keeps
    last-good-pins.json. Read even from a config that is broken elsewhere (only
    ``state.path`` has to be a string); the default state folder when it cannot be read."""
    default = config.load(None).state_path.parent
    if path is None:
        return default
    try:
        return config.load(path, circuit_rules=False).state_path.parent
    except ConfigError:
        pass
    try:
        user = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        named = user["state"]["path"]
    except (OSError, ValueError, RecursionError, KeyError, TypeError):
        return default  # unreadable, or no [state] path: the default, as a start would use
    return Path(named).parent if isinstance(named, str) and named else default


def remembered_pins(folder: Path) -> Pins | None:
    """The pins of the last good start, from last-good-pins.json in ``folder`` (None: none)."""
    found = _remembered(folder / PINS_FILE)
    return None if found is None else found[0].pins


def settings_for_safe_stop(path: str | None, state_dir: Path | None = None
                           ) -> tuple[Settings, str | None]:
    """The settings to stop with, and what was worked around (None: the config as it is).

    In order: the config; a config broken outside ``[board]`` and ``[pins]`` (edited while
    the launcher ran, say) with those two tables; the pins remembered from the last good
    start (``launcher run`` writes them beside the state file; ``state_dir``, by default
    the folder of the state file the config names); and, only when the config file cannot
    be read at all, the default pins. Pins that are readable but wrong are not guessed
    around when nothing was remembered: the error is raised.
    """
    try:
        return config.load(path, circuit_rules=False), None
    except ConfigError as exc:
        if path is None:
            raise
        error = exc
    unreadable = error.key == "file"
    if not unreadable:
        try:
            user = tomllib.loads(Path(path).read_text(encoding="utf-8"))
            partial = {key: user[key] for key in ("board", "pins") if key in user}
            settings = config.settings_from_dict(config.merge(config.default_raw(), partial),
                                                 circuit_rules=False)
            return settings, f"config error ({error}); stopping with its [board] and [pins]"
        except (OSError, ValueError, RecursionError):
            pass  # the pins themselves are broken (ConfigError and TOML errors are ValueErrors)
    folder = state_dir if state_dir is not None else state_folder(path)
    remembered = _remembered(folder / PINS_FILE)
    if remembered is not None:
        settings, where = remembered
        return settings, f"config error ({error}); using the pins of the last good start ({where})"
    if unreadable:
        return config.load(None), f"config error ({error}); using the default pins"
    raise error


def factory_names(settings: Settings, model: str | None = None,
                  env: dict[str, str] | None = None) -> list[str]:
    """The pin factories to try, in order."""
    name = factory_name(settings.pin_factory, model, env)
    return [name] + ([FALLBACK[name]] if name in FALLBACK else [])


@dataclass(frozen=True)
class Stopped:
    """What safe-stop did: the pin factory it used, the pins it drove low, and the nSLEEP
    pins it had driven low natively first (``asleep_first``; pigpio only)."""

    factory: str
    driven: tuple[Target, ...]
    asleep_first: tuple[Target, ...] = ()


class FactoryHung(HardwareError):
    """A pin factory's step did not answer within its time (a hung pigpiod)."""


def _within(seconds: float | None, what: str, step: Callable[[], _T]) -> _T:
    """``step()``'s result, from a thread of its own that gets ``seconds`` to finish (None:
    as long as it takes); a step still running then is left behind (it closes what it made
    if it ever returns) and ``FactoryHung`` is raised."""
    done = threading.Event()
    box: dict[str, object] = {}
    abandoned = threading.Event()

    def run() -> None:
        try:
            box["value"] = step()
        except BaseException as exc:  # handed to the caller, whatever it was
            box["error"] = exc
        done.set()
        if abandoned.is_set() and hasattr(box.get("value"), "close"):
            try:
                box["value"].close()  # type: ignore[union-attr]
            except Exception as exc:  # a late answer from a daemon given up on: only log
                log.warning("closing %s after it answered late: %s", what, exc)

    worker = threading.Thread(target=run, name=f"safe-stop: {what}", daemon=True)
    worker.start()
    if not done.wait(seconds):
        abandoned.set()
        raise FactoryHung(f"{what} did not answer within {seconds:g} s (a hung daemon?)")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def _drive_on(factory: Factory, name: str, drive: Callable[[Factory], _T],
              timeout: float | None) -> _T:
    """``drive(factory)`` and then the factory closed, on a thread of their own: the drive
    gets ``timeout`` to answer (else ``FactoryHung``, and the thread closes the factory
    itself if the daemon ever answers), and the goodbye as long again."""
    driven = threading.Event()
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = drive(factory)
        except BaseException as exc:  # handed to the caller, whatever it was
            box["error"] = exc
        driven.set()
        try:
            factory.close()
        except Exception as exc:  # gpiozero raises its own types per factory
            log.warning("closing pin factory %s: %s", name, exc)

    worker = threading.Thread(target=run, name=f"safe-stop: {name}", daemon=True)
    worker.start()
    if not driven.wait(timeout):
        raise FactoryHung(f"pin factory {name} did not answer within {timeout:g} s "
                          "(a hung daemon?)")
    worker.join(timeout)
    if worker.is_alive():
        log.warning("pin factory %s did not close within %g s", name, timeout)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def _sleep_natively(pins: Pins, remembered: Pins | None, make: Callable[[str], Factory],
                    timeout: float, problems: list[str]) -> tuple[Target, ...]:
    """nSLEEP (the motor_sleep pins) low through the native factory: on a Pi 1-4 it writes
    the registers itself, so no daemon can hold it up. Best effort: a failure is noted and
    the pins are driven by the factories after it all the same."""
    sleep = [t for t in targets(pins, remembered) if "motor_sleep" in t.names]

    def drive(factory: Factory) -> tuple[Target, ...]:
        driven = []
        for target in sleep:
            try:
                _low(GpioOutput(target.number, factory))
            except Exception as exc:  # each factory raises its own types
                problems.append(f"nSLEEP natively first: {target}: {exc}")
            else:
                driven.append(target)
        return tuple(driven)

    try:
        factory = _within(timeout, "pin factory native", lambda: make("native"))
        return _drive_on(factory, "native", drive, timeout)
    except HardwareError as exc:
        problems.append(f"nSLEEP natively first: {exc}")
        return ()


def safe_stop(settings: Settings, *, model: str | None = None,
              make: Callable[[str], Factory] = make_factory,
              remembered: Pins | None = None, timeout: float = FACTORY_TIMEOUT) -> Stopped:
    """Drive the configured motor and rotator pins low (and ``remembered``'s, where they
    differ), as plain outputs, on the first pin factory that starts and answers within
    ``timeout`` at each step; with pigpio, nSLEEP natively first."""
    problems: list[str] = []
    names = factory_names(settings, model)
    first: tuple[Target, ...] = ()
    if names[0] in FALLBACK:
        first = _sleep_natively(settings.pins, remembered, make, timeout, problems)
    for name in names:
        # A step is timed only where something else can be tried after it (pigpio's daemon
        # may hang; native follows it): the last factory gets as long as it takes (lgpio,
        # in-process, imports for seconds on a slow CPU), within systemd's TimeoutStopSec.
        limit = timeout if name in FALLBACK else None
        try:
            factory = _within(limit, f"pin factory {name}", lambda name=name: make(name))
        except HardwareError as exc:
            problems.append(str(exc))
            continue
        try:
            driven = _drive_on(factory, name,
                               lambda f: drive_safe(settings.pins, f, remembered), limit)
        except FactoryHung as exc:
            problems.append(str(exc))
            continue
        for problem in problems:
            log.warning("safe-stop: %s", problem)
        return Stopped(name, tuple(driven), first)
    raise HardwareError("safe-stop found no way to the pins: " + " / ".join(problems))


def cmd_safe_stop(args: argparse.Namespace) -> int:
    folder = state_folder(args.config)
    settings, problem = settings_for_safe_stop(args.config, folder)
    if problem is not None:
        log.warning("%s", problem)
    remembered = remembered_pins(folder)
    extra = [t for t in targets(settings.pins, remembered) if t.from_memory]
    if extra:
        log.warning("the pins of the last good start (%s) differ from the config's: "
                    "driving %s low too", folder / PINS_FILE, " ".join(map(str, extra)))
    done = safe_stop(settings, model=pi_model(), make=make_factory, remembered=remembered)
    source = "config" if problem is None else problem.split("; ", 1)[1]
    ours = " ".join(str(t) for t in done.driven if not t.from_memory)
    memory = " ".join(str(t) for t in done.driven if t.from_memory)
    also = f", and from {PINS_FILE} {memory}" if memory else ""
    first = " ".join(map(str, done.asleep_first))
    before = f"{first} low natively first, then " if first else ""
    print(f"safe-stop: {before}{ours}{also} low ({done.factory}; {source})")
    return 0
