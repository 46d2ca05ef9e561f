"""The machine itself: ``Machine.handle`` (or ``step``) is the only way in; it looks the
rows up in ``transitions.TRANSITIONS``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from launcher.core import cues
from launcher.core.config import SideLuck
from launcher.core.machine.actions import _idle, _internal, _rotate, _wait_for_turn
from launcher.core.machine.memory import Inputs, Memory
from launcher.core.machine.settings import MachineSettings
from launcher.core.machine.transitions import _BY_STATE_EVENT
from launcher.core.machine.vocabulary import (
    _INPUT_OF,
    _PROBE,
    CUE,
    FAULT,
    FAULT_BLINKS,
    INTERNAL,
    LATCHED,
    LED,
    LID_OPEN,
    POWER,
    PRESS,
    PROOFS,
    READY,
    ROTATING,
    SAVE,
    Command,
    Event,
    emit,
)
from launcher.core.profiles import Profile


class Machine:
    """The launcher's behaviour. ``handle`` (or ``step``, the same made lazily) is the only
    way in."""

    def __init__(self, settings: MachineSettings, memory: Memory | None = None,
                 has_beam: bool = True) -> None:
        self.settings = settings
        self.memory = memory or Memory()
        self.inputs = Inputs()
        self.state = READY
        self.has_beam = has_beam
        self.profile: Profile = settings.profile  # what a press does (``profile`` changes it)

    # The one entry point (and its lazy form).
    def handle(self, event: Event, now: float) -> list[Command]:
        return list(self.step(event, now))

    def step(self, event: Event, now: float) -> Iterable[Command]:
        """``handle``, with the commands handed over as the action makes them: a shot's
        motor command comes before the rest is built, so the shell can start the roller
        first. The state is the new one on return; the memory, once every command is taken.
        """
        name = event.name
        if event.inputs is not None:
            self.inputs = replace(event.inputs)
        if name is INTERNAL:
            self.state = FAULT
            return _internal(self, event, now)
        if name is not PRESS:
            self._note_input(event)  # a press is no input level
        for t in _BY_STATE_EVENT.get((self.state, name), ()):
            if t.guard is None or t.guard(self, event, now):
                out = t.action(self, event, now) if t.action else []
                self.state = t.target
                return out
        return []

    def luck_wanted(self, now: float) -> SideLuck | None:
        """The luck table a press at ``now`` draws from, or None when it would draw nothing.

        The shell asks before it sends a press, draws, and puts the result in the event;
        so the random source is the shell's, and replaying a seed replays every shot. It only
        reads: the press that follows puts the same guards again (they are a few compares).
        """
        for t in _BY_STATE_EVENT.get((self.state, PRESS), ()):
            if t.draws:
                return self.settings.luck.side(self.memory.side)
            if t.guard is None or t.guard(self, _PROBE, now):
                return None
        return None

    def start(self, inputs: Inputs, now: float) -> list[Command]:
        """Power-on: take the input levels, then home the cartridge if it is between detents."""
        self.inputs = inputs
        out = [Command(POWER, True), Command(CUE, cues.STARTUP)]
        sensed = "mild" if inputs.yellow_back else "wild"
        if sensed != self.memory.side:
            out.append(emit("side_changed_while_off", was=self.memory.side, now=sensed))
            self.memory.side = sensed
            out.append(Command(SAVE))
        mem = self.memory
        if mem.latched or mem.fault in PROOFS:
            # A latched fault survives the restart: the check that found it must pass again
            # (this start's included), and then `clear` leaves it.
            mem.proof = {code: [] for code in mem.latched}
            mem.fault = mem.latched[-1] if mem.latched else mem.fault
            self.state = LATCHED if mem.latched else FAULT
            assert mem.fault is not None
            return [*out, Command(LED, FAULT_BLINKS[mem.fault]),
                    emit("fault", code=mem.fault, latched=",".join(mem.latched) or "proven",
                         at="start")]
        self.state = READY if inputs.lid_closed else LID_OPEN
        if not inputs.home:
            # Between detents: home it, but only with the lid fully open (fingers).
            self.memory.expected_side = None
            if inputs.lid_full:
                self.state = ROTATING
                return [*out, *_rotate(self, now)]
            return [*out, *_wait_for_turn(self, now)]
        led = "ready" if inputs.lid_closed else "busy"
        return [*out, Command(LED, led), *_idle(self, now)]

    def _note_input(self, event: Event) -> None:
        level = _INPUT_OF.get(event.name)
        if level is not None:
            setattr(self.inputs, *level)
