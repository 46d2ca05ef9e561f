"""What guards and actions see of the machine: its state, settings, memory and input levels.

``engine.Machine`` is one; the guards and actions name this protocol, not the engine, so the
engine imports them and nothing imports it back.
"""

from __future__ import annotations

from typing import Protocol

from launcher.core.machine.memory import Inputs, Memory
from launcher.core.machine.settings import MachineSettings
from launcher.core.machine.vocabulary import State
from launcher.core.profiles import Profile


class MachineView(Protocol):
    settings: MachineSettings
    memory: Memory
    inputs: Inputs
    state: State  # as the console says it
    at: State  # the table's state: a part of one, where it has parts
    has_beam: bool
    profile: Profile
