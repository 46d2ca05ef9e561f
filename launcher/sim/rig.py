"""The firmware on a simulated launcher and a manual reactor, with verbs for tests and games."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from hal.circuit import Build
from hal.sim import HISTORY, History, Physics, SimLauncher
from launcher.core import config, machine
from launcher.core.config import Settings
from launcher.core.reactor import ManualReactor
from launcher.firmware.app import CueSink, build_app
from launcher.firmware.state import StateStore

STEP = 0.02  # seconds of reactor time per settle step
CUE_LOG = HISTORY  # cues a CueLog keeps (the newest); a long run must not grow without bound


def sim_build(rotator: config.Rotator) -> Build:
    """The build the simulated unit is for the config's ``[rotator]``: a rotator of its own
    (``driver = "own"``) is simulated on its MOSFET (option B), the shared one on the
    driver's second channel (option A)."""
    return Build(rotator="mosfet" if rotator.driver == "own" else "bridge")


class CueLog:
    """A cue sink that only remembers: the newest cues played, and whether sound is asleep.

    ``played`` keeps the newest ``keep`` cue names (indexing, ``in`` and ``len`` work as on
    a list); ``total`` counts every cue ever played.
    """

    def __init__(self, keep: int = CUE_LOG) -> None:
        self.played: History[str] = History(maxlen=keep)
        self.total = 0
        self.asleep = False

    def play(self, name: str) -> None:
        self.played.append(name)
        self.total += 1

    def sleep(self) -> None:
        self.asleep = True

    def wake(self) -> None:
        self.asleep = False


class SimRig:
    """A whole simulated unit: ``SimLauncher`` pins + ``Launcher`` + ``ManualReactor``."""

    def __init__(self, settings: Settings | None = None, seed: int = 0,
                 physics: Physics | None = None, side: str = "mild",
                 store: StateStore | None = None, cues: CueSink | None = None,
                 keep: int = HISTORY,
                 before_start: Callable[[SimLauncher], None] | None = None) -> None:
        """``keep``: how many motor samples, ejected cards and cues the histories keep;
        ``before_start``: done to the simulated launcher before the firmware starts (a
        fault already there at power-on, say)."""
        self.settings = settings or config.load()
        self.reactor = ManualReactor()
        self.sim = SimLauncher(self.reactor, self.settings.pins, physics, side, keep=keep,
                               build=sim_build(self.settings.rotator))
        if before_start is not None:
            before_start(self.sim)
        self.cues: Any = cues if cues is not None else CueLog(keep)
        self.app = build_app(self.settings, self.reactor, random.Random(seed), self.sim.board,
                             cues=self.cues, store=store or StateStore(None))
        self.faults: list[dict[str, Any]] = []  # every fault event, however long the run
        self.app.listeners.append(self._heard)
        self.app.start()
        self.settle()

    def _heard(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "fault":
            self.faults.append(dict(data))

    # -- time --

    def advance(self, seconds: float) -> None:
        self.reactor.advance(seconds)

    @property
    def now(self) -> float:
        return self.reactor.monotonic()

    @property
    def state(self) -> str:
        return self.app.machine.state

    def settle(self, limit: float = 30.0) -> None:
        """Run until the firmware is neither shooting nor rotating (at most ``limit`` s)."""
        end = self.now + limit
        self.advance(0)
        while self.state in (machine.SHOOTING, *machine.TURNING) and self.now < end:
            self.advance(STEP)

    # -- verbs --

    def press(self) -> list[Any]:
        """Press the button, wait until the firmware is idle, and take what came out."""
        self.sim.press()
        self.advance(0)
        self.settle()
        # Let the button go and the mash guard pass before the next press.
        self.advance(max(self.sim.physics.press_time, self.settings.timing.mash_guard) + STEP)
        self.settle()
        return self.sim.take()

    def flip(self) -> str:
        """Open the lid fully, let the cartridge turn, close the lid; the side the firmware read."""
        self.sim.open_lid(full=True)
        self.advance(STEP)
        self.settle()
        self.sim.close_lid()
        self.advance(self.settings.timing.debounce + STEP)
        return self.side

    def load(self, cards: list[Any]) -> None:
        """Put cards in the cartridge and tell the firmware how many there are."""
        self.sim.load(cards)
        self.load_inventory(len(self.sim.cartridge))

    def load_inventory(self, n: int) -> None:
        self.app.load(n)
        self.advance(0)

    @property
    def side(self) -> str:
        return self.app.machine.memory.side

    @property
    def inventory(self) -> int | None:
        """The firmware's own count of the cards in the cartridge (None: unknown)."""
        return self.app.machine.memory.inventory

    def close(self) -> None:
        self.app.stop()
        self.sim.board.close()
