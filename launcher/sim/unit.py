"""The firmware on a simulated launcher, for `launcher play` and `launcher run` off a Pi.

The choice between a real board and this one is made in ``launcher.cli``; the firmware
itself is handed a board and never asks which kind it is.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hal.sim import SimLauncher
from launcher.core.config import Settings
from launcher.core.reactor import Reactor
from launcher.core.store import parse
from launcher.firmware.app import Launcher, build_app
from launcher.sim.rig import sim_build

# The records a simulated unit keeps (motor samples, ejected cards, the cards lying in its
# tray, pin changes): a service that runs for days needs only the newest, and its memory is
# flat once they are full. Nobody picks a service's cards up: its tray kept every card it
# shot, one string a card for ever (python -m bench.service: 0.03 MiB of the 0.25 MiB it grew
# between its 1,000th and 11,000th press).
SERVICE_KEEP = 200
# The state changes each simulated pin keeps, for a service: nothing of the firmware reads
# them (tests read the histories of rigs of their own). At 200 a pin (18 pins), the pins
# that change once or twice a shot were still filling theirs thousands of presses in:
# python -m bench.service measured 0.316 MiB of growth after the first 1,000 presses with
# 200, 0.234 MiB with 8.
SERVICE_PIN_KEEP = 8


def simulated_app(settings: Settings, reactor: Reactor, rng: random.Random,
                  warn: Callable[[str], None]) -> tuple[Launcher, SimLauncher]:
    """The whole firmware on a fresh simulated board, with the simulator behind it.

    The simulated cartridge starts on the side the state file last saw, as a real one stays
    where it was while the power is off (else every start after a session that ended on
    Wild would report ``side_changed_while_off``).
    """
    sim = SimLauncher(reactor, settings.pins, side=saved_side(settings.state_path),
                      keep=SERVICE_KEEP, build=sim_build(settings.rotator),
                      pin_keep=SERVICE_PIN_KEEP, tray_keep=SERVICE_KEEP)
    return build_app(settings, reactor, rng, sim.board, warn=warn), sim


def saved_side(path: Path | None) -> str:
    """The side in a state file; "mild" if there is none or it cannot be read (the
    firmware's own load reports an unreadable file)."""
    if path is None:
        return "mild"
    try:
        return parse(json.loads(path.read_text(encoding="utf-8"))).side
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return "mild"


FULL_LAUNCHER = 84  # 112 cards less 4 hands of 7: a full launcher at the start of a game


def fill_cartridge(app: Launcher, sim: SimLauncher, cards: int = FULL_LAUNCHER) -> None:
    """Top the simulated cartridge up to ``cards`` and tell the firmware (after its start)."""
    sim.load(f"card {i}" for i in range(cards - len(sim.cartridge)))
    app.load(len(sim.cartridge))


def resume_cartridge(app: Launcher, sim: SimLauncher) -> None:
    """At the start: the simulated cartridge holds the cards the state file says the launcher
    held (a real cartridge keeps them while the power is off), a full launcher if it says
    none (a fresh unit, or a count never entered)."""
    saved = app.machine.memory.inventory
    fill_cartridge(app, sim, FULL_LAUNCHER if saved is None else saved)


def console_extras(sim: SimLauncher) -> dict[str, Any]:
    """What a console on the simulated board gets: the sim-only verbs and the self-test."""

    def selftest(settings: Settings) -> Any:
        from launcher.sim.selftest import run_auto  # when the command runs, not at start

        return run_auto(settings, None)

    return {"sim": sim, "selftest": selftest}
