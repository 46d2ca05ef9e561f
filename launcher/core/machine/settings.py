"""What the machine reads of the configuration, and nothing else: no pins, no paths, no
audio, no console. ``MachineSettings.of`` takes it from the whole ``Settings``."""

from __future__ import annotations

from dataclasses import dataclass

from launcher.core.config import Luck, Motor, Rotator, Settings, Timing
from launcher.core.profiles import Profile


@dataclass(frozen=True, slots=True)
class MachineSettings:
    timing: Timing
    luck: Luck
    motor: Motor  # its speed, for a shot and a debug run
    rotator: Rotator  # the brake time and the creep speed
    brakes: bool  # ``pins.rotator_in2`` is wired: the cartridge can brake and creep at home
    profile: Profile  # what a press does at start (``profile`` changes it)

    @classmethod
    def of(cls, settings: Settings) -> MachineSettings:
        return cls(settings.timing, settings.luck, settings.motor, settings.rotator,
                   settings.pins.rotator_in2 is not None, settings.profile)
