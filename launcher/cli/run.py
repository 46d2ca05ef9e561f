"""``launcher run``: the firmware on a Pi's board, or (``--simulated``) on the simulated
launcher with its console on a pty, a laptop's stand-in for the Pi's serial port.

Either way :func:`launcher.firmware.runner.run_firmware` runs it: the same guard thread,
watchdog and safe stop. Off a Pi, a bare ``launcher run`` says what to run instead of
writing the Pi's state file and waiting for a /dev/serial0 that will never come.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from launcher.core import config

log = logging.getLogger("launcher")

NOT_A_PI = ("launcher run: this is not a Raspberry Pi; `launcher run --simulated` runs the "
            "firmware on the simulated launcher with its console on a pty (`launcher play` "
            "drives one from the keyboard)")


def run_unit(args: argparse.Namespace, settings: config.Settings, seed: int) -> int:
    """Run the firmware as ``args`` (``--simulated``, ``--port``) and the config ask."""
    from hal.gpio import factory_name, pi_model
    from launcher.firmware.owner import owning
    from launcher.firmware.places import check_places

    if args.simulated:
        from launcher.cli.paths import simulated_state

        settings = simulated_state(settings, "run-state.json", args.state)
    elif args.state:
        settings = replace(settings, state_path=Path(args.state))
    # The paths and port, before anything is opened or written (the --port of the command
    # line is the operator's own, and may be a pyserial URL).
    check_places(settings)
    if args.port is not None:
        settings = replace(settings, console=replace(settings.console, port=args.port))
    # The one place that decides between a real board and the simulated one.
    name = "sim" if args.simulated else factory_name(settings.pin_factory, pi_model())
    if name == "mock" and not _mock_asked_for(settings):
        print(NOT_A_PI, file=sys.stderr)
        return 2
    # One process on a state file, for as long as it runs (launcher.firmware.owner).
    with owning(settings.state_path):
        return _run_owned(args, settings, seed, name)


def _run_owned(args: argparse.Namespace, settings: config.Settings, seed: int,
               name: str) -> int:
    from launcher.core.reactor import RealReactor

    reactor = RealReactor()
    rng = random.Random(seed)
    if name == "sim":
        return _run_simulated(settings, reactor, rng, seed, args)
    if name == "mock":
        # A config (or GPIOZERO_PIN_FACTORY) that names the mock pins: its own state path
        # and port, as given (the tests of the service run this way).
        from launcher.firmware.runner import run_firmware
        from launcher.sim.unit import console_extras, simulated_app

        log.warning("pin factory mock: running on the SIMULATED launcher")
        app, sim = simulated_app(settings, reactor, rng, log.warning)
        return run_firmware(app, seed, config_path=args.config,
                            console_extras=console_extras(sim))
    from hal.gpio import open_board
    from launcher.firmware.app import build_app
    from launcher.firmware.runner import run_firmware
    from launcher.firmware.safestop import remember_pins

    app = build_app(settings, reactor, rng, open_board(settings.pins, name))
    remember_pins(settings)  # for a safe-stop whose config breaks before the next start
    return run_firmware(app, seed, config_path=args.config)


def _mock_asked_for(settings: config.Settings) -> bool:
    return settings.pin_factory == "mock" or os.environ.get("GPIOZERO_PIN_FACTORY") == "mock"


def _run_simulated(settings: config.Settings, reactor: Any, rng: random.Random, seed: int,
                   args: argparse.Namespace) -> int:
    """The simulated launcher, its console on a new pty unless ``--port`` names one."""
    from launcher.firmware.console import Console
    from launcher.firmware.runner import run_firmware
    from launcher.firmware.transport import PtyTransport, Transport
    from launcher.sim.unit import console_extras, resume_cartridge, simulated_app

    log.warning("running on the SIMULATED launcher, state in %s", settings.state_path)
    app, sim = simulated_app(settings, reactor, rng, log.warning)
    made: list[PtyTransport] = []

    def on_pty(console: Console) -> Transport:
        made.append(PtyTransport(console, reactor))
        return made[0]

    def ready() -> None:
        resume_cartridge(app, sim)  # as `launcher play` starts: the saved count
        if not made:
            return
        path = made[0].path
        # stdout: the path alone, for a script; stderr: what to do with it, for a person.
        print(path, flush=True)
        print(f"launcher run: the simulated launcher's console is on {path}: "
              f"`launcher console {path}` or `python -m serial.tools.miniterm {path} "
              f"{settings.console.baud}`; Ctrl-C stops it", file=sys.stderr, flush=True)

    return run_firmware(app, seed, config_path=args.config, console_extras=console_extras(sim),
                        open_console=None if args.port is not None else on_pty,
                        on_ready=ready)
