"""The firmware on a simulated launcher, for `launcher play` and `launcher run` off a Pi.

The choice between a real board and this one is made in ``launcher.cli``; the firmware
itself is handed a board and never asks which kind it is.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from hal.sim import SimLauncher
from launcher.core.config import Settings
from launcher.core.reactor import Reactor
from launcher.firmware.app import Launcher, build_app

# The records a simulated unit keeps (motor samples, ejected cards, pin changes): a service
# that runs for days needs only the newest, and its memory is flat once they are full.
SERVICE_KEEP = 200


def simulated_app(settings: Settings, reactor: Reactor, rng: random.Random,
                  warn: Callable[[str], None]) -> tuple[Launcher, SimLauncher]:
    """The whole firmware on a fresh simulated board, with the simulator behind it."""
    sim = SimLauncher(reactor, settings.pins, keep=SERVICE_KEEP)
    return build_app(settings, reactor, rng, sim.board, warn=warn), sim


def console_extras(sim: SimLauncher) -> dict[str, Any]:
    """What a console on the simulated board gets: the sim-only verbs and the self-test."""
    from launcher.sim.selftest import run_auto

    def selftest(settings: Settings) -> Any:
        return run_auto(settings, None)

    return {"sim": sim, "selftest": selftest}
