"""The firmware on the simulated launcher as a game's launcher (``games.launchers.OnFirmware``).

The games play against any ``Launcher``; this one is the real firmware on the simulated
board (``SimRig``: mock pins, the manual reactor), so that a whole game tests the firmware
end to end. It lives here, beside the simulator, because the rule engines import nothing
of the firmware or the simulator: ``launcher simulate --through-firmware`` hands it to a
game as the run's ``firmware`` maker (``games.base.Run``), and a game on the contract takes it
as its chance player through ``games.launchers.LauncherChance``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from launcher.core.config import Settings
from launcher.core.profiles import Profile
from launcher.games.cards import MILD, WILD, Card
from launcher.games.launchers import ProfileUnsupported
from launcher.sim.rig import SimRig


class FirmwareLauncher:
    """The real firmware on the simulated launcher (``launcher.sim.rig.SimRig``).

    It only does what a player does: press the button and pick up what the roller
    ejected, open and close the lid, put cards into the cartridge and tell the firmware
    how many (the ``load`` console command). Faults the firmware reports are kept.
    """

    def __init__(self, settings: Settings | None = None, seed: int = 0,
                 rig: SimRig | None = None, sides: tuple[str, str] = (MILD, WILD)) -> None:
        self.rig = rig if rig is not None else SimRig(settings=settings, seed=seed)
        # The game's names for the cartridge's halves: the Mild (yellow) half first.
        self._names = dict(zip((MILD, WILD), sides, strict=True))
        self.presses = 0
        self.flips = 0

    @property
    def faults(self) -> list[dict[str, Any]]:
        return self.rig.faults

    @property
    def profile(self) -> Profile:
        return self.rig.app.machine.profile

    def use(self, profile: Profile) -> None:
        """Switch the firmware's profile, as the console's ``profile NAME`` does."""
        self.rig.settle()
        if not self.rig.app.use_profile(profile):
            raise ProfileUnsupported(f"the firmware refused profile {profile!s} while "
                                     f"{self.rig.state}")

    @property
    def side(self) -> str:
        return self._names[self.rig.side]

    @property
    def cards_left(self) -> int:
        return len(self.rig.sim.cartridge)

    @property
    def inventory(self) -> int | None:
        """The firmware's own count of the cards in the cartridge (None: unknown)."""
        return self.rig.inventory

    def press(self) -> list[Card]:
        self.presses += 1
        return list(self.rig.press())

    def flip(self) -> str:
        self.flips += 1
        return self._names[self.rig.flip()]

    def load(self, cards: Sequence[Card]) -> None:
        self.rig.load(list(cards))

    def unload(self) -> list[Card]:
        cards = list(self.rig.sim.unload()) + list(self.rig.sim.take())
        self.rig.load_inventory(0)
        return cards

    def contents(self) -> list[Card]:
        sim = self.rig.sim
        stuck = [] if sim.in_beam is None else [sim.in_beam]
        return list(sim.cartridge) + stuck + list(sim.tray)

    def close(self) -> None:
        self.rig.close()
