"""A firmware process for ``test_power_cuts`` to kill: ``launcher run`` on the simulated board.

Usage: ``python kill_driver.py CONFIG SEED``. It builds the same app as ``launcher run``
off a Pi (``launcher.sim.unit.simulated_app`` on a ``RealReactor``) and runs it with
``run_firmware``; a reactor timer presses the simulated button as fast as the mash guard
allows, reloads the cartridge when it runs dry and hands the state to the writer on every
tick, so that the writer thread is nearly always writing. It prints one line when it has
loaded the state, then markers as it goes, each one written whole to the pipe:
``S``/``s`` a shot starts/ends, ``W``/``w`` a state write starts/ends. It never stops by
itself: the test kills it with SIGKILL.
"""

from __future__ import annotations

import json
import logging
import os
import random
import sys
from pathlib import Path

from launcher.core import config
from launcher.core import machine as m
from launcher.core.reactor import RealReactor
from launcher.firmware.disk import atomic_write, temp_prefix
from launcher.firmware.runner import run_firmware
from launcher.sim.unit import console_extras, simulated_app

TICK = 0.005  # seconds between the driver's turns


def say(text: str) -> None:
    os.write(1, (text + "\n").encode())  # one write: a line is never split by a kill


def main(config_path: str, seed: int) -> int:
    logging.basicConfig(level=logging.WARNING)
    settings = config.load(config_path)
    reactor = RealReactor()
    app, sim = simulated_app(settings, reactor, random.Random(seed), logging.warning)
    path = settings.state_path
    # What this start found on disk (Launcher's constructor has loaded the state file).
    temps = sorted(p.name for p in path.parent.glob(temp_prefix(path) + "*"))
    say("loaded " + json.dumps({"saved": json.loads(app.saved().to_json()),
                                "problem": app.store.problem, "temps": temps}))

    def write(target: Path, data: str) -> None:
        say("W")
        atomic_write(target, data)  # the firmware's own writer, markers around it
        say("w")

    app.store._write = write

    def heard(kind: str, data: dict) -> None:
        if kind == "state" and data["to"] == m.SHOOTING:
            say("S")
        elif kind == "state" and data["from"] == m.SHOOTING:
            say("s")

    app.listeners.append(heard)
    last_press = [float("-inf")]

    def turn(eventtime: float) -> float:
        if app.machine.state == m.FAULT:
            # A whole-process stall on a loaded machine can outlast a lease: the guard rightly
            # ends that run as a fault. This test is about kills, not stalls: clear it.
            app.clear_fault()
        if not sim.cartridge and app.machine.state == m.READY:
            sim.load(f"card{i}" for i in range(40))
            app.load(len(sim.cartridge))
        if (app.machine.state == m.READY
                and eventtime - last_press[0] > settings.timing.mash_guard + 0.01):
            last_press[0] = eventtime
            sim.press()
        app.store.save(app.saved())
        return eventtime + TICK

    reactor.register_timer(turn, reactor.monotonic() + TICK, "driver")
    say("ready")
    return run_firmware(app, seed, config_path=config_path, serial=settings.console,
                        console_extras=console_extras(sim))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
